"""Control: a constant map (all `value`); under SPECS §3.7 normalisation it is the uniform distribution."""

from __future__ import annotations

import numpy as np


class UniformExplainer:
    def __init__(self, value: float = 1.0) -> None:
        self.value = float(value)

    def explain(self, model, batch) -> list[np.ndarray]:
        return [np.full(np.shape(x), self.value, dtype=np.float32) for x in np.asarray(batch.inputs)]
