"""The scratch folder's accounting and cleaning (benchmark.isolation.scratch) on hostile content, and the seccomp
filter that keeps `fallocate` from outrunning the accounting (benchmark.isolation.seccomp)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmark.isolation.scratch import BLOCK, MAX_DEPTH, Guard, clean, descendants, empty, measure, unlinked_open


def deep(root: Path, levels: int, name: str = "d" * 200) -> None:
    """`levels` nested folders below `root`, made relative to each parent's file descriptor, so the
    path grows far past PATH_MAX (4096) — what a submission can make with mkdirat."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("leaf", os.O_CREAT | os.O_WRONLY, dir_fd=fd), "wb") as fh:
            fh.write(b"x" * 10)
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def test_usage_charges_blocks_and_entries_once(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 100_000)
    os.link(tmp_path / "a", tmp_path / "b")  # the same inode: charged once
    for k in range(10):
        (tmp_path / f"empty-{k}").touch()  # no blocks, still an inode: a block each
    use = measure(tmp_path, None)
    blocks = os.stat(tmp_path / "a").st_blocks * 512
    assert use.entries == 1 + 2 + 10
    assert use.bytes == os.stat(tmp_path).st_blocks * 512 + blocks + 10 * BLOCK
    assert not use.over


def test_usage_stops_early_and_never_follows_a_symlink(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(b"y" * (1 << 20))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "to-outside").symlink_to(outside)
    (scratch / "to-root").symlink_to("/")
    assert measure(scratch, None).bytes < 4 * BLOCK  # the links themselves, not what they point to
    for k in range(100):
        (scratch / f"f{k}").touch()
    use = measure(scratch, 20 * BLOCK)
    assert use.over == "is over its limit" and use.entries <= 21


def test_deep_nesting_is_over_the_limit_and_is_removed(tmp_path):
    deep(tmp_path, 3 * MAX_DEPTH)  # ≈ 38,000 characters of path
    use = measure(tmp_path, 1 << 30)
    assert "deeper than" in use.over
    t0 = time.monotonic()
    assert empty(tmp_path) == []
    assert list(tmp_path.iterdir()) == [] and time.monotonic() - t0 < 30


def test_unreadable_and_unwritable_folders_are_counted_and_removed(tmp_path):
    locked = tmp_path / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "data").write_bytes(b"z" * 50_000)
    (locked / "inner").chmod(0o000)
    locked.chmod(0o500)
    try:
        assert measure(tmp_path, None).bytes >= 50_000  # given back its owner's rights to be read
        assert empty(tmp_path) == []
        assert list(tmp_path.iterdir()) == []
    finally:
        for p in (locked, locked / "inner"):
            if p.exists():
                p.chmod(0o700)


def test_cleaning_leaves_what_links_point_to(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    scratch = tmp_path / "scratch"
    (scratch / "sub").mkdir(parents=True)
    (scratch / "sub" / "link").symlink_to(outside)
    (scratch / "link-file").symlink_to(outside / "keep.txt")
    assert clean(scratch) == "emptied"
    assert (outside / "keep.txt").read_text() == "mine" and list(scratch.iterdir()) == []


def test_many_tiny_files_are_bounded_in_time(tmp_path):
    """50,000 empty files (a bound of 8 MiB admits 2,048): the walk stops at the bound, the folder
    is emptied, both in bounded time."""
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for k in range(50_000):
            os.close(os.open(f"f{k}", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    finally:
        os.close(fd)
    t0 = time.monotonic()
    use = measure(tmp_path, 8 << 20)
    walked = time.monotonic() - t0
    assert use.over and use.entries <= (8 << 20) // BLOCK + 1
    t0 = time.monotonic()
    assert empty(tmp_path) == []
    removed = time.monotonic() - t0
    print(f"\nwalk to the bound: {walked * 1000:.0f} ms; 50,000 files removed in {removed:.2f} s")
    assert walked < 5 and removed < 60 and not any(tmp_path.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="immutable files need root (chattr +i)")
def test_what_cannot_be_removed_is_moved_aside(tmp_path):
    scratch = tmp_path / "scratch" / "sub"
    scratch.mkdir(parents=True)
    stuck = scratch / "stuck"
    stuck.write_text("x")
    if subprocess.run(["chattr", "+i", str(stuck)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i does not work on this file system")
    try:
        how = clean(scratch)
        assert "moved aside" in how
        (aside,) = [p for p in scratch.parent.iterdir() if p.name.startswith(".over-limit-sub-")]
        assert (aside / "stuck").exists() and scratch.is_dir() and list(scratch.iterdir()) == []
    finally:
        for p in scratch.parent.rglob("stuck"):
            subprocess.run(["chattr", "-i", str(p)], capture_output=True)


def test_deleted_files_held_open_are_counted(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", f"""
import os, sys, time
fd = os.open({str(tmp_path / 'hidden')!r}, os.O_CREAT | os.O_RDWR)
os.write(fd, b'h' * (3 << 20))
os.unlink({str(tmp_path / 'hidden')!r})
print('ready', flush=True)
time.sleep(30)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert list(tmp_path.iterdir()) == []
        seen: set = set()
        hidden = unlinked_open(descendants(child.pid), os.stat(tmp_path).st_dev, seen)
        assert hidden >= 3 << 20
        killed = threading.Event()
        guard = Guard([(tmp_path, 1 << 20, "its scratch folder", "--scratch-limit")],
                      lambda: descendants(child.pid), killed.set)
        assert "deleted files it keeps open" in guard.check() and killed.is_set()
    finally:
        child.kill()
        child.wait()


def test_guard_kills_a_writer_between_batches(tmp_path):
    """A process that keeps writing is stopped by the guard's own thread, the overshoot bounded by
    what it wrote in one interval (printed)."""
    child = subprocess.Popen([sys.executable, "-c", f"""
import os
for k in range(64):  # at most 256 MiB, even if nothing stopped it
    with open(os.path.join({str(tmp_path)!r}, f'blob-{{k}}'), 'wb') as fh:
        fh.write(b'x' * (4 << 20))
"""])
    limit = 16 << 20
    guard = Guard([(tmp_path, limit, "its scratch folder", "--scratch-limit")], lambda: [child.pid],
                  child.kill, interval=0.05).start()
    try:
        child.wait(timeout=120)
    finally:
        guard.stop()
    written = sum(p.stat().st_blocks * 512 for p in tmp_path.iterdir())
    print(f"\nstopped at {written / (1 << 20):.0f} MiB for a bound of {limit >> 20} MiB")
    assert guard.reason == "its scratch folder is over its limit (16 MiB, --scratch-limit)"
    assert child.returncode != 0 and written < 256 << 20


def test_fallocate_is_refused_and_posix_fallocate_still_works(tmp_path):
    code = f"""
import ctypes, os, threading, numpy
from benchmark.isolation import seccomp
assert seccomp.install() is None
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open({str(tmp_path / 'f')!r}, os.O_CREAT | os.O_RDWR)
out = []
def raw():
    out.append((libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(1 << 30)), ctypes.get_errno()))
raw()
t = threading.Thread(target=raw); t.start(); t.join()
os.posix_fallocate(fd, 0, 1 << 20)  # glibc writes the blocks instead
print(out, os.fstat(fd).st_size)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[(-1, 95), (-1, 95)] 1048576"  # EOPNOTSUPP, in every thread


def test_the_scratch_note_names_the_bound_when_there_is_one(tmp_path):
    """A folder over its size bound is named with it; one found too deep or unreadable with no size
    bound set (a worker under its own uid) is named without one (never a crash formatting None)."""
    from benchmark.isolation.harness import _scratch_note

    assert _scratch_note(tmp_path, "is over its limit", 1 << 25, "emptied") == \
        f"scratch folder {tmp_path} is over its limit (32 MiB, --scratch-limit): emptied"
    assert _scratch_note(tmp_path, "nests folders deeper than 64 levels", None, "emptied") == \
        f"scratch folder {tmp_path} nests folders deeper than 64 levels: emptied"

