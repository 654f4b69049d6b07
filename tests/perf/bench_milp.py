"""IDC MILP speed: MR (|V| = 3,000 TF-IDF words) solved to proven optimality (SPECS §5.4).

Run as a script (``python tests/perf/bench_milp.py [--vocab 3000] [--plain 60] [--threads 2]
[--time-limit 120]``) or as a pytest test
(``pytest -s tests/perf/bench_milp.py -p no:cacheprovider --override-ini addopts=``).

Instance: the 10,662 MR sentences (pos then neg), a seeded shuffle (``numpy.random.default_rng(0)``),
the first 80 % (train + validation, SPECS §5.7) as the pool; tokens ``re.findall(r"[a-z0-9']+", line)``
of the lower-cased line (a stand-in: the project's own tokenisation comes later); V = the top-|V|
TF-IDF words of the pool; documents with < 5 words of V discarded. Target (issue #3): proven optimal in
< 120 s wall on 2 cores. The plain formulation (no reductions / decomposition) is run for comparison,
capped at ``--plain`` seconds (0 skips it).

Measured (2 cores shared with other jobs, load average 5–7; ``--time-limit 600 --plain 120``):
6,493 documents used; per-class covers 3,301 × 1,826 and 3,178 × 1,820 proven optimal in 103 s and
159 s wall (parallel workers; SCIP CPU: class 0 36 s when started from its optimum, class 1 67–77 s
from scratch), |IF| 467 and 508, sharing 41 words; lower bound 7,050.16 (cost + ε|IF|); repair 56 s
→ 7,646; coupled model 383 s without raising the bound: gap 7.8 %, not proven. Plain model at 120 s:
gap 16.7 %, objective 7,697. With the 120 s limit the per-class covers alone used the budget under
that load. Why it is hard: see docs/idc.md, "MILP solver experiments".
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

TARGET_SECONDS = 120.0


def _data_dir() -> Path | None:
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None:
        return None
    d = Path(root) / "rt_polarity"
    ok = (d / "rt-polarity.pos").is_file() and (d / "rt-polarity.neg").is_file()
    return d if ok else None


def mr_pool(data: Path, seed: int = 0, frac: float = 0.8):
    lines, labels = [], []
    for name, y in (("rt-polarity.pos", 1), ("rt-polarity.neg", 0)):
        with open(data / name, encoding="latin-1") as fh:
            for line in fh:
                lines.append(line)
                labels.append(y)
    order = np.random.default_rng(seed).permutation(len(lines))
    n = int(frac * len(lines))
    docs = [re.findall(r"[a-z0-9']+", lines[i].lower()) for i in order[:n]]
    return docs, [labels[i] for i in order[:n]]


def _load() -> str:
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - platform without getloadavg
        return "load average n/a"


def run(vocab_size: int = 3000, plain_seconds: float = 60.0, time_limit: float | None = TARGET_SECONDS,
        threads: int = 2):
    from generators.idc.milp import solve_milp, tfidf_vocabulary

    data = _data_dir()
    if data is None:
        raise FileNotFoundError("rt_polarity not found under the data mirror")
    t = time.perf_counter()
    docs, labels = mr_pool(data)
    vocab = tfidf_vocabulary(docs, vocab_size)
    print(f"pool: {len(docs)} documents, |V| = {len(vocab)} (built in {time.perf_counter() - t:.1f}s); "
          f"{os.cpu_count()} CPUs, {_load()}")
    res = solve_milp(docs, labels, vocab, time_limit=time_limit, threads=threads)
    st = res.stages
    per_class = ", ".join(f"class {c}: {st.get(f'seconds_class_{c}', 0):.1f}s on {st.get(f'size_class_{c}')}"
                          for c in sorted(res.features))
    print(
        f"reduced + decomposed ({threads} worker processes, time limit {time_limit}s; {_load()}):\n"
        f"  documents used {res.n_documents}, discarded {res.n_discarded}\n"
        f"  variables {res.n_variables} -> {res.reduced_variables} (largest SCIP model), "
        f"constraints {res.n_constraints} -> {res.reduced_constraints}\n"
        f"  reductions: {res.reductions}\n"
        f"  stages: reduce {st.get('seconds_reduce', 0):.1f}s | per-class relaxation "
        f"{st.get('seconds_relaxation', 0):.1f}s ({per_class}) | repair {st.get('seconds_repair', 0):.1f}s | "
        f"coupled {st.get('seconds_coupled', 0):.1f}s\n"
        f"  shared words {st.get('shared_words')}, conflicts of the per-class optima {st.get('conflicts')}, "
        f"|IF_c| of the per-class optima {st.get('features_per_class_relaxed')}\n"
        f"  bounds (cost + eps*|IF|): relaxation {st.get('relaxation_bound')}, repair "
        f"{st.get('repair_objective')}, coupled lower bound {st.get('coupled_bound')}\n"
        f"  method {res.method}, total {res.solve_seconds:.2f}s, proven optimal "
        f"{'yes' if res.optimal else 'no'}, gap {res.gap:.3g}\n"
        f"  objective {res.objective}, |IF_pos| = {len(res.features[1])}, |IF_neg| = {len(res.features[0])}"
    )
    plain = None
    if plain_seconds and plain_seconds > 0:
        plain = solve_milp(docs, labels, vocab, reduce=False, time_limit=plain_seconds)
        print(
            f"plain formulation (capped at {plain_seconds:.0f}s): {plain.solve_seconds:.2f}s, proven optimal "
            f"{'yes' if plain.optimal else 'no'}, gap {plain.gap:.3g}, objective {plain.objective}, "
            f"|IF| = {plain.cardinality}"
        )
    return res, plain


@pytest.mark.xfail(reason="issue #3 target not met: the per-class optima share ~40 words and the coupled "
                          "model (root LP ~18 % below the incumbent) is not proven optimal in 120 s",
                   strict=False)
def test_milp_mr_3000():
    if _data_dir() is None:
        pytest.skip("MR data absent: no rt_polarity under /work/shared/data or $XAIBENCH_DATA_MIRROR")
    res, plain = run(3000, plain_seconds=0, time_limit=TARGET_SECONDS, threads=2)
    assert res.violated == 0
    assert res.optimal and res.gap == 0.0
    assert res.solve_seconds < TARGET_SECONDS


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=3000)
    ap.add_argument("--plain", type=float, default=60.0, help="cap (s) for the plain run; 0 skips it")
    ap.add_argument("--time-limit", type=float, default=TARGET_SECONDS, help="0 = none")
    ap.add_argument("--threads", type=int, default=2, help="worker processes for the independent covers")
    a = ap.parse_args()
    run(a.vocab, a.plain, a.time_limit or None, a.threads)
