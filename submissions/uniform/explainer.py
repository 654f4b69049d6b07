"""Control: a constant map (all `value`); under SPECS §3.7 normalisation it is the uniform distribution.

Text: the same constant for every word position."""

from __future__ import annotations

import numpy as np

from submissions.text_common import documents, is_text


class UniformExplainer:
    def __init__(self, value: float = 1.0) -> None:
        self.value = float(value)

    def explain(self, model, batch) -> list[np.ndarray]:
        if is_text(model):
            return [np.full(len(doc), self.value, dtype=np.float32) for doc in documents(batch)]
        return [np.full(np.shape(x), self.value, dtype=np.float32) for x in np.asarray(batch.inputs)]
