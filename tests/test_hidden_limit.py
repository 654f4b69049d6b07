"""How many of a hidden copy's instances a hidden-copy run evaluates (issue #55): `--hidden-limit N` when given, else
`--limit N` (a user who asked for the first 100 instances does not get a copy's 1,277), else all of them."""

from __future__ import annotations

import json

from benchmark.cli import _run, load_plugins
from benchmark.runner import RunOptions, evaluate, hidden_limit_of

AIXI = dict(track="aixi", resource="aixi/shape-ssin", model="function")


def test_the_rule():
    assert hidden_limit_of(RunOptions(limit=100)) == 100
    assert hidden_limit_of(RunOptions(limit=100, hidden_limit=7)) == 7
    assert hidden_limit_of(RunOptions(hidden_limit=7)) == 7
    assert hidden_limit_of(RunOptions()) is None


def test_limit_bounds_the_copies_unless_hidden_limit_says_otherwise(home, tmp_path):
    bounded = evaluate("uniform", **AIXI, limit=3, results_dir=tmp_path / "a", hidden=0)
    assert bounded.n_instances == 3 and bounded.coverage["complete"] is False and bounded.coverage["limit"] == 3
    wider = evaluate("uniform", **AIXI, limit=3, results_dir=tmp_path / "b", hidden=0, hidden_limit=5)
    assert wider.n_instances == 5 and wider.coverage["limit"] == 5
    whole = evaluate("uniform", **AIXI, results_dir=tmp_path / "c", hidden=0)
    assert whole.n_instances > 5 and whole.coverage["complete"] is True


def test_the_command_line_follows_it(home, tmp_path):
    load_plugins()
    out = tmp_path / "res"
    _run(["evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
          "--limit", "4", "--no-randomisation", "--hidden-draws", "2", "--results", str(out)])
    hidden = sorted(p for p in out.rglob("*.json") if "/hidden-" in str(p))
    assert len(hidden) == 2
    assert [json.loads(p.read_text())["n_instances"] for p in hidden] == [4, 4]
    _run(["evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
          "--limit", "4", "--no-randomisation", "--hidden-draws", "1", "--hidden-limit", "2", "--results",
          str(out / "two")])
    [two] = [p for p in (out / "two").rglob("*.json") if "/hidden-" in str(p)]
    assert json.loads(two.read_text())["n_instances"] == 2
