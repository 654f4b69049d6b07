"""A CPU yardstick (issue #55): a small fixed single-thread workload whose time says how fast this machine runs the
demo's kind of work, so a demo time measured here can be scaled to another machine.

    python -m generators.yardstick          (`xaibench demo` prints it after its wall time; `.ci/run` before the tests)

The workload is the demo's mix in miniature, each part fixed and seeded (same work on every machine):

* **numpy** — float64 matrix products (384 × 384), an FFT and a sort of 2²⁰ values, elementwise exp / log;
* **torch** — a Kim-CNN-like text model (embedding 100-d, convolutions of width 3 / 4 / 5, 100 filters each) forward
  and backward on a batch of 32 sentences of 40 tokens, then float64 forwards (the harness predicts in float64);
* **python** — tokenising, counting and sorting words of a generated text in pure Python (the tracks' data handling).

Each part runs `ROUNDS` times (alternating with the others) and keeps its best (timeit's rule: the run least
disturbed by the rest of the machine), on one torch / BLAS thread (as the demo's tracks run). The **yardstick** is
the sum of the parts' best CPU seconds (`time.process_time`: time waiting for a core is not in it); the wall seconds
are printed beside. Scaling a demo time: T on machine B ≈ T on machine A × yardstick(B) / yardstick(A), for machines
measured idle (docs/demo.md).
"""

from __future__ import annotations

import os
import platform
import random
import time
from collections import Counter
from dataclasses import dataclass

__all__ = ["ROUNDS", "Yardstick", "measure", "line"]

ROUNDS = 3


def _numpy_part() -> float:
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((384, 384))
    b = rng.standard_normal((384, 384))
    acc = 0.0
    for _ in range(64):
        a = np.tanh(a @ b / 20.0)
        acc += float(a.sum())
    x = rng.standard_normal(1 << 20)
    for _ in range(4):
        acc += float(np.abs(np.fft.rfft(x)).sum() * 1e-9)
        acc += float(np.sort(x)[1000])
    for _ in range(16):
        acc += float(np.log1p(np.exp(-np.abs(x))).sum() * 1e-9)
    return acc


def _torch_part() -> float:
    import torch

    torch.manual_seed(0)
    vocab, dim, filters = 5000, 100, 100
    emb = torch.nn.Embedding(vocab, dim)
    convs = torch.nn.ModuleList([torch.nn.Conv1d(dim, filters, k) for k in (3, 4, 5)])
    out = torch.nn.Linear(3 * filters, 2)
    params = [*emb.parameters(), *convs.parameters(), *out.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    g = torch.Generator().manual_seed(0)

    def forward(ids: torch.Tensor, double: bool = False) -> torch.Tensor:
        e = emb(ids).transpose(1, 2)
        if double:
            e = e.double()
        feats = []
        for c in convs:
            assert isinstance(c, torch.nn.Conv1d) and c.bias is not None
            w, bias = (c.weight.double(), c.bias.double()) if double else (c.weight, c.bias)
            feats.append(torch.relu(torch.nn.functional.conv1d(e, w, bias)).amax(dim=2))
        h = torch.cat(feats, dim=1)
        return torch.nn.functional.linear(h, out.weight.double(), out.bias.double()) if double else out(h)

    acc = 0.0
    for _ in range(36):
        ids = torch.randint(0, vocab, (32, 40), generator=g)
        y = torch.randint(0, 2, (32,), generator=g)
        loss = torch.nn.functional.cross_entropy(forward(ids), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc += loss.item()
    with torch.no_grad():
        for _ in range(24):
            acc += float(forward(torch.randint(0, vocab, (64, 40), generator=g), double=True).sum())
    return acc


def _python_part() -> float:
    rng = random.Random(0)
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "bu", "an", "el"]
    words = ["".join(rng.choice(syll) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    text = " ".join(rng.choice(words) + rng.choice(["", "", "", ",", "."]) for _ in range(400_000))
    acc = 0
    for _ in range(2):
        tokens = [w.strip(",.").lower() for w in text.split()]
        counts = Counter(tokens)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        index = {w: i for i, (w, _) in enumerate(ranked)}
        ids = [index[t] for t in tokens]
        acc += sum(ids[::97]) + len(ranked)
        pairs: dict[tuple[int, int], int] = {}
        for a, b in zip(ids, ids[1:]):
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
        acc += len(pairs)
    return float(acc)


PARTS = {"numpy": _numpy_part, "torch": _torch_part, "python": _python_part}


@dataclass(frozen=True)
class Yardstick:
    """The best CPU seconds and wall seconds of each part, their sums, and the machine."""

    cpu: dict[str, float]
    wall: dict[str, float]
    machine: str
    load: str

    @property
    def seconds(self) -> float:
        """The yardstick: the parts' best CPU seconds, summed."""
        return sum(self.cpu.values())

    @property
    def wall_seconds(self) -> float:
        return sum(self.wall.values())


def _threads_one():
    """Set torch (and, for BLAS started later, the environment) to one thread; returns a function that restores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    return lambda: torch.set_num_threads(before)


def measure(rounds: int = ROUNDS) -> Yardstick:
    """`rounds` alternating rounds of the parts; the best of each (the first, cold round — imports, first-call
    kernels — is the slowest, so the minimum leaves it out without a separate warm-up)."""
    restore = _threads_one()
    try:
        try:
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # no stubs published
        except ImportError:  # numpy's BLAS then keeps its own count (OPENBLAS_NUM_THREADS=1 where it matters)
            limits = None
        else:
            limits = threadpool_limits(1)
        cpu = {n: float("inf") for n in PARTS}
        wall = dict(cpu)
        names = list(PARTS)
        for k in range(max(1, rounds)):
            for n in names if k % 2 == 0 else names[::-1]:
                t, c = time.perf_counter(), time.process_time()
                PARTS[n]()
                cpu[n] = min(cpu[n], time.process_time() - c)
                wall[n] = min(wall[n], time.perf_counter() - t)
        if limits is not None:
            limits.restore_original_limits()
    finally:
        restore()
    return Yardstick(cpu, wall, _machine(), _load())


def _machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical cores"


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def line(y: Yardstick) -> str:
    """One line: the yardstick, its parts, the wall seconds, the machine and its load average."""
    parts = " + ".join(f"{n} {s:.2f}" for n, s in y.cpu.items())
    return (f"CPU yardstick: {y.seconds:.2f} s ({parts}; wall {y.wall_seconds:.2f} s) on {y.machine}, load average "
            f"{y.load} (python -m generators.yardstick; docs/demo.md scales a demo time by it)")


def main() -> int:
    print(line(measure()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
