"""Captum `Occlusion` on `model.predict` (black box: the CNN or the function model).

Each pixel's score is the mean drop of the target output over the windows that cover it. All instances
of a batch are occluded together: one predict call carries `perturbations_per_eval` window positions
× B instances. Pixels no window covers (when (H − window) is not a multiple of the stride) score 0.
"""

from __future__ import annotations

import numpy as np

from submissions.common import blackbox_forward, image_tensor, targets, to_maps


class OcclusionExplainer:
    def __init__(self, window: int = 8, stride: int = 4, baseline: float = 0.0,
                 perturbations_per_eval: int = 64) -> None:
        if window < 1 or stride < 1:
            raise ValueError(f"window and stride must be ≥ 1, got {window}, {stride}")
        self.window = int(window)
        self.stride = int(stride)
        self.baseline = float(baseline)
        self.perturbations_per_eval = max(1, int(perturbations_per_eval))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import Occlusion

        if len(batch) == 0:
            return []
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        x = image_tensor(inputs)
        w = min(self.window, x.shape[-2], x.shape[-1])
        attr = Occlusion(blackbox_forward(model)).attribute(
            x, sliding_window_shapes=(1, w, w), strides=(1, self.stride, self.stride), baselines=self.baseline,
            target=targets(model, inputs), perturbations_per_eval=self.perturbations_per_eval,
        )
        return to_maps(attr)
