"""What the metric board's GT-free metrics cost, side by side with the straightforward way in one run:

* text metrics (ERASER comprehensiveness / sufficiency, deletion / insertion curves): every perturbed text
  of a chunk in one `predict` call (ours) against one `predict` call per perturbed text;
* the AIXI function model under Quantus's perturbation loops: object-pixel counting with one integer
  product (ours) against the per-object boolean masks over every pixel it replaced.

    python tests/perf/bench_gtfree.py      (or: make perf)
"""

from __future__ import annotations

import random
import time

import numpy as np

import timing
import torch

from benchmark.gtfree import get_metric
from benchmark.models.aixi_function import FunctionModel, Reference, get_function
from benchmark.models.text import KimCNN, WordModel, build_vocab


def _best(f, reps: int = 3) -> float:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


class _OneByOne:
    """The straightforward way: the same model, asked one text at a time."""

    def __init__(self, model):
        self.model = model

    def predict(self, texts):
        return np.concatenate([self.model.predict([t]) for t in texts]) if texts else np.zeros((0, 2))


def _old_counts(self: FunctionModel, x: np.ndarray) -> np.ndarray:
    """`FunctionModel._counts` before issue #39: a boolean mask over every pixel per object."""
    ref = self._references[self._focus]
    out = np.zeros((len(x), 3), dtype=np.int64)
    k = len(ref.patterns)
    inst = ref.instances.ravel()
    tot = np.bincount(inst, minlength=k + 1)[1:]
    keep = (np.abs(x - ref.image[None]) < 1e-4).reshape(len(x), -1)
    kept = np.stack([keep[:, inst == j + 1].sum(axis=1) for j in range(k)], axis=1)
    visible = kept >= self.visible_fraction * np.maximum(tot, 1)[None]
    for p in range(3):
        out[:, p] = (visible & (ref.patterns == p)[None]).sum(axis=1)
    return out


def run() -> dict:
    threads = torch.get_num_threads()
    try:
        return _run()
    finally:
        torch.set_num_threads(threads)  # the later benchmarks of `make perf` keep the machine's setting


def _run() -> dict:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = random.Random(0)
    words = [f"w{i}" for i in range(2000)]
    docs = [[rng.choice(words) for _ in range(rng.randint(8, 40))] for _ in range(32)]
    vocab = build_vocab(docs)
    model = WordModel(KimCNN(len(vocab), max_len=64), vocab, name="kim")
    targets = model.target(docs)
    maps = [np.random.default_rng(i).normal(size=len(d)) for i, d in enumerate(docs)]
    out: dict = {}
    for name in ("comprehensiveness", "deletion-aopc"):
        metric = get_metric(name)
        ours = metric(model, docs, maps, targets)
        plain = metric(_OneByOne(model), docs, maps, targets)
        assert np.array_equal(ours.values, plain.values), "batched and one-by-one scores differ"
        t_ours = _best(lambda m=metric: m(model, docs, maps, targets))
        t_plain = _best(lambda m=metric: m(_OneByOne(model), docs, maps, targets), reps=1)
        out[name] = (t_plain, t_ours)
    # the AIXI function model on 400 perturbed copies of a 128×128 image with 6 objects of 20×20
    # (15 % of the pixels; the demo's AIXI-Shape objects cover about 3 %)
    img_rng = np.random.default_rng(0)
    inst = np.zeros((128, 128), dtype=np.int64)
    for j in range(6):
        r, c = img_rng.integers(0, 108, size=2)
        inst[r : r + 20, c : c + 20] = j + 1
    image = (inst > 0).astype(np.float32)
    ref = Reference(image, inst, np.array([0, 1, 2, 0, 1, 2], dtype=np.int64))
    fm = FunctionModel(get_function("ssin"), "shape", {"a": ref})
    fm.focus("a")
    x = np.repeat(image[None], 400, axis=0)
    x[img_rng.uniform(size=x.shape) < 0.3] = 0.0
    assert np.array_equal(fm._counts(x), _old_counts(fm, x))
    out["function model, 400 rows"] = (_best(lambda: _old_counts(fm, x)), _best(lambda: fm._counts(x)))
    # Quantus's pattern: one row per call
    out["function model, 400 × 1 row"] = (_best(lambda: [_old_counts(fm, r[None]) for r in x]),
                                          _best(lambda: [fm._counts(r[None]) for r in x]))
    return out


def test_bench_gtfree():
    for name, (plain, ours) in run().items():
        print(f"{name:28s} straightforward {plain * 1e3:8.1f} ms   ours {ours * 1e3:8.1f} ms   "
              f"ratio {plain / ours:5.1f}×")
        timing.record("bench_gtfree", f"{name}: straightforward / ours", plain / ours)


if __name__ == "__main__":
    test_bench_gtfree()
