"""Conformance of every explainer submission (DESIGN §6) + focused checks of exhaustive LIME (SPECS §3.6).

The matrix covers every explainer `discover()` finds (future ones included) × two image models:
a small random-weight AixiCNN (white box) and the SSIN function model (black box) on hand-drawn 32×32
AIXI-Shape-like images. Each explainer must return one finite float (H, W) map per instance, the same
maps for the same seed, the same map for an instance whatever its batch companions, leave the batch
untouched, and use only the public Model contract (a guard records any other attribute it reads, e.g.
the function model's ground-truth references).
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
import torch

from benchmark.contracts import Batch
from benchmark.models.aixi_function import FunctionModel, Reference, get_function, ground_truth_map
from benchmark.models.architectures import AixiCNN
from benchmark.models.base import ImageModel
from benchmark.submission import discover

SIZE = 32
CIRCLE, SQUARE, CROSS = 0, 1, 2

# -- hand-drawn AIXI-Shape-like images ------------------------------------------------------------


def _shape_mask(pattern: int, cy: int, cx: int, r: int = 3) -> np.ndarray:
    yy, xx = np.mgrid[:SIZE, :SIZE]
    dy, dx = yy - cy, xx - cx
    if pattern == CIRCLE:
        return dy**2 + dx**2 <= r * r
    if pattern == SQUARE:
        return (np.abs(dy) <= r) & (np.abs(dx) <= r)
    return ((np.abs(dy) <= r) & (np.abs(dx) <= 1)) | ((np.abs(dx) <= r) & (np.abs(dy) <= 1))  # cross


def draw(objects: list[tuple[int, int, int]], value: float = 1.0) -> Reference:
    """objects: (pattern, cy, cx); returns image, instance map (object j at j) and patterns."""
    image = np.zeros((SIZE, SIZE), np.float32)
    instances = np.zeros((SIZE, SIZE), np.int32)
    for j, (p, cy, cx) in enumerate(objects, start=1):
        m = _shape_mask(p, cy, cx)
        assert not instances[m].any(), "objects must not overlap"
        image[m], instances[m] = value, j
    return Reference(image, instances, np.array([p for p, _, _ in objects], dtype=np.int64))


# Non-touching objects at positions that differ between images (the function model finds each
# perturbed input's source image by its pixels).
REFS = {
    "a": draw([(CIRCLE, 6, 6), (SQUARE, 6, 24), (CROSS, 24, 6), (CIRCLE, 24, 24)]),
    "b": draw([(SQUARE, 8, 16), (CROSS, 22, 9), (SQUARE, 23, 25)], value=0.8),
    "c": draw([(CIRCLE, 15, 7), (CROSS, 15, 24)], value=0.6),
}
IDS = ["a", "b", "c"]
N_OBJECTS = {i: len(REFS[i].patterns) for i in IDS}


def make_batch(ids=IDS, seed: int = 7) -> Batch:
    return Batch(ids=list(ids), inputs=np.stack([REFS[i].image for i in ids]),
                 segments=np.stack([REFS[i].instances for i in ids]), seed=seed)


class GuardedModel:
    """The model as an explainer may use it: the Model contract only. Counts predict calls/rows and
    records any attribute read outside the contract (e.g. the function model's references)."""

    ALLOWED = {"predict", "target", "module", "layer", "as_tensor", "modality", "white_box", "task",
               "n_outputs", "name", "batch_size", "gradcam_layer"}

    def __init__(self, model) -> None:
        self._model = model
        self.calls = 0
        self.rows = 0
        self.seen: list[np.ndarray] = []
        self.forbidden: list[str] = []

    def predict(self, inputs):
        self.calls += 1
        self.rows += len(inputs)
        self.seen.append(np.array(inputs, copy=True))
        return self._model.predict(inputs)

    def __getattr__(self, name):
        if name in self.ALLOWED:
            return getattr(self._model, name)
        self.forbidden.append(name)
        raise AttributeError(f"explainers may not read model.{name}: it is not part of the Model contract")


def make_model(kind: str, function: str = "ssin"):
    if kind == "cnn":
        with torch.random.fork_rng():
            torch.manual_seed(0)
            module = AixiCNN(size=SIZE)
        return ImageModel(module, name="cnn", task="regression", gradcam_layer="conv2")
    return FunctionModel(get_function(function), "shape", REFS)


def run(explainer, model, batch: Batch) -> tuple[list[np.ndarray], GuardedModel]:
    """What the worker does: one explain call per batch, or — for a model that must know the explained
    instance (the function model, `ModelSpec.per_instance`) — one call per instance, focused on it."""
    guarded = GuardedModel(model)
    if not isinstance(model, FunctionModel):
        return list(explainer.explain(guarded, batch)), guarded
    maps = []
    for n, i in enumerate(batch.ids):
        model.focus(i)
        single = Batch(ids=[i], inputs=batch.inputs[n : n + 1], segments=batch.segments[n : n + 1], seed=batch.seed)
        maps += list(explainer.explain(guarded, single))
    return maps, guarded


EXPLAINERS = {name: s for name, s in discover().items() if s.kind == "explainer"}


def test_builtin_explainers_are_found():
    expected = {"lime-exhaustive", "lime-image", "saliency", "integrated-gradients", "input-x-gradient",
                "deeplift", "gradient-shap", "occlusion", "grad-cam", "kernel-shap", "random", "uniform"}
    assert expected <= set(EXPLAINERS)


def test_batch_carries_no_ground_truth():
    assert [f.name for f in dataclasses.fields(Batch)] == ["ids", "inputs", "segments", "seed"]


@pytest.fixture(scope="module")
def models():
    return {"cnn": make_model("cnn"), "function": make_model("function")}


@pytest.mark.parametrize("model_kind", ["cnn", "function"])
@pytest.mark.parametrize("name", sorted(EXPLAINERS))
def test_conformance(name, model_kind, models):
    sub, model = EXPLAINERS[name], models[model_kind]
    batch = make_batch()
    reason = sub.supports(model.modality, model.white_box, batch.segments is not None)
    if reason:
        pytest.skip(reason)
    explainer = sub.instantiate()
    inputs_before, segments_before = batch.inputs.copy(), batch.segments.copy()

    maps, guarded = run(explainer, model, batch)
    assert isinstance(batch, Batch)
    assert guarded.forbidden == [], f"{name} read non-contract model attributes {guarded.forbidden}"
    assert np.array_equal(batch.inputs, inputs_before) and np.array_equal(batch.segments, segments_before), \
        f"{name} modified the batch"
    assert len(maps) == len(batch)
    for m in maps:
        m = np.asarray(m)
        assert m.shape == (SIZE, SIZE)
        assert np.issubdtype(m.dtype, np.floating)
        assert np.isfinite(m).all()

    # deterministic: same seed (fresh batch object and fresh explainer) → identical maps
    again, _ = run(sub.instantiate(), model, make_batch())
    for m, a in zip(maps, again):
        assert np.array_equal(m, a), f"{name} is not deterministic for a fixed seed"

    # an empty batch gives no maps (and no error)
    empty = Batch(ids=[], inputs=batch.inputs[:0], segments=batch.segments[:0], seed=batch.seed)
    assert list(explainer.explain(GuardedModel(model), empty)) == []

    # independent of the batch composition: instance "b" alone gives (numerically) its map in the batch
    alone, _ = run(explainer, model, make_batch(["b"]))
    scale = float(np.abs(maps[1]).max()) + 1e-12
    np.testing.assert_allclose(alone[0], maps[1], rtol=1e-3, atol=1e-4 * scale,
                               err_msg=f"{name}: an instance's map depends on its batch companions")


def test_seed_changes_stochastic_controls(models):
    explainer = EXPLAINERS["random"].instantiate()
    m7, _ = run(explainer, models["cnn"], make_batch(seed=7))
    m8, _ = run(explainer, models["cnn"], make_batch(seed=8))
    assert not np.array_equal(m7[0], m8[0])
    assert not np.array_equal(m7[0], m7[1])  # different instances, different draws


def test_deeplift_handles_sigmoid_output():
    """The rescale rule on the output sigmoid: the Class model's DeepLift map is the regression model's
    map (same weights, no sigmoid) times Δσ / Δlogit between the input and the black baseline."""
    cnns = {}
    for classification in (False, True):
        with torch.random.fork_rng():
            torch.manual_seed(1)
            module = AixiCNN(size=SIZE, classification=classification)
        cnns[classification] = ImageModel(module, name="cnn", task="binary" if classification else "regression",
                                          gradcam_layer="conv2")
    batch = make_batch()
    explainer = EXPLAINERS["deeplift"].instantiate()
    logit_maps, _ = run(explainer, cnns[False], batch)
    prob_maps, _ = run(explainer, cnns[True], batch)
    black = np.zeros_like(batch.inputs)
    d_logit = cnns[False].predict(batch.inputs)[:, 0] - cnns[False].predict(black)[:, 0]
    d_prob = cnns[True].predict(batch.inputs)[:, 0] - cnns[True].predict(black)[:, 0]
    for lm, pm, dl, dp in zip(logit_maps, prob_maps, d_logit, d_prob):
        assert abs(dl) > 1e-6
        np.testing.assert_allclose(pm, lm * (dp / dl), rtol=1e-3, atol=1e-4 * np.abs(pm).max())


# -- exhaustive LIME (SPECS §3.6) -----------------------------------------------------------------

W = np.array([1 / 2, 1 / 4, 1 / 6])  # SSIN/SUUM weights; ι_max = 2 for Shape


def lime_exhaustive(**overrides):
    return EXPLAINERS["lime-exhaustive"].instantiate(overrides)


def object_betas(saliency: np.ndarray, ref: Reference) -> np.ndarray:
    """β_j per object; asserts the map is constant on each object and 0 on the background."""
    betas = []
    for j in range(1, len(ref.patterns) + 1):
        vals = saliency[ref.instances == j]
        assert np.ptp(vals) == 0
        betas.append(vals[0])
    assert (saliency[ref.instances == 0] == 0).all()
    return np.array(betas)


def kl_to_truth(saliency: np.ndarray, gt: np.ndarray) -> float:
    """KL(P_G ‖ P_S) with SPECS §3.7 normalisation (constant map → uniform)."""
    eps = 2.2204e-16
    pg = gt / gt.sum()
    span = saliency.max() - saliency.min()
    s = (saliency - saliency.min()) / span if span > 0 else np.ones_like(saliency)
    ps = s / s.sum()
    return float((pg * np.log(eps + pg / (ps + eps))).sum())


def test_exhaustive_lime_recovers_suum_weights():
    model, ref = make_model("function", "suum"), REFS["a"]  # circle, square, cross, circle
    batch = make_batch(["a"])
    # without ridge shrinkage, LIME on the linear SUUM recovers β_j = w_{pattern(j)} / ι_max exactly
    (exact,), _ = run(lime_exhaustive(alpha=1e-9), model, batch)
    np.testing.assert_allclose(object_betas(exact, ref), W[ref.patterns] / 2, atol=1e-6)

    # with the default ridge (α = 1): hand-computed weighted ridge on all 16 vectors
    (sal,), guarded = run(lime_exhaustive(), model, batch)
    beta = object_betas(sal, ref)
    z = ((np.arange(16)[:, None] >> np.arange(4)) & 1).astype(float)
    y = (z * W[ref.patterns] / 2).sum(1)
    d = np.where(z.sum(1) == 0, 1.0, 1 - np.sqrt(z.sum(1) / 4))
    pi = np.sqrt(np.exp(-(d**2) / 0.25**2))
    zc = z - pi @ z / pi.sum()
    yc = y - pi @ y / pi.sum()
    expected = np.linalg.solve(zc.T @ (pi[:, None] * zc) + np.eye(4), zc.T @ (pi * yc))
    np.testing.assert_allclose(beta, expected, rtol=1e-6, atol=1e-9)
    circle, square, cross = beta[0], beta[1], beta[2]
    assert circle > square > cross > 0
    assert beta[3] == pytest.approx(circle)
    assert (guarded.calls, guarded.rows) == (1, 16)


def test_exhaustive_lime_class_ignores_weight_zero_pattern():
    # Class = [ι_circle > ι_square]: crosses have GT weight 0 and do not change the output
    model = make_model("function", "class")
    (sal,), _ = run(lime_exhaustive(), model, make_batch(["a"]))  # 2 circles, 1 square, 1 cross
    beta = object_betas(sal, REFS["a"])
    assert beta[0] > 0 and beta[3] > 0
    assert abs(beta[2]) < 0.05 * np.abs(beta).max()  # the cross: ~0 (only the kernel couples it)


def test_all_samples_closer_to_truth_than_tiny_samples():
    model = make_model("function", "suum")
    batch = make_batch()
    kls = {}
    for n in (0, 1, 2):
        maps, _ = run(lime_exhaustive(n_samples=n), model, batch)
        kls[n] = [kl_to_truth(m, ground_truth_map(REFS[i].instances, REFS[i].patterns, W))
                  for m, i in zip(maps, batch.ids)]
        if n == 1:  # only the all-ones vector: nothing to regress on
            assert all((m == 0).all() for m in maps)
    for full, one, two in zip(kls[0], kls[1], kls[2]):
        assert full < one and full < two


@pytest.mark.parametrize("n_samples", [0, 1, 2, 5, 100])
def test_n_samples_sets_the_samples_per_instance(n_samples):
    model = make_model("function", "suum")
    batch = make_batch()
    maps, guarded = run(lime_exhaustive(n_samples=n_samples), model, batch)
    per_instance = [2 ** N_OBJECTS[i] if n_samples in (0, 100) else min(n_samples, 2 ** N_OBJECTS[i])
                    for i in batch.ids]
    # the function model is explained one instance at a time: one predict call per explain call;
    # a batch-independent model gets all perturbations of all instances of a batch in one call
    assert guarded.calls == len(batch)
    assert run(lime_exhaustive(n_samples=n_samples), make_model("cnn"), batch)[1].calls == 1
    assert guarded.rows == sum(per_instance) == sum(per_instance)
    # each instance's block starts with its unperturbed image (the all-ones vector is always included)
    seen, start = np.concatenate(guarded.seen), 0
    for i, n in zip(batch.ids, per_instance):
        assert np.array_equal(seen[start], REFS[i].image)
        block = seen[start : start + n]
        assert len({b.tobytes() for b in block}) == n  # distinct keep/hide vectors
        start += n


def test_subset_is_a_fixed_permutation():
    module = sys.modules[type(lime_exhaustive()).__module__]
    full = module.sample_vectors(3, 0, 0)
    assert len(full) == 8 and (full[0] == 1).all() and len({r.tobytes() for r in full}) == 8
    np.testing.assert_array_equal(module.sample_vectors(3, 4, 0), full[:4])
    assert not np.array_equal(module.sample_vectors(3, 0, 0), module.sample_vectors(3, 0, 1))


@pytest.mark.parametrize("name, atol", [("kernel-shap", 1e-3), ("lime-image", 0.02)])
def test_object_explainers_on_linear_suum(name, atol):
    """SUUM is linear in the keep/hide vector, so the objects' Shapley values — and any weighted linear
    fit such as LIME's, up to its ridge shrinkage — are w_{pattern(j)} / ι_max (the background is a null
    player). Kernel SHAP with 64 coalitions is exact to 1e-3."""
    model = make_model("function", "suum")
    batch = make_batch()
    maps, _ = run(EXPLAINERS[name].instantiate(), model, batch)
    for m, i in zip(maps, batch.ids):
        ref = REFS[i]
        per_object = [m[ref.instances == j].mean() for j in range(1, len(ref.patterns) + 1)]
        np.testing.assert_allclose(per_object, W[ref.patterns] / 2, atol=atol)
