"""Isolation overhead: the sandboxed worker (bubblewrap + a process per run + the wire protocol)
against today's in-process way (the explainer called in the harness process on the same batches),
side by side in one run, on the same instances, with the same outputs (checked bit for bit).

Cases (batch size 16, the runner's default):
* saliency on the AIXI CNN (128×128, random weights) over the 200 validation images of the demo-scale
  AIXI-Shape resource — a cheap explainer, where the per-batch cost of the pipe shows most;
* exhaustive LIME on the AIXI function model, which the harness serves: every `predict` of every
  instance is a round trip over the pipe (up to 2^6 images of 128×128 each); target (issue #47) ≤ 1.1×;
* LIME-text (5,000 samples) on a Kim CNN (random weights) over 24 MR sentences — model calls dominate.

Each case runs `ROUNDS` times, the two ways alternating (a fresh worker each time); each way keeps its
best per-instance time (after one untimed warm-up batch), in wall time and in CPU time — for the
isolated way the harness's and the worker's together (the worker's from /proc). On a loaded machine a
round trip also waits for a core, which the wall ratio counts and the CPU ratio does not; on an idle
one the two agree. Printed per case: the worker's start (import, model load), both ratios, and the
ratio with the start included. Asserted: the same outputs (not a time: it depends on the machine).

    python tests/perf/bench_isolation.py      (or: make perf)
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from benchmark.contracts import Batch
from benchmark.isolation import Worker, WorkerConfig, validate_output
from benchmark.models.spec import ModelSpec
from benchmark.submission import get_submission
from benchmark.isolation.worker import run_explainer

import timing

BATCH = 16
ROUNDS = 3


def in_process(sub, spec: ModelSpec, ids, inputs, segments, shapes) -> tuple[list, float, float]:
    """Today's runner, minus caching: explainer and model in this process, batch after batch.
    (outputs, wall s, CPU s)."""
    explainer, model = sub.instantiate({}), spec.load()
    warm = Batch(ids=list(ids[:BATCH]), inputs=inputs[:BATCH], seed=0,
                 segments=None if segments is None else segments[:BATCH])
    run_explainer(explainer, model, warm, spec.per_instance)  # untimed warm-up, as the worker gets below
    t0, c0 = time.perf_counter(), time.process_time()
    out = []
    for s in range(0, len(ids), BATCH):
        sl = slice(s, s + BATCH)
        b = Batch(ids=list(ids[sl]), inputs=inputs[sl], segments=None if segments is None else segments[sl], seed=0)
        for o, shape in zip(run_explainer(explainer, model, b, spec.per_instance), shapes[sl]):
            out.append(validate_output(o, shape)[0])
    return out, time.perf_counter() - t0, time.process_time() - c0


def worker_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` and every process below it (/proc)."""
    from benchmark.isolation.scratch import descendants

    ticks = 0
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        except (OSError, ValueError, IndexError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def isolated(sub, spec: ModelSpec, ids, inputs, segments, shapes) -> tuple[list, float, float, float, str]:
    """(outputs, start s, wall s, CPU s of the harness and the worker together, sandbox mode)."""
    # the worker on the harness's torch threads: both sides compute with the same settings
    worker = Worker(sub, {}, spec, WorkerConfig(torch_threads=torch.get_num_threads()))
    t0 = time.perf_counter()
    worker.start()
    t_start = time.perf_counter() - t0
    worker.explain_all(ids[:BATCH], inputs[:BATCH], None if segments is None else segments[:BATCH], shapes[:BATCH],
                       BATCH)  # untimed warm-up batch
    assert worker.proc is not None
    started, c0, w0 = time.perf_counter(), time.process_time(), worker_cpu(worker.proc.pid)
    out = [e.array for e in worker.explain_all(ids, inputs, segments, shapes, BATCH)]
    done, cpu = time.perf_counter(), time.process_time() - c0 + worker_cpu(worker.proc.pid) - w0
    worker.close()
    return out, t_start, done - started, cpu, worker.mode


def aixi_case(tmp: Path):
    from benchmark.models.architectures import AixiCNN
    from benchmark.models.base import save_model
    from benchmark.resources import load_resource
    from benchmark.tracks import get_track
    from generators.aixi.build import build_aixi

    os.environ["XAIBENCH_HOME"] = str(tmp / "home")
    build_aixi("shape", 2000, 200, workers=1, functions=("ssin",))
    res = load_resource("aixi/shape-ssin")
    trk = get_track("aixi")
    inst = trk.instances(res, "validation")
    with torch.random.fork_rng():
        torch.manual_seed(0)
        save_model(AixiCNN(size=128), tmp / "cnn", "aixi-cnn", {"size": 128}, extra={"task": "regression"})
    cnn = ModelSpec("cnn", "image", True, loader="image", directory=tmp / "cnn")
    function, _ = trk.build_model(res, "function", inst)
    return inst, cnn, function


def text_case(tmp: Path, n: int = 24):
    from bench_lime_text import corpus  # tests/perf/bench_lime_text.py

    from benchmark.models.base import save_model
    from benchmark.models.text import KimCNN, build_vocab

    docs, source = corpus()
    vocab = build_vocab(docs)
    rng = np.random.default_rng(1)
    typical = [d for d in docs if 15 <= len(d) <= 25]
    chosen = [typical[i] for i in rng.choice(len(typical), n, replace=False)]
    max_len = max(len(d) for d in docs)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        module = KimCNN(len(vocab), max_len=max_len)
    save_model(module, tmp / "kim", "kim-cnn", {"vocab_size": len(vocab), "max_len": max_len},
               extra={"vocab": vocab, "n_classes": 2, "max_len": max_len})
    return chosen, ModelSpec("kim-cnn", "text", True, loader="word", directory=tmp / "kim"), source


def run(rounds: int = ROUNDS) -> list[dict]:
    from benchmark.isolation import allocator

    allocator.tune()  # what the runner (and the worker) do: both sides with the same glibc settings
    rows = []
    print(f"\nisolation on {timing.machine()}; load average {timing.load()}")
    home = os.environ.get("XAIBENCH_HOME")  # aixi_case builds its resource in a home of its own
    try:
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            inst, cnn, function = aixi_case(tmp)
            ids, shapes = inst.ids, inst.output_shapes
            cases = [("saliency", cnn, ids, inst.inputs, inst.segments, shapes),
                     ("lime-exhaustive", function, ids[:64], inst.inputs[:64], inst.segments[:64], shapes[:64])]
            docs, kim, source = text_case(tmp)
            cases.append(("lime-text", kim, [f"doc-{k}" for k in range(len(docs))], docs, None,
                          [(len(d),) for d in docs]))
            for name, spec, ids_, inputs, segments, shapes_ in cases:
                sub = get_submission(name)
                best = {"in": [np.inf, np.inf], "iso": [np.inf, np.inf]}
                same, t_start, mode = True, np.inf, ""
                for k in range(max(1, rounds)):
                    for way in (("in", "iso") if k % 2 == 0 else ("iso", "in")):
                        if way == "in":
                            ref, wall, cpu = in_process(sub, spec, ids_, inputs, segments, shapes_)
                        else:
                            out, start, wall, cpu, mode = isolated(sub, spec, ids_, inputs, segments, shapes_)
                            t_start = min(t_start, start)
                        best[way] = [min(best[way][0], wall), min(best[way][1], cpu)]
                    same &= all(a is not None and b is not None and np.array_equal(a, b) for a, b in zip(ref, out))
                n = len(ids_)
                (w_in, c_in), (w_iso, c_iso) = best["in"], best["iso"]
                rows.append({"case": f"{name} on {spec.name}", "n": n, "start_s": t_start, "in_ms": 1000 * w_in / n,
                             "iso_ms": 1000 * w_iso / n, "ratio": w_iso / w_in, "cpu_ratio": c_iso / c_in,
                             "ratio_with_start": (w_iso + t_start) / w_in, "same": same, "mode": mode})
                target = "≤ 1.1" if name == "lime-exhaustive" else ""
                for what, value in (("wall", w_iso / w_in), ("CPU", c_iso / c_in)):
                    timing.record("bench_isolation", f"{name} on {spec.name}: isolated / in-process ({what})", value,
                                  target)
    finally:
        if home is None:
            os.environ.pop("XAIBENCH_HOME", None)
        else:
            os.environ["XAIBENCH_HOME"] = home
    print(f"Isolation overhead (batch {BATCH}; sandbox: {rows[0]['mode']}; text: {source}; best of {rounds} "
          "alternating runs per way)")
    print(f"{'case':32} {'n':>4} {'start s':>8} {'in-proc ms/inst':>16} {'isolated ms/inst':>17} "
          f"{'wall ratio':>10} {'CPU ratio':>9} {'with start':>10} same")
    for r in rows:
        print(f"{r['case']:32} {r['n']:>4} {r['start_s']:>8.2f} {r['in_ms']:>16.2f} {r['iso_ms']:>17.2f} "
              f"{r['ratio']:>10.2f} {r['cpu_ratio']:>9.2f} {r['ratio_with_start']:>10.2f} {r['same']}")
    print(f"load average after: {timing.load()}")
    return rows


def test_isolation_overhead():
    rows = run()
    assert all(r["same"] for r in rows)  # isolation changes no number


if __name__ == "__main__":
    run()
