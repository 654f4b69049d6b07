"""Running the built-in floors a board misses (issue #58): the board runs its floors itself.

A board needs every built-in data prior it can enter (`leaderboard.floors`); `Board.lacking` names those missing on
the published model and `Board.hidden.lacking` those missing on its hidden copies. `run_missing(board, results)`
evaluates each with the installed built-in (`benchmark.runner.evaluate`, in the sandbox, on the board's resource at
its revision, model, split and instances, without the randomisation test: a control is never judged by it) — first
on the published model (a hidden-copy run belongs to a row there, `leaderboard.companions`), then on each of the
board's copies — and writes the Results to `results`. It runs nothing, and says why in one line, where:

* the resource is not built here at the board's revision (`load_resource(..., hub=False)`: nothing is downloaded);
* the board's copies are of another round than this home's secret (only that round's secret builds them), or the
  caller gives no round;
* the built-in is not installed, or the evaluation fails (its one-line error, cut to 200 characters: it may quote
  what a submission printed); or a hidden copy cannot be built (`NoHiddenCopy`: the harness's own line, kept whole —
  which copy, its figures and what stopped it).

`xaibench leaderboard` calls it for a board read from a local results folder (`--run-floors`, the default) and then
builds the boards again; a board whose floors still miss stays unranked with the reason (`floors.run_line`).
`xaibench results verify` runs the floors of the boards a pull request touches the same way
(`leaderboard.repository.rerun`), in a scratch folder, and lands them signed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from benchmark.errors import XaibenchError
from leaderboard.boards import Board

__all__ = ["Copies", "FloorRun", "one_line", "run_missing", "wanted"]


@dataclass
class Copies:
    """The hidden copies floors are run on: the round, its draws and each draw's first N instances (None: all)."""

    round: str
    draws: list[int]
    limits: list[int | None]


@dataclass
class FloorRun:
    """What running one board's missing floors did: the Results written, and why any was not run."""

    board: str
    results: list[Any] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def one_line(exc: Exception) -> str:
    """Why a floor did not run, on one line: a `NoHiddenCopy` whole (the harness writes it: the copy, the figures,
    what stopped it), any other error cut to 200 characters."""
    from benchmark.models.variants.hidden import NoHiddenCopy

    text = " ".join(str(exc).split())
    return text if isinstance(exc, NoHiddenCopy) else text[:200]


def wanted(board: Board) -> list[tuple[str, bool]]:
    """(built-in name, on the hidden copies too) for every built-in floor `board` misses, sorted by name."""
    published = set(board.lacking)
    hidden = set(board.hidden.lacking) if board.hidden is not None else set()
    return [(n, n in hidden) for n in sorted(published | hidden)]


def _coverage_limit(coverage: dict | None) -> int | None:
    """The --limit that gives the board's instances: their count where they are the split's first N, else None."""
    if not coverage or coverage.get("complete") is not False:
        return None
    n = coverage.get("n")
    return int(n) if isinstance(n, int) and not isinstance(n, bool) else None


def run_missing(board: Board, results: Path, *, sandbox: str = "auto", timeout_s: float = 60.0, round_: Any = None,
                todo: list[tuple[str, bool]] | None = None, copies: Copies | None = None,
                say: Callable[[str], None] = lambda line: None) -> FloorRun:
    """Evaluate every built-in floor `board` misses (module docstring; `todo`, default `wanted(board)`) into the folder
    `results`, on the board's hidden copies (`copies`, default those of `board.hidden`) where asked; `round_`: the
    round whose copies the hidden runs are drawn from (None: this home's secret, `local_round`)."""
    from benchmark.models.variants.hidden import local_round
    from benchmark.resources import load_resource
    from benchmark.runner import evaluate
    from benchmark.submission import builtins

    out = FloorRun(board.title)
    todo = wanted(board) if todo is None else todo
    if copies is None and board.hidden is not None:
        copies = Copies(board.hidden.round, list(board.hidden.draws), [n or None for n in board.hidden.instances])
    if not todo:
        return out
    resource = f"{board.resource}@{board.revision}"
    try:
        load_resource(resource, hub=False)
    except XaibenchError as exc:
        out.problems.append(f"{board.title}: the built-in floors {', '.join(n for n, _ in todo)} cannot run here: the "
                            f"resource is not built at revision {board.revision[:12]} "
                            f"({' '.join(str(exc).split())[:160]})")
        return out
    rnd = None
    if any(h for _, h in todo) and copies is not None:
        try:
            rnd = round_ if round_ is not None else local_round()
        except XaibenchError as exc:
            out.problems.append(f"{board.title}: no round to draw its hidden copies from ({exc})")
        if rnd is not None and rnd.id != copies.round:
            out.problems.append(f"{board.title}: its hidden copies are of round {copies.round}, this home's "
                                f"secret is round {rnd.id}: only that round's secret builds them, so the built-in "
                                "floors are not run on them")
            rnd = None
    installed = builtins()
    common = dict(model=board.model, split=board.split or None, limit=_coverage_limit(board.coverage),
                  results_dir=results, sandbox=sandbox, timeout_s=timeout_s)
    for name, on_copies in todo:
        sub = installed.get(name)
        if sub is None:
            out.problems.append(f"{board.title}: the built-in floor {name} is not installed here")
            continue
        try:
            say(f"running the built-in floor {name} on {board.title}")
            out.results.append(evaluate(sub, board.track, resource, **common))
            if on_copies and rnd is not None and copies is not None:
                for k, n in zip(copies.draws, copies.limits):  # each copy's instances: its first n
                    out.results.append(evaluate(sub, board.track, resource, **common, hidden=k, hidden_limit=n,
                                                hidden_round=rnd))
        except XaibenchError as exc:
            out.problems.append(f"{board.title}: the built-in floor {name} could not run ({one_line(exc)})")
    return out
