"""The Result schema: one JSON file per (submission, track, resource revision, model).

Validated on write and on read (`Result.from_dict` raises `ResultError` naming the bad field).

Schema 3 adds `instance_scores` (see `pack_scores`): every per-instance score array the track's
`score` returned (metrics and extras such as pooled counts), per seed, in coverage order, with the
instances that did not fail (`ok`). Boards resample them — the same instances for every submission
on the board — for paired-bootstrap rank intervals (`leaderboard.ranks`); results without them (schema
1 and 2) are ranked by their means alone, with the intervals undefined and said so.

Schema 2 adds two objects:

* `coverage` — exactly which instances the scores cover (see `coverage_of`): `n`, `ids_sha256`
  (sha256 of the instance ids joined by newlines, in evaluation order), `limit` (the `--limit` of the
  run, or None), `complete` (True when the run covers the whole evaluation split after the track's
  exclusions) and `split_size` (the size of that split). A board ranks only results with the same
  `ids_sha256`. Schema-1 files load with the coverage unknown: `ids_sha256`, `limit`, `complete` and
  `split_size` None.
* `integrity` — `outputs_sha256` (set by the runner: `outputs_digest` of the cached outputs the
  scores were computed from, so `xaibench verify` can re-score and compare), `key_id` and `signature`
  (set by `Result.save`: HMAC-SHA256 under this machine's result key, see `benchmark.store.integrity`).

`Result.load` sets the attribute `status` (not written to the file) to "signed", "modified" or
"unsigned" (`benchmark.store.integrity.check`) and `path` to the file it read; `Result.save` sets them to
"signed" and the written path. A Result built in memory starts "unsigned" with `path` None.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import tempfile
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from benchmark.errors import ResultError

SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)  # schemas 1 and 2 are upgraded on read (no per-instance scores)
STATUSES = ("signed", "modified", "unsigned")


# --------------------------------------------------------------------------------------------------
# coverage


def ids_digest(ids: list[str]) -> str:
    """sha256 hex of `"\n".join(ids)` (UTF-8), ids in evaluation order."""
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def coverage_of(ids: list[str], split_size: int, limit: int | None) -> dict[str, Any]:
    """The `coverage` of a run over `ids` (evaluation order) out of a split of `split_size` instances
    (after the track's exclusions), started with `--limit limit` (None: no limit).

    `complete` is True when the run covers the whole split (`len(ids) == split_size`), whatever the
    limit was (a limit above the split size still covers all of it)."""
    ids = [str(i) for i in ids]
    if len(set(ids)) != len(ids):
        raise ValueError("coverage_of: instance ids must be unique")
    if split_size < len(ids):
        raise ValueError(f"coverage_of: {len(ids)} ids cannot come from a split of {split_size}")
    return {
        "n": len(ids),
        "ids_sha256": ids_digest(ids),
        "limit": None if limit is None else int(limit),
        "complete": len(ids) == int(split_size),
        "split_size": int(split_size),
    }


def unknown_coverage(n: int) -> dict[str, Any]:
    """The coverage of a result that did not record it (schema 1): only `n` is known."""
    return {"n": int(n), "ids_sha256": None, "limit": None, "complete": None, "split_size": None}


def describe_coverage(cov: dict[str, Any]) -> str:
    """Human words for a coverage: "1,598 instances (full split)", "first 40 of 200 instances",
    "300 of 1,598 instances" (a subset not given by a limit, e.g. a shard), or
    "300 instances (coverage not recorded)"."""
    n = int(cov.get("n") or 0)
    size = cov.get("split_size")
    if cov.get("ids_sha256") is None:
        return f"{n:,} instances (coverage not recorded)"
    if cov.get("complete"):
        return f"{n:,} instances (full split)"
    of = f" of {size:,}" if isinstance(size, int) else ""
    if cov.get("limit") is not None:
        return f"first {n:,}{of} instances"
    return f"{n:,}{of} instances"


# --------------------------------------------------------------------------------------------------
# the outputs a result was scored from


def outputs_digest(entries: Any) -> str:
    """sha256 hex over the per-instance outputs a Result was scored from, in instance order.

    `entries` is an iterable of objects with `instance` (id), `ok`, `array` and `reason` attributes
    (`benchmark.store.cache.Entry`), in evaluation order. The hashed bytes are, with `u32`/`u64` unsigned
    little-endian integers and strings UTF-8 encoded:

        b"xaibench-outputs-v1\n"
        then for each entry:
            u32 len(id) + id
            one byte: 1 if ok else 0
            ok:     u32 ndim + ndim × u64 dims + the array as little-endian float32 ('<f4'), C order
            failed: u32 len(reason) + reason

    (Timings are not hashed: they change between runs of the same outputs.)"""
    h = hashlib.sha256(b"xaibench-outputs-v1\n")
    for e in entries:
        ident = str(e.instance).encode("utf-8")
        h.update(struct.pack("<I", len(ident)) + ident)
        if e.ok:
            a = np.ascontiguousarray(np.asarray(e.array), dtype="<f4")
            h.update(b"\x01" + struct.pack("<I", a.ndim) + struct.pack(f"<{a.ndim}Q", *a.shape))
            h.update(a.tobytes(order="C"))
        else:
            reason = str(e.reason or "").encode("utf-8")
            h.update(b"\x00" + struct.pack("<I", len(reason)) + reason)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------------
# per-instance scores (schema 3)

SCORES_ENCODING = "zlib+base64 <f8"


def _pack_array(a: np.ndarray) -> dict[str, Any]:
    a = np.ascontiguousarray(np.asarray(a, dtype="<f8"))
    return {"shape": [int(x) for x in a.shape],
            "data": base64.b64encode(zlib.compress(a.tobytes(order="C"), 6)).decode("ascii")}


def _unpack_array(d: Any, where: str) -> np.ndarray:
    try:
        shape = tuple(int(x) for x in d["shape"])
        raw = zlib.decompress(base64.b64decode(d["data"].encode("ascii"), validate=True))
        return np.frombuffer(raw, dtype="<f8").reshape(shape).astype(np.float64)
    except (KeyError, TypeError, ValueError, AttributeError, zlib.error) as exc:
        raise ResultError(f"result field 'instance_scores.{where}' is not a packed array ({exc})") from None


def pack_scores(per_seed: list[tuple[int, dict[str, np.ndarray], np.ndarray]]) -> dict[str, Any]:
    """The `instance_scores` object of a Result from one (seed, scores, ok) per seed run, all over the
    same instances in coverage order: `scores` is what the track's `score` returned (merged over
    chunks, NaN for failed instances), `ok` the instances that did not fail. Arrays are stacked with a
    leading seed axis and stored as zlib-compressed little-endian float64 in base64 (NaN kept)."""
    if not per_seed:
        return {}
    keys = sorted(set.intersection(*(set(sc) for _s, sc, _ok in per_seed)))
    arrays = {k: _pack_array(np.stack([np.asarray(sc[k], dtype=np.float64) for _s, sc, _ok in per_seed]))
              for k in keys}
    ok = np.stack([np.asarray(o, dtype=bool) for _s, _sc, o in per_seed]).astype(np.float64)
    return {"encoding": SCORES_ENCODING, "seeds": [int(s) for s, _sc, _ok in per_seed], "ok": _pack_array(ok),
            "arrays": arrays}


@dataclass
class InstanceScores:
    """`instance_scores` unpacked: `ok` (S, N) bool and `arrays` {key: (S, N, …)} over S seeds."""

    seeds: list[int]
    ok: np.ndarray
    arrays: dict[str, np.ndarray]

    def seed(self, s: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """(scores, ok) of the s-th seed run, as the track's `summarise` / `estimate` take them."""
        return {k: v[s] for k, v in self.arrays.items()}, self.ok[s]


def unpack_scores(d: dict[str, Any], n: int) -> InstanceScores:
    """Decode (and check) an `instance_scores` object over `n` instances; ResultError when damaged."""
    if not isinstance(d, dict) or d.get("encoding") != SCORES_ENCODING:
        raise ResultError(f"result field 'instance_scores.encoding' must be {SCORES_ENCODING!r}")
    seeds = d.get("seeds")
    if not isinstance(seeds, list) or not seeds or not all(_is_int(x) for x in seeds):
        raise ResultError("result field 'instance_scores.seeds' must be a non-empty list of ints")
    ok = _unpack_array(d.get("ok"), "ok")
    if ok.shape != (len(seeds), n):
        raise ResultError(f"result field 'instance_scores.ok' must have shape ({len(seeds)}, {n}), got {ok.shape}")
    arrays = {}
    if not isinstance(d.get("arrays"), dict):
        raise ResultError("result field 'instance_scores.arrays' must be an object")
    for k, v in d["arrays"].items():
        a = _unpack_array(v, f"arrays.{k}")
        if a.shape[:2] != (len(seeds), n):
            raise ResultError(f"result field 'instance_scores.arrays.{k}' must start with shape ({len(seeds)}, {n})")
        arrays[str(k)] = a
    return InstanceScores([int(x) for x in seeds], ok.astype(bool), arrays)


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
        """Mean, sample std (ddof 1) and Student-t 95 % interval (mean ± t₀.₉₇₅,ₙ₋₁ · std / √n) of the
        finite per-instance `scores`; NaN ones count as `excluded`; None values when none is finite."""
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
    """An instance that failed (invalid output, exception, time-out, crash) and the reason."""

    instance: str
    reason: str


@dataclass
class Result:
    """One evaluation's record (the schema in the module docstring): who ran on what, the metric
    summaries, failures, provenance, coverage, integrity and the per-instance scores."""

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
    # which instances the scores cover (`coverage_of`); left empty, it is filled as unknown coverage
    coverage: dict[str, Any] = field(default_factory=dict)
    # outputs_sha256 (runner), key_id + signature (save)
    integrity: dict[str, Any] = field(default_factory=dict)
    # per-instance scores for the boards' paired bootstrap (`pack_scores`); {} when not recorded
    instance_scores: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.coverage:
            self.coverage = unknown_coverage(self.n_instances)
        self.integrity = {"outputs_sha256": None, "signature": None, **(self.integrity or {})}
        # not serialised: set by load() / save()
        self.status: str = "unsigned"
        self.path: Path | None = None
        # the companion runs a board reads for this row, kind -> Results (`leaderboard.companions`); None: none
        # attached yet
        self.companions: dict[str, list[Result]] | None = None

    # -- (de)serialisation with validation --------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict of the current schema (validated first)."""
        self.validate()
        return asdict(self)

    def validate(self) -> None:
        """Raise `ResultError` naming the first field that does not follow the schema."""
        _check(isinstance(self.track, str) and bool(self.track), "track", "a non-empty string")
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
        self._validate_coverage()
        self._validate_integrity()
        if self.instance_scores:
            _check(isinstance(self.instance_scores, dict) and self.instance_scores.get("encoding") == SCORES_ENCODING,
                   "instance_scores.encoding", repr(SCORES_ENCODING))

    def scores(self) -> InstanceScores | None:
        """The per-instance scores (decoded and checked), or None when the result did not record them
        (schema 1 / 2, or a result built without them). ResultError when they are damaged."""
        if not self.instance_scores:
            return None
        return unpack_scores(self.instance_scores, self.n_instances)

    def _validate_coverage(self) -> None:
        c = self.coverage
        _check(isinstance(c, dict), "coverage", "an object")
        _check(_is_int(c.get("n")) and c["n"] == self.n_instances, "coverage.n", "an int equal to n_instances")
        digest = c.get("ids_sha256")
        _check(digest is None or _is_hex(digest, 64), "coverage.ids_sha256", "null or 64 hex digits")
        _check(c.get("limit") is None or (_is_int(c["limit"]) and c["limit"] >= 0), "coverage.limit",
               "null or an int >= 0")
        if digest is None:  # unknown coverage (schema 1): nothing else can be claimed
            _check(c.get("complete") in (None, True, False), "coverage.complete", "null or a bool")
            _check(c.get("split_size") is None or _is_int(c["split_size"]), "coverage.split_size", "null or an int")
            return
        _check(isinstance(c.get("complete"), bool), "coverage.complete", "a bool")
        size = c.get("split_size")
        _check(_is_int(size) and size >= c["n"], "coverage.split_size", "an int >= coverage.n")
        _check(c["complete"] == (size == c["n"]), "coverage.complete", "true exactly when n == split_size")

    def _validate_integrity(self) -> None:
        g = self.integrity
        _check(isinstance(g, dict), "integrity", "an object")
        _check(g.get("outputs_sha256") is None or _is_hex(g["outputs_sha256"], 64), "integrity.outputs_sha256",
               "null or 64 hex digits")
        _check(g.get("signature") is None or _is_hex(g["signature"], 64), "integrity.signature",
               "null or 64 hex digits")
        _check(g.get("key_id") is None or _is_hex(g["key_id"], 16), "integrity.key_id", "null or 16 hex digits")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Result":
        """A Result from a parsed file of any readable schema (older ones upgraded, see the module
        docstring); `ResultError` naming the bad field."""
        try:
            if not isinstance(d, dict):
                raise ResultError(f"result must be a JSON object, got {type(d).__name__}")
            if d.get("schema_version") not in READABLE_SCHEMAS:
                raise ResultError(f"schema_version {d.get('schema_version')} is not one of {READABLE_SCHEMAS}")
            if d["schema_version"] == 2:  # upgrade: no per-instance scores
                if "instance_scores" in d:
                    raise ResultError("a schema-2 result has no 'instance_scores'")
            if d["schema_version"] == 1:  # upgrade: coverage unknown, nothing signed
                if "coverage" in d or "integrity" in d:
                    raise ResultError("a schema-1 result has no 'coverage' or 'integrity'")
                d = {**d, "schema_version": SCHEMA_VERSION, "coverage": unknown_coverage(d["n_instances"]),
                     "integrity": {"outputs_sha256": None, "signature": None}}
            elif (not (isinstance(d.get("coverage"), dict) and d["coverage"])
                  or not isinstance(d.get("integrity"), dict)):
                raise ResultError(f"a schema-{d['schema_version']} result needs 'coverage' and 'integrity' objects")
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
        """Sign (see `benchmark.store.integrity`) and write atomically (temp file + rename): an interrupted
        write never leaves a broken file. Sets `integrity.key_id` / `integrity.signature`, `status`
        ("signed") and `path`."""
        from benchmark.store import integrity

        d = self.to_dict()
        d["integrity"]["signature"] = None
        signature = integrity.sign(d)  # sets d["integrity"]["key_id"]
        d["integrity"]["signature"] = signature
        data = json.dumps(d, indent=1, sort_keys=True, ensure_ascii=False)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.integrity = dict(d["integrity"])
        self.status, self.path = "signed", path
        return path

    @classmethod
    def load(cls, path: Path) -> "Result":
        """Read and validate `path`; `status` says whether its signature holds on this machine
        ("signed" / "modified" / "unsigned", see `benchmark.store.integrity.check`)."""
        from benchmark.store import integrity

        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ResultError(f"{path} is not a readable result file ({exc}); delete it and re-run") from exc
        try:
            r = cls.from_dict(d)
        except ResultError as exc:
            raise ResultError(f"{path}: {exc}") from None
        r.status = integrity.check(d) if d.get("schema_version") in (2, SCHEMA_VERSION) else "unsigned"
        r.path = Path(path)
        return r


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_hex(x: Any, length: int) -> bool:
    return isinstance(x, str) and len(x) == length and all(ch in "0123456789abcdef" for ch in x)


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
