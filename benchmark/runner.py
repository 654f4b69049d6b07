"""The runner (DESIGN §5): evaluate one submission on one resource of a track, for one model.

Feeds instances in batches (inputs only), validates every returned array (shape, finite values),
records invalid outputs / exceptions / time-outs per instance with the reason while the run goes on,
caches every instance's output under its content key (resume; no instance computed twice), scores
against ground truth and writes a validated Result JSON (atomic write).
"""

from __future__ import annotations

import hashlib
import json
import platform
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark import allocator
from benchmark.cache import Entry, OutputCache
from benchmark.errors import SubmissionError
from benchmark.progress import progress_bar
from benchmark.provenance import software
from benchmark.resources import data_home, load_resource
from benchmark.results import Failure, Result
from benchmark.submission import Submission, get_submission
from benchmark.tracks import get_track


@dataclass
class RunOptions:
    model: str = "cnn"  # which model under test (track-specific: aixi has "function" and "cnn")
    split: str | None = None  # default: the track's evaluation split
    limit: int | None = None  # first N instances only
    batch_size: int = 16
    seed: int = 0
    params: dict[str, Any] = field(default_factory=dict)  # overrides of the submission's [parameters]
    overwrite: bool = False  # recompute even if cached / a result exists
    timeout_s: float = 60.0  # per-instance time limit (a batch gets timeout_s × its size)
    results_dir: Path | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    metric_params: dict[str, Any] = field(default_factory=dict)  # e.g. {"attribution": "absolute"}


class _Timeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    """Raise `_Timeout` in the main thread after `seconds` (SIGALRM); no limit in other threads."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def validate_output(out: Any, shape: tuple[int, ...]) -> tuple[np.ndarray | None, str]:
    """(array, "") if `out` is a finite array of `shape`, else (None, reason)."""
    try:
        arr = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        return None, f"output is not a numeric array ({exc})"
    if arr.shape != tuple(shape):
        return None, f"output shape {arr.shape} != expected {tuple(shape)}"
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        return None, f"output has {bad} non-finite values (NaN/inf)"
    return arr, ""


def explain_batch(explainer: Any, model: Any, instances, positions: Sequence[int], seed: int,
                  timeout_s: float) -> list[Entry]:
    """Explain one batch; on an exception, retry instance by instance to isolate the bad ones."""
    batch = instances.batch(positions, seed)
    t0 = time.perf_counter()
    try:
        with time_limit(timeout_s * len(batch)):
            model.focus(batch.ids)
            outputs = explainer.explain(model, batch)
    except _Timeout:
        reason = f"timed out (limit {timeout_s:g}s per instance; raise --timeout or fix the explainer)"
        return [Entry(i, False, None, reason, timeout_s) for i in batch.ids]
    except Exception as exc:  # a broken submission must not stop the run
        if len(positions) > 1:
            return [e for p in positions for e in explain_batch(explainer, model, instances, [p], seed, timeout_s)]
        return [Entry(batch.ids[0], False, None, f"raised {type(exc).__name__}: {exc}"[:500],
                      time.perf_counter() - t0)]
    per = (time.perf_counter() - t0) / len(batch)
    try:
        outputs = list(outputs)
    except TypeError:
        outputs = []
    if len(outputs) != len(batch):
        reason = f"returned {len(outputs)} outputs for a batch of {len(batch)}"
        return [Entry(i, False, None, reason, per) for i in batch.ids]
    entries = []
    for p, i, out in zip(positions, batch.ids, outputs):
        arr, reason = validate_output(out, instances.output_shapes[p])
        entries.append(Entry(i, arr is not None, arr, reason, per))
    return entries


def display_name(sub: Submission, overrides: dict[str, Any]) -> str:
    """The submission's name, with non-default parameters appended: `lime-exhaustive[n_samples=1]`."""
    changed = {k: v for k, v in sorted(overrides.items()) if sub.parameters.get(k) != v}
    return sub.name + ("[" + ",".join(f"{k}={v}" for k, v in changed.items()) + "]" if changed else "")


def result_path(results_dir: Path, track: str, resource: str, model: str, name: str) -> Path:
    safe = name.replace("/", "_").replace(" ", "")
    return results_dir / track / resource.replace("/", "__") / model / f"{safe}.json"


def evaluate(submission: str | Path | Submission, track: str, resource: str, **options: Any) -> Result:
    """Evaluate `submission` on `resource` (`<family>/<config>`) of `track`; returns the Result.

    Options are the fields of `RunOptions`. The result is written to
    `<results_dir>/<track>/<family>__<config>/<model>/<submission>.json`."""
    opts = RunOptions(**options)
    allocator.tune()
    sub = submission if isinstance(submission, Submission) else get_submission(submission)
    trk = get_track(track)
    if sub.kind != "explainer":
        raise SubmissionError(f"{sub.name} is an {sub.kind}; the {track} track evaluates explainers")
    res = load_resource(resource)
    if res.family != trk.family:
        raise SubmissionError(f"resource {resource} belongs to family '{res.family}', not the {track} track")
    split = opts.split or trk.default_split
    instances = trk.instances(res, split, opts.limit)
    model, model_info = trk.build_model(res, opts.model, instances, **opts.model_options)
    why_not = sub.supports(trk.modality, model.white_box, instances.segments is not None)
    explainer = None if why_not else sub.instantiate(opts.params)
    unsupported = getattr(explainer, "unsupported", None)  # an explainer may refuse a model it cannot use
    why_not = why_not or (unsupported(model) if callable(unsupported) else None)
    if why_not:
        raise SubmissionError(f"cannot evaluate: {why_not} (model '{opts.model}'); choose another model or submission")
    params = {**sub.parameters, **opts.params}
    name = display_name(sub, opts.params)
    if opts.metric_params:  # scored differently: a different leaderboard entry
        name += "{" + ",".join(f"{k}={v}" for k, v in sorted(opts.metric_params.items())) + "}"
    results_dir = Path(opts.results_dir) if opts.results_dir else data_home() / "results"

    param_hash = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]
    inputs_name, inputs_rev = trk.inputs_key(res, split)
    key = {"resource": inputs_name, "revision": inputs_rev, "split": split, "model": model_info["hash"],
           "submission": sub.hash, "parameters": params, "seed": opts.seed}
    cache_path = (data_home() / "cache" / track / inputs_name.replace("/", "__") / opts.model /
                  f"{sub.name}-{param_hash}-s{opts.seed}-{split}.sqlite")
    cache = OutputCache(cache_path, key, overwrite=opts.overwrite)
    try:
        done = cache.done()
        todo = [n for n, i in enumerate(instances.ids) if i not in done]
        t_start = time.perf_counter()
        with progress_bar(len(todo), f"{name} on {res.name}/{opts.model}", unit="inst") as bar:
            for start in range(0, len(todo), opts.batch_size):
                pos = todo[start : start + opts.batch_size]
                cache.put(explain_batch(explainer, model, instances, pos, opts.seed, opts.timeout_s))
                bar.advance(len(pos))
        entries = cache.get(instances.ids)
        scores = _score(trk, instances, entries, name, opts.metric_params)
    finally:
        cache.close()

    failures = [Failure(i, entries[i].reason) for i in instances.ids if not entries[i].ok]
    ok = np.array([entries[i].ok for i in instances.ids], dtype=bool)
    # failures are counted in n_failed; `excluded` counts instances where a metric is undefined
    metrics = trk.summarise(scores, ok)
    result = Result(
        submission={"name": name, "base": sub.name, "version": sub.version, "hash": sub.hash,
                    "parameters": params, "kind": sub.kind},
        track=track,
        resource={"name": res.name, "version": res.version, "revision": res.revision, "split": split},
        model=model_info,
        metrics=metrics,
        n_instances=len(instances),
        n_failed=len(failures),
        failures=failures,
        wall_time_s=float(sum(e.seconds for e in entries.values())),
        provenance={**software(), "seed": opts.seed, "batch_size": opts.batch_size,
                    "device": f"cpu ({platform.machine()}, {platform.python_implementation()} "
                              f"{platform.python_version()})",
                    "this_run_s": round(time.perf_counter() - t_start, 3)},
        primary_metric=trk.primary_metric,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        extra={**({"metric_params": opts.metric_params} if opts.metric_params else {}),
               **({"excluded_instances": instances.excluded} if instances.excluded else {})},
    )
    result.save(result_path(results_dir, track, res.name, opts.model, name))
    return result


def _score(trk, instances, entries: dict[str, Entry], name: str, metric_params: dict) -> dict[str, np.ndarray]:
    """Per-instance scores for every metric; NaN for failed instances (counted as failures)."""
    n = len(instances)
    scores: dict[str, np.ndarray] = {m.name: np.full(n, np.nan) for m in trk.metric_objects()}
    ok = [p for p, i in enumerate(instances.ids) if entries[i].ok]
    chunk = 250
    with progress_bar(len(ok), f"scoring {name}", unit="inst") as bar:
        for s in range(0, len(ok), chunk):
            pos = ok[s : s + chunk]
            part = trk.score([entries[instances.ids[p]].array for p in pos], instances.truths, pos, **metric_params)
            for k, v in part.items():
                v = np.asarray(v, dtype=np.float64)
                if k not in scores:  # extra per-instance values (e.g. counts of a pooled metric)
                    scores[k] = np.full((n,) + v.shape[1:], np.nan)
                scores[k][pos] = v
            bar.advance(len(pos))
    return scores
