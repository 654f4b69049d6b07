"""Advice for a write that failed for want of room or rights: what is full or not writable, and what
would help (free space, whose folder it is, XAIBENCH_HOME). The CLI, the runner and the output cache
turn such an `OSError` into a one-line `StorageError` with it."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from benchmark.errors import StorageError

__all__ = ["fmt_bytes", "storage_error", "storage_problem"]


def fmt_bytes(n: float) -> str:
    """`1.5 GiB`, `11.75 GiB`, `64 MiB`, `12 KiB` (at most two decimals, none when whole)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if abs(n) >= 1 << shift:
            return f"{round(n / (1 << shift), 2):g} {unit}"
    return f"{int(n)} B"


def storage_problem(path: str | os.PathLike[str], code: int) -> str | None:
    """What would help when writing `path` failed with errno `code`, or None when it is not a disk-full
    or permission error: for a full disk its free space and what can be deleted or moved; for a
    folder that is not writable, whose it is and the ways round; for a read-only file system, where
    to write instead."""
    path = Path(path)
    near = path
    while not near.exists() and near != near.parent:  # the nearest folder that exists
        near = near.parent
    try:
        from benchmark.resources import data_home  # lazy: the resources package loads pyarrow

        home: Path | None = data_home()
    except Exception:  # noqa: BLE001 - advice must never fail
        home = None
    in_home = home is not None and (path == home or home in path.parents)
    if code in (errno.ENOSPC, errno.EDQUOT):
        try:
            du = shutil.disk_usage(near)
            room = f" ({fmt_bytes(du.free)} free of {fmt_bytes(du.total)})"
        except OSError:
            room = ""
        what = (f"free space on it (caches under {home}/cache can be deleted: their outputs are recomputed; so can "
                f"scratch folders under {home}/scratch), or set XAIBENCH_HOME to a folder on a disk with room and "
                f"move {home} there" if in_home else "free space on it, or write to a folder on a disk with room")
        return f"the disk holding {near} is full{room}: {what}"
    try:
        read_only = bool(os.statvfs(near).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if code == errno.EROFS or (read_only and code in (errno.EACCES, errno.EPERM)):
        where = "set XAIBENCH_HOME to a writable folder" if in_home else "write to a writable folder"
        return f"{near} is on a read-only file system: {where}"
    if code in (errno.EACCES, errno.EPERM):
        try:
            st = near.stat()
            whose = f"; {near} belongs to uid {st.st_uid}, mode {st.st_mode & 0o7777:o}"
        except OSError:
            whose = ""
        other = "set XAIBENCH_HOME to a folder you can write" if in_home else "write to a folder you can write"
        return (f"this user (uid {os.geteuid()}) may not write there{whose}: run as its owner, give this user "
                f"write access (chown -R / chmod -R u+w {near}), or {other}")
    return None


def storage_error(exc: OSError, path: str | os.PathLike[str], what: str = "") -> StorageError | None:
    """`exc` (writing `what` at `path`; the error's own file name wins) as a one-line StorageError with
    advice, or None when it is not a disk-full or permission error (then re-raise the original)."""
    target = exc.filename or path
    problem = storage_problem(target, exc.errno) if exc.errno else None
    if problem is None:
        return None
    return StorageError(f"cannot write {what + ' ' if what else ''}{target} ({exc.strerror}): {problem}")
