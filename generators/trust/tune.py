"""θ_dist, the class-name words and the importance reading (TOKI, –K.I) and θ_conf (Naive) tuned on a trust
set's *validation* split, never on test (issues #24, #38).

The paper chose θ_conf = 0.9 and θ_dist = 0.3 by sweeping them on its own benchmark and keeping the G-mean
maximum (Figs. 8–9, SPECS §1.6). Here the sweep runs on the validation predictions of the same model under
test, explained and labelled exactly like the test split (`generators.trust.build`), so the tuned values
carry no information from test:

* TOKI-lime: pipeline 1 once (the training split's stored LIME explanations, `train_explanations="given"`),
  then for each point of θ_dist (`DIST_GRID`) × class-name candidates (`NAME_CANDIDATES`: the set's own
  `class_words` first; [I]) × importance reading (`IMPORTANCE_GRID`) the pools are re-clustered
  (`Toki.fit_pools`; each dendrogram computed once, `LinkageCache`) and the validation predictions
  judged; the point with the best `criterion` is kept — AUC by default (the board's rate-free metric,
  issue #38), or the paper's G-mean; ties: θ_dist nearest the paper's 0.3, then the set's own names and
  the default reading.
* TOKI-lime (–K.I): the same class-name × importance grid (it has no θ_dist), the same criterion — so
  keyword identification is compared with an ablation tuned as hard.
* Naive: θ_conf over `CONF_GRID` on the validation confidences by G-mean (its AUC does not depend on θ_conf).

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
IMPORTANCE_GRID = ("different", "equivalent")
# class-name candidates per data set and class index, beside the set's own `class_words` [I, issue #38]: the
# words a person would name the class with; the validation split chooses
NAME_CANDIDATES: dict[str, dict[int, tuple[str, ...]]] = {
    "hatexplain": {1: ("hate", "offensive", "hate speech", "insult", "toxic", "racist sexist",
                       "hateful offensive racist insult")},
    "movies": {0: ("bad", "negative review", "boring awful"), 1: ("good", "positive review", "great excellent")},
}


class LinkageCache:
    """`benchmark.toki.keywords.cluster_labels` with each dendrogram computed once per vector set (the grid
    re-cuts the same pools at many θ_dist); install with `installed()`."""

    def __init__(self) -> None:
        self.z: dict[tuple[str, str], np.ndarray] = {}

    def __call__(self, vectors: np.ndarray, theta_dist: float, linkage: str = "average") -> np.ndarray:
        import hashlib

        from scipy.cluster.hierarchy import fcluster, linkage as scipy_linkage
        from scipy.spatial.distance import pdist

        v = np.asarray(vectors, dtype=np.float64)
        if len(v) < 2:
            return np.ones(len(v), dtype=np.int64)
        key = (hashlib.sha1(v.tobytes()).hexdigest(), linkage)
        if key not in self.z:
            self.z[key] = scipy_linkage(np.clip(pdist(v, metric="cosine"), 0.0, 2.0), method=linkage)
        return fcluster(self.z[key], t=float(theta_dist), criterion="distance").astype(np.int64)

    def installed(self) -> Any:
        """A context manager that routes `keyword_mask`'s clustering through this cache."""
        from contextlib import contextmanager

        import benchmark.toki.keywords as kw

        @contextmanager
        def ctx() -> Any:
            saved = kw.cluster_labels
            kw.cluster_labels = self
            try:
                yield self
            finally:
                kw.cluster_labels = saved

        return ctx()


def name_sets(base: Sequence[str], dataset: str,
              candidates: dict[int, Sequence[str]] | None = None) -> list[list[str]]:
    """The class-name lists to try: the set's own first, then each candidate in place of one class's name."""
    cand = dict(candidates) if candidates is not None else dict(NAME_CANDIDATES.get(dataset, {}))
    out = [list(base)]
    for c, alts in cand.items():
        for a in alts:
            ns = list(base)
            if 0 <= c < len(ns):
                ns[c] = a
                if ns not in out:
                    out.append(ns)
    return out


def tuning_path(config: str) -> Path:
    from benchmark.resources import data_home

    return data_home() / "tuning" / "trust" / f"{config}.json"


def read_tuning(config: str) -> dict[str, Any] | None:
    p = tuning_path(config)
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def _metrics(verdicts: Sequence[bool] | np.ndarray, rank: Sequence[float] | np.ndarray,
             truth: Sequence[bool]) -> dict[str, Any]:
    sc = trust_scores(judged=np.asarray(verdicts, dtype=bool), truth=np.asarray(truth, dtype=bool))
    auc = float(weighted_auc(np.asarray(rank, dtype=float), np.asarray(truth, dtype=bool))[0])
    return {"gmean": sc["gmean"], "bacc": sc["bacc"], "auc": None if np.isnan(auc) else auc,
            "rate": float(np.mean(verdicts)) if len(verdicts) else None}


def _best(curve: dict[float, dict[str, float | None]], criterion: str, paper: float) -> float:
    def key(t: float) -> tuple[float, float]:
        v = curve[t][criterion]
        return (-(v if v is not None else -1.0), abs(t - paper))

    return min(curve, key=key)


def tune_trust_set(config: str, *, criterion: str = "auc", dist_grid: Sequence[float] = DIST_GRID,
                   conf_grid: Sequence[float] = CONF_GRID, toki_params: dict[str, Any] | None = None,
                   root: Path | None = None, write: bool = True, names: dict[int, Sequence[str]] | None = None,
                   importance_grid: Sequence[str] = IMPORTANCE_GRID) -> dict[str, Any]:
    """Sweep TOKI-lime (θ_dist × class names × importance), TOKI-lime (–K.I) (class names × importance) and
    Naive (θ_conf) on `trust/<config>`'s validation split; see the module docstring. Returns (and writes)
    {"toki-lime": {"theta_dist", "class_names", "importance", "curve": {θ: metrics at the chosen names and
    reading}, "grid": {"θ|names|reading": criterion}}, "toki-lime-ki": {"class_names", "importance", "grid"},
    "naive-oracle": {...}, "validation": {n, trust, untrust}, "criterion", "seconds"}."""
    from benchmark.toki.core import Toki, TokiKI
    from benchmark.toki.embeddings import load_ensemble
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
    params = dict(data["meta"]["params"])
    base = [str(n) for n in params.get("class_words") or params.get("classes") or []]
    dataset = str(params.get("dataset", config.split("-")[0]))
    extra = {k: v for k, v in (toki_params or {}).items() if k not in ("class_names", "importance", "models")}
    models = (toki_params or {}).get("models") or load_ensemble(extra.pop("embeddings", None))
    ctx = OracleContext(model=data["model"], train=train, seed=0)
    batch = Batch(ids=[r["id"] for r in val], inputs=[{k: r[k] for k in INPUT_COLUMNS} for r in val], seed=0)
    toki = Toki(explainer="lime", class_names=base, models=models, **extra)
    ki = TokiKI(explainer="lime", class_names=base, models=models,
                **{k: v for k, v in extra.items() if k not in ("theta_dist", "linkage", "train_limit",
                                                               "train_explanations")})
    cache = LinkageCache()
    grid: dict[str, float | None] = {}
    ki_grid: dict[str, float | None] = {}
    full: dict[tuple[float, str, str], dict[str, Any]] = {}
    with cache.installed():
        toki.fit(ctx)
        exps = list(toki.fit_explanations.values())
        ki.fit(ctx)
        for ns in name_sets(base, dataset, names):
            key_names = "/".join(ns)
            try:
                toki.class_names = ki.class_names = list(ns)
                toki._setup(ctx)
                ki._setup(ctx)
            except ValueError:  # no embedding model knows a candidate name: not a candidate here
                continue
            for imp in importance_grid:
                toki.importance = ki.importance = imp
                verdicts, scores = judgement_parts(ki.judge(batch), len(val))
                ki_grid[f"{key_names}|{imp}"] = _metrics(verdicts, scores, truth)[criterion]
                for t in dist_grid:
                    toki.theta_dist = float(t)
                    toki.fit_pools(exps, toki.fit_classes)
                    verdicts, scores = judgement_parts(toki.judge(batch), len(val))
                    kw = toki.keyword_sets()
                    m = {**_metrics(verdicts, scores, truth),
                         "keywords": {str(c): [len(k), len(f)] for c, (k, f) in kw.items()}}
                    full[(float(t), key_names, imp)] = m
                    grid[f"{float(t):g}|{key_names}|{imp}"] = m[criterion]
    base_key = "/".join(base)

    def rank(v: float | None) -> float:
        return -(v if v is not None else -1.0)

    bt, bn, bi = min(full, key=lambda k: (rank(full[k][criterion]), abs(k[0] - 0.3), k[1] != base_key,
                                          k[2] != "different"))
    kn, ki_imp = min((tuple(k.split("|")) for k in ki_grid),
                     key=lambda k: (rank(ki_grid["|".join(k)]), k[0] != base_key, k[1] != "different"))
    conf = np.array([float(r["confidence"]) for r in val])
    naive_curve = {float(t): _metrics(conf >= t, conf, truth) for t in conf_grid}
    out = {"config": config, "criterion": criterion,
           "validation": {"n": len(val), "trust": int(sum(truth)), "untrust": int(len(truth) - sum(truth))},
           "toki-lime": {"theta_dist": bt, "paper": 0.3, "class_names": bn.split("/"), "importance": bi,
                         "pipeline1_explanations": len(exps),
                         "curve": {t: m for (t, n_, i_), m in full.items() if n_ == bn and i_ == bi},
                         "grid": grid},
           "toki-lime-ki": {"class_names": kn.split("/"), "importance": ki_imp, "grid": ki_grid},
           "naive-oracle": {"theta_conf": _best(naive_curve, "gmean", 0.9), "paper": 0.9, "curve": naive_curve},
           "seconds": round(time.perf_counter() - t0, 1)}
    if write:
        p = tuning_path(config)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(out, indent=1, ensure_ascii=False))
        os.replace(tmp, p)
    return out
