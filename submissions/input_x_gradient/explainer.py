"""Captum `InputXGradient`: x ⊙ ∂ f_target / ∂ x (one forward/backward per chunk of instances)."""

from __future__ import annotations

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets


class InputXGradientExplainer:
    def __init__(self, batch_size: int = 256) -> None:
        self.batch_size = max(1, int(batch_size))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import InputXGradient

        method = InputXGradient(require_module(model, "input-x-gradient"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        return attribute_in_chunks(method.attribute, inputs, target, self.batch_size)
