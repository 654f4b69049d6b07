"""Per-instance output cache: one SQLite file per (track, resource, model, submission + parameters).

Every finished instance is committed as soon as its batch is done (SQLite transactions: a killed
run leaves only whole rows), so a rerun continues where it stopped and a finished run is not
recomputed. The file records the content key — resource revision, model hash, submission hash,
parameters, seed, split — and refuses to be used with a different one (`--overwrite` starts anew).

Damage (a disk error, a copy cut short, a stray write) never takes a run down and never changes a
number. The cache checks its file
* on open: the file must be an SQLite database (a garbled header is "not a database"), pass
  `PRAGMA quick_check` (b-tree pages, cell and overflow-chain structure; ~3 ms for a 4 MB cache of
  2,000 maps, linear in the file), hold the two tables with their columns and a readable key (a meta
  table whose values are JSON);
* on every read and write: a query that fails with SQLite's corruption errors (`SQLITE_CORRUPT*`,
  `SQLITE_NOTADB`) is damage found mid-run;
* per row: every stored output carries a CRC-32 over its shape header and compressed array (on top
  of zlib's own Adler-32), must decode to a finite float32 array of the recorded shape, and its
  flags must be consistent (an `ok` row has an array, a failed row has a reason).
A damaged *file* is moved aside, never deleted (it is the user's work): renamed
`<name>.damaged-<UTC time>` together with its `-wal` / `-shm` side files. One warning line says
what was found and where the file went; the rows that can still be read, decode and belong to the
same key are copied into a fresh cache, and everything else is recomputed by the run. A damaged
*row* is left out of `done()` and `get()`, so that instance alone is recomputed (`put` replaces it).

Not damage: a cache made for a different key (a one-line `CacheError` naming `--overwrite`, as
before) and a file another process is writing (WAL mode lets two runs share one cache; a lock is
waited for, `BUSY_TIMEOUT_S`, and never taken for corruption).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from benchmark.errors import CacheError, StorageError
from benchmark.progress import console
from benchmark.store.storage import storage_problem

BUSY_TIMEOUT_S = 120.0  # how long a write waits for another process's transaction to end
COLUMNS = {"meta": ["k", "v"], "outputs": ["instance", "ok", "array", "reason", "seconds"]}
_MAGIC = b"X2"  # blob format 2: magic, CRC-32, shape header, zlib data (format 1 began with the header length)
_SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass
class Entry:
    """One instance's cached output: its array when `ok`, else None and the failure `reason`;
    `seconds` is its share of its batch's wall time."""

    instance: str
    ok: bool
    array: np.ndarray | None
    reason: str
    seconds: float


class _BadRow(ValueError):
    """A stored row that does not decode (its instance is recomputed)."""


def _encode(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a, dtype=np.float32)
    header = json.dumps(list(a.shape)).encode()
    body = len(header).to_bytes(2, "little") + header + zlib.compress(a.tobytes(), 1)
    return _MAGIC + zlib.crc32(body).to_bytes(4, "little") + body


def _decode(b: Any) -> np.ndarray:
    """The array of a blob; `_BadRow` when it is not one `_encode` wrote (checksum, header, size,
    non-finite values — the runner stores only finite arrays)."""
    if not isinstance(b, bytes) or len(b) < 2:
        raise _BadRow("no array blob")
    if b[:2] == _MAGIC:
        if len(b) < 8 or zlib.crc32(b[6:]) != int.from_bytes(b[2:6], "little"):
            raise _BadRow("checksum mismatch")
        b = b[6:]
    try:
        n = int.from_bytes(b[:2], "little")
        shape = json.loads(b[2 : 2 + n])
        if not (isinstance(shape, list) and len(shape) <= 8 and all(type(d) is int and d >= 0 for d in shape)):
            raise _BadRow(f"shape header {shape!r} is not a list of sizes")
        raw = zlib.decompress(b[2 + n :])
    except (ValueError, zlib.error) as exc:  # JSON / UTF-8 / zlib errors are all garbled bytes
        raise _BadRow(f"does not decode ({type(exc).__name__})") from exc
    if len(raw) != 4 * math.prod(shape):
        raise _BadRow(f"{len(raw)} bytes for shape {shape}")
    arr = np.frombuffer(raw, dtype=np.float32).reshape(shape)
    if not np.isfinite(arr).all():
        raise _BadRow("non-finite values")
    return arr


def _entry(row: tuple, decode: bool = True) -> Entry:
    """A stored row as an `Entry`; `_BadRow` when its fields are inconsistent or do not decode.
    `decode=False` (for `done()`) checks a format-2 blob by its CRC only: a blob whose CRC matches is
    byte for byte what `_encode` wrote, so it decodes (the array is then left out of the Entry)."""
    inst, ok, blob, reason, sec = row
    if not isinstance(inst, str) or ok not in (0, 1):
        raise _BadRow("malformed instance id or flag")
    if not isinstance(sec, (int, float)) or not math.isfinite(sec) or sec < 0:
        raise _BadRow("malformed time")
    if not isinstance(reason, str) or (not ok and (blob is not None or not reason)):
        raise _BadRow("malformed failure reason")
    if ok and not decode and isinstance(blob, bytes) and blob[:2] == _MAGIC and len(blob) >= 8:
        if zlib.crc32(blob[6:]) != int.from_bytes(blob[2:6], "little"):
            raise _BadRow("checksum mismatch")
        return Entry(inst, True, None, reason, float(sec))
    return Entry(inst, bool(ok), _decode(blob) if ok else None, reason, float(sec))


def is_damage(exc: BaseException) -> bool:
    """True for SQLite's "this file is corrupt" errors; False for locks, I/O, permissions, misuse."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_FORMAT"))
    text = str(exc)
    return "malformed" in text or "not a database" in text


class _Damaged(Exception):
    """Internal: the open file is damaged (message = the reason)."""


class OutputCache:
    """The cache of one (track, resource, model, submission + parameters, seed, split) run.

    `done()` — ids with a valid stored output; `put(entries)` — store one batch (one transaction);
    `get(ids)` — the stored entries of `ids`; `close()`. `moved` lists the damaged files this object
    moved aside (normally empty)."""

    def __init__(self, path: Path, key: dict[str, Any], overwrite: bool = False) -> None:
        self.path = Path(path)
        self.key = key
        self.moved: list[Path] = []
        self._confirmed: set[str] = set()  # ids validated by done() or stored by put() through this object
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if overwrite:
            for p in [self.path, *(self._side(self.path, s) for s in _SIDE_FILES)]:
                p.unlink(missing_ok=True)
        try:
            self.db = self._open()
        except _Damaged as exc:
            self.db = self._set_aside(str(exc))

    # -- opening -------------------------------------------------------------------------------
    @staticmethod
    def _side(path: Path, suffix: str) -> Path:
        return path.with_name(path.name + suffix)

    def _connect(self) -> sqlite3.Connection:
        """A connection in WAL mode. Switching a fresh file to WAL needs a lock that SQLite does not wait
        for (no busy handler: "database is locked" at once while another process opens the same new
        file), so that one statement is retried until the busy timeout."""
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        deadline, pause = time.monotonic() + BUSY_TIMEOUT_S, 0.01
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                return db
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    db.close()
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def _open(self) -> sqlite3.Connection:
        """Connect and check the file (module docstring); `_Damaged` if it is damaged, `CacheError`
        if it belongs to another key or cannot be opened at all."""
        db = None
        try:
            db = self._connect()
            check = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
            if check != ["ok"]:
                raise _Damaged("integrity check: " + "; ".join(map(str, check))[:200])
            tables = {name: [c[1] for c in db.execute(f"PRAGMA table_info({name})")] for name in COLUMNS}
            for name, cols in tables.items():
                if cols and cols != COLUMNS[name]:
                    raise _Damaged(f"table {name} has columns {cols}, expected {COLUMNS[name]}")
            db.execute("BEGIN IMMEDIATE")  # one process at a time creates the tables and writes the key
            try:
                db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
                db.execute("CREATE TABLE IF NOT EXISTS outputs (instance TEXT PRIMARY KEY, ok INTEGER, "
                           "array BLOB, reason TEXT, seconds REAL)")
                stored = dict(db.execute("SELECT k, v FROM meta"))
                if not stored:
                    if db.execute("SELECT 1 FROM outputs LIMIT 1").fetchone():
                        raise _Damaged("its key (meta table) is missing")
                    db.executemany("INSERT INTO meta VALUES (?, ?)",
                                   [(k, json.dumps(v, sort_keys=True)) for k, v in self.key.items()])
                db.execute("COMMIT")
            except BaseException:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            self._check_key(stored)
            return db
        except sqlite3.DatabaseError as exc:
            if db is not None:
                db.close()
            if is_damage(exc):
                raise _Damaged(str(exc)) from exc
            problem = self._storage(exc)
            if problem:
                raise StorageError(f"cache {self.path} cannot be used ({exc}): {problem}") from exc
            raise CacheError(f"cache {self.path} cannot be used ({exc}); check the file's permissions and "
                             f"disk, or rerun with --overwrite") from exc
        except BaseException:
            if db is not None:
                db.close()
            raise

    def _check_key(self, stored: dict) -> None:
        if not stored:
            return
        try:
            values = {k: json.loads(v) for k, v in stored.items()}
        except (TypeError, ValueError) as exc:
            raise _Damaged("its key (meta table) is not readable") from exc
        diff = [k for k, v in self.key.items() if stored.get(k) != json.dumps(v, sort_keys=True)]
        if diff:
            what = ", ".join(f"{k} {values.get(k)!r} → {self.key[k]!r}" for k in diff)
            raise CacheError(
                f"cache {self.path.name} was made for a different {'/'.join(diff)} ({what}); "
                f"rerun with --overwrite to recompute"
            )

    # -- damage ------------------------------------------------------------------------------------
    def _set_aside(self, reason: str) -> sqlite3.Connection:
        """Move the damaged file (and its side files) aside, start a fresh cache holding the rows that
        can still be read, say so in one line, and return the fresh connection."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        free = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while free.exists():
            n += 1
            free = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        target: Path | None = free
        try:
            os.replace(self.path, free)
        except FileNotFoundError:  # another process moved it first; its side files went with it
            target = None
        if target is not None:
            self.moved.append(target)
            for s in _SIDE_FILES:
                if self._side(self.path, s).exists():
                    os.replace(self._side(self.path, s), self._side(target, s))
        rows = self._salvage(target) if target is not None else []
        try:
            db = self._open()
        except _Damaged as exc:  # cannot happen for a fresh file unless the disk itself fails
            raise CacheError(f"cache {self.path} is damaged again right after a fresh start ({exc}); "
                             "check the disk") from exc
        if rows:
            with _transaction(db):
                db.executemany("INSERT OR IGNORE INTO outputs VALUES (?, ?, ?, ?, ?)", rows)
        where = f"moved to {target.name}" if target is not None else "already moved aside by another run"
        console.print(f"warning: cache {self.path} was damaged ({reason}); {where}; {len(rows)} readable "
                      f"outputs kept, the missing ones will be recomputed", markup=False, highlight=False,
                      soft_wrap=True)
        return db

    def _salvage(self, damaged: Path) -> list[tuple]:
        """The rows of a damaged file that still read and decode, if its key is readable and ours.
        Read-only (`immutable`: the file is not touched); the table is scanned from both ends, so a
        damaged page in the middle costs only the rows on it."""
        rows: dict[str, tuple] = {}
        try:
            src = sqlite3.connect(f"{damaged.resolve().as_uri()}?immutable=1", uri=True)
        except sqlite3.Error:
            return []
        try:
            try:
                stored = dict(src.execute("SELECT k, v FROM meta"))
                if not stored or any(stored.get(k) != json.dumps(v, sort_keys=True) for k, v in self.key.items()):
                    return []
            except sqlite3.Error:
                return []
            for order in ("ASC", "DESC"):
                try:
                    for row in src.execute("SELECT instance, ok, array, reason, seconds FROM outputs "
                                           f"ORDER BY rowid {order}"):
                        try:
                            _entry(row, decode=False)
                        except _BadRow:
                            continue
                        rows.setdefault(row[0], row)
                except sqlite3.Error:
                    pass
        finally:
            src.close()
        return list(rows.values())

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        """Damage found mid-run: set the file aside and continue on a fresh one (see `_set_aside`)."""
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        self.db = self._set_aside(f"found during the run: {exc}")

    def _error(self, exc: sqlite3.DatabaseError) -> CacheError | StorageError:
        if getattr(exc, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            return CacheError(f"cache {self.path} stayed locked by another process for {BUSY_TIMEOUT_S:g} s "
                              f"({exc}); wait for the other run to finish, then rerun")
        problem = self._storage(exc)
        if problem:
            return StorageError(f"cache {self.path} failed ({exc}): {problem}")
        return CacheError(f"cache {self.path} failed ({exc}); check the disk, or rerun with --overwrite")

    def _storage(self, exc: sqlite3.Error) -> str | None:
        """Advice when SQLite failed because the disk is full or the folder is not writable (neither
        is damage, and --overwrite would not help)."""
        import errno
        import shutil

        name = getattr(exc, "sqlite_errorname", "") or ""
        if name == "SQLITE_FULL" or "disk is full" in str(exc):
            return storage_problem(self.path, errno.ENOSPC)
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")) \
                or "readonly database" in str(exc):
            return storage_problem(self.path, errno.EACCES)
        if name.startswith("SQLITE_IOERR"):
            try:
                if shutil.disk_usage(self.path.parent).free < 1 << 20:  # a write cut short by a full disk
                    return storage_problem(self.path, errno.ENOSPC)
            except OSError:
                pass
        return None

    def _rows(self, sql: str, params: Iterable = ()) -> list[tuple]:
        """All rows of a query; on damage, recover once and query the fresh cache."""
        for attempt in range(2):
            try:
                return self.db.execute(sql, list(params)).fetchall()
            except sqlite3.DatabaseError as exc:
                if attempt or not is_damage(exc):
                    raise self._error(exc) from exc
                self._recover(exc)
        raise AssertionError("unreachable")

    def _warn_rows(self, bad: list[tuple[str, str]]) -> None:
        if bad:
            first = ", ".join(f"{i!r} ({why})" for i, why in bad[:3])
            console.print(f"warning: cache {self.path}: {len(bad)} stored output(s) did not decode and will be "
                          f"recomputed: {first}{' …' if len(bad) > 3 else ''}", markup=False, highlight=False,
                          soft_wrap=True)

    # -- the interface the runner uses ------------------------------------------------------------
    def done(self) -> set[str]:
        """Ids whose stored output is valid (a row that does not decode is left out: recomputed)."""
        ids, bad = self._scan()
        self._warn_rows(bad)
        self._confirmed |= ids
        return ids

    def _scan(self, page: int = 512) -> tuple[set[str], list[tuple[str, str]]]:
        """(valid ids, [(id, why)] of rows that do not decode), reading `page` rows at a time in rowid
        order (the blobs of a large cache are never all in memory); restarted if the file was set aside
        during the scan (the fresh cache numbers its rows anew)."""
        while True:
            db, last = self.db, -(2**63)
            ids: set[str] = set()
            bad: list[tuple[str, str]] = []
            while True:
                rows = self._rows("SELECT rowid, instance, ok, array, reason, seconds FROM outputs WHERE rowid > ? "
                                  "ORDER BY rowid LIMIT ?", (last, page))
                if self.db is not db or not rows:
                    break
                for row in rows:
                    try:
                        ids.add(_entry(row[1:], decode=False).instance)
                    except _BadRow as exc:
                        bad.append((str(row[1]), str(exc)))
                last = rows[-1][0]
            if self.db is db:
                return ids, bad

    def put(self, entries: Iterable[Entry]) -> None:
        """Store one batch in one transaction (replacing rows of the same ids)."""
        rows = [(e.instance, int(e.ok), _encode(e.array) if e.ok and e.array is not None else None, e.reason,
                 e.seconds) for e in entries]
        for attempt in range(2):
            try:
                with _transaction(self.db):
                    self.db.executemany("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?)", rows)
                break
            except sqlite3.DatabaseError as exc:
                if attempt or not is_damage(exc):
                    raise self._error(exc) from exc
                self._recover(exc)
        self._confirmed.update(r[0] for r in rows)

    def get(self, instances: Iterable[str]) -> dict[str, Entry]:
        """The stored entries of `instances` that exist and decode.

        An id this object reported in `done()` or stored with `put()` that no longer reads (the file
        was damaged while the run went on and the row was lost with it) raises `CacheError`: the
        caller cannot score it, and running the same command again recomputes exactly what is lost."""
        out: dict[str, Entry] = {}
        bad: list[tuple[str, str]] = []
        ids = list(instances)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT instance, ok, array, reason, seconds FROM outputs WHERE instance IN ({marks})"
            for row in self._rows(q, chunk):
                try:
                    out[row[0]] = _entry(row)
                except _BadRow as exc:
                    bad.append((str(row[0]), str(exc)))
        self._warn_rows(bad)
        lost = [i for i in ids if i in self._confirmed and i not in out]
        if lost:
            raise CacheError(f"cache {self.path}: {len(lost)} output(s) stored earlier in this run can no longer "
                             f"be read (e.g. {lost[0]!r}; the file was damaged during the run); run the same "
                             f"command again to recompute them")
        return out

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()


class _transaction:
    """`BEGIN IMMEDIATE … COMMIT` (ROLLBACK on error) on an autocommit connection: the write lock is
    taken up front, so a concurrent writer waits (busy timeout) instead of failing mid-transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, typ, exc, tb) -> None:
        if typ is None:
            self.db.execute("COMMIT")
        else:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass


def read_only(path: Path, ids: list[str]) -> dict[str, Entry]:
    """The cached entries of `ids` that read back (the row checks above), the file opened read-only: nothing is
    created, changed or moved aside (what `xaibench verify` and the readers of a Result's maps use). A row
    that does not decode is left out; `XaibenchError` when the file is gone or is not a readable cache."""
    from benchmark.errors import XaibenchError

    if not Path(path).exists():
        raise XaibenchError(f"its cache {path} is gone")
    out = {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                q = ("SELECT instance, ok, array, reason, seconds FROM outputs WHERE instance IN "
                     f"({','.join('?' * len(chunk))})")
                for row in db.execute(q, chunk):
                    try:
                        out[row[0]] = _entry(row)
                    except _BadRow:
                        pass  # the caller finds it missing
        finally:
            db.close()
    except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
        raise XaibenchError(f"its cache {path} is unreadable ({exc})") from None
    return out
