"""Two processes opening the same new cache at the same moment: both open it (SQLite answers the
switch to WAL with "database is locked" at once, without waiting; the cache retries it)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path


def _open(path: str, barrier, queue) -> None:
    from benchmark.store.cache import OutputCache

    barrier.wait()
    try:
        cache = OutputCache(Path(path), {"resource": "r", "seed": 0})
        cache.done()
        cache.close()
        queue.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the test
        queue.put(f"{type(exc).__name__}: {exc}")


def test_simultaneous_opens_of_a_new_cache(tmp_path):
    ctx = mp.get_context("fork")
    failures = []
    for k in range(12):
        barrier, queue = ctx.Barrier(2), ctx.Queue()
        path = str(tmp_path / f"c{k}.sqlite")
        procs = [ctx.Process(target=_open, args=(path, barrier, queue)) for _ in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        failures += [r for r in (queue.get(timeout=10) for _ in procs) if r != "ok"]
    assert failures == []
