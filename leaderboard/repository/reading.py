"""Strict, bounded reading of what a results repository holds — the one reader `validate`, `verify`, the
boards (`leaderboard --from`, `site --from`) and `merge` use, so no two of them can read one file two ways.

JSON (`loads`, `read_json`): UTF-8 only (a byte-order mark or any invalid sequence is refused); at most
`max_bytes` bytes; a key repeated in one object is refused (`object_pairs_hook`: Python's `json` would keep
the last, other parsers the first); nesting at most `MAX_DEPTH` arrays / objects deep (deeper input — or a
"bomb" deep enough to exhaust the parser's recursion — is refused, never a `RecursionError`); integers of at
most 4,300 digits (Python's own limit). Every refusal is a `RepositoryError` of one line naming the file.

Trees (`tree_files`): every entry of a checked-out tree is a directory or a plain regular file with one
link; a symbolic link, a hard link, a FIFO, a socket or a device is listed as a finding, never followed or
read; the walk is iterative and held to the layout's tree bounds (`layout.path_problem`). A file is opened
with `O_NOFOLLOW | O_NONBLOCK` and checked to be regular before a byte is read, so a FIFO swapped in meanwhile
cannot block a reader.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import (MAX_SOURCE_FILE_BYTES, SOURCE, SUBMISSION_JSON, RepositoryError, sha256,
                                           submission_dir, tree_digest)

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "folder_digests", "loads", "read_bytes", "read_json", "tree_files"]

MAX_DEPTH = 32  # a Result nests 5 deep (robustness curves: 6); records and metadata less
MAX_JSON_BYTES = 16 << 20  # a Result's cap (`layout.MAX_RESULT_BYTES`)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} appears twice in one object")
        out[k] = v
    return out


def _depth(value: Any) -> int:
    """How many arrays / objects deep `value` nests (iteratively: no recursion to exhaust)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            todo += [(x, d + 1) for x in v.values()]
        elif isinstance(v, list):
            deepest = max(deepest, d)
            todo += [(x, d + 1) for x in v]
    return deepest


def loads(data: bytes, where: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """`data` parsed under the module's rules; `RepositoryError` ("<where>: ...") when it breaks one."""
    if len(data) > max_bytes:
        raise RepositoryError(f"{where}: {len(data):,} bytes, more than the {max_bytes:,} allowed")
    if data.startswith(b"\xef\xbb\xbf"):
        raise RepositoryError(f"{where}: starts with a byte-order mark; write plain UTF-8 JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RepositoryError(f"{where}: not UTF-8 (byte {exc.start}); write UTF-8 JSON") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise RepositoryError(f"{where}: nested deeper than the {MAX_DEPTH} levels allowed") from None
    except ValueError as exc:  # JSONDecodeError, a duplicate key, an integer over 4,300 digits
        raise RepositoryError(f"{where}: not valid JSON ({' '.join(str(exc).split())[:160]})") from None
    if _depth(value) > MAX_DEPTH:
        raise RepositoryError(f"{where}: nested deeper than the {MAX_DEPTH} levels allowed")
    return value


def read_bytes(path: Path, where: str, max_bytes: int) -> bytes:
    """The bytes of the regular file `path` (not followed through a link; at most `max_bytes`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise RepositoryError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise RepositoryError(f"{where}: not a plain file")
        if st.st_size > max_bytes:
            raise RepositoryError(f"{where}: {st.st_size:,} bytes, more than the {max_bytes:,} allowed")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise RepositoryError(f"{where}: more than the {max_bytes:,} bytes allowed")
    return data


def read_json(path: Path, where: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """`loads` of the file at `path`."""
    return loads(read_bytes(path, where, max_bytes), where, max_bytes)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def tree_files(root: Path) -> tuple[dict[str, Path], list[str]]:
    """({path relative to `root`: file} of every plain regular file, [one finding per other entry]).
    Nothing is followed: a linked directory is a finding, and what it points at is never listed. The walk is
    iterative (a stack of folders, no recursion) and bounded (`layout.path_problem`: an entry deeper or longer than
    the tree bounds is one finding and is not entered; past `layout.MAX_TREE_ENTRIES` entries, one finding and no
    more)."""
    from leaderboard.repository.layout import MAX_TREE_ENTRIES, path_problem, printable

    files: dict[str, Path] = {}
    bad: list[str] = []
    if not root.is_dir():
        return files, bad
    seen, todo = 0, [(root, "")]
    while todo:
        here, prefix = todo.pop()
        try:
            names = sorted(os.listdir(here))
        except OSError as exc:
            bad.append(printable(f"{prefix or '.'}: cannot be listed ({exc.strerror or exc})"))
            continue
        for name in names:
            rel = prefix + name
            seen += 1
            if seen > MAX_TREE_ENTRIES:
                bad.append(printable(f"{rel}: and every entry after it: more than the {MAX_TREE_ENTRIES:,} entries a "
                                     "results repository may hold; not read"))
                return dict(sorted(files.items())), bad
            p = here / name
            st = os.lstat(p)
            why = path_problem(rel)
            if why:
                bad.append(printable(f"{rel}: {why.removesuffix('; skipped')}; left out"))
            elif stat.S_ISDIR(st.st_mode):
                todo.append((p, rel + "/"))
            elif not stat.S_ISREG(st.st_mode):
                bad.append(printable(f"{rel}: {_kind(st.st_mode)}; a results repository holds plain files only"))
            elif st.st_nlink > 1:
                bad.append(printable(f"{rel}: a hard link ({st.st_nlink} names for one file); a results repository "
                                     "holds plain files only"))
            else:
                files[rel] = p
    return dict(sorted(files.items())), sorted(bad)


def folder_digests(tree: Path, name: str, code_hash: str) -> tuple[str | None, str | None]:
    """(digest of `source/` — `tree_digest` of its plain files keyed `source/<path>` —, sha256 of
    `submission.json`) of the folder `results/<name>/<code_hash>`; None for either when it holds anything but
    plain files or cannot be read (a verification record then never matches)."""
    folder = tree / submission_dir(name, code_hash)
    try:
        files, bad = tree_files(folder / SOURCE)
        source = None if bad or not files else tree_digest(
            {f"{SOURCE}/{rel}": read_bytes(p, rel, MAX_SOURCE_FILE_BYTES) for rel, p in files.items()})
    except (RepositoryError, OSError):
        source = None
    try:
        meta: str | None = sha256(read_bytes(folder / SUBMISSION_JSON, SUBMISSION_JSON, 1 << 20))
    except (RepositoryError, OSError):
        meta = None
    return source, meta
