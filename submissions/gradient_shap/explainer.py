"""Captum `GradientShap` (expected gradients with input noise).

Baseline distribution: the black image plus `noise_baselines` images of U(0, noise_level) noise. All
randomness (noise baselines, captum's baseline choices, α and input noise) comes from a per-instance
seed derived from (batch.seed, instance id) in a forked torch RNG, so an instance's map does not depend on
its batch companions. Hence one captum call per instance; each is one forward/backward over its
`n_samples` draws.
"""

from __future__ import annotations

import numpy as np
import torch

from submissions.common import image_tensor, require_module, seeded_rngs, targets, to_maps


class GradientShapExplainer:
    def __init__(self, n_samples: int = 16, stdevs: float = 0.09, noise_baselines: int = 4,
                 noise_level: float = 0.1) -> None:
        if n_samples < 1:
            raise ValueError(f"n_samples must be ≥ 1, got {n_samples}")
        self.n_samples = int(n_samples)
        self.stdevs = float(stdevs)
        self.noise_baselines = max(0, int(noise_baselines))
        self.noise_level = float(noise_level)

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import GradientShap

        method = GradientShap(require_module(model, "gradient-shap"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        maps: list[np.ndarray] = []
        for i in range(len(inputs)):
            x = image_tensor(inputs[i : i + 1], requires_grad=True)
            with seeded_rngs(batch.instance_seed(i)):
                noise = torch.rand((self.noise_baselines, *x.shape[1:])) * self.noise_level
                baselines = torch.cat([torch.zeros_like(x), noise])
                attr = method.attribute(x, baselines=baselines, n_samples=self.n_samples, stdevs=self.stdevs,
                                        target=target[i])
            maps += to_maps(attr)
        return maps
