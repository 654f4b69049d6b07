"""θ_dist (TOKI) and θ_conf (Naive) tuned on a trust set's *validation* split, never on test (issue #24).

The paper chose θ_conf = 0.9 and θ_dist = 0.3 by sweeping them on its own benchmark and keeping the G-mean
maximum (Figs. 8–9, SPECS §1.6). Here the sweep runs on the validation predictions of the same model under
test, explained and labelled exactly like the test split (`generators.trust.build`), so the tuned values
carry no information from test:

* TOKI-lime: pipeline 1 once (the training split's stored LIME explanations, `train_explanations="given"`),
  then for each θ_dist of `DIST_GRID` the pools are re-clustered (`Toki.fit_pools`) and the validation
  predictions judged; the value with the best `criterion` (G-mean, the paper's; or AUC) is kept (ties: the
  one nearest the paper's 0.3).
* Naive: θ_conf over `CONF_GRID` on the validation confidences (its AUC does not depend on θ_conf).

`xaibench`-free entry point: `tune_trust_set("hatexplain-cnn-sup")` writes `<data home>/tuning/trust/<config>.json`
(the curves, the chosen values, the validation size), which `generators.trust.reproduce` reads to add the
tuned rows. Scale: every labelled validation prediction (`validation_limit` of the build).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.contracts import Batch, OracleContext, judgement_parts
from benchmark.metrics.trust import trust_scores, weighted_auc

DIST_GRID = tuple(round(x, 2) for x in np.arange(0.05, 1.0001, 0.05))
CONF_GRID = tuple(round(x, 2) for x in np.arange(0.0, 1.0001, 0.05))
CRITERIA = ("gmean", "auc")


def tuning_path(config: str) -> Path:
    from benchmark.resources import data_home

    return data_home() / "tuning" / "trust" / f"{config}.json"


def read_tuning(config: str) -> dict[str, Any] | None:
    p = tuning_path(config)
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def _metrics(verdicts: Sequence[bool], rank: Sequence[float], truth: Sequence[bool]) -> dict[str, float | None]:
    sc = trust_scores(judged=np.asarray(verdicts, dtype=bool), truth=np.asarray(truth, dtype=bool))
    auc = float(weighted_auc(np.asarray(rank, dtype=float), np.asarray(truth, dtype=bool))[0])
    return {"gmean": sc["gmean"], "bacc": sc["bacc"], "auc": None if np.isnan(auc) else auc,
            "rate": float(np.mean(verdicts)) if len(verdicts) else None}


def _best(curve: dict[float, dict[str, float | None]], criterion: str, paper: float) -> float:
    def key(t: float) -> tuple[float, float]:
        v = curve[t][criterion]
        return (-(v if v is not None else -1.0), abs(t - paper))

    return min(curve, key=key)


def tune_trust_set(config: str, *, criterion: str = "gmean", dist_grid: Sequence[float] = DIST_GRID,
                   conf_grid: Sequence[float] = CONF_GRID, toki_params: dict[str, Any] | None = None,
                   root: Path | None = None, write: bool = True) -> dict[str, Any]:
    """Sweep θ_dist (TOKI-lime) and θ_conf (Naive) on `trust/<config>`'s validation split; see the module
    docstring. Returns (and writes) {"toki-lime": {"theta_dist": best, "curve": {...}}, "naive-oracle": {...},
    "validation": {n, trust, untrust}, "criterion", "seconds"}."""
    from benchmark.toki.core import Toki
    from generators.trust.experiments import INPUT_COLUMNS, load_trust_set

    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    data = load_trust_set(config, root)
    val = data["validation"]
    if not val:
        raise ValueError(f"trust/{config} has no validation trust set: rebuild it (validation_limit > 0)")
    truth = [bool(r["trust"]) for r in val]
    if len(set(truth)) < 2:
        raise ValueError(f"trust/{config}'s validation split holds one class only: nothing to tune on")
    t0 = time.perf_counter()
    train = {k: [r[k] for r in data["train"]] for k in ("id", "tokens", "label", "prediction", "confidence",
                                                            "explanation_words", "explanation_scores")}
    class_words = data["meta"]["params"].get("class_words")
    toki = Toki(explainer="lime", class_names=list(class_words), **(toki_params or {}))
    toki.fit(OracleContext(model=data["model"], train=train, seed=0))
    exps = list(toki.fit_explanations.values())
    batch = Batch(ids=[r["id"] for r in val], inputs=[{k: r[k] for k in INPUT_COLUMNS} for r in val], seed=0)
    toki_curve: dict[float, dict[str, Any]] = {}
    for t in dist_grid:
        toki.theta_dist = float(t)
        toki.fit_pools(exps, toki.fit_classes)
        verdicts, scores = judgement_parts(toki.judge(batch), len(val))
        kw = toki.keyword_sets()
        toki_curve[float(t)] = {**_metrics(verdicts, scores, truth),
                                "keywords": {str(c): [len(k), len(f)] for c, (k, f) in kw.items()}}
    conf = np.array([float(r["confidence"]) for r in val])
    naive_curve = {float(t): _metrics(conf >= t, conf, truth) for t in conf_grid}
    out = {"config": config, "criterion": criterion,
           "validation": {"n": len(val), "trust": int(sum(truth)), "untrust": int(len(truth) - sum(truth))},
           "toki-lime": {"theta_dist": _best(toki_curve, criterion, 0.3), "paper": 0.3,
                         "pipeline1_explanations": len(exps), "curve": toki_curve},
           "naive-oracle": {"theta_conf": _best(naive_curve, "gmean", 0.9), "paper": 0.9, "curve": naive_curve},
           "seconds": round(time.perf_counter() - t0, 1)}
    if write:
        p = tuning_path(config)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(out, indent=1))
        os.replace(tmp, p)
    return out
