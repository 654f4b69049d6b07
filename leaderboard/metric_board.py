"""The metric board: does a ground-truth-free metric rank explainers the way the ground truth does?

For one GT board (track, resource, model) and one GT-free metric M (`benchmark.gtfree`), over the
explainers E whose maps M could score on at least half the instances and the instances every one of
them was scored on (both by M and by the board's primary ground-truth metric):

* **ranking agreement** τ_b — Kendall's τ-b between the explainers' mean M and their mean ground-truth
  score, both oriented so that higher is better (Kendall 1945; the tie-corrected form scipy computes);
* **per-instance agreement** ρ̄ — the mean over instances of Spearman's ρ between M and the ground truth
  across explainers (instances where either is constant over explainers are left out of the mean);
* a **paired bootstrap** over instances (the board's 1,000 draws, `benchmark.bootstrap`): every statistic
  is recomputed on the same resampled instances, giving 95 % percentile intervals, and Δτ against the
  metric computed on the randomised model (Adebayo et al. 2018) is judged on those same draws.

Controls, computed on the same cells: `random-metric` (scores U(0, 1), seeded: what agreement looks like
by chance) and every model-reading metric on the **randomised model** (its weights re-drawn: a metric
whose agreement survives that is reading the map, not the model).

Verdict per (metric, board): *agrees* when τ_b's interval lies above 0, *disagrees* when it lies below 0,
*cannot tell* otherwise or when fewer than `MIN_EXPLAINERS` explainers or `MIN_INSTANCES` instances
remain. Every row says how many cells it rests on and how many failed, by code.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from benchmark.bootstrap import N_BOOT, SEED, draw_weights, percentile_interval
from benchmark.results import Result

MIN_EXPLAINERS = 3
MIN_INSTANCES = 5
MIN_SHARE = 0.5  # an explainer enters a metric's agreement when M scored at least this share of its instances
LEVEL = 0.95
RANDOM_METRIC = "random-metric"


def tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b between the rows of x and y, both (B, E): Σ sgn(x_i−x_j)·sgn(y_i−y_j) over pairs
    i < j, divided by √((P − T_x)(P − T_y)) with P pairs and T ties; NaN when either row is constant."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    i, j = np.triu_indices(x.shape[1], k=1)
    dx, dy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    p = i.size
    den = np.sqrt((p - (dx == 0).sum(axis=1)) * (p - (dy == 0).sum(axis=1)).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def _ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks along axis 0 (ties share their mean rank)."""
    from scipy.stats import rankdata

    return rankdata(a, axis=0)


def spearman_columns(m: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Spearman's ρ between m[:, k] and g[:, k] for every column k (E, N) → (N,); NaN where constant."""
    rm, rg = _ranks(m), _ranks(g)
    rm, rg = rm - rm.mean(axis=0), rg - rg.mean(axis=0)
    den = np.sqrt((rm**2).sum(axis=0) * (rg**2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rm * rg).sum(axis=0) / np.where(den > 0, den, 1.0), np.nan)


@dataclass
class Agreement:
    """One row of the metric board: metric `metric` (or a control) on board `board`."""

    board: str
    metric: str
    role: str  # "metric" | "control"
    reference: str
    direction: str
    verdict: str
    tau: float | None = None
    tau_ci: tuple[float, float] | None = None
    rho: float | None = None
    rho_ci: tuple[float, float] | None = None
    vs_randomised: float | None = None  # Δτ = τ(model) − τ(randomised model), paired
    vs_randomised_ci: tuple[float, float] | None = None
    explainers: list[str] = field(default_factory=list)
    n_instances: int = 0
    n_cells: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready fields."""
        return asdict(self)


@dataclass
class _Cells:
    """The aligned cells of one metric: metric and ground-truth values (E, N), oriented higher = better."""

    names: list[str]
    m: np.ndarray
    g: np.ndarray
    failures: dict[str, int]


def _orient(v: np.ndarray, direction: str) -> np.ndarray:
    return v if direction == "higher" else -v


def _align(files: list[dict], gt: dict[str, np.ndarray], metric: str, direction: str, gt_direction: str,
           randomised: bool = False) -> _Cells:
    """Explainers with enough scored cells, instances where all of them have both scores."""
    key = "randomised" if randomised else "metrics"
    failures: Counter = Counter()
    rows, names = [], []
    for f in files:
        cell = f.get(key, {}).get(metric)
        if cell is None or f["submission"] not in gt:
            continue
        v = np.array([np.nan if x is None else x for x in cell["values"]], dtype=np.float64)
        failures.update(c for c in cell["codes"] if c)
        if np.isfinite(v).mean() >= MIN_SHARE:
            rows.append((v, gt[f["submission"]][: len(v)]))
            names.append(f["submission"])
    if not rows:
        return _Cells([], np.zeros((0, 0)), np.zeros((0, 0)), dict(failures))
    m = np.stack([r[0] for r in rows])
    g = np.stack([r[1] for r in rows])
    keep = np.isfinite(m).all(axis=0) & np.isfinite(g).all(axis=0)
    return _Cells(names, _orient(m[:, keep], direction), _orient(g[:, keep], gt_direction), dict(failures))


def _ci(draws: np.ndarray) -> tuple[float, float] | None:
    return percentile_interval(draws, LEVEL)


def _stats(c: _Cells, w: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float]:
    """(τ draws, τ point, ρ̄ draws, ρ̄ point) under multiplicities w (B, N)."""
    n = c.m.shape[1]
    tau_point = float(tau_b(c.m.mean(axis=1)[None], c.g.mean(axis=1)[None])[0])
    tot = w.sum(axis=1, keepdims=True)
    tau_draws = tau_b((w @ c.m.T) / tot, (w @ c.g.T) / tot)
    rho = spearman_columns(c.m, c.g)
    ok = np.isfinite(rho)
    rho_point = float(rho[ok].mean()) if ok.any() else math.nan
    wr = w[:, ok] if n else w
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_draws = (wr @ np.where(ok, rho, 0.0)[ok]) / wr.sum(axis=1)
    return tau_draws, tau_point, rho_draws, rho_point


def verdict(ci: tuple[float, float] | None) -> str:
    """agrees / disagrees / cannot tell, from τ_b's interval."""
    if ci is None:
        return "cannot tell"
    return "agrees" if ci[0] > 0 else "disagrees" if ci[1] < 0 else "cannot tell"


def _row(board: str, name: str, role: str, reference: str, direction: str, c: _Cells,
         control: _Cells | None = None) -> Agreement:
    base = Agreement(board, name, role, reference, direction, "cannot tell", explainers=c.names,
                     failures=c.failures, n_instances=int(c.m.shape[1]) if c.m.size else 0)
    base.n_cells = len(c.names) * base.n_instances
    if len(c.names) < MIN_EXPLAINERS or base.n_instances < MIN_INSTANCES:
        base.why = (f"{len(c.names)} explainers × {base.n_instances} instances scored "
                    f"(needs {MIN_EXPLAINERS} × {MIN_INSTANCES})")
        return base
    w = draw_weights(np.arange(base.n_instances), N_BOOT, SEED)
    tau_d, tau_p, rho_d, rho_p = _stats(c, w)
    base.tau, base.tau_ci = _num(tau_p), _ci(tau_d)
    base.rho, base.rho_ci = _num(rho_p), _ci(rho_d)
    base.verdict = verdict(base.tau_ci) if base.tau is not None else "cannot tell"
    if control is not None and control.names == c.names and control.m.shape == c.m.shape:
        ctl_d, ctl_p, _r, _rp = _stats(control, w)
        base.vs_randomised = _num(tau_p - ctl_p)
        base.vs_randomised_ci = _ci(tau_d - ctl_d)
    return base


def _num(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _gt_scores(results: Sequence[Result]) -> tuple[dict[str, np.ndarray], str, str]:
    """{submission: per-instance primary GT score (seed 0)}, the primary metric and its direction."""
    from benchmark.tracks import get_track

    r0 = results[0]
    trk = get_track(r0.track)
    primary = r0.primary_metric or trk.primary_metric
    direction = next(str(m.direction) for m in trk.metric_objects() if m.name == primary)
    out = {}
    for r in results:
        s = r.scores()
        if s is not None and primary in s.arrays:
            out[r.submission["name"]] = np.asarray(s.arrays[primary][0], dtype=np.float64).reshape(-1)
    return out, primary, direction


def board_agreement(results: Sequence[Result], files: list[dict]) -> list[Agreement]:
    """Every metric's row, its randomised-model control and the random-metric control, on one board."""
    from benchmark.gtfree import get_metric

    r0 = results[0]
    board = f"{r0.resource['name']}/{r0.model['name']}"
    gt, _primary, gt_dir = _gt_scores(results)
    names = sorted({m for f in files for m in f.get("metrics", {})}, key=_metric_order)
    rows = []
    for name in names:
        metric = get_metric(name)
        cells = _align(files, gt, name, metric.direction, gt_dir)
        ctl = _align(files, gt, name, metric.direction, gt_dir, randomised=True)
        rows.append(_row(board, name, "metric", metric.reference, metric.direction, cells,
                         ctl if ctl.names else None))
        if ctl.names:
            rows.append(_row(board, f"{name}@randomised-model", "control", metric.reference, metric.direction, ctl))
    rows.append(_row(board, RANDOM_METRIC, "control", "No paper: a control.", "higher",
                     _random_cells(files, gt, gt_dir)))
    return rows


def _metric_order(name: str) -> tuple[int, str]:
    from benchmark.gtfree import get_metric

    try:
        m = get_metric(name)
        from benchmark.gtfree import metrics_for

        return ([x.name for x in metrics_for(m.modality)].index(name), name)
    except KeyError:
        return (99, name)


def _random_cells(files: list[dict], gt: dict[str, np.ndarray], gt_dir: str) -> _Cells:
    """U(0, 1) scores on every (explainer, instance) with a ground-truth score (seeded by position)."""
    rng = np.random.default_rng([SEED, 39])
    names = [f["submission"] for f in files if f["submission"] in gt]
    if not names:
        return _Cells([], np.zeros((0, 0)), np.zeros((0, 0)), {})
    n = min(len(f["ids"]) for f in files if f["submission"] in gt)
    g = np.stack([gt[s][:n] for s in names])
    keep = np.isfinite(g).all(axis=0)
    m = rng.uniform(size=g.shape)
    return _Cells(names, m[:, keep], _orient(g[:, keep], gt_dir), {})


def metric_board(results: Iterable[Result], home: Path) -> list[Agreement]:
    """Rows for every GT board whose GT-free metrics were computed (`xaibench metrics-board`)."""
    from benchmark.gtfree.compute import GT_TRACKS, board_dir, load_board_scores

    groups: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        if r.track in GT_TRACKS:
            groups.setdefault((r.track, r.resource["name"], r.model["name"]), []).append(r)
    rows: list[Agreement] = []
    for (track, resource, model), rs in sorted(groups.items()):
        newest: dict[str, Result] = {}
        for r in sorted(rs, key=lambda r: str(r.created)):
            newest[r.submission["name"]] = r
        rs = list(newest.values())
        files = load_board_scores(board_dir(home, track, resource, model))
        if files:
            rows.extend(board_agreement(rs, files))
    return rows
