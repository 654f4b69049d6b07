"""Leaderboard: ranking, revision handling, mean-rank summaries, renderers and the CLI command."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import leaderboard.cli
from benchmark.errors import XaibenchError
from benchmark.results import Failure, MetricSummary, Result, coverage_of
from leaderboard import render
from leaderboard.rank import boards, competition_ranks, overall, track_summary


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
) -> Result:
    """A Result as the runner makes it: covering the first `n_instances` ids of a split of `split_size`
    (default: the whole split). `status` stands for what `Result.load` would have found."""
    if metrics is None:
        metrics = {"kl": metric(0.5, "lower", "KL")}
    ids = [f"{resource}:{k}" for k in range(n_instances)]
    r = Result(
        submission={"name": name, "version": version, "hash": f"h-{name}-{version}", "parameters": {},
                    "kind": "explainer"},
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
    )
    r.status = status
    return r


def ranked(board) -> list[tuple[int, str]]:
    return [(row.rank, row.submission) for row in board.rows]


# --------------------------------------------------------------------------------------------------
# ranking


def test_lower_is_better_ranks_smaller_mean_first():
    rs = [make_result(n, metrics={"kl": metric(m, "lower")}) for n, m in [("a", 0.3), ("b", 0.1), ("c", 0.2)]]
    (board,) = boards(rs)
    assert board.direction == "lower"
    assert ranked(board) == [(1, "b"), (2, "c"), (3, "a")]


def test_higher_is_better_ranks_larger_mean_first():
    rs = [
        make_result(n, metrics={"acc": metric(m, "higher")}, primary="acc")
        for n, m in [("a", 0.3), ("b", 0.1), ("c", 0.2)]
    ]
    (board,) = boards(rs)
    assert ranked(board) == [(1, "a"), (2, "c"), (3, "b")]


def test_ties_share_a_rank_competition_style():
    rs = [make_result(n, metrics={"kl": metric(m)}) for n, m in [("a", 0.2), ("b", 0.1), ("c", 0.1), ("d", 0.3)]]
    (board,) = boards(rs)
    assert ranked(board) == [(1, "b"), (1, "c"), (3, "a"), (4, "d")]
    assert competition_ranks([0.1 + 0.2, 0.3], "lower") == [1, 1]  # float noise does not break a tie


def test_all_failed_submission_ranks_last():
    rs = [
        make_result("dead", metrics={"kl": metric(None)}, n_failed=10),
        make_result("slow", metrics={"kl": metric(9.0)}),
        make_result("good", metrics={"kl": metric(0.1)}),
    ]
    (board,) = boards(rs)
    assert ranked(board) == [(1, "good"), (2, "slow"), (3, "dead")]
    # also last when higher is better
    rs = [
        make_result("dead", metrics={"acc": metric(None, "higher")}, primary="acc", n_failed=10),
        make_result("weak", metrics={"acc": metric(-5.0, "higher")}, primary="acc"),
    ]
    assert ranked(boards(rs)[0]) == [(1, "weak"), (2, "dead")]


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


def test_mean_rank_summary_across_two_boards_by_hand():
    # board 1 (kl, lower): a 0.1 -> 1, b 0.2 -> 2, c 0.3 -> 3
    # board 2 (kl, lower): b 0.1 -> 1, a 0.5 -> 2          (c did not enter)
    # track aixi: a (1+2)/2 = 1.5, b (2+1)/2 = 1.5, c 3/1 = 3  -> ranks 1, 1, 3
    # board 3, track trust (f1, higher): c 0.9 -> 1, a 0.8 -> 2
    # overall: a mean(1.5, 2) = 1.75, b 1.5 (aixi only), c mean(3, 1) = 2.0
    rs = [
        make_result("a", metrics={"kl": metric(0.1)}),
        make_result("b", metrics={"kl": metric(0.2)}),
        make_result("c", metrics={"kl": metric(0.3)}),
        make_result("b", model="mlp", metrics={"kl": metric(0.1)}),
        make_result("a", model="mlp", metrics={"kl": metric(0.5)}),
        make_result("c", track="trust", resource="trust/x", metrics={"f1": metric(0.9, "higher")}, primary="f1"),
        make_result("a", track="trust", resource="trust/x", metrics={"f1": metric(0.8, "higher")}, primary="f1"),
    ]
    bs = boards(rs)
    summaries = {s.track: s for s in track_summary(bs)}
    aixi = summaries["aixi"]
    assert aixi.n_boards == 2
    assert [(r.rank, r.submission, r.mean_rank, r.entered, r.total) for r in aixi.rows] == [
        (1, "a", 1.5, 2, 2),
        (1, "b", 1.5, 2, 2),
        (3, "c", 3.0, 1, 2),
    ]
    assert [(r.submission, r.mean_rank) for r in summaries["trust"].rows] == [("c", 1.0), ("a", 2.0)]
    rows = overall(bs)
    assert [(r.rank, r.submission, r.mean_rank, r.entered, r.total) for r in rows] == [
        (1, "b", 1.5, 1, 2),
        (2, "a", 1.75, 2, 2),
        (3, "c", 2.0, 2, 2),
    ]
    assert rows[1].parts == {"aixi": 1.5, "trust": 2.0}


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
    (board,) = boards(rs)
    assert [(r.rank, r.submission, r.version) for r in board.rows] == [(1, "a", "2.0"), (2, "b", "1.0")]
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
    return boards(rs)


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
    assert header == ["track", "resource", "revision", "model", "rank", "submission", "version", "status",
                      *metric_cols, "n_instances", "n_failed", "wall_time_s", "complete", "ids_sha256"]
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
    assert "overall" in md
    assert md == render.to_markdown(two_metric_boards())  # deterministic


def test_board_warnings_are_rendered_in_every_format():
    rs = [make_result("old", revision="rev-old", created="2024-01-01T00:00:00+00:00"), make_result("new")]
    bs = boards(rs)
    assert bs[0].warnings
    assert "warning" in render.to_markdown(bs) and "rev-old" in render.to_markdown(bs)
    assert "rev-old" in render.to_html(bs)
    assert "rev-old" in render.to_text(bs, width=400)


def test_html_escapes_submission_names():
    bs = boards([make_result("<script>alert(1)</script>"), make_result("ok & fine")])
    page = render.to_html(bs)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "ok &amp; fine" in page
    assert page.startswith("<!DOCTYPE html>") and "KL ↓ ★" in page


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
    for r in [
        make_result("alpha", metrics={"kl": metric(0.1, "lower", "KL")}, n_failed=2),
        make_result("beta", metrics={"kl": metric(0.3, "lower", "KL")}),
        make_result("gamma", track="trust", resource="trust/x", primary="f1",
                    metrics={"f1": metric(0.8, "higher", "F1")}),
    ]:
        r.save(d / f"{r.track}-{r.submission['name']}.json")
    return d


@pytest.mark.parametrize("fmt", ["rich", "md", "csv", "html"])
def test_cli_each_format(app, results_dir, fmt):
    res = CliRunner().invoke(app, ["leaderboard", "--results", str(results_dir), "--format", fmt])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "alpha" in out and "beta" in out and "gamma" in out
    assert "\x1b[" not in out  # no terminal escape codes when not a terminal
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [(r["track"], r["rank"], r["submission"]) for r in rows] == [
            ("aixi", "1", "alpha"), ("aixi", "2", "beta"), ("trust", "1", "gamma")]
    elif fmt == "md":
        assert "KL ↓ ★" in out and "2/10" in out and "| failed |" in out
    elif fmt == "html":
        assert out.startswith("<!DOCTYPE html>")
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
    assert {r["submission"] for r in rows} == {"alpha", "beta"}
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
    assert len(list(csv.DictReader(io.StringIO(res.stdout)))) == 3


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
