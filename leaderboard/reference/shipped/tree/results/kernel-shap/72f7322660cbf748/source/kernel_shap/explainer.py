"""Captum `KernelShap` with the objects of `batch.segments` as features, on `model.predict`.

Features: the background (feature 0) and objects 1..K (relabelled contiguously). captum needs every
pixel in some feature, so the background is a player too; on AIXI images (black background, baseline 0)
it is a null player and its Shapley value is ≈ 0. Each feature's value is painted on its pixels.
Coalitions are drawn in a forked torch RNG seeded from (batch.seed, instance id); captum fits one
surrogate per instance, so there is one call per instance, with `perturbations_per_eval` coalitions per
predict call. With a single feature the exact Shapley value f(x) − f(baseline) is used.

Text (word-level models): the players are the word positions. A coalition keeps its words and deletes
the others from the list (background = all tokens removed, SPECS §4.5), and the value is the target
class probability from `model.predict`. captum's KernelShap runs on a black-box forward that turns its
(S, n) keep/remove vectors into documents, `text_perturbations_per_eval` coalitions per predict call;
`text_n_samples` coalitions per document (0 = shap's "auto", 2·n + 2048), seeded per instance as for
images. A one-word document gets its exact Shapley value f(x) − f(empty document).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import torch

from submissions.common import blackbox_forward, image_tensor, relabel, require_segments, seeded_rngs, targets, to_maps
from submissions.text_common import delete_positions, documents, explain_nonempty, is_text, text_targets

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class KernelShapExplainer:
    """Kernel SHAP: Shapley values of the objects (text: word positions) from a weighted fit on coalitions.

    Lundberg & Lee 2017, A Unified Approach to Interpreting Model Predictions, NeurIPS,
    https://arxiv.org/abs/1705.07874 (captum's `KernelShap` on the black-box
    `model.predict`). Images: the objects of `batch.segments` (required) and the background are the
    players, an absent one set to `baseline`; text: the word positions, an absent word deleted.

    Args:
        n_samples (int, optional): coalitions sampled per image. Default: 64
        perturbations_per_eval (int, optional): coalitions per predict call (images). Default: 64
        baseline (float, optional): value of the pixels of an absent feature (images). Default: 0.0
        text_n_samples (int, optional): coalitions per document; 0 = shap's "auto", 2·n_words + 2048.
            Default: 0
        text_perturbations_per_eval (int, optional): coalitions (documents) per `model.predict` call.
            Default: 1024
    """

    def __init__(self, n_samples: int = 64, perturbations_per_eval: int = 64, baseline: float = 0.0,
                 text_n_samples: int = 0, text_perturbations_per_eval: int = 1024) -> None:
        if n_samples < 1:
            raise ValueError(f"n_samples must be ≥ 1, got {n_samples}")
        if text_n_samples < 0:
            raise ValueError(f"text_n_samples must be ≥ 0 (0 = 2·n_words + 2048), got {text_n_samples}")
        self.n_samples = int(n_samples)
        self.perturbations_per_eval = max(1, int(perturbations_per_eval))
        self.baseline = float(baseline)
        self.text_n_samples = int(text_n_samples)
        self.text_perturbations_per_eval = max(1, int(text_perturbations_per_eval))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One map per image (each object painted with its Shapley value), or one score per word."""
        from captum.attr import KernelShap

        if is_text(model):
            return self._explain_text(model, batch, KernelShap)
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

    def _explain_text(self, model, batch, kernel_shap) -> list[np.ndarray]:
        docs = documents(batch)

        def run(idx: list[int]) -> list[np.ndarray]:
            target = text_targets(model, [docs[i] for i in idx])
            return [self._explain_doc(model, docs[i], t, batch.instance_seed(i), kernel_shap)
                    for i, t in zip(idx, target)]

        return explain_nonempty(docs, run)

    def _explain_doc(self, model, doc: list[str], target: int, seed: int, kernel_shap) -> np.ndarray:
        n = len(doc)

        def forward(z: torch.Tensor) -> torch.Tensor:
            keep = (z.detach().cpu().numpy().reshape(len(z), n) > 0.5).tolist()
            out = np.asarray(model.predict([delete_positions(doc, k) for k in keep]), dtype=np.float32)
            return torch.from_numpy(out.reshape(len(keep), -1))

        if n == 1:  # one player: its Shapley value is exact
            out = forward(torch.tensor([[1.0], [0.0]]))[:, target]
            return np.array([float(out[0] - out[1])], dtype=np.float32)
        n_samples = self.text_n_samples or 2 * n + 2048
        with seeded_rngs(seed), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            attr = kernel_shap(forward).attribute(torch.ones(1, n), baselines=0.0, target=target,
                                                  n_samples=n_samples,
                                                  perturbations_per_eval=self.text_perturbations_per_eval)
        return attr[0].detach().double().numpy().astype(np.float32)
