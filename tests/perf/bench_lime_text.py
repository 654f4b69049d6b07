"""LIME on a Kim CNN with word positions as features, 5,000 perturbed documents per explanation: our
`lime-text` (all perturbed documents of a batch in one batched `model.predict` call) against the lime
package driven with an unbatched classifier function (one `predict` call per perturbed document), side
by side on the same documents, in one run. A third line shows lime with a per-instance batched
classifier (one `predict` call per explained document), to separate the two gains.

The reference is `LimeTextExplainer(bow=False, split_expression=<the given tokens>, mask_string=M)`
whose classifier deletes the mask tokens — the same samples from the same seed, so the explanations
must agree to float precision (checked). Vocabulary and documents come from MR when the data mirror
has `rt_polarity`, else from a synthetic corpus; the CNN has random weights (SPECS §5.2 sizes). Rates
are given in wall and in process-CPU time (the latter is what to compare on a shared machine). The Kim
CNN pads every document to max_len, so its forward pass dominates: batching removes the per-call
overhead of 5,000 one-document calls; one call per batch rather than per instance adds little on CPU.

    python tests/perf/bench_lime_text.py      (or: make perf)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import timing
import torch
# tests/perf/lime_compare.py, shared with bench_lime_rcnn.py
from lime_compare import NUM_SAMPLES, compare, synthetic_corpus

from benchmark.models.text import KimCNN, WordModel, build_vocab


def corpus(seed: int = 0) -> tuple[list[list[str]], str]:
    """MR sentences as tokens (the project tokeniser), or a synthetic corpus without the mirror."""
    from benchmark.resources.store import mirror_root
    from benchmark.tokenize import tokenize

    root = mirror_root()
    folder = Path(root) / "rt_polarity" if root is not None else None
    if folder is not None and (folder / "rt-polarity.pos").is_file() and (folder / "rt-polarity.neg").is_file():
        from generators.corpora.mr import mr_text

        docs = [tokenize(mr_text(line)) for name in ("rt-polarity.pos", "rt-polarity.neg")
                for line in (folder / name).read_text(encoding="latin-1").splitlines()]
        return [d for d in docs if d], "MR (data mirror)"
    return synthetic_corpus(5000, 5, 40, seed), "synthetic (no rt_polarity in the data mirror)"


def make_model(docs: list[list[str]]) -> WordModel:
    vocab = build_vocab(docs)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        module = KimCNN(len(vocab), max_len=max(len(d) for d in docs))
    return WordModel(module, vocab, name="kim-cnn-random")


def run(n_docs: int = 4, n_reference: int = 2, threads: int = 1) -> dict:
    docs, source = corpus()
    model = make_model(docs)
    rng = np.random.default_rng(1)
    typical = [d for d in docs if 15 <= len(d) <= 25]  # around MR's median length (21 tokens)
    chosen = [typical[i] for i in rng.choice(len(typical), n_docs, replace=False)]
    title = (f"LIME, word positions as features, {NUM_SAMPLES} samples per document; Kim CNN (random "
             f"weights, |V| = {len(model.vocab)}, max_len {model.max_len}) on {threads} thread(s)")
    return compare(model, chosen, source=source, title=title, unit="documents", id_prefix="doc",
                   n_reference=n_reference, threads=threads, num_samples=NUM_SAMPLES, warmup_samples=2000)


def test_lime_text_throughput():
    r = run()
    timing.record("bench_lime_text", "LIME on the Kim CNN: lime unbatched / ours (CPU)", r["cpu_ratio"], "", "> 1")
    assert r["max_abs_diff"] < 1e-6  # the same explanations
    assert r["cpu_ratio"] > 1.0  # CPU time: wall time on a shared machine measures the neighbours too


if __name__ == "__main__":
    run()
