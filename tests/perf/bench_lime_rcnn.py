"""LIME on the RCNN rationale model (the model under test of the `rcnn` track), word positions as features,
5,000 perturbed reviews per explanation: our `lime-text` submission (all perturbed reviews of a batch in
one batched `model.predict` call; the RCNN wrapper sorts them by length before cutting them into chunks)
against the lime package driven with an unbatched classifier function (one `predict` call per perturbed
review), side by side on the same reviews, in one run, with the ratio printed. A third line shows lime with
a per-instance batched classifier (one `predict` call per explained review), to separate the two gains.

The reference is `LimeTextExplainer(bow=False, split_expression=<the given tokens>, mask_string=M)` whose
classifier deletes the mask tokens and returns the regression output p = RCNN(x) — LIME's probability of
"class 1" (SPECS §4.5 wraps it as [1 − p, p]; the ridge fit on p is the same) — from the same seed, so the
explanations must agree to float precision (checked). Reviews come from the BeerAdvocate mirror when present
(else a synthetic corpus); the RCNN has Lei's sizes (200-d embeddings, hidden 200, order 2, depth 2) and
random weights (the cost of a forward pass does not depend on the training, except through the number of
selected tokens the encoder reads). Rates in wall and in process-CPU time (the latter is what to compare on
a shared machine).

    python tests/perf/bench_lime_rcnn.py      (or: make perf)
"""

from __future__ import annotations

import time

import numpy as np
import torch

from benchmark.contracts import Batch
from benchmark.models.rcnn import RCNNRationale, RationaleModel
from benchmark.models.text import build_vocab
from benchmark.submission import discover

NUM_SAMPLES = 5000
MASK = "\x00"  # lime's mask token for removed positions (our classifier deletes it)


def corpus(seed: int = 0) -> tuple[list[list[str]], str]:
    """BeerAdvocate reviews (the mirror's heldout file, first 2,000), or a synthetic corpus."""
    from generators.rcnn.data import mirror_dir, read_reviews

    folder = mirror_dir()
    if folder is not None and (folder / "reviews.aspect0.heldout.txt.gz").exists():
        return read_reviews(folder / "reviews.aspect0.heldout.txt.gz", limit=2000).tokens, "BeerAdvocate (mirror)"
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(5000)]
    zipf = 1.0 / np.arange(1, len(words) + 1)
    docs = [list(rng.choice(words, size=int(rng.integers(20, 200)), p=zipf / zipf.sum())) for _ in range(2000)]
    return docs, "synthetic (no beer_advocate_lei2016 in the data mirror)"


def make_model(docs: list[list[str]]) -> RationaleModel:
    vocab = build_vocab(docs)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        module = RCNNRationale(len(vocab))  # Lei's sizes
        with torch.no_grad():
            module.embedding.weight[2:].normal_(0, 0.5)
    return RationaleModel(module.eval(), vocab, name="rcnn-random", aspect="appearance")


def lime_package(model: RationaleModel, doc: list[str], seed: int, per_document: bool) -> np.ndarray:
    """The lime package's LimeTextExplainer with positions as features and deletion semantics."""
    from lime.lime_text import LimeTextExplainer

    def classifier(texts):
        perturbed = [[w for w in text.split(" ") if w != MASK] for text in texts]
        if per_document:  # the usual unbatched classifier: one predict call per perturbed review
            p = np.concatenate([model.predict([d]) for d in perturbed])[:, 0]
        else:
            p = model.predict(perturbed)[:, 0]
        return np.stack([1 - p, p], axis=1)  # the regression output as LIME's two-class probabilities

    explainer = LimeTextExplainer(feature_selection="none", split_expression=lambda s: s.split(" "), bow=False,
                                  mask_string=MASK, random_state=seed)
    exp = explainer.explain_instance(" ".join(doc), classifier, labels=(1,), num_features=len(doc),
                                     num_samples=NUM_SAMPLES)
    weights = np.zeros(len(doc))
    for f, w in exp.local_exp[1]:
        weights[f] = w
    return weights


def run(n_docs: int = 4, n_reference: int = 1, threads: int = 1, lengths: tuple[int, int] = (40, 80)) -> dict:
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        docs, source = corpus()
        model = make_model(docs)
        rng = np.random.default_rng(1)
        typical = [d for d in docs if lengths[0] <= len(d) <= lengths[1]]
        chosen = [typical[i] for i in rng.choice(len(typical), n_docs, replace=False)]
        batch = Batch(ids=[f"review{i}" for i in range(n_docs)], inputs=chosen, seed=0)
        explainer = discover()["lime-text"].instantiate({"num_samples": NUM_SAMPLES})
        # warm-up so that no path pays the first-call costs in its timing
        discover()["lime-text"].instantiate({"num_samples": 500}).explain(model, Batch(["w"], chosen[-1:], seed=1))

        def timed(fn):
            """(result, wall seconds, CPU seconds of this process — robust on a shared machine)."""
            t, c = time.perf_counter(), time.process_time()
            out = fn()
            return out, time.perf_counter() - t, time.process_time() - c

        ref_docs = chosen[:n_reference]
        seeds = [batch.instance_seed(i) for i in range(n_reference)]
        ours, *t_ours = timed(lambda: explainer.explain(model, batch))
        unbatched, *t_unb = timed(lambda: [lime_package(model, d, s, True) for d, s in zip(ref_docs, seeds)])
        per_instance, *t_per = timed(lambda: [lime_package(model, d, s, False) for d, s in zip(ref_docs, seeds)])
        diff = max(float(np.abs(a - b).max()) for a, b in zip(ours[:n_reference] * 2, unbatched + per_instance))
    finally:
        torch.set_num_threads(saved)
    lens = [len(d) for d in chosen]
    rate = {name: (n / wall, n / cpu) for name, n, (wall, cpu) in
            (("ours", n_docs, t_ours), ("unbatched", n_reference, t_unb), ("per_instance", n_reference, t_per))}
    print(f"\nLIME on the RCNN (Lei's sizes, random weights, |V| = {len(model.vocab)}), word positions as features, "
          f"{NUM_SAMPLES} samples per review, {threads} thread(s)")
    print(f"  reviews: {source}, {min(lens)}-{max(lens)} tokens")
    print("  explanations per second                              wall      CPU")
    for label, key, n in (("ours (lime-text, one batched predict per batch)", "ours", n_docs),
                          ("lime, classifier batched per instance", "per_instance", n_reference),
                          ("lime, unbatched classifier (predict per review)", "unbatched", n_reference)):
        print(f"  {label:<50}: {rate[key][0]:7.3f}  {rate[key][1]:7.3f}   ({n} reviews)")
    ratio = [rate["ours"][k] / rate["unbatched"][k] for k in (0, 1)]
    ratio_pi = [rate["ours"][k] / rate["per_instance"][k] for k in (0, 1)]
    print(f"  {'speed-up vs the unbatched classifier':<50}: {ratio[0]:7.2f}× {ratio[1]:7.2f}×")
    print(f"  {'speed-up vs lime batched per instance':<50}: {ratio_pi[0]:7.2f}× {ratio_pi[1]:7.2f}×")
    print(f"  {'max |ours − lime| over the shared reviews':<50}: {diff:.1e}")
    return {"ratio": ratio[0], "cpu_ratio": ratio[1], "ratio_per_instance": ratio_pi[0],
            "cpu_ratio_per_instance": ratio_pi[1], "max_abs_diff": diff}


def test_lime_rcnn_throughput():
    r = run()
    assert r["max_abs_diff"] < 1e-6  # the same explanations
    assert r["cpu_ratio"] > 1.0  # CPU time: wall time on a shared machine measures the neighbours too


if __name__ == "__main__":
    run()
