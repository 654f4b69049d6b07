"""`xaibench verify`: re-score Results from the cached outputs they were scored from.

For each Result file:
1. its signature (`Result.status`): "modified" means the file changed after the harness wrote it;
2. the instances: the resource (same revision) and split give the instance ids again; their digest
   must equal `coverage.ids_sha256`;
3. the outputs: the cached outputs of those instances (read-only) must hash to
   `integrity.outputs_sha256` (`benchmark.store.results.outputs_digest`);
4. the scores: the track scores the cached outputs again; every metric's mean must equal the
   Result's (relative tolerance 1e-9);
5. a randomised-model Result (`benchmark.variant_runs.randomisation`) is re-scored with the randomised copy of the
   model, rebuilt from its seed (its hash must be the Result's), and the similarity of its maps to those of the
   trained Result it was paired with (beside it, `trained_path`, checked against the digest it recorded)
   is computed again and compared per instance;
6. a hidden-copy Result (`benchmark.variant_runs.hidden`) is re-scored on the copy rebuilt from this home's secret (its
   round must be this home's, `benchmark.models.variants.hidden.local_round`; the draw's commitment and the copy's hash
   must be the Result's), against the copy's ground truth.

Verdicts are recorded in `$XAIBENCH_HOME/verdicts.json` with the sha256 of the file they judged; the
leaderboard marks a Result whose latest verdict failed (and the static board leaves it out) for as
long as the file is the one that was judged.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from benchmark.errors import XaibenchError

REL_TOL = 1e-9


@dataclass
class Verdict:
    """What `xaibench verify` found for one result file: the problems (none when it checks out)."""

    path: Path
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def verify_result(path: Path) -> Verdict:
    """Re-check one Result file (see the module docstring)."""
    import numpy as np

    from benchmark.store.cache import read_only
    from benchmark.variant_runs.hidden import hidden_of
    from benchmark.variant_runs.randomisation import (CONSTANT_KEY, compare_runs, randomisation_of, result_outputs,
                                                      similarity_arrays)
    from benchmark.resources import data_home, load_resource
    from benchmark.store.results import Result, ids_digest, outputs_digest
    from benchmark.runner import _score, summarise_runs
    from benchmark.tracks import get_track

    v = Verdict(Path(path))
    try:
        r = Result.load(path)
    except XaibenchError as exc:
        v.problems.append(str(exc))
        return v
    if r.status == "modified":
        v.problems.append("the file changed after it was written (signature does not match)")
    cov, integrity = r.coverage or {}, r.integrity or {}
    if r.track == "robustness-live" and cov.get("ids_sha256") and integrity.get("outputs_sha256"):
        from benchmark.attacks.live import rescore

        try:
            return _compare(v, r, rescore(r))
        except XaibenchError as exc:
            v.problems.append(f"cannot re-score: {exc}")
            return v
    if not cov.get("ids_sha256") or not integrity.get("outputs_sha256") or "cache" not in r.extra:
        v.problems.append("written by an older xaibench: no coverage / outputs digest to check; re-run it")
        return v
    try:
        res = load_resource(r.resource["name"])
        if res.revision != r.resource["revision"]:
            raise XaibenchError(f"resource {res.name} is now at revision {res.revision}, the Result was scored "
                                f"on {r.resource['revision']}")
        trk = get_track(r.track)
        hidden = hidden_of(r)
        if hidden is not None:
            instances = _hidden_instances(trk, res, r, hidden, cov.get("limit"))
        else:
            instances = trk.instances(res, r.resource["split"], cov.get("limit"))
        if ids_digest(instances.ids) != cov["ids_sha256"]:
            raise XaibenchError("the resource no longer gives the instances the Result covers")
        randomisation = randomisation_of(r)
        if randomisation is not None:
            _use_randomised(trk, res, instances, r, randomisation)
        caches = r.extra.get("caches") or [r.extra["cache"]]
        seeds = r.provenance.get("seeds") or [r.provenance.get("seed", 0)]
        if len(caches) != len(seeds):
            raise XaibenchError(f"it names {len(caches)} caches for {len(seeds)} seeds")
        runs = [read_only(data_home() / c, instances.ids) for c in caches]
        missing = sum(1 for entries in runs for i in instances.ids if i not in entries)
        if missing:
            raise XaibenchError(f"{missing} of its outputs are missing from the cache")
        if outputs_digest([e[i] for e in runs for i in instances.ids]) != integrity["outputs_sha256"]:
            raise XaibenchError("the cached outputs are not the ones it was scored from")
        metric_params = trk.metric_params_of(r.extra)
        per_seed = []
        for entries in runs:
            scores = _score(trk, instances, entries, r.submission["name"], metric_params)
            per_seed.append((scores, np.array([entries[i].ok for i in instances.ids], dtype=bool)))
        metrics = summarise_runs(trk, per_seed)
        keys = [trk.primary_metric]
        if randomisation is not None:
            rec = r.extra.get("randomisation") or {}
            trained = Result.load(trained_path(Path(path), rec.get("trained_result")))
            if trained.integrity.get("outputs_sha256") != rec.get("trained_outputs_sha256"):
                raise XaibenchError(f"the trained Result beside it ({trained.path}) is not the one it was paired with")
            trained_ids = trk.instances(res, r.resource["split"], (trained.coverage or {}).get("limit")).ids
            if list(trained_ids[: len(instances.ids)]) != list(instances.ids):
                raise XaibenchError("its instances are not the first of the trained Result's")
            compared = compare_runs(result_outputs(trained, trained_ids, data_home()), runs, instances.ids,
                                    trk.modality == "image")
            stored = r.scores()
            for (scores, _ok), c in zip(per_seed, compared):
                scores.update(similarity_arrays(c))
                # a run written before the constant maps were recorded (issue #58) is checked on what it holds
                keys += [k for k in similarity_arrays(c) if k not in keys
                         and (k != CONSTANT_KEY or (stored is not None and k in stored.arrays))]
        _compare_instance_scores(v, r, per_seed, keys)
    except XaibenchError as exc:
        v.problems.append(f"cannot re-score: {exc}")
        return v
    return _compare(v, r, metrics)


def trained_path(randomised: Path, name: str | None = None) -> Path:
    """Where the trained model's Result of a randomised-model Result lies: two folders up
    (`benchmark.runner.result_path`: `<model>/randomised-s<seed>/<name>.json` beside `<model>/<name>.json`),
    under the file name it recorded (`name`; a plain file name) or its own."""
    if name is not None and (not isinstance(name, str) or Path(name).name != name or not name.endswith(".json")):
        raise XaibenchError(f"it names its trained Result {name!r}, which is not a file name")
    return randomised.parent.parent / (name or randomised.name)


def _hidden_instances(trk, res, r, hidden: dict, limit: int | None):
    """The instances (with the copy's ground truth) of the hidden copy a Result was scored on, rebuilt from this
    home's secret: its round must be this home's, and the draw's commitment and the copy's hash the Result's."""
    from benchmark.variant_runs.hidden import copy_for_run
    from benchmark.models.variants.hidden import local_round

    rnd = local_round()
    if str(hidden.get("round")) != rnd.id:
        raise XaibenchError(f"it was scored on a hidden copy of round {hidden.get('round')}, and this home's secret is "
                            f"round {rnd.id}: only that round's secret rebuilds the copy")
    draw = hidden.get("draw")
    if isinstance(draw, bool) or not isinstance(draw, int):
        raise XaibenchError(f"its hidden copy names no draw index ({draw!r})")
    spec, info, instances, _ = copy_for_run(trk, res, r.model["name"], r.resource["split"], draw, limit,
                                            {"hash": hidden.get("of", "")}, rnd)
    if info["hidden"]["commitment"] != hidden.get("commitment"):
        raise XaibenchError(f"hidden copy {draw} of round {rnd.id} commits to {info['hidden']['commitment'][:12]}, the "
                            f"Result to {str(hidden.get('commitment'))[:12]}")
    if str(info["hash"]) != str(r.model.get("hash")):
        raise XaibenchError(f"the hidden copy rebuilt from the secret has hash {info['hash']}, the Result names "
                            f"{r.model.get('hash')}")
    trk.use_model(instances, spec.load)
    return instances


def _use_randomised(trk, res, instances, r, randomisation: dict) -> None:
    """Score with the randomised copy of the model the Result names (rebuilt from its seed; its hash checked)."""
    from benchmark.models.variants.randomise import randomised_spec

    spec, info = trk.build_model(res, r.model["name"], instances)
    spec, info = randomised_spec(spec, info, int(randomisation["seed"]), randomisation.get("top"))
    if str(info["hash"]) != str(r.model.get("hash")):
        raise XaibenchError(f"the randomised model rebuilt from seed {randomisation['seed']} has hash {info['hash']}, "
                            f"the Result names {r.model.get('hash')}")
    trk.use_model(instances, spec.load)


def _compare_instance_scores(v: "Verdict", r, per_seed: list, keys: list[str]) -> None:
    """The stored per-instance scores (what boards resample) against the re-scored ones."""
    import numpy as np

    try:
        stored = r.scores()
    except XaibenchError as exc:
        v.problems.append(str(exc))
        return
    if stored is None:
        return
    for s, (scores, ok) in enumerate(per_seed):
        for key in keys:
            again = np.asarray(scores.get(key), dtype=np.float64)
            kept = stored.arrays.get(key)
            if kept is None or kept[s].shape != again.shape or not np.allclose(kept[s], again, rtol=REL_TOL,
                                                                               atol=1e-12, equal_nan=True) \
                    or not np.array_equal(stored.ok[s], ok):
                v.problems.append(f"instance_scores: the stored per-instance {key} of seed run {s + 1} differ "
                                  "from re-scoring")


def _compare(v: "Verdict", r, metrics: dict) -> "Verdict":
    """Every stored metric mean against the re-scored one."""
    for name, stored in r.metrics.items():
        again = metrics.get(name)
        a, b = stored.mean, None if again is None else again.mean
        same = (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, rel_tol=REL_TOL,
                                                                                               abs_tol=1e-12))
        if not same:
            v.problems.append(f"{name}: the Result says {a}, re-scoring gives {b}")
    return v


def _verdicts_path() -> Path:
    from benchmark.resources import data_home

    return data_home() / "verdicts.json"


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def load_verdicts() -> dict[str, dict]:
    """The recorded verdicts (`$XAIBENCH_HOME/verdicts.json`) by resolved result path; {} when none
    were recorded or the file does not read."""
    p = _verdicts_path()
    try:
        data = json.loads(p.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, json.JSONDecodeError):
        return {}


def record(verdicts: Iterable[Verdict]) -> Path:
    """Add the verdicts to `$XAIBENCH_HOME/verdicts.json` (atomic write)."""
    data = load_verdicts()
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for v in verdicts:
        data[str(Path(v.path).resolve())] = {"ok": v.ok, "problems": v.problems, "file_sha256": _sha(v.path),
                                             "checked": now}
    p = _verdicts_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".verdicts.")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    os.replace(tmp, p)
    return p


def apply_verdicts(results: list) -> list[str]:
    """Mark (status "modified") every loaded Result whose recorded verdict failed and whose file is
    still the one judged; returns one warning line per marked Result."""
    data, warnings = load_verdicts(), []
    for r in results:
        path = getattr(r, "path", None)
        if path is None:
            continue
        v = data.get(str(Path(path).resolve()))
        if v and not v.get("ok") and v.get("file_sha256") == _sha(path):
            r.status = "modified"
            warnings.append(f"{path} failed `xaibench verify` ({'; '.join(v.get('problems', []))[:200]})")
    return warnings
