"""Saliency-map metrics of the AIXI track (SPECS §3.7): KL and EMD on normalised maps, plus the
relevance mass / rank accuracies of Arras et al. (2022) and Pearson's correlation.

Every metric is vectorised: ``fn(explanations (N,H,W), truths (N,H,W), **params) -> (N,) float64``.
An instance whose ground truth has no positive mass (ΣG = 0) is undefined for every metric and scores
NaN (the runner counts it as excluded); so does an explanation containing a non-finite value.

Signed maps as distributions
----------------------------
KL and EMD compare P_G = G/ΣG with P_S, a distribution made of the map by `normalisation` (`normalise`):
``"positive"`` (the board's default, S⁺/ΣS⁺), ``"minmax"`` (SPECS §3.7's [I] choice, the paper-parity setting) or
``"absolute"`` (|S|/Σ|S|). Under min-max a negative value anywhere lifts every other pixel — the background
included — by |min S|/(max S − min S); under the positive part it is no evidence. The choice was made by
experiment (docs/aixi.md, "Signed maps"). A map with nothing to normalise (no positive value; all zero for |S|)
scores the worst value the metric has on its instance, never the uniform map's.

Exact and fast EMD
------------------
With a *metric* ground cost d, the 1-Wasserstein distance depends only on P − Q: the mass the two
distributions have in common in a bin can stay where it is (Kantorovich–Rubinstein), so

    W1(P, Q) = W1((P − Q)⁺, (P − Q)⁻)

exactly, where the right-hand side is a transport problem between the bins where P exceeds Q
(sources) and the bins where Q exceeds P (sinks) only. Ground-truth maps are sparse, so the problem
shrinks from g²×g² to (a few dozen sources)×(the sinks) and is solved exactly by POT's network simplex
(`ot.emd2`). Neither of the two further details changes the value: the larger side is passed as the
supply side, ordered by decreasing mass (≈1.5× fewer simplex pivots and ≈2× less time than the
spatially ordered grid), and instances are spread over a process pool (`workers`; each instance is
solved by the same code whatever the pool, so results do not depend on it). A solve that does not
reach optimality is retried with a 10× larger iteration budget and raises ``RuntimeError`` if it still
fails; an approximate value is never returned.

Cost: the simplex needs ≈4.5 pivots per node, so the time is set by the number of cells where the maps
differ. A dense explanation leaves ≈975 sink cells on a 32×32 grid (≈8-10 ms per map on one core of
the development machine, ≈2-2.5× faster than plain `ot.emd2` on the full 1024×1024 problem); a sparse
one (e.g. LIME under the positive part: zero background) takes well under a millisecond.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache
from typing import cast

import numpy as np

from benchmark.metrics.base import Direction, Family, metric
from benchmark.references import AIXI, BYLINSKII, CLEVR_XAI

EPS = 2.2204e-16  # ε of the saliency-benchmark KL (SPECS §3.7)

# below this many instances a process pool costs more than it saves (≈7 ms per 32×32 map)
_POOL_MIN_INSTANCES = 64
_POOL_MIN_CELLS = 256  # a 4×4 or 8×8 problem takes microseconds: never worth a pool
_OPTIMAL = 1  # POT's result_code for an optimal solution
_MAX_ITER_REACHED = 3


# ----------------------------------------------------------------------------------------- helpers
def _batch(explanations, truths) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as float64 (N,H,W) arrays of the same shape; a single (H,W) map is a batch of one."""
    s = np.asarray(explanations, dtype=np.float64)
    g = np.asarray(truths, dtype=np.float64)
    if s.ndim == 2:
        s = s[None]
    if g.ndim == 2:
        g = g[None]
    if s.ndim != 3 or s.shape != g.shape:
        raise ValueError(f"explanations {s.shape} and truths {g.shape} must both be (N, H, W) arrays "
                         "of the same shape")
    return s, g


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(len(x), -1)


def _undefined(s: np.ndarray, g: np.ndarray) -> np.ndarray:
    """(N,) bool: the metric is undefined (NaN) — no positive ground-truth mass, or a non-finite map."""
    sf, gf = _flat(s), _flat(g)
    return ~(np.isfinite(sf).all(1) & np.isfinite(gf).all(1) & (np.where(gf > 0, gf, 0).sum(1) > 0))


NORMALISATIONS = ("minmax", "positive", "absolute")
# the board's normalisation of a signed map (docs/aixi.md, "Signed maps": chosen by experiment, 2026-11-29);
# "minmax" is SPECS §3.7's [I] choice and the one the paper-parity experiment (`xaibench reproduce aixi`) names
DEFAULT_NORMALISATION = "positive"


def check_normalisation(normalisation: str) -> str:
    """`normalisation` itself, or ValueError naming the choices."""
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, got {normalisation!r}")
    return normalisation


def normalise(maps, normalisation: str = DEFAULT_NORMALISATION) -> tuple[np.ndarray, np.ndarray]:
    """Saliency maps (N,H,W) as distributions P_S, and which maps had nothing to normalise (N,) bool.

    * ``"minmax"`` (SPECS §3.7, an [I] choice: the paper-parity setting): S' = (S − min S)/(max S − min S),
      P_S = S'/ΣS'. A constant map (nothing to order) becomes the uniform distribution, SPECS' rule;
    * ``"positive"``: P_S = S⁺/ΣS⁺ — only what the map says raises the output is mass; a negative value counts as
      no evidence, as in the saliency benchmarks that compare non-negative maps (Bylinskii et al. 2019) and in
      relevance mass accuracy (Arras et al. 2022);
    * ``"absolute"``: P_S = |S|/Σ|S| — importance as magnitude, whichever way it pushes.

    A map with no mass under its normalisation — S⁺ ≡ 0 (an all-negative or all-zero map) for ``"positive"``,
    S ≡ 0 for ``"absolute"`` — has no distribution: its row of P_S is all zero (no mass anywhere), which the
    metrics score as the worst value they give on the instance (`kl`, `emd`), never as a uniform map; `empty`
    marks it (and, for ``"minmax"``, a constant map). A map with a non-finite value becomes all-NaN."""
    check_normalisation(normalisation)
    s = np.asarray(maps, dtype=np.float64)
    single = s.ndim == 2
    if single:
        s = s[None]
    f = _flat(s)
    finite = np.isfinite(f).all(1)
    f = np.where(finite[:, None], f, 0.0)
    if normalisation == "minmax":
        lo, hi = f.min(1, keepdims=True), f.max(1, keepdims=True)
        span = hi - lo
        empty = span[:, 0] <= 0
        sp = (f - lo) / np.where(empty[:, None], 1.0, span)
        sp[empty] = 1.0
        p = sp / sp.sum(1, keepdims=True)  # ΣS' ≥ 1 (the maximum cell is 1)
    else:
        mass = np.maximum(f, 0.0) if normalisation == "positive" else np.abs(f)
        total = mass.sum(1, keepdims=True)
        empty = total[:, 0] <= 0
        p = mass / np.where(empty[:, None], 1.0, total)  # an empty map's row stays all zero
    p[~finite] = np.nan
    empty &= finite
    p = p.reshape(s.shape)
    return (p[0] if single else p), empty


def to_distribution(maps, normalisation: str = DEFAULT_NORMALISATION) -> np.ndarray:
    """P_S of saliency maps (N,H,W) under `normalisation` (`normalise`); an empty map's row is all zero, a map
    with a non-finite value all-NaN."""
    return normalise(maps, normalisation)[0]


def empty_maps(maps, normalisation: str = DEFAULT_NORMALISATION) -> np.ndarray:
    """(N,) float: 1 where a map has nothing to normalise (`normalise`'s `empty`: no positive value for
    "positive", all zero for "absolute", constant for "minmax"), 0 otherwise, NaN for a non-finite map."""
    s = np.asarray(maps)
    if s.ndim == 2:
        s = s[None]
    check_normalisation(normalisation)
    f = s.reshape(len(s), -1)
    finite = np.isfinite(f).all(1)
    if normalisation == "minmax":
        empty = np.ptp(np.where(finite[:, None], f, 0), axis=1) <= 0
    elif normalisation == "positive":
        empty = ~(f > 0).any(1)
    else:
        empty = ~(f != 0).any(1)
    return np.where(finite, empty.astype(np.float64), np.nan)


def _gt_distribution(truths: np.ndarray) -> np.ndarray:
    """P_G = G/ΣG (N,H,W); NaN rows where ΣG = 0. Ground truths must be non-negative."""
    g = _flat(truths)
    if np.any(g < 0):
        raise ValueError("ground-truth maps must be non-negative to be read as distributions (P_G = G/ΣG)")
    tot = g.sum(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = g / tot
    p[tot[:, 0] <= 0] = np.nan
    return p.reshape(truths.shape)


# ---------------------------------------------------------------------------------------------- KL
@metric(name="kl", label="KL", direction=Direction.LOWER, range=(0.0, float("inf")), family=Family.DISTRIBUTION,
        reference=AIXI, description="KL(P_G‖P_S) on normalised maps, saliency-benchmark style (ε = 2.2204e-16)")
def kl(explanations, truths, normalisation: str = DEFAULT_NORMALISATION) -> np.ndarray:
    """Kullback–Leibler divergence of the explanation from the ground truth (SPECS §3.7):

        KL(P_G‖P_S) = Σ_p P_G(p) · log(ε + P_G(p) / (P_S(p) + ε)),   ε = 2.2204e-16,

    P_G = G/ΣG, P_S = `normalise`(S, `normalisation`). "Information lost when P_S approximates P_G"
    (Miró-Nicolau et al. 2023, following Riche et al. 2013 / the MIT saliency benchmark). 0 is best.
    A map with no mass under its normalisation (P_S ≡ 0) scores Σ_p P_G(p) · log(ε + P_G(p)/ε), the most
    the formula gives for this ground truth (≈ 36 − H(P_G)): the same as a map whose mass lies wholly off G.
    """
    s, g = _batch(explanations, truths)
    bad = _undefined(s, g)
    pg, ps = _flat(_gt_distribution(g)), _flat(normalise(s, normalisation)[0])
    with np.errstate(invalid="ignore"):
        out = (pg * np.log(EPS + pg / (ps + EPS))).sum(1)
    out[bad] = np.nan
    return out


# --------------------------------------------------------------------------------------------- EMD
def _area_weights(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in): the fraction of input pixel i lying in output cell k (area averaging)."""
    edges = np.arange(n_out + 1) * (n_in / n_out)
    lo = np.maximum(edges[:-1, None], np.arange(n_in)[None, :])
    hi = np.minimum(edges[1:, None], np.arange(n_in)[None, :] + 1)
    return np.clip(hi - lo, 0.0, None)


def _grid_shape(grid: int | tuple[int, int]) -> tuple[int, int]:
    """(rows, cols) of a grid given as one side or as (rows, cols)."""
    if np.isscalar(grid):
        side = cast(int, grid)  # np.isscalar does not narrow the union for mypy
        return side, side
    rows, cols = cast(tuple[int, int], grid)  # the (rows, cols) form
    return rows, cols


def downsample_mass(p: np.ndarray, grid: int | tuple[int, int] | None) -> np.ndarray:
    """Mass of (N,H,W) distributions pooled onto a grid×grid map by area averaging (the cell mean of
    S, renormalised, equals the pooled mass of P). `grid=None` keeps the full resolution."""
    if grid is None:
        return p
    gh, gw = _grid_shape(grid)
    n, h, w = p.shape
    if gh < 1 or gw < 1:
        raise ValueError(f"grid must be ≥ 1, got {grid}")
    if h % gh == 0 and w % gw == 0:
        return p.reshape(n, gh, h // gh, gw, w // gw).sum((2, 4))
    a, b = _area_weights(h, gh), _area_weights(w, gw)
    return np.einsum("kh,nhw,lw->nkl", a, p, b, optimize=True)


@lru_cache(maxsize=8)
def _cell_distances(gh: int, gw: int, cell_h: float, cell_w: float, unit_px: float) -> np.ndarray:
    """(gh·gw, gh·gw) Euclidean distances between cell centres, in units of `unit_px` pixels."""
    r, c = np.meshgrid(np.arange(gh) * cell_h, np.arange(gw) * cell_w, indexing="ij")
    xy = np.stack([r.ravel(), c.ravel()], 1)
    d = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)) / unit_px
    d.setflags(write=False)
    return d


def _solve(a: np.ndarray, b: np.ndarray, m: np.ndarray, num_iter_max: int) -> float:
    """Exact OT cost between histograms a and b (equal mass) for cost m; raises if not optimal."""
    import ot

    for it in (int(num_iter_max), 10 * int(num_iter_max)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # POT warns on non-optimal codes; we check them below
            cost, log = ot.emd2(a, b, m, numItermax=it, log=True, center_dual=False, check_marginals=False)
        code = int(log["result_code"])
        if code == _OPTIMAL:
            return float(cost)
        if code != _MAX_ITER_REACHED:
            break
    raise RuntimeError(f"EMD: the network simplex did not reach optimality ({log.get('warning')}, "
                       f"numItermax={it}); raise `num_iter_max`")


def _emd_rows(pg: np.ndarray, ps: np.ndarray, dist: np.ndarray, num_iter_max: int) -> np.ndarray:
    """W1 between rows of pg and ps (N, cells) for the ground distance `dist`; NaN rows stay NaN. A row of ps
    without mass (an empty map, `normalise`) gets the largest W1 any distribution has from pg:
    max_c Σ_i pg(i)·d(i, c) — W1 is convex in ps, so its maximum over the simplex is at a point mass."""
    out = np.empty(len(pg))
    flat, ncell = dist.ravel(), dist.shape[1]
    for n in range(len(pg)):
        d = pg[n] - ps[n]
        if not np.isfinite(d).all():
            out[n] = np.nan
            continue
        if not ps[n].any():
            out[n] = float((pg[n] @ dist).max())
            continue
        src = np.flatnonzero(d > 0)
        snk = np.flatnonzero(d < 0)
        if len(src) == 0 or len(snk) == 0:  # identical up to rounding
            out[n] = 0.0
            continue
        a, b = d[src], -d[snk]
        if abs(a.sum() - b.sum()) > 1e-9:
            raise ValueError(f"EMD: distributions of unequal mass ({a.sum() - b.sum():.3g} apart)")
        if len(src) == 1:  # one source: it feeds every sink
            out[n] = float(a[0] / b.sum() * (b * dist[src[0], snk]).sum())
            continue
        if len(snk) == 1:  # one sink: every source empties into it
            out[n] = float(b[0] / a.sum() * (a * dist[src, snk[0]]).sum())
            continue
        # the larger side as supply, by decreasing mass: same optimum, fewer simplex pivots
        if len(snk) >= len(src):
            big, small, bidx, sidx = b, a, snk, src
        else:
            big, small, bidx, sidx = a, b, src, snk
        # both sides by decreasing mass: same optimum, fewer pivots (measured 13.5 → 8.2 ms per 32×32 map)
        order, sorder = np.argsort(-big, kind="stable"), np.argsort(-small, kind="stable")
        bidx, sidx = bidx[order], sidx[sorder]
        cost = np.take(flat, bidx[:, None] * ncell + sidx[None, :])  # = dist[np.ix_(bidx, sidx)], faster
        out[n] = _solve(big[order], small[sorder] * (big.sum() / small.sum()), cost, num_iter_max)
    return out


def _emd_task(pg: np.ndarray, ps: np.ndarray, geom: tuple, num_iter_max: int) -> np.ndarray:
    return _emd_rows(pg, ps, _cell_distances(*geom), num_iter_max)


def _n_workers(workers: int | None, n: int, cells: int) -> int:
    """Processes to use: `workers` (None or ≤ 0: the usable CPUs), 1 for small jobs or inside a
    daemonic worker (which may not have children), at most one per 16 instances."""
    if workers is None or workers <= 0:
        try:
            workers = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            workers = os.cpu_count() or 1
    if n < _POOL_MIN_INSTANCES or cells < _POOL_MIN_CELLS or mp.current_process().daemon:
        return 1
    return max(1, min(int(workers), n // 16))


def _pool_context():
    # fork: workers start in milliseconds with everything imported, and they only run NumPy and POT's
    # single-threaded solver, so threads of the parent (torch's pool) are not touched. Elsewhere: the
    # platform's default (spawn), which imports this module in each worker.
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else methods[0])


def _pooled_distributions(explanations, truths, grid, normalisation: str) -> tuple[np.ndarray, np.ndarray]:
    """P_G and P_S pooled onto the grid, NaN rows where the metric is undefined, all-zero P_S rows for empty maps.

    Each normalisation is pooled where it is exact, from the maps' own dtype (never a float64 copy at full
    resolution: 3.5 s → 0.4 s on 2,000 maps). Min-max commutes with sum pooling (each cell holds `area`
    pixels): pool(S') = (pool(S) − area·min S) / (max S − min S), so the maps are pooled first. The positive
    part and |S| do not (pool(S)⁺ ≠ pool(S⁺) where a cell mixes signs), so they are taken pixel by pixel first
    and then pooled: pool(S⁺)/Σ pool(S⁺) = pool(S⁺/ΣS⁺)."""
    check_normalisation(normalisation)
    s, g = np.asarray(explanations), np.asarray(truths)
    if s.ndim == 2:
        s, g = s[None], g[None]
    if s.ndim != 3 or s.shape != g.shape:
        raise ValueError(f"explanations {s.shape} and truths {g.shape} must both be (N, H, W) arrays "
                         "of the same shape")
    n, h, w = s.shape
    gh, gw = (h, w) if grid is None else _grid_shape(grid)
    if h % gh or w % gw:  # area weights with partial pixels: the general path
        s64, g64 = _batch(s, g)
        bad = _undefined(s64, g64)
        pg = downsample_mass(np.where(bad[:, None, None], np.nan, _gt_distribution(g64)), grid)
        return pg, downsample_mass(normalise(s64, normalisation)[0], grid)
    if np.any(g < 0):
        raise ValueError("ground-truth maps must be non-negative to be read as distributions (P_G = G/ΣG)")
    bh, bw = h // gh, w // gw
    finite = np.isfinite(s).all((1, 2)) & np.isfinite(g).all((1, 2))
    pool_g = g.reshape(n, gh, bh, gw, bw).sum((2, 4), dtype=np.float64)
    if normalisation == "minmax":
        pool_s = s.reshape(n, gh, bh, gw, bw).sum((2, 4), dtype=np.float64)
        lo = s.min((1, 2)).astype(np.float64)[:, None, None]
        span = s.max((1, 2)).astype(np.float64)[:, None, None] - lo
        const = span[:, 0, 0] <= 0
        sp = (pool_s - bh * bw * lo) / np.where(const[:, None, None], 1.0, span)
        sp[const] = bh * bw
        ps = sp / sp.sum((1, 2), keepdims=True)
    else:
        with np.errstate(invalid="ignore"):
            mass = np.maximum(s, 0) if normalisation == "positive" else np.abs(s)
        pool_s = mass.reshape(n, gh, bh, gw, bw).sum((2, 4), dtype=np.float64)
        total = pool_s.sum((1, 2), keepdims=True)
        ps = pool_s / np.where(total > 0, total, 1.0)  # an empty map's row stays all zero
    tot = pool_g.sum((1, 2), keepdims=True)
    bad = ~finite | (tot[:, 0, 0] <= 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        pg = pool_g / tot
    pg[bad], ps[~finite] = np.nan, np.nan
    return pg, ps


def emd_distance(explanations, truths, grid: int | None = 32, unit_px: float = 32.0,
                 workers: int | None = None, num_iter_max: int = 1_000_000,
                 normalisation: str = DEFAULT_NORMALISATION) -> np.ndarray:
    """EMD(P_G, P_S) (see `emd`), exact; `grid=None` solves at full resolution."""
    explanations = np.asarray(explanations)
    n, h, w = np.shape(explanations)[-3:] if np.ndim(explanations) == 3 else (1, *np.shape(explanations))
    pg, ps = _pooled_distributions(explanations, truths, grid, normalisation)
    gh, gw = pg.shape[1:]
    geom = (gh, gw, h / gh, w / gw, float(unit_px))
    pg, ps = _flat(pg), _flat(ps)
    k = _n_workers(workers, n, gh * gw)
    if k == 1:
        return _emd_rows(pg, ps, _cell_distances(*geom), num_iter_max)
    chunks = np.array_split(np.arange(n), min(n, 4 * k))  # ~4 chunks per worker balance the load
    try:
        with ProcessPoolExecutor(k, mp_context=_pool_context()) as ex:
            parts = list(ex.map(_emd_task, [pg[c] for c in chunks], [ps[c] for c in chunks],
                                [geom] * len(chunks), [num_iter_max] * len(chunks)))
    except (BrokenProcessPool, OSError) as e:  # no pool available here: same values, serially
        warnings.warn(f"EMD: process pool unavailable ({e}); computing serially", RuntimeWarning,
                      stacklevel=2)
        return _emd_rows(pg, ps, _cell_distances(*geom), num_iter_max)
    return np.concatenate(parts)


@metric(name="emd", label="EMD", direction=Direction.LOWER, range=(0.0, float("inf")), family=Family.DISTRIBUTION,
        reference=AIXI, description="Earth mover's distance between P_G and P_S on a 32×32 grid (unit: 32 px), exact")
def emd(explanations, truths, grid=32, unit_px=32.0, workers=None, num_iter_max=1_000_000,
        normalisation=DEFAULT_NORMALISATION) -> np.ndarray:
    """Earth mover's distance (SPECS §3.7; Miró-Nicolau et al. 2023, following Riche et al. 2013):

        EMD(P_G, P_S) = min_{f ≥ 0} Σ_ij f_ij d_ij  s.t.  Σ_j f_ij = P_G(i),  Σ_i f_ij = P_S(j),

    after pooling both distributions onto a `grid` × `grid` map by area averaging; d_ij is the
    Euclidean distance between cell centres in units of `unit_px` original pixels (default 32 px, the
    paper's unit: one cell of its 4×4 grid on 128×128 images), so values are comparable across grids.
    Solved exactly (equal to `ot.emd2` on the full grid) on the positive/negative parts of P_G − P_S;
    `workers` processes (None = all CPUs; results do not depend on it). P_S = `normalise`(S, `normalisation`);
    a map with no mass under it scores the largest EMD any map has on the instance (`_emd_rows`). 0 is best.
    """
    return emd_distance(explanations, truths, grid, unit_px, workers, num_iter_max, normalisation)


@metric(name="emd-paper", label="EMD/4×4", direction=Direction.LOWER, range=(0.0, float("inf")),
        family=Family.DISTRIBUTION, reference=AIXI,
        description="Earth mover's distance on the paper's 4×4 grid (factor-32 down-sampling, unit: 32 px)")
def emd_paper(explanations, truths, grid=4, unit_px=32.0, workers=None, num_iter_max=1_000_000,
              normalisation=DEFAULT_NORMALISATION) -> np.ndarray:
    """`emd` at the paper-parity setting (SPECS §3.7): both maps down-sampled by a factor of 32 with area
    averaging (a 4×4 grid for 128×128 images), ground distance in down-sampled cells."""
    return emd_distance(explanations, truths, grid, unit_px, workers, num_iter_max, normalisation)


# ------------------------------------------------------------------------------------ localisation
@metric(name="mass-accuracy", label="RMA", direction=Direction.HIGHER, range=(0.0, 1.0), family=Family.LOCALISATION,
        reference=CLEVR_XAI,
        description="Relevance mass accuracy: share of positive relevance inside the ground truth (Arras et al. 2022)")
def mass_accuracy(explanations, truths) -> np.ndarray:
    """Relevance mass accuracy (Arras, Osman & Samek 2022, CLEVR-XAI):

        RMA = Σ_{p: G(p) > 0} max(S(p), 0) / Σ_p max(S(p), 0),

    only positive relevance counts; 0 where the explanation has no positive relevance. 1 is best.
    """
    s, g = _batch(explanations, truths)
    bad = _undefined(s, g)
    pos = np.where(_flat(s) > 0, _flat(s), 0.0)
    total = pos.sum(1)
    inside = (pos * (_flat(g) > 0)).sum(1)
    out = np.divide(inside, total, out=np.zeros(len(s)), where=total > 0)
    out[bad] = np.nan
    return out


@metric(name="rank-accuracy", label="RRA", direction=Direction.HIGHER, range=(0.0, 1.0), family=Family.LOCALISATION,
        reference=CLEVR_XAI,
        description="Relevance rank accuracy: share of the K most relevant pixels inside the K-pixel ground truth "
        "(Arras et al. 2022)")
def rank_accuracy(explanations, truths, ties: str = "stable") -> np.ndarray:
    """Relevance rank accuracy (Arras, Osman & Samek 2022, CLEVR-XAI): with K = |{p : G(p) > 0}|,

        RRA = |top-K(S) ∩ GT| / K,

    top-K by decreasing relevance. `ties="stable"` (default, SPECS §0): a stable sort, so equal
    relevances are ranked by ascending pixel index (row-major). `ties="expected"`: the tie-aware
    variant, the expected RRA when the tie group straddling rank K is ordered uniformly at random.
    1 is best.
    """
    s, g = _batch(explanations, truths)
    bad = _undefined(s, g)
    sf = np.where(np.isfinite(_flat(s)), _flat(s), 0.0)
    supp = _flat(g) > 0
    k = supp.sum(1)
    if ties == "stable":
        order = np.argsort(-sf, axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(sf.shape[1]), sf.shape), axis=1)
        hits = ((ranks < k[:, None]) & supp).sum(1).astype(np.float64)
    elif ties == "expected":
        srt = -np.sort(-sf, axis=1)
        t = srt[np.arange(len(sf)), np.maximum(k - 1, 0)][:, None]  # relevance at rank K
        above, tied = sf > t, sf == t
        slots = k - above.sum(1)  # how many of the tie group make it into the top K
        hits = (above & supp).sum(1) + slots * (tied & supp).sum(1) / np.maximum(tied.sum(1), 1)
    else:
        raise ValueError(f"ties must be 'stable' or 'expected', got {ties!r}")
    out = np.divide(hits, k, out=np.zeros(len(s)), where=k > 0)
    out[bad] = np.nan
    return out


# -------------------------------------------------------------------------------------- similarity
@metric(name="pcc", label="PCC", direction=Direction.HIGHER, range=(-1.0, 1.0), family=Family.SIMILARITY,
        reference=BYLINSKII, description="Pearson correlation between the explanation and the ground-truth map")
def pcc(explanations, truths) -> np.ndarray:
    """Pearson's correlation coefficient between S and G over pixels,

        PCC = Σ (S − S̄)(G − Ḡ) / sqrt(Σ (S − S̄)² · Σ (G − Ḡ)²);

    NaN (excluded) when either map is constant (SPECS §0). 1 is best.
    """
    s, g = _batch(explanations, truths)
    bad = _undefined(s, g)
    x, y = _flat(s), _flat(g)
    x = np.where(np.isfinite(x), x, 0.0)
    x = x - x.mean(1, keepdims=True)
    y = y - y.mean(1, keepdims=True)
    den = np.sqrt((x * x).sum(1) * (y * y).sum(1))
    const = (np.ptp(_flat(s), 1) == 0) | (np.ptp(_flat(g), 1) == 0) | ~(den > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.clip((x * y).sum(1) / den, -1.0, 1.0)
    out[bad | const] = np.nan
    return out
