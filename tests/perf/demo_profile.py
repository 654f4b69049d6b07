"""Where a demo track's CPU goes (issue #55): each step's CPU seconds, and inside every `evaluate` step each
submission's runs — on the published model, the randomisation test's randomised copy, each hidden copy — with the
copy builds and the scoring apart.

Runs one track of `generators.demo.PLAN` (or of `--plan FILE`, a JSON list of steps as `_track_json` writes them) in
this process, as `xaibench demo`'s lane does (one torch / BLAS thread), wrapping `benchmark.runner.evaluate`,
`benchmark.runner.copy_for_run` and `benchmark.runner._score` to read `resource.getrusage` before and after: CPU
seconds = user + system of this process and of the waited-for children (the sandboxed workers, which are waited for
when each run closes them). A loaded machine moves wall time, hardly CPU time: compare CPU seconds.

    XAIBENCH_HOME=... XAIBENCH_DATA_MIRROR=... python tests/perf/demo_profile.py aixi [--json out.json]

Prints one table per track: step, submission, kind, instances, CPU s (worker, harness), wall s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):  # as `generators.demo.lane_env`
    os.environ[_v] = "1"
os.environ.setdefault("XAIBENCH_PROGRESS", "0")


class Descendants(threading.Thread):
    """The CPU seconds of every process below this one, sampled from /proc every `every` s. `getrusage(RUSAGE_CHILDREN)`
    misses the sandboxed workers: bubblewrap's process in the worker's pid namespace is not reaped into ours. Each
    process (pid, start time) counts its last sampled user + system time, so a process loses at most its last `every`
    seconds (a worker lives for a whole run; on unsandboxed workers, which getrusage does see, the two agreed within
    0.03 s a worker: lime-image 4.26 / 4.28 s, occlusion 2.25 / 2.28, uniform 1.33 / 1.35, 2026-11-29)."""

    def __init__(self, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.every = every
        self.seen: dict[tuple[int, str], float] = {}
        self.own = 0.0  # this thread's CPU seconds (subtracted from the harness's)
        self.lock = threading.Lock()
        self.tick = os.sysconf("SC_CLK_TCK")

    def _children(self, pid: int) -> list[int]:
        out = []
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    out += [int(x) for x in f.read().split()]
        except OSError:
            pass
        return out

    def sample(self) -> None:
        todo, got = self._children(os.getpid()), {}
        while todo:
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            got[(pid, fields[19])] = (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime; starttime
            todo += self._children(pid)
        with self.lock:
            self.seen.update(got)

    def run(self) -> None:
        while True:
            t = time.thread_time()
            self.sample()
            self.own += time.thread_time() - t
            time.sleep(self.every)

    def total(self) -> float:
        self.sample()
        with self.lock:
            return sum(self.seen.values())


SAMPLER = Descendants()


def cpu() -> tuple[float, float]:
    """(this process's CPU seconds, less the sampler's; every descendant's, sampled) so far."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime - SAMPLER.own, SAMPLER.total()


class Meter:
    """Records every wrapped call: (label, own CPU s, children's CPU s, wall s, extra)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.step = ""
        self._depth: list[list[float]] = []  # inner calls' CPU, subtracted from the enclosing evaluate's

    def wrap(self, module, name: str, label) -> None:
        real = getattr(module, name)

        def timed(*args, **kwargs):
            s0, c0 = cpu()
            t0 = time.perf_counter()
            self._depth.append([0.0, 0.0])
            try:
                return real(*args, **kwargs)
            finally:
                inner = self._depth.pop()
                s1, c1 = cpu()
                own, kids = s1 - s0, c1 - c0
                row = {"step": self.step, **label(args, kwargs), "self_s": own - inner[0],
                       "children_s": kids - inner[1], "wall_s": time.perf_counter() - t0}
                self.rows.append(row)
                if self._depth:
                    self._depth[-1][0] += own
                    self._depth[-1][1] += kids
        setattr(module, name, timed)


def _kind(kw: dict) -> str:
    if kw.get("randomised"):
        return "randomised"
    if kw.get("hidden") is not None:
        return f"hidden {kw['hidden']}"
    return "published"


def _sub_name(args, kw) -> str:
    sub = args[0] if args else kw.get("submission")
    return str(getattr(sub, "name", sub))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("track")
    ap.add_argument("--plan", type=Path, help="a JSON track (generators.demo._track_json) instead of PLAN's")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--skip-built", action="store_true", help="skip a step whose resource is built (as the demo)")
    a = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    import benchmark.runner as runner
    from benchmark.cli import _run, load_plugins
    from generators import demo

    load_plugins()
    SAMPLER.start()
    track = demo._track_from_json(a.plan.read_text()) if a.plan else next(t for t in demo.PLAN if t.name == a.track)
    m = Meter()
    m.wrap(runner, "evaluate", lambda args, kw: {"what": "evaluate", "submission": _sub_name(args, kw),
                                                  "kind": _kind(kw)})
    m.wrap(runner, "copy_for_run", lambda args, kw: {"what": "copy", "submission": "", "kind": f"hidden {args[4]}"})
    m.wrap(runner, "_score", lambda args, kw: {"what": "score", "submission": args[3], "kind": ""})
    steps = []
    for step in track.steps:
        if a.skip_built and step.skip_if and demo._built(step.skip_if):
            print(f"skipped (built): {step.text}", flush=True)
            continue
        m.step = step.argv[0] + (" " + step.argv[1] if step.argv[0] in ("generate", "evaluate") else "")
        s0, c0 = cpu()
        t0 = time.perf_counter()
        print(f"$ {step.text}", flush=True)
        _run(list(step.argv))
        s1, c1 = cpu()
        steps.append({"step": step.text, "cpu_s": s1 - s0 + c1 - c0, "wall_s": time.perf_counter() - t0})
        print(f"  {steps[-1]['cpu_s']:.1f} CPU s, {steps[-1]['wall_s']:.1f} wall s", flush=True)
    report(track.name, steps, m.rows)
    if a.json:
        a.json.write_text(json.dumps({"track": track.name, "steps": steps, "calls": m.rows}, indent=1))
    return 0


def report(name: str, steps: list[dict], rows: list[dict]) -> None:
    """The steps' CPU seconds, then per (submission, kind) the evaluate calls' CPU (worker / harness), the copy builds
    and the scoring apart."""
    print(f"\n== {name}: steps (CPU s = user + system, this process and its workers)")
    for s in steps:
        print(f"{s['cpu_s']:8.1f} {s['wall_s']:8.1f}  {s['step']}")
    print(f"{sum(s['cpu_s'] for s in steps):8.1f} {sum(s['wall_s'] for s in steps):8.1f}  total")
    by: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        key = (r["submission"], r["kind"] if r["what"] == "evaluate" else r["what"])
        by[key]["worker"] += r["children_s"]
        by[key]["harness"] += r["self_s"]
        by[key]["n"] += 1
    print(f"\n== {name}: per submission and run (CPU s; an evaluate's own excludes its copy build and scoring)")
    print(f"{'submission':28s} {'run':12s} {'worker':>8s} {'harness':>8s}")
    for (sub, kind), v in sorted(by.items()):
        print(f"{sub[:28]:28s} {kind:12s} {v['worker']:8.1f} {v['harness']:8.1f}")
    tot: dict[str, float] = defaultdict(float)
    for (_, kind), v in by.items():
        k = kind.split()[0]
        tot[k] += v["worker"] + v["harness"]
    print("\n== by kind: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(tot.items())))


if __name__ == "__main__":
    sys.exit(main())
