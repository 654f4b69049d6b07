"""How much TOKI's keyword identification adds over its –K.I ablation on a built trust set (issue #38) —
a measurement, not an oracle: it reads the test split's labels and rationales *after* every oracle has
judged, to score them.

`measure("hatexplain-cnn-sup")`:
1. **Clusters** — per embedding model and class, at each θ_dist: the share of pool words in singleton
   clusters and the largest cluster (Eq. 3). A singleton keyword cluster is a word compared with the class
   name alone, which is –K.I's rule.
2. **Per-word agreement** — over the judged test explanation words (occurrences, top-10 positive, the
   class each is judged for): how often TOKI's r(w, c) equals –K.I's, in and out of the keyword pool.
3. **Tuning on validation by AUC** — TOKI over θ_dist × class-name candidates × importance reading,
   –K.I over class-name candidates × importance reading (the same grid less θ_dist); the best validation
   AUC of each (ties: the default configuration's side). Test is never looked at.
4. **Test** — AUC of TOKI (default and tuned), –K.I (default and tuned), Naive and the blind controls
   (text length, explanation size), and the paired ΔAUC of TOKI-tuned against each with a percentile
   bootstrap 95 % interval (`n_boot` draws over predictions, one draw shared).
5. **Why** — the words where the two relatedness decisions *disagree*: how often each side's "related"
   word is in the people's rationale (the trust label counts exactly that), against the base rate of
   every judged word. If keyword identification's extra "related" words are rationale no more often than
   the words it drops, it cannot raise the ranking whatever θ_dist is.

Cost: pipeline 1 reads the stored training explanations (no LIME), clustering is cached per model and
class (`scipy` linkage computed once, cut at every θ_dist), so the grid costs one judge per point.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.contracts import Batch, OracleContext, judgement_parts
from benchmark.metrics.trust import weighted_auc

DIST_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
IMPORTANCE_GRID = ("different", "equivalent")


def _scores(oracle: Any, batch: Batch) -> np.ndarray:
    verdicts, scores = judgement_parts(oracle.judge(batch), len(batch))
    s = np.asarray(scores, dtype=np.float64)
    return s if (s >= 0).all() else np.asarray(verdicts, dtype=np.float64)


def _auc(s: np.ndarray, truth: np.ndarray) -> float:
    return float(weighted_auc(s, truth)[0])


def _paired(a: np.ndarray, b: np.ndarray, truth: np.ndarray, weights: np.ndarray) -> dict[str, Any]:
    va, vb = weighted_auc(a, truth, weights), weighted_auc(b, truth, weights)
    d = va[1:] - vb[1:]
    lo, hi = np.percentile(d[np.isfinite(d)], [2.5, 97.5])
    return {"a": round(float(va[0]), 4), "b": round(float(vb[0]), 4), "diff": round(float(va[0] - vb[0]), 4),
            "ci95": [round(float(lo), 4), round(float(hi), 4)], "p_not_better": round(float((d <= 0).mean()), 4)}


def _relatedness(oracle: Any, exps: Sequence[Any], classes: Sequence[int]) -> dict[tuple[int, str], bool]:
    out: dict[tuple[int, str], bool] = {}
    by: dict[int, set[str]] = {}
    for e, c in zip(exps, classes):
        by.setdefault(int(c), set()).update(e.words)
    for c, ws in by.items():
        words = sorted(ws)
        r, _ = oracle._vote_words(words, c, oracle._relatedness_model)
        out.update({(c, w): bool(x) for w, x in zip(words, r)})
    return out


def measure(config: str, *, dist_grid: Sequence[float] = DIST_GRID, names: dict[int, Sequence[str]] | None = None,
            importance_grid: Sequence[str] = IMPORTANCE_GRID, n_boot: int = 1000, root: Path | None = None,
            embeddings: Sequence[str] | None = None) -> dict[str, Any]:
    """The five measurements of the module docstring on `trust/<config>` (needs a validation split)."""
    from benchmark.toki.baselines import Naive
    from benchmark.toki.controls import ExplanationSizeOracle, TextLengthOracle
    from benchmark.toki.core import Toki, TokiKI
    from benchmark.toki.embeddings import load_ensemble
    from benchmark.toki.explanations import top_positive
    from benchmark.bootstrap import draw_weights
    from generators.trust.experiments import load_trust_set
    from generators.trust.tune import LinkageCache, name_sets

    t0 = time.perf_counter()
    data = load_trust_set(config, root)
    if not data["validation"]:
        raise ValueError(f"trust/{config} has no validation split: rebuild it with --validation-limit N")
    dataset = str(data["meta"]["params"].get("dataset", config.split("-")[0]))
    base_names = [str(n) for n in data["meta"]["params"]["class_words"]]
    all_names = name_sets(base_names, dataset, names)
    cols = ("id", "tokens", "text", "label", "prediction", "confidence", "explanation_words", "explanation_scores")
    train = {k: [r[k] for r in data["train"]] for k in cols}
    fields = ("tokens", "text", "prediction", "confidence", "explanation_words", "explanation_scores")

    def batch_of(rows: list[dict]) -> tuple[Batch, np.ndarray]:
        return (Batch(ids=[str(r["id"]) for r in rows], inputs=[{k: r[k] for k in fields} for r in rows], seed=0),
                np.array([bool(r["trust"]) for r in rows]))

    val, val_truth = batch_of(data["validation"])
    test, truth = batch_of(data["test"])
    models = load_ensemble(embeddings)
    ctx = OracleContext(model=data["model"], train=train, seed=0)
    cache = LinkageCache()
    with cache.installed():
        toki = Toki(models=models, class_names=base_names)
        toki.fit(ctx)
        exps, fit_classes = list(toki.fit_explanations.values()), list(toki.fit_classes)
        ki = TokiKI(models=models, class_names=base_names)
        ki.fit(ctx)

        def setup(oracle: Any, ns: list[str], importance: str, theta: float | None = None) -> None:
            oracle.class_names, oracle.importance = list(ns), importance
            oracle._setup(ctx)
            if theta is not None:
                oracle.theta_dist = float(theta)
                oracle.fit_pools(exps, fit_classes)

        # 1. clusters at each θ_dist (default class names)
        clusters: dict[str, Any] = {}
        for t in dist_grid:
            setup(toki, base_names, "different", t)
            per: dict[str, Any] = {}
            for st in toki.states:
                for c, (kidx, pv) in st.pools.items():
                    if len(kidx) == 0:
                        continue
                    lab = cache(pv, t, toki.linkage)
                    sizes = np.bincount(lab)[1:]
                    sizes = sizes[sizes > 0]
                    per[f"{st.emb.name}:{c}"] = {"words": int(len(lab)), "clusters": int(len(sizes)),
                                                 "singleton_word_share": round(float((sizes == 1).sum() / len(lab)), 4),
                                                 "largest": int(sizes.max()),
                                                 "keywords": int(toki.keywords[c].sum())}
            clusters[f"{t:g}"] = per
        # 3. validation tuning by AUC
        curve_toki: dict[str, float] = {}
        for ns in all_names:
            for imp in importance_grid:
                for t in dist_grid:
                    setup(toki, ns, imp, t)
                    curve_toki[f"{t:g}|{'/'.join(ns)}|{imp}"] = _auc(_scores(toki, val), val_truth)
        curve_ki: dict[str, float] = {}
        for ns in all_names:
            for imp in importance_grid:
                setup(ki, ns, imp)
                curve_ki[f"{'/'.join(ns)}|{imp}"] = _auc(_scores(ki, val), val_truth)
        default_toki, default_ki = f"0.3|{'/'.join(base_names)}|different", f"{'/'.join(base_names)}|different"
        best_toki = max(curve_toki, key=lambda k: (round(curve_toki[k], 6), k == default_toki))
        best_ki = max(curve_ki, key=lambda k: (round(curve_ki[k], 6), k == default_ki))
        # 4. test
        scores: dict[str, np.ndarray] = {}
        setup(toki, base_names, "different", 0.3)
        scores["toki-lime (θ_dist 0.3, default)"] = _scores(toki, test)
        setup(ki, base_names, "different")
        scores["toki-lime-ki (default)"] = _scores(ki, test)
        # 2. per-word agreement at the default configuration (and below at the tuned one)
        texps = [top_positive(r["explanation_words"], r["explanation_scores"], toki.top_k, toki._norm,
                              toki.words_only) for r in data["test"]]
        tcls = [int(r["prediction"]) for r in data["test"]]
        rationale = [{toki._norm(str(w)) for w in (r.get("rationale") or [])} for r in data["test"]]

        def agreement(tok: Any, kio: Any) -> dict[str, Any]:
            rt, rk = _relatedness(tok, texps, tcls), _relatedness(kio, texps, tcls)
            occ = [(c, w, w in tok._index.get(c, {}), w in rat) for e, c, rat in zip(texps, tcls, rationale)
                   for w in e.words]
            same = np.array([rt[(c, w)] == rk[(c, w)] for c, w, _, _ in occ])
            pool = np.array([p for _, _, p, _ in occ])
            inrat = np.array([g for _, _, _, g in occ])
            t_only = np.array([rt[(c, w)] and not rk[(c, w)] for c, w, _, _ in occ])
            k_only = np.array([rk[(c, w)] and not rt[(c, w)] for c, w, _, _ in occ])
            r_t = np.array([rt[(c, w)] for c, w, _, _ in occ])
            r_k = np.array([rk[(c, w)] for c, w, _, _ in occ])

            def share(m: np.ndarray) -> float | None:
                return round(float(inrat[m].mean()), 4) if m.any() else None

            return {"occurrences": int(len(occ)), "agreement": round(float(same.mean()), 4),
                    "in_pool_share": round(float(pool.mean()), 4),
                    "agreement_in_pool": round(float(same[pool].mean()), 4) if pool.any() else None,
                    "agreement_outside_pool": round(float(same[~pool].mean()), 4) if (~pool).any() else None,
                    "related_rate": {"toki": round(float(r_t.mean()), 4), "ki": round(float(r_k.mean()), 4)},
                    "rationale_share": {"all": share(np.ones(len(occ), dtype=bool)),
                                        "toki_related": share(r_t), "toki_unrelated": share(~r_t),
                                        "ki_related": share(r_k), "ki_unrelated": share(~r_k),
                                        "toki_only_related": share(t_only), "ki_only_related": share(k_only)},
                    "disagreements": {"toki_only": int(t_only.sum()), "ki_only": int(k_only.sum())}}

        agree_default = agreement(toki, ki)
        bt, bn, bi = best_toki.split("|")
        setup(toki, bn.split("/"), bi, float(bt))
        scores[f"toki-lime (tuned: θ_dist {bt}, {bn}, {bi})"] = _scores(toki, test)
        kn, kimp = best_ki.split("|")
        setup(ki, kn.split("/"), kimp)
        scores[f"toki-lime-ki (tuned: {kn}, {kimp})"] = _scores(ki, test)
        agree_tuned = agreement(toki, ki)
        # the same θ_dist grid on test at the tuned names (a diagnostic curve, never used to choose)
        test_curve = {}
        for t in dist_grid:
            setup(toki, bn.split("/"), bi, t)
            test_curve[f"{t:g}"] = round(_auc(_scores(toki, test), truth), 4)
    scores["naive-oracle"] = _scores(Naive(), test)
    for name, o in (("text-length-oracle", TextLengthOracle()), ("explanation-size-oracle", ExplanationSizeOracle())):
        o.fit(ctx)
        scores[name] = _scores(o, test)
    w = np.vstack([np.ones((1, len(truth))), draw_weights(np.arange(len(truth)), n_boot=n_boot)])
    aucs = {}
    for k, s in scores.items():
        v = weighted_auc(s, truth, w)
        lo, hi = np.percentile(v[1:][np.isfinite(v[1:])], [2.5, 97.5])
        aucs[k] = {"auc": round(float(v[0]), 4), "ci95": [round(float(lo), 4), round(float(hi), 4)]}
    tuned = next(k for k in scores if k.startswith("toki-lime (tuned"))
    paired = {f"{tuned} − {k}": _paired(scores[tuned], scores[k], truth, w) for k in scores if k != tuned}
    default = "toki-lime (θ_dist 0.3, default)"
    paired.update({f"{default} − {k}": _paired(scores[default], scores[k], truth, w)
                   for k in ("toki-lime-ki (default)", "naive-oracle", "text-length-oracle",
                             "explanation-size-oracle")})
    ki_tuned = next(k for k in scores if k.startswith("toki-lime-ki (tuned"))
    paired.update({f"{ki_tuned} − {k}": _paired(scores[ki_tuned], scores[k], truth, w)
                   for k in ("naive-oracle", "text-length-oracle", "explanation-size-oracle")})
    return {"config": config, "n_test": int(len(truth)), "test_trust": int(truth.sum()),
            "n_validation": int(len(val_truth)), "validation_trust": int(val_truth.sum()),
            "train_explanations": len(exps), "embeddings": [m.name for m in models],
            "test_classes": {str(c): int(sum(1 for x in tcls if x == c)) for c in sorted(set(tcls))},
            "clusters": clusters, "agreement_default": agree_default, "agreement_tuned": agree_tuned,
            "tuned": {"toki": best_toki, "toki_validation_auc": round(curve_toki[best_toki], 4),
                      "toki_default_validation_auc": round(curve_toki.get(default_toki, float("nan")), 4),
                      "ki": best_ki, "ki_validation_auc": round(curve_ki[best_ki], 4),
                      "ki_default_validation_auc": round(curve_ki.get(default_ki, float("nan")), 4)},
            "validation_curve_toki": {k: round(v, 4) for k, v in curve_toki.items()},
            "validation_curve_ki": {k: round(v, 4) for k, v in curve_ki.items()},
            "test_curve_toki_theta_dist": test_curve, "test_auc": aucs, "paired": paired,
            "n_boot": n_boot, "seconds": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":  # python -m generators.trust.overlap hatexplain-cnn-sup [out.json]
    import json
    import sys

    out = measure(sys.argv[1])
    text = json.dumps(out, indent=1, ensure_ascii=False)
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(text)
    print(text)
