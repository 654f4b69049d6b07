"""The results repository's layout, version 1 (docs/submitting.md):

    xaibench-results.json                         {"layout": 1, "name": ...}: marks a results repository
    results/<submission>/<code-hash>/submission.json   name, version, kind, role, reference, authors,
                                                       license, code link, folder, package, files
    results/<submission>/<code-hash>/source/...        the submission's files exactly as hashed
    results/<submission>/<code-hash>/<track>/<family>__<config>@<revision>/<model>.json   a Result
    results/<submission>/<code-hash>/signatures/<digest16>.json   a contributor's signature (`contributors`)
    verifications/<submission>/<code-hash>/<track>/<family>__<config>@<revision>/<model>.json
                                                       a maintainer's signed record (`signing`)
    verifications/.../<model>.rounds/<round>.json      its signed hidden-copy runs of one round (`rerun`)
    rounds/<round>/round.json, rounds/<round>/secret.json   a round of hidden copies, started and revealed (`rounds`)
    verifications/<submission>/owner.json              the key holding the name (`contributors`)

`<code-hash>` is `Submission.hash`; the files under `source/` sit at the paths the hash covers them under
(relative to the submission folder's parent), so the hash can be recomputed from them alone.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError
from benchmark.submission import MAX_FILE_BYTES

LAYOUT_VERSION = 1
MARKER = "xaibench-results.json"
RESULTS = "results"
VERIFICATIONS = "verifications"
HIDDEN_RECORD = "xaibench-hidden-runs"  # the kind of a row's round record (`ResultPath.round_record`)
SUBMISSION_JSON = "submission.json"
SOURCE = "source"
HASH_RE = re.compile(r"^[0-9a-f]{16}$")
PART_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# size caps (bytes) a pull request is held to
MAX_RESULT_BYTES = 16 << 20
MAX_SOURCE_FILE_BYTES = MAX_FILE_BYTES  # what a submission may hash: one module or declared data file
MAX_TOTAL_BYTES = 64 << 20


class RepositoryError(XaibenchError):
    """A results repository (or a target that should be one) that cannot be used as asked."""


@dataclass(frozen=True)
class ResultPath:
    """Where one Result lives: `results/<submission>/<code_hash>/<track>/<resource>@<revision>/<model>.json`."""

    submission: str
    code_hash: str
    track: str
    resource: str  # `<family>/<config>`
    revision: str
    model: str

    @property
    def rel(self) -> str:
        """The path in the repository."""
        return (f"{RESULTS}/{self.submission}/{self.code_hash}/{self.track}/"
                f"{self.resource.replace('/', '__')}@{self.revision}/{self.model}.json")

    @property
    def verification(self) -> str:
        """The path of its verification record."""
        return VERIFICATIONS + self.rel[len(RESULTS):]

    def round_record(self, name: str) -> str:
        """The path of its signed hidden-copy runs of round `name` (`rerun.hidden_record_for`):
        `verifications/.../<model>.rounds/<name>.json`."""
        return f"{self.verification[:-len('.json')]}.rounds/{name}.json"


def result_path_of(r: Any) -> ResultPath:
    """The repository path of a Result (by its base submission name, code hash, track, resource, model)."""
    return ResultPath(str(r.submission.get("base") or r.submission["name"]), str(r.submission["hash"]), r.track,
                      str(r.resource["name"]), str(r.resource["revision"]), str(r.model["name"]))


def parse_result_path(rel: str) -> ResultPath | None:
    """The parts of a Result's path, or None when `rel` is not shaped like one."""
    parts = rel.split("/")
    if len(parts) != 6 or parts[0] != RESULTS or not parts[5].endswith(".json") or "@" not in parts[4]:
        return None
    resource, _, revision = parts[4].rpartition("@")
    if "__" not in resource or not all(PART_RE.match(p) for p in (parts[1], parts[3], resource, revision)):
        return None
    return ResultPath(parts[1], parts[2], parts[3], resource.replace("__", "/", 1), revision, parts[5][:-5])


def submission_dir(name: str, code_hash: str) -> str:
    """`results/<name>/<code_hash>`."""
    return f"{RESULTS}/{name}/{code_hash}"


def sha256(data: bytes) -> str:
    """sha256 hex of `data`."""
    return hashlib.sha256(data).hexdigest()


def tree_digest(files: dict[str, bytes]) -> str:
    """sha256 over files in path order: per file its path (UTF-8), a NUL, its length as 8 little-endian bytes,
    its bytes — so no two different sets of files share a digest."""
    h = hashlib.sha256(b"xaibench-tree-v1\n")
    for rel in sorted(files):
        h.update(rel.encode("utf-8") + b"\0" + len(files[rel]).to_bytes(8, "little") + files[rel])
    return h.hexdigest()


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` and the Hub's `blob_id` say)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def source_files(sub: Any) -> dict[str, bytes]:
    """`source/<path>` → bytes for every file the submission's hash covers (besides the harness's library
    modules), plus the package's `__init__.py` when the folder sits in a package (it makes the hash follow
    the package's imports)."""
    base = Path(sub.path).parent
    files = {f"{SOURCE}/{p.relative_to(base).as_posix()}": p.read_bytes() for p in sub.hashed_files()}
    if (base / "__init__.py").is_file():
        files[f"{SOURCE}/__init__.py"] = (base / "__init__.py").read_bytes()
    return files


def submission_json(sub: Any, builtin: bool) -> dict[str, Any]:
    """The `submission.json` of a submission: from its `submission.toml` (built-ins: the project's
    authors and license); `RepositoryError` naming the missing field."""
    authors, license_ = list(sub.authors), sub.license
    if builtin:
        authors, license_ = authors or ["xaibench maintainers"], license_ or "MIT"
    if not authors:
        raise RepositoryError(f"{sub.path}/submission.toml: add authors = [\"Your Name <you@example.org>\"] to "
                              "[submission]; a results repository records who wrote each submission")
    if not license_:
        raise RepositoryError(f"{sub.path}/submission.toml: add license = \"<SPDX id, e.g. MIT>\" to [submission]; "
                              "a results repository publishes the source under it")
    base = Path(sub.path).parent
    return {"layout": LAYOUT_VERSION, "name": sub.name, "version": sub.version, "kind": sub.kind, "role": sub.role,
            "reference": sub.reference, "description": sub.description, "authors": authors, "license": license_,
            "code": sub.code, "code_hash": sub.hash, "folder": Path(sub.path).name,
            "package": base.name if (base / "__init__.py").is_file() else None}
