"""Paired ranks: how a board's methods are ranked, and how sure the ranks are.

* Ranks come from a paired bootstrap (`benchmark.bootstrap`: 1,000 draws of the instances — or of
  the track's resampling units — with seed 0, the same draws for every row; seeds resampled too
  where a Result holds several seed runs; `Paired`). A row's rank is 1 + the number of methods
  significantly better than it (the 95 % interval of the paired difference excludes 0;
  `leaderboard.stats`), so rows the data cannot separate share a rank and are marked `tied`;
  `Row.interval` is the 95 % interval of its rank over the draws (`method_ranks`).
* Results without per-instance scores (older schemas) leave the board with point ranks (equal means
  share a rank, competition style: 1, 1, 3; `competition_ranks`), no intervals, and a note saying
  why. A submission without a mean (every instance failed) ranks last.
* Methods below a ranking gate (`leaderboard.verdicts`) rank after every method that passes it.
* A board with methods but no built-in control Result is not ranked at all (`NO_FLOOR`): nothing on it says
  what an answer that ignores the input scores there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmark.errors import XaibenchError
from benchmark.store.results import Result
from leaderboard import stats
from leaderboard.selection import sub_label

__all__ = ["NO_FLOOR", "Paired", "competition_ranks", "method_ranks", "paired"]

NO_FLOOR = ("unranked: no control Result on this board from a built-in's code (`leaderboard.floors`), so nothing says "
            "what an answer that ignores the input scores here (its floor) — evaluate a built-in control on it (e.g. "
            "`xaibench evaluate random`, `uniform` or, for text, `position`) and the board is ranked")


def competition_ranks(values: list[float | None], direction: str) -> list[int]:
    """Competition ranks (1, 1, 3) of `values`; None ranks after every number (all share it)."""
    sign = 1.0 if direction == "lower" else -1.0
    # round away float noise so that means equal to 12 significant digits tie
    keys = [None if v is None else float(f"{sign * v:.12g}") for v in values]
    present = [k for k in keys if k is not None]
    ranks = []
    for k in keys:
        if k is None:
            ranks.append(len(present) + 1)
        else:
            ranks.append(1 + sum(1 for other in present if other < k))
    return ranks


@dataclass
class Paired:
    """A board's rows compared in pairs: every metric's point value per row and, when the rows carry
    per-instance scores, their values under the board's shared bootstrap draws (`draws`; None with
    the reason in `why`)."""

    points: dict[str, list[float | None]]  # metric -> the rows' means
    directions: dict[str, str]  # metric -> "lower" / "higher"
    draws: list[dict[str, np.ndarray]] | None  # per row, {metric: (B,) values}; None: point values only
    why: str = ""  # why there are no draws

    def values(self, i: int, m: str) -> np.ndarray:
        """Row i's (B,) draws of metric m (NaN where the row has none)."""
        assert self.draws is not None
        return self.draws[i].get(m, np.full(len(next(iter(self.draws[i].values()))), np.nan))

    def better(self, i: int, j: int, m: str) -> stats.Separation:
        """Is row j better than row i on m (paired bootstrap, or the point values without draws)?"""
        pi, pj = self.points[m][i], self.points[m][j]
        if self.draws is None:
            if pi is None or pj is None:
                return stats.Separation(None, None, False)
            diff = float(stats.oriented(np.array([pj - pi]), self.directions[m])[0])
            return stats.Separation(diff, None, diff > 0)
        return stats.compare(self.values(i, m), self.values(j, m), pi, pj, self.directions[m])


def paired(track: str, chosen: list[Result], names: list[str], directions: dict[str, str]) -> Paired:
    """The rows `chosen` of a board, compared on the metrics `names` under its shared draws."""
    points = {m: [(r.metrics[m].mean if m in r.metrics else None) for r in chosen] for m in names}
    draws, why = _draws(track, chosen)
    return Paired(points, directions, draws, why)


def _draws(track: str, chosen: list[Result]) -> tuple[list[dict[str, np.ndarray]] | None, str]:
    """Per result, {metric: (B,) values} under the board's shared bootstrap draws — or (None, why not)."""
    from benchmark import bootstrap
    from benchmark.tracks import get_track

    if not chosen:
        return None, "nothing ranked"
    try:
        trk = get_track(track)
    except XaibenchError:
        return None, f"the track '{track}' is not installed here, so its results cannot be resampled"
    per = []
    for r in chosen:
        try:
            sc = r.scores()
        except XaibenchError as exc:
            return None, f"{sub_label(r)}: {exc}"
        if sc is None and "live" in (r.extra or {}):
            return None, (f"{sub_label(r)} is a live attack: its scored texts differ from explainer to explainer, so "
                          "there is no shared instance to resample in pairs (its metrics keep their own intervals)")
        if sc is None:
            return None, (f"{sub_label(r)} carries no per-instance scores (written by an older xaibench); "
                          "re-run `xaibench evaluate` for it")
        per.append(sc)
    n = chosen[0].n_instances
    try:
        weights = bootstrap.draw_weights(trk.units(per[0].seed(0)[0], n))
        out = []
        for sc in per:
            runs = [sc.seed(k) for k in range(len(sc.seeds))]
            out.append(bootstrap.metric_draws(trk, runs, weights, bootstrap.draw_seed_weights(len(runs))))
    except (ValueError, KeyError, IndexError) as exc:
        return None, f"the per-instance scores could not be resampled ({type(exc).__name__}: {exc})"
    return out, ""


def method_ranks(p: Paired, methods: list[int], groups: dict[int, int], primary: str, direction: str
                 ) -> tuple[list[int], list[bool], list[tuple[int, int] | None]]:
    """(rank, tied, 95 % rank interval) of each of `methods`, in their order, on the primary metric.
    `groups`: 0 = passes the gate, 1 = below it, 2 = no primary value; a group ranks after the ones
    before it. With draws: 1 + the methods significantly better; without: competition ranks of the
    means, no intervals."""
    if p.draws is not None:
        sep = np.array([[p.better(i, j, primary).better if i != j else False for j in methods] for i in methods])
        r, t = stats.display_ranks(sep, [groups[i] for i in methods])
        ivs = stats.rank_intervals([p.values(i, primary) for i in methods], direction, [groups[i] for i in methods])
        return list(r), list(t), list(ivs)
    order = [(groups[i], p.points[primary][i]) for i in methods]
    ranks = []
    for g, v in order:
        ahead = sum(1 for g2, _ in order if g2 < g)
        same = [v2 for g2, v2 in order if g2 == g]
        ranks.append(ahead + competition_ranks(same, direction)[same.index(v)])
    return ranks, [ranks.count(x) > 1 for x in ranks], [None] * len(methods)
