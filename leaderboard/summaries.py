"""Summaries: submissions compared across boards, only where both entered.

`track_summary(boards)` / `overall(boards)`: on every board that discriminates
(`leaderboard.verdicts`), each pair of ranked methods is one comparison (the better rank wins; a tie is
half a win each way); a Bradley–Terry model fitted to them ranks the submissions
(`leaderboard.stats.bradley_terry`), with 95 % rank intervals from `N_BOARD_BOOT` resamples of the
boards (within each track, for `overall`, where each track's boards weigh 1 / its number of counted
boards so every track counts once). Boards that do not discriminate, and controls and references, do
not count; the summary names the boards left out and why. A method that met no other method, or
entered fewer than `MIN_SHARE` of the counted boards, is listed, not ranked; `overall` ranks one kind
of submission (explainers, or oracles) at a time.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from leaderboard import stats
from leaderboard.boards import Board

__all__ = ["MIN_SHARE", "N_BOARD_BOOT", "SummaryRow", "TrackSummary", "overall", "track_summary"]


@dataclass
class SummaryRow:
    """A submission in a track summary or the overall ranking (Bradley–Terry over shared boards)."""

    rank: int | None  # None: listed, not ranked (`unranked` says why)
    submission: str
    strength: float  # log Bradley–Terry strength (0 = the prior's reference; higher is better)
    entered: int  # counted boards entered
    total: int  # counted boards (that discriminate) in the track / overall
    wins: float  # share of its pairwise comparisons on shared boards that it won (a tie counts half)
    interval: tuple[int, int] | None = None  # 95 % rank interval over the board resamples that hold it
    tied: bool = False
    parts: dict[str, float] = field(default_factory=dict)  # board title -> its rank there
    unranked: str = ""  # why it is listed, not ranked ("" = ranked)


@dataclass
class TrackSummary:
    """A track's Bradley–Terry summary over its boards that discriminate, and why the others are not counted."""

    track: str
    n_boards: int
    rows: list[SummaryRow]
    counted: int = 0  # boards that discriminate (the only ones compared)
    left_out: list[str] = field(default_factory=list)  # "board title: why" for each board not counted


N_BOARD_BOOT = 200  # resamples of the boards behind a summary's rank intervals


def _comparisons(board: Board, index: dict[str, int], weight: float) -> list[tuple[int, int, float]]:
    """Each pair of ranked methods on the board: (winner, loser, weight); a tie is two half-weights."""
    rows = [(index[r.submission], r.rank) for r in board.rows
            if r.rank is not None and r.role == "method" and r.submission in index]
    out: list[tuple[int, int, float]] = []
    for a in range(len(rows)):
        for b in range(a + 1, len(rows)):
            (i, rank_i), (j, rank_j) = rows[a], rows[b]
            if rank_i < rank_j:
                out.append((i, j, weight))
            elif rank_j < rank_i:
                out.append((j, i, weight))
            else:
                out += [(i, j, weight / 2), (j, i, weight / 2)]
    return out


def _counted(boards: list[Board]) -> tuple[list[Board], list[str]]:
    """(boards that discriminate, "title: why" for each left out)."""
    kept = [b for b in boards if b.verdict.discriminates]
    left = [f"{b.title}: {b.verdict.status} ({b.verdict.reason})" for b in boards if not b.verdict.discriminates]
    return kept, left


MIN_SHARE = 0.5  # a submission that entered fewer than this share of the counted boards is listed, not ranked


def _present(boards: list[Board], index: dict[str, int]) -> np.ndarray:
    """(n,) bool: the methods with at least one comparison on `boards` (a strength that is not the prior's)."""
    out = np.zeros(len(index), dtype=bool)
    for b in boards:
        for win, lose, _w in _comparisons(b, index, 1.0):
            out[win] = out[lose] = True
    return out


def _bt_rows(strata: list[list[Board]], weights: list[float], total: int | None = None,
             kind: str | None = None) -> list[SummaryRow]:
    """Bradley–Terry summary of the methods on `strata` (lists of counted boards; stratum s's boards
    weigh weights[s]); rank intervals from resampling boards within each stratum.

    Rules (issue #36): a method is *ranked* only when it met another method on some board (else its
    strength is the prior's, θ = 0, which says nothing) and entered at least `MIN_SHARE` of the counted
    boards (`total`, default all of `strata`'s); the others are listed after the ranked rows, rank None.
    In a board resample a method is present when it has a comparison there; two methods are compared
    only over the resamples where both are present (j ahead of i when θ_j > θ_i in ≥ 97.5 % of those, and
    at least half the resamples hold both), and a method's rank interval comes only from the resamples
    that hold it, its rank there counted among the ranked methods present. Fewer than 2 counted boards:
    no interval (resampling one board gives the same board every time, a point, not an interval)."""
    boards = [b for st in strata for b in st]
    names = sorted({r.submission for b in boards for r in b.rows if r.rank is not None and r.role == "method"
                    and (kind is None or r.kind == kind)})
    if not names:
        return []
    index = {n: k for k, n in enumerate(names)}
    n_items = len(names)
    total = len(boards) if total is None else total

    def fit(chosen: list[list[Board]]) -> tuple[np.ndarray, np.ndarray]:
        comps = [c for st, w in zip(chosen, weights) for b in st for c in _comparisons(b, index, w)]
        return np.log(stats.bradley_terry(n_items, comps)), _present([b for st in chosen for b in st], index)

    theta, met = fit(strata)
    parts: dict[str, dict[str, float]] = {n: {} for n in names}
    for b in boards:
        for r in b.rows:
            if r.rank is not None and r.role == "method" and r.submission in index:
                parts[r.submission][b.title] = float(r.rank)
    entered = np.array([len(parts[n]) for n in names])
    rankable = met & (entered >= MIN_SHARE * total)
    rng = np.random.default_rng(0)
    fits = [fit([[st[j] for j in rng.integers(0, len(st), len(st))] if st else [] for st in strata])
            for _ in range(N_BOARD_BOOT)]
    draws = np.array([f[0] for f in fits])  # (B, n)
    here = np.array([f[1] for f in fits]) & rankable[None, :]  # (B, n): present and rankable in the draw
    idx = [k for k in range(n_items) if rankable[k]]
    behind = np.zeros((len(idx), len(idx)), dtype=bool)
    for a, i in enumerate(idx):
        for c, j in enumerate(idx):
            both = here[:, i] & here[:, j]
            if i != j and both.sum() >= 0.5 * N_BOARD_BOOT:
                behind[a, c] = stats.larger_share(draws[both, j], draws[both, i]) >= 0.975
    r_ranked, t_ranked = stats.display_ranks(behind) if idx else ([], [])
    ranks: list[int | None] = [None] * n_items
    tied = [False] * n_items
    ivs: list[tuple[int, int] | None] = [None] * n_items
    for a, i in enumerate(idx):
        ranks[i], tied[i] = r_ranked[a], t_ranked[a]
        rows_i = here[:, i]
        if total >= 2 and rows_i.any():
            key = np.where(here, draws, -np.inf)
            rk = 1 + np.sum(key[rows_i] > key[rows_i, i][:, None] + 1e-9 * (1 + np.abs(key[rows_i, i][:, None])),
                            axis=1)
            lo, hi = np.quantile(rk, [0.025, 0.975])
            ivs[i] = (int(math.floor(lo)), int(math.ceil(hi)))
    wins = np.zeros(n_items)
    games = np.zeros(n_items)
    for st, _w in zip(strata, weights):  # the raw wins are unweighted
        for b in st:
            for win, lose, wt in _comparisons(b, index, 1.0):
                wins[win] += wt
                games[win] += wt
                games[lose] += wt
    rows = [SummaryRow(ranks[k], n, float(theta[k]), int(entered[k]), total,
                       float(wins[k] / games[k]) if games[k] else float("nan"), ivs[k], tied[k],
                       dict(sorted(parts[n].items())),
                       "" if rankable[k] else (f"entered {entered[k]} of {total} boards (< {MIN_SHARE:.0%})"
                                               if met[k] else "met no other method: its strength is the prior's"))
            for k, n in enumerate(names)]
    rows.sort(key=lambda r: (r.rank is None, r.rank or 0, -r.strength, r.submission))
    return rows


def track_summary(boards: Iterable[Board]) -> list[TrackSummary]:
    """Per track (sorted by name): the methods ranked by a Bradley–Terry model of their pairwise
    results on the track's boards that discriminate (see the module docstring); `left_out` names the
    boards not counted and why."""
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        per_track[b.track].append(b)
    out = []
    for track in sorted(per_track):
        kept, left = _counted(per_track[track])
        out.append(TrackSummary(track, len(per_track[track]), _bt_rows([kept], [1.0]) if kept else [], len(kept),
                                left))
    return out


def overall(boards: Iterable[Board], kind: str = "explainer") -> list[SummaryRow]:
    """The methods of one `kind` (explainers, or oracles: they never meet on a board and do different
    jobs, so they are never ranked in one list) ranked by one Bradley–Terry model over every track's
    boards that discriminate and hold that kind, each track weighing the same (its boards weigh 1 / its
    number of counted boards); `entered` / `total` count those boards, and a method that entered fewer
    than `MIN_SHARE` of them is listed, not ranked (`_bt_rows`)."""
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        if any(r.kind == kind and r.role == "method" for r in b.rows):
            per_track[b.track].append(b)
    strata = [s for s in (_counted(per_track[t])[0] for t in sorted(per_track)) if s]
    if not strata:
        return []
    return _bt_rows(strata, [1.0 / len(s) for s in strata], kind=kind)
