"""Summaries: submissions compared across boards, only where both entered.

`track_summary(boards)` / `overall(boards)`: on every board that discriminates
(`leaderboard.verdicts`), each pair of ranked methods is one comparison (the better rank wins; a tie is
half a win each way). A method that entered a board and lost there (`Row.lost`, issue #58: model-blind, its own
randomised run could not be judged, or below the floor on the hidden copies) is counted, not left out: below every
ranked method and tied with the other losers there — so a submission never gains from a board where it did not beat
the floor. Controls and references never count; a modified file, a self-reported row (its randomisation test comes
with the maintainer's re-run) and a method without a complete run on the hidden copies are not counted on that
board (nothing of their own run says they lost). A Bradley–Terry model fitted to them ranks the submissions
(`leaderboard.stats.bradley_terry`), with 95 % rank intervals from `N_BOARD_BOOT` resamples of the
boards (within each track, for `overall`, where each track's boards weigh 1 / its number of counted
boards so every track counts once). Boards that do not discriminate, and controls and references, do
not count; the summary names the boards left out and why. A method that met no other method, or
entered fewer than `MIN_SHARE` of the counted boards, is listed, not ranked; `overall` ranks one kind
of submission (explainers, or oracles) at a time, and one modality at a time where the boards differ by
modality (`overall_scopes`).

Coverage that cannot be cherry-picked (issue #45; MTEB gives no mean without every task): a summary ranks
a submission only when it entered **every** board of the summary's scope that its declared capabilities
allow (`can_enter`: the board's modality among its modalities, a white-box model if it needs gradients,
object segments if it needs them; from `Result.submission.capabilities`). One that skipped a board it could
have entered is listed with "entered k of the n boards it can enter", not ranked — whether or not that
board discriminates, so the rule does not depend on which boards the others made count. A text-only
explainer is never counted against an image board. Results written before capabilities were recorded are
taken to need what every board they entered offers (gradients, segments) and to handle the modalities of
those boards.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from leaderboard import stats
from leaderboard.boards import Board

__all__ = ["MIN_SHARE", "N_BOARD_BOOT", "SummaryRow", "TrackSummary", "can_enter", "coverage", "overall",
           "overall_explainers", "overall_scopes", "track_summary"]


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
    can_enter: int = 0  # boards of the scope its capabilities allow (all of them, counted or not)
    entered_any: int = 0  # of those, the boards it entered


@dataclass
class TrackSummary:
    """A track's Bradley–Terry summary over its boards that discriminate, and why the others are not counted."""

    track: str
    n_boards: int
    rows: list[SummaryRow]
    counted: int = 0  # boards that discriminate (the only ones compared)
    left_out: list[str] = field(default_factory=list)  # "board title: why" for each board not counted


N_BOARD_BOOT = 200  # resamples of the boards behind a summary's rank intervals


def _standing(board: Board) -> list[tuple[str, float]]:
    """(submission, place) of every method counted on the board: its rank, or below every rank (∞) where it entered
    and lost there (`Row.lost`: tied with the other losers)."""
    return [(r.submission, float(r.rank)) for r in board.rows if r.rank is not None and r.role == "method"] + \
        [(r.submission, math.inf) for r in board.rows if r.lost]


def _comparisons(board: Board, index: dict[str, int], weight: float) -> list[tuple[int, int, float]]:
    """Each pair of methods counted on the board (`_standing`): (winner, loser, weight); a tie is two half-weights."""
    rows = [(index[name], place) for name, place in _standing(board) if name in index]
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


def can_enter(capabilities: dict | None, board: Board) -> bool:
    """Whether a submission with these declared capabilities ({"modalities", "needs_gradients",
    "needs_segments"}) could be evaluated on `board` (`benchmark.submission.Submission.supports`'s rule)."""
    c = capabilities or {}
    if not board.modality or board.modality not in (c.get("modalities") or []):
        return False
    if c.get("needs_gradients") and not board.white_box:
        return False
    return not (c.get("needs_segments") and not board.segments)


def _entered(scope: list[Board], name: str) -> list[Board]:
    """The boards of `scope` holding a Result of `name` as a method (ranked or not)."""
    return [b for b in scope if any(r.submission == name and r.role == "method" for r in b.rows)]


def _declared(scope: list[Board], name: str) -> dict:
    """The capabilities `name`'s Results record; for older Results, what every board it entered offers."""
    for b in scope:
        for r in b.rows:
            if r.submission == name and r.capabilities is not None:
                return r.capabilities
    boards = _entered(scope, name)
    return {"modalities": sorted({b.modality for b in boards if b.modality}),
            "needs_gradients": bool(boards) and all(b.white_box for b in boards),
            "needs_segments": bool(boards) and all(b.segments for b in boards)}


def coverage(scope: list[Board], name: str) -> tuple[int, int, list[str]]:
    """(boards of `scope` it can enter, how many of those it entered, the titles of those it skipped)."""
    caps = _declared(scope, name)
    can = [b for b in scope if can_enter(caps, b)]
    entered = {id(b) for b in _entered(scope, name)}
    skipped = [b.title for b in can if id(b) not in entered]
    return len(can), len(can) - len(skipped), skipped


def _bt_rows(strata: list[list[Board]], weights: list[float], total: int | None = None,
             kind: str | None = None, scope: list[Board] | None = None) -> list[SummaryRow]:
    """Bradley–Terry summary of the methods on `strata` (lists of counted boards; stratum s's boards
    weigh weights[s]); rank intervals from resampling boards within each stratum.

    Rules (issue #36): a method is *ranked* only when it met another method on some board (else its
    strength is the prior's, θ = 0, which says nothing) and entered at least `MIN_SHARE` of the counted
    boards (`total`, default all of `strata`'s); and (issue #45) when it entered every board of `scope` (the
    summary's boards, counted or not; default the counted ones) that its capabilities allow (`coverage`). The
    others are listed after the ranked rows, rank None, with the reason; so is a method found model-blind on
    every board of the scope it entered (`leaderboard.randomisation`).
    In a board resample a method is present when it has a comparison there; two methods are compared
    only over the resamples where both are present (j ahead of i when θ_j > θ_i in ≥ 97.5 % of those, and
    at least half the resamples hold both), and a method's rank interval comes only from the resamples
    that hold it, its rank there counted among the ranked methods present. Fewer than 2 counted boards:
    no interval (resampling one board gives the same board every time, a point, not an interval)."""
    boards = [b for st in strata for b in st]
    scope = boards if scope is None else scope
    names = sorted({r.submission for b in boards for r in b.rows if (r.rank is not None and r.role == "method"
                                                                      or r.lost) and (kind is None or r.kind == kind)}
                   | {r.submission for b in scope for r in b.rows if r.blind and (kind is None or r.kind == kind)})
    if not names:
        return []
    index = {n: k for k, n in enumerate(names)}
    n_items = len(names)
    total = len(boards) if total is None else total

    def comparisons(chosen: list[list[Board]]) -> list[tuple[int, int, float]]:
        return [c for st, w in zip(chosen, weights) for b in st for c in _comparisons(b, index, w)]

    rng = np.random.default_rng(0)
    resamples = [[[st[j] for j in rng.integers(0, len(st), len(st))] if st else [] for st in strata]
                 for _ in range(N_BOARD_BOOT)]
    # the board's fit and its resamples' fits side by side (`bradley_terry_many`: the same numbers as one by one)
    thetas = np.log(stats.bradley_terry_many(n_items, [comparisons(c) for c in [strata, *resamples]]))
    theta, met = thetas[0], _present(boards, index)
    parts: dict[str, dict[str, float]] = {n: {} for n in names}
    for b in boards:
        for name, place in _standing(b):
            if name in index:
                parts[name][b.title] = place
    entered = np.array([len(parts[n]) for n in names])
    covered = {n: coverage(scope, n) for n in names}
    complete = np.array([not covered[n][2] for n in names])
    blind_only = np.array([_blind_everywhere(scope, n) for n in names])
    rankable = met & (entered >= MIN_SHARE * total) & complete & ~blind_only
    draws = thetas[1:]  # (B, n)
    here = np.array([_present([b for st in c for b in st], index) for c in resamples]) & rankable[None, :]
    # (B, n): present and rankable in the draw
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
                       "" if rankable[k] else _why_listed(scope, n, covered[n], bool(met[k]), int(entered[k]), total),
                       covered[n][0], covered[n][1])
            for k, n in enumerate(names)]
    rows.sort(key=lambda r: (r.rank is None, r.rank or 0, -r.strength, r.submission))
    return rows


def _blind_everywhere(scope: list[Board], name: str) -> bool:
    """Whether `name` was found model-blind on every board of `scope` it entered as a method: no explainer."""
    mine = [r for b in _entered(scope, name) for r in b.rows if r.submission == name and r.role == "method"]
    return bool(mine) and all(r.blind for r in mine)


def _why_listed(scope: list[Board], name: str, covered: tuple[int, int, list[str]], met: bool, entered: int,
                total: int) -> str:
    """Why `name` is listed, not ranked (the first rule it fails)."""
    can, got, skipped = covered
    if skipped:
        return f"entered {got} of the {can} boards it can enter (not {', '.join(skipped)})"
    if _blind_everywhere(scope, name):
        mine = [b for b in _entered(scope, name)]
        return f"model-blind on every board it entered ({len(mine)}): its maps do not depend on the model"
    if not met:
        return "met no other method: its strength is the prior's"
    return f"entered {entered} of {total} boards (< {MIN_SHARE:.0%})"


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
        out.append(TrackSummary(track, len(per_track[track]),
                                _bt_rows([kept], [1.0], scope=per_track[track]) if kept else [], len(kept), left))
    return out


def overall(boards: Iterable[Board], kind: str = "explainer", modality: str | None = None) -> list[SummaryRow]:
    """The methods of one `kind` (explainers, or oracles: they never meet on a board and do different
    jobs, so they are never ranked in one list) ranked by one Bradley–Terry model over every track's
    boards that discriminate and hold that kind (of one `modality`, when given), each track weighing the
    same (its boards weigh 1 / its number of counted boards); `entered` / `total` count those boards, and a
    method that entered fewer than `MIN_SHARE` of them, or skipped one of the scope's boards it could enter,
    is listed, not ranked (`_bt_rows`)."""
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        if any(r.kind == kind and r.role == "method" for r in b.rows) and modality in (None, b.modality):
            per_track[b.track].append(b)
    strata = [s for s in (_counted(per_track[t])[0] for t in sorted(per_track)) if s]
    if not strata:
        return []
    scope = [b for t in sorted(per_track) for b in per_track[t]]
    return _bt_rows(strata, [1.0 / len(s) for s in strata], kind=kind, scope=scope)


def overall_scopes(boards: Iterable[Board]) -> list[tuple[str, str | None]]:
    """The overall tables to show, as (kind, modality): per kind (explainer, oracle) that some board holds, one
    table — or one per modality where that kind's boards differ by modality (None: all of them)."""
    boards = list(boards)
    out: list[tuple[str, str | None]] = []
    for kind in ("explainer", "oracle"):
        holding = [b for b in boards if any(r.kind == kind and r.role == "method" for r in b.rows)]
        mods = sorted({b.modality for b in holding})
        if len(mods) > 1:
            out += [(kind, m) for m in mods]
        elif holding:
            out.append((kind, None))
    return out


def overall_explainers(boards: Iterable[Board]) -> list[tuple[str | None, list[SummaryRow]]]:
    """The overall explainer tables the site shows: (modality, or None for all boards, its rows) per
    `overall_scopes`."""
    boards = list(boards)
    return [(modality, overall(boards, kind, modality)) for kind, modality in overall_scopes(boards)
            if kind == "explainer"]
