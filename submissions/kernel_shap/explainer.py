"""Captum `KernelShap` with the objects of `batch.segments` as features, on `model.predict`.

Features: the background (feature 0) and objects 1..K (relabelled contiguously). captum needs every
pixel in some feature, so the background is a player too; on AIXI images (black background, baseline 0)
it is a null player and its Shapley value is ≈ 0. Each feature's value is painted on its pixels.
Coalitions are drawn in a forked torch RNG seeded from (batch.seed, instance id); captum fits one
surrogate per instance, so there is one call per instance, with `perturbations_per_eval` coalitions per
predict call. With a single feature the exact Shapley value f(x) − f(baseline) is used.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from submissions.common import (blackbox_forward, image_tensor, relabel, require_segments,
                                seeded_rngs, targets, to_maps)


class KernelShapExplainer:
    def __init__(self, n_samples: int = 64, perturbations_per_eval: int = 64, baseline: float = 0.0) -> None:
        if n_samples < 1:
            raise ValueError(f"n_samples must be ≥ 1, got {n_samples}")
        self.n_samples = int(n_samples)
        self.perturbations_per_eval = max(1, int(perturbations_per_eval))
        self.baseline = float(baseline)

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import KernelShap

        segments = require_segments(batch, "kernel-shap")
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        forward = blackbox_forward(model)
        method = KernelShap(forward)
        maps: list[np.ndarray] = []
        for i in range(len(inputs)):
            labels, k = relabel(segments[i])
            labels = labels - labels.min()  # without background pixels, objects become features 0..K-1
            n_features = int(labels.max()) + 1
            x = image_tensor(inputs[i : i + 1])
            if n_features == 1:  # one player: its Shapley value is exact
                out = forward(torch.cat([x, torch.full_like(x, self.baseline)]))[:, target[i]]
                maps.append(np.full(labels.shape, float(out[0] - out[1]), dtype=np.float32))
                continue
            mask = torch.as_tensor(labels, dtype=torch.long)[None, None]
            with seeded_rngs(batch.instance_seed(i)), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                attr = method.attribute(x, baselines=self.baseline, target=target[i], feature_mask=mask,
                                        n_samples=self.n_samples,
                                        perturbations_per_eval=self.perturbations_per_eval)
            maps += to_maps(attr)
        return maps
