"""Boards whose conclusions hold (issue #26): paired-bootstrap rank intervals and ties, controls and
references as marked rows, a verdict per board, metric agreement, the ranking gate, and summaries
that compare submissions only on the boards both entered (Bradley–Terry)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark import bootstrap
from benchmark.store.results import MetricSummary, pack_scores
from benchmark.tracks import get_track
from leaderboard import render, stats
from leaderboard.boards import boards
from leaderboard.summaries import overall, track_summary
from tests.test_leaderboard import floored, make_result, metric

N = 200


def noisy(mean: float, sd: float = 0.3, seed: int = 0, n: int = N) -> np.ndarray:
    return mean + sd * np.random.default_rng(seed).standard_normal(n)


def shared_noise(means: dict[str, float], sd_instance: float = 0.5, sd_own: float = 0.05, seed: int = 0):
    """Per-instance values: a difficulty shared by every submission (large) plus a small own noise, so
    small mean differences are real under a *paired* test but hidden in unpaired intervals."""
    rng = np.random.default_rng(seed)
    base = sd_instance * rng.standard_normal(N)
    return {name: m + base + sd_own * rng.standard_normal(N) for name, m in means.items()}


def board_of(values: dict[str, np.ndarray], roles: dict[str, str] | None = None, floor: bool = True, **kw):
    """The board of these per-instance values; `floor`: with a control worse than every row when none is
    given (a board without a control is not ranked)."""
    rs = [make_result(name, values=v, role=(roles or {}).get(name, "method"), **kw) for name, v in values.items()]
    (b,) = boards(floored(rs) if floor else rs)
    return b


def row(b, name):
    return next(r for r in b.rows if r.submission == name)


# --------------------------------------------------------------------------------------------------
# rank intervals and ties


def test_rows_within_noise_share_a_rank_and_clear_differences_do_not():
    vals = {"a": noisy(0.50, seed=1), "b": noisy(0.51, seed=2), "c": noisy(1.50, seed=3)}
    b = board_of(vals)  # kl: lower is better
    a_, b_, c_ = row(b, "a"), row(b, "b"), row(b, "c")
    assert (a_.rank, b_.rank) == (1, 1) and a_.tied and b_.tied  # 0.50 vs 0.51 with sd 0.3 on 200: noise
    assert c_.rank == 3 and not c_.tied  # 1.50: clearly worse than both
    assert a_.interval[0] == 1 and a_.interval[1] == 2 and c_.interval == (3, 3)
    text = render.to_text([b], width=80)
    assert "1=" in text and "1–2" in text


def test_pairing_separates_what_unpaired_intervals_cannot():
    vals = shared_noise({"a": 0.50, "b": 0.53})
    b = board_of(vals)
    ma, mb = row(b, "a").metrics["kl"], row(b, "b").metrics["kl"]
    assert ma.ci95[1] > mb.ci95[0]  # the two marginal intervals overlap …
    assert (row(b, "a").rank, row(b, "b").rank) == (1, 2)  # … but the paired difference is clear
    assert not row(b, "a").tied


def test_bootstrap_is_deterministic_and_the_same_draws_serve_every_row():
    vals = {"a": noisy(0.5, seed=1), "b": noisy(0.6, seed=2)}
    b1, b2 = board_of(vals), board_of(vals)
    assert [(r.submission, r.rank, r.interval) for r in b1.rows] == \
        [(r.submission, r.rank, r.interval) for r in b2.rows]
    w = bootstrap.draw_weights(np.arange(10), n_boot=5, seed=0)
    assert w.shape == (5, 10) and (w.sum(1) == 10).all()
    clusters = bootstrap.draw_weights(np.array([0, 0, 1, 1, 2]), n_boot=50, seed=0)
    assert (clusters[:, 0] == clusters[:, 1]).all() and (clusters[:, 2] == clusters[:, 3]).all()


def _board_draws_before(units, n_boot, seed):
    """`benchmark.bootstrap.draw_weights` as it was before the tracks shared it (issue #40), verbatim."""
    units = np.asarray(units)
    n = units.size
    if n == 0:
        return np.zeros((n_boot, 0))
    _, inverse = np.unique(units, return_inverse=True)
    k = int(inverse.max()) + 1
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, k, size=(n_boot, k))
    counts = np.zeros((n_boot, k))
    np.add.at(counts, (np.repeat(np.arange(n_boot), k), picks.ravel()), 1.0)
    return counts[:, inverse]


def _trust_draws_before(ok, n_boot, seed):
    """The trust track's own `bootstrap_weights` before issue #40, verbatim."""
    ok = np.asarray(ok, dtype=bool)
    idx = np.flatnonzero(ok)
    w = np.zeros((n_boot, len(ok)))
    if len(idx) == 0:
        return w
    draws = np.random.default_rng(seed).integers(0, len(idx), size=(n_boot, len(idx)))
    rows = np.repeat(np.arange(n_boot), len(idx))
    np.add.at(w, (rows, idx[draws.reshape(-1)]), 1.0)
    return w


def _robustness_draws_before(units, good, n_boot, seed):
    """The robustness track's own `bootstrap_weights` before issue #40 (a loop per draw), verbatim."""
    uniq, inv = np.unique(units, return_inverse=True)
    has = np.zeros(len(uniq), dtype=bool)
    has[inv[good]] = True
    pool = np.flatnonzero(has)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(pool), size=(n_boot, len(pool)))
    counts = np.zeros((n_boot, len(uniq)))
    for b in range(n_boot):
        counts[b] = np.bincount(pool[draws[b]], minlength=len(uniq))
    return counts[:, inv]


@pytest.mark.parametrize("seed", [0, 3])
def test_one_draw_weights_makes_the_draws_each_track_made_before(seed):
    """Issue #40: the board's, the trust track's and the robustness track's resampling now go through one
    `draw_weights(units, keep=…)`; for the same seed it makes exactly the draws each made before, so no
    stored interval changes (docs/leaderboard.md)."""
    rng = np.random.default_rng(100 + seed)
    for n, n_units in ((1, 1), (7, 7), (40, 9), (200, 31)):
        units = rng.permutation(np.repeat(np.arange(n_units) * 3 + 5, -(-n // n_units))[:n])
        keep = rng.random(n) < 0.7
        new = bootstrap.draw_weights(units, n_boot=60, seed=seed)
        assert np.array_equal(new, _board_draws_before(units, 60, seed))
        assert np.array_equal(bootstrap.draw_weights(np.arange(n), keep=keep, n_boot=60, seed=seed),
                              _trust_draws_before(keep, 60, seed))
        if keep.any():
            assert np.array_equal(bootstrap.draw_weights(units, keep=keep, n_boot=60, seed=seed),
                                  _robustness_draws_before(units, keep, 60, seed))
        none = bootstrap.draw_weights(units, keep=np.zeros(n, dtype=bool), n_boot=4, seed=seed)
        assert none.shape == (4, n) and not none.any()
    # an instance outside the pool weighs 0 only when its whole unit is: a unit with one kept instance is drawn
    w = bootstrap.draw_weights(np.array([0, 0, 1, 2]), keep=np.array([True, False, False, True]), n_boot=200)
    assert (w[:, 0] == w[:, 1]).all() and not w[:, 2].any() and (w.sum(1) == 2 * w[:, 0] + w[:, 3]).all()
    assert (w[:, 0] + w[:, 3] == 2).all()


def test_estimate_with_unit_weights_equals_the_summary_for_every_track():
    rng = np.random.default_rng(0)
    n = 40
    cases = {
        "aixi": {m: rng.random(n) for m in ("kl", "emd", "emd-paper", "mass-accuracy", "rank-accuracy", "pcc")},
        "rcnn": {m: rng.random(n) * 100 for m in ("pct-first", "pct-misrank", "avg-misrank", "pct-first-pessimistic",
                                                    "pct-misrank-pessimistic", "avg-misrank-pessimistic")},
    }
    counts = rng.integers(0, 5, size=(n, 4)).astype(float)
    cases["idc"] = {"counts": counts}
    trust_counts = np.eye(4)[rng.integers(0, 4, n)]
    cases["trust"] = {"counts": trust_counts}
    # robustness: 8 samples, each an original text and 4 attacked texts under TEF or RA at several ρ
    sample = np.repeat(np.arange(8), 5).astype(float)
    attack = np.tile([np.nan, 0, 0, 1, 1], 8)
    rob = {"sample": sample, "attack": attack, "rho": np.where(np.isnan(attack), np.nan, rng.random(n) * 0.4),
           "weight": np.where(np.isnan(attack), np.nan, rng.integers(1, 4, n).astype(float))}
    for m in get_track("robustness").metric_objects():
        if not m.name.startswith(("rob-acc", "rob-racc")):
            rob[m.name] = np.where(np.isnan(attack), np.nan, rng.random(n))
    cases["robustness"] = rob
    for track, scores in cases.items():
        trk = get_track(track)
        if track in ("idc", "trust"):
            scores.update({m.name: m(scores["counts"], None) for m in trk.metric_objects()
                           if m.name not in scores and (m.pooled or track == "trust")})
            if track == "idc":
                import benchmark.metrics.interpretation as interp

                for m in trk.metric_objects():
                    if not m.pooled:
                        kind = m.name.removeprefix("interp-").removesuffix("-macro")
                        scores[m.name] = interp.macro_values(counts, kind)
        ok = np.ones(n, dtype=bool)
        ok[3] = False  # a failed instance is left out of both
        summary = trk.summarise(scores, ok)
        est = trk.estimate(scores, ok, np.ones((1, n)))
        for name, m in summary.items():
            got = float(est[name][0])
            if m.mean is None:
                assert not np.isfinite(got), (track, name)
            else:
                assert got == pytest.approx(m.mean, rel=1e-9, abs=1e-12), (track, name)


# --------------------------------------------------------------------------------------------------
# controls, references and the verdict


def test_controls_and_references_are_marked_rows_never_ranked():
    vals = {"a": noisy(0.4, seed=1), "b": noisy(0.8, seed=2), "uniform": noisy(1.0, seed=3),
            "oracle": noisy(0.1, seed=4)}
    b = board_of(vals, roles={"uniform": "control", "oracle": "reference"})
    assert [(r.submission, r.rank) for r in b.rows] == [("oracle", None), ("a", 1), ("b", 2), ("uniform", None)]
    assert row(b, "uniform").marker == "control" and row(b, "oracle").marker == "reference"
    md = render.to_markdown([b])
    assert "| ctrl |" in md and "| ref |" in md and "uniform (control)" in md


def test_verdict_discriminates_when_the_best_method_beats_the_best_control():
    b = board_of({"a": noisy(0.4, seed=1), "random": noisy(1.0, seed=2)}, roles={"random": "control"})
    assert b.verdict.discriminates and b.verdict.best == "a" and b.verdict.control == "random"
    assert b.verdict.ci[0] > 0 and "verdict: discriminates" in render.to_text([b], width=80)


def test_verdict_does_not_discriminate_when_methods_sit_at_the_control():
    vals = {"a": noisy(0.50, seed=1), "b": noisy(0.52, seed=2), "random": noisy(0.51, seed=3)}
    b = board_of(vals, roles={"random": "control"})
    assert b.verdict.status == "does not discriminate" and "not used in the summaries" in b.verdict.reason
    assert track_summary([b])[0].rows == [] and overall([b]) == []


@pytest.mark.parametrize("case, why", [
    ("one", "only one submission"), ("no-control", "no control"), ("old", "no per-instance scores"),
    ("all-nan", "no method has a kl value"),
])
def test_undefined_verdicts_say_why_and_never_crash(case, why):
    if case == "one":
        b = board_of({"a": noisy(0.4)}, floor=False)
    elif case == "no-control":
        b = board_of({"a": noisy(0.4, seed=1), "b": noisy(0.5, seed=2)}, floor=False)
        # no floor: shown, not ranked, with the reason (issue #36)
        assert [r.rank for r in b.rows] == [None, None] and "no control Result" in b.unranked
    elif case == "old":
        (b,) = boards([make_result("a", metrics={"kl": metric(0.2)}),
                       make_result("random", metrics={"kl": metric(0.9)}, role="control")])
        assert b.intervals and "per-instance scores" in b.intervals
    else:
        b = board_of({"a": np.full(N, np.nan), "random": noisy(0.5)}, roles={"random": "control"})
    assert b.verdict.status == "undefined" and why in b.verdict.reason
    assert "verdict: undefined" in render.to_text([b], width=80)
    render.to_markdown([b]), render.to_csv([b])  # nothing crashes


def test_agreement_is_kendall_tau_and_disagreement_is_flagged():
    a, b_, c = noisy(0.1, seed=1), noisy(0.5, seed=2), noisy(0.9, seed=3)
    vals = {"a": {"kl": a, "emd": a, "pcc": -a}, "b": {"kl": b_, "emd": b_, "pcc": -b_},
            "c": {"kl": c, "emd": c, "pcc": -c}}
    rs = [make_result(n, values=v, metrics={"kl": metric(0.0, "lower", "KL"), "emd": metric(0.0, "lower", "EMD"),
                                           "pcc": metric(0.0, "lower", "PCC")}) for n, v in vals.items()]
    # pcc is declared lower-is-better here, so its ranking is the exact reverse of KL's
    (board,) = boards(rs)
    assert board.agreement["emd"] == (pytest.approx(1.0), "")
    assert board.agreement["pcc"][0] == pytest.approx(-1.0)
    assert board.disagreeing == ["pcc"]
    assert "⚠ the primary metric disagrees with PCC" in render.to_text([board], width=200)
    assert "PCC -1.00 ⚠" in render.to_markdown([board])
    # the all-metric ranking: a is best on two of three metrics
    assert row(board, "a").all_metric_rank == 1
    too_few = board_of({"a": noisy(0.1), "random": noisy(0.9)}, roles={"random": "control"})
    assert all(tau is None for tau, _ in too_few.agreement.values())


def gated_track(monkeypatch, gate: dict) -> None:
    """The aixi track declaring `gate` as its ranking gate (the boards read it from the track only)."""
    from dataclasses import replace

    trk = get_track("aixi")
    monkeypatch.setattr(type(trk), "metadata", replace(trk.metadata, rank_gate=gate))


def test_gate_ranks_methods_below_the_floor_after_those_above_it(monkeypatch):
    gated_track(monkeypatch, {"metric": "emd", "min": None, "beat_controls": True})
    rs = []
    for name, kl, faith, role in [("good", 0.6, 0.5, "method"), ("blind", 0.1, 0.0, "method"),
                                  ("position", 0.0, 0.0, "control")]:
        r = make_result(name, values={"kl": noisy(kl, seed=len(name)), "emd": noisy(faith, 0.05, seed=len(name) + 9)},
                        metrics={"kl": metric(0, "lower", "KL"), "emd": metric(0, "higher", "faith")}, role=role)
        rs.append(r)
    (b,) = boards(rs)
    assert (row(b, "good").rank, row(b, "blind").rank) == (1, 2)  # blind has the best kl but reads nothing
    assert row(b, "blind").below_gate and not row(b, "good").below_gate
    assert "below the gate" in render.to_text([b], width=120)
    # the text-blind control wins on kl for free; the board discriminates on the gate metric
    assert b.verdict.discriminates and b.verdict.best == "good" and b.verdict.control == "position"
    assert "on the gate metric" in b.verdict.reason and "free" in b.verdict.reason
    # ... and does not when no method separates from the control on the gate metric either
    flat = []
    for name, kl, faith, role in [("good", 0.6, 0.0, "method"), ("position", 0.0, 0.0, "control")]:
        r = make_result(name, values={"kl": noisy(kl, seed=len(name)), "emd": noisy(faith, 0.05, seed=len(name) + 9)},
                        metrics={"kl": metric(0, "lower", "KL"), "emd": metric(0, "higher", "faith")}, role=role)
        flat.append(r)
    (f,) = boards(flat)
    assert f.verdict.status == "does not discriminate"


# --------------------------------------------------------------------------------------------------
# summaries: compare only where both entered


def test_summary_ranks_b_above_a_when_b_beats_a_on_every_shared_board():
    # A enters three small boards (wins them); B enters only the three big ones (half the boards: the
    # least a ranked row may have entered), where B beats A. Mean rank: A (1+1+1+3+3+3)/6 = 2 = B's
    # (2+2+2)/3 — a mean-rank aggregate cannot tell them apart; B beats A wherever they meet.
    rs = []
    for k in range(3):
        rs += [make_result("A", model=f"small{k}", values=noisy(0.2, 0.05, seed=k)),
               make_result("C", model=f"small{k}", values=noisy(0.6, 0.05, seed=10 + k)),
               make_result("random", model=f"small{k}", values=noisy(1.0, 0.05, seed=20 + k), role="control")]
    for k in range(3):
        rs += [make_result("E", model=f"big{k}", values=noisy(0.05, 0.05, seed=30 + k)),
               make_result("B", model=f"big{k}", values=noisy(0.15, 0.05, seed=40 + k)),
               make_result("A", model=f"big{k}", values=noisy(0.3, 0.05, seed=50 + k)),
               make_result("C", model=f"big{k}", values=noisy(0.6, 0.05, seed=60 + k)),
               make_result("random", model=f"big{k}", values=noisy(1.0, 0.05, seed=70 + k), role="control")]
    # the small boards are black boxes B and E cannot enter (they need gradients): neither skipped a board it
    # could enter (issue #45's coverage rule, tests/test_coverage.py)
    for r in rs:
        r.model["white_box"] = r.model["name"].startswith("big")
        r.submission["capabilities"] = {"modalities": ["image"], "needs_gradients": r.submission["name"] in "BE",
                                        "needs_segments": False}
    bs = boards(rs)
    assert all(b.verdict.discriminates for b in bs)
    (aixi,) = track_summary(bs)
    order = [r.submission for r in aixi.rows]
    assert order.index("B") < order.index("A") and "random" not in order
    a = next(r for r in aixi.rows if r.submission == "A")
    assert (a.entered, a.total) == (6, 6) and a.parts["aixi · aixi/shape-ssin · big0"] == 3.0
    rows = overall(bs)
    assert [r.submission for r in rows].index("B") < [r.submission for r in rows].index("A")


def test_boards_that_do_not_discriminate_are_left_out_of_summaries_with_the_reason():
    good = [make_result("a", values=noisy(0.2, seed=1)), make_result("b", values=noisy(0.6, seed=2)),
            make_result("random", values=noisy(1.0, seed=3), role="control")]
    flat = [make_result(n, model="mlp", values=noisy(0.5, seed=k)) for k, n in enumerate(["a", "b"])]
    flat.append(make_result("random", model="mlp", values=noisy(0.5, seed=9), role="control"))
    (s,) = track_summary(boards(good + flat))
    assert s.counted == 1 and s.n_boards == 2 and "mlp" in s.left_out[0] and "does not discriminate" in s.left_out[0]
    assert [r.submission for r in s.rows] == ["a", "b"]


def test_bradley_terry_matches_the_choix_reference():
    choix = pytest.importorskip("choix")
    comps = [(0, 1, 1.0), (0, 1, 1.0), (1, 0, 1.0), (1, 2, 1.0), (2, 1, 1.0), (1, 2, 1.0), (0, 2, 1.0), (2, 0, 1.0),
             (0, 2, 1.0)]
    ours = np.log(stats.bradley_terry(3, comps, prior=0.0))
    theirs = choix.ilsr_pairwise(3, [(winner, loser) for winner, loser, _ in comps], alpha=0.0)
    assert np.allclose(ours - ours.mean(), theirs - theirs.mean(), atol=1e-6)


def _bt_one_set(n_items, comparisons, prior=0.5, tol=1e-10, max_iter=10_000):
    """The MM iteration written for one set (the module docstring's update), to hold the batched fit to."""
    wins = np.full(n_items, float(prior))
    games = np.zeros((n_items, n_items))
    for winner, loser, weight in comparisons:
        wins[winner] += weight
        games[winner, loser] += weight
        games[loser, winner] += weight
    pi = np.ones(n_items)
    for _ in range(max_iter):
        new = wins / ((games / (pi[:, None] + pi[None, :])).sum(1) + 2 * prior / (pi + 1.0))
        done = np.max(np.abs(np.log(new) - np.log(pi))) < tol
        pi = new
        if done:
            break
    return pi


def test_bradley_terry_fitted_side_by_side_gives_each_set_s_own_numbers_bit_for_bit():
    """A board summary fits its 200 board resamples at once (`bradley_terry_many`); each set converges at its own
    step, so its strengths are exactly those of fitting it alone — also for an empty set, a set where one item
    meets nobody, and sets that converge many steps apart."""
    rng = np.random.default_rng(3)
    sets = [[(int(a), int(b), float(w)) for a, b, w in zip(rng.integers(0, 13, k), rng.integers(0, 13, k),
                                                             rng.choice([0.5, 1.0, 2.0], k)) if a != b]
            for k in (0, 3, 40, 400, 2000)]
    sets.append([(0, 1, 1.0)] * 50)  # items 2..12 meet nobody
    many = stats.bradley_terry_many(13, sets)
    for s, comps in enumerate(sets):
        assert np.array_equal(many[s], _bt_one_set(13, comps)), s
        assert np.array_equal(stats.bradley_terry(13, comps), many[s]), s


# --------------------------------------------------------------------------------------------------
# several seeds
# --------------------------------------------------------------------------------------------------
# several seeds


def test_seed_runs_widen_the_interval_by_the_seed_variance():
    trk = get_track("aixi")
    rng = np.random.default_rng(0)
    base = rng.random(100)
    rest = {m.name: rng.random(100) for m in trk.metric_objects()}
    same = [(0, {**rest, "kl": base}, np.ones(100, bool)), (1, {**rest, "kl": base}, np.ones(100, bool))]
    moved = [(0, {**rest, "kl": base}, np.ones(100, bool)), (1, {**rest, "kl": base + 0.3}, np.ones(100, bool))]
    from benchmark.runner import summarise_runs

    s_same = summarise_runs(trk, [(sc, ok) for _, sc, ok in same])["kl"]
    s_moved = summarise_runs(trk, [(sc, ok) for _, sc, ok in moved])["kl"]
    assert s_moved.mean == pytest.approx(base.mean() + 0.15)
    assert (s_moved.ci95[1] - s_moved.ci95[0]) > 2 * (s_same.ci95[1] - s_same.ci95[0])
    packed = pack_scores(moved)
    assert packed["seeds"] == [0, 1]
    assert isinstance(s_same, MetricSummary)


def test_the_board_states_the_model_under_tests_own_figures():
    """An RCNN board says how its rationale model selects against Lei's targets (issue #29), and marks a
    model outside them; an AIXI board states its CNN's validation score and floor."""
    from benchmark.models.rcnn_targets import check

    for rate, precision, expect in ((0.103, 0.907, "precision 90.7 %"), (0.02, 0.95, "outside Lei's targets")):
        selection, quality = check(rate, {"precision": precision, "recall": 0.6, "n": 994})
        rs = [make_result(n, track="rcnn", resource="rcnn/beer-appearance", model="rcnn", primary="pct-first",
                          metrics={"pct-first": metric(v, "lower", "%first")})
              for n, v in (("a", 1.0), ("random", 80.0))]
        for r in rs:
            r.model.update(selection=selection, quality=quality)
        (b,) = boards(rs)
        assert b.model_note.startswith("model under test: 10.3 %" if rate == 0.103 else "model under test: 2.0 %")
        assert expect in b.model_note and expect in "\n".join(render.board_notes(b))
        assert any("below its quality floor" in w for w in b.warnings) == (rate == 0.02)
    r = make_result("a")
    r.model["quality"] = {"metric": "r2", "value": 0.91, "floor": 0.8, "meets_floor": True}
    (b,) = boards([r])
    assert b.model_note == "model under test: validation r2 0.91 (floor 0.8: met)"


def test_methods_every_board_ties_share_their_summary_rank():
    """Two methods with identical scores on the only board get one Bradley–Terry rank (not an order
    decided by the fit's rounding)."""
    same = noisy(0.3, seed=5)
    b = board_of({"a": same, "b": same.copy(), "c": noisy(0.8, seed=6), "random": noisy(2.0, seed=7)},
                 roles={"random": "control"})
    (s,) = track_summary([b])
    by = {r.submission: r for r in s.rows}
    assert by["a"].rank == by["b"].rank and by["a"].tied and by["b"].tied
    # the rule behind it: a difference at the fit's rounding level is no difference
    x = np.array([-1.6100000000001, 0.5, 2.0])
    assert stats.larger_share(x + 1e-12, x) == 0.0 and stats.larger_share(x + 1e-3, x) == 1.0
