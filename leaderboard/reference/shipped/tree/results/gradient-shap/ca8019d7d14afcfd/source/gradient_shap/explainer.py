"""Captum `GradientShap` (expected gradients with input noise).

Baseline distribution: the black image plus `noise_baselines` images of U(0, noise_level) noise. All
randomness (noise baselines, captum's baseline choices, α and input noise) comes from a per-instance
seed derived from (batch.seed, instance id) in a forked torch RNG, so an instance's map does not depend on
its batch companions. Hence one captum call per instance; each is one forward/backward over its
`n_samples` draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from submissions.common import image_tensor, require_module, seeded_rngs, targets, to_maps

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class GradientShapExplainer:
    """GradientSHAP: expected gradients × (input − baseline) over random baselines, path points and noise.

    Lundberg & Lee 2017, A Unified Approach to Interpreting Model Predictions, NeurIPS,
    https://arxiv.org/abs/1705.07874 (captum's `GradientShap`, which approximates SHAP values by
    expected gradients). Baselines: the black image and dark uniform-noise images drawn from the instance
    seed. Images only.

    Args:
        n_samples (int, optional): random (baseline, α, noise) draws per instance, evaluated in one
            pass. Default: 16
        stdevs (float, optional): std of the Gaussian noise added to the input in each draw. Default: 0.09
        noise_baselines (int, optional): noise baselines besides the black one. Default: 4
        noise_level (float, optional): the noise baselines are U(0, noise_level) images. Default: 0.1
    """

    def __init__(self, n_samples: int = 16, stdevs: float = 0.09, noise_baselines: int = 4,
                 noise_level: float = 0.1) -> None:
        if n_samples < 1:
            raise ValueError(f"n_samples must be ≥ 1, got {n_samples}")
        self.n_samples = int(n_samples)
        self.stdevs = float(stdevs)
        self.noise_baselines = max(0, int(noise_baselines))
        self.noise_level = float(noise_level)

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) map per image; all randomness from the instance seed (one captum call each)."""
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
