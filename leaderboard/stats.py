"""The statistics behind a board's conclusions: pure functions over arrays, no Results, no I/O.

* `separations(draws, direction)` — paired-bootstrap comparisons: submission j is *significantly
  better* than i when the 95 % percentile interval of the paired difference (j − i, oriented so that
  positive = better) lies above 0. Draws where either value is undefined are dropped; with fewer than
  half the draws defined a pair is not separated.
* `display_ranks(better)` — rank_i = 1 + #{j significantly better than i} (as Chatbot Arena ranks its
  models): rows the data cannot separate share a rank. `tied` marks ranks held by several rows.
* `rank_intervals(draws, direction)` — the 95 % interval of each row's competition rank over draws.
* `agreement(primary, other, direction_p, direction_o)` — Kendall τ-b between two metrics' rankings
  of the same rows (oriented so that 1 = the same order), `None` with the reason when undefined.
* `mean_normalised_rank(values, directions)` — LATEC's aggregation across metrics (Klein et al.,
  NeurIPS 2024): each metric ranks the rows (average ranks for ties), ranks are normalised to [0, 1]
  (0 = best) and averaged over the metrics a row has a value for.
* `bradley_terry(n_items, comparisons)` — strengths π of the Bradley–Terry model
  P(i beats j) = π_i / (π_i + π_j), fitted to weighted wins by Hunter's (2004) MM algorithm
  π_i ← W_i / Σ_j N_ij / (π_i + π_j), with a virtual item of strength 1 against which every item has
  `prior` wins and `prior` losses (it keeps the fit finite when one item wins every comparison and
  ties items that never met to the same reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

__all__ = ["LEVEL", "Separation", "agreement", "bradley_terry", "bradley_terry_many", "display_ranks",
           "mean_normalised_rank", "oriented", "rank_intervals", "separations"]

LEVEL = 0.95
MIN_DEFINED = 0.5  # share of draws that must be defined for a comparison to count


def oriented(values: np.ndarray, direction: str) -> np.ndarray:
    """Values turned so that larger is better (lower-is-better metrics negated)."""
    v = np.asarray(values, dtype=np.float64)
    return -v if direction == "lower" else v


@dataclass(frozen=True)
class Separation:
    """The paired comparison of two rows: `diff` = oriented (j − i) point difference, `ci` its
    bootstrap interval (None: undefined), `better` whether j is significantly better than i."""

    diff: float | None
    ci: tuple[float, float] | None
    better: bool


def compare(draws_i: np.ndarray, draws_j: np.ndarray, point_i: float | None, point_j: float | None,
            direction: str, level: float = LEVEL) -> Separation:
    """Is j better than i beyond the noise of the paired draws?"""
    if point_i is None or point_j is None:
        return Separation(None, None, False)
    diff = float(oriented(np.array([point_j - point_i]), direction)[0])
    d = oriented(np.asarray(draws_j, dtype=np.float64) - np.asarray(draws_i, dtype=np.float64), direction)
    d = d[np.isfinite(d)]
    if d.size < max(2, MIN_DEFINED * len(draws_i)):
        return Separation(diff, None, False)
    lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
    return Separation(diff, (float(lo), float(hi)), bool(lo > 0))


def separations(draws: Sequence[np.ndarray], points: Sequence[float | None], direction: str,
                level: float = LEVEL) -> np.ndarray:
    """(k, k) bool: better[i, j] = row j is significantly better than row i."""
    k = len(draws)
    out = np.zeros((k, k), dtype=bool)
    for i in range(k):
        for j in range(k):
            if i != j:
                out[i, j] = compare(draws[i], draws[j], points[i], points[j], direction, level).better
    return out


def larger_share(a: np.ndarray, b: np.ndarray, rel: float = 1e-6) -> float:
    """The share of paired draws in which a exceeds b by more than rounding (|difference| > rel·(1 + |b|)),
    so two items a fit cannot tell apart are never ordered by its floating-point noise."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.mean(a > b + rel * (1.0 + np.abs(b)))) if a.size else 0.0


def display_ranks(better: np.ndarray, groups: Sequence[int] | None = None) -> tuple[list[int], list[bool]]:
    """(rank, tied) per row: rank_i = 1 + #rows of an earlier group + #rows of its own group that are
    significantly better (`better[i, j]`); `groups` (default all 0) orders blocks of rows, e.g. rows
    that pass a ranking gate (0) before those that do not (1). Tied: another row shares the rank."""
    k = len(better)
    g = np.zeros(k, dtype=int) if groups is None else np.asarray(groups, dtype=int)
    ranks = []
    for i in range(k):
        ahead = int(np.sum(g < g[i]))
        same = int(np.sum((g == g[i]) & better[i]))
        ranks.append(1 + ahead + same)
    counts = {r: ranks.count(r) for r in ranks}
    return ranks, [counts[r] > 1 for r in ranks]


def rank_intervals(draws: Sequence[np.ndarray], direction: str, groups: Sequence[int] | None = None,
                   level: float = LEVEL) -> list[tuple[int, int] | None]:
    """The `level` interval of each row's competition rank over the bootstrap draws (an undefined
    value ranks last in its draw; `groups` as in `display_ranks`). None for a row with no defined draw."""
    if not draws:
        return []
    m = np.vstack([oriented(np.asarray(d, dtype=np.float64), direction) for d in draws])  # (k, B)
    k, b = m.shape
    g = np.zeros(k, dtype=int) if groups is None else np.asarray(groups, dtype=int)
    key = np.where(np.isfinite(m), m, -np.inf)
    ranks = np.empty((k, b))
    for i in range(k):
        ahead = np.sum(g < g[i])
        same = (g == g[i])[:, None] & (key > key[i][None, :])
        ranks[i] = 1 + ahead + same.sum(0)
    out: list[tuple[int, int] | None] = []
    for i in range(k):
        if not np.isfinite(m[i]).any():
            out.append(None)
            continue
        lo, hi = np.quantile(ranks[i], [(1 - level) / 2, (1 + level) / 2])
        out.append((int(math.floor(lo)), int(math.ceil(hi))))
    return out


def agreement(primary: Sequence[float | None], other: Sequence[float | None], direction_primary: str,
              direction_other: str) -> tuple[float | None, str]:
    """(Kendall τ-b, "") between two metrics' orderings of the same rows, oriented so τ = 1 means the
    same order of better rows; (None, reason) with fewer than 3 rows valued by both or a constant."""
    pairs = [(p, o) for p, o in zip(primary, other) if p is not None and o is not None
             and math.isfinite(p) and math.isfinite(o)]
    if len(pairs) < 3:
        return None, f"{len(pairs)} submission(s) valued by both metrics (τ needs 3)"
    p = oriented(np.array([a for a, _ in pairs]), direction_primary)
    o = oriented(np.array([b for _, b in pairs]), direction_other)
    if np.ptp(p) == 0 or np.ptp(o) == 0:
        return None, "one metric gives every submission the same value"
    tau = stats.kendalltau(p, o, variant="b").statistic
    return (None, "undefined") if not math.isfinite(tau) else (float(tau), "")


def mean_normalised_rank(values: dict[str, Sequence[float | None]], directions: dict[str, str]) -> list[float | None]:
    """Per row, the mean over metrics of its normalised rank (r − 1)/(k − 1) among the k rows the
    metric values (average ranks for ties; 0 = best); metrics valuing fewer than 2 rows are skipped.
    None for a row no metric values."""
    n = len(next(iter(values.values()))) if values else 0
    total, count = np.zeros(n), np.zeros(n)
    for name, vals in values.items():
        idx = [i for i, v in enumerate(vals) if v is not None and math.isfinite(v)]
        if len(idx) < 2:
            continue
        v = oriented(np.array([vals[i] for i in idx]), directions[name])
        r = stats.rankdata(-v, method="average")
        for pos, i in enumerate(idx):
            total[i] += (r[pos] - 1) / (len(idx) - 1)
            count[i] += 1
    return [float(total[i] / count[i]) if count[i] else None for i in range(n)]


def bradley_terry(n_items: int, comparisons: Sequence[tuple[int, int, float]], prior: float = 0.5,
                  tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Strengths π (n_items,) from weighted comparisons (winner, loser, weight); a draw is two
    half-weight comparisons, one each way. See the module docstring for the MM update and the prior."""
    return bradley_terry_many(n_items, [comparisons], prior, tol, max_iter)[0]


def bradley_terry_many(n_items: int, sets: Sequence[Sequence[tuple[int, int, float]]], prior: float = 0.5,
                       tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """`bradley_terry` of each set of comparisons, (len(sets), n_items), fitted side by side: one MM update of
    every set still moving per step, each set stopped at its own convergence — the same numbers, bit for bit, as
    fitting the sets one by one (each set's arithmetic is unchanged; a board summary's bootstrap fits its
    resamples this way)."""
    wins = np.full((len(sets), n_items), float(prior))  # the virtual item's `prior` losses are wins of each item
    games = np.zeros((len(sets), n_items, n_items))
    for s, comparisons in enumerate(sets):
        for winner, loser, weight in comparisons:
            wins[s, winner] += weight
            games[s, winner, loser] += weight
            games[s, loser, winner] += weight
    pi = np.ones((len(sets), n_items))
    moving = np.arange(len(sets))
    for _ in range(max_iter):
        if not len(moving):
            break
        p = pi[moving]
        den = (games[moving] / (p[:, :, None] + p[:, None, :])).sum(2) + 2 * prior / (p + 1.0)
        new = wins[moving] / den
        pi[moving] = new
        moving = moving[np.max(np.abs(np.log(new) - np.log(p)), axis=1) >= tol]
    return pi
