"""Captum `IntegratedGradients` from a constant (black) baseline, all instances of a batch at once;
captum splits the n_steps × B path points into passes of `internal_batch_size`."""

from __future__ import annotations

import numpy as np

from submissions.common import image_tensor, require_module, targets, to_maps


class IntegratedGradientsExplainer:
    def __init__(self, n_steps: int = 50, method: str = "gausslegendre", baseline: float = 0.0,
                 internal_batch_size: int = 512) -> None:
        self.n_steps = int(n_steps)
        self.method = method
        self.baseline = float(baseline)
        self.internal_batch_size = max(1, int(internal_batch_size))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import IntegratedGradients

        if len(batch) == 0:
            return []
        ig = IntegratedGradients(require_module(model, "integrated-gradients"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        x = image_tensor(inputs, requires_grad=True)
        attr = ig.attribute(x, baselines=self.baseline, target=targets(model, inputs), n_steps=self.n_steps,
                            method=self.method, internal_batch_size=max(self.internal_batch_size, 1))
        return to_maps(attr)
