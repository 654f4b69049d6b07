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

import numpy as np

import timing
import torch
# tests/perf/lime_compare.py, shared with bench_lime_text.py
from lime_compare import NUM_SAMPLES, compare, synthetic_corpus

from benchmark.models.rcnn import RCNNRationale, RationaleModel
from benchmark.models.text import build_vocab


def corpus(seed: int = 0) -> tuple[list[list[str]], str]:
    """BeerAdvocate reviews (the mirror's heldout file, first 2,000), or a synthetic corpus."""
    from generators.rcnn.data import mirror_dir, read_reviews

    folder = mirror_dir()
    if folder is not None and (folder / "reviews.aspect0.heldout.txt.gz").exists():
        return read_reviews(folder / "reviews.aspect0.heldout.txt.gz", limit=2000).tokens, "BeerAdvocate (mirror)"
    return synthetic_corpus(2000, 20, 200, seed), "synthetic (no beer_advocate_lei2016 in the data mirror)"


def make_model(docs: list[list[str]]) -> RationaleModel:
    vocab = build_vocab(docs)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        module = RCNNRationale(len(vocab))  # Lei's sizes
        with torch.no_grad():
            module.embedding.weight[2:].normal_(0, 0.5)
    return RationaleModel(module.eval(), vocab, name="rcnn-random", aspect="appearance")


def run(n_docs: int = 4, n_reference: int = 1, threads: int = 1, lengths: tuple[int, int] = (40, 80)) -> dict:
    docs, source = corpus()
    model = make_model(docs)
    rng = np.random.default_rng(1)
    typical = [d for d in docs if lengths[0] <= len(d) <= lengths[1]]
    chosen = [typical[i] for i in rng.choice(len(typical), n_docs, replace=False)]
    title = (f"LIME on the RCNN (Lei's sizes, random weights, |V| = {len(model.vocab)}), word positions as "
             f"features, {NUM_SAMPLES} samples per review, {threads} thread(s)")
    # the RCNN's regression output p is explained as LIME's class 1 of [1 − p, p]
    return compare(model, chosen, source=source, title=title, unit="reviews", id_prefix="review",
                   n_reference=n_reference, threads=threads, num_samples=NUM_SAMPLES, warmup_samples=500,
                   regression=True)


def test_lime_rcnn_throughput():
    r = run()
    timing.record("bench_lime_rcnn", "LIME on the RCNN: lime unbatched / ours (CPU)", r["cpu_ratio"], "", "> 1")
    assert r["max_abs_diff"] < 1e-6  # the same explanations
    assert r["cpu_ratio"] > 1.0  # CPU time: wall time on a shared machine measures the neighbours too


if __name__ == "__main__":
    run()
