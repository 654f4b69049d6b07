"""Captum `InputXGradient`: x ⊙ ∂ f_target / ∂ x (one forward/backward per chunk of instances)."""

from __future__ import annotations

import numpy as np

from submissions.common import image_tensor, require_module, targets, to_maps


class InputXGradientExplainer:
    def __init__(self, batch_size: int = 256) -> None:
        self.batch_size = max(1, int(batch_size))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import InputXGradient

        method = InputXGradient(require_module(model, "input-x-gradient"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        maps: list[np.ndarray] = []
        for s in range(0, len(inputs), self.batch_size):
            x = image_tensor(inputs[s : s + self.batch_size], requires_grad=True)
            maps += to_maps(method.attribute(x, target=target[s : s + self.batch_size]))
        return maps
