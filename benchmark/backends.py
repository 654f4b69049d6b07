"""Where the runner's batches are explained: here (`local`) or as Ray tasks (`ray`).

The runner (`benchmark.runner.evaluate`) hands `run_batches` the batches of instance positions still to
do; whatever the backend, it gets back each batch's `Entry` list and writes it to the cache itself —
only the driver ever writes the cache, so the cache and resume semantics are the local ones: a batch
whose entries reached the cache is never computed again, and a killed driver resumes with what is
missing.

`ray`: the batches are grouped into units — (submission × model under test) × a shard of consecutive
batches of the resource — and each unit is one Ray task. A task starts its own `Worker`
(`benchmark.isolation`: the same sandbox, limits and ground-truth boundary as a local run) for its
shard, explains the shard batch by batch exactly as the local loop does (`explain_batch`, same
batches, same seeds: the same outputs) and returns the entries; the driver writes them as tasks
finish. A task gets only its shard's inputs and output shapes, never ground truth (a served black-box
model, e.g. the AIXI function model, is harness code and goes with the task as the local worker's
proxy holds it). The task's worker gets the driver's thread settings (`THREAD_VARS`): Ray pins its
workers to one OpenMP thread, and a model's float sums depend on the thread count. On a cluster whose
nodes differ in core count, set OMP_NUM_THREADS on the driver to get the same last bits everywhere.

Ray is an optional extra (`pip install 'xaibench[ray]'`). `address=None` starts a private local Ray
instance on 127.0.0.1 without dashboard and usage statistics; `address="auto"` or `"ray://host:10001"`
/ `"host:6379"` joins an existing cluster (`ray start --head` on one machine, `ray start --address=...`
on the others; every node needs xaibench installed and the resource's model files at the same path).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol, Sequence

from benchmark.store.cache import Entry
from benchmark.contracts import Batch
from benchmark.errors import SubmissionError, XaibenchError
from benchmark.isolation import MAX_CRASHES, FitError, Worker, WorkerConfig, WorkerCrash
from benchmark.models.spec import ModelSpec
from benchmark.submission import Submission

__all__ = ["BACKENDS", "BatchOptions", "BatchSource", "Crashes", "Job", "explain_batch", "run_batches", "plan_units",
           "ray_available"]

BACKENDS = ("local", "ray")


class BatchSource(Protocol):
    """What `explain_batch` reads of the instances: a track's `Instances`, or a Ray task's shard of them."""

    ids: list[str]
    output_shapes: list[tuple[int, ...]]

    def batch(self, positions: Sequence[int], seed: int) -> Batch:
        """The inputs (never ground truth) of the instances at `positions`."""
        ...


class BatchOptions(Protocol):
    """What a Ray task reads of the run's options (`runner.RunOptions`)."""

    seed: int
    timeout_s: float


@dataclass
class Crashes:
    """Worker crashes in a row without one good instance (a circuit breaker for hopeless runs)."""

    in_a_row: int = 0
    last: str = ""
    stopped: str = ""  # a reason that ends the run (e.g. an oracle whose fit failed)


def explain_batch(worker: Worker, instances: BatchSource, positions: Sequence[int], seed: int, timeout_s: float,
                  crashes: Crashes) -> list[Entry]:
    """Entries for one batch; after a worker crash, each instance again alone in a fresh worker. After
    `MAX_CRASHES` crashes in a row (or a fatal one) every further instance fails unrun with the reason."""
    ids = [instances.ids[p] for p in positions]
    if crashes.stopped or crashes.in_a_row >= MAX_CRASHES:
        reason = crashes.stopped or (f"not run: the worker crashed {crashes.in_a_row} times in a row "
                                     f"(last: {crashes.last})")
        return [Entry(i, False, None, reason[:500], 0.0) for i in ids]
    batch = instances.batch(positions, seed)
    try:
        entries = worker.explain(batch.ids, batch.inputs, batch.segments, seed,
                                 [instances.output_shapes[p] for p in positions], timeout_s)
    except WorkerCrash as crash:
        if crash.fatal:  # e.g. a restarted oracle whose fit now fails: retrying cannot help
            crashes.stopped = f"not run: {crash.reason}"
            return [Entry(i, False, None, crashes.stopped[:500], 0.0) for i in ids]
        crashes.in_a_row += 1
        crashes.last = crash.reason
        if len(positions) == 1:
            return [Entry(ids[0], False, None, f"crashed: {crash.reason}"[:500], 0.0)]
        return [e for p in positions for e in explain_batch(worker, instances, [p], seed, timeout_s, crashes)]
    if any(e.ok for e in entries):
        crashes.in_a_row = 0
    return entries


def ray_available() -> str | None:
    """None when Ray imports, else why not (one line)."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        return f"Ray is not installed ({exc}); install it with `pip install 'xaibench[ray]'`"
    return None


def plan_units(batches: Sequence[Sequence[int]], workers: int, per_worker: int = 4) -> list[list[list[int]]]:
    """Consecutive batches grouped into about `workers × per_worker` units (at least one batch each):
    enough units to balance uneven batches, few enough that a worker start (≈1 s) is paid rarely."""
    if not batches:
        return []
    n_units = max(1, min(len(batches), workers * per_worker))
    size = math.ceil(len(batches) / n_units)
    return [[list(b) for b in batches[s : s + size]] for s in range(0, len(batches), size)]


# Thread settings a worker inherits. Ray sets OMP_NUM_THREADS=1 in its workers; a model's float sums
# depend on the thread count, so a unit's worker gets the driver's settings (what a local run uses).
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass
class Job:
    """What a unit needs besides its positions (pickled once into Ray's object store)."""

    sub: Submission
    overrides: dict[str, Any]
    spec: ModelSpec
    config: WorkerConfig
    opts: BatchOptions  # the run's options (`runner.RunOptions`): the seed and the per-instance time limit
    fit: dict[str, Any] | None = None  # an oracle's `fit` message (every unit's worker fits before judging)
    threads: dict[str, str | None] | None = None  # THREAD_VARS of the driver (None: unset there)
    node_memory: bool = False  # the default memory limit, worked out on the node that runs the task

    def __post_init__(self) -> None:
        if self.threads is None:
            self.threads = {k: os.environ.get(k) for k in THREAD_VARS}


class _Shard:
    """The `Instances` surface `explain_batch` uses, for a shard: its ids, inputs, segments, shapes."""

    def __init__(self, instances: BatchSource, positions: list[int]) -> None:
        b = instances.batch(positions, 0)
        self.ids = list(b.ids)
        self.inputs = b.inputs
        self.segments = b.segments
        self.output_shapes = [instances.output_shapes[p] for p in positions]
        self._index = {p: k for k, p in enumerate(positions)}

    def local(self, positions: Sequence[int]) -> list[int]:
        """The resource positions `positions` as positions within the shard."""
        return [self._index[p] for p in positions]

    def batch(self, positions: Sequence[int], seed: int) -> Batch:
        """The shard's inputs at `positions` (positions within the shard, see `local`)."""
        return Batch.of(self.ids, self.inputs, self.segments, positions, seed)


def _run_unit(job: Job, shard: _Shard, batches: list[list[int]]) -> list[list]:
    """A Ray task: one Worker for the shard, the local batch loop, the entries per batch."""
    for k, v in (job.threads or {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    config = job.config
    if job.node_memory:  # this node's share: its memory over its CPUs (each task takes one)
        from dataclasses import replace

        from benchmark.isolation import default_memory_gb

        memory = int(default_memory_gb(os.cpu_count() or 1) * (1 << 30))
        config = replace(config, limits=replace(config.limits, memory_bytes=memory))
    worker = Worker(job.sub, job.overrides, job.spec, config, fit=job.fit)
    try:
        crashes = Crashes()
        try:
            refused = worker.start()
        except FitError as exc:  # as the local loop: every instance of the unit fails with the reason
            refused, crashes.stopped = None, f"not run: {exc}"
        if refused:
            raise SubmissionError(f"cannot evaluate: {refused}")
        return [explain_batch(worker, shard, shard.local(b), job.opts.seed, job.opts.timeout_s, crashes)
                for b in batches]
    finally:
        worker.close()


def _ray_init(address: str | None, workers: int | None) -> bool:
    """Connect to (or start) Ray; True when this call started it (so the caller shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address:
        ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": {"RAY_USAGE_STATS_ENABLED": "0"}})
    else:
        ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1", configure_logging=False)
    return True


def run_batches(batches: list[list[int]], local: Callable[[list[int]], list], *, backend: str = "local",
                address: str | None = None, workers: int | None = None, instances: BatchSource | None = None,
                job: Job | None = None) -> Iterator[tuple[list[int], list]]:
    """Yield (positions, entries) per batch: `local(batch)` in order here, or Ray tasks as they finish
    (`ray` needs the `instances` to cut shards from and the `job` every task runs)."""
    if backend == "local":
        for b in batches:
            yield b, local(b)
        return
    if backend != "ray":
        raise XaibenchError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if not batches:
        return
    if instances is None or job is None:
        raise TypeError("run_batches(backend='ray') needs the instances and the job")
    why = ray_available()
    if why:
        raise XaibenchError(why)
    import ray

    started = _ray_init(address, workers)
    try:
        n = workers or int(ray.cluster_resources().get("CPU", 1))
        task = ray.remote(num_cpus=1, max_retries=0)(_run_unit)
        job_ref = ray.put(job)
        pending = {}
        for unit in plan_units(batches, n):
            positions = [p for b in unit for p in b]
            ref = task.remote(job_ref, _Shard(instances, positions), unit)
            pending[ref] = unit
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                unit = pending.pop(ref)
                try:
                    results = ray.get(ref)
                except ray.exceptions.RayError as exc:  # a task raised, or its process / node died
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, XaibenchError):
                        raise cause from None
                    first = " ".join(str(exc).split())[:400]
                    raise XaibenchError(f"a Ray task failed ({type(exc).__name__}: {first}); the units "
                                        "already in the cache are kept: rerun the command to resume") from None
                for b, entries in zip(unit, results):
                    yield b, entries
    finally:
        if started:
            ray.shutdown()
