"""The metric board: whether a ground-truth-free metric ranks explainers the way the ground truth does.

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
from benchmark.store.results import Result

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
    model_blind: bool = False  # needs no model, or agrees as well on the randomised model
    # MetaQuantus's scores of this metric on this board (benchmark.gtfree.meta): mc, noise_resilience,
    # adversarial_reactivity, each in [0, 1]; None where it was not run
    meta: dict[str, float] | None = None
    draws: np.ndarray | None = field(default=None, repr=False)  # τ_b under the board's bootstrap draws

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready fields (the draws left out)."""
        d = asdict(self)
        d.pop("draws")
        return d


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
    w = draw_weights(np.arange(base.n_instances), n_boot=N_BOOT, seed=SEED)
    tau_d, tau_p, rho_d, rho_p = _stats(c, w)
    base.tau, base.tau_ci, base.draws = _num(tau_p), _ci(tau_d), tau_d
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
        row = _row(board, name, "metric", metric.reference, metric.direction, cells, ctl if ctl.names else None)
        rows.append(row)
        if ctl.names:
            control = _row(board, f"{name}@randomised-model", "control", metric.reference, metric.direction, ctl)
            rows.append(control)
            row.model_blind = row.verdict == "agrees" and control.verdict == "agrees"
        else:
            row.model_blind = not metric.needs_model
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

    from leaderboard.companions import kind_of

    groups: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        if r.track in GT_TRACKS and kind_of(r) is None:  # randomised-model and hidden-copy runs are not board rows
            groups.setdefault((r.track, r.resource["name"], r.model["name"]), []).append(r)
    from benchmark.gtfree.meta import load_meta

    rows: list[Agreement] = []
    for (track, resource, model), rs in sorted(groups.items()):
        newest: dict[str, Result] = {}
        for r in sorted(rs, key=lambda r: str(r.created)):
            newest[r.submission["name"]] = r
        rs = list(newest.values())
        folder = board_dir(home, track, resource, model)
        files = load_board_scores(folder)
        if files:
            found = board_agreement(rs, files)
            meta = load_meta(folder)
            for row in found:
                m = meta.get(row.metric)
                if m and row.role == "metric":
                    row.meta = {k: float(m[k]) for k in ("mc", "noise_resilience", "adversarial_reactivity")
                                if isinstance(m.get(k), (int, float))}
            rows.extend(found)
    return rows


@dataclass
class Overall:
    """A metric's agreement over the boards of one scope (a track, or all): the mean τ_b over those
    boards with a paired-per-board bootstrap interval (the mean of the boards' draws), and its verdicts."""

    scope: str
    metric: str
    role: str
    tau: float | None
    tau_ci: tuple[float, float] | None
    verdict: str
    boards: int
    agrees_on: int
    disagrees_on: int

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready fields."""
        return asdict(self)


def summaries(rows: Sequence[Agreement]) -> list[Overall]:
    """Per track (the resource family) and overall, each metric's mean τ_b over the boards it has one on."""
    out = []
    scopes: dict[str, list[Agreement]] = {}
    for r in rows:
        scopes.setdefault(r.board.split("/")[0], []).append(r)
    if len(scopes) > 1:
        scopes["overall"] = list(rows)
    for scope, members in scopes.items():
        for name in dict.fromkeys(r.metric for r in members if r.role == "metric" or r.metric == RANDOM_METRIC):
            got = [r for r in members if r.metric == name and r.tau is not None and r.draws is not None]
            if not got:
                continue
            draws = np.mean(np.stack([np.asarray(r.draws) for r in got]), axis=0)
            tau = float(np.mean([r.tau for r in got]))
            ci = _ci(draws)
            out.append(Overall(scope, name, got[0].role, tau, ci, verdict(ci), len(got),
                               sum(r.verdict == "agrees" for r in got), sum(r.verdict == "disagrees" for r in got)))
    return out


# -- views ---------------------------------------------------------------------------------------

CSV_COLUMNS = ("board", "metric", "role", "direction", "verdict", "tau", "tau_lo", "tau_hi", "rho", "rho_lo", "rho_hi",
               "vs_randomised", "vs_randomised_lo", "vs_randomised_hi", "model_blind", "n_explainers", "n_instances",
               "n_cells", "failed_cells", "failures", "why", "metaquantus_mc", "metaquantus_nr", "metaquantus_ar")


def _fmt(x: float | None, digits: int = 3) -> str:
    return "" if x is None else f"{x:+.{digits}f}"


def csv_rows(rows: Sequence[Agreement]) -> list[dict[str, str]]:
    """One flat dict per row, in `CSV_COLUMNS` order."""
    out = []
    for r in rows:
        lo_hi = [(ci[0], ci[1]) if ci else (None, None) for ci in (r.tau_ci, r.rho_ci, r.vs_randomised_ci)]
        out.append({
            "board": r.board, "metric": r.metric, "role": r.role, "direction": r.direction, "verdict": r.verdict,
            "tau": _fmt(r.tau), "tau_lo": _fmt(lo_hi[0][0]), "tau_hi": _fmt(lo_hi[0][1]),
            "rho": _fmt(r.rho), "rho_lo": _fmt(lo_hi[1][0]), "rho_hi": _fmt(lo_hi[1][1]),
            "vs_randomised": _fmt(r.vs_randomised), "vs_randomised_lo": _fmt(lo_hi[2][0]),
            "vs_randomised_hi": _fmt(lo_hi[2][1]), "model_blind": "yes" if r.model_blind else "",
            "n_explainers": str(len(r.explainers)), "n_instances": str(r.n_instances), "n_cells": str(r.n_cells),
            "failed_cells": str(sum(r.failures.values())),
            "failures": ";".join(f"{k}={v}" for k, v in sorted(r.failures.items())), "why": r.why,
            **{f"metaquantus_{short}": "" if not r.meta or key not in r.meta else f"{r.meta[key]:.3f}"
               for short, key in (("mc", "mc"), ("nr", "noise_resilience"), ("ar", "adversarial_reactivity"))}})
    return out


def to_csv(rows: Sequence[Agreement]) -> str:
    """The board as CSV (one row per board and metric or control)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
    w.writeheader()
    w.writerows(csv_rows(rows))
    return buf.getvalue()


def meta_text(meta: dict[str, float] | None) -> str:
    """"0.67 (0.51 / 0.82)": MetaQuantus's MC (noise resilience / adversarial reactivity), or "—"."""
    if not meta or "mc" not in meta:
        return "—"
    return f"{meta['mc']:.2f} ({meta.get('noise_resilience', math.nan):.2f} / " \
           f"{meta.get('adversarial_reactivity', math.nan):.2f})"


def interval(x: float | None, ci: tuple[float, float] | None) -> str:
    """"+0.867 [+0.600, +1.000]" (or "—")."""
    if x is None:
        return "—"
    return _fmt(x) + (f" [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else "")


def print_rich(rows: Sequence[Agreement], overall: Sequence[Overall], console: Any = None) -> None:
    """Terminal tables (to `console`, default stdout): one per board, then the per-track and overall summary."""
    from rich.console import Console
    from rich.table import Table

    con = console or Console()
    for board in dict.fromkeys(r.board for r in rows):
        t = Table(title=f"metric board — {board}", title_justify="left")
        for col in ("metric", "better", "τ_b vs ground truth [95 %]", "mean per-instance ρ", "Δτ vs randomised model",
                    "verdict", "explainers × instances", "failed cells", "MetaQuantus MC (NR / AR)"):
            t.add_column(col)
        for r in (x for x in rows if x.board == board):
            verdict_text = r.verdict + (" (model-blind)" if r.model_blind else "")
            t.add_row(r.metric + ("" if r.role == "metric" else " (control)"), r.direction,
                      interval(r.tau, r.tau_ci), interval(r.rho, r.rho_ci),
                      interval(r.vs_randomised, r.vs_randomised_ci), verdict_text + (f" — {r.why}" if r.why else ""),
                      f"{len(r.explainers)} × {r.n_instances}",
                      ", ".join(f"{k} {v}" for k, v in sorted(r.failures.items())) or "0", meta_text(r.meta))
        con.print(t)
    if overall:
        t = Table(title="metric board — per track and overall (mean τ_b over boards)", title_justify="left")
        for col in ("scope", "metric", "mean τ_b [95 %]", "verdict", "agrees on", "disagrees on", "boards"):
            t.add_column(col)
        for o in overall:
            t.add_row(o.scope, o.metric, interval(o.tau, o.tau_ci), o.verdict, str(o.agrees_on), str(o.disagrees_on),
                      str(o.boards))
        con.print(t)


def heatmap(rows: Sequence[Agreement], path: Path) -> Path:
    """One picture: metrics (and the random-metric control) × boards, coloured by τ_b, each cell annotated
    with τ_b, its 95 % interval and the verdict's mark (✓ agrees, ✗ disagrees, ? cannot tell; "blind" when
    the metric is model-blind); "n/a" where no cell could be scored."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.role == "metric" or r.metric == RANDOM_METRIC]
    boards = list(dict.fromkeys(r.board for r in shown))
    metrics = sorted(dict.fromkeys(r.metric for r in shown), key=lambda m: m == RANDOM_METRIC)  # the control last
    grid = np.full((len(metrics), len(boards)), np.nan)
    fig, ax = plt.subplots(figsize=(2.6 + 2.3 * len(boards), 0.9 + 0.55 * len(metrics)), dpi=110)
    mark = {"agrees": "✓", "disagrees": "✗", "cannot tell": "?"}
    for r in shown:
        i, j = metrics.index(r.metric), boards.index(r.board)
        if r.tau is not None:
            grid[i, j] = r.tau
        text = "n/a" if r.tau is None else f"{r.tau:+.2f} {mark[r.verdict]}" + (" blind" if r.model_blind else "")
        if r.tau_ci:
            text += f"\n[{r.tau_ci[0]:+.2f}, {r.tau_ci[1]:+.2f}]"
        ax.text(j, i, text, ha="center", va="center", fontsize=7.5)
    im = ax.imshow(grid, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(boards)), boards, fontsize=8)
    ax.set_yticks(range(len(metrics)), metrics, fontsize=8)
    ax.set_title("Kendall τ_b of each GT-free metric's ranking with the ground truth's", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8, label="τ_b")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
