"""MetaQuantus beside the metric board (benchmark.gtfree.meta): it imports without torchvision, and a tiny
meta-evaluation gives finite scores in MetaQuantus's [0, 1] ranges."""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest
import quantus
import torch

from benchmark.gtfree import meta


def _tiny(n_outputs: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(4 * 16 * 16, n_outputs)).eval()


def _images() -> np.ndarray:
    return np.random.RandomState(0).rand(8, 1, 16, 16).astype(np.float32)


def test_metaquantus_imports_without_torchvision() -> None:
    mq = meta.import_metaquantus()
    for name in ("MetaEvaluation", "InputPerturbationTest", "ModelPerturbationTest"):
        assert callable(getattr(mq, name))
    tv = sys.modules.get("torchvision")
    if tv is None:  # torchvision was not importable: metaquantus holds the placeholder, which says so
        held = sys.modules["metaquantus.helpers.configs"].torchvision
        assert isinstance(held, meta._TorchvisionPlaceholder)
        with pytest.raises(ImportError, match="xaibench does not use them"):
            held.models  # noqa: B018
        # and the process's other libraries do not see it (transformers' find_spec raised on it)
        assert importlib.util.find_spec("torchvision") is None
    else:
        assert not isinstance(tv, meta._TorchvisionPlaceholder)
        assert importlib.util.find_spec("torchvision") is not None


def test_tiny_meta_evaluation_scores_lie_in_metaquantus_ranges() -> None:
    got = meta.meta_scores(_tiny(2), _images(), np.zeros(8, dtype=np.int64), ["pixel-flipping"],
                           xai_methods=("Saliency", "IntegratedGradients"), iterations=1, nr_perturbations=2)
    row = got["pixel-flipping"]
    assert row["direction"] == "lower"
    for kind in ("input", "model"):
        for k in ("IAC_NR", "IAC_AR", "IEC_NR", "IEC_AR", "MC"):
            assert row[kind][k] is not None and 0.0 <= row[kind][k] <= 1.0, (kind, k, row[kind][k])
    for k in ("noise_resilience", "adversarial_reactivity", "mc"):
        assert math.isfinite(row[k]) and 0.0 <= row[k] <= 1.0
    assert row["mc"] == pytest.approx((row["noise_resilience"] + row["adversarial_reactivity"]) / 2)
    # minor perturbations keep every prediction of this classifier; the weights ×N(1, 2²) change some
    assert row["selected"]["Model Resilience Test"] == 1.0 and row["selected"]["Input Resilience Test"] == 1.0
    assert 0.0 < row["selected"]["Model Adversary Test"] < 1.0


def test_regressor_kept_and_changed_by_tolerance() -> None:
    """A one-output model's argmax never changes: the tests judge |Δf| against tolerance × std(f)."""
    suite = meta.test_suite()
    args = dict(estimator=meta.estimator("sparseness"), xai_methods={"Saliency": {}}, nr_perturbations=1,
                model=_tiny(1), x_batch=_images(), y_batch=np.zeros(8, dtype=np.int64), a_batch=None,
                s_batch=None, channel_first=True, explain_func=quantus.explain,
                model_predict_kwargs={}, softmax=False, device="cpu")
    np.random.seed(0)
    torch.manual_seed(0)
    scores, _, kept = suite["Input Resilience Test"](**args)
    assert kept.all() and np.isfinite(scores["Saliency"]).all()
    _, _, changed = suite["Model Adversary Test"](**args)
    assert changed.any()
