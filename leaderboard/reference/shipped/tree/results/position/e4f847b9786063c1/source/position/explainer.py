"""Control: word scores that depend only on the word's position — never on the words or the model.

Score of position i in a document of n words: `decay="linear"` → (n − i) / n (first word 1, last 1/n);
`"inverse"` → 1 / (i + 1). A synonym swap keeps every position, so the scores never move: PCC = 1 and
the maximum ACC on the robustness boards (0.375), though the scores say nothing about the model. It
is there to show that robustness is not faithfulness: read the robustness boards beside the tracks
with ground truth (IDC, RCNN, TOKI), where this control ranks with the random one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.text_common import documents, empty_scores, is_text

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model

DECAYS = ("linear", "inverse")


class PositionExplainer:
    """Control: word scores that are a fixed function of the word's position, never of the words or the model.

    Controls for stability without faithfulness: a synonym swap never moves these scores, so the control
    takes the maximum on the robustness boards while saying nothing about the model (module docstring).
    No paper: a control. Text only.

    Args:
        decay (str, optional): "linear" → (n − i)/n for position i of n words; "inverse" → 1/(i + 1).
            Default: "linear"
    """

    def __init__(self, decay: str = "linear") -> None:
        if decay not in DECAYS:
            raise ValueError(f"decay must be one of {DECAYS}, got {decay!r}")
        self.decay = decay

    def unsupported(self, model: Model) -> str | None:
        """Why this control cannot score `model` (not a text model), or None."""
        return None if is_text(model) else "the position control scores word positions (text models only)"

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One score per word from its position only (`decay`)."""
        why = self.unsupported(model)
        if why:
            raise ValueError(why)
        out = []
        for doc in documents(batch):
            n = len(doc)
            if n == 0:
                out.append(empty_scores())
                continue
            i = np.arange(n, dtype=np.float32)
            out.append((n - i) / n if self.decay == "linear" else 1.0 / (i + 1.0))
        return [np.asarray(s, dtype=np.float32) for s in out]
