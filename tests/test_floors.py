"""Floors the board computes, not floors anyone uploads (issue #58; `leaderboard.floors`).

Boards built here from Results as the runner writes them (per-instance scores the board resamples; hidden-copy and
randomised-model runs beside their row, as `leaderboard.companions` pairs them), on the AIXI function model's board:
its floors are the built-in data priors `foreground` and `centre-prior` on the published model, and those and the
built-in `published-truth` on its hidden copies (`model.assets` records what the board offers). A built-in is
recognised by its code hash (`tests.test_leaderboard.make_result` gives a built-in's name its installed hash).

What must hold: uploading a strong model-blind submission — or a control that is not a built-in, or one under a
built-in's name with other code — changes no other row's rank or ranked status, and a board without submitted data
priors has the floor of one with many; a built-in floor that is missing says which and why in one line and the
board is unranked; a method below the floor on one board of two does not rank first overall on the other alone;
a method whose maps are constant on most instances is judged by the randomisation test, never left unjudged."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from benchmark.models.variants.randomise import RANDOM_SEED
from benchmark.store.results import MetricSummary, coverage_of, pack_scores
from benchmark.variant_runs.randomisation import CONSTANT_KEY
from leaderboard import floors, render
from leaderboard.boards import boards
from leaderboard.hidden import BEAT_PRIOR
from leaderboard.summaries import overall
from tests.test_leaderboard import make_result

N = 40  # instances on the published model
H = 30  # instances per hidden copy
WHERE = dict(track="aixi", resource="aixi/shape-ssin", model="function")
OFFER = ["published-truth"]  # what an AIXI board offers (`benchmark.runner.board_assets`): no lexicon


def noisy(mean: float, seed: int, n: int = N, sd: float = 0.05) -> np.ndarray:
    return mean + sd * np.random.default_rng(seed).standard_normal(n)


def published(name: str, mean: float, seed: int, role: str = "method", where: dict = WHERE, assets=OFFER, **kw):
    """A Result on the published model at the path a results folder gives it; `assets`: what its board offers
    (None: not recorded, a Result written before issue #58)."""
    r = make_result(name, values=noisy(mean, seed), role=role, **where, **kw)
    r.model.update({"white_box": False, "segments": True})
    if assets is not None:
        r.model["assets"] = list(assets)
    r.integrity["outputs_sha256"] = f"{abs(hash(name)) % 16**8:08x}" * 8
    r.path = (Path("/results") / r.track / str(r.resource["name"]).replace("/", "__") / str(r.model["name"])
              / f"{name}.json")
    return r


def on_copy(r, mean: float, draw: int, seed: int, rnd: str = "r1"):
    """`r`'s run on hidden copy `draw` of round `rnd`: `H` instances of the copy, primary metric around `mean`."""
    out = copy.deepcopy(r)
    values = noisy(mean, seed, H)
    out.instance_scores = pack_scores([(0, {r.primary_metric: values}, np.ones(H, dtype=bool))])
    out.metrics = {r.primary_metric: MetricSummary.from_scores(values, "lower", "KL")}
    out.n_instances = H
    out.coverage = coverage_of([f"copy{draw}:{k}" for k in range(H)], H, None)
    out.model = {**r.model, "hash": f"copy{draw}", "hidden": {"round": rnd, "draw": draw, "commitment": "c" * 64,
                                                             "construction": "drawn weights (test)"}}
    out.extra = {"hidden": {"trained_result": Path(r.path).name}}
    out.path = Path(r.path).parent / f"hidden-{rnd}" / f"d{draw}" / Path(r.path).name
    return out


def randomised(r, sims: np.ndarray, values: np.ndarray | None = None, constant: np.ndarray | None = None):
    """`r`'s run on the randomised model: per-instance similarity `sims` (NaN: not compared), the primary metric
    `values` there (default: the trained run's, i.e. not worse), and which maps were constant (`CONSTANT_KEY`)."""
    out = copy.deepcopy(r)
    out.path = Path(r.path).parent / f"randomised-s{RANDOM_SEED}" / Path(r.path).name
    out.model = {**r.model, "hash": "rand", "randomisation": {"seed": RANDOM_SEED, "variant": "full", "top": None,
                                                              "of": r.model["hash"]}}
    values = r.scores().arrays[r.primary_metric][0] if values is None else values
    arrays = {r.primary_metric: values, **{k: np.asarray(sims, dtype=np.float64)
                                           for k in ("sim-spearman", "sim-spearman-signed", "sim-ssim")}}
    if constant is not None:
        arrays[CONSTANT_KEY] = np.asarray(constant, dtype=np.float64)
    out.instance_scores = pack_scores([(0, arrays, np.ones(len(values), dtype=bool))])
    out.metrics = {r.primary_metric: MetricSummary.from_scores(values, "lower", "KL")}
    out.extra = {"randomisation": {"seed": RANDOM_SEED, "trained_outputs_sha256": r.integrity["outputs_sha256"],
                                   "not_compared": {}}}
    return out


def _with_copies(rows: list, hidden: dict[str, float], draws: int = 2) -> list:
    """`rows` and each named row's runs on `draws` hidden copies (its mean there from `hidden`)."""
    out = list(rows)
    for k, r in enumerate(rows):
        name = str(r.submission["name"])
        if name in hidden:
            out += [on_copy(r, hidden[name], d, 100 * k + d) for d in range(draws)]
    return out


def honest_board() -> list:
    """Two methods that beat every floor on the copies, one that does not; the built-in floors all run."""
    rows = [published("ig", 0.30, 1), published("ixg", 0.32, 2), published("occlusion", 0.40, 3),
            published("foreground", 0.35, 4, role="control"), published("centre-prior", 2.0, 5, role="control"),
            published("uniform", 3.0, 6, role="control"), published("published-truth", 0.0, 7, role="reference")]
    return _with_copies(rows, {"ig": 0.40, "ixg": 0.42, "occlusion": 0.90, "foreground": 0.80, "centre-prior": 2.5,
                               "uniform": 3.2, "published-truth": 0.70})


def answers(rows: list) -> list:
    """The issue's attack, uploaded: a method that returns the published answers (best on the published model and on
    the copies), found model-blind — its maps do not change on the randomised model."""
    a = published("answers-plus-probe", 0.01, 11)
    return _with_copies([a], {"answers-plus-probe": 0.20}) + [randomised(a, np.ones(N))] + rows


def submitted_priors(rows: list) -> list:
    """More uploaded data priors: a control that is not a built-in (declaring data_prior), and a control under a
    built-in's name with other code."""
    mine = published("my-prior", 0.05, 12, role="control")
    mine.submission["capabilities"] = {"modalities": ["image"], "data_prior": True}
    fake = published("centre-prior", 0.02, 13, role="control")
    fake.submission["hash"] = "0" * 16  # the built-in's name, other code
    fake.path = fake.path.with_name("centre-prior-fake.json")
    fake.created = "2026-01-01T00:00:00+00:00"  # newer than the built-in's: still the built-in's row is the board's
    return _with_copies([mine, fake], {"my-prior": 0.10, "centre-prior": 0.05}) + rows


def _status(b) -> dict[str, tuple]:
    return {r.submission: (r.rank, r.tied, r.public_rank, r.lost) for r in b.rows
            if r.submission not in ("answers-plus-probe", "my-prior")}


def _row(b, name):
    return next(r for r in b.rows if r.submission == name)


def test_the_built_ins_are_recognised_by_their_code_and_the_board_needs_every_data_prior_it_can_enter():
    fg = published("foreground", 0.3, 1, role="control")
    assert floors.builtin_of(fg).name == "foreground" and floors.is_floor(fg, "published")
    other = copy.deepcopy(fg)
    other.submission["hash"] = "0" * 16
    assert floors.builtin_of(other) is None  # a built-in's name with other code is no built-in
    pt = published("published-truth", 0.0, 2, role="reference")
    assert not floors.is_floor(pt, "published") and floors.is_floor(pt, "hidden")
    offer = floors.offer_of([fg], "explainer", "image", False, True)
    assert floors.needed(offer, "published") == ["centre-prior", "foreground"]
    assert floors.needed(offer, "hidden") == ["centre-prior", "foreground", "published-truth"]
    text = floors.offer_of([published("x", 0.3, 1, assets=["lexicon", "published-truth"])], "explainer", "text",
                           True, False)
    assert floors.needed(text, "hidden") == ["corpus-lexicon", "predicted-class-lexicon", "published-truth"]
    # a Result written before boards recorded their assets names no requirement
    assert floors.needed(floors.offer_of([published("x", 0.3, 1, assets=None)], "explainer", "image", False, True),
                         "hidden") == []


def test_uploading_a_strong_model_blind_submission_changes_no_other_row():
    (before,) = boards(honest_board())
    # the copies' floor: the published ground truth (a reference on the published model, whose floor is foreground)
    assert before.hidden is not None and before.hidden.floor == "published-truth" and not before.unranked
    assert before.public_verdict.control == "foreground"
    assert _row(before, "ig").rank == 1 and _row(before, "occlusion").rank is None
    assert _row(before, "occlusion").hidden.reason.startswith(BEAT_PRIOR)
    (after,) = boards(answers(honest_board()))
    attack = _row(after, "answers-plus-probe")
    assert attack.blind and attack.rank is None and attack.marker == "model-blind"
    assert _status(after) == _status(before)  # no other row's rank, tie, public rank or standing moved
    assert after.hidden.floor == "published-truth" and after.verdict.control == before.verdict.control
    assert (after.verdict.status, after.verdict.diff) == (before.verdict.status, before.verdict.diff)
    # its score is printed beside the floor, on the copies and on the published model
    line = next(n for n in after.hidden.notes if n.startswith("a submitted data prior reaches"))
    assert "(answers-plus-probe, model-blind)" in line and "the floor is the built-in published-truth" in line
    assert "on the published model" in after.submitted_prior and line in render.to_text([after], width=400)


def test_a_board_without_submitted_priors_has_the_floor_of_one_with_many():
    (few,) = boards(honest_board())
    (many,) = boards(submitted_priors(answers(honest_board())))
    assert _status(many) == _status(few)
    assert many.hidden.floor == few.hidden.floor == "published-truth"
    assert many.verdict.control == few.verdict.control and many.verdict.diff == few.verdict.diff
    assert many.public_verdict.control == few.public_verdict.control == "foreground"
    assert _row(many, "my-prior").marker == "submitted control" and not _row(many, "my-prior").builtin
    assert "submission 'centre-prior': left out a Result under a built-in's name with other code" in \
        " ".join(many.warnings)  # the look-alike, newer, dropped


def test_a_built_in_floor_that_is_missing_unranks_the_board_in_one_line_and_never_falls_back():
    rows = [r for r in honest_board() if r.submission["name"] != "foreground"]
    (b,) = boards(rows)
    assert b.lacking == ["foreground"] and "foreground: not run" in b.unranked and b.unranked.count("\n") == 0
    assert all(r.public_rank is None for r in b.rows if r.role == "method")
    assert b.hidden.lacking == ["foreground"] and b.hidden.floor is None and b.verdict.status == "undefined"
    assert all(r.rank is None for r in b.rows) and "xaibench evaluate NAME --track aixi" in b.unranked
    assert "foreground: not run" in b.verdict.reason
    # an uploaded look-alike of the floor (its name, other code) is no floor: the board stays unranked, and says why
    fake = published("foreground", 0.01, 9, role="control")
    fake.submission["hash"] = "0" * 16
    (b,) = boards(rows + _with_copies([fake], {"foreground": 0.05}))
    assert "foreground: its Result here was run with other code" in b.unranked
    assert all(r.rank is None for r in b.rows) and _row(b, "foreground").marker == "submitted control"
    # the published ground truth not run on the copies: the copies are unranked, the published board is not
    rows = [r for r in honest_board() if not (r.submission["name"] == "published-truth" and "hidden" in r.model)]
    (b,) = boards(rows)
    assert not b.unranked and b.hidden.lacking == ["published-truth"]
    assert "published-truth: no run on the hidden copies of round r1" in b.verdict.reason
    # a floor that failed on every instance says so
    rows = honest_board()
    fg = next(r for r in rows if r.submission["name"] == "foreground" and "hidden" not in r.model)
    fg.instance_scores = pack_scores([(0, {"kl": np.full(N, np.nan)}, np.zeros(N, dtype=bool))])
    fg.metrics = {"kl": MetricSummary(None, None, None, 0, 0, "lower", "KL")}
    (b,) = boards(rows)
    assert "foreground: it has no kl here: it failed on every instance" in b.unranked
    # Results written before boards recorded their assets need no data prior: a built-in control floors the board
    old = [published("ig", 0.3, 1, assets=None), published("uniform", 3.0, 6, role="control", assets=None)]
    (b,) = boards(old)
    assert not b.unranked and _row(b, "ig").rank == 1


def test_a_method_below_the_floor_on_one_board_of_two_does_not_rank_first_on_the_other_alone():
    """The issue's run: occlusion, 3rd on the published IDC model, was below the (uploaded) floor on its copies and
    not ranked there; the overall table ranked it 1st with 1/2 boards, its comparisons there gone. A board it lost
    on counts now: below every ranked method there."""
    other = dict(track="aixi", resource="aixi/color-ssin", model="function")
    plain = [published("occlusion", 0.10, 21, where=other), published("ixg", 0.30, 22, where=other),
             published("ig", 0.50, 23, where=other), published("uniform", 3.0, 24, role="control", where=other),
             published("foreground", 0.8, 25, role="control", where=other),
             published("centre-prior", 2.0, 26, role="control", where=other)]
    bs = boards(honest_board() + plain)
    lost = next(r for b in bs for r in b.rows if r.submission == "occlusion" and r.lost)
    assert lost.lost == "below the floor on the hidden copies"
    assert all(b.verdict.discriminates for b in bs)
    table = {r.submission: r for r in overall(bs)}
    occ, ixg = table["occlusion"], table["ixg"]
    assert occ.entered == ixg.entered == 2  # the board it lost on counts as entered
    assert occ.parts["aixi · aixi/shape-ssin · function"] == float("inf")
    # each pair of methods won once: occlusion beats both on one board and loses to both on the other — it is not
    # first on that board alone (before, its loss vanished: 2 wins of 2)
    assert occ.wins == ixg.wins == 0.5 and occ.strength == pytest.approx(ixg.strength, abs=1e-6)
    assert not (occ.rank == 1 and not occ.tied)


def test_constant_maps_are_judged_not_skipped():
    """A method whose maps are constant (no ranking) on most instances of both models — a prober that marks words
    only where its public candidates occur — did not react to the model there: model-blind, shown with the
    controls, on every board (issue #58: it stayed unranked only because its test "could not run"). Constant on the
    randomised model only, the map did react: judged model-sensitive on the instances that compare."""
    base = honest_board()
    prober = published("prober", 0.29, 31)
    sensitive = published("sensitive", 0.31, 32)
    constant = np.where(np.arange(N) < 29, 3.0, 0.0)  # 29 of 40 instances constant on both models
    sims = np.where(constant == 3, np.nan, 0.05)
    rand = [randomised(prober, sims, noisy(2.0, 33), constant),
            randomised(sensitive, np.full(N, np.nan), noisy(2.0, 34), np.full(N, 2.0))]  # constant on the copy only
    (b,) = boards(base + _with_copies([prober, sensitive], {"prober": 0.39, "sensitive": 0.41}) + rand)
    p, s = _row(b, "prober"), _row(b, "sensitive")
    assert p.blind and p.rank is None and p.sanity.compared == N and p.sanity.constant == 29, p.sanity
    assert "29 of them constant on both models" in p.sanity.reason and p.lost == "model-blind"
    assert s.sanity.status == "model-sensitive" and s.sanity.value() == 0.0 and s.rank is not None, s.sanity
    # a randomised run written before constant maps were recorded: not judged, not ranked, told to run again
    old = randomised(prober, sims, noisy(2.0, 33))
    old.extra["randomisation"]["not_compared"] = {"constant-trained": 29}
    (b,) = boards(base + _with_copies([prober], {"prober": 0.39}) + [old])
    p = _row(b, "prober")
    assert p.rank is None and p.sanity.unranked and "written before constant maps were judged" in p.sanity.reason
    assert p.lost == "its own randomised run could not be judged"


@pytest.mark.parametrize("n", [1, 5])
def test_the_similarity_records_which_map_is_constant(n):
    from benchmark.variant_runs.similarity import compare

    ramp = np.arange(5, dtype=np.float32)
    flat = np.zeros(5, dtype=np.float32)
    c = compare([ramp, flat, flat, ramp[:n], None], [flat, flat, ramp, ramp[:n], ramp], image=False)
    assert c.constant[:3].tolist() == [2.0, 3.0, 1.0] and np.isnan(c.constant[4])
    assert (np.isnan(c.constant[3]) if n == 1 else c.constant[3] == 0.0)  # a one-feature map is constant on any model
    assert c.codes[:3] == ["constant-randomised", "constant-trained", "constant-trained"]


# --------------------------------------------------------------------------------------------------
# for real, on the tiny AIXI resource: the published ground truth goes to the built-in alone; the leaderboard runs
# the floors a board misses, and says why where it cannot

AIXI = dict(track="aixi", resource="aixi/shape-ssin", model="function", batch_size=4, timeout_s=0)


@pytest.mark.slow(reason="five evaluations in a worker on the tiny AIXI resource, one on a hidden copy")
def test_the_published_ground_truth_is_handed_to_the_built_in_alone(home, tmp_path):
    import os

    from benchmark.errors import SubmissionError
    from benchmark.published_truth import ASSET
    from benchmark.runner import evaluate
    from tests.conftest import write_submission

    res = tmp_path / "res"
    r = evaluate("published-truth", **AIXI, limit=4, results_dir=res)
    assert r.metrics["kl"].mean == pytest.approx(0.0, abs=1e-6) and r.n_failed == 0  # the answers themselves
    assert r.submission["role"] == "reference" and r.model["assets"] == [ASSET]
    assert r.submission["capabilities"]["needs_assets"] == [ASSET] and r.submission["capabilities"]["data_prior"]
    folder = home / "assets" / ASSET / "aixi" / "aixi__shape-ssin"
    assert len(list(folder.glob("*/validation/truth.json"))) == 1  # written once, under the data home
    h = evaluate("published-truth", **AIXI, limit=4, results_dir=res, hidden=0, hidden_limit=4)
    assert h.metrics["kl"].mean > 1e-3  # on a copy, the published answers are a prior, not the answer
    # the same code under another name is another code: refused before anything runs, in one line
    mine = tmp_path / "my_truth"
    mine.mkdir()
    from benchmark.submission import builtins

    src = builtins()[ASSET].path
    (mine / "explainer.py").write_text((src / "explainer.py").read_text())
    (mine / "submission.toml").write_text((src / "submission.toml").read_text().replace(
        'name = "published-truth"', 'name = "my-truth"'))
    with pytest.raises(SubmissionError, match="handed to the built-in published-truth alone"):
        evaluate(mine, **AIXI, limit=4, results_dir=res)
    # a submission that does not ask for it never sees it (its worker fails where the answers are mounted)
    peek = write_submission(tmp_path / "peek", "peek", "import os\nif os.environ.get('XAIBENCH_ASSET_PUBLISHED_TRUTH'):"
                            "\n    raise RuntimeError('saw the answers')\nreturn [np.ones(x.shape, np.float32) for x "
                            "in batch.inputs]\n")
    got = evaluate(peek, **AIXI, limit=4, results_dir=res)
    assert got.n_failed == 0 and got.model["assets"] == [ASSET]
    assert "XAIBENCH_ASSET_PUBLISHED_TRUTH" not in os.environ


@pytest.mark.slow(reason="four evaluations in a worker on the tiny AIXI resource and three leaderboard commands")
def test_the_leaderboard_runs_the_floors_a_board_misses_and_says_why_where_it_cannot(home, tmp_path):
    import csv
    import io

    from typer.testing import CliRunner

    import typer

    import leaderboard.cli
    from benchmark.runner import evaluate

    res = tmp_path / "res"
    for sub in ("occlusion", "uniform"):
        evaluate(sub, **AIXI, limit=4, results_dir=res)
    app = typer.Typer()
    leaderboard.cli.register(app)
    app.command("noop", hidden=True)(lambda: None)  # a second command keeps typer in multi-command mode
    cmd = ["leaderboard", "--results", str(res), "--format", "csv"]
    out = CliRunner().invoke(app, cmd + ["--no-run-floors"])
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    assert rows["occlusion"]["rank"] == "" and "centre-prior: not run; foreground: not run" in \
        rows["occlusion"]["board_unranked"]
    out = CliRunner().invoke(app, cmd)
    assert out.exit_code == 0, out.output
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    assert {"foreground", "centre-prior"} <= set(rows) and rows["occlusion"]["board_unranked"] == ""
    assert rows["occlusion"]["rank"] == "1" and "running the built-in floor foreground" in out.stderr
    # a board whose resource is not built here at its revision: one line, and the board is unranked with the reason
    other = tmp_path / "other"
    for r in (published("ig", 0.3, 1), published("uniform", 3.0, 2, role="control")):
        r.resource["revision"] = "0123456789abcdef"
        r.save(other / f"{r.submission['name']}.json")
    out = CliRunner().invoke(app, ["leaderboard", "--results", str(other), "--format", "csv"])
    assert "cannot run here: the resource is not built at revision 0123456789ab" in out.stderr
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    assert rows["ig"]["rank"] == "" and "foreground: not run" in rows["ig"]["board_unranked"]


def test_the_published_ground_truth_of_idc_is_the_whole_gt_column_and_the_map_reads_it(idc_home, monkeypatch):
    """IDC's published answers are the test split's `gt` column — every document's, the ones the published CNN
    misclassifies included (a copy evaluates those it classifies correctly) —, written once as the asset, and the
    built-in returns each document's flags, cut or padded to its length (no worker: its class, on the asset)."""
    import importlib.util

    from benchmark import published_truth
    from benchmark.contracts import Batch
    from benchmark.resources import load_resource
    from benchmark.submission import builtins
    from benchmark.tracks import get_track

    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    trk, res = get_track("idc"), load_resource("idc/mr-wga")
    table = res.table("test", columns=["id", "gt"]).to_pydict()
    ids, maps = trk.truth_maps(res, "test")
    assert ids == [str(i) for i in table["id"]] and len(ids) > len(trk.instances(res, "test").ids)
    folder = published_truth.asset(trk, res, "test")[published_truth.ASSET]
    assert published_truth.asset(trk, res, "test")[published_truth.ASSET] == folder  # written once
    path = builtins()[published_truth.ASSET].path / "explainer.py"
    spec = importlib.util.spec_from_file_location("published_truth_explainer", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv(mod.ENV, str(folder))
    docs = [["w"] * len(maps[0]), ["w"] * (len(maps[1]) + 3), ["w"] * 2]
    out = mod.PublishedTruthExplainer().explain(type("M", (), {"modality": "text"})(),
                                                Batch(ids=[ids[0], ids[1], "not-a-document"], inputs=docs))
    assert np.array_equal(out[0], maps[0]) and np.array_equal(out[1][: len(maps[1])], maps[1])
    assert not out[1][len(maps[1]):].any() and out[2].tolist() == [0.0, 0.0]


@pytest.mark.slow(reason="published-truth through the runner on the tiny IDC WGA and MILP boards (one model, one text "
                         "set)")
def test_published_truth_on_boards_that_share_inputs_keeps_a_cache_per_ground_truth(idc_home, monkeypatch, tmp_path):
    """IDC's WGA and MILP boards share the CNN and the test documents (one inputs key: explanations computed once),
    but hand `published-truth` different answers: each gets a cache of its own (`runner.cache_inputs`), where the
    second board's run was refused ("cache … was made for a different assets") and the reference build lost it; the
    repository's check accepts the name; a submission that reads no asset keeps the shared name."""
    import json as _json

    from benchmark.runner import evaluate
    from benchmark.submission import discover
    from leaderboard.repository.contents import check_result
    from leaderboard.repository.layout import result_path_of
    from leaderboard.repository.validate import _Context

    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    kw = dict(track="idc", model="cnn", results_dir=tmp_path, sandbox="none", timeout_s=0)
    runs = {c: evaluate("published-truth", resource=f"idc/mr-{c}", **kw) for c in ("wga", "milp")}
    assert all(r.n_failed == 0 for r in runs.values())
    caches = {c: r.extra["cache"] for c, r in runs.items()}
    assert caches["wga"] != caches["milp"] and all(".assets-" in c for c in caches.values())
    assert all(r.metrics[r.primary_metric].mean == 1.0 for r in runs.values())  # each board's own answers
    sub = discover()["published-truth"]
    for r in runs.values():
        assert check_result(_json.loads(Path(r.path).read_text()), result_path_of(r), sub, _Context()) == []
    plain = evaluate("uniform", resource="idc/mr-wga", **{**kw, "limit": 5})
    assert ".assets-" not in plain.extra["cache"]


def test_the_rcnn_published_labels_as_a_map_rank_every_sr_token_before_every_n_token():
    from benchmark.metrics.zero_contribution import N, SDK, SR, zero_contribution_errors

    labels = [np.array([N, SR, SDK, N, SR, N], dtype=np.int8), np.array([SR, N, N], dtype=np.int8)]
    for ties in ("position", "pessimistic"):
        errors = zero_contribution_errors([x.astype(np.float32) for x in labels], labels, ties, "signed")
        assert all(float(np.nansum(v)) == 0.0 for v in errors.values()), (ties, errors)
