"""Deterministic exhaustive LIME over objects (SPECS §3.6; the AIXI paper's Experiments 1-3).

Interpretable features = the K objects of `batch.segments`. Every binary vector z ∈ {0,1}^K (1 = object
kept, 0 = its pixels set to `hide_value`) is evaluated — 2^K samples, no random sampling — or, with
`n_samples = n > 0`, a subset: the all-ones vector, then the first n−1 vectors of a fixed permutation of
the others drawn from `subset_seed`. Samples are weighted by π(z) = sqrt(exp(−D(z)²/σ²)), D = cosine
distance between z and the all-ones vector (D = 1 for the all-zeros vector), and a weighted ridge
regression (alpha, with intercept) of the explained output on z gives β. Saliency: β_j on object j's
pixels, 0 on the background.

All perturbed images of all instances of a batch go to the model in ONE `predict` call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.linear_model import Ridge

from submissions.common import paint, relabel, require_segments, targets

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


def binary_vectors(k: int) -> np.ndarray:
    """All 2^k vectors as rows (row v: bit j of v is feature j); row 2^k − 1 is all ones."""
    v = np.arange(2**k, dtype=np.int64)
    return ((v[:, None] >> np.arange(k)) & 1).astype(np.float64)


def sample_vectors(k: int, n_samples: int = 0, subset_seed: int = 0) -> np.ndarray:
    """The keep/hide vectors used for an instance with k objects (first row: all ones).

    n_samples = 0 (or ≥ 2^k): all 2^k vectors. Otherwise the all-ones vector followed by the first
    n_samples − 1 vectors of a permutation (seeded by `subset_seed`) of the remaining 2^k − 1."""
    z = binary_vectors(k)
    ones, rest = z[-1:], z[:-1]
    order = np.random.default_rng(subset_seed).permutation(len(rest))
    if n_samples <= 0 or n_samples >= len(z):
        return np.concatenate([ones, rest[order]])
    return np.concatenate([ones, rest[order[: n_samples - 1]]])


def kernel_weights(z: np.ndarray, kernel_width: float) -> np.ndarray:
    """π(z) = sqrt(exp(−D²/σ²)), D = cosine distance to the all-ones vector (1 for all zeros)."""
    k = z.shape[1]
    m = z.sum(axis=1)
    d = 1.0 - np.sqrt(m / k) if k else np.zeros(len(z))
    d = np.where(m == 0, 1.0, d)
    return np.sqrt(np.exp(-(d**2) / kernel_width**2))


class ExhaustiveLime:
    """Exhaustive LIME over objects: a weighted ridge fit of the output on all 2^K object keep/hide vectors.

    Ribeiro, Singh & Guestrin 2016, "Why Should I Trust You?": Explaining the Predictions of Any Classifier,
    KDD, https://arxiv.org/abs/1602.04938;
    exhaustive over the objects as in Miró-Nicolau, Jaume-i-Capó & Moyà-Alcover 2023,
    https://arxiv.org/abs/2302.05624 (SPECS §3.6). Deterministic; needs `batch.segments`. Images only.

    Args:
        n_samples (int, optional): 0 = all 2^K vectors; n > 0 = the all-ones vector and the first n − 1
            of a fixed permutation of the others. Default: 0
        subset_seed (int, optional): seed of that permutation (not the batch seed: the subset is part of
            the method). Default: 0
        kernel_width (float, optional): σ of π(z) = sqrt(exp(−D(z)²/σ²)), D = cosine distance to the
            all-ones vector. Default: 0.25
        alpha (float, optional): ridge penalty (sklearn Ridge, with intercept). Default: 1.0
        hide_value (float, optional): value given to the pixels of a hidden object. Default: 0.0
    """

    def __init__(self, n_samples: int = 0, subset_seed: int = 0, kernel_width: float = 0.25,
                 alpha: float = 1.0, hide_value: float = 0.0) -> None:
        if n_samples < 0:
            raise ValueError(f"n_samples must be ≥ 0 (0 = all 2^K vectors), got {n_samples}")
        if kernel_width <= 0:
            raise ValueError(f"kernel_width must be > 0, got {kernel_width}")
        self.n_samples = int(n_samples)
        self.subset_seed = int(subset_seed)
        self.kernel_width = float(kernel_width)
        self.alpha = float(alpha)
        self.hide_value = float(hide_value)

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One map per image: each object's ridge coefficient on its pixels, 0 on the background."""
        if len(batch) == 0:
            return []
        segments = require_segments(batch, "lime-exhaustive")
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        plans, images = [], []
        for i, x in enumerate(inputs):
            labels, k = relabel(segments[i])
            z = sample_vectors(k, self.n_samples, self.subset_seed)
            # keep[s, p]: sample s keeps pixel p (the background, label 0, is always kept)
            keep = np.concatenate([np.ones((len(z), 1), bool), z > 0], axis=1)[:, labels]  # (S, H, W)
            images.append(np.where(keep, x[None], np.float32(self.hide_value)).astype(np.float32))
            plans.append((labels, k, z))
        outputs = np.asarray(model.predict(np.concatenate(images)), dtype=np.float64)  # one call per batch
        maps, start = [], 0
        for i, (labels, k, z) in enumerate(plans):
            y = outputs[start : start + len(z), target[i]]
            start += len(z)
            if k == 0:
                maps.append(np.zeros(labels.shape, dtype=np.float32))
                continue
            ridge = Ridge(alpha=self.alpha, fit_intercept=True)
            ridge.fit(z, y, sample_weight=kernel_weights(z, self.kernel_width))
            maps.append(paint(labels, ridge.coef_))
        return maps
