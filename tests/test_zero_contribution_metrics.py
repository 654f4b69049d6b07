"""Zero-contribution metrics (benchmark/metrics/zero_contribution.py, SPECS §4.6) on hand-built rankings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmark.metrics import METRICS
from benchmark.metrics.zero_contribution import (
    N,
    SDK,
    SR,
    avg_misrank,
    avg_misrank_pessimistic,
    pct_first,
    pct_first_pessimistic,
    pct_misrank,
    pct_misrank_pessimistic,
    zero_contribution_errors,
)


def one(scores, labels, ties="position", attribution="signed"):
    """(first, misrank, count) of a single instance."""
    out = zero_contribution_errors([np.array(scores, float)], [np.array(labels, np.int8)], ties, attribution)
    return tuple(float(out[k][0]) for k in ("first", "misrank", "count"))


def test_plain_ranking():
    # scores .9 .8 .1 .5 → ranking: pos0 (N), pos1 (SR), pos3 (SDK), pos2 (N)
    # (A) r_1 = pos0 ∈ N → 100; the lowest SR is pos1 (rank 2), one N token (pos0) above it → (B) 100, (C) 1
    assert one([0.9, 0.8, 0.1, 0.5], [N, SR, N, SDK]) == (100.0, 100.0, 1.0)
    # SR first: .1 .9 .2 .5 → pos1 (SR), pos3 (SDK), pos2 (N), pos0 (N): no N above the only SR token
    assert one([0.1, 0.9, 0.2, 0.5], [N, SR, N, SDK]) == (0.0, 0.0, 0.0)


def test_ties_by_position_and_pessimistic():
    # N and SR tied: position rule puts pos0 first
    assert one([0.5, 0.5], [N, SR]) == (100.0, 100.0, 1.0)
    assert one([0.5, 0.5], [N, SR], "pessimistic") == (100.0, 100.0, 1.0)
    # SR at pos0, N at pos1, tied: position rule → SR first, N after the last SR → no error;
    # pessimistic → the tie goes against the explainer: N first, and N ahead of the SR token
    assert one([0.5, 0.5], [SR, N]) == (0.0, 0.0, 0.0)
    assert one([0.5, 0.5], [SR, N], "pessimistic") == (100.0, 100.0, 1.0)


def test_several_sr_tokens():
    labels = [SR, N, N, SR, N, SDK]
    scores = [0.9, 0.8, 0.3, 0.5, 0.5, 0.7]
    # ranking (ties by position): pos0 .9 SR, pos1 .8 N, pos5 .7 SDK, pos3 .5 SR, pos4 .5 N, pos2 .3 N
    # (A) r_1 = pos0 ∈ SR → 0. last_si = rank of pos3 (the lower of the two SR tokens) = 4;
    # N tokens ranked before it: pos1 only (pos4 ties with pos3 but comes later) → (B) 100, (C) 1
    assert one(scores, labels) == (0.0, 100.0, 1.0)
    # pessimistic: pos4 (N, 0.5) ties with the lowest SR token (0.5) → counted too → (C) 2
    assert one(scores, labels, "pessimistic") == (0.0, 100.0, 2.0)


def test_lowest_sr_among_tied_sr_tokens():
    # all tied: ranking pos0 (SR), pos1 (N), pos2 (SR); the lowest-ranked SR is pos2 → pos1 is above it
    assert one([0.5, 0.5, 0.5], [SR, N, SR]) == (0.0, 100.0, 1.0)
    # pessimistic: the N token ties with the top → (A) 100
    assert one([0.5, 0.5, 0.5], [SR, N, SR], "pessimistic") == (100.0, 100.0, 1.0)


@pytest.mark.parametrize("ties", ["position", "pessimistic"])
def test_empty_n_gives_zero_everywhere(ties):
    assert one([0.2, 0.7, 0.2], [SR, SDK, SR], ties) == (0.0, 0.0, 0.0)
    assert one([1.0, 1.0, 1.0], [SDK, SR, SR], ties) == (0.0, 0.0, 0.0)  # even all tied


def test_constant_explanation_under_pessimistic_ties():
    # a constant explanation distinguishes nothing: pessimistic → 100 / 100 / |N| = 3
    assert one([0.0] * 5, [SR, N, SDK, N, N], "pessimistic") == (100.0, 100.0, 3.0)
    # position rule: the review's order decides: pos0 (SR) first, the only SR is rank 1 → no error
    assert one([0.0] * 5, [SR, N, SDK, N, N]) == (0.0, 0.0, 0.0)


def test_undefined_instances_are_nan():
    first, mis, cnt = one([0.9, 0.1], [N, SDK])  # no SR token: (A) defined, (B)/(C) undefined
    assert first == 100.0 and math.isnan(mis) and math.isnan(cnt)
    assert all(math.isnan(v) for v in one([np.nan, 0.1], [N, SR]))
    assert all(math.isnan(v) for v in one([np.inf, 0.1], [N, SR]))
    out = zero_contribution_errors([np.zeros(0)], [np.zeros(0, np.int8)])
    assert all(math.isnan(out[k][0]) for k in out)


def test_absolute_attribution():
    # signed: 0.5 (SR) > −0.9 (N); absolute: |−0.9| > 0.5 → the N token first
    assert one([-0.9, 0.5], [N, SR]) == (0.0, 0.0, 0.0)
    assert one([-0.9, 0.5], [N, SR], attribution="absolute") == (100.0, 100.0, 1.0)


def test_bad_input():
    with pytest.raises(ValueError, match="3 scores for a review of 2"):
        pct_first([np.zeros(3)], [np.zeros(2, np.int8)])
    with pytest.raises(ValueError, match="labels"):
        pct_first([np.zeros(2)], [np.array([0, 7])])
    with pytest.raises(ValueError, match="ties"):
        zero_contribution_errors([np.zeros(1)], [np.zeros(1, np.int8)], ties="random")
    with pytest.raises(ValueError, match="attribution"):
        pct_first([np.zeros(1)], [np.zeros(1, np.int8)], attribution="squared")


def _reference(scores, labels, ties):
    """Brute force: build the full ranking with an explicit sort key and walk it."""
    n = len(scores)
    if ties == "position":
        order = sorted(range(n), key=lambda i: (-scores[i], i))
    else:
        prio = {N: 0, SDK: 1, SR: 2}
        order = sorted(range(n), key=lambda i: (-scores[i], prio[labels[i]], i))
    ranked = [labels[i] for i in order]
    first = 100.0 * (ranked[0] == N)
    if SR not in ranked:
        return first, math.nan, math.nan
    last_si = max(j for j, lab in enumerate(ranked) if lab == SR)
    count = sum(1 for lab in ranked[:last_si] if lab == N)
    return first, 100.0 * (count > 0), float(count)


@pytest.mark.parametrize("ties", ["position", "pessimistic"])
def test_vectorised_batch_matches_brute_force(ties):
    rng = np.random.default_rng(0)
    expl, truth = [], []
    for _ in range(400):
        n = int(rng.integers(1, 12))
        expl.append(rng.integers(0, 4, n).astype(float))  # few distinct values: many ties
        truth.append(rng.choice([N, SDK, SR], n, p=[0.6, 0.2, 0.2]).astype(np.int8))
    got = zero_contribution_errors(expl, truth, ties)
    for i, (s, g) in enumerate(zip(expl, truth)):
        ref = _reference(list(s), list(g), ties)
        for k, r in zip(("first", "misrank", "count"), ref):
            assert (math.isnan(r) and math.isnan(got[k][i])) or got[k][i] == r, (i, k, s, g)


def test_registered_metrics_and_means():
    names = ["pct-first", "pct-misrank", "avg-misrank",
             "pct-first-pessimistic", "pct-misrank-pessimistic", "avg-misrank-pessimistic"]
    for name in names:
        m = METRICS.get(name)
        assert m.direction == "lower" and m.family == "zero-contribution"
    expl = [np.array([0.9, 0.8, 0.1, 0.5]), np.array([0.5, 0.5]), np.array([0.1, 0.9])]
    truth = [np.array([N, SR, N, SDK]), np.array([SR, N]), np.array([N, SR])]
    # per instance (position ties): (100, 100, 1), (0, 0, 0), (0, 0, 0) → %first 33.3, avg-misrank mean 1/3
    np.testing.assert_array_equal(pct_first(expl, truth), [100.0, 0.0, 0.0])
    np.testing.assert_array_equal(pct_misrank(expl, truth), [100.0, 0.0, 0.0])
    np.testing.assert_array_equal(avg_misrank(expl, truth), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(pct_first_pessimistic(expl, truth), [100.0, 100.0, 0.0])
    np.testing.assert_array_equal(pct_misrank_pessimistic(expl, truth), [100.0, 100.0, 0.0])
    np.testing.assert_array_equal(avg_misrank_pessimistic(expl, truth), [1.0, 1.0, 0.0])
    assert METRICS.get("pct-first")(expl, truth).mean() == pytest.approx(100 / 3)
    # the registered defaults can be overridden like any metric parameter
    np.testing.assert_array_equal(METRICS.get("pct-first")(expl, truth, ties="pessimistic"), [100.0, 100.0, 0.0])
