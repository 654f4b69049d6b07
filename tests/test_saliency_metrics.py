"""AIXI-track saliency metrics (benchmark/metrics/saliency.py) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import ot
import pytest
from scipy.spatial.distance import cdist

from benchmark.metrics import METRICS
from benchmark.metrics.saliency import (
    DEFAULT_NORMALISATION,
    EPS,
    NORMALISATIONS,
    downsample_mass,
    emd,
    emd_paper,
    empty_maps,
    kl,
    mass_accuracy,
    normalise,
    pcc,
    rank_accuracy,
    to_distribution,
)


def m(*rows) -> np.ndarray:
    """A single (1, H, W) map from its rows."""
    return np.array(rows, dtype=np.float64)[None]


def sparse_truth(rng, size: int = 64) -> np.ndarray:
    """A few weighted disks/squares (weights 1/2, 1/4, 1/6), like an AIXI ground truth."""
    yy, xx = np.mgrid[:size, :size]
    g = np.zeros((size, size))
    for _ in range(rng.integers(1, 4)):
        r = int(rng.integers(2, size // 8))
        cy, cx = rng.integers(r, size - r, 2)
        mask = ((yy - cy) ** 2 + (xx - cx) ** 2 <= r * r) if rng.random() < 0.5 else \
            ((abs(yy - cy) <= r) & (abs(xx - cx) <= r))
        g[mask] = (1 / 2, 1 / 4, 1 / 6)[rng.integers(3)]
    return g


# --------------------------------------------------------------------------------- normalisation
def test_to_distribution_min_max_then_sum():
    # S = [[2, 0], [1, 0]] -> S' = [[1, 0], [.5, 0]] -> P_S = [[2/3, 0], [1/3, 0]]
    np.testing.assert_allclose(to_distribution(m([2, 0], [1, 0]), "minmax"), m([2 / 3, 0], [1 / 3, 0]), atol=1e-15)
    # shift/scale invariant
    np.testing.assert_allclose(to_distribution(m([7, -3], [2, -3]), "minmax"),
                               to_distribution(m([2, 0], [1, 0]), "minmax"), atol=1e-15)


def test_constant_explanation_is_uniform_under_min_max():
    np.testing.assert_array_equal(to_distribution(np.full((2, 2, 3), 5.0), "minmax"), np.full((2, 2, 3), 1 / 6))
    # KL(P_G || uniform) with P_G a point mass on one of 4 pixels = log 4
    assert kl(np.full((1, 2, 2), -1.0), m([1, 0], [0, 0]), normalisation="minmax")[0] == \
        pytest.approx(math.log(4), abs=1e-12)


def test_positive_part_and_absolute_value_hand_computed():
    s = m([3, -1], [1, 0])
    np.testing.assert_allclose(to_distribution(s, "positive"), m([3 / 4, 0], [1 / 4, 0]), atol=1e-15)
    np.testing.assert_allclose(to_distribution(s, "absolute"), m([3 / 5, 1 / 5], [1 / 5, 0]), atol=1e-15)
    # min-max lifts every cell above the minimum: the zero cell gets 1/4 of the span
    np.testing.assert_allclose(to_distribution(s, "minmax"), m([4 / 7, 0], [2 / 7, 1 / 7]), atol=1e-15)
    assert DEFAULT_NORMALISATION in NORMALISATIONS == ("minmax", "positive", "absolute")
    with pytest.raises(ValueError, match="normalisation must be one of"):
        to_distribution(s, "squared")


def _truth_with_an_irrelevant_object(size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """A hidden-copy-like truth (two weighted objects, a third of weight 0) and a map that marks the two exactly."""
    g = np.zeros((1, size, size))
    g[0, 2:8, 2:8], g[0, 20:26, 4:10] = 0.8, 0.2  # relevant objects
    s = g.copy()  # the third object (rows 12:18, cols 20:26) has ground-truth weight 0
    return g, s


@pytest.mark.parametrize("grid", [None, 8])
def test_negative_mass_on_a_zero_truth_pattern_does_not_change_the_positive_part_scores(grid):
    """Issue #55: a regression explainer gives the copies' irrelevant pattern small negative weights. Under the
    positive part they are no evidence: KL and EMD are exactly those of the map without them. Under min-max they
    lift every background pixel, and the score worsens; |S| puts mass on the irrelevant object."""
    g, s = _truth_with_an_irrelevant_object()
    neg = s.copy()
    neg[0, 12:18, 20:26] = -0.008  # the irrelevant object, pushed slightly down
    neg[0, 30, 30] = -0.3  # and one background pixel, strongly
    assert kl(neg, g, normalisation="positive")[0] == kl(s, g, normalisation="positive")[0]
    assert kl(s, g, normalisation="positive")[0] == pytest.approx(0, abs=1e-12)
    assert emd(neg, g, grid=grid, normalisation="positive")[0] == emd(s, g, grid=grid, normalisation="positive")[0]
    assert emd_paper(neg, g, grid=4 if grid else None, normalisation="positive")[0] == pytest.approx(0, abs=1e-12)
    # the same map under min-max: 1,000+ background pixels take |min|/(max − min) each
    assert kl(neg, g, normalisation="minmax")[0] > 0.3
    assert emd(neg, g, grid=grid, normalisation="minmax")[0] > 0.1
    # |S|: the negative mass counts as importance, off the ground truth
    assert kl(s, g, normalisation="absolute")[0] < 1e-12 < kl(neg, g, normalisation="absolute")[0]


def test_min_max_is_unchanged_where_it_is_asked_for():
    """`normalisation="minmax"` is SPECS §3.7 exactly: (S − min S)/(max S − min S), then /Σ — compared here with the
    formula written out, on signed maps at full resolution and through the pooled EMD."""
    rng = np.random.default_rng(21)
    g = np.stack([sparse_truth(rng) for _ in range(6)])
    s = g * (1 + rng.standard_normal(g.shape)) - 0.05 * rng.random(g.shape)  # signed, dense
    f = s.reshape(6, -1)
    sp = (f - f.min(1, keepdims=True)) / (f.max(1, keepdims=True) - f.min(1, keepdims=True))
    ps = (sp / sp.sum(1, keepdims=True)).reshape(s.shape)
    np.testing.assert_allclose(to_distribution(s, "minmax"), ps, atol=1e-15)
    pg = g / g.sum((1, 2), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (pg * np.log(EPS + pg / (ps + EPS))).reshape(6, -1).sum(1)
    np.testing.assert_allclose(kl(s, g, normalisation="minmax"), want, rtol=1e-12)
    np.testing.assert_allclose(emd(s, g, grid=16, normalisation="minmax"),
                               [_plain_emd2(a, b, 16, normalisation="minmax") for a, b in zip(s, g)], atol=1e-9)


# -------------------------------------------------------------------------------------------- KL
def test_kl_identical_maps_is_zero():
    g = m([0.5, 0.25], [0.25, 0.0])
    assert abs(kl(g, g)[0]) < 1e-12


def test_kl_hand_computed_2x2():
    # G = [[1, 0], [1, 0]] -> P_G = [1/2, 0, 1/2, 0]
    # S = [[2, 0], [1, 0]] -> P_S = [2/3, 0, 1/3, 0]
    # KL = 1/2 log((1/2)/(2/3)) + 1/2 log((1/2)/(1/3)) = 1/2 log(3/4) + 1/2 log(3/2) = 1/2 log(9/8)
    # (ε = 2.2204e-16 moves it by ~1e-16; zero-P_G pixels contribute 0 · log ε = 0)
    got = kl(m([2, 0], [1, 0]), m([1, 0], [1, 0]))[0]
    assert got == pytest.approx(0.5 * math.log(9 / 8), abs=1e-12)


def test_kl_epsilon_when_explanation_misses_the_truth():
    # P_G = [1, 0, 0, 0], P_S = [0, 1/3, 1/3, 1/3]: KL = log(ε + 1/ε)
    got = kl(m([0, 1], [1, 1]), m([1, 0], [0, 0]))[0]
    assert got == pytest.approx(math.log(EPS + 1 / EPS), rel=1e-12)


# ------------------------------------------------------------------------------------------- EMD
def test_emd_all_mass_moves_one_pixel():
    g, s = m([1, 0], [0, 0]), m([0, 1], [0, 0])
    assert emd(s, g, grid=None, unit_px=1)[0] == pytest.approx(1.0, abs=1e-12)
    assert emd(s, g, grid=None)[0] == pytest.approx(1 / 32, abs=1e-12)  # default unit: 32 px


def test_emd_mass_split():
    # P_G = point mass at (0, 0); P_S = 1/2 at (1, 0) and 1/2 at (1, 1): 1/2 · 1 + 1/2 · √2
    got = emd(m([0, 0], [1, 1]), m([1, 0], [0, 0]), grid=None, unit_px=1)[0]
    assert got == pytest.approx((1 + math.sqrt(2)) / 2, abs=1e-12)
    # uniform explanation (a constant map under min-max): 1/4 at distances 0, 1, 1, √2
    got = emd(np.zeros((1, 2, 2)), m([1, 0], [0, 0]), grid=None, unit_px=1, normalisation="minmax")[0]
    assert got == pytest.approx((2 + math.sqrt(2)) / 4, abs=1e-12)


def test_emd_two_sources_two_sinks():
    # P_G = 1/2 at (0,0) and (0,1); P_S = 1/2 at (1,0) and (1,1): each half moves down by 1 pixel
    got = emd(m([0, 0], [1, 1]), m([1, 1], [0, 0]), grid=None, unit_px=1)[0]
    assert got == pytest.approx(1.0, abs=1e-12)
    # 1 × 3 strip: P_G = [1/2, 1/2, 0], P_S = [0, 1/2, 1/2] -> mass common at the middle stays,
    # 1/2 moves 2 pixels = 1 (the solver sees 1 source and 1 sink)
    got = emd(np.array([[[0.0, 1.0, 1.0]]]), np.array([[[1.0, 1.0, 0.0]]]), grid=None, unit_px=1)[0]
    assert got == pytest.approx(1.0, abs=1e-12)


def test_emd_units_are_comparable_across_grids():
    # a 32×32 block moving one block (32 px) right: 1 unit at both the paper grid and grid 32
    g = np.zeros((1, 128, 128))
    s = np.zeros((1, 128, 128))
    g[0, 32:64, 32:64] = 1
    s[0, 32:64, 64:96] = 1
    assert emd(s, g)[0] == pytest.approx(1.0, abs=1e-12)
    assert emd_paper(s, g)[0] == pytest.approx(1.0, abs=1e-12)
    # a diagonal move of one paper cell: √2
    s2 = np.zeros((1, 128, 128))
    s2[0, 64:96, 64:96] = 1
    assert emd_paper(s2, g)[0] == pytest.approx(math.sqrt(2), abs=1e-12)
    # 4×4 maps on a 2×2 grid: cells of 2 px, unit 2 px -> a diagonal move of one cell = √2
    g4, s4 = np.zeros((1, 4, 4)), np.zeros((1, 4, 4))
    g4[0, :2, :2] = 1
    s4[0, 2:, 2:] = 3
    assert emd(s4, g4, grid=2, unit_px=2)[0] == pytest.approx(math.sqrt(2), abs=1e-12)


def test_downsample_mass_area_averaging():
    p = np.arange(16.0).reshape(1, 4, 4)
    np.testing.assert_array_equal(downsample_mass(p, 2)[0], [[0 + 1 + 4 + 5, 2 + 3 + 6 + 7],
                                                            [8 + 9 + 12 + 13, 10 + 11 + 14 + 15]])
    # 3 px onto 2 cells: the middle pixel is split half/half between the cells
    q = np.zeros((1, 3, 3))
    q[0, 1, 1] = 1.0
    np.testing.assert_allclose(downsample_mass(q, 2)[0], [[0.25, 0.25], [0.25, 0.25]], atol=1e-15)
    q[0] = 0
    q[0, 0, 2] = 1.0
    np.testing.assert_allclose(downsample_mass(q, 2)[0], [[0, 1], [0, 0]], atol=1e-15)
    assert downsample_mass(p, None) is p


def _plain_emd2(s: np.ndarray, g: np.ndarray, grid: int, unit_px: float = 32.0, normalisation: str = "minmax") -> float:
    """Reference: normalise at full resolution, pool by block sums, then plain ot.emd2 on the full grid×grid problem."""
    h = g.shape[0]
    f = h // grid
    pg = (g / g.sum()).reshape(grid, f, grid, f).sum((1, 3)).ravel()
    if normalisation == "minmax":
        sp = (s - s.min()) / (s.max() - s.min())
    else:
        sp = np.maximum(s, 0) if normalisation == "positive" else np.abs(s)
    ps = (sp / sp.sum()).reshape(grid, f, grid, f).sum((1, 3)).ravel()
    c = (np.arange(grid) + 0.5) * f
    xy = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 2)
    cost, log = ot.emd2(pg, ps, cdist(xy, xy) / unit_px, numItermax=10_000_000, log=True)
    assert log["result_code"] == 1
    return cost


@pytest.mark.parametrize("normalisation", NORMALISATIONS)
def test_emd_equals_plain_ot_emd2_on_the_full_grid(normalisation):
    """Exactness: 30 random pairs (sparse/dense truths × sparse/dense, signed explanations), under every normalisation
    (the positive part and |S| are taken per pixel before pooling, min-max after: both exact)."""
    rng = np.random.default_rng(1234)
    s_all, g_all = [], []
    for k in range(30):
        g = sparse_truth(rng) if k % 3 else rng.random((64, 64)) ** 4  # 2/3 sparse, 1/3 dense truths
        if k % 2:  # dense explanation: smoothed noisy truth + background noise
            s = g * (1 + 0.5 * rng.standard_normal(g.shape)) + 0.05 * rng.random(g.shape) - 0.02  # signed background
        else:  # sparse explanation: a shifted, re-weighted copy of the truth
            s = np.roll(g, int(rng.integers(-6, 7)), axis=int(rng.integers(2))) * rng.random()
            s[rng.random(s.shape) < 0.01] = 1.0
        s_all.append(s)
        g_all.append(g)
    s_all, g_all = np.stack(s_all), np.stack(g_all)
    for grid in (32, 16):
        ours = emd(s_all, g_all, grid=grid, normalisation=normalisation)
        ref = np.array([_plain_emd2(s, g, grid, normalisation=normalisation) for s, g in zip(s_all, g_all)])
        assert np.all(ref > 0)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9)


def test_emd_paper_is_emd_on_a_4x4_grid():
    rng = np.random.default_rng(5)
    g = np.stack([sparse_truth(rng, 128) for _ in range(4)])
    s = g + 0.1 * rng.random(g.shape)
    np.testing.assert_array_equal(emd_paper(s, g), emd(s, g, grid=4))
    for norm in NORMALISATIONS:
        np.testing.assert_allclose(emd_paper(s, g, normalisation=norm),
                                   [_plain_emd2(a, b, 4, normalisation=norm) for a, b in zip(s, g)], atol=1e-12)


def test_emd_does_not_depend_on_workers():
    rng = np.random.default_rng(7)
    g = np.stack([sparse_truth(rng, 64) for _ in range(80)])  # 80 maps, 16×16 grid: a pool is used
    s = g * (1 + rng.standard_normal(g.shape)) + 0.1 * rng.random(g.shape)
    one = emd(s, g, grid=16, workers=1)
    assert np.all(one > 0)
    np.testing.assert_array_equal(one, emd(s, g, grid=16, workers=2))
    np.testing.assert_array_equal(one, emd(s, g, grid=16, workers=None))


def test_emd_refuses_to_return_a_non_optimal_value():
    rng = np.random.default_rng(3)
    g = sparse_truth(rng, 64)[None]
    s = g + 0.1 * rng.random(g.shape)
    with pytest.raises(RuntimeError, match="optimality"):
        emd(s, g, num_iter_max=2)


def test_truth_copying_explanation_scores_perfectly():
    rng = np.random.default_rng(11)
    g = np.stack([sparse_truth(rng, 128) for _ in range(5)])
    assert np.all(np.abs(kl(g, g)) < 1e-12)
    assert np.all(np.abs(emd(g, g)) < 1e-12)
    assert np.all(np.abs(emd_paper(g, g)) < 1e-12)
    np.testing.assert_array_equal(mass_accuracy(g, g), 1.0)
    np.testing.assert_array_equal(rank_accuracy(g, g), 1.0)
    np.testing.assert_allclose(pcc(g, g), 1.0, atol=1e-12)


# ------------------------------------------------------------------------------ undefined inputs
@pytest.mark.parametrize("name", ["kl", "emd", "emd-paper", "mass-accuracy", "rank-accuracy", "pcc"])
def test_empty_truth_is_nan_and_others_unaffected(name):
    s = np.stack([m([1, 2], [3, 4])[0], m([1, 2], [3, 4])[0]])
    g = np.stack([np.zeros((2, 2)), m([0, 1], [0, 1])[0]])
    out = METRICS.get(name)(s, g)
    assert out.shape == (2,) and out.dtype == np.float64
    assert np.isnan(out[0]) and np.isfinite(out[1])


@pytest.mark.parametrize("name", ["kl", "emd", "mass-accuracy", "rank-accuracy", "pcc"])
def test_non_finite_explanation_is_nan(name):
    out = METRICS.get(name)(m([np.nan, 2], [3, 4]), m([0, 1], [0, 1]))
    assert np.isnan(out[0])


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="same shape"):
        kl(np.zeros((2, 3, 3)), np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="non-negative"):
        kl(m([1, 0], [0, 0]), m([1, -1], [0, 0]))
    with pytest.raises(ValueError, match="ties"):
        rank_accuracy(m([1, 0], [0, 0]), m([1, 0], [0, 0]), ties="random")


# ---------------------------------------------------------------------------------- localisation
def test_mass_accuracy_hand_computed():
    # positive relevance: 3 (inside) + 1 (outside) -> 3/4; the negative -1 inside is ignored
    assert mass_accuracy(m([3, -1], [1, 0]), m([1, 1], [0, 0]))[0] == pytest.approx(0.75, abs=1e-15)
    # GT weights do not matter, only the support
    assert mass_accuracy(m([3, -1], [1, 0]), m([0.5, 0.1], [0, 0]))[0] == pytest.approx(0.75, abs=1e-15)
    # no positive relevance at all -> 0
    assert mass_accuracy(m([-3, -1], [0, 0]), m([1, 1], [0, 0]))[0] == 0.0


def test_rank_accuracy_hand_computed():
    # K = 2 (support = top row); top-2 relevances are 5 (inside) and 4 (outside) -> 1/2
    assert rank_accuracy(m([5, 0], [4, 1]), m([1, 1], [0, 0]))[0] == 0.5
    assert rank_accuracy(m([5, 4], [0, 1]), m([1, 1], [0, 0]))[0] == 1.0


def test_rank_accuracy_ties():
    s = m([1, 1], [1, 0])
    # K = 1; three pixels tie at 1: the stable sort ranks pixel 0 first (SPECS §0)
    assert rank_accuracy(s, m([1, 0], [0, 0]))[0] == 1.0
    assert rank_accuracy(s, m([0, 1], [0, 0]))[0] == 0.0
    # tie-aware variant: 1 slot shared by a 3-way tie of which 1 is inside -> 1/3
    assert rank_accuracy(s, m([0, 1], [0, 0]), ties="expected")[0] == pytest.approx(1 / 3)
    # K = 2, support {0, 3}: pixel 0 (tied, first) in, pixel 1 out -> stable 1/2;
    # expected: 2 slots for 3 tied pixels, 1 of them inside -> 2/3 of a hit -> (2/3)/2 = 1/3
    assert rank_accuracy(s, m([1, 0], [0, 1]))[0] == 0.5
    assert rank_accuracy(s, m([1, 0], [0, 1]), ties="expected")[0] == pytest.approx(1 / 3)


# ------------------------------------------------------------------------------------ similarity
def test_pcc_hand_computed():
    # S = [1, 2, 3, 4], G = [0, 0, 1, 1]: Σxy = 2, Σx² = 5, Σy² = 1 -> 2/√5
    assert pcc(m([1, 2], [3, 4]), m([0, 0], [1, 1]))[0] == pytest.approx(2 / math.sqrt(5), abs=1e-15)
    assert pcc(m([4, 3], [2, 1]), m([0, 0], [1, 1]))[0] == pytest.approx(-2 / math.sqrt(5), abs=1e-15)


def test_pcc_constant_map_is_nan():
    assert np.isnan(pcc(np.full((1, 2, 2), 3.0), m([0, 0], [1, 1]))[0])
    assert np.isnan(pcc(m([1, 2], [3, 4]), np.full((1, 2, 2), 0.5))[0])  # constant (non-empty) truth


# -------------------------------------------------------------------------------------- metadata
def test_metadata_as_declared():
    want = {
        "kl": ("KL", "lower", (0.0, math.inf), "distribution"),
        "emd": ("EMD", "lower", (0.0, math.inf), "distribution"),
        "emd-paper": ("EMD/4×4", "lower", (0.0, math.inf), "distribution"),
        "mass-accuracy": ("RMA", "higher", (0.0, 1.0), "localisation"),
        "rank-accuracy": ("RRA", "higher", (0.0, 1.0), "localisation"),
        "pcc": ("PCC", "higher", (-1.0, 1.0), "similarity"),
    }
    for name, (label, direction, rng, family) in want.items():
        met = METRICS.get(name)
        assert (met.label, met.direction, tuple(met.range), met.family) == (label, direction, rng, family)
        assert met.description
    assert METRICS.get("emd").params["grid"] == 32 and METRICS.get("emd-paper").params["grid"] == 4
    assert METRICS.get("emd").params["unit_px"] == METRICS.get("emd-paper").params["unit_px"] == 32.0
    assert METRICS.get("rank-accuracy").params["ties"] == "stable"
    assert not METRICS.get("kl").higher_is_better and METRICS.get("pcc").higher_is_better


def test_single_map_is_a_batch_of_one():
    assert kl(np.array([[2.0, 0], [1, 0]]), np.array([[1.0, 0], [1, 0]])).shape == (1,)


def test_absolute_normalisation_scores_a_pattern_that_pushes_down_as_important():
    g = np.zeros((1, 4, 4))
    g[0, 0, 0], g[0, 3, 3] = 1.0, 0.5
    s = np.zeros((1, 4, 4))
    s[0, 0, 0], s[0, 3, 3] = 1.0, -0.5  # the second object pushes the output down (Class)
    kl_ = METRICS.get("kl")
    # min-max and the positive part give the negative object no mass: its ground-truth mass is 'lost' (huge KL)
    assert kl_(s, g, normalisation="minmax")[0] > 5 and kl_(s, g, normalisation="positive")[0] > 5
    # |S| == G exactly -> 0
    assert kl_(s, g, normalisation="absolute")[0] == pytest.approx(0, abs=1e-12)
    assert METRICS.get("emd")(s, g, normalisation="absolute", grid=4, unit_px=1.0)[0] == pytest.approx(0, abs=1e-12)
    # a parameter a metric does not take is ignored by it
    assert np.isfinite(METRICS.get("pcc")(s, g, normalisation="absolute")).all()
    with pytest.raises(ValueError, match="normalisation"):
        kl_(s, g, normalisation="squared")
    for name in ("kl", "emd", "emd-paper"):  # the option replaced `attribution`
        assert "normalisation" in METRICS.get(name).params and "attribution" not in METRICS.get(name).params


# ------------------------------------------------------------------------------- bad maps (issue #55)
G4 = m([0, 1], [0, 0.5])  # P_G = 2/3 at (0, 1), 1/3 at (1, 1)
WORST_KL = 2 / 3 * math.log(EPS + (2 / 3) / EPS) + 1 / 3 * math.log(EPS + (1 / 3) / EPS)
# the farthest point mass from P_G on the 2×2 grid (unit 1 px): (1, 0), at 2/3·√2 + 1/3·1 ((0, 0): 2/3 + √2/3)
WORST_EMD = 2 * math.sqrt(2) / 3 + 1 / 3
BAD_MAPS = {"all-negative": m([-1, -2], [-3, -0.5]), "all-zero": m([0, 0], [0, 0]),
            "single positive pixel": m([-1, -1], [-1, 2]), "nan": m([np.nan, 1], [1, 1])}


@pytest.mark.parametrize("normalisation", NORMALISATIONS)
@pytest.mark.parametrize("case", list(BAD_MAPS))
def test_bad_maps_get_a_defined_score_or_nan_under_every_normalisation(case, normalisation):
    """Issue #55's bad input: a defined score (never a crash), the worst one where the map has nothing to
    normalise under the positive part or |S| — never a uniform map that scores like a method — and NaN (an
    undefined instance; the runner already records a non-finite map as a failure with its reason) for NaN."""
    s = BAD_MAPS[case]
    k, e = kl(s, G4, normalisation=normalisation)[0], emd(s, G4, grid=None, unit_px=1, normalisation=normalisation)[0]
    flag = empty_maps(s, normalisation)[0]
    if case == "nan":
        assert np.isnan(k) and np.isnan(e) and np.isnan(flag)
        return
    assert np.isfinite(k) and np.isfinite(e) and k >= 0 and e >= 0
    uniform_kl = kl(np.ones((1, 2, 2)), G4, normalisation="minmax")[0]
    nothing = (normalisation == "positive" and case in ("all-negative", "all-zero")) or \
        (normalisation == "absolute" and case == "all-zero")
    if nothing:  # no mass to normalise: the worst score of the instance, flagged
        assert flag == 1.0 and not to_distribution(s, normalisation).any()
        assert k == pytest.approx(WORST_KL, rel=1e-12) and k > 30 > uniform_kl
        assert e == pytest.approx(WORST_EMD, abs=1e-12)
        assert e >= emd(np.ones((1, 2, 2)), G4, grid=None, unit_px=1, normalisation="minmax")[0]
    elif normalisation == "minmax" and case == "all-zero":  # SPECS §3.7: a constant map is the uniform one, flagged
        assert flag == 1.0 and k == pytest.approx(uniform_kl, abs=1e-12)
    else:
        assert flag == 0.0
    if case == "single positive pixel" and normalisation == "positive":  # a point mass on (1, 1): P_S(0, 1) = 0
        assert k == pytest.approx(2 / 3 * math.log(EPS + (2 / 3) / EPS) + 1 / 3 * math.log(EPS + (1 / 3) / (1 + EPS)))
        assert e == pytest.approx(2 / 3, abs=1e-12)  # 2/3 of the mass moves one pixel


def test_worst_scores_hold_on_the_pooled_grid_and_mixed_batches():
    """An empty map among others: its row gets the worst score, the others are unaffected (pooled EMD path)."""
    rng = np.random.default_rng(4)
    g = np.stack([sparse_truth(rng, 64) for _ in range(3)])
    s = g.copy()
    s[1] = -g[1] - 0.1  # all negative
    for norm in ("positive", "absolute"):
        if norm == "absolute":
            s[1] = 0.0
        got = emd(s, g, grid=16, normalisation=norm)
        pg = g[1].reshape(16, 4, 16, 4).sum((1, 3)).ravel() / g[1].sum()
        c = (np.arange(16) + 0.5) * 4
        xy = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 2)
        assert got[1] == pytest.approx((pg @ cdist(xy, xy) / 32).max(), abs=1e-12)
        assert got[0] == pytest.approx(0, abs=1e-12) and got[2] == pytest.approx(0, abs=1e-12)
        assert kl(s, g, normalisation=norm)[1] > 30
        np.testing.assert_array_equal(normalise(s, norm)[1], [False, True, False])
