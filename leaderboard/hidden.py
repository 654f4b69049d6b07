"""Ranks from models no submission has seen: a board's hidden copies (issue #50, `benchmark.variant_runs.hidden`).

A board whose track builds hidden copies of its model (`Track.hidden_copy`: the AIXI function model with drawn
pattern weights, IDC's Kim CNN / HAN relying on planted words, the RCNN with vetoed words) reads, beside each
row's Result on the published model, its Results on the copies of **one round** (one secret;
`benchmark.models.variants.hidden`). Pure functions over `benchmark.store.results.Result` objects.

* **Which runs.** A row's hidden-copy Results are its own companion runs (`leaderboard.companions`: its own folder,
  or its own signed verification record in a results repository) of the same submission code (name, hash,
  parameters); each row counts for the newest round it was run in, the board takes the round most rows count for
  (ties: the newest), never two rounds at once, and per draw the newest Result; a row not run in that round is
  listed. A row whose runs miss a draw of the board, or cover other instances of a copy
  than the other rows, has no hidden score ("incomplete").
* **Scores.** Per copy d the track's estimate under the board's paired bootstrap draws of that copy's instances
  (`benchmark.bootstrap.draw_weights`, seed `SEED + 101 + d`: the same draws for every row); the copies themselves
  are resampled too (multiplicities v_bd over the D copies, `draw_seed_weights`, seed `SEED + 7`), and a metric's
  value under draw b is Σ_d v_bd·est_d(b) / Σ_d v_bd — a paired bootstrap over instances and copies. The point value
  is the mean over the copies of each copy's own value.
* **The floor** is the best *built-in data prior* on the copies (`leaderboard.floors`: recognised by its code): the
  controls declaring `data_prior` (foreground, the centre prior, the corpus lexicons) and the built-in
  `published-truth` (the published ground truth: a reference on the published model, the strongest public prior on a
  copy). Every one the board can enter must have been run on every copy (`floors.needed`); one that is missing is named
  in one line and nothing is ranked on the copies. A method found model-blind and a control that is not a built-in
  never set the floor: their score is printed beside it ("a submitted data prior reaches …"). Where the Results do
  not record what the board offers (written before issue #58), the floor is the best built-in data prior run on the
  copies, else the best built-in control, said so.
* **Ranks.** A method is ranked only if on the copies it beats the floor beyond the interval (the 95 % paired
  interval of the difference lies above 0); its rank is 1 + the ranked methods significantly better on the copies.
  Otherwise it is listed: "does not beat a data prior on models it has not seen (Δ …)". A method without a complete
  set of runs on the round's copies is listed too, with the reason. The score on the published model stays on the
  board beside it (anyone can reproduce it), but no longer ranks.
* **The verdict** is the copies': the board discriminates when its best ranked method beats the floor there.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from benchmark.bootstrap import SEED, draw_seed_weights, draw_weights, metric_draws
from benchmark.errors import XaibenchError
from benchmark.variant_runs.hidden import hidden_of, hidden_round
from benchmark.store.results import Result
from leaderboard import floors, stats
from leaderboard.ranks import Paired
from leaderboard.selection import newest_first, sub_label

__all__ = ["BEAT_PRIOR", "FLOOR_MISSING", "HiddenBoard", "HiddenRow", "analyse", "summary"]

BEAT_PRIOR = "does not beat a data prior on models it has not seen"
FLOOR_MISSING = "the hidden copies' floor is incomplete"  # a built-in data prior the copies need was not run there


@dataclass
class HiddenRow:
    """One row's scores on the board's hidden copies (module docstring)."""

    mean: float | None = None  # the primary metric, mean over the copies
    ci: tuple[float, float] | None = None  # its 95 % interval (paired bootstrap over instances and copies)
    rank: int | None = None
    interval: tuple[int, int] | None = None
    tied: bool = False
    reason: str = ""  # why it is not ranked ("" = ranked, or a control / reference)
    diff: float | None = None  # against the floor, oriented (+ = better than the floor)
    diff_ci: tuple[float, float] | None = None
    draws: int = 0  # copies it was scored on


@dataclass
class HiddenBoard:
    """What a board says of its hidden copies."""

    round: str
    draws: list[int]  # the copies' draw indices
    instances: list[int]  # instances per copy
    construction: str = ""  # what the copies rely on
    floor: str | None = None  # the best data prior on the copies (the submission's name)
    lacking: list[str] = field(default_factory=list)  # the built-in data priors the copies' floor misses
    floor_kind: str = "data prior"  # "data prior" or "control" (no data prior was run on the copies)
    notes: list[str] = field(default_factory=list)
    stats: list[dict[str, Any]] = field(default_factory=list)  # each copy's construction statistics


def _same_code(row: Result, run: Result) -> bool:
    return all(str(run.submission.get(k)) == str(row.submission.get(k)) for k in ("name", "hash")) \
        and run.submission.get("parameters") == row.submission.get("parameters")


def _round_of(per_row: list[list[Result]]) -> str | None:
    """The board's round: each row counts for the newest round it was run in (the round of its newest run), and
    the board takes the round most rows count for, ties broken by the newest run — so a row kept on an old round
    (its records are never replaced) does not hold the board there once most rows were run in a new one."""
    counts: Counter[str] = Counter()
    newest: dict[str, str] = {}
    for runs in per_row:
        if not runs:
            continue
        for h in runs:
            rnd = str(hidden_round(h))
            newest[rnd] = max(newest.get(rnd, ""), h.created or "")
        latest = max(runs, key=lambda h: h.created or "")
        counts[str(hidden_round(latest))] += 1
    if not counts:
        return None
    return max(counts, key=lambda r: (counts[r], newest.get(r, "")))


def analyse(track: Any, chosen: list[Result], roles: list[str], blind: list[bool], hidden: Sequence[Sequence[Result]],
            primary: str, direction: str, need: Sequence[str] = (), command: str = ""
            ) -> tuple[HiddenBoard, list[HiddenRow], Paired] | None:
    """The board's hidden-copy analysis (module docstring), or None when no row was run on a hidden copy. `hidden`:
    each row's own hidden-copy runs (its companions); `roles` are the rows' roles after the randomisation test (a
    model-blind method is a "control"), `blind` marks those; `need`: the built-in data priors the copies' floor needs
    (`floors.needed`), `command` how to run them."""
    per_row = [[h for h in own if hidden_of(h) is not None and _same_code(r, h)] for r, own in zip(chosen, hidden)]
    rnd = _round_of(per_row)
    if rnd is None:
        return None
    by_row: list[dict[int, Result]] = []
    for runs in per_row:
        mine: dict[int, Result] = {}
        for h in newest_first(runs):
            if str(hidden_round(h)) == rnd:
                mine.setdefault(int((hidden_of(h) or {}).get("draw", -1)), h)
        by_row.append(mine)
    draws = sorted({d for mine in by_row for d in mine})
    ids = {d: Counter((by_row[i][d].coverage or {}).get("ids_sha256") for i in range(len(chosen)) if d in by_row[i])
           .most_common(1)[0][0] for d in draws}
    rows = [HiddenRow() for _ in chosen]
    complete = []
    other_rounds = sum(1 for runs, mine in zip(per_row, by_row) if runs and not mine)
    for i, mine in enumerate(by_row):
        missing = [d for d in draws if d not in mine]
        other = [d for d in draws if d in mine and (mine[d].coverage or {}).get("ids_sha256") != ids[d]]
        if not mine:
            rows[i].reason = f"no run on the hidden copies of round {rnd}"
        elif missing:
            rows[i].reason = f"run on {len(draws) - len(missing)} of the {len(draws)} hidden copies of round {rnd}"
        elif other:
            rows[i].reason = f"its run on hidden copy {other[0]} covers other instances than the board's"
        else:
            complete.append(i)
    first = by_row[complete[0]] if complete else next(m for m in by_row if m)
    board = HiddenBoard(round=rnd, draws=draws, instances=[int(first[d].n_instances) if d in first else 0
                                                            for d in draws])
    board.construction = str((hidden_of(next(iter(first.values()))) or {}).get("construction", ""))
    board.stats = [dict((hidden_of(first[d]) or {}).get("stats") or {}) for d in draws if d in first]
    if other_rounds:
        board.notes.append(f"{other_rounds} row(s) were run on hidden copies of another round only; the board ranks "
                           f"round {rnd} (rounds are never mixed)")
    p = _paired(track, chosen, complete, by_row, draws, primary, direction)
    for i in complete:
        rows[i].draws = len(draws)
        rows[i].mean = p.points[primary][i]
        if p.draws is not None:
            from benchmark.bootstrap import percentile_interval

            rows[i].ci = percentile_interval(p.values(i, primary))
    _rank(board, rows, roles, blind, chosen, complete, p, primary, direction, need, command)
    return board, rows, p


def _paired(track: Any, chosen: list[Result], complete: list[int], by_row: list[dict[int, Result]], draws: list[int],
            primary: str, direction: str) -> Paired:
    """Every complete row's point values and bootstrap draws on the copies (module docstring)."""
    names = [primary] + sorted({m for i in complete for d in draws for m in by_row[i][d].metrics} - {primary})
    points: dict[str, list[float | None]] = {m: [None] * len(chosen) for m in names}
    for i in complete:
        for m in names:
            vals = [by_row[i][d].metrics[m].mean for d in draws if m in by_row[i][d].metrics]
            good = [float(v) for v in vals if v is not None]
            points[m][i] = float(np.mean(good)) if len(good) == len(draws) else None
    directions = {m: (by_row[complete[0]][draws[0]].metrics[m].direction if complete and m in
                      by_row[complete[0]][draws[0]].metrics else direction) for m in names}
    if track is None or not complete:
        why = "no row has a complete set of runs on the copies" if track is not None else \
            "the track is not installed here, so the copies' scores cannot be resampled"
        return Paired(points, directions, None, why)
    try:
        v = draw_seed_weights(len(draws), seed=SEED + 7)
        weights = {}
        for d in draws:
            sc = by_row[complete[0]][d].scores()
            if sc is None:
                raise ValueError(f"{sub_label(by_row[complete[0]][d])} carries no per-instance scores")
            weights[d] = draw_weights(track.units(sc.seed(0)[0], by_row[complete[0]][d].n_instances),
                                      seed=SEED + 101 + d)
        out: list[dict[str, np.ndarray]] = [{} for _ in chosen]
        for i in complete:
            num: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(v.shape[0]))
            den: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(v.shape[0]))
            for k, d in enumerate(draws):
                sc = by_row[i][d].scores()
                if sc is None:
                    raise ValueError(f"{sub_label(by_row[i][d])} carries no per-instance scores")
                runs = [sc.seed(s) for s in range(len(sc.seeds))]
                est = metric_draws(track, runs, weights[d], draw_seed_weights(len(runs)))
                for m, got in est.items():
                    good = np.isfinite(got)
                    num[m] = num[m] + np.where(good, v[:, k] * np.nan_to_num(got), 0.0)
                    den[m] = den[m] + np.where(good, v[:, k], np.where(v[:, k] > 0, np.nan, 0.0))
            for m in num:
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[i][m] = np.where(den[m] > 0, num[m] / np.where(den[m] > 0, den[m], 1.0), np.nan)
    except (ValueError, KeyError, IndexError, XaibenchError) as exc:
        return Paired(points, directions, None, f"the copies' per-instance scores could not be resampled ({exc})")
    n_boot = v.shape[0]
    for i in range(len(chosen)):
        if i not in complete:
            out[i] = {m: np.full(n_boot, np.nan) for m in names}
    return Paired(points, directions, out, "")


def _rank(board: HiddenBoard, rows: list[HiddenRow], roles: list[str], blind: list[bool], chosen: list[Result],
          complete: list[int], p: Paired, primary: str, direction: str, need: Sequence[str] = (),
          command: str = "") -> None:
    """The floor, each method's comparison with it, and the ranks of the methods that beat it (module docstring)."""
    priors = [i for i in complete if floors.is_floor(chosen[i], "hidden")]
    controls = [i for i in complete if roles[i] == "control" and floors.is_floor(chosen[i], "published")]
    pool = priors or ([] if need else controls)

    def value(i: int) -> float:
        x = p.points[primary][i]
        return -np.inf if x is None else float(stats.oriented(np.array([x]), direction)[0])

    floor = max(pool, key=value) if pool else None
    if floor is not None and p.points[primary][floor] is None:
        floor = None
    methods = [i for i in range(len(chosen)) if roles[i] == "method"]
    have: dict[str, Any] = {}  # each built-in data prior on the board: its value on the copies, or why it has none
    for i, r in enumerate(chosen):
        b = floors.builtin_of(r)
        if b is None or not b.data_prior:
            continue
        if i in complete and p.points[primary][i] is not None:
            have[b.name] = p.points[primary][i]
        elif isinstance(have.get(b.name, ""), str):
            have[b.name] = rows[i].reason or f"it has no {primary} on the hidden copies (it failed on every instance)"
    lacking = floors.missing(need, have, chosen)
    board.lacking = [n for n, _ in lacking]
    if lacking:
        board.notes.append(floors.run_line(lacking, "of the hidden copies" + (" is" if len(lacking) == 1 else " are"),
                                           command))
        for i in methods:
            rows[i].reason = rows[i].reason or f"{FLOOR_MISSING} (a built-in data prior was not run on them)"
        return
    if floor is None:
        board.notes.append("no built-in control was run on the hidden copies, so nothing says what a data prior scores "
                           "there: no method is ranked (evaluate the built-in controls with --hidden-draws)")
        for i in methods:
            rows[i].reason = rows[i].reason or "no data prior on the hidden copies to beat"
        return
    board.floor = str(chosen[floor].submission["name"])
    board.floor_kind = "data prior" if priors else "control"
    if not priors:
        board.notes.append("no built-in data prior (a built-in control declaring data_prior) was run on the hidden "
                           "copies: the floor is the best built-in control")
    shown = [i for i in complete if roles[i] == "control" and i not in priors and i not in controls]
    line = floors.beside([str(chosen[i].submission["name"]) for i in shown], [p.points[primary][i] for i in shown],
                         [blind[i] for i in shown], board.floor, p.points[primary][floor], primary, direction,
                         "on the hidden copies")
    if line:
        board.notes.append(line)
    eligible = []
    for i in methods:
        if i not in complete:
            continue
        if p.draws is None:
            rows[i].reason = f"not ranked on the hidden copies: {p.why}"
            continue
        sep = p.better(floor, i, primary)
        rows[i].diff, rows[i].diff_ci = sep.diff, sep.ci
        if sep.better:
            eligible.append(i)
        else:
            ci = "undefined" if sep.ci is None else f"95% CI [{sep.ci[0]:+.4g}, {sep.ci[1]:+.4g}]"
            rows[i].reason = (f"{BEAT_PRIOR} (Δ {primary} against {board.floor} "
                              f"{'undefined' if sep.diff is None else f'{sep.diff:+.4g}'}, {ci})")
    if not eligible:
        return
    better = np.array([[p.better(i, j, primary).better if i != j else False for j in eligible] for i in eligible])
    ranks, tied = stats.display_ranks(better)
    intervals = stats.rank_intervals([p.values(i, primary) for i in eligible], direction)
    for k, i in enumerate(eligible):
        rows[i].rank, rows[i].tied, rows[i].interval = int(ranks[k]), bool(tied[k]), intervals[k]


def summary(board: HiddenBoard, rows: list[HiddenRow], chosen: list[Result], primary: str) -> tuple[str, str]:
    """(status, reason) of the verdict on the copies: "discriminates" when the best ranked method beats the floor."""
    if board.floor is None:
        why = next((n.removeprefix("unranked: ") for n in board.notes if n.startswith("unranked: ")),
                   "no built-in data prior was run on the hidden copies")
        return "undefined", why
    ranked = [i for i, r in enumerate(rows) if r.rank is not None]
    if not ranked:
        return "does not discriminate", (f"no method beats the best {board.floor_kind} ({board.floor}) on the hidden "
                                         f"copies beyond the noise")
    best = min(ranked, key=lambda i: (rows[i].rank or 0, -(rows[i].diff or 0.0)))
    r = rows[best]
    assert r.diff is not None and r.diff_ci is not None
    return "discriminates", (f"{chosen[best].submission['name']} vs the {board.floor_kind} {board.floor} on the hidden "
                             f"copies: Δ {primary} = {r.diff:+.4g}, 95% CI [{r.diff_ci[0]:+.4g}, {r.diff_ci[1]:+.4g}] "
                             "(paired bootstrap over instances and copies, + = better)")
