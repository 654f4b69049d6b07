"""What a Result in a results repository must say — every field either recomputed here, compared with the
track, the resource and the rebuilt submission, left to `verify`'s re-run, or bound by the verification
record (docs/submitting.md, "What is checked"). A field this module does not know is refused, not ignored.

`check_result(data, rp, sub, context)` (pure over the parsed file; `validate` calls it):

* `schema_version`: 3 (per-instance scores are what boards resample);
* `submission`: exactly {name, base, version, hash, parameters, kind, role, capabilities}; name = base = the
  path's name (default parameters), version and kind the rebuilt submission's, hash the path's code hash,
  parameters the rebuilt submission's defaults, role `track.board_role(...)` of its `submission.toml` role,
  capabilities its declared ones (`runner.capabilities_of`: which boards it could enter);
* `track`, `resource`: the path's track and resource; `version` the resource's; `split` the track's
  evaluation split (so one path never holds two splits);
* `model`: equal to what the runner records of what the track builds for that resource and model
  (`track.build_model`, `runner.model_record`): quality floors, notes, white_box / segments and why a model
  cannot be randomised come from the harness;
* `primary_metric`: the track's;
* `coverage`, `n_instances`: `coverage_of` the evaluation split's instance ids, the complete split;
* `instance_scores`: decodes over n instances; its seeds are the provenance's;
* `metrics`: every summary field (mean, std, ci95, n, excluded, direction, label) equal to `summarise_runs`
  of the per-instance scores (relative 1e-9), the same metric names;
* `n_failed`, `failures`: the instances that failed under any seed, in order, each with a reason;
* `extra`: the track's `summary_extra` of the first seed's scores, recomputed and equal (so a gate or floor
  can only be the track's); `excluded_instances` the track's; `cache` / `caches` the harness's own cache names
  (`runner.cache_rel`); `fit_s`, `seconds_per_instance` timings ≥ 0; nothing else;
* `provenance`: known keys only (in `isolation` and `backend` too); seed(s) ints, batch size 1–4096 (the re-run
  uses them and compares them); `requirements` exactly when the submission declares `requires` (the re-run
  compares it with what it resolved: no `requires`, no requirements); the machine's description typed and
  bounded (no board or record shows it);
* `created`: an ISO 8601 time with a zone, not in the future;
* `wall_time_s`: finite, ≥ 0 — a timing: a verified row shows the re-run's (from the signed record);
* `integrity`: `outputs_sha256` (compared by the re-run); the machine-local `key_id` / `signature` are read by
  no board.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from typing import Any

from benchmark.errors import XaibenchError

__all__ = ["FIELDS", "check_result", "canonical_json"]

REL_TOL = 1e-9

# every key a Result (schema 3) may have, per object; `None`: the object's keys are checked elsewhere
FIELDS: dict[str, set[str]] = {
    "": {"schema_version", "submission", "track", "resource", "model", "metrics", "n_instances", "n_failed",
         "failures", "wall_time_s", "provenance", "primary_metric", "created", "extra", "coverage", "integrity",
         "instance_scores"},
    "submission": {"name", "base", "version", "hash", "parameters", "kind", "role", "capabilities"},
    "resource": {"name", "version", "revision", "split"},
    "coverage": {"n", "ids_sha256", "limit", "complete", "split_size"},
    "integrity": {"outputs_sha256", "key_id", "signature"},
    "instance_scores": {"encoding", "seeds", "ok", "arrays"},
    "provenance": {"xaibench", "git", "libraries", "seed", "seeds", "batch_size", "device", "isolation", "backend",
                   "this_run_s", "requirements"},
    "provenance.isolation": {"sandbox", "worker_starts", "memory_gb", "processes", "scratch_gb"},
    "provenance.backend": {"name", "address", "workers"},
    "metric": {"mean", "std", "ci95", "n", "excluded", "direction", "label"},
    "failure": {"instance", "reason"},
    "packed": {"shape", "data"},
}
TIMING_EXTRA = ("fit_s", "seconds_per_instance")
HARNESS_EXTRA = ("excluded_instances", "cache", "caches", *TIMING_EXTRA)
MAX_REASON = 2000


def canonical_json(value: Any) -> str:
    """`value` as sorted compact JSON (NaN kept as NaN): equal strings, equal JSON values."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _unknown(data: dict[str, Any]) -> list[str]:
    """'field X is not one a Result has' for every key no Result writes."""
    out: list[str] = []

    def over(obj: Any, kind: str, where: str) -> None:
        if isinstance(obj, dict):
            out.extend(f"{where}{k}" for k in sorted(set(obj) - FIELDS[kind]))

    over(data, "", "")
    for kind in ("submission", "resource", "coverage", "integrity", "instance_scores", "provenance"):
        over(data.get(kind), kind, f"{kind}.")
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        for kind in ("isolation", "backend"):
            over(provenance.get(kind), f"provenance.{kind}", f"provenance.{kind}.")
    for name, m in (data.get("metrics") or {}).items() if isinstance(data.get("metrics"), dict) else []:
        over(m, "metric", f"metrics.{name}.")
    for k, f in enumerate(data.get("failures") or []) if isinstance(data.get("failures"), list) else []:
        over(f, "failure", f"failures[{k}].")
    scores = data.get("instance_scores")
    if isinstance(scores, dict):
        over(scores.get("ok"), "packed", "instance_scores.ok.")
        for name, a in (scores.get("arrays") or {}).items() if isinstance(scores.get("arrays"), dict) else []:
            over(a, "packed", f"instance_scores.arrays.{name}.")
    return [f"field '{f}' is not one a Result has; remove it" for f in out]


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return bool(a == b)


def metric_differences(said: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """Per metric and field, where the summaries `said` (a Result's `metrics`, parsed) differ from `again`
    ({name: MetricSummary}); floats to relative 1e-9."""
    from dataclasses import asdict

    out = []
    for name in sorted(set(said) | set(again)):
        if name not in said or name not in again:
            out.append(f"metric {name} is {'missing' if name not in said else 'not one the track scores'}")
            continue
        a, b = said[name], asdict(again[name])
        b["ci95"] = list(b["ci95"]) if b["ci95"] is not None else None
        for key in sorted(FIELDS["metric"]):
            if not _close(a.get(key), b.get(key)):
                out.append(f"metric {name}.{key} says {a.get(key)}, its per-instance scores give "
                           f"{b.get(key)}")
    return out


def _is_num(x: Any, low: float = 0.0) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= low


def _created_ok(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return t.tzinfo is not None and t <= datetime.now(timezone.utc) + timedelta(minutes=5)


def _provenance(p: dict[str, Any], sub: Any) -> list[str]:
    """The provenance's rules: seeds and batch size the re-run can use; `requirements` exactly when the rebuilt
    submission declares `requires` (the versions they resolved to, which the re-run pins and compares), the
    machine's description (`xaibench`, `git`, `libraries`, `device`, `isolation`, `backend`, `this_run_s`) of
    the right shapes — no board or record shows it (a record shows the re-run's own)."""
    out = []
    seeds = p.get("seeds", [p.get("seed")])
    if not (isinstance(seeds, list) and seeds and all(isinstance(s, int) and not isinstance(s, bool)
                                                      and 0 <= s < 2 ** 32 for s in seeds)
            and seeds[0] == p.get("seed") and len(set(seeds)) == len(seeds)):
        out.append("provenance.seed / seeds must be distinct ints in [0, 2^32), seed the first of seeds")
    b = p.get("batch_size")
    if not (isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= 4096):
        out.append("provenance.batch_size must be an int from 1 to 4096")
    requires = getattr(sub, "requires", None) if sub is not None else None
    if "requirements" in p and sub is not None and not requires:
        out.append("provenance.requirements is recorded, and the submission declares no requires: a Result records "
                   "the versions of its declared requirements only; remove it")
    elif "requirements" in p:  # the versions a submission's requirements resolved to (what the re-run pins)
        from benchmark.submission.requirements import parse_pins

        try:
            parse_pins(p["requirements"])
        except ValueError as exc:
            out.append(f"provenance.requirements {exc}")
    elif requires:
        out.append("provenance.requirements is missing: the submission declares requires, and the re-run pins the "
                   "versions its Result recorded; evaluate it again with this xaibench")
    for key in ("xaibench", "git", "device"):
        if key in p and not (isinstance(p[key], str) and len(p[key]) <= 200):
            out.append(f"provenance.{key} must be a string of at most 200 characters")
    libs = p.get("libraries", {})
    if not (isinstance(libs, dict) and len(libs) <= 64
            and all(isinstance(k, str) and isinstance(v, str) and len(k) + len(v) <= 200 for k, v in libs.items())):
        out.append("provenance.libraries must map at most 64 library names to version strings")
    for key in ("isolation", "backend"):
        if key in p and not isinstance(p[key], dict):
            out.append(f"provenance.{key} must be an object")
    if "this_run_s" in p and not _is_num(p["this_run_s"]):
        out.append("provenance.this_run_s must be a finite number ≥ 0")
    return out


def seeds_of(provenance: dict[str, Any]) -> list[int]:
    """The seeds a Result was run under (`provenance.seeds`, else `[provenance.seed]`)."""
    seeds = provenance.get("seeds") or [provenance.get("seed", 0)]
    return [int(s) for s in seeds]


def check_result(data: Any, rp: Any, sub: Any, context: Any) -> list[str]:
    """The rules of the module docstring for the parsed Result file `data` at `rp` (a `layout.ResultPath`),
    `sub` the submission rebuilt from `source/` (None when it could not be: then only the file's own rules).
    One line per finding, each starting with the path."""
    from benchmark.store.results import SCHEMA_VERSION, Result

    rel = rp.rel
    if not isinstance(data, dict):
        return [f"{rel}: not a Result (a JSON object)"]
    bad = _unknown(data)
    if bad:
        return [f"{rel}: {b}" for b in bad]
    if data.get("schema_version") != SCHEMA_VERSION:
        return [f"{rel}: schema_version must be {SCHEMA_VERSION} (per-instance scores); re-run `xaibench evaluate`"]
    try:
        r = Result.from_dict(data)
    except (XaibenchError, ValueError, TypeError, AttributeError) as exc:
        return [f"{rel}: not a Result ({' '.join(str(exc).split())[:200]})"]
    s = r.submission
    said = (str(s.get("base") or s["name"]), str(s["hash"]), r.track, str(r.resource["name"]),
            str(r.resource["revision"]), str(r.model["name"]))
    if said != (rp.submission, rp.code_hash, rp.track, rp.resource, rp.revision, rp.model):
        return [f"{rel}: its path does not match its content"]
    from leaderboard.companions import kind_of

    kind = kind_of(r)
    if kind is not None:
        return [f"{rel}: a {kind} run, not a Result on the published model; a results repository carries such runs "
                "only inside a maintainer's signed records (`xaibench results verify`): send the published model's"]
    if s["name"] != rp.submission or s.get("base") != rp.submission:
        return [f"{rel}: it was run with non-default parameters or metric options ({s['name']}); send "
                "default-parameter Results"]
    return [f"{rel}: {line}" for line in _against_track(r, data, sub, context)]


def _against_track(r: Any, data: dict[str, Any], sub: Any, context: Any) -> list[str]:
    """The rules that need the track, the resource and the rebuilt submission."""
    from benchmark.store.results import coverage_of
    from benchmark.runner import board_assets, summarise_runs
    from benchmark.tracks import get_track

    res = context.resource(str(r.resource["name"]), str(r.resource["revision"]))
    if res is None:
        return [f"resource {r.resource['name']} at revision {r.resource['revision']} is not one xaibench knows"]
    try:
        trk = get_track(r.track)
    except XaibenchError:
        return [f"track '{r.track}' is not one xaibench knows"]
    out: list[str] = []
    split = trk.default_split
    if r.resource.get("split") != split:
        return [f"resource.split is {r.resource.get('split')!r}; a results repository holds the {r.track} track's "
                f"evaluation split ({split}) only"]
    if r.resource.get("version") != res.version:
        out.append(f"resource.version says {r.resource.get('version')!r}, the resource is {res.version!r}")
    if sub is not None:
        from benchmark.runner import capabilities_of

        expected = {"name": sub.name, "base": sub.name, "version": sub.version, "hash": sub.hash,
                    "parameters": sub.parameters, "kind": sub.kind,
                    "role": trk.board_role(res, sub.name, sub.role), "capabilities": capabilities_of(sub)}
        for key, value in expected.items():
            if canonical_json(r.submission.get(key)) != canonical_json(value):
                out.append(f"submission.{key} says {r.submission.get(key)!r}; the submission rebuilt from source/ "
                           f"gives {value!r}")
    if r.primary_metric != trk.primary_metric:
        out.append(f"primary_metric says {r.primary_metric!r}, the track's is {trk.primary_metric!r}")
    instances = context.instances(trk, res, split)
    if canonical_json(r.coverage) != canonical_json(coverage_of(instances.ids, len(instances.ids), None)):
        return out + [f"coverage is not the complete {split} split ({r.coverage.get('n')} of {len(instances.ids)} "
                      "instances, or another set); run `xaibench evaluate` without --limit"]
    model = context.model_info(trk, res, str(r.model["name"]), instances)
    if model is None:
        out.append(f"model '{r.model['name']}' is not one the {r.track} track builds for {res.name}")
    elif canonical_json(r.model) != canonical_json(model):
        out.append(f"model says {canonical_json(r.model)[:120]}; the harness builds {canonical_json(model)[:120]}")
    elif sub is not None:  # what the runner refuses before running: the re-run could never make this Result
        why = _cannot_enter(sub, trk.modality, bool(model.get("white_box")), bool(model.get("segments")),
                            board_assets(trk, res))
        if why:
            out.append(f"the submission cannot run on this board ({why}); the re-run would refuse it")
    out += _provenance(r.provenance, sub)
    if not _created_ok(r.created):
        out.append(f"created is {r.created!r}: not an ISO 8601 time with a zone, or in the future")
    if not _is_num(r.wall_time_s):
        out.append("wall_time_s must be a finite number ≥ 0")
    try:
        scores = r.scores()
    except XaibenchError as exc:
        return out + [str(exc)]
    if scores is None:
        return out + ["no per-instance scores (written by an older xaibench); re-run `xaibench evaluate`"]
    if scores.seeds != seeds_of(r.provenance):
        out.append(f"instance_scores.seeds {scores.seeds} are not the provenance's seeds {seeds_of(r.provenance)}")
    runs = [scores.seed(k) for k in range(len(scores.seeds))]
    try:
        again = summarise_runs(trk, runs)
        summary_extra = trk.summary_extra(*runs[0])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return out + [f"its per-instance scores are not the track's ({type(exc).__name__}: {exc})"]
    out += metric_differences(data.get("metrics") or {}, again)
    failed = [i for i, bad in zip(instances.ids, ~scores.ok.all(axis=0)) if bad]
    if [f.instance for f in r.failures] != failed:
        out.append(f"failures name {len(r.failures)} instance(s); its per-instance scores say {len(failed)} failed")
    if any(not isinstance(f.reason, str) or not f.reason.strip() or len(f.reason) > MAX_REASON for f in r.failures):
        out.append(f"every failure needs a reason (a string of 1 to {MAX_REASON} characters)")
    out += _extra(r, trk, res, instances, summary_extra, sub)
    return out


def _cannot_enter(sub: Any, modality: str, white_box: bool, segments: bool, assets: Any = ()) -> str | None:
    """Why the rebuilt submission cannot run on a board of `modality` that offers `assets` (`runner.board_assets`:
    the track's, e.g. the lexicon the data priors read, and the published ground truth where the track publishes
    one) — `Submission.supports`, as the runner asks it — or None. The published ground truth goes to the built-in
    `published-truth` alone, recognised by its code (`published_truth.receives`): any other submission that asks for
    it is refused, as the runner refuses it."""
    from benchmark import published_truth
    from benchmark.submission import Submission

    if published_truth.ASSET in (getattr(sub, "needs_assets", None) or ()) and not published_truth.receives(sub):
        return (f"the '{published_truth.ASSET}' asset is handed to the built-in {published_truth.ASSET} alone, "
                f"recognised by its code; {sub.name} (hash {sub.hash}) is not it")
    return Submission.supports(sub, modality, white_box, segments, assets)


def _extra(r: Any, trk: Any, res: Any, instances: Any, summary_extra: dict[str, Any], sub: Any = None) -> list[str]:
    """`extra`: the track's summary recomputed, the harness's own entries, nothing else (`sub`: the rebuilt
    submission, whose assets name its cache)."""
    from benchmark.runner import asset_key, assets_for, cache_inputs, cache_rel

    extra = r.extra
    out = [f"extra.{k} is not one the {r.track} track or the harness writes; remove it"
           for k in sorted(set(extra) - set(summary_extra) - set(HARNESS_EXTRA))]
    for k, v in summary_extra.items():
        if canonical_json(json.loads(canonical_json(v))) != canonical_json(extra.get(k)):
            out.append(f"extra.{k} differs from what the track computes from the per-instance scores")
    if canonical_json(extra.get("excluded_instances") or {}) != canonical_json(instances.excluded or {}):
        out.append("extra.excluded_instances differs from the track's exclusions")
    for k in TIMING_EXTRA:
        if k in extra and not _is_num(extra[k]):
            out.append(f"extra.{k} must be a finite number ≥ 0")
    seeds = seeds_of(r.provenance)
    inputs_name, _ = trk.inputs_key(res, trk.default_split)
    if sub is not None and sub.needs_assets:  # what the harness handed it names its cache (`runner.cache_inputs`)
        inputs_name = cache_inputs(inputs_name, asset_key(sub, assets_for(sub, trk, res, trk.default_split)))
    caches = [cache_rel(trk.name, inputs_name, str(r.model["name"]), r.submission["name"], r.submission["hash"],
                        str(r.model.get("hash")), r.submission.get("parameters") or {}, s, trk.default_split)
              for s in seeds]
    if extra.get("cache") != caches[0] or (extra.get("caches") if len(seeds) > 1 else None) != \
            (caches if len(seeds) > 1 else None) or ("caches" in extra and len(seeds) == 1):
        out.append("extra.cache / caches are not the harness's own cache names for this run")
    return out
