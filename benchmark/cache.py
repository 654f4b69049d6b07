"""Per-instance output cache: one SQLite file per (track, resource, model, submission + parameters).

Every finished instance is committed as soon as its batch is done (SQLite transactions: a killed
run leaves only whole rows), so a rerun continues where it stopped and a finished run is not
recomputed. The file records the content key — resource revision, model hash, submission hash,
parameters, seed, split — and refuses to be used with a different one (`--overwrite` starts anew).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from benchmark.errors import CacheError


@dataclass
class Entry:
    instance: str
    ok: bool
    array: np.ndarray | None
    reason: str
    seconds: float


def _encode(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a, dtype=np.float32)
    header = json.dumps(list(a.shape)).encode()
    return len(header).to_bytes(2, "little") + header + zlib.compress(a.tobytes(), 1)


def _decode(b: bytes) -> np.ndarray:
    n = int.from_bytes(b[:2], "little")
    shape = tuple(json.loads(b[2 : 2 + n]))
    return np.frombuffer(zlib.decompress(b[2 + n :]), dtype=np.float32).reshape(shape)


class OutputCache:
    def __init__(self, path: Path, key: dict[str, Any], overwrite: bool = False) -> None:
        self.path = Path(path)
        self.key = key
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if overwrite and self.path.exists():
            self.path.unlink()
        try:
            self.db = sqlite3.connect(self.path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS outputs (instance TEXT PRIMARY KEY, ok INTEGER, array BLOB,"
                " reason TEXT, seconds REAL)"
            )
            stored = dict(self.db.execute("SELECT k, v FROM meta"))
        except sqlite3.DatabaseError as exc:
            raise CacheError(f"cache {self.path} is unreadable ({exc}); rerun with --overwrite") from exc
        if not stored:
            with self.db:
                self.db.executemany("INSERT INTO meta VALUES (?, ?)",
                                    [(k, json.dumps(v, sort_keys=True)) for k, v in key.items()])
        else:
            diff = [k for k, v in key.items() if stored.get(k) != json.dumps(v, sort_keys=True)]
            if diff:
                what = ", ".join(f"{k} {json.loads(stored[k]) if k in stored else None!r} → {key[k]!r}" for k in diff)
                raise CacheError(
                    f"cache {self.path.name} was made for a different {'/'.join(diff)} ({what}); "
                    f"rerun with --overwrite to recompute"
                )

    def done(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT instance FROM outputs")}

    def put(self, entries: Iterable[Entry]) -> None:
        rows = [(e.instance, int(e.ok), _encode(e.array) if e.ok else None, e.reason, e.seconds) for e in entries]
        with self.db:  # one transaction per batch
            self.db.executemany("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?)", rows)

    def get(self, instances: Iterable[str]) -> dict[str, Entry]:
        out = {}
        ids = list(instances)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            q = f"SELECT instance, ok, array, reason, seconds FROM outputs WHERE instance IN ({','.join('?' * len(chunk))})"
            for inst, ok, blob, reason, sec in self.db.execute(q, chunk):
                out[inst] = Entry(inst, bool(ok), _decode(blob) if ok else None, reason, sec)
        return out

    def close(self) -> None:
        self.db.close()
