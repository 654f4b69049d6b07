"""Run built-in oracles on a trust set and score them (SPECS §1.10) — a measurement helper, not the
`trust` track (the harness's runner integration is separate).

`run_oracles("hatexplain-cnn", ["naive-oracle", "toki-omis"], params={...})` loads `trust/<config>`
(its model, the train split and the test split *without* the ground-truth columns), fits each oracle
once on an `OracleContext`, judges the test instances in batches, and returns per oracle the pooled
table metrics and the AUC of its scores (of its verdicts when it gives none)
(`benchmark.metrics.trust.trust_scores`; undefined → None with a reason), the counts the oracle recorded,
and the fit / judge times.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import pyarrow.parquet as pq

import numpy as np

from benchmark.contracts import Batch, OracleContext, judgement_parts
from benchmark.metrics.trust import trust_scores, weighted_auc
from benchmark.models.base import TextModel
from benchmark.models.text import load_word_model
from benchmark.resources import resource_root
from benchmark.resources.store import read_provenance

GROUND_TRUTH = ("trust", "precision", "rationale")
INPUT_COLUMNS = ("tokens", "prediction", "confidence", "explanation_words", "explanation_scores")


def load_trust_set(config: str, root: Path | None = None) -> dict[str, Any]:
    root = Path(root) if root else resource_root("trust")
    meta = read_provenance(root)["configs"][config]
    train = pq.read_table(root / meta["splits"]["train"]["file"]).to_pylist()
    test = pq.read_table(root / meta["splits"]["test"]["file"]).to_pylist()
    val = meta["splits"].get("validation")
    validation = pq.read_table(root / val["file"]).to_pylist() if val else []
    model: TextModel | None = None
    if meta["params"].get("model_dir"):
        if meta["params"].get("model") == "minilm":  # the transformer model under test
            from benchmark.models.transformer import load_minilm

            model = load_minilm(root / meta["params"]["model_dir"], config)
        else:
            model = load_word_model(root / meta["params"]["model_dir"], config)
    return {"meta": meta, "train": train, "test": test, "validation": validation, "model": model}


def run_oracles(config: str, oracles: Sequence[str], params: dict[str, dict[str, Any]] | None = None, *,
                root: Path | None = None, batch_size: int = 256, seed: int = 0) -> dict[str, Any]:
    from benchmark.submission import discover

    data = load_trust_set(config, root)
    subs = discover()
    class_words = data["meta"]["params"].get("class_words")
    train = {k: [r[k] for r in data["train"]] for k in ("id", "tokens", "label", "prediction", "confidence")}
    inputs = [{k: r[k] for k in INPUT_COLUMNS} for r in data["test"]]
    truth = [bool(r["trust"]) for r in data["test"]]
    ids = [r["id"] for r in data["test"]]
    out: dict[str, Any] = {}
    for name in oracles:
        p = dict((params or {}).get(name, {}))
        sub = subs[name]
        oracle = sub.instantiate({k: v for k, v in p.items() if k in sub.parameters})
        for k, v in p.items():  # attributes that are not submission parameters (e.g. embedding_names)
            if k not in sub.parameters:
                if not hasattr(oracle, k):
                    raise ValueError(f"{name} has no parameter or attribute {k!r}")
                setattr(oracle, k, v)
        if getattr(oracle, "class_names", "absent") is None:  # TOKI: the data set's class-name map
            oracle.class_names = list(class_words)
        t0 = time.perf_counter()
        oracle.fit(OracleContext(model=data["model"], train=train, explainer=None, seed=seed))
        t1 = time.perf_counter()
        judged: list[bool] = []
        scores: list[float] = []
        for s in range(0, len(inputs), batch_size):
            got = oracle.judge(Batch(ids=ids[s:s + batch_size], inputs=inputs[s:s + batch_size], seed=seed))
            verdicts, codes = judgement_parts(got, len(ids[s:s + batch_size]))
            judged += [bool(x) for x in verdicts]
            scores += codes
        t2 = time.perf_counter()
        sc = trust_scores(judged=judged, truth=truth)
        rank = np.array(scores) if all(x >= 0 for x in scores) else np.array(judged, dtype=float)
        auc = float(weighted_auc(rank, truth)[0])
        out[name] = {**sc.as_dict(), "auc": None if np.isnan(auc) else auc,
                     "fit_seconds": round(t1 - t0, 2), "judge_seconds": round(t2 - t1, 2),
                     "judged_per_second": round(len(judged) / max(t2 - t1, 1e-9), 1),
                     "oracle_counts": dict(getattr(oracle, "counts", {}) or {}),
                     "oracle_timings": dict(getattr(oracle, "timings", {}) or {})}
    return out


def supervision_sweep(settings: Sequence[tuple[str, float]], *, epochs: int = 5, explainer: str = "omission",
                      num_samples: int = 1000, limit: int | None = None, out: Path | None = None,
                      seed: int = 0) -> list[dict[str, Any]]:
    """The rationale-supervision choice (issue #24) measured on HateXplain's *validation* split: for each
    (rationale_loss, λ) the Kim CNN is trained (`generators.text_trainer`, max_len 80, `epochs`), and reported
    are its validation accuracy and the trustworthy share of its correct validation predictions with a
    rationale — explanation precision of the top-10 positive words ≥ ½, the words from `explainer`
    ("omission": batched word omission, cheap; "lime": the trust sets' LIME at `num_samples`)."""
    import tempfile

    from benchmark.contracts import Batch
    from benchmark.toki.core import builtin_explainer
    from benchmark.toki.explanations import DedupModel, omission_scores
    from generators.text_trainer import TextTrainConfig, train_text_classifier
    from generators.trust.build import MAX_LEN, _truncate, explanation_precision, top_words
    from generators.trust.data import load_trust_corpus

    corpus = load_trust_corpus("hatexplain", limit=limit)
    _truncate(corpus, MAX_LEN["hatexplain"])
    xy = {s: ([d.tokens for d in v], [d.label for d in v]) for s, v in corpus.splits.items()}
    folder = Path(out) if out else Path(tempfile.mkdtemp(prefix="xaibench-supervision-"))
    rows = []
    for loss, weight in settings:
        name = f"{loss}-{weight:g}"
        cfg = TextTrainConfig(epochs=epochs, seed=seed, max_len_cap=MAX_LEN["hatexplain"], rationale_loss=loss,
                              rationale_weight=float(weight))
        t0 = time.perf_counter()
        mcfg = train_text_classifier(xy["train"], xy["validation"], folder / name, cfg, n_classes=2,
                                     name=name, rationales=[d.rationale for d in corpus.splits["train"]]
                                     if loss != "none" else None)
        train_s = time.perf_counter() - t0
        model = load_word_model(folder / name, name)
        docs = corpus.splits["validation"]
        pred = model.predict([d.tokens for d in docs]).argmax(1)
        pick = [i for i, d in enumerate(docs) if pred[i] == d.label and d.rationale]
        if explainer == "omission":
            pairs = omission_scores(model, [docs[i].tokens for i in pick], [int(pred[i]) for i in pick])
        else:
            lime = builtin_explainer("lime-text", num_samples=num_samples, features="type")
            sc = lime.explain(DedupModel(model), Batch(ids=[docs[i].id for i in pick],
                                                        inputs=[docs[i].tokens for i in pick], seed=seed))
            pairs = [(docs[i].tokens, s) for i, s in zip(pick, sc)]
        precisions = [explanation_precision(top_words(w, s, 10)[0], docs[i].rationale)
                      for i, (w, s) in zip(pick, pairs)]
        trust = sum(p >= 0.5 for p in precisions)
        rows.append({"loss": loss, "weight": weight, "validation_accuracy": mcfg["scores"]["validation_accuracy"],
                     "best_epoch": mcfg["scores"]["best_epoch"], "explained": len(pick), "trustworthy": trust,
                     "trust_share": round(trust / max(1, len(pick)), 4),
                     "mean_precision": round(float(np.mean(precisions)) if precisions else float("nan"), 4),
                     "train_s": round(train_s, 1)})
    return rows


def relatedness_diagnostics(config: str, theta_rules: Sequence[str] = ("wordnet", "corpus"), split: str = "test",
                            root: Path | None = None, theta_dist: float = 0.3) -> dict[str, Any]:
    """What TOKI's relatedness says on a trust set, per θ_relate rule (issue #24's diagnosis): per class the
    pool size |W_c| and keyword share |K_c| / |W_c| (pipeline 1 on the stored training explanations, θ_dist),
    per embedding model the share of the pool directly related to the class name (cos ≥ θ_relate, –K.I's
    rule), and over the judged split's explanation words P(r(w, c) = 1 | w in the people's rationale) vs
    P(r = 1 | w outside it) — a relatedness that tracks the rationale has the first well above the second."""
    from benchmark.toki.core import Toki
    from benchmark.toki.explanations import top_positive

    data = load_trust_set(config, root)
    rows = data[split]
    train = {k: [r[k] for r in data["train"]] for k in ("id", "tokens", "label", "prediction", "confidence",
                                                            "explanation_words", "explanation_scores")}
    class_words = list(data["meta"]["params"].get("class_words"))
    out: dict[str, Any] = {"config": config, "split": split, "n": len(rows), "theta_dist": theta_dist}
    for rule in theta_rules:
        toki = Toki(explainer="lime", class_names=class_words, theta_rule=rule, theta_dist=theta_dist)
        toki.fit(OracleContext(model=data["model"], train=train, seed=0))
        per_class = {}
        for c, words in toki.pool_words.items():
            if not words:
                continue
            direct = {}
            for st in toki.states:
                vecs, known = st.emb.vectors(words)
                cv = st.class_vecs.get(c)
                if cv is not None and known.any():
                    direct[st.emb.name] = round(float(((vecs[known] @ cv) >= st.theta).mean()), 4)
            per_class[class_words[c]] = {"pool": len(words), "keyword_share": round(float(toki.keywords[c].mean()), 4),
                                         "directly_related_share": direct}
        inside, outside = [0, 0], [0, 0]
        for r in rows:
            e = top_positive(r["explanation_words"], r["explanation_scores"], toki.top_k, toki._norm, toki.words_only)
            if not len(e):
                continue
            rel, _known = toki._vote_words(list(e.words), int(r["prediction"]), toki._relatedness_model)
            g = {toki._norm(w) for w in r["rationale"]}
            for w, x in zip(e.words, rel):
                cell = inside if w in g else outside
                cell[0] += int(x)
                cell[1] += 1
        out[rule] = {"thetas": {st.emb.name: round(st.theta, 4) for st in toki.states}, "classes": per_class,
                     "p_related_in_rationale": round(inside[0] / max(1, inside[1]), 4),
                     "p_related_outside": round(outside[0] / max(1, outside[1]), 4),
                     "words_in_rationale": inside[1], "words_outside": outside[1]}
    return out
