"""The command line: list, evaluate, leaderboard formats, one-line errors."""

from __future__ import annotations

import csv
import io

import pytest

from benchmark import cli


def run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(list(argv))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def test_cli_evaluate_then_leaderboard_csv(home, tmp_path, capsys):
    res = str(tmp_path / "results")
    for sub in ("uniform", "lime-exhaustive"):
        code, _, err = run(capsys, "evaluate", sub, "--track", "aixi", "--resource", "aixi/shape-ssin",
                           "--model", "function", "--limit", "6", "--hidden-draws", "0", "--results", res)
        assert code == 0, err
    code, out, _ = run(capsys, "leaderboard", "--track", "aixi", "--format", "csv", "--results", res)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    names = [r["submission"] for r in rows]
    # the board's built-in data priors, which it lacked, were run by the leaderboard (issue #58: its floor)
    assert set(names) == {"uniform", "lime-exhaustive", "foreground", "centre-prior"}
    assert names[0] == "lime-exhaustive" and rows[0]["rank"] == "1"  # lower KL ranks first


def test_cli_errors_are_one_line(home, capsys):
    code, out, err = run(capsys, "evaluate", "no-such-explainer", "--resource", "aixi/shape-ssin")
    assert code == 2
    text = (out + err).strip()
    assert text.startswith("error:") and "unknown submission 'no-such-explainer'" in text
    assert len(text.splitlines()) == 1


def test_cli_help_and_list(home, capsys, monkeypatch):
    from benchmark.progress import console

    monkeypatch.setattr(console, "width", 250)
    for argv in (["--help"], ["evaluate", "--help"], ["generate", "aixi", "--help"], ["train", "aixi", "--help"],
                 ["leaderboard", "--help"], ["demo", "--help"], ["publish", "--help"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "Usage" in out
    code, out, err = run(capsys, "list")
    assert code == 0
    text = out + err
    assert "aixi/shape-ssin" in text and "lime-exhaustive" in text


def test_publish_dry_run_verifies_with_load_dataset(home, capsys):
    code, out, err = run(capsys, "publish", "aixi", "--repo-id", "me/xaibench-aixi", "--dry-run")
    assert code == 0, err
    assert "shape-ssin/validation-00000-of-00001.parquet" in out + err
    assert "README.md" in out + err
