"""The randomisation test on the boards (issue #45; Adebayo et al. 2018, Sanity Checks for Saliency Maps,
NeurIPS 2018): a method whose maps do not depend on the model ranks with the controls, and its score is a floor.

Constructed cases (Results built here from maps computed here), the rule's every branch and bad input, then the
two attacks of the issue and a fixed function of the input as real submissions on real (tiny) boards: the AIXI
function model and IDC; the RCNN and robustness boards are in tests/test_rcnn_track.py and
tests/test_robust_track.py (their fixtures)."""

from __future__ import annotations

import copy
import csv
import io
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmark.models.variants.randomise import RANDOM_SEED
from benchmark.store.results import pack_scores
from benchmark.runner import evaluate
from benchmark.variant_runs.similarity import compare
from leaderboard import render
from leaderboard.boards import boards
from leaderboard.randomisation import THRESHOLD
from tests.test_leaderboard import make_result

N = 40
SUBS = Path(__file__).parent / "submissions"


def noisy(mean: float, seed: int, sd: float = 0.05) -> np.ndarray:
    return mean + sd * np.random.default_rng(seed).standard_normal(N)


def trained(name: str, values: np.ndarray, role: str = "method", **kw):
    """A trained Result at the path a results folder would give it (nothing is written: `boards` pairs a row with
    the companion runs of its own folder, `leaderboard.companions`)."""
    r = make_result(name, values=values, role=role, **kw)
    r.integrity["outputs_sha256"] = f"{abs(hash(name)) % 16**8:08x}" * 8
    r.path = Path("/results") / r.track / str(r.resource["name"]).replace("/", "__") / r.model["name"] / f"{name}.json"
    return r


def randomised_of(r, values: np.ndarray, sims: np.ndarray, ok: np.ndarray | None = None, codes=None):
    """The randomised-model Result of `r`: the primary metric `values` on the randomised model, per-instance
    similarity `sims` (the same for each measure; NaN = not compared), `ok` the instances that did not fail."""
    out = copy.deepcopy(r)
    out.path = r.path.parent / f"randomised-s{RANDOM_SEED}" / r.path.name  # beside it, as the runner writes it
    out.model = {**r.model, "hash": "rand", "randomisation": {"seed": RANDOM_SEED, "variant": "full", "top": None,
                                                              "of": r.model["hash"]}}
    ok = np.ones(len(values), dtype=bool) if ok is None else ok
    scores = {r.primary_metric: np.where(ok, values, np.nan),
              **{k: np.asarray(sims, dtype=np.float64) for k in ("sim-spearman", "sim-spearman-signed", "sim-ssim")}}
    out.instance_scores = pack_scores([(0, scores, ok)])
    from benchmark.store.results import MetricSummary

    out.metrics = {**r.metrics, r.primary_metric: MetricSummary.from_scores(scores[r.primary_metric], "lower", "KL")}
    out.n_failed = int((~ok).sum())
    from benchmark.store.results import Failure

    out.failures = [Failure(f"i{k}", "ValueError: refuses this model") for k in np.flatnonzero(~ok)]
    out.extra = {"randomisation": {"seed": RANDOM_SEED, "trained_outputs_sha256": r.integrity["outputs_sha256"],
                                   "not_compared": codes or {}}}
    return out


def _board():
    """good (model-sensitive: its maps change, its KL gets worse), blind (its maps do not change), a control."""
    good = trained("good", noisy(0.3, 1))
    blind = trained("blind", noisy(0.2, 2))
    ctrl = trained("random", noisy(2.0, 3), role="control")
    rand = [randomised_of(good, noisy(1.5, 4), np.full(N, 0.1)), randomised_of(blind, blind.scores().arrays["kl"][0],
                                                                               np.ones(N)),
            randomised_of(ctrl, ctrl.scores().arrays["kl"][0], np.ones(N))]
    return [good, blind, ctrl], rand


def _row(board, name):
    return next(r for r in board.rows if r.submission == name)


def test_a_model_blind_method_is_shown_with_the_controls_and_never_sets_the_floor():
    rows, rand = _board()
    (b,) = boards(rows + rand)
    good, blind, ctrl = _row(b, "good"), _row(b, "blind"), _row(b, "random")
    assert good.rank == 1 and good.sanity.status == "model-sensitive" and "Δ kl" in good.sanity.reason
    assert blind.rank is None and blind.blind and blind.marker == "model-blind" and blind.role == "method"
    assert ctrl.sanity.blind and ctrl.marker == "control" and ctrl.builtin
    # the blind method scores better than the method (0.2 < 0.3), but floors come from built-ins only (issue #58):
    # the verdict compares the method with the built-in control, and the blind score is printed beside it
    assert b.verdict.control == "random" and b.verdict.status == "discriminates"
    assert b.submitted_prior.startswith("a submitted data prior reaches kl 0.2") and "(blind, model-blind)" in \
        b.submitted_prior and "the floor is the built-in random" in b.submitted_prior
    assert b.submitted_prior in render.to_markdown([b])
    assert [r.submission for r in b.rows] == ["blind", "good", "random"]  # it stands where its score puts it
    # without the randomisation test, the blind map would have been ranked first
    (plain,) = boards(rows)
    assert _row(plain, "blind").rank == 1 and _row(plain, "blind").sanity.status == "not run"
    assert _row(plain, "blind").sanity.unranked is False  # no randomised run here: ranked, and said so


def test_the_score_criterion_alone_makes_a_method_model_blind():
    """Maps that change (ρ 0.1) but score no worse on the randomised model: the map does not need the model."""
    good = trained("good", noisy(0.3, 1))
    ctrl = trained("random", noisy(2.0, 3), role="control")
    (b,) = boards([good, ctrl, randomised_of(good, noisy(0.3, 11), np.full(N, 0.1))])
    t = _row(b, "good").sanity
    assert t.blind and "not worse beyond the noise" in t.reason and "as similar" not in t.reason
    assert _row(b, "good").rank is None and b.verdict.status == "undefined"  # no method left to rank


def test_the_threshold_is_stated_and_an_option():
    good = trained("good", noisy(0.3, 1))
    ctrl = trained("random", noisy(2.0, 3), role="control")
    rs = [good, ctrl, randomised_of(good, noisy(1.5, 4), np.full(N, 0.6))]
    assert THRESHOLD == 0.5
    (b,) = boards(rs)
    assert _row(b, "good").blind and "0.600 ≥ 0.5" in _row(b, "good").sanity.reason
    (b,) = boards(rs, threshold=0.7)
    assert _row(b, "good").sanity.status == "model-sensitive" and _row(b, "good").rank == 1 and b.threshold == 0.7
    for bad in (1.5, -2, True, "0.5"):
        with pytest.raises(ValueError, match="threshold"):
            boards(rs, threshold=bad)


def test_the_linear_model_and_a_fixed_function_of_the_input():
    """The exact contribution map of a linear model, w ⊙ x, is model-sensitive; |x − mean x|, a fixed function of
    the input, is model-blind — maps computed here on a real torch model and its randomised copy (the project's
    randomisation), scored by the AIXI track's metrics against the trained model's contributions."""
    from benchmark.models.base import ImageModel
    from benchmark.models.variants.randomise import randomised
    from benchmark.tracks import get_track

    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 1))
    with torch.no_grad():
        lin[1].weight.copy_(torch.rand(1, 64) + 0.1)  # positive weights: the contributions are a distribution
    model = ImageModel(lin, name="linear", task="regression")
    shuffled = randomised(model)
    x = np.random.default_rng(0).uniform(0.1, 1.0, size=(N, 8, 8)).astype(np.float32)

    def contributions(m):
        return [(m.module[1].weight.detach().numpy().reshape(8, 8) * xi).astype(np.float32) for xi in x]

    truth = {"gt": np.stack(contributions(model))}
    trk = get_track("aixi")
    maps = {"linear-contributions": (contributions(model), contributions(shuffled)),
            "input-function": ([np.abs(xi - xi.mean()) for xi in x],) * 2}
    rows, rand = [], []
    for name, (on_trained, on_random) in maps.items():
        s_t = trk.score(on_trained, truth, list(range(N)))
        s_r = trk.score(on_random, truth, list(range(N)))
        r = trained(name, s_t["kl"])
        rows.append(r)
        rand.append(randomised_of(r, s_r["kl"], compare(on_trained, on_random, image=True).values["spearman-signed"]))
    rows.append(trained("random", noisy(5.0, 3), role="control"))
    (b,) = boards(rows + rand)
    lin_row, fixed = _row(b, "linear-contributions"), _row(b, "input-function")
    assert lin_row.sanity.status == "model-sensitive" and lin_row.rank == 1 and lin_row.sanity.value() < THRESHOLD
    assert fixed.sanity.blind and fixed.sanity.value() == pytest.approx(1.0) and fixed.rank is None


def test_not_run_outside_the_submission_keeps_the_rank_and_says_why():
    good = trained("good", noisy(0.3, 1))
    other = trained("other", noisy(0.6, 5))
    ctrl = trained("random", noisy(2.0, 3), role="control")
    stale = randomised_of(good, noisy(1.5, 4), np.full(N, 0.1))
    stale.extra["randomisation"]["trained_outputs_sha256"] = "f" * 64  # paired with other maps (an older Result)
    other.model["unrandomisable"] = "the model under test 'x' is a black box served by the harness"
    (b,) = boards([good, other, ctrl, stale])
    g, o = _row(b, "good"), _row(b, "other")
    assert g.rank == 1 and g.sanity.status == "not run" and "paired with other maps" in g.sanity.reason
    assert o.rank == 2 and o.sanity.status == "not run" and "black box" in o.sanity.reason
    text = render.to_markdown([b])
    assert "randomisation test not run: good — its randomised-model run was paired with other maps" in text
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(render.to_csv([b])))}
    assert rows["good"]["randomisation"] == "not run" and rows["good"]["randomisation_unranked"] == "false"


def test_a_failed_or_constant_randomised_run_is_not_run_and_not_ranked_and_nothing_else_changes():
    """An explainer that fails on the randomised model, or whose maps there are constant, cannot be compared:
    marked "randomisation test not run" with the reason, and not ranked (else failing there would be a way around
    the rule); the other rows keep their verdicts."""
    good = trained("good", noisy(0.3, 1))
    fails = trained("fails", noisy(0.25, 6))
    flat = trained("flat", noisy(0.28, 7))
    ctrl = trained("random", noisy(2.0, 3), role="control")
    none_ok = np.zeros(N, dtype=bool)
    rand = [randomised_of(good, noisy(1.5, 4), np.full(N, 0.1)),
            randomised_of(fails, noisy(0.25, 6), np.full(N, np.nan), ok=none_ok, codes={"failed-randomised": N}),
            randomised_of(flat, noisy(1.9, 8), np.full(N, np.nan), codes={"constant-randomised": N})]
    (b,) = boards([good, fails, flat, ctrl, *rand])
    f, c, g = _row(b, "fails"), _row(b, "flat"), _row(b, "good")
    assert f.rank is None and f.sanity.unranked and "failed-randomised 40" in f.sanity.reason
    assert "refuses this model" in f.sanity.reason
    assert c.rank is None and c.sanity.unranked and "constant-randomised 40" in c.sanity.reason
    assert g.rank == 1 and g.sanity.status == "model-sensitive"
    assert "fails (randomisation test not run; not ranked)" in render.to_markdown([b])
    # a randomised-model Result changed after it was written: the same
    tampered = copy.deepcopy(rand[0])
    tampered.status = "modified"
    (b,) = boards([good, ctrl, tampered])
    assert _row(b, "good").rank is None and "changed after it was written" in _row(b, "good").sanity.reason


def test_the_board_formats_show_the_verdict():
    rows, rand = _board()
    (b,) = boards(rows + rand)
    md = render.to_markdown([b])
    assert "| blind | — | blind (model-blind) |" in md
    assert "model-blind: blind — its maps on the randomised model are as similar as the threshold allows" in md
    assert "model-sensitive: good" in md and "ρ rand." in md
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(render.to_csv([b])))}
    assert rows["blind"]["randomisation"] == "model-blind" and rows["blind"]["rank"] == ""
    assert float(rows["good"]["rand_rho"]) == pytest.approx(0.1) and float(rows["good"]["rand_diff"]) > 0
    assert float(rows["good"]["rand_diff_ci_low"]) > 0 and rows["good"]["rand_seed"] == str(RANDOM_SEED)
    text = render.to_text([b], width=80)
    assert "blind" in text and "model-blind" in text and all(len(line) <= 80 for line in text.splitlines()[:8])


# --------------------------------------------------------------------------------------------------
# real submissions on real (tiny) boards

RUN = dict(limit=6, batch_size=6, sandbox="none", timeout_s=0)


def _evaluate(subs, results, floors=(), **where):
    """Each of `subs` on the trained and the randomised model; the built-in `floors` on the trained model only (a
    control is never judged by the test)."""
    for s in subs:
        evaluate(s, results_dir=results, **where, **RUN)
        evaluate(s, results_dir=results, randomised=True, **where, **RUN)
    for s in floors:
        evaluate(s, results_dir=results, **where, **RUN)


def _load(results):
    from benchmark.store.results import load_results

    found, problems = load_results(results)
    assert not problems
    return found


def test_the_foreground_mask_no_longer_ranks_on_the_function_model_and_the_built_ins_keep_their_ranks(home, tmp_path):
    """The issue's image attack (a foreground mask: the model is never called) ranked 2nd among methods; now it
    and a fixed function of the input rank with the controls, the built-in methods keep their ranks, and the
    attack's score is the floor they must beat."""
    res = tmp_path / "res"
    where = dict(track="aixi", resource="aixi/shape-ssin", model="function")
    _evaluate(["occlusion", "lime-image", "uniform", "centre-prior", SUBS / "foreground_mask",
               SUBS / "input_function"], res, floors=["foreground"], **where)
    found = _load(res)
    (b,) = boards(found)
    for name in ("foreground-mask", "input-function"):
        row = _row(b, name)
        assert row.blind and row.rank is None and row.sanity.value() == pytest.approx(1.0), row.sanity
    for name in ("occlusion", "lime-image"):
        assert _row(b, name).sanity.status == "model-sensitive", _row(b, name).sanity
    assert _row(b, "uniform").sanity.blind and _row(b, "centre-prior").sanity.blind
    before = {"occlusion", "lime-image", "uniform", "centre-prior", "foreground"}
    (plain,) = boards([r for r in found if r.submission["name"] in before and "randomisation" not in r.model])
    assert {r.submission: r.rank for r in plain.rows if r.role == "method"} == \
        {r.submission: r.rank for r in b.rows if r.submission in before and r.role == "method"}
    attacked = boards([r for r in found if "randomisation" not in r.model])[0]  # the attack before the rule
    assert _row(attacked, "foreground-mask").rank is not None
    # the floor is the built-in's (issue #58): the attack's score is printed beside it, never the floor
    assert b.verdict.best == "lime-image" and b.verdict.control == "foreground"
    assert "a submitted data prior reaches" in b.submitted_prior


def test_the_sentiment_lexicon_no_longer_ranks_on_idc(idc_home, monkeypatch, tmp_path):
    """The issue's text attack (a sentiment lexicon of the public corpus, the model never called) and a fixed
    function of the input rank with the controls on a text board with ground truth."""
    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    res = tmp_path / "res"
    _evaluate([SUBS / "sentiment_lexicon", SUBS / "input_function", "uniform", "position", "random"], res,
              track="idc", resource="idc/mr-wga", model="cnn")
    (b,) = boards(_load(res))
    for name in ("sentiment-lexicon", "input-function"):
        row = _row(b, name)
        assert row.blind and row.rank is None and row.marker == "model-blind", row.sanity
        assert "as similar as the threshold allows" in row.sanity.reason
    for name in ("uniform", "position", "random"):  # the text controls are model-blind too
        assert _row(b, name).sanity.blind and _row(b, name).marker == "control", _row(b, name).sanity


def test_an_explainer_that_fails_on_the_randomised_model_is_not_ranked(home, tmp_path):
    """Bad input, for real: an explainer that refuses a model whose output is negative — the trained AIXI
    function never is, its randomised copy (pattern weights redrawn from U(−1, 1)) often is — fails on the
    randomised model. The board says which and why, marks it "randomisation test not run" and does not rank
    it (failing there must not be a way around the rule); the other rows keep their verdicts."""
    from tests.conftest import write_submission

    body = ("out = []\n"
            "for x in batch.inputs:\n"
            "    if float(model.predict(np.asarray([x]))[0, 0]) < 0:\n"
            "        raise ValueError('a negative output: not a model this explainer explains')\n"
            "    out.append(np.abs(np.asarray(x, dtype=np.float32) - 0.5))\n"
            "return out\n")
    picky = write_submission(tmp_path / "picky", "picky", body)
    res = tmp_path / "res"
    _evaluate([picky, "occlusion", "uniform"], res, floors=["foreground", "centre-prior"], track="aixi",
              resource="aixi/shape-ssin", model="function")
    (b,) = boards(_load(res))
    row = _row(b, "picky")
    assert row.rank is None and row.sanity.status == "not run" and row.sanity.unranked, row.sanity
    assert "failed-randomised" in row.sanity.reason and "a negative output" in row.sanity.reason
    assert _row(b, "occlusion").rank == 1 and _row(b, "occlusion").sanity.status == "model-sensitive"
    assert "randomisation test not run: picky —" in render.to_markdown([b])
