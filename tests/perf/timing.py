"""How the benchmarks time and report, so that what they assert holds on any CPU (issue #47, DESIGN §6).

* `side_by_side(ways, rounds)`: every way of doing the same work runs in this process, the ways
  alternate (round 1: a, b; round 2: b, a; …) and each keeps its best of `rounds` runs — timeit's rule:
  the minimum is the run least disturbed by the rest of the machine, and alternation gives each way
  the same warm caches and the same neighbours — in wall time and in CPU time. A ratio of two such
  bests is what a benchmark may assert; absolute times depend on the machine and are printed, never
  asserted.
* `machine()` names the CPU, its cores and vector extensions and torch's threads; `load()` the load
  average. `make perf` (tests/perf/conftest.py) prints both before and after the run, and every ratio a
  benchmark `record`s in one table at the end, side by side.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass
from typing import Callable

RECORDS: list["Ratio"] = []


@dataclass(frozen=True)
class Ratio:
    """One measured ratio: `ours` / `reference` times (or a speed-up), what it was measured on, the target
    the issue sets (None if none) and whether the benchmark asserts it."""

    bench: str
    what: str
    value: float
    target: str = ""
    asserted: str = ""  # the bound asserted ("≥ 5", "< 8"), "" when only printed

    def line(self) -> str:
        """One row of the summary table."""
        return f"{self.bench:18s} {self.what:58s} {self.value:7.2f}  {self.target:10s} {self.asserted or '—'}"


def record(bench: str, what: str, value: float, target: str = "", asserted: str = "") -> Ratio:
    """Keep a ratio for the summary `make perf` prints at the end (and return it)."""
    r = Ratio(bench, what, float(value), target, asserted)
    RECORDS.append(r)
    return r


def summary() -> str:
    """Every recorded ratio, one per line, under a header."""
    head = f"{'benchmark':18s} {'ratio':58s} {'value':>7s}  {'target':10s} asserted"
    return "\n".join([head, *(r.line() for r in RECORDS)])


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux, else `platform.processor()`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def vector_extensions() -> str:
    """The widest x86 vector extension the CPU reports (AVX-512 / AVX2 / AVX / SSE), or ""."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return ""
    for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse4_2", "SSE4.2")):
        if flag in flags:
            return name
    return ""


def machine() -> str:
    """The CPU model, its logical cores, its widest vector extension and torch's thread count."""
    threads = ""
    try:
        import torch

        threads = f", torch {torch.__version__} on {torch.get_num_threads()} threads"
    except ImportError:
        pass
    ext = vector_extensions()
    return f"{cpu_model()} ({os.cpu_count()} logical cores{', ' + ext if ext else ''}{threads})"


def load() -> str:
    """The 1-, 5- and 15-minute load averages, or "n/a"."""
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


@dataclass(frozen=True)
class Best:
    """The best wall time and the best CPU time (all of the process's threads) of one way, in seconds. On a
    loaded machine the CPU time is the steadier measure of the work itself: the time spent waiting for a
    core is not in it (bench_exact reports it for one thread)."""

    wall: float
    cpu: float


def side_by_side(ways: dict[str, Callable[[], object]], rounds: int = 3, warm: bool = True) -> dict[str, Best]:
    """The best wall and CPU times of each way over `rounds` alternating rounds (module docstring); `warm`
    runs each once first, untimed (imports, first-call kernels, caches)."""
    if warm:
        for f in ways.values():
            f()
    names = list(ways)
    wall = {name: float("inf") for name in names}
    cpu = dict(wall)
    for k in range(max(1, rounds)):
        for name in (names if k % 2 == 0 else names[::-1]):
            t, c = time.perf_counter(), time.process_time()
            ways[name]()
            cpu[name] = min(cpu[name], time.process_time() - c)
            wall[name] = min(wall[name], time.perf_counter() - t)
    return {name: Best(wall[name], cpu[name]) for name in names}
