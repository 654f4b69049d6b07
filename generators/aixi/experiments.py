"""The AIXI paper's experiments (SPECS §3.8), run through the ordinary runner, with the paper's
numbers (SPECS §3.9; columns: KL, EMD on the 4×4 paper grid) printed beside ours.

1. LIME fidelity vs sample size, predictor = the function (n ∈ {1, 2, 4, 8, 16, 32, 64}, capped at 2^K);
   n = 1 is the baseline of Table 1.
2. predictor = the function, exhaustive LIME (all 2^K samples);
3. predictor = the trained CNN, exhaustive LIME.

Beside them, the study that chose the board's normalisation of signed maps (issue #55, docs/aixi.md "Signed
maps"): every built-in and data prior on the function model and its hidden copies under each normalisation
(`normalisation_study`, `xaibench reproduce aixi-normalisation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.bootstrap import SEED, draw_seed_weights, draw_weights, metric_draws, percentile_interval
from benchmark.metrics.saliency import NORMALISATIONS
from benchmark.resources import data_home
from benchmark.runner import evaluate
from benchmark.tracks import get_track

# SPECS §3.9 (paper Tables 1-3): (KL, EMD) per (function, dataset)
PAPER = {
    1: {("ssin", "shape"): (3.8873, 0.8722), ("ssin", "color"): (1.2284, 0.5631),
        ("suum", "shape"): (3.8926, 0.8722), ("suum", "color"): (1.2286, 0.5631),
        ("class", "shape"): (4.4907, 0.3579), ("class", "color"): (2.2768, 0.2880)},
    2: {("ssin", "shape"): (1.4895, 0.0618), ("ssin", "color"): (0.1993, 0.0414),
        ("suum", "shape"): (1.2537, 0.0469), ("suum", "color"): (0.1954, 0.0375),
        ("class", "shape"): (2.3396, 0.0394), ("class", "color"): (1.4000, 0.0878)},
    3: {("ssin", "shape"): (1.6722, 0.0728), ("ssin", "color"): (0.3029, 0.0784),
        ("suum", "shape"): (1.6708, 0.0734), ("suum", "color"): (0.3175, 0.0854),
        ("class", "shape"): (1.5751, 0.0679), ("class", "color"): (1.2971, 0.0856)},
}
SAMPLE_SIZES = (1, 2, 4, 8, 16, 32, 64)


@dataclass
class Row:
    experiment: int
    function: str
    dataset: str
    n_samples: int  # 0 = all 2^K
    kl: float | None
    emd_paper_grid: float | None
    emd: float | None
    n: int
    excluded: int
    failed: int

    @property
    def paper(self) -> tuple[float, float] | None:
        if self.experiment == 1 and self.n_samples != 1:
            return None
        return PAPER[self.experiment].get((self.function, self.dataset))


def run(experiments=(1, 2, 3), datasets=("shape", "color"), functions=("ssin", "suum", "class"),
        limit: int | None = None, batch_size: int = 32, results_dir=None,
        normalisation: str = "minmax") -> list[Row]:
    """The paper's experiments through `evaluate`, scored under `normalisation` ("minmax" — SPECS §3.7's
    [I] choice, the one that reproduces the paper's tables; docs/aixi.md)."""
    rows: list[Row] = []
    for d in datasets:
        for f in functions:
            resource = f"aixi/{d}-{f}"
            plan = []
            if 1 in experiments:
                plan += [(1, "function", n) for n in SAMPLE_SIZES]
            if 2 in experiments:
                plan.append((2, "function", 0))
            if 3 in experiments:
                plan.append((3, "cnn", 0))
            for exp, model, n in plan:
                params = {} if n == 0 else {"n_samples": n}
                r = evaluate("lime-exhaustive", track="aixi", resource=resource, model=model, limit=limit,
                             batch_size=batch_size, params=params, results_dir=results_dir,
                             metric_params={"normalisation": normalisation})
                m = r.metrics
                rows.append(Row(exp, f, d, n, m["kl"].mean, m["emd-paper"].mean, m["emd"].mean,
                                m["kl"].n, m["kl"].excluded, r.n_failed))
    return rows


def table(rows: list[Row]):
    from rich.table import Table

    t = Table(title="AIXI: exhaustive LIME vs ground truth (ours | paper)")
    for col in ("exp", "function", "dataset", "samples", "KL ↓", "KL paper", "EMD 4×4 ↓", "EMD paper",
                "EMD 32×32 ↓", "n", "excl.", "failed"):
        t.add_column(col, justify="right" if col not in ("function", "dataset") else "left")

    def f(x):
        return "—" if x is None else f"{x:.4f}"

    for r in rows:
        p = r.paper
        t.add_row(str(r.experiment), r.function, r.dataset, "all" if r.n_samples == 0 else str(r.n_samples),
                  f(r.kl), f(p[0]) if p else "", f(r.emd_paper_grid), f(p[1]) if p else "", f(r.emd),
                  str(r.n), str(r.excluded), str(r.failed))
    return t


# ------------------------------------------------------------------------------ signed maps (issue #55)
# every AIXI built-in that runs on the function model (a black box: no gradient method applies) and every control /
# data prior; the data priors (`data_prior` controls) set the hidden board's floor
NORMALISATION_SUBMISSIONS = ("lime-exhaustive", "lime-image", "kernel-shap", "occlusion", "foreground", "centre-prior",
                             "uniform", "random")
DATA_PRIORS = ("foreground", "centre-prior")
CONFIGS = tuple(f"{d}-{f}" for d in ("shape", "color") for f in ("ssin", "suum", "class"))


@dataclass
class NormalisationCell:
    """One submission on one board under one normalisation: KL / EMD on the published function model and the mean
    over the hidden copies; on the copies, the difference from the floor (the better data prior there; + = better
    than the floor) with its 95 % interval from a paired bootstrap over instances and copies (as the board's)."""

    config: str
    normalisation: str
    submission: str
    kl: float | None
    emd: float | None
    hidden_kl: float | None
    hidden_emd: float | None
    delta: float | None = None
    delta_ci: tuple[float, float] | None = None
    floor: str = ""
    empty_maps: int = 0  # published + copies: maps with nothing to normalise (`benchmark.tracks.aixi`)

    @property
    def beats_floor(self) -> bool:
        return self.delta_ci is not None and self.delta_ci[0] > 0


def normalisation_study(configs=CONFIGS, submissions=NORMALISATION_SUBMISSIONS, normalisations=None,
                        limit: int | None = 40, draws: int = 3, hidden_limit: int | None = 10,
                        results_dir=None, batch_size: int = 16,
                        hidden_form: str = "weights") -> list[NormalisationCell]:
    """Every submission on the function model of each config and on `draws` hidden copies of it (this home's
    secret; the first `hidden_limit` images of each), scored under every normalisation of
    `benchmark.metrics.saliency.NORMALISATIONS`. Everything runs through `evaluate`: each map is explained once per
    (submission, image, model copy) — the output cache does not depend on the metric options — and scored once per
    normalisation, each normalisation's Results in their own folder (`results_dir/<normalisation>`).

    A submission is a name or folder, or (name or folder, parameters). `hidden_form` builds the copies with a
    candidate construction (`benchmark.models.aixi_function.HIDDEN_FORMS`; the track's own is "weights"), set on the
    track for the study only: its copies have their own hashes, hence their own caches, and their Results go to
    `results_dir/<form>/<normalisation>`."""
    normalisations = tuple(normalisations or NORMALISATIONS)
    base = Path(results_dir) if results_dir is not None else data_home() / "results-normalisation"
    if hidden_form != "weights":
        base = base / hidden_form
    track = get_track("aixi")
    kept, track.hidden_form = track.hidden_form, hidden_form  # type: ignore[attr-defined]  # a study's setting
    cells: list[NormalisationCell] = []
    try:
        for config in configs:
            runs: dict[str, dict[str, tuple]] = {n: {} for n in normalisations}
            for entry in submissions:
                sub, params = entry if isinstance(entry, tuple) else (entry, {})
                for norm in normalisations:
                    kw = dict(track="aixi", resource=f"aixi/{config}", model="function", batch_size=batch_size,
                              metric_params={"normalisation": norm}, results_dir=base / norm, params=dict(params))
                    published = evaluate(sub, limit=limit, **kw)
                    hidden = [evaluate(sub, hidden=k, hidden_limit=hidden_limit, **kw) for k in range(draws)]
                    runs[norm][_label(sub, params)] = (published, hidden)
            for norm in normalisations:
                cells += _against_floor(config, norm, runs[norm])
    finally:
        track.hidden_form = kept  # type: ignore[attr-defined]  # restored
    return cells


def read_study(results_dir, draws: int | None = None) -> list[NormalisationCell]:
    """The cells of a study already run, from its Results (`results_dir/<normalisation>/…`): per board and
    normalisation, each submission's Result on the published model and its Results on the copies 0 … `draws` − 1
    (default: every copy each submission has, the same for all)."""
    from collections import defaultdict

    from benchmark.store.results import load_results

    cells: list[NormalisationCell] = []
    for norm in NORMALISATIONS:
        found, _problems = load_results(Path(results_dir) / norm)
        published: dict[tuple[str, str], Any] = {}
        hidden: dict[tuple[str, str], dict[int, Any]] = defaultdict(dict)
        for r in found:
            key = (str(r.resource["name"]).split("/", 1)[-1], r.submission["name"].split("{", 1)[0])
            h = (r.model or {}).get("hidden")
            if isinstance(h, dict):
                hidden[key][int(h["draw"])] = r
            else:
                published[key] = r
        for config in sorted({c for c, _s in published}):
            runs = {}
            for (c, sub), pub in sorted(published.items()):
                copies = hidden.get((c, sub), {})
                n = draws if draws is not None else len(copies)
                if c == config and all(k in copies for k in range(n)) and n:
                    runs[sub] = (pub, [copies[k] for k in range(n)])
            cells += _against_floor(config, norm, runs)
    return cells


def _label(sub, params: dict | None = None) -> str:
    name = Path(str(sub)).name.replace("_", "-")
    return name + "".join(f"[{k}={v}]" for k, v in sorted((params or {}).items()))


def _hidden_draws(track, hidden: list, metric: str) -> tuple[float | None, np.ndarray]:
    """The mean over the copies of a metric and its bootstrap draws over instances and copies, with the board's
    seeds (`leaderboard.hidden`: copy d's instances drawn with seed SEED + 101 + d, the copies with SEED + 7)."""

    v = draw_seed_weights(len(hidden), seed=SEED + 7)
    num, den = np.zeros(v.shape[0]), np.zeros(v.shape[0])
    points = []
    for k, r in enumerate(hidden):
        sc = r.scores()
        per_seed = [sc.seed(s) for s in range(len(sc.seeds))]
        w = draw_weights(track.units(per_seed[0][0], r.n_instances), seed=SEED + 101 + k)
        got = metric_draws(track, per_seed, w, draw_seed_weights(len(per_seed)))[metric]
        good = np.isfinite(got)
        num += np.where(good, v[:, k] * np.nan_to_num(got), 0.0)
        den += np.where(good, v[:, k], np.where(v[:, k] > 0, np.nan, 0.0))
        points.append(r.metrics[metric].mean)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    point = float(np.mean(points)) if points and all(p is not None for p in points) else None
    return point, draws


def _against_floor(config: str, norm: str, runs: dict[str, tuple]) -> list[NormalisationCell]:
    """Cells of one board under one normalisation: each submission against the best data prior on the copies."""
    track = get_track("aixi")
    kl = {s: _hidden_draws(track, hidden, "kl") for s, (_pub, hidden) in runs.items()}
    points = {s: p for s, (p, _draws) in kl.items() if p is not None}
    priors = [s for s in DATA_PRIORS if s in points]
    floor = min(priors, key=points.__getitem__) if priors else ""
    cells = []
    for s, (pub, hidden) in runs.items():
        empty = sum(int((r.extra.get("empty_maps") or {}).get("count", 0)) for r in [pub, *hidden])
        cell = NormalisationCell(config, norm, s, pub.metrics["kl"].mean, pub.metrics["emd"].mean, points.get(s),
                                 _mean([r.metrics["emd"].mean for r in hidden]), floor=floor, empty_maps=empty)
        if floor and s != floor and s in points:
            cell.delta = points[floor] - points[s]  # KL: lower is better, so + = better than the floor
            cell.delta_ci = percentile_interval(kl[floor][1] - kl[s][1])
        cells.append(cell)
    return cells


def _mean(values) -> float | None:
    return None if not values or any(v is None for v in values) else sum(values) / len(values)


def normalisation_table(cells: list[NormalisationCell]):
    """The study as one table per config: published KL / EMD and hidden KL / EMD per normalisation, and Δ KL
    against the floor on the copies (✓ = beyond the interval)."""
    from rich.table import Table

    def f(x):
        return "—" if x is None else f"{x:.3f}"

    t = Table(title="AIXI function model: KL ↓ / EMD ↓ under each normalisation (published | hidden copies)")
    for col in ("config", "normalisation", "submission", "KL", "EMD", "KL copies", "EMD copies",
                "Δ KL vs floor [95 %]", "empty maps"):
        t.add_column(col, justify="left" if col in ("config", "normalisation", "submission") else "right")
    for c in cells:
        delta = "" if c.delta is None else (f"{c.delta:+.3f} [{c.delta_ci[0]:+.3f}, {c.delta_ci[1]:+.3f}]"
                                            if c.delta_ci else f"{c.delta:+.3f}") + (" ✓" if c.beats_floor else "")
        t.add_row(c.config, c.normalisation, c.submission + (" (floor)" if c.submission == c.floor else ""),
                  f(c.kl), f(c.emd), f(c.hidden_kl), f(c.hidden_emd), delta, str(c.empty_maps))
    return t
