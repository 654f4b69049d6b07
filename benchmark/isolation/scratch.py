"""The size bound of what a submission writes outside its private `/tmp` (its scratch folder), and
the harness's guard over a running worker (that bound, and the memory of all its processes).

A submission's scratch folder (`$XAIBENCH_HOME/scratch/<name>`, `/xaibench/scratch` in the sandbox)
lives on the harness's disk and is kept between runs (L2X keeps its trained selectors there), so it
is the one place where a submission's writes outlive the worker or escape the size-limited tmpfs.
Its bound is enforced by accounting that stops the run (`Guard`):

* **usage** of a folder = Σ over its distinct inodes of max(allocated bytes, 4 KiB): every file,
  folder and symlink costs at least a block, so a million empty files count like 4 GiB and one
  bound covers both bytes and inodes (`measure`); files the worker still holds open after deleting
  them count too (`unlinked_open`, read from `/proc/<pid>/fd` of every process of the worker);
* checked when a worker starts, after every batch and every `interval` seconds while it runs;
  a worker over the bound is SIGKILLed and its instances fail with the reason (the limit named);
* a folder found over its bound is emptied (`empty`) before the next worker starts and after the
  last one ends; what cannot be removed is moved aside to `<scratch root>/.over-limit-*` (marked,
  and named in the warning) and the submission gets a fresh, empty folder.

Hostile content never makes the harness follow it or hang: the walk is by directory file
descriptors (`openat` with `O_NOFOLLOW`: a symlink is counted, never followed, even when the
worker swaps a folder for a link mid-walk), it stops as soon as the bound is passed (so it reads
at most bound / 4 KiB entries), and deletion moves folders nested deeper than `MAX_DEPTH` up to the
top level instead of descending (bounded open files for any depth).

`fallocate` would let a worker allocate a GiB in a fraction of a millisecond, far faster than any
polling can see; the worker's seccomp filter (`benchmark.isolation.seccomp`) refuses it, so allocation goes
at the speed of writing blocks, and the bound can be passed only by what the disk takes in one
poll interval (see docs/isolation.md for the measured overshoot).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Protocol

from benchmark.store.storage import fmt_bytes

BLOCK = 4096  # the least an entry costs (an inode and a block, or a directory entry)
MAX_DEPTH = 64  # deeper nesting counts as over the bound (no real cache nests this deep)
OVER_PREFIX = ".over-limit-"


class _Listing(Protocol):
    """An open folder listing (`os.scandir` of a folder descriptor), closed when the walk leaves it."""

    def __next__(self) -> os.DirEntry[str]: ...

    def close(self) -> None: ...


@dataclass
class Usage:
    """What `measure` found: the charged bytes, the entries seen, and why it counts as over (or "")."""

    bytes: int = 0
    entries: int = 0
    over: str = ""


def _charge(st: os.stat_result) -> int:
    return max(st.st_blocks * 512, BLOCK)


def _open_dir(name: str, dir_fd: int | None) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(name, flags, dir_fd=dir_fd)


def _force_open_dir(name: str, dir_fd: int | None) -> int:
    """Open a folder; one the worker made unreadable (chmod 000) is given back its owner's rights."""
    try:
        return _open_dir(name, dir_fd)
    except PermissionError:
        path_fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            if not stat.S_ISDIR(os.fstat(path_fd).st_mode):
                raise
            os.chmod(f"/proc/self/fd/{path_fd}", 0o700 | (os.fstat(path_fd).st_mode & 0o2070))
        finally:
            os.close(path_fd)
        return _open_dir(name, dir_fd)


def measure(root: Path, limit: int | None, *, group: int | None = None, seen: set | None = None) -> Usage:
    """The usage of `root` (see the module docstring), stopping early once over `limit`.

    `group`: also give every entry to that group with group read/write (folders: setgid, so new
    entries inherit it) — the workers of a root harness run under their own uid and share the group
    (`benchmark.isolation.sandbox`). `seen`: inodes already charged (shared with `unlinked_open`)."""
    use = Usage()
    seen = set() if seen is None else seen
    try:
        top = _force_open_dir(str(root), None)
    except FileNotFoundError:
        return use
    except OSError as exc:
        use.over = f"cannot be read ({exc.strerror})"
        return use
    stack: list[tuple[int, _Listing]] = []
    try:
        st = os.fstat(top)
        seen.add((st.st_dev, st.st_ino))
        use.bytes, use.entries = _charge(st), 1
        if group is not None:
            _share(top, None, st, group)
        stack.append((top, os.scandir(top)))
        while stack:
            fd, it = stack[-1]
            entry = next(it, None)
            if entry is None:
                it.close()
                os.close(fd)
                stack.pop()
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # removed by the worker mid-walk
                continue
            use.entries += 1
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                use.bytes += _charge(st)
            if limit is not None and use.bytes > limit:
                use.over = "is over its limit"
                break
            if group is not None and not stat.S_ISLNK(st.st_mode):
                _share(fd, entry.name, st, group)
            if stat.S_ISDIR(st.st_mode):
                if len(stack) >= MAX_DEPTH:
                    use.over = f"nests folders deeper than {MAX_DEPTH} levels"
                    break
                try:
                    child = _force_open_dir(entry.name, fd)
                except FileNotFoundError:
                    continue
                except OSError as exc:  # e.g. swapped for a symlink mid-walk: ELOOP / ENOTDIR
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        continue
                    use.over = f"holds a folder the harness cannot read ({exc.strerror})"
                    break
                stack.append((child, os.scandir(child)))
    finally:
        for fd, it in stack:
            it.close()
            os.close(fd)
    return use


def _share(dir_fd: int, name: str | None, st: os.stat_result, group: int) -> None:
    """Give one entry to `group` with group read/write (and setgid + search on folders)."""
    # folders: setgid (new entries inherit the group) and group rwx; files: group rw, no set-id bits
    want = (st.st_mode & 0o1777 | 0o2070) if stat.S_ISDIR(st.st_mode) else (st.st_mode & 0o777 | 0o060)
    try:
        if st.st_gid != group:
            if name is None:
                os.chown(dir_fd, -1, group)
            else:
                os.chown(name, -1, group, dir_fd=dir_fd, follow_symlinks=False)
        if want != st.st_mode & 0o7777:
            fd = dir_fd if name is None else os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                if stat.S_ISLNK(os.fstat(fd).st_mode):
                    return
                os.chmod(f"/proc/self/fd/{fd}", want)
            finally:
                if name is not None:
                    os.close(fd)
    except OSError:  # gone meanwhile, or a file system that keeps no owners (the worker then cannot write it)
        pass


def descendants(root_pid: int) -> list[int]:
    """`root_pid` and every process below it (from the parent links in /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def unlinked_open(pids: Iterable[int], dev: int, seen: set) -> int:
    """Bytes of files on device `dev` that these processes hold open after they were deleted (they
    use the disk but are in no folder); inodes in `seen` are not charged again."""
    total = 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if st.st_dev == dev and st.st_nlink == 0 and stat.S_ISREG(st.st_mode) and key not in seen:
                seen.add(key)
                total += _charge(st)
    return total


def empty(root: Path) -> list[str]:
    """Remove everything inside `root` (kept itself); returns what could not be removed (empty list:
    all gone). Never follows a symlink; folders nested deeper than `MAX_DEPTH` are moved up to the
    top level first, so any depth is removed with a bounded number of open files; a folder the
    worker made unreadable or unwritable is given back its owner's rights."""
    failed: list[str] = []
    try:
        top = _force_open_dir(str(root), None)
    except FileNotFoundError:
        return failed
    except OSError as exc:
        return [f"{root}: {exc.strerror}"]
    moved = 0
    try:
        while True:
            again = _empty_pass(top, failed)
            if not again or failed:
                break
            moved += again
            if moved > 10_000_000:  # cannot happen for a real tree; never loop forever
                failed.append("too many nested folders")
                break
    finally:
        os.close(top)
    return failed


def _empty_pass(top: int, failed: list[str]) -> int:
    """One depth-first removal pass below `top`; returns how many deep folders it moved up (another
    pass removes them)."""
    moved = 0
    stack: list[tuple[int, _Listing, str]] = [(top, os.scandir(top), "")]  # (folder fd, its entries, its name)
    try:
        while stack:
            fd, it, name = stack[-1]
            entry = next(it, None)
            if entry is None:  # folder done: close it and remove it from its parent
                it.close()
                stack.pop()
                if stack:
                    os.close(fd)
                    try:
                        os.rmdir(name, dir_fd=stack[-1][0])
                    except FileNotFoundError:
                        pass
                    except OSError as exc:
                        if exc.errno != errno.ENOTEMPTY:  # not empty: the worker is still writing; next pass
                            failed.append(f"{name}: {exc.strerror}")
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if not is_dir:
                try:
                    os.unlink(entry.name, dir_fd=fd)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    _unlink_hard(fd, entry.name, exc, failed)
                continue
            if len(stack) >= MAX_DEPTH:  # too deep to descend with bounded open files: move it up
                try:
                    os.rename(entry.name, f".deep-{os.getpid()}-{time.monotonic_ns()}", src_dir_fd=fd,
                              dst_dir_fd=top)
                    moved += 1
                except OSError as exc:
                    failed.append(f"{entry.name}: {exc.strerror}")
                continue
            try:
                child = _force_open_dir(entry.name, fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                failed.append(f"{entry.name}: {exc.strerror}")
                continue
            stack.append((child, os.scandir(child), entry.name))
    finally:
        for fd, it, _name in stack:
            it.close()
            if fd != top:
                os.close(fd)
    return moved


def _unlink_hard(dir_fd: int, name: str, exc: OSError, failed: list[str]) -> None:
    """A file that would not go: give its folder back its owner's write right and try once more."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        try:
            mode = os.fstat(dir_fd).st_mode & 0o7777
            os.chmod(f"/proc/self/fd/{dir_fd}", mode | 0o700)
            os.unlink(name, dir_fd=dir_fd)
            return
        except FileNotFoundError:
            return
        except OSError as again:
            exc = again
    failed.append(f"{name}: {exc.strerror}")


def clean(folder: Path) -> str:
    """Empty an over-limit scratch folder; returns a phrase for the reason / warning ("emptied", or
    where what could not be removed was moved)."""
    failed = empty(folder)
    if not failed:
        return "emptied"
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = folder.parent / f"{OVER_PREFIX}{folder.name}-{stamp}-{os.getpid()}"
    try:
        os.rename(folder, aside)
    except OSError as exc:
        from benchmark.errors import SubmissionError

        raise SubmissionError(f"scratch folder {folder} is over its limit and cannot be emptied ({failed[0]}) "
                              f"or moved aside ({exc.strerror}); remove it by hand") from None
    folder.mkdir(exist_ok=True)
    return f"could not be emptied ({failed[0]}); moved aside to {aside}"


def resident_bytes(pids: Iterable[int], proportional: bool = False) -> int:
    """Memory the processes hold: the sum of their resident sets, or (`proportional`) of their
    proportional sets (Pss: a page shared by k processes counts 1/k in each — what forked children
    that share their parent's pages really add; slower, as the kernel walks the page tables)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            if proportional:
                with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                    for line in fh:
                        if line.startswith(b"Pss:"):
                            total += int(line.split()[1]) * 1024
                            break
            else:
                with open(f"/proc/{pid}/statm", "rb") as fh:
                    total += int(fh.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


class Guard:
    """Watches a worker while it runs and kills it (`kill`) once it is over a bound:

    * `folders`: (path, limit in bytes, what to call it in the reason, the option that sets it) —
      the folder's usage, plus deleted files the worker's processes hold open on its disk;
    * `memory`: bytes all the worker's processes may hold together (the address-space limit is per
      process; a worker that forks could otherwise hold it many times over) — their resident sets,
      confirmed by their proportional sets before a kill, so pages forked children share count once.

    `pids`: the worker's processes (a scan of /proc, the costly part: 2–10 ms, so the list is
    refreshed at most every `rescan` seconds and a new child is seen within that). `interval`:
    seconds between checks; a check that takes long stretches it (the guard never spends more than a
    tenth of the time)."""

    def __init__(self, folders: list[tuple[Path, int, str, str]], pids: Callable[[], list[int]],
                 kill: Callable[[], None], interval: float = 0.25, memory: int | None = None,
                 rescan: float = 1.0) -> None:
        self.folders = [(Path(p), int(lim), what, opt) for p, lim, what, opt in folders]
        self.pids, self.kill, self.interval, self.memory, self.rescan = pids, kill, interval, memory, rescan
        self._pids: list[int] | None = None
        self._pids_at = 0.0
        self.reason = ""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._devs = {}
        for p, *_ in self.folders:
            try:
                self._devs[p] = os.stat(p).st_dev
            except OSError:
                pass
        self._thread: threading.Thread | None = None

    def start(self) -> "Guard":
        """Start watching (a daemon thread checks every `interval` seconds); returns the guard."""
        self._thread = threading.Thread(target=self._run, name="xaibench-guard", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching and wait (up to 30 s) for the watching thread to end."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        self._thread = None

    def _over(self, reason: str) -> str:
        self.reason = reason
        self.kill()
        return reason

    def check(self) -> str:
        """Measure now; the reason when the worker is over a bound (it is then killed), else ""."""
        with self._lock:
            if self.reason:
                return self.reason
            def processes() -> list[int]:
                if self._pids is None or time.monotonic() - self._pids_at >= self.rescan:
                    try:
                        self._pids = self.pids()
                    except OSError:
                        self._pids = []
                    self._pids_at = time.monotonic()
                return self._pids

            for path, limit, what, opt in self.folders:
                seen: set = set()
                use = measure(path, limit, seen=seen)
                if not use.over and path in self._devs:
                    hidden = unlinked_open(processes(), self._devs[path], seen)
                    if hidden and use.bytes + hidden > limit:
                        use.over = f"is over its limit with {fmt_bytes(hidden)} of deleted files it keeps open"
                if use.over:
                    return self._over(f"{what} {use.over} ({fmt_bytes(limit)}, {opt})")
            if self.memory and len(processes()) > 1 and resident_bytes(processes()) > self.memory:
                held = resident_bytes(processes(), proportional=True)
                if held > self.memory:
                    return self._over(f"its {len(processes())} processes hold {fmt_bytes(held)} of memory together, "
                                      f"over its limit ({fmt_bytes(self.memory)}, --memory-limit)")
        return ""

    def _run(self) -> None:
        wait = self.interval
        while not self._stop.wait(wait):
            t0 = time.perf_counter()
            if self.check():
                return
            wait = max(self.interval, 10 * (time.perf_counter() - t0))
