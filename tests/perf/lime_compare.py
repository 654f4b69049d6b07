"""The comparison shared by `bench_lime_text.py` and `bench_lime_rcnn.py` (a helper, not a bench): our
`lime-text` submission (all perturbed documents of a batch in one batched `model.predict` call) against the
lime package's `LimeTextExplainer` driven with an unbatched classifier (one `predict` call per perturbed
document) and with a classifier batched per instance (one `predict` call per explained document), on the same
documents and seeds, timed in wall and in process-CPU time, with the rates, the speed-ups and the largest
difference between the explanations printed.

The reference is `LimeTextExplainer(bow=False, split_expression=<the given tokens>, mask_string=MASK)` whose
classifier deletes the mask tokens — the same samples from the same seed as ours, so the explanations must
agree to float precision (the benches check it).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from benchmark.contracts import Batch
from benchmark.submission import discover

NUM_SAMPLES = 5000
MASK = "\x00"  # lime's mask token for removed positions (our classifier deletes it)


def lime_package(model, doc: list[str], seed: int, per_document: bool, *, num_samples: int = NUM_SAMPLES,
                 regression: bool = False) -> np.ndarray:
    """The lime package's LimeTextExplainer with positions as features and deletion semantics.

    A classifier explains its target class (`model.target`); a regression model (`regression=True`, one output
    p, as the RCNN) is wrapped as LIME's two-class probabilities [1 − p, p] and class 1 explained."""
    from lime.lime_text import LimeTextExplainer

    def classifier(texts):
        perturbed = [[w for w in text.split(" ") if w != MASK] for text in texts]
        if per_document:  # the usual unbatched classifier: one predict call per perturbed document
            out = np.concatenate([model.predict([d]) for d in perturbed])
        else:
            out = model.predict(perturbed)
        if regression:
            p = out[:, 0]
            return np.stack([1 - p, p], axis=1)
        return out

    label = 1 if regression else int(model.target([doc])[0])
    explainer = LimeTextExplainer(feature_selection="none", split_expression=lambda s: s.split(" "), bow=False,
                                  mask_string=MASK, random_state=seed)
    exp = explainer.explain_instance(" ".join(doc), classifier, labels=(label,), num_features=len(doc),
                                     num_samples=num_samples)
    weights = np.zeros(len(doc))
    for f, w in exp.local_exp[label]:
        weights[f] = w
    return weights


def synthetic_corpus(n_docs: int, min_len: int, max_len: int, seed: int = 0) -> list[list[str]]:
    """`n_docs` documents of Zipf-distributed words w0…w4999, lengths uniform in [min_len, max_len)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(5000)]
    zipf = 1.0 / np.arange(1, len(words) + 1)
    return [list(rng.choice(words, size=int(rng.integers(min_len, max_len)), p=zipf / zipf.sum()))
            for _ in range(n_docs)]


def timed(fn):
    """(result, wall seconds, CPU seconds of this process — robust on a shared machine)."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def compare(model, chosen_docs: list[list[str]], *, source: str, title: str, unit: str = "documents",
            id_prefix: str = "doc", n_reference: int, threads: int = 1, num_samples: int = NUM_SAMPLES,
            warmup_samples: int, regression: bool = False) -> dict:
    """Times ours on all of `chosen_docs` and the lime package (unbatched, then batched per instance) on the
    first `n_reference` of them, on `threads` torch threads; prints `title`, the documents (`source`,
    lengths), the rates, the speed-ups and max |ours − lime|; returns the ratios (wall and CPU) and that
    difference."""
    n_docs = len(chosen_docs)
    one = unit[:-1] if unit.endswith("s") else unit
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        batch = Batch(ids=[f"{id_prefix}{i}" for i in range(n_docs)], inputs=chosen_docs, seed=0)
        explainer = discover()["lime-text"].instantiate({"num_samples": num_samples})
        # warm-up (allocator, oneDNN kernels) so that no path pays the first-call costs in its timing
        discover()["lime-text"].instantiate({"num_samples": warmup_samples}).explain(
            model, Batch(["w"], chosen_docs[-1:], seed=1))

        ref_docs = chosen_docs[:n_reference]
        seeds = [batch.instance_seed(i) for i in range(n_reference)]

        def reference(per_document: bool) -> list[np.ndarray]:
            return [lime_package(model, d, s, per_document, num_samples=num_samples, regression=regression)
                    for d, s in zip(ref_docs, seeds)]

        ours, *t_ours = timed(lambda: explainer.explain(model, batch))
        unbatched, *t_unb = timed(lambda: reference(True))
        per_instance, *t_per = timed(lambda: reference(False))
        diff = max(float(np.abs(a - b).max()) for a, b in zip(ours[:n_reference] * 2, unbatched + per_instance))
    finally:
        torch.set_num_threads(saved)
    lengths = [len(d) for d in chosen_docs]
    rate = {name: (n / wall, n / cpu) for name, n, (wall, cpu) in
            (("ours", n_docs, t_ours), ("unbatched", n_reference, t_unb), ("per_instance", n_reference, t_per))}
    print(f"\n{title}")
    print(f"  {unit}: {source}, {min(lengths)}-{max(lengths)} tokens")
    print("  explanations per second                              wall      CPU")
    for label, key, n in (("ours (lime-text, one batched predict per batch)", "ours", n_docs),
                          ("lime, classifier batched per instance", "per_instance", n_reference),
                          (f"lime, unbatched classifier (predict per {one})", "unbatched", n_reference)):
        print(f"  {label:<50}: {rate[key][0]:7.3f}  {rate[key][1]:7.3f}   ({n} {unit})")
    ratio = [rate["ours"][k] / rate["unbatched"][k] for k in (0, 1)]
    ratio_pi = [rate["ours"][k] / rate["per_instance"][k] for k in (0, 1)]
    print(f"  {'speed-up vs the unbatched classifier':<50}: {ratio[0]:7.2f}× {ratio[1]:7.2f}×")
    print(f"  {'speed-up vs lime batched per instance':<50}: {ratio_pi[0]:7.2f}× {ratio_pi[1]:7.2f}×")
    print(f"  {f'max |ours − lime| over the shared {unit}':<50}: {diff:.1e}")
    return {"ratio": ratio[0], "cpu_ratio": ratio[1], "ratio_per_instance": ratio_pi[0],
            "cpu_ratio_per_instance": ratio_pi[1], "max_abs_diff": diff}
