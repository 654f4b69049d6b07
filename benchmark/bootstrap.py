"""Paired cluster bootstrap over instances (and seeds) for boards and multi-seed Results.

A draw b gives every instance i a multiplicity w_bi: the resampling units (`Track.units`; by default
each instance its own) are drawn with replacement, k of k, and each instance inherits the count of
its unit. Every submission on a board is evaluated under the *same* draws (a paired bootstrap), so a
difference between two submissions is judged on the same resampled instances. `keep` narrows the
pool to the units that hold a kept instance (k = their number): the trust track's pooled metrics
resample the judged predictions only (a failed one weighs 0), the robustness track's ACC the attacked
samples with a scored text. Every track draws through `draw_weights`, so one seed gives one set of draws.

With several seed runs (S > 1) a draw also resamples the seeds, S of S with replacement (multiplicities
v_bs), and a metric's value under the draw is the v-weighted mean over seeds of the track's estimate
under w: value_b = Σ_s v_bs·est_s(w_b) / Σ_s v_bs.

Percentile intervals: the (1 ∓ level)/2 quantiles of the finite draws (Efron & Tibshirani 1993, §13.3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["N_BOOT", "SEED", "draw_weights", "draw_seed_weights", "metric_draws", "percentile_interval"]

N_BOOT = 1000  # draws per board
SEED = 0  # boards are deterministic: the same results give the same intervals


def draw_weights(units: np.ndarray, keep: np.ndarray | None = None, n_boot: int = N_BOOT,
                 seed: int = SEED) -> np.ndarray:
    """(n_boot, n) multiplicities of n instances whose resampling unit is `units[i]`: the pool — every
    unit, or (`keep`, a boolean per instance) the units holding a kept instance, in sorted order — is
    drawn with replacement, as many draws as it has units (one `integers(0, k, (n_boot, k))` call of
    `default_rng(seed)`), and each instance counts as often as its unit was drawn (0 outside the pool)."""
    units = np.asarray(units)
    n = units.size
    if n == 0:
        return np.zeros((n_boot, 0))
    _, inverse = np.unique(units, return_inverse=True)
    inverse = inverse.reshape(-1)
    k = int(inverse.max()) + 1
    if keep is None:
        pool = np.arange(k)
    else:
        held = np.zeros(k, dtype=bool)
        held[inverse[np.asarray(keep, dtype=bool).reshape(-1)]] = True
        pool = np.flatnonzero(held)
    if pool.size == 0:
        return np.zeros((n_boot, n))
    picks = np.random.default_rng(seed).integers(0, pool.size, size=(n_boot, pool.size))
    cells = (np.arange(n_boot)[:, None] * k + pool[picks]).reshape(-1)  # (draw, unit) as one index
    counts = np.bincount(cells, minlength=n_boot * k).reshape(n_boot, k).astype(np.float64)
    return counts[:, inverse]


def draw_seed_weights(n_seeds: int, n_boot: int = N_BOOT, seed: int = SEED) -> np.ndarray:
    """(n_boot, S) multiplicities of S seed runs (all ones when S = 1)."""
    if n_seeds <= 1:
        return np.ones((n_boot, max(1, n_seeds)))
    rng = np.random.default_rng([seed, 1])
    picks = rng.integers(0, n_seeds, size=(n_boot, n_seeds))
    counts = np.zeros((n_boot, n_seeds))
    np.add.at(counts, (np.repeat(np.arange(n_boot), n_seeds), picks.ravel()), 1.0)
    return counts


def metric_draws(track: Any, per_seed: list[tuple[dict[str, np.ndarray], np.ndarray]], weights: np.ndarray,
                 seed_weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """{metric: (B,)} values of every metric of `track` under instance multiplicities `weights` (B, n)
    and seed multiplicities `seed_weights` (B, S; None = every seed once), over the seed runs
    `per_seed` [(scores, ok), …] (NaN where undefined)."""
    w = np.asarray(weights, dtype=np.float64)
    b = w.shape[0]
    v = np.ones((b, len(per_seed))) if seed_weights is None else np.asarray(seed_weights, dtype=np.float64)
    num: dict[str, np.ndarray] = {}
    den: dict[str, np.ndarray] = {}
    for s, (scores, ok) in enumerate(per_seed):
        est = track.estimate(scores, np.asarray(ok, dtype=bool), w)
        for name, values in est.items():
            values = np.asarray(values, dtype=np.float64).reshape(b)
            good = np.isfinite(values) & (v[:, s] > 0)
            num[name] = num.get(name, np.zeros(b)) + np.where(good, v[:, s] * np.nan_to_num(values), 0.0)
            # a seed whose value is undefined under a draw makes the draw undefined
            den[name] = den.get(name, np.zeros(b)) + np.where(good, v[:, s], np.where(v[:, s] > 0, np.nan, 0.0))
    out = {}
    for name in num:
        with np.errstate(invalid="ignore", divide="ignore"):
            out[name] = np.where(den[name] > 0, num[name] / np.where(den[name] > 0, den[name], 1.0), np.nan)
    return out


def percentile_interval(draws: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """The percentile interval of the finite draws; None when fewer than two are finite."""
    d = np.asarray(draws, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return None
    lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)
