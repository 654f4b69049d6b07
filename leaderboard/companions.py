"""Companion runs: the Results a board reads *for* a row, never as rows — one mechanism for every kind.

A trained Result (a board's row) may come with companion runs of the same submission, parameters, instances and
seeds: its run on a randomised copy of the model (`"randomised"`, `benchmark.variant_runs.randomisation`; the
randomisation test, `leaderboard.randomisation`) and its runs on the board's hidden copies (`"hidden"`,
`benchmark.variant_runs.hidden`; `leaderboard.hidden`). Each kind is one entry of `KINDS` (a `Kind`: how to recognise
such a Result, where its row's file lies relative to its own, which key of a verification record carries it);
a new kind is one more entry.

**The rule.** A row's companions are `Result.companions` (`of(row)`: kind → its runs), read from exactly one
place and never paired by name:

* a row read from a folder of Results (`xaibench evaluate`'s, `leaderboard.loading`) gets the companion files of
  its own folder — those whose `Kind.owner` path (e.g. two folders up from `<model>/randomised-s<seed>/<name>.json`)
  is the row's own file (`attach`); a companion file whose row is elsewhere, or absent, belongs to nothing;
* a row read from a results repository (`leaderboard.repository.boards`) gets what its own verification record
  carries, signed with it — its hidden-copy runs from its own round records, one per round, signed and bound to it
  the same way — when the row is verified, and nothing when it is self-reported: a companion Result
  *file* in a repository is never read (it is listed and left out), so no unsigned file can change what a
  verified row shows;
* a row built in memory gets what the caller attaches (`add`), or the companion runs of the same list whose
  owner path is its `Result.path` (`resolve`, the same folder rule; `boards()` applies it to what it is given,
  changing no Result).

Companion Results are never rows of a board, and `boards()` reads a row's companions only (`of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from benchmark.errors import XaibenchError
from benchmark.variant_runs.hidden import hidden_of
from benchmark.variant_runs.randomisation import randomisation_of
from benchmark.store.results import Result

__all__ = ["KINDS", "Kind", "add", "attach", "kind_of", "of", "resolve"]


def _randomised_owner(path: Path, r: Result) -> Path | None:
    """Where the trained Result of a randomised-model file lies: two folders up, under the file name it
    recorded (`benchmark.verify.trained_path`), or None when that name is not a plain file name."""
    from benchmark.verify import trained_path

    named = (r.extra.get("randomisation") or {}).get("trained_result") if isinstance(r.extra, dict) else None
    try:
        return trained_path(path, named if isinstance(named, str) else None)
    except XaibenchError:
        return None


def _hidden_owner(path: Path, r: Result) -> Path | None:
    """Where the Result on the published model of a hidden-copy file lies: three folders up from
    `<model>/hidden-<round>/d<k>/<name>.json`, under the file name it recorded (`extra.hidden.trained_result`)."""
    named = (r.extra.get("hidden") or {}).get("trained_result") if isinstance(r.extra, dict) else None
    if not isinstance(named, str) or Path(named).name != named or not named.endswith(".json"):
        return None
    return Path(path).parent.parent.parent / named


@dataclass(frozen=True)
class Kind:
    """One kind of companion run (module docstring)."""

    name: str
    is_run: Callable[[Result], bool]  # whether a Result is a run of this kind (else it may be a row)
    owner: Callable[[Path, Result], Path | None]  # its row's file, given its own file
    record_key: str  # the verification record's key that carries it (one Result, or a list of them)


KINDS: dict[str, Kind] = {
    "randomised": Kind("randomised", lambda r: randomisation_of(r) is not None, _randomised_owner, "randomised"),
    "hidden": Kind("hidden", lambda r: hidden_of(r) is not None, _hidden_owner, "hidden"),
}


def kind_of(r: Result) -> str | None:
    """The kind of companion run `r` is, or None when it is a trained Result (a row)."""
    return next((k.name for k in KINDS.values() if k.is_run(r)), None)


def of(row: Result) -> dict[str, list[Result]]:
    """The row's companion runs, kind → runs ({} when none are attached)."""
    got = getattr(row, "companions", None)
    return got if isinstance(got, dict) else {}


def add(row: Result, run: Result, kind: str | None = None) -> None:
    """Attach `run` to `row` as a companion of its kind (or `kind`)."""
    name = kind or kind_of(run)
    if name not in KINDS:
        raise ValueError(f"{getattr(run, 'path', None) or 'the Result'} is no companion run ({', '.join(KINDS)})")
    runs = dict(of(row))
    runs[name] = [*runs.get(name, []), run]
    row.companions = runs


def _key(path: Any) -> str | None:
    return None if not path else str(Path(path).resolve())


def resolve(results: Iterable[Result]) -> tuple[list[Result], dict[int, dict[str, list[Result]]]]:
    """(the rows of `results` — companion runs are not rows —, `id(row)` → its companions), without changing
    any Result: a row that has companions attached keeps those; every other row gets the companion runs of
    `results` whose owner path is the row's own file (module docstring) — none when it has no file."""
    rows: list[Result] = []
    runs: list[tuple[str, Result]] = []
    for r in results:
        kind = kind_of(r)
        if kind is None:
            rows.append(r)
        else:
            runs.append((kind, r))
    out: dict[int, dict[str, list[Result]]] = {}
    by_file: dict[str, int] = {}
    for row in rows:
        attached = getattr(row, "companions", None)
        out[id(row)] = dict(attached) if isinstance(attached, dict) else {}
        key = _key(getattr(row, "path", None))
        if attached is None and key is not None:
            by_file[key] = id(row)
    for kind, run in runs:
        path = getattr(run, "path", None)
        owner = KINDS[kind].owner(Path(path), run) if path else None
        at = by_file.get(_key(owner) or "")
        if at is not None:
            out[at].setdefault(kind, []).append(run)
    return rows, out


def attach(results: Iterable[Result]) -> list[Result]:
    """The rows of `results`, each with its companions set (`Result.companions`, by `resolve`'s rule)."""
    rows, runs = resolve(results)
    for row in rows:
        row.companions = runs[id(row)]
    return rows
