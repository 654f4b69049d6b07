"""TOKI performance, side by side in one run (issue 9 "Performance"):

(a) pipeline 1 (keyword identification) with LIME, 5,000 samples per explanation, on N correct training
    predictions of `trust/hatexplain-cnn` (default N = 2,000, a seeded sample): ours (`Toki.fit`: the project's
    batched LIME — every perturbed document of a batch of instances in one `model.predict` call, each distinct
    perturbation predicted once — then Eq. 2–4 and the vote) against the straightforward way: the `lime`
    package's `LimeTextExplainer` (bag-of-words features as our `features="type"`, the given tokens,
    `feature_selection="none"`, the same per-instance seed) with an *unbatched* classifier function (one
    `model.predict` call per perturbed document), one instance at a time, followed by the same keyword step.
    The straightforward side runs on the first `REF` instances of the sample only and is extrapolated per
    instance (printed as such); on those instances the two explanations must give the same top-k words, and
    pipeline 1 run on either side's explanations must give the same keywords (checked).
(b) pipeline 2: labels per second over the trust set's test split once explanations exist (the set's own
    LIME explanations; first pass and a second pass with every vector memoised).

Scale by environment variables: TOKI_BENCH_TRAIN (N, default 2000), TOKI_BENCH_REF (default 8),
TOKI_BENCH_SAMPLES (default 5000). Needs `trust/hatexplain-cnn` and `trust/embeddings` (xaibench generate
trust); torch runs on one thread. Rates in wall and in process-CPU time (compare CPU on a shared machine).

    python tests/perf/bench_toki.py        (or: make perf)
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import torch

import timing

from benchmark.contracts import Batch, OracleContext

N_TRAIN = int(os.environ.get("TOKI_BENCH_TRAIN", 2000))
N_REF = int(os.environ.get("TOKI_BENCH_REF", 8))
SAMPLES = int(os.environ.get("TOKI_BENCH_SAMPLES", 5000))
CONFIG = os.environ.get("TOKI_BENCH_CONFIG", "hatexplain-cnn")


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def straightforward(model, doc: list[str], pred: int, seed: int, num_samples: int) -> tuple[list[str], list[float]]:
    """The lime package, one instance, unbatched classifier: (word types, weights)."""
    from lime.lime_text import LimeTextExplainer

    def classifier(texts):  # one predict call per perturbed document (removed words are deleted by lime)
        return np.concatenate([np.asarray(model.predict([t.split()])) for t in texts])

    explainer = LimeTextExplainer(split_expression=lambda s: s.split(" "), bow=True, feature_selection="none",
                                  random_state=seed)
    n_types = len(dict.fromkeys(doc))
    exp = explainer.explain_instance(" ".join(doc), classifier, labels=(pred,), num_features=n_types,
                                     num_samples=num_samples)
    vocab = exp.domain_mapper.indexed_string.inverse_vocab
    pairs = sorted(exp.local_exp[pred])
    return [vocab[f] for f, _ in pairs], [float(w) for _, w in pairs]


def load():
    from generators.trust.experiments import load_trust_set
    from benchmark.toki.embeddings import load_ensemble

    try:
        data = load_trust_set(CONFIG)
        models = load_ensemble()
    except (FileNotFoundError, KeyError) as e:
        pytest.skip(f"needs trust/{CONFIG} and trust/embeddings (xaibench generate trust): {e}")
    return data, models


def run() -> dict:
    from benchmark.toki.core import Toki
    from benchmark.toki.explanations import top_positive

    data, models = load()
    model, meta = data["model"], data["meta"]
    class_words = meta["params"]["class_words"]
    train = data["train"]
    correct = [r for r in train if r["prediction"] == r["label"] and r["tokens"]]
    rng = np.random.default_rng(0)
    order = rng.permutation(len(correct))[: min(N_TRAIN, len(correct))]
    chosen = [correct[i] for i in order]
    cols = {k: [r[k] for r in chosen] for k in ("id", "tokens", "label", "prediction", "confidence")}
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        def oracle():
            return Toki(explainer="lime", lime_samples=SAMPLES, models=models, class_names=class_words,
                        precompute_vocabulary=False)

        # warm-up, not pipeline-1 work of either side: what `fit` does first by default (embed the whole
        # training split's vocabulary, so that labelling looks vectors up; timed apart) and a first model call
        warm = oracle()
        warm._setup(OracleContext(model=model, train=None))
        t0 = time.perf_counter()
        vocab = sorted({warm._norm(w) for r in train for w in r["tokens"]})
        for st in warm.states:
            st.emb.vectors(vocab)
        vocab_s = time.perf_counter() - t0
        model.predict(cols["tokens"][:2])

        ours = oracle()
        _, wall, cpu = timed(lambda: ours.fit(OracleContext(model=model, train=cols, seed=0)))
        kw_s = ours.timings["fit_keywords_s"]
        ref = chosen[: min(N_REF, len(chosen))]
        seeds = [Batch(ids=[str(r["id"])], inputs=[[]], seed=0).instance_seed(0) for r in ref]
        ref_out, r_wall, r_cpu = timed(lambda: [straightforward(model, r["tokens"], r["prediction"], s, SAMPLES)
                                                for r, s in zip(ref, seeds)])
    finally:
        torch.set_num_threads(saved)
    norm = ours._norm
    ref_exps = [top_positive(w, s, ours.top_k, norm, ours.words_only) for w, s in ref_out]
    our_exps = [ours.fit_explanations[str(r["id"])] for r in ref]
    same_words = sum(a.words == b.words for a, b in zip(our_exps, ref_exps))
    score_diff = max((float(np.abs(a.scores - b.scores).max()) for a, b in zip(our_exps, ref_exps) if len(a) and
                      a.words == b.words), default=0.0)
    # keyword identity on the reference subset: pipeline 1 from either side's explanations
    ks = []
    for exps in (our_exps, ref_exps):
        t = oracle()
        t.fit_explained([(e.words, e.scores) for e in exps], [r["prediction"] for r in ref],
                        OracleContext(model=model, train=None))
        ks.append(t.keyword_sets())
    n = len(chosen)
    per_ref = (r_wall / len(ref), r_cpu / len(ref))
    ref_total = (per_ref[0] * n + kw_s, per_ref[1] * n + kw_s)
    ratio = (ref_total[0] / wall, ref_total[1] / cpu)

    # (b) pipeline 2 on the trust set's test split with its own explanations
    inputs = [{k: r[k] for k in ("tokens", "prediction", "confidence", "explanation_words", "explanation_scores")}
              for r in data["test"]]
    ids = [str(r["id"]) for r in data["test"]]
    rates, cpu_rates = [], []
    for _ in range(2):  # first pass: test words the training vocabulary lacks are embedded; second: all memoised
        _, w, c = timed(lambda: [ours.judge(Batch(ids=ids[s:s + 256], inputs=inputs[s:s + 256]))
                                 for s in range(0, len(inputs), 256)])
        rates.append(len(inputs) / w)
        cpu_rates.append(len(inputs) / c)

    docs = ours.counts.get("explain_documents", 0)
    distinct = ours.counts.get("explain_distinct_documents", 0)
    print(f"\nTOKI pipeline 1 with LIME ({SAMPLES} samples, bag-of-words features, top-{ours.top_k} positive words) "
          f"on {n} correct training predictions of trust/{CONFIG} (Kim CNN, 1 torch thread)")
    print(f"  ours (Toki.fit: batched LIME, distinct perturbations only, Eq. 2-4, vote): {wall:9.1f} s wall "
          f"{cpu:9.1f} s CPU  ({n / wall:.3f} inst/s; keyword step {kw_s:.1f} s; {distinct:,} of {docs:,} "
          f"perturbed documents distinct)")
    print(f"  lime package, unbatched classifier, one instance at a time: {per_ref[0]:.2f} s wall {per_ref[1]:.2f} s "
          f"CPU per instance, measured on {len(ref)} of the {n}; extrapolated to {n} + keyword step: "
          f"{ref_total[0]:9.1f} s wall {ref_total[1]:9.1f} s CPU")
    print(f"  speed-up: {ratio[0]:.2f}x wall, {ratio[1]:.2f}x CPU")
    print(f"  same top-{ours.top_k} words on the {len(ref)} shared instances: {same_words}/{len(ref)} "
          f"(max |score diff| {score_diff:.1e}); same keywords from either side's explanations: {ks[0] == ks[1]}")
    print(f"  (fit-time vocabulary precompute, apart: {len(vocab):,} training word types embedded in {vocab_s:.1f} s)")
    print(f"TOKI pipeline 2 (labelling, explanations given) on {len(inputs)} test predictions: "
          f"{rates[0]:,.0f} / {cpu_rates[0]:,.0f} labels/s (wall / CPU) first pass, {rates[1]:,.0f} / "
          f"{cpu_rates[1]:,.0f} second pass")
    return {"ratio": ratio[0], "cpu_ratio": ratio[1], "same_words": same_words, "n_ref": len(ref),
            "same_keywords": ks[0] == ks[1], "labels_per_s": rates[0], "labels_per_cpu_s": cpu_rates[0],
            "score_diff": score_diff}


def test_toki_pipelines_throughput():
    r = run()
    timing.record("bench_toki", "TOKI pipelines: lime package unbatched / ours (CPU)", r["cpu_ratio"], "≥ 10", "≥ 10")
    assert r["same_words"] == r["n_ref"] and r["same_keywords"]
    # labels per CPU second (target ≥ 100, issue 9) is printed, not asserted: an absolute rate depends on the CPU
    assert r["cpu_ratio"] >= 10.0  # issue 9: at least 10x the lime package with an unbatched classifier


if __name__ == "__main__":
    run()
