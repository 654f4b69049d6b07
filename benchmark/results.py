"""The Result schema: one JSON file per (submission, track, resource revision, model).

Validated on write and on read (`Result.from_dict` raises `ResultError` naming the bad field).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from benchmark.errors import ResultError

SCHEMA_VERSION = 1


@dataclass
class MetricSummary:
    """Per-metric aggregate over instances: mean, std, 95% CI (t-interval), n, excluded count."""

    mean: float | None
    std: float | None
    ci95: tuple[float, float] | None
    n: int
    excluded: int = 0  # instances where the metric is undefined (NaN), e.g. empty ground truth
    direction: str = "lower"
    label: str = ""

    @classmethod
    def from_scores(cls, scores: np.ndarray, direction: str, label: str = "") -> "MetricSummary":
        scores = np.asarray(scores, dtype=np.float64)
        ok = scores[np.isfinite(scores)]
        excluded = int(scores.size - ok.size)
        if ok.size == 0:
            return cls(None, None, None, 0, excluded, direction, label)
        mean = float(ok.mean())
        std = float(ok.std(ddof=1)) if ok.size > 1 else 0.0
        if ok.size > 1 and std > 0:
            half = float(stats.t.ppf(0.975, ok.size - 1) * std / np.sqrt(ok.size))
        else:
            half = 0.0
        return cls(mean, std, (mean - half, mean + half), int(ok.size), excluded, direction, label)


@dataclass
class Failure:
    instance: str
    reason: str


@dataclass
class Result:
    submission: dict[str, Any]  # name, version, hash, parameters, kind
    track: str
    resource: dict[str, Any]  # name, version, revision, split
    model: dict[str, Any]  # name, hash, task
    metrics: dict[str, MetricSummary]
    n_instances: int
    n_failed: int
    failures: list[Failure]
    wall_time_s: float
    provenance: dict[str, Any]  # xaibench version + git hash, seeds, libraries, device
    primary_metric: str
    schema_version: int = SCHEMA_VERSION
    created: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    coverage: dict[str, Any] = field(default_factory=dict)
    integrity: dict[str, Any] = field(default_factory=dict)

    # -- (de)serialisation with validation --------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        self.validate()
        return asdict(self)

    def validate(self) -> None:
        _check(isinstance(self.track, str) and self.track, "track", "a non-empty string")
        for key in ("name", "version", "hash"):
            _check(isinstance(self.submission.get(key), str), f"submission.{key}", "a string")
        for key in ("name", "revision", "split"):
            _check(isinstance(self.resource.get(key), str), f"resource.{key}", "a string")
        _check(isinstance(self.model.get("name"), str), "model.name", "a string")
        _check(self.primary_metric in self.metrics, "primary_metric", "one of the metrics")
        _check(self.n_failed == len(self.failures), "n_failed", "equal to len(failures)")
        _check(0 <= self.n_failed <= self.n_instances, "n_failed", "between 0 and n_instances")
        for name, m in self.metrics.items():
            _check(m.direction in ("lower", "higher"), f"metrics.{name}.direction", "'lower' or 'higher'")
            if m.mean is not None:
                _check(np.isfinite(m.mean), f"metrics.{name}.mean", "finite")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Result":
        try:
            if not isinstance(d, dict):
                raise ResultError(f"result must be a JSON object, got {type(d).__name__}")
            if d.get("schema_version") != SCHEMA_VERSION:
                raise ResultError(f"schema_version {d.get('schema_version')} is not {SCHEMA_VERSION}")
            metrics = {
                k: MetricSummary(**{**v, "ci95": tuple(v["ci95"]) if v.get("ci95") else None})
                for k, v in d["metrics"].items()
            }
            failures = [Failure(**f) for f in d["failures"]]
            r = cls(**{**d, "metrics": metrics, "failures": failures})
        except ResultError:
            raise
        except (KeyError, TypeError) as exc:
            raise ResultError(f"result does not follow the schema ({exc}); re-run `xaibench evaluate`") from exc
        r.validate()
        return r

    def save(self, path: Path) -> Path:
        """Write atomically (temp file + rename): an interrupted write never leaves a broken file."""
        data = json.dumps(self.to_dict(), indent=1, sort_keys=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: Path) -> "Result":
        try:
            d = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ResultError(f"{path} is not a readable result file ({exc}); delete it and re-run") from exc
        try:
            return cls.from_dict(d)
        except ResultError as exc:
            raise ResultError(f"{path}: {exc}") from None


def _check(ok: bool, field_name: str, what: str) -> None:
    if not ok:
        raise ResultError(f"result field '{field_name}' must be {what}")


def load_results(directory: Path) -> tuple[list[Result], list[str]]:
    """Every valid result under `directory` (recursive) and one message per unreadable file."""
    results, problems = [], []
    for p in sorted(Path(directory).rglob("*.json")):
        try:
            results.append(Result.load(p))
        except ResultError as exc:
            problems.append(str(exc))
    return results, problems


# interim (replaced by the integrity work): coverage and outputs digest
def coverage_of(ids, split_size: int, limit):
    import hashlib as _h

    return {"n": len(ids), "ids_sha256": _h.sha256("\n".join(ids).encode()).hexdigest(), "limit": limit,
            "complete": len(ids) >= split_size, "split_size": int(split_size)}


def outputs_digest(entries) -> str:
    import hashlib as _h

    h = _h.sha256()
    for e in entries:
        h.update(f"{e.instance}\0{int(e.ok)}\0".encode())
        if e.ok:
            a = np.ascontiguousarray(e.array, dtype=np.float32)
            h.update(repr(a.shape).encode() + a.tobytes())
        else:
            h.update(str(e.reason).encode())
    return h.hexdigest()
