"""How many hidden copies × instances a board needs to separate a method from its floor (issue #55, docs/leaderboard.md
"Copies sized to rank").

From the hidden-copy Results of two submissions on one board (a results folder, as `xaibench evaluate --hidden-draws
D --hidden-limit N` writes them), this gives the 95 % interval of their difference on the copies

* **measured** at every size d × n the runs hold (the first d copies, the first n instances of each: exactly what
  `--hidden-draws d --hidden-limit n` would have evaluated), with the board's own paired bootstrap over instances and
  copies (`leaderboard.hidden`: per copy the track's estimate under `draw_weights(seed = SEED + 101 + copy)`, the
  copies resampled by `draw_seed_weights(seed = SEED + 7)`), so the full size reproduces the board's interval;
* **predicted** at any size from two variance components of the difference Δ: within a copy, the bootstrap variance
  of copy c's Δ over its n_c instances, v_c ≈ σ_w² / n_c (σ_w² = mean of n_c·v_c), and between copies, the variance of
  the copies' Δ_c less the part the instances explain, σ_b² = max(0, var_c(Δ_c) − mean(v_c)). A board of d copies × n
  instances then has half-width ≈ 1.96·√(σ_b²/d + σ_w²/(d·n)); one copy alone has no copy-to-copy term in its
  interval (its bootstrap cannot see it), so its measured interval is narrower than what the next secret's copy will
  give — the prediction keeps the term;
* the **power** at each size: the chance that a board drawn from another secret separates them, Φ(Δ/se − 1.96) with
  se = half-width / 1.96 (Δ's estimate taken as normal around today's Δ).

Scores may be re-computed from the cached maps under another AIXI normalisation (`--aixi-normalisation positive`:
S⁺/ΣS⁺, uniform where S⁺ ≡ 0; `absolute`: |S|) to size a board before that normalisation lands.

    XAIBENCH_HOME=... python tests/perf/copy_sizing.py --track idc --resource idc/mr-wga --model cnn \\
        --method lime-text --floor predicted-class-lexicon [--grid 1x15,3x10,3x20,5x40]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Z = 1.959963984540054


@dataclass
class Copy:
    """One copy's per-instance scores of the two submissions (the same instances, in the run's order)."""

    draw: int
    a: tuple[dict[str, np.ndarray], np.ndarray]  # (scores, ok) of the method
    b: tuple[dict[str, np.ndarray], np.ndarray]  # of the floor
    n: int


def load_copies(results: Path, track: str, resource: str, model: str, method: str, floor: str,
                round_id: str | None = None) -> list[Copy]:
    """Each draw's pair of Results (method, floor) of one round, newest per draw; the runs must cover the same
    instances of a copy."""
    from benchmark.store.results import Result
    from benchmark.variant_runs.hidden import hidden_of

    found: dict[tuple[str, int], dict[str, Result]] = {}
    for path in sorted(results.rglob("*.json")):
        if "/hidden-" not in str(path):
            continue
        try:
            r = Result.load(path)
        except Exception:  # noqa: BLE001 - another kind of file, or a damaged one: not ours to judge here
            continue
        h = hidden_of(r)
        if h is None or r.track != track or r.resource.get("name") != resource or not str(path).count(f"/{model}/"):
            continue
        if round_id is not None and str(h.get("round")) != round_id:
            continue
        name = r.submission.get("name")
        if name not in (method, floor):
            continue
        key = (str(h.get("round")), int(h.get("draw", -1)))
        old = found.setdefault(key, {}).get(name)
        if old is None or (r.created or "") > (old.created or ""):
            found[key][name] = r
    rounds = sorted({k[0] for k in found})
    if not rounds:
        raise SystemExit(f"no hidden-copy Results of {method} / {floor} on {track} {resource}/{model} in {results}")
    rnd = round_id or max(rounds, key=lambda r: sum(1 for k in found if k[0] == r))
    out = []
    for (r, d), pair in sorted(found.items()):
        if r != rnd or method not in pair or floor not in pair:
            continue
        ra, rb = pair[method], pair[floor]
        ia = (ra.coverage or {}).get("ids_sha256")
        if ia != (rb.coverage or {}).get("ids_sha256"):
            raise SystemExit(f"copy {d}: {method} and {floor} were run on different instances")
        sa, sb = ra.scores(), rb.scores()
        out.append(Copy(d, sa.seed(0), sb.seed(0), ra.n_instances))
    return out


def _prefix(sc: tuple[dict[str, np.ndarray], np.ndarray], n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    scores, ok = sc
    return {k: v[:n] for k, v in scores.items()}, ok[:n]


def _oriented(x: np.ndarray, direction: str) -> np.ndarray:
    return x if direction == "higher" else -x


def copy_draws(trk, c: Copy, n: int, metric: str, direction: str) -> tuple[np.ndarray, float]:
    """(B,) bootstrap draws of the oriented Δ = method − floor on copy c's first n instances (+ = the method better),
    and its point value (the track's estimate on all n)."""
    from benchmark.bootstrap import SEED, draw_weights, metric_draws

    a, b = _prefix(c.a, n), _prefix(c.b, n)
    w = draw_weights(trk.units(a[0], n), seed=SEED + 101 + c.draw)
    ones = np.ones((1, n))
    da = metric_draws(trk, [a], w)[metric]
    db = metric_draws(trk, [b], w)[metric]
    pa = metric_draws(trk, [a], ones)[metric][0]
    pb = metric_draws(trk, [b], ones)[metric][0]
    return _oriented(da - db, direction), float(_oriented(np.array([pa - pb]), direction)[0])


def board_interval(trk, copies: list[Copy], n: int, metric: str, direction: str) -> tuple[float, tuple[float, float]]:
    """The board's Δ and its 95 % percentile interval over `copies`, each on its first n instances
    (`leaderboard.hidden._paired`: copies resampled by `draw_seed_weights(seed = SEED + 7)`)."""
    from benchmark.bootstrap import SEED, draw_seed_weights, percentile_interval

    v = draw_seed_weights(len(copies), seed=SEED + 7)
    per = [copy_draws(trk, c, min(n, c.n), metric, direction) for c in copies]
    draws = np.stack([d for d, _ in per], axis=1)  # (B, D)
    good = np.isfinite(draws)
    num = np.where(good, v * np.nan_to_num(draws), 0.0).sum(axis=1)
    den = np.where(good, v, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        vals = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    ci = percentile_interval(vals) or (math.nan, math.nan)
    return float(np.mean([p for _, p in per])), ci


@dataclass
class Components:
    delta: float  # mean over copies of the copies' Δ
    sigma_w2: float  # within-copy variance per instance (n · bootstrap variance)
    sigma_b2: float  # between-copy variance
    copies: int
    instances: float  # mean instances per copy

    def half_width(self, d: int, n: int) -> float:
        return Z * math.sqrt(self.sigma_b2 / d + self.sigma_w2 / (d * n))

    def power(self, d: int, n: int) -> float:
        """The chance that a board of d copies × n instances drawn from another secret separates the two (its
        interval excludes 0 on the method's side), were Δ's estimate normal with the predicted spread:
        Φ(Δ / se − 1.96)."""
        se = self.half_width(d, n) / Z
        return 0.5 * math.erfc(-(self.delta / se - Z) / math.sqrt(2)) if se > 0 else float(self.delta > 0)


def components(trk, copies: list[Copy], metric: str, direction: str) -> Components:
    """The variance components of Δ (module docstring) from every copy on all its instances."""
    pts, within = [], []
    for c in copies:
        d, p = copy_draws(trk, c, c.n, metric, direction)
        d = d[np.isfinite(d)]
        pts.append(p)
        within.append((float(np.var(d, ddof=1)), c.n))
    sw2 = float(np.mean([v * n for v, n in within]))
    vb = float(np.var(pts, ddof=1)) if len(pts) > 1 else 0.0
    sb2 = max(0.0, vb - float(np.mean([v for v, _ in within])))
    return Components(float(np.mean(pts)), sw2, sb2, len(copies), float(np.mean([c.n for c in copies])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, help="default: $XAIBENCH_HOME/results")
    ap.add_argument("--track", required=True)
    ap.add_argument("--resource", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--method", required=True, help="the submission to separate (the board's best)")
    ap.add_argument("--floor", required=True, help="the floor (the best data prior on the copies)")
    ap.add_argument("--metric", help="default: the track's primary metric")
    ap.add_argument("--round", dest="round_id")
    ap.add_argument("--grid", default="1x10,1x15,1x30,3x10,3x15,3x20,3x30,5x20,5x40,10x40",
                    help="sizes d x n to predict")
    ap.add_argument("--aixi-normalisation", choices=("signed", "positive", "absolute"), default="signed",
                    help="AIXI: re-score KL from the cached maps under this normalisation")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    from benchmark.resources import data_home
    from benchmark.tracks import get_track

    trk = get_track(a.track)
    results = a.results or data_home() / "results"
    copies = load_copies(results, a.track, a.resource, a.model, a.method, a.floor, a.round_id)
    metric = a.metric or trk.primary_metric
    direction = next(m.direction for m in trk.metric_objects() if m.name == metric)
    if a.aixi_normalisation != "signed":
        _rescore_aixi(copies, results, a, metric)
    comp = components(trk, copies, metric, direction)
    print(f"{a.track} {a.resource}/{a.model}: {a.method} against {a.floor} on {metric} ({direction} is better"
          f"{'; AIXI normalisation ' + a.aixi_normalisation if a.aixi_normalisation != 'signed' else ''}), "
          f"{len(copies)} copies × {comp.instances:.0f} instances measured")
    print(f"Δ = {comp.delta:+.4g} (+ = the method better); σ_w² = {comp.sigma_w2:.4g} per instance, "
          f"σ_b² = {comp.sigma_b2:.4g} between copies")
    rows = []
    print(f"{'d×n':>8s} {'measured Δ [95% CI]':>34s} {'predicted ± half-width':>24s} {'P(separates)':>13s}")
    for size in a.grid.split(","):
        d, n = (int(x) for x in size.lower().split("x"))
        pred = comp.half_width(d, n)
        meas = ""
        m_ci = None
        if d <= len(copies) and n <= min(c.n for c in copies):
            delta, m_ci = board_interval(trk, copies[:d], n, metric, direction)
            meas = f"{delta:+.4g} [{m_ci[0]:+.4g}, {m_ci[1]:+.4g}]"
        power = comp.power(d, n)
        print(f"{size:>8s} {meas:>34s} {f'{comp.delta:+.4g} ± {pred:.4g}':>24s} {power:>13.2f}")
        rows.append({"d": d, "n": n, "measured_ci": m_ci, "predicted_half_width": pred, "power": power})
    if a.json:
        a.json.write_text(json.dumps({"components": comp.__dict__, "rows": rows}, indent=1))
    return 0


def _rescore_aixi(copies: list[Copy], results: Path, a, metric: str) -> None:
    """Re-score each copy's KL from the cached maps under `a.aixi_normalisation` (the copy's ground truth rebuilt from
    this home's secret, as `xaibench verify` does)."""
    from benchmark.resources import data_home, load_resource
    from benchmark.store.results import Result
    from benchmark.tracks import get_track
    from benchmark.variant_runs.hidden import copy_for_run, hidden_of
    from benchmark.variant_runs.randomisation import result_outputs
    from benchmark.models.variants.hidden import local_round

    trk = get_track(a.track)
    res = load_resource(a.resource)
    rnd = local_round()
    for c in copies:
        for name, attr in ((a.method, "a"), (a.floor, "b")):
            path = next(p for p in results.rglob(f"{name}*.json") if f"/d{c.draw}/" in str(p) and "/hidden-" in str(p))
            r = Result.load(path)
            h = hidden_of(r) or {}
            _, _, inst, _ = copy_for_run(trk, res, a.model, r.resource["split"], int(h["draw"]), r.n_instances,
                                         {"hash": h.get("of", "")}, rnd)
            [run] = result_outputs(r, inst.ids, data_home())
            scores, ok = getattr(c, attr)
            maps = [run[i].array for i in inst.ids]
            new = aixi_kl(maps, inst.truths["gt"], a.aixi_normalisation)
            scores = dict(scores)
            scores[metric] = np.where(ok, new, np.nan)
            setattr(c, attr, (scores, ok))


def aixi_kl(maps, gts, how: str) -> np.ndarray:
    """The track's KL (`benchmark.metrics.saliency.kl`) of S⁺ (`positive`) or |S| (`absolute`): min–max of a map
    whose minimum is 0 is S/max S, so P_S = S⁺/ΣS⁺ (uniform where S⁺ ≡ 0: a constant map) — the positive part's
    normalisation wherever some pixel is ≤ 0 (every method's map here; a strictly positive map differs)."""
    from benchmark.metrics.saliency import kl

    s = np.stack([np.asarray(m, dtype=np.float64) for m in maps])
    return kl(np.maximum(s, 0.0) if how == "positive" else np.abs(s), np.asarray(gts))


if __name__ == "__main__":
    sys.exit(main())
