"""Result schema 2: signatures (saved files cannot be altered unnoticed), coverage, outputs digest."""

from __future__ import annotations

import hashlib
import json
import stat
import struct
from pathlib import Path

import numpy as np
import pytest

from benchmark.store import integrity
from benchmark.store.cache import Entry
from benchmark.errors import ResultError
from benchmark.store.results import (
    SCHEMA_VERSION,
    Failure,
    MetricSummary,
    Result,
    coverage_of,
    describe_coverage,
    load_results,
    outputs_digest,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A fresh XAIBENCH_HOME: its own (not yet created) signing key."""
    h = tmp_path / "home"
    monkeypatch.setenv("XAIBENCH_HOME", str(h))
    return h


def result(name="sub", kl=0.5, n=10, split_size=20, limit=10) -> Result:
    ids = [f"doc-{k}" for k in range(n)]
    return Result(
        submission={"name": name, "version": "1.0", "hash": "abc", "parameters": {"n_samples": 100},
                    "kind": "explainer"},
        track="aixi",
        resource={"name": "aixi/shape-ssin", "version": "1", "revision": "rev-a", "split": "test"},
        model={"name": "cnn", "hash": "m", "task": "classification"},
        metrics={"kl": MetricSummary(kl, 0.1, (kl - 0.01, kl + 0.01), n, 0, "lower", "KL"),
                 "pcc": MetricSummary(0.25, 0.2, (0.2, 0.3), n - 1, 1, "higher", "PCC")},
        n_instances=n,
        n_failed=1,
        failures=[Failure("doc-3", "output has 2 non-finite values (NaN/inf)")],
        wall_time_s=2.5,
        provenance={"seed": 0, "device": "cpü"},  # non-ASCII survives the canonical form
        primary_metric="kl",
        created="2026-01-01T00:00:00+00:00",
        coverage=coverage_of(ids, split_size, limit),
        integrity={"outputs_sha256": "0" * 64},
    )


def edit(path: Path, change) -> None:
    d = json.loads(path.read_text())
    change(d)
    path.write_text(json.dumps(d, indent=1))


# --------------------------------------------------------------------------------------------------
# signatures


def test_save_signs_and_load_verifies(home, tmp_path):
    r = result()
    assert r.status == "unsigned" and r.path is None  # built in memory: nothing vouches for it yet
    path = r.save(tmp_path / "r.json")
    assert r.status == "signed" and r.path == path
    back = Result.load(path)
    assert back.status == "signed" and back.path == path
    assert back.to_dict() == r.to_dict()
    sig = back.integrity["signature"]
    assert len(sig) == 64 and back.integrity["key_id"] == integrity.key_id(integrity.result_key())
    assert back.integrity["outputs_sha256"] == "0" * 64
    assert "status" not in json.loads(path.read_text())  # not serialised
    # the signature is HMAC-SHA256 over the canonical JSON without the signature
    d = json.loads(path.read_text())
    d["integrity"].pop("signature")
    body = json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    import hmac

    assert hmac.new(integrity.result_key(), body, hashlib.sha256).hexdigest() == sig
    # reformatting the file (same content) keeps it signed: the signature is over the canonical form
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4))
    assert Result.load(path).status == "signed"


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["metrics"]["kl"].__setitem__("mean", 0.4999),  # one number
        lambda d: d["metrics"]["kl"].__setitem__("ci95", [0.1, 0.2]),
        lambda d: d.__setitem__("n_failed", 0) or d.__setitem__("failures", []),
        lambda d: d["coverage"].__setitem__("complete", True) or d["coverage"].__setitem__("split_size", 10),
        lambda d: d["integrity"].__setitem__("outputs_sha256", "1" * 64),
        lambda d: d["integrity"].__setitem__("signature", "f" * 64),
        lambda d: d["integrity"].pop("key_id"),  # claims no key: checked against this machine's
    ],
    ids=["mean", "ci", "failures", "coverage", "outputs-digest", "signature", "no-key-id"],
)
def test_any_edit_after_writing_reads_as_modified(home, tmp_path, change):
    path = result().save(tmp_path / "r.json")
    edit(path, change)
    assert Result.load(path).status == "modified"


def test_stripped_or_foreign_signature_reads_as_unsigned(home, tmp_path, monkeypatch):
    path = result().save(tmp_path / "r.json")
    stripped = tmp_path / "stripped.json"
    stripped.write_text(path.read_text())
    edit(stripped, lambda d: d["integrity"].__setitem__("signature", None))
    assert Result.load(stripped).status == "unsigned"
    # the same file read on another machine (another key): cannot be checked there
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "other-machine"))
    assert Result.load(path).status == "unsigned"  # no key there yet
    result().save(tmp_path / "theirs.json")  # creates the other machine's key
    assert Result.load(path).status == "unsigned"  # signed under a different key_id
    assert Result.load(tmp_path / "theirs.json").status == "signed"


def test_key_file_is_created_0600_once_and_reused(home, tmp_path):
    key_file = home / "keys" / "results.key"
    assert integrity.result_key(create=False) is None and not key_file.exists()
    result().save(tmp_path / "a.json")
    assert key_file.is_file()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    key = key_file.read_bytes()
    assert len(key) == 32
    result("other").save(tmp_path / "b.json")
    assert key_file.read_bytes() == key  # reused, never replaced
    assert integrity.result_key() == key
    assert not [p for p in key_file.parent.iterdir() if p.name != "results.key"]  # no temp file left
    assert Result.load(tmp_path / "a.json").status == "signed"


def test_damaged_key_is_an_error_that_names_the_fix(home, tmp_path):
    key_file = home / "keys" / "results.key"
    key_file.parent.mkdir(parents=True)
    key_file.write_bytes(b"short")
    with pytest.raises(ResultError, match="Delete it"):
        result().save(tmp_path / "a.json")


def test_schema_1_file_loads_unsigned_with_unknown_coverage(home, tmp_path):
    d = result(n=12, split_size=12, limit=None).to_dict()
    del d["coverage"], d["integrity"]
    d["schema_version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(d))
    r = Result.load(path)
    assert r.status == "unsigned" and r.schema_version == SCHEMA_VERSION
    assert r.coverage == {"n": 12, "ids_sha256": None, "limit": None, "complete": None, "split_size": None}
    assert r.integrity == {"outputs_sha256": None, "signature": None}
    assert describe_coverage(r.coverage) == "12 instances (coverage not recorded)"
    # a schema-1 file claiming a signature is not a schema-1 file
    d["integrity"] = {"signature": "0" * 64}
    path.write_text(json.dumps(d))
    with pytest.raises(ResultError, match="schema-1"):
        Result.load(path)


def test_load_results_reports_status_per_file(home, tmp_path):
    a = result("a").save(tmp_path / "res" / "a.json")
    result("b").save(tmp_path / "res" / "b.json")
    edit(a, lambda d: d["metrics"]["kl"].__setitem__("mean", 0.0))
    found, problems = load_results(tmp_path / "res")
    assert problems == []
    assert {r.submission["name"]: r.status for r in found} == {"a": "modified", "b": "signed"}


# --------------------------------------------------------------------------------------------------
# coverage


def test_coverage_of_by_hand():
    ids = ["b", "a", "c"]
    cov = coverage_of(ids, split_size=5, limit=3)
    assert cov == {"n": 3, "ids_sha256": hashlib.sha256(b"b\na\nc").hexdigest(), "limit": 3,
                   "complete": False, "split_size": 5}
    assert coverage_of(["a", "b", "c"], 5, 3)["ids_sha256"] != cov["ids_sha256"]  # order counts
    assert coverage_of(ids, 3, None)["complete"] is True
    assert coverage_of(ids, 3, 10)["complete"] is True  # a limit above the split covers all of it
    with pytest.raises(ValueError):
        coverage_of(["a", "a"], 5, None)
    with pytest.raises(ValueError):
        coverage_of(ids, 2, None)


def test_describe_coverage():
    ids = [str(k) for k in range(1598)]
    assert describe_coverage(coverage_of(ids, 1598, None)) == "1,598 instances (full split)"
    assert describe_coverage(coverage_of(ids[:40], 200, 40)) == "first 40 of 200 instances"
    assert describe_coverage(coverage_of(ids[:300], 1598, None)) == "300 of 1,598 instances"


@pytest.mark.parametrize(
    "coverage, field",
    [
        ({"n": 9, "ids_sha256": "a" * 64, "limit": None, "complete": False, "split_size": 20}, "coverage.n"),
        ({"n": 10, "ids_sha256": "xyz", "limit": None, "complete": False, "split_size": 20}, "ids_sha256"),
        ({"n": 10, "ids_sha256": "a" * 64, "limit": None, "complete": True, "split_size": 20}, "complete"),
        ({"n": 10, "ids_sha256": "a" * 64, "limit": None, "complete": False, "split_size": 5}, "split_size"),
        ({"n": 10, "ids_sha256": "a" * 64, "limit": "10", "complete": False, "split_size": 20}, "limit"),
        ({"n": 10, "ids_sha256": "a" * 64, "limit": None, "complete": 0, "split_size": 20}, "complete"),
    ],
)
def test_validate_rejects_bad_coverage(coverage, field):
    r = result()
    r.coverage = coverage
    with pytest.raises(ResultError, match=field):
        r.validate()


def test_validate_rejects_bad_integrity():
    r = result()
    r.integrity["outputs_sha256"] = "not-hex"
    with pytest.raises(ResultError, match="outputs_sha256"):
        r.validate()


# --------------------------------------------------------------------------------------------------
# outputs digest


def entries():
    return [
        Entry("doc-0", True, np.array([[0.25, -1.0, 3.0]], dtype=np.float32), "", 0.1),
        Entry("doc-1", False, None, "output shape (2,) != expected (3,)", 0.2),
        Entry("doc-2", True, np.array([1.0, 2.0, 0.5], dtype=np.float32), "", 0.3),
    ]


def test_outputs_digest_follows_the_documented_layout():
    expected = hashlib.sha256()
    expected.update(b"xaibench-outputs-v1\n")
    expected.update(struct.pack("<I", 5) + b"doc-0" + b"\x01" + struct.pack("<I", 2) + struct.pack("<2Q", 1, 3))
    expected.update(np.array([0.25, -1.0, 3.0], dtype="<f4").tobytes())
    reason = b"output shape (2,) != expected (3,)"
    expected.update(struct.pack("<I", 5) + b"doc-1" + b"\x00" + struct.pack("<I", len(reason)) + reason)
    expected.update(struct.pack("<I", 5) + b"doc-2" + b"\x01" + struct.pack("<I", 1) + struct.pack("<Q", 3))
    expected.update(np.array([1.0, 2.0, 0.5], dtype="<f4").tobytes())
    assert outputs_digest(entries()) == expected.hexdigest()


def test_outputs_digest_changes_with_one_float_a_reason_a_shape_or_the_order():
    base = outputs_digest(entries())
    es = entries()
    es[2].array = es[2].array.copy()
    es[2].array[1] = np.nextafter(np.float32(2.0), np.float32(3.0))  # one ulp
    assert outputs_digest(es) != base
    es = entries()
    es[1].reason = "output shape (4,) != expected (3,)"
    assert outputs_digest(es) != base
    es = entries()
    es[0].array = es[0].array.reshape(3, 1)  # same bytes, another shape
    assert outputs_digest(es) != base
    assert outputs_digest(entries()[::-1]) != base
    es = entries()
    es[0].seconds = 99.0  # timings are not part of the outputs
    es[2].array = es[2].array.astype(np.float64)  # stored as float32 either way
    assert outputs_digest(es) == base
