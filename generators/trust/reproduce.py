"""`xaibench reproduce trust`: Table 3 of the TOKI paper (Nguyen Tung et al., FSE 2025) in its shape,
for every built trust set, through the harness (each oracle fits and judges in the sandboxed worker,
`benchmark.runner.evaluate`; outputs cached, so a second call only re-prints).

Rows per trust set: TOKI-lime / -omis / -grad, Naive, the three –K.I ablations (SPECS §1.6), the
random control; columns Acc, Pre, Sen, F1, Spec, G-mean (trustworthy = positive, pooled), the
keyword-identification time (the oracle's `fit`, s) and the label time (the judge calls, s in all).
Beside each of our rows: the paper's row (Table 3, SPECS §1.11) and, for Naive, the row recomputed
from the Fig. 6 confidence-bin counts (`naive_from_bins`), which matches Table 3 to ±0.001.

The board rows (issue #24, `extras=True`), a second table per set: every oracle's AUC with its bootstrap
95 % interval, balanced accuracy, G-mean beside the chance G-mean √(q(1 − q)) at its own trustworthy rate
q, and these added rows: "rationale ceiling" (role reference: the best keyword list the training
rationales allow), "chance @ TOKI rate" (the random control at TOKI-lime's own trustworthy rate: its AUC is
½ at every rate, so only its verdict metrics are rate-matched), "text length" and "explanation size" (the
blind controls, issue #38: a board whose winner does not beat them does not discriminate),
"TOKI-lime θd=… val", "TOKI-lime (–K.I) val" and "Naive θc=… val" (θ_dist, the class-name words and the
importance reading / θ_conf tuned on the validation split by AUC, `generators.trust.tune`, when tuned), and
"TOKI-lime equiv." (the paper's importance-equivalent reading).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from benchmark.metrics.trust import FIG6_BINS, LABELS, naive_from_bins, trust_scores

PAPER_METRICS = ("acc", "pre", "sen", "f1", "spec", "gmean")  # Table 3's columns

# (row label, submission) in the paper's order
ORACLES = (("TOKI-lime", "toki-lime"), ("TOKI-omis", "toki-omis"), ("TOKI-grad", "toki-grad"),
           ("Naive", "naive-oracle"), ("TOKI-lime (–K.I)", "toki-lime-ki"), ("TOKI-omis (–K.I)", "toki-omis-ki"),
           ("TOKI-grad (–K.I)", "toki-grad-ki"), ("random", "random-oracle"))

# Table 3 [P] (SPECS §1.11): Acc, Pre, Sen, F1, Spec, G-mean, KI time (s), label time (s)
PAPER_TABLE3: dict[str, dict[str, tuple]] = {
    "dongs": {
        "TOKI-lime": (0.930, 0.947, 0.974, 0.960, 0.638, 0.789, 4866, 1053),
        "TOKI-omis": (0.882, 0.912, 0.956, 0.934, 0.392, 0.612, 98, 379),
        "TOKI-grad": (0.853, 0.944, 0.891, 0.917, 0.387, 0.587, 41, 704),
        "Naive": (0.771, 0.893, 0.836, 0.864, 0.340, 0.533, None, None),
        "TOKI-lime (–K.I)": (0.302, 0.985, 0.209, 0.345, 0.915, 0.437, None, 1051),
        "TOKI-omis (–K.I)": (0.285, 0.956, 0.192, 0.320, 0.902, 0.416, None, 377),
        "TOKI-grad (–K.I)": (0.233, 1.000, 0.170, 0.290, 0.968, 0.406, None, 702),
    },
    "cams": {
        "TOKI-lime": (0.878, 0.872, 0.941, 0.905, 0.775, 0.854, 198359, 224540),
        "TOKI-omis": (0.735, 0.840, 0.622, 0.715, 0.864, 0.733, 30030, 31968),
        "TOKI-grad": (0.539, 0.888, 0.499, 0.639, 0.719, 0.599, 2366, 3116),
        "Naive": (0.615, 0.768, 0.543, 0.636, 0.732, 0.631, None, None),
        "TOKI-lime (–K.I)": (0.422, 0.648, 0.343, 0.449, 0.551, 0.435, None, 224435),
        "TOKI-omis (–K.I)": (0.442, 0.557, 0.232, 0.327, 0.683, 0.398, None, 31912),
        "TOKI-grad (–K.I)": (0.388, 0.836, 0.356, 0.500, 0.531, 0.435, None, 3071),
    },
    "hatexplain": {
        "TOKI-lime": (0.933, 0.966, 0.961, 0.963, 0.661, 0.797, 352721, 464720),
        "TOKI-omis": (0.855, 0.928, 0.904, 0.916, 0.538, 0.697, 4630, 4913),
        "TOKI-grad": (0.684, 0.375, 0.385, 0.380, 0.785, 0.550, 5334, 7303),  # internally inconsistent (SPECS)
        "Naive": (0.640, 0.942, 0.645, 0.765, 0.605, 0.624, None, None),
        "TOKI-lime (–K.I)": (0.103, 0.953, 0.014, 0.027, 0.984, 0.117, None, 464606),
        "TOKI-omis (–K.I)": (0.137, 0.879, 0.010, 0.020, 0.975, 0.099, None, 4818),
        "TOKI-grad (–K.I)": (0.737, 0.586, 0.020, 0.039, 0.979, 0.140, None, 7271),
    },
}
# Table 2's trustworthy / untrustworthy counts per paper data set: a paper row's trustworthy rate is
# (Sen·T + (1 − Spec)·U) / (T + U)
PAPER_COUNTS = {"dongs": (311, 47), "cams": (1206, 739), "hatexplain": (3002, 304)}
# which paper data set stands beside each of ours (ERASER movies ↔ Dong's movie reviews: other data, other model)
PAPER_OF = {"hatexplain": "hatexplain", "cams": "cams", "movies": "dongs"}


@dataclass
class Row:
    dataset: str  # our trust config, e.g. hatexplain-cnn
    method: str  # row label
    source: str  # "ours" | "paper" | "Fig. 6"
    values: dict[str, float | None]
    ki_s: float | None = None
    label_s: float | None = None
    n: int | None = None
    note: str = ""
    role: str = "method"
    auc_ci: tuple[float, float] | None = None
    rate: float | None = None  # the verdicts' trustworthy rate
    chance_gmean: float | None = None  # √(q(1 − q)) at that rate
    board: bool = False  # an added board row (not one of Table 3's)


def built_sets(root: Path | None = None) -> list[str]:
    """The trust configs that hold explained predictions (not the embeddings, not imported sets
    without a model under test)."""
    from benchmark.resources import resource_root
    from benchmark.resources.store import read_provenance

    root = Path(root) if root else resource_root("trust")
    try:
        configs = read_provenance(root).get("configs", {})
    except (FileNotFoundError, OSError):
        return []
    return sorted(c for c, meta in configs.items() if meta.get("params", {}).get("model_dir"))


def paper_rows(dataset: str) -> list[Row]:
    """Table 3's rows for the paper data set beside `dataset` (`<name>-<model>`), plus Naive from Fig. 6."""
    paper = PAPER_OF.get(dataset.split("-")[0])
    if paper is None:
        return []
    rows = []
    for method, v in PAPER_TABLE3[paper].items():
        vals = dict(zip(PAPER_METRICS, v[:6]))
        vals["bacc"] = (vals["sen"] + vals["spec"]) / 2
        t, u = PAPER_COUNTS[paper]
        rate = (vals["sen"] * t + (1 - vals["spec"]) * u) / (t + u)
        rows.append(Row(dataset, method, f"paper ({paper})", vals, v[6], v[7], rate=round(rate, 4),
                        chance_gmean=round((rate * (1 - rate)) ** 0.5, 4)))
    fig6 = trust_scores(naive_from_bins(FIG6_BINS[paper]))
    rows.append(Row(dataset, "Naive", f"Fig. 6 ({paper})", dict(fig6.values), n=sum(fig6.counts.values())))
    return rows


@dataclass
class _EvalOptions:
    """How `run` evaluates every oracle: `evaluate`'s options shared by all rows."""

    params: dict[str, dict[str, Any]] | None  # per submission
    limit: int | None
    results_dir: Path | None
    sandbox: str
    fit_timeout_s: float


def _our_row(opts: _EvalOptions, ds: str, model: str, sub: str, label: str,
             extra_params: dict[str, Any] | None = None, board: bool = False) -> Row:
    """Evaluate submission `sub` on `trust/<ds>` through the harness and read its row."""
    from benchmark.runner import evaluate

    p = {**dict((opts.params or {}).get(sub, {})), **(extra_params or {})}
    r = evaluate(sub, track="trust", resource=f"trust/{ds}", model=model, limit=opts.limit, params=p,
                 results_dir=opts.results_dir, sandbox=opts.sandbox, fit_timeout_s=opts.fit_timeout_s)
    values = {m.removeprefix("trust-"): v.mean for m, v in r.metrics.items()}
    auc = r.metrics.get("trust-auc")
    chance = (r.extra.get("chance_at_rate") or {}).get("trust-gmean")
    return Row(ds, label, "ours", values, r.extra.get("fit_s"), r.wall_time_s, r.n_instances - r.n_failed,
               note=f"{r.n_failed} failed" if r.n_failed else "", role=r.submission.get("role", "method"),
               auc_ci=auc.ci95 if auc is not None and auc.ci95 else None,
               rate=r.extra.get("trustworthy_rate"), chance_gmean=chance, board=board)


def run(datasets: Sequence[str] | None = None, oracles: Sequence[str] | None = None,
        params: dict[str, dict[str, Any]] | None = None, limit: int | None = None, results_dir: Path | None = None,
        sandbox: str = "auto", fit_timeout_s: float = 0.0, extras: bool = True) -> list[Row]:
    """Our rows (through the harness) and the paper's, per built trust set; with `extras` the board rows
    (module docstring)."""
    from generators.trust.tune import read_tuning

    names = dict((s, m) for m, s in ORACLES)
    chosen = list(oracles) if oracles else [s for _, s in ORACLES]
    opts = _EvalOptions(params, limit, results_dir, sandbox, fit_timeout_s)
    rows: list[Row] = []
    for ds in datasets or built_sets():
        model = model_of(ds)
        for sub in chosen:
            rows.append(_our_row(opts, ds, model, sub, names.get(sub, sub)))
        if extras:
            toki = next((r for r in rows if r.dataset == ds and r.method == "TOKI-lime" and r.source == "ours"), None)
            rows.append(_our_row(opts, ds, model, "rationale-ceiling", "rationale ceiling", board=True))
            if toki is not None and toki.rate is not None:
                rows.append(_our_row(opts, ds, model, "random-oracle", "chance @ TOKI rate",
                                     {"p": round(toki.rate, 6)}, board=True))
            rows.append(_our_row(opts, ds, model, "text-length-oracle", "text length", board=True))
            rows.append(_our_row(opts, ds, model, "explanation-size-oracle", "explanation size", board=True))
            rows.append(_our_row(opts, ds, model, "toki-lime", "TOKI-lime equiv.", {"importance": "equivalent"},
                                 board=True))
            tuned = read_tuning(ds)
            if tuned:
                td, tc = tuned["toki-lime"]["theta_dist"], tuned["naive-oracle"]["theta_conf"]
                tp = {"theta_dist": td, **{k: tuned["toki-lime"][k] for k in ("class_names", "importance")
                                           if k in tuned["toki-lime"]}}
                rows.append(_our_row(opts, ds, model, "toki-lime", f"TOKI-lime θd={td:g} val", tp, board=True))
                if "toki-lime-ki" in tuned:  # the ablation tuned on the same grid (class names, importance)
                    kp = {k: tuned["toki-lime-ki"][k] for k in ("class_names", "importance")}
                    rows.append(_our_row(opts, ds, model, "toki-lime-ki", "TOKI-lime (–K.I) val", kp, board=True))
                rows.append(_our_row(opts, ds, model, "naive-oracle", f"Naive θc={tc:g} val",
                                     {"theta_conf": tc}, board=True))
        rows += paper_rows(ds)
    return rows


def model_of(config: str, root: Path | None = None) -> str:
    """The model under test a trust config was built with (its params), else the name's last part."""
    from benchmark.resources import resource_root
    from benchmark.resources.store import read_provenance

    try:
        meta = read_provenance(Path(root) if root else resource_root("trust"))["configs"][config]
        return str(meta["params"].get("model") or config.rsplit("-", 1)[-1])
    except (FileNotFoundError, OSError, KeyError):
        return config.rsplit("-", 1)[-1] if "-" in config else "cnn"


def table(rows: Sequence[Row]):
    """Per trust set (each fits 80 columns): Table 3 in the paper's shape — per method our row, then the
    paper's (dim); paper rows only for the methods that were run — and the board: AUC with its 95 %
    interval, BAcc, G-mean beside the chance G-mean at the oracle's own rate, for every row we ran."""
    from rich import box
    from rich.table import Table

    out = []
    for ds in dict.fromkeys(r.dataset for r in rows):
        t = Table(title=f"trust/{ds}: TOKI Table 3, ours beside the paper's", title_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 0), pad_edge=False,
                  caption="undef. = undefined (empty denominator) · KI s = fit · lab s = all judge calls",
                  caption_justify="left")
        for col in ("method", "src", *(LABELS[m] for m in PAPER_METRICS), "KI s", "lab s", "n"):
            t.add_column(col, justify="left" if col in ("method", "src") else "right", no_wrap=True)
        mine = [r for r in rows if r.dataset == ds]
        for method in dict.fromkeys(r.method for r in mine if r.source == "ours" and not r.board):
            group = sorted((r for r in mine if r.method == method), key=lambda r: r.source != "ours")
            for k, r in enumerate(group):
                t.add_row(method.replace(" (–K.I)", " –K.I") if k == 0 else "", r.source.split(" (")[0],
                          *(_num(r.values.get(m)) for m in PAPER_METRICS), _secs(r.ki_s), _secs(r.label_s),
                          "" if r.n is None else str(r.n), style=None if r.source == "ours" else "dim")
        out.append(t)
        ours = [r for r in mine if r.source == "ours"]
        if not ours:
            continue
        b = Table(title=f"trust/{ds}: board (AUC primary; ½ = chance at any rate)", title_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
                  caption="chance = √(q(1−q)), the G-mean of a random oracle at the row's rate q · "
                          "ref = reference (a ceiling), ctl = control (a floor)", caption_justify="left")
        for col in ("method", "AUC [95% CI]", "BAcc", "G-mean", "chance", "rate", "n"):
            b.add_column(col, justify="left" if col == "method" else "right", no_wrap=True)
        for r in ours:
            mark = {"reference": " ref", "control": " ctl"}.get(r.role, "")
            ci = f" [{_num(r.auc_ci[0])},{_num(r.auc_ci[1])}]" if r.auc_ci else ""
            b.add_row(f"{r.method[:20 - len(mark)]}{mark}", f"{_num(r.values.get('auc'))}{ci}",
                      _num(r.values.get("bacc")), _num(r.values.get("gmean")), _num(r.chance_gmean), _num(r.rate),
                      "" if r.n is None else str(r.n))
            for p in (x for x in mine if x.method == r.method and x.source.startswith("paper") and not r.board):
                b.add_row("  paper", "–", _num(p.values.get("bacc")), _num(p.values.get("gmean")),
                          _num(p.chance_gmean), _num(p.rate), "", style="dim")
        out.append(b)
    return out


def _num(v: float | None) -> str:
    return "undef." if v is None else f"{v:.3f}".replace("0.", ".", 1) if v < 1 else f"{v:.2f}"


def _secs(v: float | None) -> str:
    return "–" if v is None else (f"{v:,.0f}" if v >= 100 else f"{v:.1f}")


def paired_difference(dataset: str, a: tuple[str, dict[str, Any]], b: tuple[str, dict[str, Any]],
                      metric: str = "trust-auc", n_boot: int = 2000, seed: int = 0,
                      results_dir: Path | None = None) -> dict[str, Any]:
    """Oracle a minus oracle b on `metric` over the same predictions of `trust/<dataset>`, with a *paired*
    percentile-bootstrap 95 % interval (one multiplicity draw per resample applied to both, through the
    track's `estimate`); `p_not_better` = share of resamples where a ≤ b. Both are read from the harness's
    output caches (`evaluate` again: no oracle re-runs when cached)."""
    import json
    import sqlite3

    import numpy as np

    from benchmark.store.cache import OutputCache
    from benchmark.resources import data_home, load_resource
    from benchmark.runner import evaluate
    from benchmark.tracks import get_track
    from benchmark.bootstrap import draw_weights

    trk = get_track("trust")
    inst = trk.instances(load_resource(f"trust/{dataset}"), "test")
    per = []
    for sub, params in (a, b):
        r = evaluate(sub, track="trust", resource=f"trust/{dataset}", model=model_of(dataset), params=dict(params),
                     results_dir=results_dir)
        path = data_home() / r.extra["cache"]
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            key = {k: json.loads(v) for k, v in db.execute("SELECT k, v FROM meta")}
        cache = OutputCache(path, key)
        try:
            got = cache.get(inst.ids)
        finally:
            cache.close()
        ok = np.array([got[i].ok for i in inst.ids], dtype=bool)
        arrays = [arr if got[i].ok and (arr := got[i].array) is not None else np.array([0.0, -1.0], dtype=np.float32)
                  for i in inst.ids]
        per.append((trk.score(arrays, inst.truths, range(len(inst.ids))), ok))
    ok = per[0][1] & per[1][1]
    w = np.vstack([np.ones((1, len(ok))), draw_weights(np.arange(len(ok)), keep=ok, n_boot=n_boot, seed=seed)])
    va, vb = (trk.estimate(s, ok, w)[metric] for s, _ in per)
    d = va - vb
    boot = d[1:][np.isfinite(d[1:])]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {"metric": metric, "a": float(va[0]), "b": float(vb[0]), "difference": float(d[0]),
            "ci95": (float(lo), float(hi)), "p_not_better": float((boot <= 0).mean()), "n": int(ok.sum()),
            "resamples": int(boot.size)}
