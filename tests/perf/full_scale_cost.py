"""What a full-scale board costs (issue #47; the table in docs/performance.md).

For each track, one built-in submission of each family — gradient (integrated gradients; the trust track's
TOKI-grad oracle), perturbation (occlusion; TOKI-omission) and LIME (lime-image / lime-text; TOKI-lime) — is
run through `xaibench evaluate` on a sample of the resource the demo builds, with the local backend (one
sandboxed worker on the machine's cores) and with the Ray backend on 2 local workers (inside a private
network namespace: loopback only, TOOLS.md), each on the first n and the first 2n instances
(`--overwrite`). Per instance: the local explain time (the Result's `wall_time_s`, the sum of its
batches' times: no start-up, no scoring) and CPU time (the command and every process it waited for —
the plain worker, `--sandbox none`, so that its processes are counted; bubblewrap's own cost is its
start-up), each from the 2n run; the elapsed time of each whole command (start-up, explanation,
scoring), whose slope (2n run − n run) / n is each backend's per-instance rate, compared for Ray's
speed-up and efficiency (speed-up / 2 workers). Both sizes and backends run in batches of n / 8, so Ray
plans the same 8 units for n and 2n and its workers' starts stay out of the slope; the Ray runs set one
thread per task (docs/scaling.md: with the driver's default every task's worker used both cores and ran
2.4× slower per instance). One evaluation each (`--no-randomisation`): a board's randomisation test (#45)
is one more of about the same cost. Full scale = N × the per-instance explain time (plus
a start-up of seconds), N the track's instance count at its default scale (stated per row). On a
machine shared with other jobs the CPU time is the steadier figure of the work; the elapsed times,
and so Ray's speed-up, depend on the other jobs (the load average is printed before and after).

Per-instance cost depends on the model under test and the instances (image size, document lengths), not
on how many instances a resource holds, and the demo's models have the full-scale architectures (the
AIXI CNN of `xaibench train aixi`, trained here for one epoch: weights do not change the cost). Needs
the demo's resources in $XAIBENCH_HOME (a missing one is skipped with the command that builds it).

    XAIBENCH_HOME=... python tests/perf/full_scale_cost.py [--n 8] [--only aixi,idc] [--no-ray]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import timing
from benchmark.backends import THREAD_VARS

NETNS = ["unshare", "-n", "-p", "-f", "--kill-child", "--mount-proc", "sh", "-c", 'ip link set lo up && exec "$@"',
         "sh"]


@dataclass(frozen=True)
class Job:
    """One track's board at its default scale: resource, model, instance count N and how N is defined, and
    per family the submission and the instances n of the smaller run (the larger has 2n: enough that the
    difference is seconds of work)."""

    track: str
    resource: str
    model: str
    n_full: int
    n_note: str
    build: str  # the command that builds the resource
    submissions: tuple[tuple[str, str, int], ...]  # (family, submission, n)


JOBS = (
    Job("aixi", "aixi/shape-ssin", "cnn", 500, "validation images, default scale (paper scale: 2,000)",
        "xaibench generate aixi --dataset shape --functions ssin && xaibench train aixi aixi/shape-ssin",
        (("gradient", "integrated-gradients", 16), ("perturbation", "occlusion", 16), ("LIME", "lime-image", 16))),
    Job("idc", "idc/mr-wga", "cnn", 2133, "MR test documents (seeded 60/20/20 split)",
        "xaibench generate idc --pgt wga",
        (("gradient", "integrated-gradients", 300), ("perturbation", "occlusion", 300), ("LIME", "lime-text", 16))),
    Job("rcnn", "rcnn/beer-appearance", "rcnn", 999, "verified appearance reviews of the 4,000-review pool",
        "xaibench generate rcnn --aspect appearance",
        (("gradient", "integrated-gradients", 12), ("perturbation", "occlusion", 12), ("LIME", "lime-text", 8))),
    Job("robustness", "robustness/mr-cnn", "cnn", 100, "attacked MR test sentences (--samples 100)",
        "xaibench generate robustness --model cnn --explainer saliency",
        (("gradient", "integrated-gradients", 8), ("perturbation", "occlusion", 8), ("LIME", "lime-text", 8))),
    Job("trust", "trust/hatexplain-cnn-sup", "cnn-sup", 1022, "explained HateXplain test predictions",
        "xaibench generate trust --embeddings && xaibench generate trust --dataset hatexplain --model cnn-sup",
        (("gradient", "toki-grad", 50), ("perturbation", "toki-omis", 50), ("LIME", "toki-lime", 50))),
)


def built(resource: str) -> bool:
    """The resource is built in $XAIBENCH_HOME (checked by loading it)."""
    from benchmark.resources import load_resource

    try:
        load_resource(resource, hub=False)
        return True
    except Exception:  # noqa: BLE001 - not built or damaged: skipped with the build command
        return False


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished, waited-for descendants."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def evaluate(job: Job, submission: str, limit: int, ray: bool, results: Path,
             n: int) -> tuple[float, float, float, int]:
    """`xaibench evaluate` of `limit` instances: (the Result's explain time, the command's elapsed time, its
    CPU time with every process it waited for — seconds, NaN when the run failed — and the instances it ran:
    `limit`, or fewer where the resource holds fewer; robustness's `--limit` counts sentences, its Result texts,
    so the smaller of the two)."""
    argv = [sys.executable, "-m", "benchmark.cli", "evaluate", submission, "--track", job.track, "--resource",
            job.resource, "--model", job.model, "--limit", str(limit), "--overwrite", "--results", str(results),
            # batches of n / 8 on both sizes and both backends: Ray then plans 8 units (2 workers × 4) for n and for
            # 2n alike, so its workers' starts are in both runs and out of the slope
            "--batch-size", str(max(1, n // 8)),
            "--sandbox", "none",  # the plain worker: a child the command waits for, so its CPU time is counted
            "--no-randomisation"]  # one evaluation; the randomisation test (#45) is a second one of the same cost
    if ray:
        argv = [*NETNS, *argv, "--backend", "ray", "--workers", "2"]
    env = {**os.environ, "XAIBENCH_PROGRESS": "0", "RAY_USAGE_STATS_ENABLED": "0", "HF_HUB_OFFLINE": "1"}
    if ray:  # each task takes one CPU and its worker the driver's thread settings: one thread per task, as
        # docs/scaling.md advises on one machine (unset, 2 tasks × 2 threads on 2 cores ran 2.4× slower per instance)
        env.update({k: str(max(1, (os.cpu_count() or 2) // 2)) for k in THREAD_VARS})
    t, c = time.perf_counter(), children_cpu()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=7200)
    elapsed, cpu = time.perf_counter() - t, children_cpu() - c
    nan = float("nan")
    if p.returncode != 0:
        print(f"    {submission} ({'ray' if ray else 'local'}, {limit}) failed: {p.stderr.strip()[-400:]}")
        return nan, nan, nan, limit
    files = sorted(results.rglob(f"{submission}*.json"), key=lambda f: f.stat().st_mtime)
    if not files:
        return nan, elapsed, cpu, limit
    d = json.loads(files[-1].read_text())
    return float(d["wall_time_s"]), elapsed, cpu, min(limit, int(d["n_instances"]))


@dataclass(frozen=True)
class Cost:
    """Per instance: explain time and CPU time (from the 2n run) and the elapsed slope of the two runs."""

    explain: float
    cpu: float
    elapsed: float


def measure(job: Job, submission: str, ray: bool, n: int) -> Cost:
    """The cost of `submission` on `job` from runs of n and 2n instances (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        (_, e1, _, k1), (x2, e2, c2, k2) = (evaluate(job, submission, k, ray, Path(tmp) / str(k), n)
                                            for k in (n, 2 * n))
    return Cost(x2 / k2, c2 / k2, (e2 - e1) / (k2 - k1) if k2 > k1 else float("nan"))


def fmt(seconds: float) -> str:
    """Seconds as s / min / h."""
    if seconds != seconds:
        return "failed"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=0, help="instances of the smaller run (0 = each job's own)")
    ap.add_argument("--only", default="", help="comma-separated tracks")
    ap.add_argument("--family", default="", help="only this family (gradient, perturbation, LIME)")
    ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args(argv)
    only = {t for t in a.only.split(",") if t}
    print(f"full-scale cost on {timing.machine()}; load average {timing.load()}")
    print("| track (N at default scale) | family: submission | measured on | local, per instance: explain / CPU "
          "| local, full scale: explain / CPU | elapsed per instance: local / Ray 2 workers | Ray speed-up "
          "(efficiency) |")
    for job in JOBS:
        if only and job.track not in only:
            continue
        if not built(job.resource):
            print(f"| {job.track} | skipped: {job.resource} is not built (`{job.build}`) | | | | | |")
            continue
        for family, sub, n_own in job.submissions:
            if a.family and family != a.family:
                continue
            n = a.n or n_own
            local = measure(job, sub, False, n)
            row = (f"| {job.track} ({job.n_full:,} {job.n_note}) | {family}: {sub} | {n} and {2 * n} | "
                   f"{local.explain:.3f} s / {local.cpu:.3f} s | {fmt(job.n_full * local.explain)} / "
                   f"{fmt(job.n_full * local.cpu)} |")
            if a.no_ray:
                print(row + f" {local.elapsed:.3f} s / — | — |", flush=True)
                continue
            ray = measure(job, sub, True, n)
            speed = local.elapsed / ray.elapsed if ray.elapsed > 0 else float("nan")
            print(row + f" {local.elapsed:.3f} s / {ray.elapsed:.3f} s | {speed:.2f}× ({speed / 2:.2f}) |", flush=True)
    print(f"load average after: {timing.load()}")


if __name__ == "__main__":
    main()
