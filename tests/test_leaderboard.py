"""Leaderboard: ranking, revision handling, summaries, renderers and the CLI command."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

import leaderboard.cli
from benchmark.errors import XaibenchError
import numpy as np

from benchmark.store.results import Failure, MetricSummary, Result, coverage_of, pack_scores
from leaderboard import render
from leaderboard.boards import boards
from leaderboard.floors import code_hash
from leaderboard.ranks import competition_ranks
from leaderboard.site import one_page
from leaderboard.summaries import overall, track_summary


def metric(mean, direction="lower", label="", half=0.01, n=10, excluded=0) -> MetricSummary:
    if mean is None:
        return MetricSummary(None, None, None, 0, excluded, direction, label)
    return MetricSummary(mean, 0.1, (mean - half, mean + half), n, excluded, direction, label)


def make_result(
    name="sub",
    *,
    version="1.0",
    track="aixi",
    resource="aixi/shape-ssin",
    revision="rev-a",
    resource_version="1",
    model="cnn",
    metrics=None,
    primary="kl",
    n_instances=10,
    n_failed=0,
    created="2025-01-01T00:00:00+00:00",
    wall=1.5,
    split_size=None,
    limit=None,
    status="signed",
    role="method",
    values=None,
) -> Result:
    """A Result as the runner makes it: covering the first `n_instances` ids of a split of `split_size`
    (default: the whole split). `status` stands for what `Result.load` would have found. `values`:
    per-instance values of the primary metric (or {metric: values}), recorded as `instance_scores` so
    the board can resample them (their means become the metric means). A control or reference named after a
    built-in carries the built-in's code hash, as the runner records it (only a built-in's code sets a floor,
    `leaderboard.floors`)."""
    if metrics is None:
        metrics = {"kl": metric(0.5, "lower", "KL")}
    instance_scores = {}
    if values is not None:
        per = values if isinstance(values, dict) else {primary: values}
        per = {k: np.asarray(v, dtype=np.float64) for k, v in per.items()}
        n_instances = len(next(iter(per.values())))
        metrics = dict(metrics)
        for k, v in per.items():
            old = metrics.get(k)
            d = old.direction if old else "lower"
            metrics[k] = MetricSummary.from_scores(v, d, old.label if old else k)
        instance_scores = pack_scores([(0, per, np.ones(n_instances, dtype=bool))])
    ids = [f"{resource}:{k}" for k in range(n_instances)]
    r = Result(
        submission={"name": name, "version": version,
                    "hash": (role != "method" and code_hash(name)) or f"h-{name}-{version}", "parameters": {},
                    "kind": "explainer", "role": role},
        track=track,
        resource={"name": resource, "version": resource_version, "revision": revision, "split": "test"},
        model={"name": model, "hash": "m", "task": "classification"},
        metrics=metrics,
        n_instances=n_instances,
        n_failed=n_failed,
        failures=[Failure(f"i{k}", "non-finite output") for k in range(n_failed)],
        wall_time_s=wall,
        provenance={},
        primary_metric=primary,
        created=created,
        coverage=coverage_of(ids, n_instances if split_size is None else split_size, limit),
        instance_scores=instance_scores,
    )
    r.status = status
    return r


def ranked(board) -> list[tuple[int, str]]:
    """(rank, submission) of every row but the controls (the floor rows `floored` adds)."""
    return [(row.rank, row.submission) for row in board.rows if row.role != "control"]


def floored(results: list[Result]) -> list[Result]:
    """`results` plus, for every board among them without a control, the built-in control `uniform` scoring worse
    than every result on every metric: a board is ranked only when its floor is on it (issue #36)."""
    from collections import Counter, defaultdict

    groups: dict = defaultdict(list)
    for r in results:
        groups[(r.track, r.resource["name"], r.model["name"], r.resource["revision"])].append(r)
    out = list(results)
    for (track, resource, model, revision), rs in groups.items():
        if any(r.submission.get("role") == "control" for r in rs):
            continue
        sizes = Counter(r.n_instances for r in rs)  # the coverage most of them ran on (ties: the larger)
        first = next(r for r in rs if r.n_instances == max(sizes, key=lambda k: (sizes[k], k)))
        worst = {}
        for name, m in first.metrics.items():
            vals = [r.metrics[name].mean for r in rs if name in r.metrics and r.metrics[name].mean is not None]
            worst[name] = (max(vals, default=0.0) + 1.0) if m.direction == "lower" else (min(vals, default=0.0) - 1.0)
        kw = dict(track=track, resource=resource, model=model, revision=revision, primary=first.primary_metric,
                  role="control", created=first.created, resource_version=first.resource.get("version", "1"),
                  n_instances=first.n_instances)
        if first.instance_scores:
            n = first.n_instances
            out.append(make_result("uniform", metrics=dict(first.metrics),
                                   values={k: np.full(n, v) for k, v in worst.items()}, **kw))
        else:
            out.append(make_result("uniform", metrics={k: metric(v, first.metrics[k].direction, first.metrics[k].label)
                                                     for k, v in worst.items()}, **kw))
    return out


# --------------------------------------------------------------------------------------------------
# ranking


def test_lower_is_better_ranks_smaller_mean_first():
    rs = [make_result(n, metrics={"kl": metric(m, "lower")}) for n, m in [("a", 0.3), ("b", 0.1), ("c", 0.2)]]
    (board,) = boards(floored(rs))
    assert board.direction == "lower"
    assert ranked(board) == [(1, "b"), (2, "c"), (3, "a")]


def test_higher_is_better_ranks_larger_mean_first():
    rs = [
        make_result(n, metrics={"acc": metric(m, "higher")}, primary="acc")
        for n, m in [("a", 0.3), ("b", 0.1), ("c", 0.2)]
    ]
    (board,) = boards(floored(rs))
    assert ranked(board) == [(1, "a"), (2, "c"), (3, "b")]


def test_ties_share_a_rank_competition_style():
    rs = [make_result(n, metrics={"kl": metric(m)}) for n, m in [("a", 0.2), ("b", 0.1), ("c", 0.1), ("d", 0.3)]]
    (board,) = boards(floored(rs))
    assert ranked(board) == [(1, "b"), (1, "c"), (3, "a"), (4, "d")]
    assert competition_ranks([0.1 + 0.2, 0.3], "lower") == [1, 1]  # float noise does not break a tie


def test_all_failed_submission_ranks_last():
    rs = [
        make_result("dead", metrics={"kl": metric(None)}, n_failed=10),
        make_result("slow", metrics={"kl": metric(9.0)}),
        make_result("good", metrics={"kl": metric(0.1)}),
    ]
    (board,) = boards(floored(rs))
    assert ranked(board) == [(1, "good"), (2, "slow"), (3, "dead")]
    # also last when higher is better
    rs = [
        make_result("dead", metrics={"acc": metric(None, "higher")}, primary="acc", n_failed=10),
        make_result("weak", metrics={"acc": metric(-5.0, "higher")}, primary="acc"),
    ]
    assert ranked(boards(floored(rs))[0]) == [(1, "weak"), (2, "dead")]


def test_one_board_per_track_resource_model():
    rs = [
        make_result("a", model="cnn"),
        make_result("a", model="mlp"),
        make_result("a", resource="aixi/color-ssin"),
        make_result("a", track="trust", resource="trust/hatexplain-lime", metrics={"f1": metric(0.5, "higher")},
                    primary="f1"),
    ]
    keys = [b.key for b in boards(rs)]
    assert keys == [
        ("aixi", "aixi/color-ssin", "cnn"),
        ("aixi", "aixi/shape-ssin", "cnn"),
        ("aixi", "aixi/shape-ssin", "mlp"),
        ("trust", "trust/hatexplain-lime", "cnn"),
    ]


def test_summaries_count_only_boards_that_discriminate_and_compare_shared_boards():
    # board cnn (kl, lower): a < b < c, all far above the random control  -> discriminates
    # board mlp: b < a, random control                                      -> discriminates
    # board trust/x: one method, no control                                 -> undefined, left out
    rng = np.random.default_rng(0)

    def v(m):
        return m + 0.05 * rng.standard_normal(50)

    rs = [
        make_result("a", values=v(0.1)), make_result("b", values=v(0.2)), make_result("c", values=v(0.3)),
        make_result("random", values=v(0.9), role="control"),
        make_result("b", model="mlp", values=v(0.1)), make_result("a", model="mlp", values=v(0.5)),
        make_result("random", model="mlp", values=v(0.9), role="control"),
        make_result("c", track="trust", resource="trust/x", metrics={"f1": metric(0.9, "higher")}, primary="f1"),
    ]
    bs = boards(rs)
    summaries = {s.track: s for s in track_summary(bs)}
    aixi = summaries["aixi"]
    assert (aixi.n_boards, aixi.counted, aixi.left_out) == (2, 2, [])
    # a and b split their two shared boards 1–1 and both beat c: a tie at the top, c last
    assert [(r.submission, r.entered, r.total) for r in aixi.rows] == [("a", 2, 2), ("b", 2, 2), ("c", 1, 2)] or \
        [(r.submission, r.entered, r.total) for r in aixi.rows] == [("b", 2, 2), ("a", 2, 2), ("c", 1, 2)]
    a, b = aixi.rows[0], aixi.rows[1]
    assert a.strength == pytest.approx(b.strength) and a.rank == b.rank == 1 and a.tied and b.tied
    assert aixi.rows[2].strength < a.strength and aixi.rows[2].wins == 0.0
    assert next(r for r in aixi.rows if r.submission == "a").parts == {
        "aixi · aixi/shape-ssin · cnn": 1.0, "aixi · aixi/shape-ssin · mlp": 2.0}
    trust = summaries["trust"]
    assert trust.rows == [] and trust.counted == 0 and "only one submission" in trust.left_out[0]
    rows = overall(bs)
    assert {r.submission for r in rows} == {"a", "b", "c"} and "random" not in {r.submission for r in rows}


# --------------------------------------------------------------------------------------------------
# revisions and duplicates


def test_mixed_revisions_keep_newest_and_warn():
    rs = [
        make_result("old1", revision="rev-old", created="2025-01-01T00:00:00+00:00"),
        make_result("old2", revision="rev-old", created="2025-01-02T00:00:00+00:00"),
        make_result("new", revision="rev-new", created="2025-03-01T00:00:00+00:00"),
    ]
    (board,) = boards(rs)
    assert board.revision == "rev-new"
    assert [row.submission for row in board.rows] == ["new"]
    assert len(board.warnings) == 1
    w = board.warnings[0]
    assert "old1" in w and "old2" in w and "rev-old" in w and "rev-new" in w


def test_resource_version_change_is_not_mixed_either():
    rs = [
        make_result("a", resource_version="1", created="2025-02-01T00:00:00"),
        make_result("b", resource_version="2", created="2025-01-01T00:00:00+00:00"),
    ]
    (board,) = boards(rs)
    assert board.resource_version == "1" and [r.submission for r in board.rows] == ["a"]
    assert "b" in board.warnings[0] and "version 2" in board.warnings[0]


def test_same_submission_twice_keeps_newest_and_warns():
    rs = [
        make_result("a", version="1.0", metrics={"kl": metric(0.9)}, created="2025-01-01T00:00:00+00:00"),
        make_result("a", version="2.0", metrics={"kl": metric(0.1)}, created="2025-02-01T00:00:00+00:00"),
        make_result("b", metrics={"kl": metric(0.5)}),
    ]
    (board,) = boards(floored(rs))
    rows = [(r.rank, r.submission, r.version) for r in board.rows if r.role != "control"]
    assert rows == [(1, "a", "2.0"), (2, "b", "1.0")]
    assert len(board.warnings) == 1 and "'a'" in board.warnings[0] and "1.0" in board.warnings[0]


def test_no_warning_when_consistent():
    (board,) = boards([make_result("a"), make_result("b")])
    assert board.warnings == []


# --------------------------------------------------------------------------------------------------
# renderers


def two_metric_boards():
    rs = [
        make_result("alpha", metrics={"kl": metric(0.1234, "lower", "KL", half=0.0051),
                                      "emd": metric(2.5, "lower", "EMD", excluded=2)},
                    n_instances=20, n_failed=3),
        make_result("beta", metrics={"kl": metric(0.2, "lower", "KL"), "emd": metric(1.0, "lower", "EMD")},
                    n_instances=20),
        make_result("gamma", track="trust", resource="trust/x", primary="f1",
                    metrics={"f1": metric(0.75, "higher", "F1")}),
    ]
    return boards(floored(rs))


def test_format_cell():
    assert render.format_cell(metric(0.1234, half=0.0051)) == "0.1234 ± 0.0051"
    assert render.format_cell(metric(12.3456, half=0.5)) == "12.35 ± 0.50"
    assert render.format_cell(metric(None)) == "—"
    assert render.format_cell(metric(0.5, excluded=2)) == "0.5000 ± 0.0100 (2 excl.)"


def test_csv_parses_back_with_documented_columns():
    bs = two_metric_boards()
    text = render.to_csv(bs)
    rows = list(csv.DictReader(io.StringIO(text)))
    header = next(csv.reader(io.StringIO(text)))
    metric_cols = []
    for n in ["emd", "f1", "kl"]:
        metric_cols += [f"{n}_mean", f"{n}_ci_low", f"{n}_ci_high", f"{n}_excluded"]
    assert header == ["track", "resource", "revision", "model", "primary_metric", "primary_direction", "rank", "tied",
                      "rank_ci_low", "rank_ci_high", "role", "submission", "version", "status", *metric_cols,
                      "all_metric_rank", "below_gate", "n_instances", "n_failed", "wall_time_s", "complete",
                      "ids_sha256", "board_verdict", "verdict_diff", "verdict_ci_low", "verdict_ci_high",
                      "board_unranked", *render.RANDOMISATION_COLUMNS, *render.HIDDEN_COLUMNS]
    assert [r["role"] for r in rows].count("control") == 2  # each board's floor
    assert {r["tied"] for r in rows if r["role"] == "control"} == {""}  # no rank, so no tie either way
    assert {(r["track"], r["primary_metric"], r["primary_direction"]) for r in rows} == {
        ("aixi", "kl", "lower"), ("trust", "f1", "higher")}
    rows = [r for r in rows if r["role"] != "control"]
    assert len(rows) == 3
    alpha = next(r for r in rows if r["submission"] == "alpha")
    assert alpha["track"] == "aixi" and alpha["revision"] == "rev-a" and alpha["rank"] == "1"
    assert float(alpha["kl_mean"]) == pytest.approx(0.1234)
    assert float(alpha["kl_ci_low"]) == pytest.approx(0.1234 - 0.0051)
    assert float(alpha["kl_ci_high"]) == pytest.approx(0.1234 + 0.0051)
    assert alpha["emd_excluded"] == "2" and alpha["f1_mean"] == ""
    assert (alpha["n_instances"], alpha["n_failed"], float(alpha["wall_time_s"])) == ("20", "3", 1.5)
    assert alpha["status"] == "signed" and alpha["complete"] == "true" and len(alpha["ids_sha256"]) == 64


def test_markdown_has_arrows_primary_mark_and_failures():
    bs = two_metric_boards()
    md = render.to_markdown(bs)
    assert "KL ↓ ★" in md and "EMD ↓" in md and "F1 ↑ ★" in md
    assert "| failed |" in md or "failed |" in md
    assert "3/20" in md and "0/20" in md
    assert "0.1234 ± 0.0051" in md
    assert "verdict: undefined" in md and "Bradley–Terry" in md
    assert md == render.to_markdown(two_metric_boards())  # deterministic


def test_board_warnings_are_rendered_in_every_format():
    rs = [make_result("old", revision="rev-old", created="2024-01-01T00:00:00+00:00"), make_result("new")]
    bs = boards(rs)
    assert bs[0].warnings
    assert "warning" in render.to_markdown(bs) and "rev-old" in render.to_markdown(bs)
    assert "rev-old" in one_page(bs)
    assert "rev-old" in render.to_text(bs, width=400)


def test_html_escapes_submission_names():
    """`--format html` is the site's one page: self-contained (its CSS and script inline, no file it links),
    every text escaped, the same bytes for the same boards (no build date), one id per element."""
    bs = boards([make_result("<script>alert(1)</script>"), make_result("ok & fine")])
    page = one_page(bs)
    assert "<script>alert" not in page and page.count("<script>") == 1  # the sorting script, inline
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "ok &amp; fine" in page
    assert page.startswith("<!doctype html>") and "KL ↓ ★" in page and "<style>" in page
    assert 'src="' not in page and 'stylesheet' not in page and 'href="submission/' not in page
    assert page == one_page(boards([make_result("<script>alert(1)</script>"), make_result("ok & fine")]))
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and all(f'href="#{a}"' not in page or a in ids for a in ids)
    assert all(h[1:] in ids for h in re.findall(r'href="(#[^"]+)"', page))


def test_rich_text_contains_columns():
    text = render.to_text(two_metric_boards(), width=200)
    assert "KL ↓ ★" in text and "3/20" in text and "0.1234 ± 0.0051" in text


def test_markdown_escapes_pipes():
    md = render.to_markdown(boards([make_result("a|b")]))
    assert "a\\|b" in md


# --------------------------------------------------------------------------------------------------
# CLI


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    leaderboard.cli.register(app)

    @app.command("noop", hidden=True)
    def _noop() -> None:  # a second command keeps typer in multi-command mode
        pass

    return app


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))  # the signing key lives there
    d = tmp_path / "results"
    for r in floored([
        make_result("alpha", metrics={"kl": metric(0.1, "lower", "KL")}, n_failed=2),
        make_result("beta", metrics={"kl": metric(0.3, "lower", "KL")}),
        make_result("gamma", track="trust", resource="trust/x", primary="f1",
                    metrics={"f1": metric(0.8, "higher", "F1")}),
    ]):
        r.save(d / f"{r.track}-{r.submission['name']}.json")
    return d  # each board with its floor (a control row), so it is ranked


@pytest.mark.parametrize("fmt", ["rich", "md", "csv", "html"])
def test_cli_each_format(app, results_dir, fmt):
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "alpha" in out and "beta" in out and "gamma" in out
    assert "\x1b[" not in out  # no terminal escape codes when not a terminal
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [(r["track"], r["rank"], r["submission"]) for r in rows if r["role"] != "control"] == [
            ("aixi", "1", "alpha"), ("aixi", "2", "beta"), ("trust", "1", "gamma")]
    elif fmt == "md":
        assert "KL ↓ ★" in out and "2/10" in out and "| failed |" in out
    elif fmt == "html":
        assert out.startswith("<!doctype html>") and "KL ↓ ★" in out and "2/10" in out
    else:
        assert "KL ↓ ★" in out and "2/10" in out


def test_cli_filters_and_output_file(app, results_dir, tmp_path):
    out_file = tmp_path / "out" / "board.csv"
    res = CliRunner().invoke(
        app, ["leaderboard", "--results", str(results_dir), "--track", "aixi", "--format", "csv",
              "--output", str(out_file)],
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out_file.read_text())))
    assert {r["submission"] for r in rows} == {"alpha", "beta", "uniform"}
    assert "alpha" not in res.stdout
    assert not [p for p in out_file.parent.iterdir() if p.name.startswith(".")]  # no temp file left

    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--resource", "trust",
                                   "--format", "md"])
    assert res.exit_code == 0 and "gamma" in res.stdout and "alpha" not in res.stdout

    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--track", "nope"])
    assert isinstance(res.exception, XaibenchError) and "aixi" in str(res.exception)


def test_cli_unreadable_file_is_one_warning_and_rest_is_shown(app, results_dir):
    (results_dir / "broken.json").write_text("{not json")
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", "csv"])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "broken.json" in warnings[0]
    assert len(list(csv.DictReader(io.StringIO(res.stdout)))) == 5  # 3 + the two floors


def test_cli_no_results_tells_to_evaluate(app, tmp_path):
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(tmp_path / "empty")])
    assert res.exit_code != 0
    assert isinstance(res.exception, XaibenchError)
    assert "xaibench evaluate" in str(res.exception)


def test_cli_default_results_dir_is_data_home(app, tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    res = CliRunner().invoke(app, ["leaderboard"])
    assert isinstance(res.exception, XaibenchError) and str(tmp_path / "results") in str(res.exception)


def test_cli_help_lists_options(app):
    res = CliRunner().invoke(app, ["leaderboard", "--help"])
    assert res.exit_code == 0
    for opt in ["--track", "--resource", "--format", "--results", "--output"]:
        assert opt in res.output


def test_cli_survives_a_json_file_that_is_not_an_object(app, results_dir):
    (results_dir / "list.json").write_text("[1, 2]")
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert "list.json" in res.stderr and "alpha" in res.stdout


# --------------------------------------------------------------------------------------------------
# coverage: a board ranks only results on the same instances


def test_partial_run_never_displaces_full_ones():
    # a, b, c ran on the whole split of 200; a later ran `--limit 10` (newer)
    rs = [make_result(n, metrics={"kl": metric(m)}, n_instances=200) for n, m in [("a", 0.3), ("b", 0.1), ("c", 0.2)]]
    rs.append(make_result("a", metrics={"kl": metric(0.01)}, n_instances=10, split_size=200, limit=10,
                          created="2025-06-01T00:00:00+00:00"))
    (board,) = boards(floored(rs))
    assert ranked(board) == [(1, "b"), (2, "c"), (3, "a")]
    assert board.rows[2].metrics["kl"].mean == 0.3  # a's full run, not its newer partial one
    assert board.coverage_text == "200 instances (full split)"
    (w,) = board.warnings
    assert "a 1.0: first 10 of 200 instances" in w and "not ranked" in w.lower()
    assert "200 instances (full split)" in w


def test_the_coverage_most_submissions_ran_on_is_ranked():
    rs = [make_result(n, metrics={"kl": metric(m)}, n_instances=40, split_size=200, limit=40)
          for n, m in [("a", 0.3), ("b", 0.1), ("c", 0.2)]]
    rs.append(make_result("full", metrics={"kl": metric(0.0)}, n_instances=200, created="2025-09-01T00:00:00+00:00"))
    (board,) = boards(floored(rs))
    assert ranked(board) == [(1, "b"), (2, "c"), (3, "a")]
    assert board.coverage_text == "first 40 of 200 instances"
    assert "first 40 of 200 instances" in render.to_text([board], width=200)
    (w,) = board.warnings
    assert "full 1.0: 200 instances (full split)" in w


def test_coverage_ties_go_to_more_instances_then_the_newest():
    rs = [make_result("a", n_instances=30, split_size=100, limit=30),
          make_result("b", n_instances=50, split_size=100, limit=50, created="2024-01-01T00:00:00+00:00")]
    (board,) = boards(rs)
    assert [r.submission for r in board.rows] == ["b"] and "a 1.0: first 30 of 100" in board.warnings[0]
    # same n, different instances (e.g. two shards): the set holding the newest result
    r1 = make_result("a", n_instances=30, split_size=100, created="2025-01-01T00:00:00+00:00")
    r2 = make_result("b", n_instances=30, split_size=100, created="2025-02-01T00:00:00+00:00")
    r2.coverage = coverage_of([f"other:{k}" for k in range(30)], 100, None)
    (board,) = boards([r1, r2])
    assert [r.submission for r in board.rows] == ["b"]
    assert "[ids " in board.warnings[0]  # same words for both sets: the ids digest tells them apart


def test_results_without_recorded_coverage_group_by_instance_count():
    old = [make_result(n, n_instances=50) for n in ("a", "b")]
    for r in old:
        r.coverage = {"n": 50, "ids_sha256": None, "limit": None, "complete": None, "split_size": None}
    (board,) = boards([*old, make_result("c", n_instances=50)])
    assert [r.submission for r in board.rows] == ["a", "b"]
    assert board.coverage_text == "50 instances (coverage not recorded)"
    assert "c 1.0: 50 instances (full split)" in board.warnings[0]


# --------------------------------------------------------------------------------------------------
# integrity: modified results are marked and unranked, unverified ones marked, html publishes signed only


def test_modified_result_is_shown_unranked_and_named():
    rs = [make_result("a", metrics={"kl": metric(0.3)}), make_result("b", metrics={"kl": metric(0.2)}),
          make_result("evil", metrics={"kl": metric(0.0)}, status="modified")]
    rs[2].path = Path("/results/aixi/evil.json")
    (board,) = boards(floored(rs))
    assert [(r.rank, r.submission, r.status) for r in board.rows if r.role != "control"] == [
        (1, "b", "signed"), (2, "a", "signed"), (None, "evil", "modified")]
    (w,) = board.warnings
    assert "/results/aixi/evil.json" in w and "not ranked" in w
    assert board.verdict.status == "undefined"  # no control, no per-instance scores: nothing counted
    md = render.to_markdown([board])
    assert "| — | evil (MODIFIED) |" in md and "evil.json" in md
    text = render.to_text([board], width=200)
    assert "MODIFIED" in text and "✗" in text and "evil.json" in text
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(render.to_csv([board])))}
    assert (rows["evil"]["rank"], rows["evil"]["status"]) == ("", "modified")
    with pytest.raises(ValueError, match="verified_only"):
        one_page([board])
    (pub,) = boards(floored(rs), verified_only=True)
    assert ranked(pub) == [(1, "b"), (2, "a")]
    page = one_page([pub])
    assert "evil.json" in page and "left out 1 result" in page and ">evil<" not in page
    # a board with nothing verified still appears, saying so and naming what it left out
    (empty,) = boards([rs[2]], verified_only=True)
    assert empty.rows == [] and empty.coverage is None
    page = one_page([empty])
    assert "nothing on this board is ranked" in page and "nothing ranked" in page and "evil.json" in page
    assert "nothing ranked" in render.to_text([empty], width=80)


def test_unverified_results_are_ranked_and_marked_but_not_published():
    rs = [make_result("old", metrics={"kl": metric(0.1)}, status="unsigned"),
          make_result("new", metrics={"kl": metric(0.2)})]
    (board,) = boards(floored(rs))
    assert ranked(board) == [(1, "old"), (2, "new")] and board.warnings == []
    assert "old (unverified)" in render.to_markdown([board])
    assert "unverified" in render.to_text([board], width=200)
    (pub,) = boards(floored(rs), verified_only=True)
    assert ranked(pub) == [(1, "new")] and "old 1.0 (no signature valid on this machine" in pub.warnings[0]
    assert "no signature valid" in one_page([pub])


def test_unverifiable_files_cannot_steer_the_published_board():
    # a forged unsigned file on a "newer revision" and on 10 instances would otherwise choose what is ranked
    good = [make_result(n, metrics={"kl": metric(m)}, n_instances=100) for n, m in [("a", 0.3), ("b", 0.1)]]
    forged = [make_result(f"f{k}", revision="rev-z", created="2030-01-01T00:00:00+00:00", status="unsigned")
              for k in range(3)]
    (pub,) = boards(floored(good) + forged, verified_only=True)
    assert pub.revision == "rev-a" and ranked(pub) == [(1, "b"), (2, "a")]
    assert pub.coverage_text == "100 instances (full split)"


def test_cli_marks_a_file_edited_after_writing(app, results_dir):
    path = results_dir / "aixi-beta.json"
    d = json.loads(path.read_text())
    d["metrics"]["kl"]["mean"] = 0.0001  # beta now claims rank 1
    path.write_text(json.dumps(d))
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", "md"])
    assert res.exit_code == 0, res.output
    assert "beta (MODIFIED)" in res.stdout and "aixi-beta.json" in res.stdout
    assert "| 1 | — | alpha |" in res.stdout
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", "csv"])
    assert "aixi-beta.json" in res.stderr  # csv: the warning goes to stderr
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    assert rows["beta"]["status"] == "modified" and rows["beta"]["rank"] == ""
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", "html"])
    assert res.exit_code == 0, res.output
    assert "aixi-beta.json" in res.stdout and '<td class="name l">beta' not in res.stdout
    assert '<td class="name l">alpha' in res.stdout
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", "md", "--verified-only"])
    assert "beta (MODIFIED)" not in res.stdout and "left out 1 result" in res.stdout


# --------------------------------------------------------------------------------------------------
# 80 columns

AIXI_METRICS = [("kl", "KL", "lower"), ("emd", "EMD", "lower"), ("emd-paper", "EMD/4×4", "lower"),
                ("mass-accuracy", "RMA", "higher"), ("rank-accuracy", "RRA", "higher"), ("pcc", "PCC", "higher")]
LONG_NAMES = ["integrated-gradients", "lime-exhaustive[n_samples=1]", "gradient-shap{attribution=absolute}",
              "saliency", "occlusion", "grad-cam", "kernel-shap"]


def realistic_results() -> list[Result]:
    """Boards as a full run makes them: AIXI with six metrics and long names, RCNN, IDC, trust."""
    rng = [0.0123, 0.4567, 1.234, 12.5, 0.9876, 123.4, 0.05]
    rs = []
    for k, name in enumerate(LONG_NAMES):
        ms = {m: metric(rng[(k + j) % 7] * (1 + j), d, label, half=rng[(k + j) % 7] / 20, n=1598)
              for j, (m, label, d) in enumerate(AIXI_METRICS)}
        rs.append(make_result(name, metrics=ms, n_instances=1598, n_failed=k * 37, wall=1234.5 * k,
                              status="unsigned" if k == 1 else "modified" if k == 3 else "signed"))
        zc = {"pct-first": metric(12.34 + k, "lower", "%first", half=0.5),
              "pct-misrank": metric(45.6 - k, "lower", "%misrnk", half=1.2),
              "avg-misrank-pessimistic": metric(3.21 * k, "lower", "avg misrnk (pess.)", half=0.1)}
        rs.append(make_result(name, track="rcnn", resource="rcnn/beer-appearance", model="rcnn", metrics=zc,
                              primary="pct-first", n_instances=994))
        idc = {"interp-kappa": metric(0.1 * k, "higher", "κ"), "interp-precision": metric(0.5, "higher", "P"),
               "interp-recall-macro": metric(0.25, "higher", "R/doc")}
        rs.append(make_result(name, track="idc", resource="idc/mr-hybrid", model="kim-cnn", metrics=idc,
                              primary="interp-kappa", n_instances=1066))
    rs.append(make_result("lime-text", track="idc", resource="idc/mr-hybrid", model="kim-cnn",
                          metrics={"interp-kappa": metric(0.9, "higher", "κ")}, primary="interp-kappa",
                          n_instances=300, split_size=1066, limit=300))
    for t in ("trust", "robustness"):
        rs.append(make_result("lime-exhaustive[n_samples=1]", track=t, resource=f"{t}/hatexplain-lime",
                              model="bert-base-uncased", metrics={"f1": metric(0.7, "higher", "F1")}, primary="f1"))
    return rs


def sections(text: str, bs) -> dict[str, list[str]]:
    """The lines of each board's section of a rich rendering, by board title."""
    starts = sorted((text.index(b.title + "\n"), b.title) for b in bs)
    ends = [s for s, _ in starts[1:]] + [len(text)]
    return {title: text[s:e].splitlines() for (s, title), e in zip(starts, ends)}


def assert_readable(bs, width: int) -> dict[str, list[str]]:
    """Every line fits; every name is whole; every shown metric cell is whole on its row's line."""
    text = render.to_text(bs, width=width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    parts = sections(text, bs)
    for b in bs:
        section = parts[b.title]
        assert b.resource in section[0]  # the title line: resource name whole
        header = section[1]
        assert header.startswith("rank") and "submission" in header
        for row in b.rows:
            row_line = next((line for line in section[3:] if f"  {row.submission}  " in line), None)
            assert row_line is not None, (b.title, row.submission)  # the full name, on one line
            for n in b.metric_names:
                if render._header(b, n) not in header:
                    assert n != b.primary_metric  # the primary metric is always shown
                    continue
                m = row.metrics.get(n)
                cells = {render.format_cell(m), render.format_mean(m)}
                assert any(f" {c}" in row_line for c in cells), (b.title, n, row_line)  # whole, not wrapped
            if "failed" in header:
                assert f"{row.n_failed}/{row.n_instances}" in row_line
    return parts


def test_rich_board_is_readable_at_80_columns():
    bs = boards(realistic_results())
    buf = io.StringIO()
    console = Console(file=buf, width=80, color_system=None, force_terminal=False, legacy_windows=False)
    render.print_rich(bs, console)
    assert buf.getvalue() == render.to_text(bs, width=80)
    parts = assert_readable(bs, 80)
    aixi = "\n".join(parts["aixi · aixi/shape-ssin · cnn"])
    assert "KL ↓ ★" in aixi and "failed" in aixi and "0.01230 ± 0.00061" in aixi  # primary keeps its CI
    assert "not shown:" in aixi and "unverified" in aixi and "MODIFIED" in aixi
    assert "1,598 instances (full split)" in aixi
    # everything is there when the terminal is wide
    wide = render.to_text(bs, width=250)
    assert "PCC ↑" in wide and "time (s)" in wide and "not shown" not in wide
    assert_readable(bs, 250)
    assert_readable(bs, 100)


def test_80_columns_show_the_primary_and_two_more_metrics_for_typical_names():
    rs = [r for r in realistic_results() if r.track == "aixi" and len(r.submission["name"]) <= 20]
    (b,) = boards(rs)
    header = sections(render.to_text([b], width=80), [b])[b.title][1]
    shown = [n for n in b.metric_names if render._header(b, n) in header]
    assert shown[0] == "kl" and len(shown) >= 3, header
    assert_readable([b], 80)


def test_cli_rich_at_80_columns(app, results_dir):
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
    assert "alpha" in res.stdout and "0.1000 ± 0.0100" in res.stdout
