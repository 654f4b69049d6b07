"""Captum `Saliency`: |∂ f_target / ∂ x| per pixel (one forward/backward per chunk of instances)."""

from __future__ import annotations

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets


class SaliencyExplainer:
    def __init__(self, abs: bool = True, batch_size: int = 256) -> None:
        self.abs = bool(abs)
        self.batch_size = max(1, int(batch_size))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import Saliency

        method = Saliency(require_module(model, "saliency"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        return attribute_in_chunks(method.attribute, inputs, target, self.batch_size, abs=self.abs)
