"""Agreement: how far a board's other metrics rank its methods as the primary metric does.

* `metric_agreement`: Kendall τ-b between the primary metric's ranking of the methods and each other
  metric's (`leaderboard.stats.agreement`); `Board.disagreeing` names those below `AGREEMENT_FLOOR`.
* `all_metric_ranks`: the methods' mean normalised rank across every metric (LATEC-style), a secondary
  ranking beside the primary one (`Row.all_metric` / `Row.all_metric_rank`).
"""

from __future__ import annotations

from leaderboard import stats
from leaderboard.ranks import Paired, competition_ranks

__all__ = ["AGREEMENT_FLOOR", "all_metric_ranks", "metric_agreement"]

AGREEMENT_FLOOR = 0.5  # Kendall τ below this: the primary metric disagrees with that metric


def metric_agreement(p: Paired, methods: list[int], names: list[str], primary: str
                     ) -> dict[str, tuple[float | None, str]]:
    """metric -> (Kendall τ-b with the primary metric's ranking of the methods, or None, and why not)."""
    direction = p.directions[primary]
    return {m: stats.agreement([p.points[primary][i] for i in methods], [p.points[m][i] for i in methods],
                               direction, p.directions[m])
            for m in names if m != primary}


def all_metric_ranks(p: Paired, methods: list[int], names: list[str], k: int
                     ) -> tuple[list[float | None], list[int | None]]:
    """Per row of the `k`, (mean normalised rank over every metric, the methods' order by it); None for a
    row that is not a method or that no metric values, and for every row when fewer than 2 have a value."""
    nr = stats.mean_normalised_rank({m: [p.points[m][i] for i in methods] for m in names},
                                    {m: p.directions[m] for m in names}) if methods else []
    all_metric: list[float | None] = [None] * k
    all_rank: list[int | None] = [None] * k
    present = [(i, v) for i, v in zip(methods, nr) if v is not None]
    if len(present) >= 2:
        cr = competition_ranks([v for _, v in present], "lower")
        for (i, v), rank in zip(present, cr):
            all_metric[i], all_rank[i] = v, rank
    return all_metric, all_rank
