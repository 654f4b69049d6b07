"""AIXI-track saliency metrics (benchmark/metrics/saliency.py) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import ot
import pytest
from scipy.spatial.distance import cdist

from benchmark.metrics import METRICS
from benchmark.metrics.saliency import (
    EPS,
    downsample_mass,
    emd,
    emd_paper,
    kl,
    mass_accuracy,
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
    np.testing.assert_allclose(to_distribution(m([2, 0], [1, 0])), m([2 / 3, 0], [1 / 3, 0]), atol=1e-15)
    # shift/scale invariant
    np.testing.assert_allclose(to_distribution(m([7, -3], [2, -3])), to_distribution(m([2, 0], [1, 0])),
                               atol=1e-15)


def test_constant_explanation_is_uniform():
    np.testing.assert_array_equal(to_distribution(np.full((2, 2, 3), 5.0)), np.full((2, 2, 3), 1 / 6))
    # KL(P_G || uniform) with P_G a point mass on one of 4 pixels = log 4
    assert kl(np.full((1, 2, 2), -1.0), m([1, 0], [0, 0]))[0] == pytest.approx(math.log(4), abs=1e-12)


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
    # uniform explanation: 1/4 at distances 0, 1, 1, √2
    got = emd(np.zeros((1, 2, 2)), m([1, 0], [0, 0]), grid=None, unit_px=1)[0]
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


def _plain_emd2(s: np.ndarray, g: np.ndarray, grid: int, unit_px: float = 32.0) -> float:
    """Reference: normalise, pool by block sums, then plain ot.emd2 on the full grid×grid problem."""
    h = g.shape[0]
    f = h // grid
    pg = (g / g.sum()).reshape(grid, f, grid, f).sum((1, 3)).ravel()
    sp = (s - s.min()) / (s.max() - s.min())
    ps = (sp / sp.sum()).reshape(grid, f, grid, f).sum((1, 3)).ravel()
    c = (np.arange(grid) + 0.5) * f
    xy = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 2)
    cost, log = ot.emd2(pg, ps, cdist(xy, xy) / unit_px, numItermax=10_000_000, log=True)
    assert log["result_code"] == 1
    return cost


def test_emd_equals_plain_ot_emd2_on_the_full_grid():
    """Exactness: 30 random pairs (sparse/dense truths × sparse/dense explanations)."""
    rng = np.random.default_rng(1234)
    s_all, g_all = [], []
    for k in range(30):
        g = sparse_truth(rng) if k % 3 else rng.random((64, 64)) ** 4  # 2/3 sparse, 1/3 dense truths
        if k % 2:  # dense explanation: smoothed noisy truth + background noise
            s = g * (1 + 0.5 * rng.standard_normal(g.shape)) + 0.05 * rng.random(g.shape)
        else:  # sparse explanation: a shifted, re-weighted copy of the truth
            s = np.roll(g, int(rng.integers(-6, 7)), axis=int(rng.integers(2))) * rng.random()
            s[rng.random(s.shape) < 0.01] = 1.0
        s_all.append(s)
        g_all.append(g)
    s_all, g_all = np.stack(s_all), np.stack(g_all)
    for grid in (32, 16):
        ours = emd(s_all, g_all, grid=grid)
        ref = np.array([_plain_emd2(s, g, grid) for s, g in zip(s_all, g_all)])
        assert np.all(ref > 0)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9)


def test_emd_paper_is_emd_on_a_4x4_grid():
    rng = np.random.default_rng(5)
    g = np.stack([sparse_truth(rng, 128) for _ in range(4)])
    s = g + 0.1 * rng.random(g.shape)
    np.testing.assert_array_equal(emd_paper(s, g), emd(s, g, grid=4))
    np.testing.assert_allclose(emd_paper(s, g), [_plain_emd2(a, b, 4) for a, b in zip(s, g)], atol=1e-12)


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


def test_absolute_attribution_option():
    from benchmark.metrics import METRICS

    g = np.zeros((1, 4, 4))
    g[0, 0, 0], g[0, 3, 3] = 1.0, 0.5
    s = np.zeros((1, 4, 4))
    s[0, 0, 0], s[0, 3, 3] = 1.0, -0.5  # the second object pushes the output down
    kl = METRICS.get("kl")
    # signed: min-max maps the negative object to 0 -> its ground-truth mass is 'lost' (huge KL)
    assert kl(s, g)[0] > 5
    # absolute: |S| == G exactly -> 0
    assert kl(s, g, attribution="absolute")[0] == pytest.approx(0, abs=1e-12)
    assert METRICS.get("emd")(s, g, attribution="absolute", grid=4, unit_px=1.0)[0] == pytest.approx(0, abs=1e-12)
    # a parameter a metric does not take is ignored by it
    assert np.isfinite(METRICS.get("pcc")(s, g, attribution="absolute")).all()
    with pytest.raises(ValueError, match="attribution"):
        kl(s, g, attribution="squared")
