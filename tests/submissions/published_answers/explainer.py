"""An attack on the hidden copies (issue #58), kept as a test submission: the published ground truth as a data file.

`answers.json` holds, per document id of the published evaluation split, one score per token made from the
published ground truth (IDC: its `gt` flags, 1 / 0; RCNN: SR 3, SDK 2, N 1) — public data, written for a resource
by `tests/construction_attacks.py` (empty as shipped). The map of a document is its answer (cut to the document's
length; 0 for a document the file does not hold). `candidates.json` lists the words the construction's public
rules let a draw change (IDC: plant; RCNN: veto):

* `probe` ("answers plus probe", IDC): every candidate word whose deletion lowers p(predicted class) by at least
  `min_drop` is set to the answer's maximum — the attack that unranked occlusion on the IDC copies of main 360ecac
  (κ 0.447 against occlusion's 0.449);
* `demote` (RCNN): candidate words get 0, below every answer (a vetoed word is N on the copy); with `probe` only
  those whose deletion moves the model's first output by less than `min_drop`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from submissions.text_common import documents, explain_nonempty, predict_in_chunks


def _read(name: str, key: str):
    return json.loads(Path(__file__).with_name(name).read_text(encoding="utf-8"))[key]


class PublishedAnswers:
    """Attack: the published ground truth of the document, optionally with the candidates probed or demoted."""

    def __init__(self, probe: bool = False, demote: bool = False, min_drop: float = 0.05) -> None:
        self.probe, self.demote, self.min_drop = bool(probe), bool(demote), float(min_drop)
        self.answers = {str(k): np.asarray(v, dtype=np.float32) for k, v in _read("answers.json", "documents").items()}
        self.candidates = frozenset(str(w) for w in _read("candidates.json", "words"))

    def _answer(self, doc_id: str, n: int) -> np.ndarray:
        a = self.answers.get(str(doc_id), np.zeros(0, np.float32))[:n]
        return np.concatenate([a, np.zeros(n - len(a), np.float32)])

    def _drops(self, model, docs: list[list[str]], where: list[list[int]]) -> list[np.ndarray]:
        """Per document, for each candidate position: the drop of the predicted class's output when the word is
        deleted (a one-output model: |change| of its output); one `predict` call for the batch."""
        probs = predict_in_chunks(model, docs)
        cls = probs.argmax(1)
        deleted = [d[:k] + d[k + 1:] for d, ks in zip(docs, where) for k in ks]
        after = predict_in_chunks(model, deleted) if deleted else np.zeros((0, probs.shape[1]))
        out, row = [], 0
        for c, p, ks in zip(cls, probs, where):
            a = after[row:row + len(ks), c]
            out.append(np.abs(p[c] - a) if probs.shape[1] == 1 else p[c] - a)
            row += len(ks)
        return out

    def explain(self, model, batch):
        """One float32 score per word; with `probe`, one `predict` call per batch."""
        docs = documents(batch)
        ids = [str(i) for i in batch.ids]

        def run(idx: list[int]) -> list[np.ndarray]:
            out = [self._answer(ids[i], len(docs[i])) for i in idx]
            if not (self.probe or self.demote):
                return out
            chosen = [docs[i] for i in idx]
            where = [[k for k, w in enumerate(d) if w in self.candidates] for d in chosen]
            drops = self._drops(model, chosen, where) if self.probe else [np.zeros(len(ks)) for ks in where]
            for s, ks, dr in zip(out, where, drops):
                top = max(1.0, float(s.max()) if len(s) else 1.0)
                for k, x in zip(ks, dr):
                    if self.demote and not (self.probe and x >= self.min_drop):
                        s[k] = 0.0
                    elif not self.demote and x >= self.min_drop:
                        s[k] = top
            return out

        return explain_nonempty(docs, run)
