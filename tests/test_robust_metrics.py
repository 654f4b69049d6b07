"""Robustness metrics (SPECS §2.7) on hand-computed values, and the robustness track's pairing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmark.metrics import robustness as rm


def test_pcc_and_undefined():
    assert rm.pcc([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert rm.pcc([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(rm.pcc([1, 1, 1], [1, 2, 3]))
    assert math.isnan(rm.pcc([1.0], [2.0]))
    assert rm.attribution_distance([1, 2, 3], [1, 1, 1]) == 0.5
    with pytest.raises(ValueError):
        rm.attribution_distance([1, 2], [2, 1], undefined="bogus")


def test_rank_correlations():
    a, b = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    # τ-b: 5 concordant, 1 discordant pairs of 6 → 4/6
    assert rm.kendall(a, b) == pytest.approx(4 / 6)
    # Spearman: 1 − 6 Σd² / (n(n²−1)) = 1 − 6·2/60 = 0.8
    assert rm.spearman(a, b) == pytest.approx(0.8)
    assert math.isnan(rm.kendall(a, [1, 1, 1, 1]))


def test_topk_intersection_by_hand():
    a = np.array([0.9, -2.0, 0.5, 0.1, 0.3, 0.0, 0.2, 0.8, 0.4, 0.6])
    b = np.array([0.1, 0.9, 0.5, 0.2, 0.3, 0.0, 0.8, 0.7, 0.4, 0.6])
    # 10 %: K = 1; signed top of a = {0}, of b = {1} → 0
    assert rm.topk_intersection(a, b, 0.1) == 0.0
    # 30 %: K = 3; a → {0, 7, 9}; b → {1, 6, 7} → 1/3
    assert rm.topk_intersection(a, b, 0.3) == pytest.approx(1 / 3)
    # by |value|: a → {1, 0, 7}; b → {1, 6, 7} → 2/3
    assert rm.topk_intersection(a, b, 0.3, by_abs=True) == pytest.approx(2 / 3)
    # 50 %: K = 5; a → {0, 7, 9, 2, 8}; b → {1, 6, 7, 9, 2} → 3/5
    assert rm.topk_intersection(a, b, 0.5) == pytest.approx(3 / 5)
    # ties → lower index; K = max(1, ceil(p n))
    assert rm.topk_intersection([1, 1, 1], [1, 0, 0], 0.1) == 1.0


def test_acc_weighs_bins_by_their_points_so_a_sparse_tail_cannot_inflate_it():
    """ACC integrates the cumulative, mass-weighted curve over the whole grid [0, 0.375]. The earlier
    rule (unweighted bin means, the last filled bin carried to the grid's end) let one sparse high bin
    raise the area: a curve 0.8 → 0.2 over bins 0–3 (20 points each), 0.2 carried to the end, scored
    0.1375, and 0.2425 with one more point of PCC 0.9 in bin 5 (1 of 81 points). Now 0.2200 and 0.2206:
    the point moves the area by its share of the points only."""
    centre = (np.arange(8) + 0.5) * 0.05
    head = np.array([0.8, 0.6, 0.4, 0.2, np.nan, np.nan, np.nan, np.nan])
    mass = np.array([20.0, 20, 20, 20, 0, 0, 0, 0])
    tail = head.copy()
    tail[5] = 0.9
    tail_mass = mass.copy()
    tail_mass[5] = 1.0

    def old_rule(m):  # unweighted bin means, interior gaps bridged, the last filled bin carried forward
        ok = np.isfinite(m)
        last = int(np.flatnonzero(ok)[-1])
        m, ok = m.copy(), ok.copy()
        m[-1], ok[-1] = m[last], True
        x, y = np.r_[0.0, centre[ok]], np.r_[1.0, m[ok]]
        return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))

    assert old_rule(head) == pytest.approx(0.1375)
    assert old_rule(tail) == pytest.approx(0.2425)  # the defect: +0.105 from one point of 81
    # cumulative means of the head: 0.8, 0.7, 0.6, 0.5, then 0.5 held to the end
    expected = 0.025 * 1.8 / 2 + 0.05 * (1.5 + 1.3 + 1.1) / 2 + 0.2 * 0.5
    assert rm.acc(centre, head, mass) == pytest.approx(expected)
    assert rm.cumulative_means(head, mass)[-1] == pytest.approx(0.5)
    raised = rm.acc(centre, tail, tail_mass) - rm.acc(centre, head, mass)
    # the point lifts the cumulative mean of bins 5–7 by (0.9 − 0.5)/81 each: 0.1 × 0.4/81 + trapezoid edges
    assert 0 < raised < 0.375 * 0.4 / 81 + 1e-12
    # weights are what count: the same high bin holding as many points as the others does move it
    heavy = tail_mass.copy()
    heavy[5] = 20.0
    assert rm.acc(centre, tail, heavy) - rm.acc(centre, head, mass) > 10 * raised
    # "undefined": no ACC when the grid's last bin is empty
    assert math.isnan(rm.acc(centre, head, mass, empty="undefined"))
    full = np.linspace(0.8, 0.3, 8)
    assert rm.acc(centre, full, np.ones(8), empty="undefined") == pytest.approx(rm.acc(centre, full, np.ones(8)))
    assert rm.bin_coverage([0, 3, 2, 0, 0, 0, 0, 0]) == {"filled": 2, "bins": 8, "rule": "carry",
                                                         "carried": [3, 4, 5, 6, 7], "bridged": [0]}
    with pytest.raises(ValueError):
        rm.acc(centre, head, mass, empty="zero")
    with pytest.raises(ValueError):
        rm.cumulative_means(head, mass[:3])


def test_the_docs_weak_and_strong_curves():
    """docs/robustness.md's example, computed: a strong full curve from PCC 0.8 to 0.3 scores 0.215
    under the old unweighted trapezoid (the docs said ≈ 0.20), and a weak curve 0.9 → 0.75 stopping at ρ
    0.175 scored 0.1475 when the trapezoid stopped there. Under the cumulative rule (equal points per
    bin) weak 0.3181, strong 0.2588: the weak curve is the more robust one either way."""
    centre = (np.arange(8) + 0.5) * 0.05
    strong = np.linspace(0.8, 0.3, 8)
    weak = np.array([0.9, 0.85, 0.8, 0.75, np.nan, np.nan, np.nan, np.nan])
    x, y = np.r_[0.0, centre], np.r_[1.0, strong]
    assert float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2)) == pytest.approx(0.215)
    w = np.where(np.isfinite(weak), 1.0, 0.0)
    assert rm.acc(centre, weak, w) == pytest.approx(0.318125)
    assert rm.acc(centre, strong, np.ones(8)) == pytest.approx(0.25875)  # cumulative 0.8 … 0.55


def test_weighted_acc_matches_repetition_and_the_bootstrap_form():
    rho = np.array([0.01, 0.06, 0.06, 0.12, 0.3])
    pcc = np.array([0.9, 0.5, 0.7, 0.2, -0.1])
    w = np.array([1, 3, 1, 2, 1])
    # a weight of k is k repeated points
    assert rm.acc_of(rho, pcc, weights=w) == pytest.approx(rm.acc_of(np.repeat(rho, w), np.repeat(pcc, w)))
    W = np.stack([w, np.ones(5), np.array([0, 1, 0, 1, 1])])
    got = rm.acc_weighted(rho, pcc, W)
    for row, value in zip(W, got):
        assert value == pytest.approx(rm.acc_of(rho, pcc, weights=row))


def test_acc_rows_is_acc_row_by_row_bit_for_bit():
    """The bootstrap's ACCs at once (`acc_rows`): the same bits as `acc` on each row, with empty bins before, inside
    and after the filled ones, rows with no filled bin, and both rules for an empty last bin."""
    rng = np.random.default_rng(0)
    centre = (np.arange(8) + 0.5) * 0.05
    for trial in range(60):
        means = rng.uniform(-1, 1, (30, 8))
        mass = rng.poisson(1.0, (30, 8)).astype(float) * rng.uniform(0.2, 2, (30, 8))
        means[(rng.random((30, 8)) < 0.3) | (mass == 0)] = np.nan
        mass[: trial % 3] = 0.0  # rows with nothing in any bin
        for empty in ("carry", "undefined"):
            got = rm.acc_rows(centre, means, mass, empty=empty)
            want = np.asarray([rm.acc(centre, m, w, empty=empty) for m, w in zip(means, mass)])
            assert np.array_equal(got, want, equal_nan=True), (trial, empty)
    assert np.isnan(rm.acc_rows(centre, np.full((2, 8), np.nan), np.zeros((2, 8)))).all()


def test_binning_and_acc_by_hand():
    rho = [0.01, 0.04, 0.06, 0.10, 0.40, 0.5]
    pcc = [0.8, 0.6, 0.5, 0.3, -0.2, 0.0]
    b = rm.bin_by_rho(rho, pcc)
    assert b["count"].tolist() == [2, 1, 1, 0, 0, 0, 0, 1]  # 0.10 → bin 2; 0.40 → last bin; 0.5 → outside
    assert b["mean"][0] == pytest.approx(0.7)
    assert b["mass"].tolist() == [2, 1, 1, 0, 0, 0, 0, 1]
    # cumulative means: bin 0 0.7, bin 1 (1.4 + 0.5)/3, bin 2 (1.9 + 0.3)/4 = 0.55 held over bins 3–6,
    # bin 7 (2.2 − 0.2)/5 = 0.4
    c1 = 1.9 / 3
    expected = (0.025 * (1 + 0.7) / 2 + 0.05 * (0.7 + c1) / 2 + 0.05 * (c1 + 0.55) / 2 + 0.2 * 0.55
                + 0.05 * (0.55 + 0.4) / 2)
    assert rm.acc(b["centre"], b["mean"], b["mass"]) == pytest.approx(expected)
    assert rm.acc_of(rho, pcc) == pytest.approx(expected)
    # a perfectly robust explainer: PCC 1 in every bin → 0.375
    full = rm.bin_by_rho(np.arange(8) * 0.05 + 0.01, np.ones(8))
    assert rm.acc(full["centre"], full["mean"], full["mass"]) == pytest.approx(0.375)
    assert math.isnan(rm.acc(full["centre"], np.full(8, np.nan), np.zeros(8), anchor=False))


def test_track_pairs_originals_and_attacks_and_counts_failures():
    from benchmark.tracks.robustness import RobustnessTrack

    trk = RobustnessTrack()
    kind = [{"original": True},
            {"original": False, "of": 0, "attack": "tef", "rho": 0.1, "weight": 2, "sample": "s"},
            {"original": False, "of": 0, "attack": "ra", "rho": 0.1, "weight": 1, "sample": "s"},
            {"original": True},
            {"original": False, "of": 3, "attack": "tef", "rho": 0.2, "weight": 1, "sample": "t"}]
    a = np.array([1.0, 2.0, 3.0])
    ex = [a, -a, a, a, a]
    # instance 3 (the second original) failed: its attacked text is excluded, not silently scored
    pos = [0, 1, 2, 4]
    scores = trk.score([ex[p] for p in pos], {"kind": kind}, pos)
    assert scores["rob-pcc-tef"].tolist()[1] == pytest.approx(-1.0)
    assert scores["rob-pcc-ra"].tolist()[2] == pytest.approx(1.0)
    assert math.isnan(scores["rob-pcc-tef"][3]) and scores["paired"][3] == 0
    full = {k: np.full(5, np.nan) for k in scores}
    for k, v in scores.items():
        full[k][pos] = v
    ok = np.array([True, True, True, False, True])
    summ = trk.summarise(full, ok)
    # TEF: one point (ρ 0.1 → bin 2, PCC −1): (0,1)→(0.125,−1) = 0, then −1 carried to 0.375: −0.25
    assert summ["rob-acc-tef"].mean == pytest.approx(-0.25)
    assert summ["rob-acc-tef"].excluded == 1
    assert summ["rob-acc-ra"].mean == pytest.approx(0.125 + 0.25)
    extra = trk.summary_extra(full, ok)
    assert extra["curves"]["tef"]["coverage"] == {"filled": 1, "bins": 8, "rule": "carry", "carried": [3, 4, 5, 6, 7],
                                                  "bridged": [0, 1]}
    assert extra["acc_variants"]["tef"]["undefined_rule"] is None  # the stricter rule: no ACC for such a curve
    assert extra["rank_gate"] == {"metric": "rob-faith-comp-worse", "min": None, "beat_controls": True}


def test_policy_extraction_on_a_hand_built_event_log():
    from generators.robustness.policies import apply_policy, policy

    events = [("Movie", "cinematographic"), ("movie", "cinematographic"), ("movie", "pic"),
              ("film", "cinematographic"), ("film", "cine"), ("good", "decent"), ("good", "decent"),
              ("story", "conte"), ("bad", "wicked"), ("bad", "wicked"), ("bad", "evil")]
    pol = policy(events)
    # counts desc, ties alphabetical; replacement: most frequent, ties alphabetical
    assert pol == [("bad", "wicked", 3), ("movie", "cinematographic", 3), ("film", "cine", 2),
                   ("good", "decent", 2), ("story", "conte", 1)]
    text = ["a", "good", "movie", "and", "a", "bad", "movie", ".", "x", "y"]
    adv, r, _where = apply_policy(text, pol, rho_max=0.2)  # (r+1)/10 > 0.2 stops at r = 2
    assert r == 2 and adv == ["a", "good", "cinematographic", "and", "a", "wicked", "movie", ".", "x", "y"]


def test_vectorised_distances_equal_the_scalar_ones_to_the_last_bit():
    """`attribution_distances` (TEF's batched d) gives exactly `attribution_distance` per vector: random
    rows of every MR length, constant / near-constant / non-finite / other-length rows, both PCC rules."""
    from benchmark.metrics.robustness import attribution_distance, attribution_distances

    rng = np.random.default_rng(0)
    for n in (2, 3, 7, 21, 34, 61):
        a = rng.normal(size=n)
        rows = list(rng.normal(size=(20, n))) + [np.full(n, 2.0), np.r_[np.ones(n - 1), 1 + 1e-14],
                                                 np.r_[np.zeros(n - 1), np.nan], rng.normal(size=n + 1),
                                                 1e9 * rng.normal(size=n), -a, a.copy()]
        for undefined in ("zero", "nan"):
            got = attribution_distances(a, rows, undefined)
            want = [attribution_distance(a, b, undefined) for b in rows]
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert (g == w) or (np.isnan(g) and np.isnan(w)), (n, undefined, g, w)
    const = attribution_distances(np.ones(5), [np.arange(5.0)], "nan")
    assert np.isnan(const[0]) and attribution_distances(np.ones(5), [np.arange(5.0)])[0] == 0.5


class _Lexicon:
    """A model whose class-1 probability is a logistic function of fixed word weights (a hand-checkable
    stand-in for the faithfulness formula; the track's real models are tested in test_robust_track)."""

    W = {"great": 3.0, "fun": 1.0, "plot": 0.0, "the": 0.0, "dull": -2.0}

    def predict(self, texts):
        s = np.array([sum(self.W.get(w, 0.0) for w in t) for t in texts])
        p1 = 1 / (1 + np.exp(-s))
        return np.stack([1 - p1, p1], axis=1)


def test_eraser_comprehensiveness_and_sufficiency_by_hand():
    from benchmark.metrics.erasure import eraser as faithfulness

    m = _Lexicon()
    text = ["the", "great", "plot", "fun"]  # n = 4: 1/5/10/20 % → top 1 word, 50 % → top 2
    good = np.array([0.0, 3.0, 0.0, 1.0])  # ranks great, fun first
    blind = np.array([4.0, 3.0, 2.0, 1.0])  # position: the, great
    p = lambda *ws: float(m.predict([list(ws)])[0, 1])  # noqa: E731
    p0 = p(*text)
    comp_good = (4 * (p0 - p("the", "plot", "fun")) + (p0 - p("the", "plot"))) / 5
    suff_good = (4 * (p0 - p("great")) + (p0 - p("great", "fun"))) / 5
    comp_blind = (4 * (p0 - p("great", "plot", "fun")) + (p0 - p("plot", "fun"))) / 5
    comp, suff = faithfulness(m, [text, text, ["great"]], [good, blind, np.array([1.0])])
    assert comp[0] == pytest.approx(comp_good) and suff[0] == pytest.approx(suff_good)
    assert comp[1] == pytest.approx(comp_blind) and comp[0] > comp[1]
    assert math.isnan(comp[2]) and math.isnan(suff[2])  # one word: nothing to remove


def test_bootstrap_units_are_the_attacked_samples_and_estimate_matches_summarise():
    from benchmark.bootstrap import draw_weights
    from benchmark.tracks.robustness import RobustnessTrack

    trk = RobustnessTrack()
    rng = np.random.default_rng(1)
    kind, ex = [], []
    for s in range(6):
        o = len(kind)
        kind.append({"original": True})
        ex.append(rng.normal(size=8))
        for r in (1, 2, 3):
            kind.append({"original": False, "of": o, "attack": "tef", "rho": r / 8, "weight": 4 - r, "sample": str(s)})
            ex.append(ex[o] + rng.normal(scale=0.5 * r, size=8))
    pos = list(range(len(kind)))
    scores = trk.score(ex, {"kind": kind}, pos)
    ok = np.ones(len(pos), dtype=bool)
    units = trk.units(scores, len(pos))
    assert len(np.unique(units)) == 6 and all(units[k] == units[k - k % 4] for k in pos)
    est = trk.estimate(scores, ok, np.ones((1, len(pos))))
    summ = trk.summarise(scores, ok)
    assert est["rob-acc-tef"][0] == pytest.approx(summ["rob-acc-tef"].mean)
    assert est["rob-pcc-tef"][0] == pytest.approx(summ["rob-pcc-tef"].mean)
    assert np.isnan(est["rob-acc-ra"][0]) and summ["rob-acc-ra"].mean is None
    # a draw that takes sample 0 twice and sample 1 not at all: its four instances count twice
    W = draw_weights(units, keep=np.isfinite(scores["rob-pcc-tef"]), n_boot=50, seed=0)
    assert W.shape == (50, len(pos)) and np.all(W.sum(axis=1) == len(pos))
    assert all(len(set(W[b, k - k % 4 : k - k % 4 + 4])) == 1 for b in range(50) for k in pos)
    lo, hi = summ["rob-acc-tef"].ci95
    assert lo <= summ["rob-acc-tef"].mean <= hi and summ["rob-acc-tef"].n == 6
    # the "point" weighting: one point per (sample, r)
    point = trk.score(ex, {"kind": kind}, pos, weighting="point")
    assert np.nanmax(point["weight"]) == 1 and np.nanmax(point["weight_rho_max"]) == 3


def test_constant_or_zero_attributions_on_attacked_texts_are_counted_undefined():
    from benchmark.tracks.robustness import RobustnessTrack

    trk = RobustnessTrack()
    kind = [{"original": True},
            {"original": False, "of": 0, "attack": "tef", "rho": 0.1, "weight": 1, "sample": "s"},
            {"original": False, "of": 0, "attack": "tef", "rho": 0.2, "weight": 1, "sample": "s"},
            {"original": False, "of": 0, "attack": "tef", "rho": 0.3, "weight": 1, "sample": "s"}]
    a = np.array([1.0, 2.0, 3.0, 0.5])
    ex = [a, np.zeros(4), np.full(4, 0.7), a[::-1].copy()]
    scores = trk.score(ex, {"kind": kind}, [0, 1, 2, 3])
    assert np.isnan(scores["rob-pcc-tef"][1]) and np.isnan(scores["rob-pcc-tef"][2])  # never a silent 1 or 0
    ok = np.ones(4, dtype=bool)
    summ = trk.summarise(scores, ok)
    assert summ["rob-acc-tef"].excluded == 2 and summ["rob-pcc-tef"].excluded == 2
    assert trk.summary_extra(scores, ok)["pcc_undefined"]["tef"] == 2
