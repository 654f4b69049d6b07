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
    verifications/<submission>/bindings/<seq>.json     the name's signed bindings to a contributor key, a chain
                                                       (`contributors`, believed through `signed_state`)
    rounds/<round>/round.json, rounds/<round>/secret.json   a round of hidden copies, started and revealed (`rounds`)
    verifications/<submission>/owner.json              the unsigned binding of repositories made before bindings
                                                       were signed: never believed (`migrate` signs it)

`<code-hash>` is `Submission.hash`; the files under `source/` sit at the paths the hash covers them under
(relative to the submission folder's parent), so the hash can be recomputed from them alone.

**What each file is believed under** (`FILE_KINDS`, DESIGN §8 "Every file that can change a verdict is signed"):
every kind of file is either *signed* by a maintainer (believed only when its signature holds under the
maintainers' keys, read through `signed_state` alone), *bound* by signed files (believed only where a signed file
names its bytes: a Result, its code and metadata through a verification record; a revealed secret through its
round's signed commitment), or *inert* (it changes no verdict, no name's owner and no round's state). Any other
path is no file of the layout and is never read.

**Tree bounds** (`path_problem`): a tree entry deeper than `MAX_TREE_DEPTH` folders, with a path longer than
`MAX_PATH_BYTES` or a name longer than `MAX_PART_BYTES` (UTF-8 bytes), and the entries past the first
`MAX_TREE_ENTRIES`, are no file a checkout holds: each is skipped with one line, never materialised or walked.
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
ROUNDS = "rounds"
BINDINGS = "bindings"  # verifications/<name>/bindings/<seq>.json
HIDDEN_RECORD = "xaibench-hidden-runs"  # the kind of a row's round record (`ResultPath.round_record`)
SUBMISSION_JSON = "submission.json"
SOURCE = "source"
HASH_RE = re.compile(r"^[0-9a-f]{16}$")
PART_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# tree bounds (`path_problem`): no file of the layout is deeper than 8 folders, a submission's source rarely more than a
# few below `source/`; no name a file system refuses (NAME_MAX 255 bytes), no path near PATH_MAX (4,096) once under a
# scratch folder
MAX_TREE_DEPTH = 32
MAX_PATH_BYTES = 1024
MAX_PART_BYTES = 255
MAX_TREE_ENTRIES = 250_000

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


def binding_path(name: str, seq: int) -> str:
    """`verifications/<name>/bindings/<seq>.json`: the name's `seq`-th signed binding (1, 2, …; no leading zero)."""
    return f"{VERIFICATIONS}/{name}/{BINDINGS}/{seq}.json"


def round_path(name: str) -> str:
    """`rounds/<name>/round.json`."""
    return f"{ROUNDS}/{name}/round.json"


def secret_path(name: str) -> str:
    """`rounds/<name>/secret.json` (the revealed secret)."""
    return f"{ROUNDS}/{name}/secret.json"


def legacy_owner_path(name: str) -> str:
    """`verifications/<name>/owner.json`: the unsigned binding written before bindings were signed (`migrate`)."""
    return f"{VERIFICATIONS}/{name}/owner.json"


def path_problem(rel: str) -> str:
    """Why the tree entry `rel` is no path a checkout may hold — "" when it is one: absolute, `.`/`..`/empty parts,
    an unprintable character (a terminal escape, a newline), deeper than `MAX_TREE_DEPTH`, longer than
    `MAX_PATH_BYTES`, or a part longer than `MAX_PART_BYTES`."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or not rel.isprintable():
        return "not a plain relative path (absolute, '.', '..', or an unprintable character); skipped"
    if len(parts) > MAX_TREE_DEPTH:
        return f"{len(parts):,} levels deep, more than the {MAX_TREE_DEPTH} a results repository uses; skipped"
    size = len(rel.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        return f"a path of {size:,} bytes, more than the {MAX_PATH_BYTES:,} allowed; skipped"
    if any(len(p.encode("utf-8")) > MAX_PART_BYTES for p in parts):
        return f"a name longer than the {MAX_PART_BYTES} bytes a file system allows; skipped"
    return ""


def printable(text: str) -> str:
    """`text` with every character that is not printable (a terminal escape, a newline, a bidirectional override)
    written as its Python escape (`\\x1b`, `\\u202e`), so a name from a repository can be shown on a terminal or a
    page as the characters it holds, never as what they would do."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


# how a kind of file is believed (`FILE_KINDS`)
SIGNED = "signed"  # believed only when a maintainer key's signature holds over it (`signed_state`)
BOUND = "bound"  # believed only where a signed file names its bytes (a verification record, a round's commitment)
INERT = "inert"  # changes no verdict, no name's owner and no round's state


@dataclass(frozen=True)
class FileKind:
    """One kind of file a results repository holds: its name, the paths it lies at, how it is believed (`SIGNED`,
    `BOUND` or `INERT`) and why."""

    name: str
    pattern: re.Pattern[str]
    trust: str
    why: str


_P = r"[A-Za-z0-9][A-Za-z0-9._-]*"  # one plain path part
_ROW = rf"{_P}/[0-9a-f]{{16}}/{_P}/{_P}@{_P}/{_P}"  # <name>/<code-hash>/<track>/<family>__<config>@<revision>/<model>
FILE_KINDS: tuple[FileKind, ...] = (
    FileKind("marker", re.compile(rf"^{re.escape(MARKER)}$"), INERT,
             "marks a results repository; its layout number is read, nothing it says changes a verdict"),
    FileKind("readme", re.compile(r"^README\.md$"), INERT, "prose for people; never read"),
    FileKind("submission metadata", re.compile(rf"^{RESULTS}/{_P}/[0-9a-f]{{16}}/{SUBMISSION_JSON}$"), BOUND,
             "a verified row's verification record names its sha256 (`signed_state.binds`)"),
    FileKind("source file", re.compile(rf"^{RESULTS}/{_P}/[0-9a-f]{{16}}/{SOURCE}/.+$"), BOUND,
             "a verified row's verification record names the digest of its folder's source/"),
    FileKind("contribution signature", re.compile(rf"^{RESULTS}/{_P}/[0-9a-f]{{16}}/signatures/[^/]+\.json$"), INERT,
             "judged with the pull request that adds it; a name passes to a key only through a signed binding"),
    FileKind("result", re.compile(rf"^{RESULTS}/{_ROW}\.json$"), BOUND,
             "verified only where a signed verification record names its path and sha256; else self-reported"),
    FileKind("verification record", re.compile(rf"^{VERIFICATIONS}/{_ROW}\.json$"), SIGNED,
             "a maintainer's re-run: believed when its signature holds and it binds its row's files"),
    FileKind("round record", re.compile(rf"^{VERIFICATIONS}/{_ROW}\.rounds/{_P}\.json$"), SIGNED,
             "a maintainer's hidden-copy runs of one round: signed, bound to its row and to a signed round"),
    FileKind("binding", re.compile(rf"^{VERIFICATIONS}/{_P}/{BINDINGS}/[1-9][0-9]*\.json$"), SIGNED,
             "who holds a name: the newest maintainer-signed binding of one chain from the first"),
    FileKind("unsigned binding", re.compile(rf"^{VERIFICATIONS}/{_P}/owner\.json$"), INERT,
             "the binding of the layout before bindings were signed: never believed (`xaibench results migrate`)"),
    FileKind("round", re.compile(rf"^{ROUNDS}/{_P}/round\.json$"), SIGNED,
             "a round of hidden copies, started: its commitment, believed when the maintainer's signature holds"),
    FileKind("revealed secret", re.compile(rf"^{ROUNDS}/{_P}/secret\.json$"), BOUND,
             "a round is revealed only when this secret hashes to the commitment its signed round names"),
)


def file_kind(rel: str) -> FileKind | None:
    """The kind of the file at `rel` (the first in `FILE_KINDS` whose pattern matches: a file under `source/` is a
    source file whatever its name), or None: no file of the layout."""
    return next((k for k in FILE_KINDS if k.pattern.match(rel)), None)
