"""The reference leaderboard shipped with the package (docs/reference.md): read it, check it, audit it.

`xaibench reference build` (`generators.reference`) lands every built-in in a results repository as a maintainer
would and ships its tip here, as plain files (`shipped/`: `tree/` the repository's tip, `maintainers.pub` the
maintainer's public key, `manifest.json` the build). Reading it is reading a results repository's checkout
(`leaderboard.repository.boards.load_repository`) under the shipped public key, with one rule more: every shipped
Result is verified by construction, so a row that is not — its file, its code or its metadata changed after the
maintainer signed, or its record changed — is marked **MODIFIED** (`Result.status` "modified": shown, never
ranked) and named (`check`). Nothing is computed beyond reading, and nothing is fetched.

`$XAIBENCH_REFERENCE` names another folder of the same layout (a build at `--scale tiny` into a temporary folder,
the tests' fixture).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError

__all__ = ["ENV", "SHIPPED", "Reference", "check", "load", "location", "public_keys"]

SHIPPED = Path(__file__).resolve().parent / "shipped"
ENV = "XAIBENCH_REFERENCE"
KEY_FILE, MANIFEST, TREE = "maintainers.pub", "manifest.json", "tree"


def location() -> Path:
    """Where the reference is read from: `$XAIBENCH_REFERENCE`, else the package's `shipped/`."""
    env = os.environ.get(ENV)
    return Path(env).expanduser() if env else SHIPPED


class Reference:
    """A shipped reference folder: its tree, public key and manifest (read lazily)."""

    def __init__(self, where: Path | None = None) -> None:
        self.where = Path(where) if where is not None else location()
        if not (self.tree / "xaibench-results.json").is_file() or not (self.where / KEY_FILE).is_file():
            raise XaibenchError(f"no reference is shipped at {self.where} (it needs {TREE}/xaibench-results.json and "
                                f"{KEY_FILE}); `make reference` builds it (hours; docs/reference.md)")

    @property
    def tree(self) -> Path:
        """The repository's tip as plain files."""
        return self.where / TREE

    @property
    def key_file(self) -> Path:
        """The maintainers' public key."""
        return self.where / KEY_FILE

    def manifest(self) -> dict[str, Any]:
        """The build's manifest ({} when it does not read: the tree and the key are what the boards trust)."""
        try:
            data = json.loads((self.where / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def rounds(self) -> list[str]:
        """The reference's rounds, oldest first: the manifest's (`rounds`, else its one `round`), else every round in
        the tree. A round the manifest names but the tree lacks is kept: the audit names it."""
        m = self.manifest()
        listed = m.get("rounds")
        raw = [r.get("name") for r in listed if isinstance(r, dict)] if isinstance(listed, list) else [m.get("round")]
        names = [n for n in raw if isinstance(n, str) and n]
        return names or sorted(p.name for p in (self.tree / "rounds").glob("*") if p.is_dir())


def public_keys(ref: Reference) -> dict[str, Any]:
    """key id → the shipped maintainers' public key."""
    from leaderboard.repository.signing import load_public_keys

    return load_public_keys([ref.key_file])


def _why_not_verified(ref: Reference, rel: str, keys: dict[str, Any]) -> str:
    """Why the Result at `rel` is not verified under the shipped key (which file changed)."""
    from leaderboard.repository.boards import MAX_RECORD_BYTES
    from leaderboard.repository.layout import RepositoryError, parse_result_path, sha256
    from leaderboard.repository.reading import folder_digests, read_json
    from leaderboard.repository.signing import check_record

    rp = parse_result_path(rel)
    if rp is None:
        return "not at a Result's path"
    try:
        record = read_json(ref.tree / rp.verification, rp.verification, MAX_RECORD_BYTES)
    except RepositoryError:
        return f"its verification record {rp.verification} is missing or does not read"
    if not check_record(record, keys):
        return f"its verification record {rp.verification} was changed (its signature does not hold under {KEY_FILE})"
    got = sha256((ref.tree / rel).read_bytes())
    if record.get("result_sha256") != got:
        return (f"the file was changed after the maintainers signed it (the record names sha256 "
                f"{str(record.get('result_sha256'))[:12]}…, the file has {got[:12]}…)")
    source, meta = folder_digests(ref.tree, rp.submission, rp.code_hash)
    if record.get("source_sha256") != source:
        return f"its code (results/{rp.submission}/{rp.code_hash}/source/) was changed after the maintainers signed it"
    if record.get("submission_json_sha256") != meta:
        return "its submission.json was changed after the maintainers signed it"
    return "its record does not name it"


def load(where: Path | None = None) -> tuple[list[Any], list[str], Reference]:
    """(Results, problem lines, the reference) of the shipped reference (module docstring): every row verified
    under the shipped key, or marked "modified" with a line saying which file changed."""
    from leaderboard.repository.boards import load_repository

    ref = Reference(where)
    keys = public_keys(ref)
    found, problems = load_repository(ref.tree, keys)
    for r in found:
        if getattr(r, "status", None) != "verified":
            rel = Path(r.path).relative_to(ref.tree).as_posix()
            r.status = "modified"
            problems.append(f"{rel}: MODIFIED — {_why_not_verified(ref, rel, keys)}; shown, never ranked")
    return found, problems, ref


def check(where: Path | None = None) -> tuple[list[str], int]:
    """(lines naming every shipped file that does not hold, Results checked): each Result must verify against its
    record under the shipped key (`load`), and every file the build wrote must still have the sha256 its manifest
    lists (a file changed, removed or added since is named: an unsigned file cannot change a verified row, but it is
    not what was shipped)."""
    found, problems, ref = load(where)
    lines = [p for p in problems if "MODIFIED" in p]
    listed = ref.manifest().get("files")
    if isinstance(listed, dict):
        have = {p.relative_to(ref.tree).as_posix(): p for p in sorted(ref.tree.rglob("*")) if p.is_file()}
        for rel in sorted(set(listed) | set(have)):
            if rel not in have:
                lines.append(f"{rel}: removed since the build shipped it")
            elif rel not in listed:
                lines.append(f"{rel}: not shipped by the build (added since)")
            elif hashlib.sha256(have[rel].read_bytes()).hexdigest() != listed[rel]:
                lines.append(f"{rel}: MODIFIED — its sha256 is not the one the build shipped")
    else:
        lines.append(f"{MANIFEST}: missing or unreadable; the files could not be compared with what the build shipped")
    first: dict[str, str] = {}
    for x in lines:  # one line per file: its first
        first.setdefault(x.split(":", 1)[0], x)
    out = list(first.values())
    return out, len(found)
