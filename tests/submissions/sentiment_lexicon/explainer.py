"""An attack on the text boards (issue #45), kept as a test submission: a map of the corpus, not of the model.

Map of a document: each word's |class log-odds| in the task's public corpus (`lexicon.LEXICON`, shipped with
the code; 0 for a word it does not hold). The model is never called, so the map is the same on any model. A
Kim CNN trained on MR learns those very words, so its pseudo ground truth (IDC's WGA) and the lexicon agree:
on IDC (100 documents) it scored κ 0.38 — 5th of 6 methods, ahead of saliency (0.11) — before the
randomisation test; `tests/test_randomisation_board.py` shows it ranks with the controls now."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np


def _lexicon() -> dict[str, float]:
    """`LEXICON` of lexicon.py beside this file (a submission's folder is not on the import path)."""
    spec = importlib.util.spec_from_file_location("sentiment_lexicon_data", Path(__file__).with_name("lexicon.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LEXICON)


class SentimentLexicon:
    """Attack: |log-odds| of each word in the public corpus (module docstring); reads no model."""

    def __init__(self) -> None:
        self.lexicon = _lexicon()

    def explain(self, model, batch):
        """One float32 score per word of each document."""
        return [np.array([self.lexicon.get(str(w).lower(), 0.0) for w in doc], dtype=np.float32)
                for doc in batch.inputs]
