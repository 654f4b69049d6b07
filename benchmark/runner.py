"""The runner (DESIGN §5): evaluate one submission on one resource of a track, for one model.

Feeds instances in batches (inputs only), validates every returned array (shape, finite values),
records invalid outputs / exceptions / time-outs per instance with the reason while the run goes on,
caches every instance's output under its content key (resume; no instance computed twice), scores
against ground truth and writes a validated Result JSON (atomic write).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from benchmark import published_truth
from benchmark.backends import BACKENDS, Crashes, Job, explain_batch, run_batches
from benchmark.store.cache import Entry, OutputCache
from benchmark.submission.environments import folder_digest
from benchmark.errors import SubmissionError, XaibenchError
from benchmark.variant_runs import randomisation
from benchmark.variant_runs.hidden import copy_for_run, refuse_unconfined
from benchmark.isolation import (MODES, SCRATCH_GB, FitError, Limits, Worker, WorkerConfig, allocator,
                                 default_memory_gb, default_processes, validate_output)
from benchmark.models.variants.randomise import RANDOM_SEED, NotRandomisable, randomised_spec
from benchmark.progress import progress_bar
from benchmark.provenance import software
from benchmark.submission.requirements import check_installed, resolved_versions
from benchmark.resources import data_home, load_resource
from benchmark.store.results import Failure, MetricSummary, Result, coverage_of, outputs_digest, pack_scores
from benchmark.store.storage import storage_error
from benchmark.submission import Submission, get_submission
from benchmark.tracks import get_track

__all__ = ["RunOptions", "evaluate", "validate_output", "result_path", "display_name", "hidden_limit_of"]


@dataclass
class RunOptions:
    """The options of one evaluation (`evaluate`'s keyword arguments; the CLI's options), checked by
    `check` before anything runs."""

    model: str = "cnn"  # which model under test (track-specific: aixi has "function" and "cnn")
    split: str | None = None  # default: the track's evaluation split
    limit: int | None = None  # first N instances only (≥ 1)
    batch_size: int = 16  # instances per worker round trip / explain() call (≥ 1)
    seed: int = 0
    seeds: list[int] | None = None  # several seed runs in one Result (intervals include seed variance)
    params: dict[str, Any] = field(default_factory=dict)  # overrides of the submission's [parameters]
    overwrite: bool = False  # recompute even if cached / a result exists
    timeout_s: float = 60.0  # per-instance time limit, 0 = none (a batch gets timeout_s × its size)
    results_dir: Path | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    metric_params: dict[str, Any] = field(default_factory=dict)  # e.g. {"normalisation": "minmax"}
    sandbox: str = "auto"  # auto | bwrap | none (benchmark.isolation.sandbox)
    memory_gb: float | None = None  # the worker's address-space limit (None: `memory_default`)
    processes: int | None = None  # the worker's task limit, processes + threads (None: default_processes(); 0: none)
    scratch_gb: float = SCRATCH_GB  # bound of the submission's scratch folder (0: none)
    fit_timeout_s: float = 3600.0  # an oracle's fit, per worker start (0 = none)
    backend: str = "local"  # local | ray (benchmark.backends)
    address: str | None = None  # ray: a cluster to join (None: a private local Ray instance)
    workers: int | None = None  # ray: CPUs of the local instance / units in flight (None: all CPUs)
    # the randomisation test (`benchmark.variant_runs.randomisation`): evaluate on the model's randomised copy instead,
    # paired with this submission's Result on the trained model (which must exist)
    randomised: bool = False
    randomisation_seed: int = RANDOM_SEED
    randomisation_top: int | None = None  # the cascading variant's stage (the last k layers); None = full
    # the randomised run over the first N of the trained run's instances only (None: all of them): the
    # randomisation test's verdicts can hold on fewer instances than a board ranks (docs/leaderboard.md)
    randomisation_limit: int | None = None
    environment: Path | None = None  # a folder of the submission's own packages (benchmark.submission.environments)
    # a hidden-copy run (`benchmark.variant_runs.hidden`, issue #50): draw `hidden` (0-based) of the board's hidden
    # copies, drawn from `hidden_round` (a `benchmark.models.variants.hidden.Round`; None: this home's secret), over the
    # copy's first `hidden_limit` instances (None: the run's `limit`, so `--limit 100` bounds the copies too; both
    # None: all of them) — `hidden_limit_of`
    hidden: int | None = None
    hidden_limit: int | None = None
    hidden_round: Any = None

    def check(self) -> None:
        """Refuse bad values before anything runs or is written (one-line XaibenchError)."""
        def bad(name: str, why: str) -> None:
            raise XaibenchError(f"{name} {why}")

        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            bad("batch_size", f"must be an integer ≥ 1, got {self.batch_size!r}")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 1):
            bad("limit", f"must be an integer ≥ 1 (or None for the whole split), got {self.limit!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            bad("seed", f"must be an integer ≥ 0, got {self.seed!r}")
        if self.seeds is not None:
            if (not isinstance(self.seeds, (list, tuple)) or not self.seeds
                    or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in self.seeds)):
                bad("seeds", f"must be a non-empty list of integers ≥ 0, got {self.seeds!r}")
            if len(set(self.seeds)) != len(self.seeds):
                bad("seeds", f"must not repeat a seed, got {list(self.seeds)!r}")
        for name, value in (("timeout", self.timeout_s), ("fit_timeout", self.fit_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                bad(name, f"must be a number of seconds ≥ 0 (0 = no limit), got {value!r}")
        if self.memory_gb is not None and (not isinstance(self.memory_gb, (int, float))
                                           or not 0.25 <= self.memory_gb <= 1024):
            bad("memory_gb", f"must be between 0.25 and 1024 GiB (or None for the default), got {self.memory_gb!r}")
        if self.processes is not None and (isinstance(self.processes, bool) or not isinstance(self.processes, int)
                                           or not 0 <= self.processes <= 1 << 20):
            bad("processes", f"must be an integer ≥ 0 (0 = no limit; None = the default), got {self.processes!r}")
        if isinstance(self.scratch_gb, bool) or not isinstance(self.scratch_gb, (int, float)) \
                or not 0 <= self.scratch_gb <= 1 << 20:
            bad("scratch_gb", f"must be a number of GiB ≥ 0 (0 = no limit), got {self.scratch_gb!r}")
        if self.backend not in BACKENDS:
            bad("backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 1):
            bad("workers", f"must be an integer ≥ 1 (or None for all CPUs), got {self.workers!r}")
        if self.sandbox not in MODES:
            bad("sandbox", f"must be one of {', '.join(MODES)}, got {self.sandbox!r}")
        if isinstance(self.randomisation_seed, bool) or not isinstance(self.randomisation_seed, int) \
                or not 0 < self.randomisation_seed < 2**31:
            bad("randomisation_seed", f"must be an integer in [1, 2^31), got {self.randomisation_seed!r} (0 is the "
                "seed models are commonly initialised under)")
        if self.randomisation_limit is not None and (isinstance(self.randomisation_limit, bool)
                                                     or not isinstance(self.randomisation_limit, int)
                                                     or self.randomisation_limit < 1):
            bad("randomisation_limit", f"must be an integer ≥ 1 (or None for every instance of the trained run), got "
                f"{self.randomisation_limit!r}")
        if self.hidden is not None and (isinstance(self.hidden, bool) or not isinstance(self.hidden, int)
                                        or not 0 <= self.hidden < 1000):
            bad("hidden", f"must be a draw index in [0, 1000) (or None for the published model), got {self.hidden!r}")
        if self.hidden is not None and self.randomised:
            bad("hidden", "and randomised cannot be asked together: the randomisation test runs on the published model")
        if self.hidden_limit is not None and (isinstance(self.hidden_limit, bool)
                                              or not isinstance(self.hidden_limit, int) or self.hidden_limit < 1):
            bad("hidden_limit", f"must be an integer ≥ 1 (or None for every instance of the copy), got "
                f"{self.hidden_limit!r}")
        if self.randomisation_top is not None and (isinstance(self.randomisation_top, bool)
                                                   or not isinstance(self.randomisation_top, int)
                                                   or self.randomisation_top < 1):
            bad("randomisation_top", f"must be an integer ≥ 1 (or None for the full randomisation), got "
                f"{self.randomisation_top!r}")


def hidden_limit_of(opts: RunOptions) -> int | None:
    """How many of a hidden copy's instances a hidden-copy run evaluates (its first N; None: all of them): the
    run's `hidden_limit` when given, else its `limit` — a user who asked for the first 100 instances does not get a
    copy's 1,277 (issue #55) —, else all."""
    return opts.hidden_limit if opts.hidden_limit is not None else opts.limit


def display_name(sub: Submission, overrides: dict[str, Any]) -> str:
    """The submission's name, with non-default parameters appended: `lime-exhaustive[n_samples=1]`."""
    changed = {k: v for k, v in sorted(overrides.items()) if sub.parameters.get(k) != v}
    return sub.name + ("[" + ",".join(f"{k}={v}" for k, v in changed.items()) + "]" if changed else "")


def result_path(results_dir: Path, track: str, resource: str, model: str, name: str,
                coverage: dict | None = None, split: str | None = None, randomisation: dict | None = None,
                hidden: dict | None = None) -> Path:
    """`<results>/<track>/<family>__<config>/<model>/<name>.json` for a run over the whole evaluation split;
    a run over a subset (`--limit`) gets `<name>@<n>-<ids digest>.json`, and a run over another split (`split`
    given and not the track's evaluation split) `<name>@<split>...`, so neither ever replaces the evaluation
    split's full Result. A run on the model's randomised copy (`randomisation`: its seed and cascading stage)
    goes to the folder `<model>/randomised-s<seed>[-top<k>]/` beside the trained model's Results, a run on a hidden
    copy (`hidden`: its round and draw) to `<model>/hidden-<round>/d<k>/`."""
    safe = name.replace("/", "_").replace(" ", "")
    if split is not None and split != get_track(track).default_split:
        safe += f"@{split.replace('/', '_')}"
    if coverage is not None and not coverage.get("complete", True):
        safe += f"@{coverage['n']}-{str(coverage['ids_sha256'])[:8]}"
    folder = results_dir / track / resource.replace("/", "__") / model
    if randomisation is not None:
        top = randomisation.get("top")
        folder = folder / (f"randomised-s{randomisation['seed']}" + (f"-top{top}" if top else ""))
    if hidden is not None:
        folder = folder / f"hidden-{hidden['round']}" / f"d{int(hidden['draw'])}"
    return folder / f"{safe}.json"


def model_record(spec: Any, info: dict[str, Any], instances: Any, assets: Sequence[str]) -> dict[str, Any]:
    """What a Result records of its model under test: the track's `info`, what the board offers an explainer
    (`white_box`, `segments`: which boards a submission could have entered, `leaderboard.summaries`; `assets`: the
    names of the read-only assets the board offers, `board_assets` — with them, which built-in floors the board
    needs, `leaderboard.floors`) and, for a model that cannot be randomised, why (`unrandomisable`: the board names it
    as the reason the randomisation test was not run)."""
    out = {**info, "white_box": bool(spec.white_box), "segments": instances.segments is not None,
           "assets": sorted(set(assets))}
    why = randomisation.unrandomisable(spec)
    return {**out, "unrandomisable": why} if why else out


def board_assets(trk: Any, res: Any) -> list[str]:
    """The names of the read-only assets a board of `res` offers (`Track.assets`, every worker; the published ground
    truth where the track publishes one, `benchmark.published_truth`: to the built-in that reads it alone)."""
    return sorted(set(trk.assets(res)) | ({published_truth.ASSET} if published_truth.offered(trk) else set()))


def assets_for(sub: Submission, trk: Any, res: Any, split: str) -> dict[str, Path]:
    """The read-only assets `sub`'s worker gets on this board: the track's (`Track.assets`), and the published ground
    truth of `split` for the built-in `published-truth` alone, recognised by its code hash (`published_truth.receives`:
    no other submission is ever handed the answers)."""
    out = dict(trk.assets(res))
    if published_truth.ASSET in sub.needs_assets and published_truth.offered(trk) and published_truth.receives(sub):
        out.update(published_truth.asset(trk, res, split))
    return out


def capabilities_of(sub: Submission) -> dict[str, Any]:
    """A submission's declared capabilities as its Results record them: the boards it could enter, and
    `data_prior: true` for a control built from the data alone (the boards' data-prior floor, issue #50).
    `needs_assets` and `data_prior` appear only where declared, so the Results of every other submission
    record what they recorded before."""
    out: dict[str, Any] = {"modalities": list(sub.modalities), "needs_gradients": bool(sub.needs_gradients),
                           "needs_segments": bool(sub.needs_segments)}
    if sub.needs_assets:
        out["needs_assets"] = list(sub.needs_assets)
    if sub.data_prior:
        out["data_prior"] = True
    return out


def asset_key(sub: Submission, assets: dict[str, Path]) -> dict[str, Any]:
    """What a cache key holds of the assets `sub` declares it reads (`needs_assets`): {"assets": {name: digest
    of the folder}} — outputs computed from a lexicon since rebuilt are not served again —, or {} when it
    declares none (every other cache keeps its key)."""
    return {"assets": {n: folder_digest(assets[n]) for n in sub.needs_assets}} if sub.needs_assets else {}


def _once(load: Callable[[], Any]) -> Callable[[], Any]:
    """`load` called on first use only (the randomised model the track's scoring reads, e.g. ERASER's probes)."""
    held: list = []

    def get() -> Any:
        if not held:
            held.append(load())
        return held[0]
    return get


def cache_inputs(inputs_name: str, needed: dict[str, Any]) -> str:
    """The inputs part of a cache's name (`cache_rel`): the track's inputs name (`Track.inputs_key`, which boards of
    one model and one text set share, so their explanations are computed once), and for a submission that reads
    assets (`asset_key`) the digest of what it was handed: two boards that share inputs but hand it different assets
    (IDC's WGA, MILP and Hybrid published ground truths) get caches of their own, where one shared cache was
    refused on the second board."""
    if not needed.get("assets"):
        return inputs_name
    digest = hashlib.sha256(json.dumps(needed["assets"], sort_keys=True).encode()).hexdigest()[:8]
    return f"{inputs_name}.assets-{digest}"


def cache_rel(track: str, inputs_name: str, model: str, sub_name: str, sub_hash: str, model_hash: str,
              params: dict[str, Any], seed: int, split: str) -> str:
    """The cache file of one seed's run, relative to the data home: the submission's code, the model's
    weights, the parameters, the seed and the split name it (`_run_seed`; `leaderboard.repository` checks a
    Result's `extra.cache` against it, so a picture is only ever drawn from the harness's own cache)."""
    param_hash = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return (f"cache/{track}/{inputs_name.replace('/', '__')}/{model}/"
            f"{sub_name}-{sub_hash[:8]}-{str(model_hash)[:8]}-{param_hash}-s{seed}-{split}.sqlite")


def hidden_paths(*extra: Path | None) -> list[Path]:
    """Folders a submission must never see: the data home (resources, caches, results, keys), the
    data mirror, the Hugging Face cache, and any extra folder given (results, the resource's root)."""
    from benchmark.resources.store import mirror_root

    hf = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")).expanduser()
    out = [data_home(), hf, mirror_root(), *extra]
    return [Path(p) for p in out if p is not None]


def evaluate(submission: str | Path | Submission, track: str, resource: str, **options: Any) -> Result:
    """Evaluate `submission` on `resource` (`<family>/<config>`) of `track`; returns the Result.

    Options are the fields of `RunOptions`. The submission runs in a fresh worker process (sandboxed,
    `benchmark.isolation`) that is handed inputs only; ground truth, scoring, the cache and the
    Result stay here. The result is written to `result_path(...)`."""
    opts = RunOptions(**options)
    opts.check()
    allocator.tune()
    sub = submission if isinstance(submission, Submission) else get_submission(submission)
    trk = get_track(track)
    if sub.kind != trk.submission_kind:
        raise SubmissionError(f"{sub.name} is an {sub.kind}; the {track} track evaluates {trk.submission_kind}s")
    environment = Path(opts.environment) if opts.environment is not None else None
    check_installed(sub.name, sub.requires, environment)  # one line naming a missing requirement
    resolved = resolved_versions(sub.requires, environment) if sub.requires else None
    res = load_resource(resource)
    if res.family != trk.family:
        raise SubmissionError(f"resource {resource} belongs to family '{res.family}', not the {track} track")
    split = opts.split or trk.default_split
    instances = trk.instances(res, split, opts.limit)
    spec, model_info = trk.build_model(res, opts.model, instances, **opts.model_options)
    if spec.served is None:
        spec.load()  # the model files, checked on every run: a damaged file is named with its real path
    offered = board_assets(trk, res)
    model_info = model_record(spec, model_info, instances, offered)
    why_not_random = model_info.get("unrandomisable")
    sub.precheck()  # the modules compile, no name clashes (nothing of it runs in the harness)
    assets = assets_for(sub, trk, res, split)
    if published_truth.ASSET in sub.needs_assets and published_truth.offered(trk) \
            and published_truth.ASSET not in assets:
        raise SubmissionError(f"cannot evaluate: the '{published_truth.ASSET}' asset (the published ground truth) is "
                              f"handed to the built-in {published_truth.ASSET} alone, recognised by its code; "
                              f"{sub.name} (hash {sub.hash}) is not it")
    why_not = sub.supports(trk.modality, spec.white_box, instances.segments is not None, assets)
    if why_not:
        raise SubmissionError(f"cannot evaluate: {why_not} (model '{opts.model}'); choose another model or submission")
    sub.check_parameters(opts.params)
    params = {**sub.parameters, **opts.params}
    name = display_name(sub, opts.params)
    if opts.metric_params:  # scored differently: a different leaderboard entry
        trk.check_metric_params(opts.metric_params)
        name += "{" + ",".join(f"{k}={v}" for k, v in sorted(opts.metric_params.items())) + "}"
    results_dir = Path(opts.results_dir) if opts.results_dir else data_home() / "results"

    seeds = list(opts.seeds) if opts.seeds else [opts.seed]
    split_size = trk.split_size(res, split, instances, opts.limit)
    coverage = coverage_of(instances.ids, split_size, opts.limit)
    trained = None
    trained_ids = list(instances.ids)
    paired: dict[str, Any] = {}
    if opts.randomised:  # the randomisation test: the same run on the model's randomised copy, paired with the trained
        if why_not_random:
            raise NotRandomisable(f"randomisation test not run: {why_not_random}")
        trained = randomisation.trained_result(result_path(results_dir, track, res.name, opts.model, name, coverage,
                                                           split), sub.hash, params, coverage["ids_sha256"], seeds)
        if opts.randomisation_limit is not None and opts.randomisation_limit < len(instances):
            instances = randomisation.first_instances(trk, res, split, opts.randomisation_limit, trained_ids)
            coverage = coverage_of(instances.ids, split_size, opts.randomisation_limit)
        spec, model_info = randomised_spec(spec, model_info, opts.randomisation_seed, opts.randomisation_top)
        trk.use_model(instances, _once(spec.load))
    elif opts.hidden is not None:  # a hidden copy: its own instances and ground truth (benchmark.variant_runs.hidden)
        refuse_unconfined(opts.sandbox, opts.backend)
        # the Result on the published model this run belongs to (its row on the board: `leaderboard.companions`)
        paired = {"hidden": {"trained_result": result_path(results_dir, track, res.name, opts.model, name, coverage,
                                                           split).name}}
        spec, copy_info, instances, coverage = copy_for_run(trk, res, opts.model, split, opts.hidden,
                                                            hidden_limit_of(opts), model_info, opts.hidden_round)
        if spec.served is None:
            spec.load()
        model_info = model_record(spec, copy_info, instances, offered)
        trk.use_model(instances, _once(spec.load))
    runs = [_run_seed(sub, trk, res, split, instances, spec, model_info, params, name, results_dir, opts, seed,
                      resolved, assets) for seed in seeds]
    first = runs[0]
    failures = _failures(instances.ids, runs)
    ok = first.ok
    # failures are counted in n_failed; `excluded` counts instances where a metric is undefined
    metrics = summarise_runs(trk, [(r.scores, r.ok) for r in runs])
    if trained is not None:  # the similarity of the two runs' maps, per instance, beside the scores
        compared = randomisation.compare_runs(randomisation.result_outputs(trained, trained_ids, data_home()),
                                              [r.entries for r in runs], instances.ids, trk.modality == "image")
        for r, c in zip(runs, compared):
            r.scores.update(randomisation.similarity_arrays(c))
        paired = {"randomisation": randomisation.summary(trained, compared, opts.randomisation_seed,
                                                         opts.randomisation_top)}
    seconds = sum(e.seconds for r in runs for e in r.entries.values())
    fit_s = first.fit_s
    result = Result(
        submission={"name": name, "base": sub.name, "version": sub.version, "hash": sub.hash,
                    "parameters": params, "kind": sub.kind,
                    "capabilities": capabilities_of(sub),
                    # a track may mark a submission's row on one board (robustness: the explainer the texts
                    # were attacked through is a reference there, not ranked)
                    "role": trk.board_role(res, sub.name, sub.role)},
        track=track,
        resource={"name": res.name, "version": res.version, "revision": res.revision, "split": split},
        model=model_info,
        metrics=metrics,
        n_instances=len(instances),
        n_failed=len(failures),
        failures=failures,
        wall_time_s=float(seconds),
        provenance={**software(), "seed": seeds[0], **({"seeds": seeds} if len(seeds) > 1 else {}),
                    # the installed versions of the submission's requirements (what a re-run pins)
                    **({"requirements": resolved} if resolved is not None else {}),
                    "batch_size": opts.batch_size,
                    "device": f"cpu ({platform.machine()}, {platform.python_implementation()} "
                              f"{platform.python_version()})",
                    "isolation": {"sandbox": first.mode, "worker_starts": sum(r.starts for r in runs),
                                  "memory_gb": first.memory_gb, "processes": first.processes,
                                  "scratch_gb": opts.scratch_gb or None},
                    **({"backend": {"name": opts.backend, "address": opts.address, "workers": opts.workers}}
                       if opts.backend != "local" else {}),  # ray: worker_starts counts none of the tasks
                    "this_run_s": round(sum(r.this_run_s for r in runs), 3)},
        primary_metric=trk.primary_metric,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        coverage=coverage,
        integrity={"outputs_sha256": outputs_digest([r.entries[i] for r in runs for i in instances.ids])},
        extra={**({"metric_params": opts.metric_params} if opts.metric_params else {}),
               **({"excluded_instances": instances.excluded} if instances.excluded else {}),
               **trk.summary_extra(first.scores, ok),
               **({"fit_s": fit_s} if fit_s is not None else {}),
               "seconds_per_instance": round(seconds / max(1, len(instances) * len(runs)), 6),
               "cache": str(first.cache_path.relative_to(data_home())),
               **({"caches": [str(r.cache_path.relative_to(data_home())) for r in runs]} if len(runs) > 1 else {}),
               **paired},
        instance_scores=pack_scores([(r.seed, r.scores, r.ok) for r in runs]),
    )
    out = result_path(results_dir, track, res.name, opts.model, name, coverage, split, model_info.get("randomisation"),
                      model_info.get("hidden"))
    try:
        result.save(out)
    except OSError as exc:  # a full or unwritable results folder: say what would help
        raise storage_error(exc, out, "the result") or exc from None
    return result


@dataclass
class _SeedRun:
    """One seed's run: its cached outputs, per-instance scores and bookkeeping."""

    seed: int
    entries: dict[str, Entry]
    scores: dict[str, np.ndarray]
    ok: np.ndarray
    cache_path: Path
    fit_s: float | None
    mode: str
    starts: int
    this_run_s: float
    memory_gb: float = 0.0
    processes: int | None = None  # the process limit that held (None: not enforced)


def _run_seed(sub: Submission, trk, res, split: str, instances, spec, model_info: dict, params: dict, name: str,
              results_dir: Path, opts: RunOptions, seed: int, resolved: dict[str, str] | None = None,
              assets: dict[str, Path] | None = None) -> _SeedRun:
    """Explain (or judge) every instance under `seed` — from the cache where it holds them — and score.
    `resolved`: the versions of the submission's requirements, part of the cache's key (a cache made with
    other versions is refused, naming them: `--overwrite` recomputes); `assets`: what its worker gets
    (`assets_for`)."""
    versions = {"requirements": resolved} if resolved is not None else {}
    assets = assets_for(sub, trk, res, split) if assets is None else assets
    needed = asset_key(sub, assets)
    inputs_name, inputs_rev = trk.inputs_key(res, split)
    key = {"resource": inputs_name, "revision": inputs_rev, "split": split, "model": model_info["hash"],
           "submission": sub.hash, "parameters": params, "seed": seed, **versions, **needed}
    # the submission's code and the model's weights name the file: changed code or a retrained model
    # starts a fresh cache (the old one stays); the key inside still refuses any other mismatch
    cache_path = data_home() / cache_rel(trk.name, cache_inputs(inputs_name, needed), opts.model, sub.name, sub.hash,
                                         str(model_info["hash"]), params, seed, split)
    fit = trk.fit_context(res, role=sub.role)  # a reference may be handed more (e.g. training rationales)
    memory_gb = opts.memory_gb or memory_default(opts.backend, opts.address, opts.workers)
    config = WorkerConfig(sandbox=opts.sandbox, hidden=hidden_paths(results_dir, res.root),
                          limits=Limits(memory_bytes=int(memory_gb * (1 << 30)),
                                        cpu_seconds=_cpu_budget(opts.timeout_s, len(instances),
                                                                opts.fit_timeout_s if fit is not None else None),
                                        processes=(default_processes() if opts.processes is None
                                                   else opts.processes or None),
                                        scratch_bytes=int(opts.scratch_gb * (1 << 30)) or None),
                          assets=assets, fit_timeout_s=opts.fit_timeout_s,
                          environment=Path(opts.environment) if opts.environment is not None else None)
    worker = Worker(sub, opts.params, spec, config,  # resolves the sandbox (or refuses) before any file is made
                    fit=None if fit is None else {**fit, "seed": seed})
    cache = OutputCache(cache_path, key, overwrite=opts.overwrite)
    run_opts = opts if seed == opts.seed else replace(opts, seed=seed)
    try:
        done = cache.done()
        todo = [n for n, i in enumerate(instances.ids) if i not in done]
        t_start = time.perf_counter()
        crashes = Crashes()
        if todo and opts.backend == "local":
            try:
                refused = worker.start()
            except FitError as exc:  # the oracle cannot judge anything: every instance fails with the reason
                refused, crashes.stopped = None, f"not run: {exc}"
            if refused:
                raise SubmissionError(f"cannot evaluate: {refused} (model '{opts.model}'); choose another model "
                                      "or submission")
        label = f"{name} on {res.name}/{opts.model}" + (f" (seed {seed})" if opts.seeds else "")
        with progress_bar(len(todo), label, unit="inst") as bar:
            # the backend explains the batches (here, or as Ray tasks with their own workers); only this
            # process writes the cache, batch by batch as they come back (benchmark.backends)
            batches = [todo[start : start + opts.batch_size] for start in range(0, len(todo), opts.batch_size)]
            job = Job(sub, opts.params, spec, config, run_opts, fit=worker.fit,
                      node_memory=opts.memory_gb is None and opts.address is not None)
            def local(pos: list[int]) -> list[Entry]:
                return explain_batch(worker, instances, pos, run_opts.seed, run_opts.timeout_s, crashes)

            for pos, got in run_batches(batches, local, backend=opts.backend, address=opts.address,
                                        workers=opts.workers, instances=instances, job=job):
                cache.put(got)
                bar.advance(len(pos))
        worker.close()
        fit_s = _fit_seconds(cache_path, worker.fit_seconds, opts.overwrite) if fit is not None else None
        entries = cache.get(instances.ids)
        missing = [i for i in instances.ids if i not in entries]
        if missing:
            raise XaibenchError(f"cache {cache_path} lost {len(missing)} outputs during the run; rerun the command")
        scores = _score(trk, instances, entries, name, opts.metric_params)
    finally:
        worker.close()
        cache.close()
    ok = np.array([entries[i].ok for i in instances.ids], dtype=bool)
    return _SeedRun(seed, entries, scores, ok, cache_path, fit_s, worker.mode, worker.starts,
                    time.perf_counter() - t_start, memory_gb,
                    config.limits.processes if worker.nproc else None)


def _failures(ids: list[str], runs: list[_SeedRun]) -> list[Failure]:
    """One Failure per instance that failed under any seed (the reasons prefixed by the seed when
    there are several runs)."""
    out = []
    for i in ids:
        bad = [(r.seed, r.entries[i].reason) for r in runs if not r.entries[i].ok]
        if bad:
            reason = bad[0][1] if len(runs) == 1 else "; ".join(f"seed {s}: {why}" for s, why in bad)
            out.append(Failure(i, reason))
    return out


def summarise_runs(trk, per_seed: list[tuple[dict[str, np.ndarray], np.ndarray]]) -> dict[str, MetricSummary]:
    """The Result's metric summaries. One seed: the track's `summarise`. Several seeds: each metric's
    mean over the seeds' values; the interval a percentile bootstrap over instances and seeds together
    (`benchmark.bootstrap`, 1,000 draws, seed 0; std = the bootstrap standard error), so it holds the
    seed variance; n and excluded as the first seed's."""
    summaries = [trk.summarise(scores, ok) for scores, ok in per_seed]
    if len(per_seed) == 1:
        return summaries[0]
    from benchmark import bootstrap

    n = len(per_seed[0][1])
    weights = bootstrap.draw_weights(trk.units(per_seed[0][0], n))
    draws = bootstrap.metric_draws(trk, per_seed, weights, bootstrap.draw_seed_weights(len(per_seed)))
    out = {}
    for name, first in summaries[0].items():
        means = [s[name].mean for s in summaries]
        if any(m is None for m in means):
            out[name] = MetricSummary(None, None, None, first.n, first.excluded, first.direction, first.label)
            continue
        mean = float(np.mean(means))
        d = np.asarray(draws.get(name, []), dtype=np.float64)
        d = d[np.isfinite(d)]
        ci = bootstrap.percentile_interval(d)
        out[name] = MetricSummary(mean, float(d.std(ddof=1)) if d.size > 1 else 0.0, ci or (mean, mean), first.n,
                                  first.excluded, first.direction, first.label)
    return out


def _fit_seconds(cache_path: Path, this_run: list[float], overwrite: bool) -> float | None:
    """An oracle's fit time: this run's first fit, kept beside the cache (`<cache>.fit.json`) so a
    resumed run that needed no fit still reports it; None when no fit ever ran."""
    side = cache_path.with_name(cache_path.name + ".fit.json")
    if this_run:
        tmp = side.with_name(side.name + ".tmp")
        tmp.write_text(json.dumps({"fit_s": round(this_run[0], 3), "fits_this_run": len(this_run)}))
        os.replace(tmp, side)
        return round(this_run[0], 3)
    if overwrite or not side.is_file():
        return None
    try:
        value = json.loads(side.read_text()).get("fit_s")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def memory_default(backend: str = "local", address: str | None = None, workers: int | None = None) -> float:
    """The default address-space limit of a worker, GiB: half the machine's memory shared by the
    workers running at once on it — one for a local run, `workers` (default: every CPU) for a private
    Ray instance. On a Ray cluster each node works it out for itself (its memory, its CPUs)."""
    if backend == "ray" and address is None:
        return default_memory_gb(workers or os.cpu_count() or 1)
    return default_memory_gb(1 if backend == "local" else os.cpu_count() or 1)


def _cpu_budget(timeout_s: float, n: int, fit_s: float | None = None) -> int | None:
    """RLIMIT_CPU of a worker: a backstop behind the wall clock — the run's whole time limit (and an
    oracle's fit limit, `fit_s`; None = no fit) on every core, plus start-up (None when unlimited)."""
    if timeout_s <= 0 or fit_s == 0:
        return None
    return int((timeout_s * max(n, 1) + (fit_s or 0.0)) * (os.cpu_count() or 1) + 600)


def _score(trk, instances, entries: dict[str, Entry], name: str, metric_params: dict) -> dict[str, np.ndarray]:
    """Per-instance scores for every metric; NaN for failed instances (counted as failures)."""
    n = len(instances)
    scores: dict[str, np.ndarray] = {m.name: np.full(n, np.nan) for m in trk.metric_objects()}
    ok = [p for p, i in enumerate(instances.ids) if entries[i].ok]
    chunk = trk.score_chunk or max(1, len(ok))
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
