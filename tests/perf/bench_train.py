"""AIXI CNN training and inference throughput: the straightforward way (one pass per 64-image batch,
256-image inference chunks, glibc defaults) against ours (micro-batches of 16 with accumulated
gradients — the same update — and a tuned allocator, see benchmark/isolation/allocator.py), in one run.

    python tests/perf/bench_train.py      (or: make perf)
"""

from __future__ import annotations

import os
import time

import torch

import timing

from benchmark.isolation import allocator
from benchmark.models.architectures import AixiCNN


def _train_steps(micro: int, steps: int = 4) -> tuple[float, float]:
    torch.manual_seed(0)
    m = AixiCNN()
    opt = torch.optim.Adam(m.parameters(), 1e-3)
    x, y = torch.rand(64, 1, 128, 128), torch.rand(64, 1)

    def step():
        opt.zero_grad()
        for s in range(0, 64, micro):
            (((m(x[s:s + micro]) - y[s:s + micro]) ** 2).sum() / 64).backward()
        opt.step()

    step()
    t, c = time.perf_counter(), os.times()
    for _ in range(steps):
        step()
    return 64 * steps / (time.perf_counter() - t), (os.times().system - c.system) / steps


def _infer(bs: int, n: int = 256) -> float:
    m = AixiCNN().eval()
    x = torch.rand(n, 1, 128, 128)
    with torch.no_grad():
        m(x[:bs])
        t = time.perf_counter()
        for s in range(0, n, bs):
            m(x[s:s + bs])
    return n / (time.perf_counter() - t)


def run() -> dict:
    plain_train, plain_sys = _train_steps(64)
    plain_inf = _infer(256)
    allocator.tune()  # process-wide from here on
    ours_train, ours_sys = _train_steps(16)
    ours_inf = _infer(16)
    print(f"\nAIXI CNN on {torch.get_num_threads()} threads, 128×128 inputs")
    print(f"  training, plain (batch 64, glibc defaults)   : {plain_train:7.1f} img/s  ({plain_sys:.2f} s kernel/step)")
    print(f"  training, ours  (16×4 accumulated, tuned)    : {ours_train:7.1f} img/s  ({ours_sys:.2f} s kernel/step)")
    print(f"  speed-up                                     : {ours_train / plain_train:7.2f}×")
    print(f"  inference, plain (chunks of 256)             : {plain_inf:7.1f} img/s")
    print(f"  inference, ours  (chunks of 16, tuned)       : {ours_inf:7.1f} img/s   ({ours_inf / plain_inf:.2f}×)")
    return {"train_ratio": ours_train / plain_train, "infer_ratio": ours_inf / plain_inf}


def test_train_throughput():
    r = run()
    timing.record("bench_train", "CNN training: straightforward / ours", r["train_ratio"], "", "> 1")
    timing.record("bench_train", "CNN inference: straightforward / ours", r["infer_ratio"], "", "> 1")
    assert r["train_ratio"] > 1.0 and r["infer_ratio"] > 1.0


if __name__ == "__main__":
    run()
