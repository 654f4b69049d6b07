"""The sandbox a submission's worker runs in (issue: a leaderboard people can trust).

On Linux the worker is started under bubblewrap (`bwrap`, Debian package `bubblewrap`) with an
**allow-list** of what it may see, so nothing the harness did not name is reachable:

* read-only: the system (`/usr` and its `/bin`, `/lib*` links, `/etc` minus shadow files), the
  Python installation and the site-packages on `sys.path`, the harness's own `benchmark` package
  and the built-in `submissions` package, the model folder (at `/xaibench/model`), the submission
  (at `/xaibench/submission`: the harness's copy of exactly its hashed files, `Submission.stage`)
  and, for a re-run with requirements, its environment's packages (at `/xaibench/environment`,
  `benchmark.submission.environments`; the worker puts them first on `sys.path` once its limits are set);
* writable: a private, size-limited `/tmp` (the worker's `HOME` and working directory) and the
  submission's own scratch folder (`/xaibench/scratch`, `$XAIBENCH_SCRATCH`; e.g. L2X keeps its
  trained selector there) — never beside resources, caches or results;
* nothing else: `$XAIBENCH_HOME` (resources, caches, results, keys), the data mirror, the Hugging
  Face cache and the repository are not mounted at all (and are covered by empty tmpfs mounts
  should a bound path contain one); no network (`--unshare-net`: only an unconnected loopback), a
  private PID namespace (a process the worker forks dies with it), all capabilities dropped
  (`--cap-drop ALL`: root inside cannot unmount the cover of a hidden folder).

The private `/tmp` is mounted first and every bound folder after it, so a checkout, virtualenv,
data home or submission that lives under `/tmp` is bound on top of the private `/tmp`, not hidden by
it.

Resource limits (set by the worker on itself before it loads any submission code, and with
capabilities dropped it cannot raise them again): address space, CPU time, file size, no core
files, open files, and the number of tasks (processes and threads: `RLIMIT_NPROC`). The kernel
counts `RLIMIT_NPROC` per user and exempts root, so the task limit needs the worker to run as a
user of its own:

* harness not root: bubblewrap makes a user namespace, and the kernel counts the tasks of a user
  per namespace (Linux ≥ 5.14 ucounts), so the limit covers exactly the sandbox;
* harness root: bubblewrap runs without a user namespace, keeps only CAP_SETUID/CAP_SETGID, and the
  worker — after the model is loaded, before any submission code — switches for good to a uid of
  its own, `UID_BASE` + its bubblewrap process's pid (unique among running workers), and the group
  `WORKER_GID` that all workers share (their scratch folders belong to it; `benchmark.isolation.scratch`).

The worker also refuses `fallocate` (`benchmark.isolation.seccomp`). The harness enforces a wall clock (a
worker past it is SIGKILLed, hanging in Python or native code) and the scratch folder's size
(`benchmark.isolation.scratch`).

Where bubblewrap is missing or cannot start (no user namespaces), `mode="auto"` says so once and
runs the plain worker; `mode="bwrap"` refuses to run instead; `mode="none"` asks for the plain worker.
It is a separate process that never holds ground truth, with the same resource limits except the task
limit, a private working directory and a sanitised environment (`XAIBENCH_HOME`, the mirror and tokens
removed), the scratch bound (and the same bound on its private working directory). Its file system is
held by **Landlock** (`benchmark.isolation.landlock`, Linux ≥ 5.13), which it sets on itself before any
import: the same allow-list at the real paths (`landlock_rules`: the system, the Python installation,
the harness's packages, the model folder, the submission, its environment and assets read-only; its
working folder, its scratch folder, `/dev/shm` and the harmless devices writable; a hidden folder inside
an allowed one carved out), so the data home, the keys, the mirror, the Hugging Face cache and results
cannot be read or written even by a submission that knows their paths. With Landlock ABI ≥ 4 it makes
no TCP connection, ≥ 6 it reaches no abstract unix socket and signals no process outside itself; it
cannot attach to a process outside itself (`/proc/<pid>/mem`) or open the files one holds
(`/proc/<pid>/fd`). What Landlock does not hold: UDP and unix sockets with a path (a listening service
of the same user, e.g. a Ray node's sockets under `/tmp/ray`), SysV IPC, named POSIX shared memory of
the same user in `/dev/shm`, the `environ`, `maps` and `cmdline` of the user's other processes in
`/proc`, and the task limit. The harness keeps no ground truth in any of these, but under the Ray
backend Ray's object store, which holds each job (a served model with its ground truth among it), is a
local service with such sockets: the plain worker there is no boundary against a client of Ray's
protocol. Where the kernel has no Landlock the plain worker could read any file its user can, and the
harness says so once; `file_system_problem(mode)` says, before a run, whether a mode's worker is
confined (the hidden-copy runs of issue #50 must refuse one that is not), and `Worker.confined` says
it of a started worker.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from benchmark.errors import XaibenchError

MODES = ("auto", "bwrap", "none")
INSIDE_MODEL = "/xaibench/model"
INSIDE_SUBMISSION = "/xaibench/submission"
INSIDE_SCRATCH = "/xaibench/scratch"
# the submission's own packages (benchmark.submission.environments), read-only
INSIDE_ENVIRONMENT = "/xaibench/environment"
INSIDE_ASSETS = "/xaibench/assets"  # read-only folders a track hands every worker (e.g. word embeddings)
ETC_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")  # hidden from every worker


def asset_env(name: str) -> str:
    """The environment variable that tells a worker where asset `name` is: `XAIBENCH_ASSET_<NAME>`
    (upper case, every character other than a letter or digit → `_`)."""
    import re

    return "XAIBENCH_ASSET_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


class SandboxError(XaibenchError):
    """The sandbox was required but cannot start."""


UID_BASE = 0x7F000000  # a root harness's worker runs as UID_BASE + its bwrap pid (systemd leaves 0x70000000… unused)
WORKER_GID = UID_BASE - 1  # the group every such worker shares: it owns the scratch folders
MEMORY_SHARE = 0.5  # the workers running at once share this fraction of the machine's memory
SCRATCH_GB = 2.0  # default bound of a submission's scratch folder


def machine_memory_bytes() -> int:
    """Physical memory, or the memory limit of this process's cgroup (v2 or v1) when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            files = [f"/sys/fs/cgroup{path}/memory.max"]
        elif "memory" in controllers.split(","):
            files = [f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"]
        else:
            continue
        for f in files:
            try:
                value = Path(f).read_text().strip()
            except OSError:
                continue
            if value.isdigit():
                total = min(total, int(value))
    return total


def default_memory_gb(workers: int = 1) -> float:
    """The default address-space limit of a worker, GiB: `MEMORY_SHARE` of the machine's memory
    shared by the `workers` running at once, rounded down to 0.25 GiB (at least 1 GiB)."""
    share = MEMORY_SHARE * machine_memory_bytes() / max(1, int(workers)) / (1 << 30)
    return max(1.0, int(share * 4) / 4)


def default_processes() -> int:
    """The default task limit (processes + threads) of a worker: 256, or 8 per core on a machine
    with more than 32 (torch and NumPy start a thread pool or two of one thread per core each)."""
    return max(256, 8 * (os.cpu_count() or 1))


@dataclass(frozen=True)
class Limits:
    """Per-worker resource limits (None = unlimited)."""

    memory_bytes: int | None = field(default_factory=lambda: int(default_memory_gb(1) * (1 << 30)))  # RLIMIT_AS
    cpu_seconds: int | None = None  # RLIMIT_CPU (the harness's wall clock is the primary limit)
    file_bytes: int = 1 << 30  # RLIMIT_FSIZE: largest file the worker may write
    open_files: int = 1024  # RLIMIT_NOFILE
    tmp_bytes: int = 1 << 30  # size of the private /tmp (bubblewrap; the plain worker's folder is guarded)
    processes: int | None = field(default_factory=default_processes)  # RLIMIT_NPROC: tasks of the worker
    scratch_bytes: int | None = int(SCRATCH_GB * (1 << 30))  # the scratch folder's bound (benchmark.isolation.scratch)

    def as_dict(self, processes: bool = True) -> dict:
        """The limits the worker sets on itself; `processes`: whether the task limit binds here
        (RLIMIT_NPROC outside a user of its own would count the harness user's every process)."""
        return {"memory_bytes": self.memory_bytes, "cpu_seconds": self.cpu_seconds,
                "file_bytes": self.file_bytes, "open_files": self.open_files,
                "processes": self.processes if processes else None}


def apply_limits(limits: dict) -> None:
    """Lower this process's limits (called by the worker first thing; soft = hard, so they stick)
    and refuse `fallocate` (benchmark.isolation.seccomp)."""
    import resource

    from benchmark.isolation import seccomp

    def lim(which: int, value: int | None) -> None:
        if value is None:
            return
        _, hard = resource.getrlimit(which)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        resource.setrlimit(which, (value, value))

    lim(resource.RLIMIT_AS, limits.get("memory_bytes"))
    lim(resource.RLIMIT_CPU, limits.get("cpu_seconds"))
    lim(resource.RLIMIT_FSIZE, limits.get("file_bytes"))
    lim(resource.RLIMIT_NOFILE, limits.get("open_files"))
    lim(resource.RLIMIT_NPROC, limits.get("processes"))
    lim(resource.RLIMIT_CORE, 0)
    seccomp.install()


def drop_privileges(uid: int, gid: int) -> None:
    """Become `uid`:`gid` for good (real, effective and saved ids; no supplementary groups): every
    capability goes with root, and the task limit now counts this worker's tasks alone. New files
    are group-writable (umask 002), so the next worker — another uid, the same group — can use the
    scratch folder. Called by a root harness's worker after the model is loaded."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(f"could not switch to uid {uid}")
    os.umask(0o002)


@lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap runs here with the flags the sandbox uses, else why not (probed once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [exe, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/",
             "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "/bin/sh", "-c", "exit 0"]
    try:
        r = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if r.returncode != 0:
        return f"bubblewrap cannot create its namespaces here ({(r.stderr or '').strip()[:200]})"
    return None


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    from benchmark.progress import console

    console.print(f"[yellow]warning:[/] {message}", highlight=False, soft_wrap=True)


def resolve_mode(mode: str) -> str:
    """'bwrap' or 'none' for a requested mode; warns once when 'auto' falls back."""
    if mode not in MODES:
        raise XaibenchError(f"sandbox mode must be one of {', '.join(MODES)}, got {mode!r}")
    from benchmark.isolation import landlock

    problem = None if mode == "none" else bwrap_problem()
    if mode != "none" and problem is None:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError(f"{problem}; install it (apt-get install bubblewrap) or choose --sandbox none")
    unconfined = landlock.problem()
    if mode == "auto":
        files = ("its file system confined by Landlock, but without bubblewrap's network and PID namespaces and"
                 if unconfined is None else f"but without a file-system sandbox ({unconfined}) and")
        _warn_once("fallback", f"{problem}: submissions run in a separate ground-truth-free process with limits "
                   f"on memory, CPU time, file size, open files and the scratch folder's size, {files} without a "
                   "limit on processes (install bubblewrap for them)")
    elif unconfined is not None:
        _warn_once("landlock", f"--sandbox none: the plain worker's file system is not confined ({unconfined}): "
                   "a submission can read any file this user can; use --sandbox bwrap to keep it out")
    return "none"


def _kernel_root() -> bool:
    """Whether this process is root as the kernel counts tasks (kuid 0, exempt from RLIMIT_NPROC):
    euid 0 in a user namespace that maps 0 to 0 (the initial one does)."""
    if os.geteuid() != 0:
        return False
    try:
        first = Path("/proc/self/uid_map").read_text().split()
    except OSError:
        return True
    return len(first) >= 2 and first[0] == "0" and first[1] == "0"


def _kernel_version() -> tuple[int, int]:
    import re

    m = re.match(r"(\d+)\.(\d+)", platform.release())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _uid_range_mapped(low: int, high: int) -> bool:
    try:
        rows = [list(map(int, line.split())) for line in Path("/proc/self/uid_map").read_text().splitlines()]
    except (OSError, ValueError):
        return False
    return any(inside <= low and high < inside + count for inside, _, count in rows)


@lru_cache(maxsize=1)
def own_uid_problem() -> str | None:
    """None when a root harness can run workers under uids of their own (bubblewrap without a user
    namespace, the worker switching uid and importing the harness as that user), else why not."""
    import tempfile

    if bwrap_problem() is not None:
        return bwrap_problem()
    pid_max = 1 << 22
    if not _uid_range_mapped(WORKER_GID, UID_BASE + pid_max):
        return f"uids {WORKER_GID}–{UID_BASE + pid_max} are not mapped in this user namespace"
    with tempfile.TemporaryDirectory(prefix="xaibench-probe-") as t:
        scratch = Path(t) / "scratch"
        scratch.mkdir()
        os.chown(scratch, -1, WORKER_GID)
        os.chmod(scratch, 0o2770)
        uid = UID_BASE + os.getpid()
        argv = bwrap_argv(worker_command("benchmark.isolation.uid_probe", str(uid), str(WORKER_GID)), model_dir=None,
                          submission_dir=Path(t), scratch_dir=scratch, hidden=[], limits=Limits(), as_uid=True)
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap without a user namespace could not start ({exc})"
    if r.returncode != 0 or r.stdout.strip() != str(uid):
        last = " ".join((r.stderr or r.stdout or "").strip().splitlines()[-1:])[:200]
        return f"a worker cannot run under a uid of its own here ({last or f'exit {r.returncode}'})"
    return None


def own_uid() -> bool:
    """Whether bubblewrap workers run under uids of their own (a root harness where that works)."""
    return _kernel_root() and own_uid_problem() is None


def process_limit_problem(mode: str) -> str | None:
    """None when the task limit (RLIMIT_NPROC) binds each worker alone in sandbox `mode` ('bwrap' /
    'none', resolved), else why not."""
    if mode != "bwrap":
        return "the plain worker (no bubblewrap) shares the harness's user, whose every process the kernel would count"
    if not _kernel_root():
        if _kernel_version() < (5, 14):
            return (f"Linux {platform.release()} counts a user's tasks across namespaces (per namespace since "
                    "5.14), so the limit would count the harness user's every process")
        return None  # a user namespace per worker: the kernel counts its tasks per namespace
    problem = own_uid_problem()
    if problem is None:
        return None
    return f"the harness runs as root, which the kernel exempts from the limit, and {problem}"


def warn_process_limit(mode: str, limits: "Limits") -> bool:
    """Whether the task limit binds here; says once when it was asked for but cannot."""
    problem = process_limit_problem(mode)
    if problem is not None and limits.processes and mode == "bwrap":
        _warn_once("nproc", f"the process limit ({limits.processes} tasks) is not enforced: {problem}")
    return problem is None


def _python_roots() -> list[Path]:
    """Folders the worker's Python needs: its installation, the venv, site-packages on sys.path."""
    roots = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix),
             Path(os.path.realpath(sys.executable)).parent.parent}
    for p in sys.path:
        if p and ("site-packages" in p or "dist-packages" in p) and Path(p).exists():
            roots.add(Path(p))
    return sorted(roots)


@lru_cache(maxsize=1)
def _package_dirs() -> list[Path]:
    """The harness package's folders and the built-in submissions' (located through their entry point,
    never imported here: `benchmark.submission.builtin_folders`; looked up once per process, 80 ms on a
    busy machine)."""
    from benchmark.submission import builtin_folders

    return sorted({harness_package()} | set(builtin_folders()))


# `python -c BOOT ROOT MODULE ARGS…`: import the `benchmark` package from ROOT (the harness's own folder) and run
# MODULE as `__main__` with ARGS. A worker then runs exactly the harness's code whichever checkout or installation
# started it (plain `-m` would find `benchmark` through the installation's path — an editable install points at its
# own checkout), without the folder above ROOT on `sys.path` (neither bubblewrap nor Landlock lets the worker list it).
_BOOT = ("import importlib.util, runpy, sys\n"
         "root, module = sys.argv[1], sys.argv[2]\n"
         "spec = importlib.util.spec_from_file_location('benchmark', root + '/__init__.py', "
         "submodule_search_locations=[root])\n"
         "package = importlib.util.module_from_spec(spec)\n"
         "sys.modules['benchmark'] = package\n"
         "spec.loader.exec_module(package)\n"
         "sys.argv = [module, *sys.argv[3:]]\n"
         "runpy.run_module(module, run_name='__main__', alter_sys=True)\n")


def harness_package() -> Path:
    """The folder of the harness's `benchmark` package (this file is benchmark/isolation/sandbox.py)."""
    return Path(__file__).resolve().parents[1]


def worker_command(module: str, *args: str) -> list[str]:
    """The command line that runs `python -m MODULE ARGS` in a worker, `benchmark` imported from
    `harness_package()` (the `_BOOT` above says why)."""
    return [sys.executable, "-c", _BOOT, str(harness_package()), module, *args]


def _under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def bwrap_argv(worker_argv: list[str], *, model_dir: Path | None, submission_dir: Path,
               scratch_dir: Path, hidden: list[Path], limits: Limits,
               assets: dict[str, Path] | None = None, as_uid: bool = False,
               environment: Path | None = None) -> list[str]:
    """The bubblewrap command line that runs `worker_argv` in the sandbox described above.

    `as_uid`: a root harness's worker that switches to a uid of its own (no user namespace; only
    CAP_SETUID / CAP_SETGID kept, for that switch; bubblewrap sets no-new-privileges)."""
    if as_uid:
        ns = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        caps = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        ns, caps = ["--unshare-all"], ["--cap-drop", "ALL"]
    argv = [shutil.which("bwrap") or "bwrap", *ns, "--die-with-parent", "--new-session", *caps]
    # the private /tmp first: every folder bound below comes after it, so one under /tmp (a checkout,
    # a virtualenv, a data home) is mounted on top of it instead of being hidden by it
    argv.extend(["--perms", "1777", "--size", str(int(limits.tmp_bytes)), "--tmpfs", "/tmp"])
    bound: list[Path] = []
    made: set[str] = {"/", "/tmp"}

    def parents(dst: str) -> None:
        """Make the folders above `dst` searchable by all (bubblewrap makes them 0700 as root, which a
        worker under its own uid could not pass)."""
        for parent in reversed(Path(dst).parents):
            if str(parent) not in made and not any(_under(parent, b) for b in bound):
                argv.extend(["--perms", "0755", "--dir", str(parent)])
            made.add(str(parent))

    def ro(src: Path, dst: str | None = None) -> None:
        parents(dst or str(src))
        argv.extend(["--ro-bind", str(src), dst or str(src)])
        if dst is None:
            bound.append(src)

    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            argv.extend(["--symlink", os.readlink(top), top])
        elif os.path.isdir(top):
            ro(Path(top))
    ro(Path("/usr"))
    ro(Path("/etc"))
    for secret in ETC_SECRETS:
        if os.path.exists(secret):
            argv.extend(["--ro-bind", "/dev/null", secret])
    argv.extend(["--proc", "/proc", "--dev", "/dev"])
    if os.path.isdir("/sys"):
        ro(Path("/sys"))
    for root in _python_roots() + _package_dirs():
        if not any(_under(root, b) for b in bound):
            ro(root)
    # second layer: cover any hidden folder that happens to lie inside a bound one
    for h in hidden:
        if h.exists() and any(_under(h, b) for b in bound):
            argv.extend(["--tmpfs", str(h.resolve())])
    if model_dir is not None:
        ro(model_dir, INSIDE_MODEL)
    ro(submission_dir, INSIDE_SUBMISSION)
    if environment is not None:
        ro(environment, INSIDE_ENVIRONMENT)
    for name, folder in sorted((assets or {}).items()):
        ro(Path(folder), f"{INSIDE_ASSETS}/{_asset_name(name)}")
    parents(INSIDE_SCRATCH)
    argv.extend(["--bind", str(scratch_dir), INSIDE_SCRATCH, "--chdir", "/tmp", "--"])
    return argv + worker_argv


DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")  # bubblewrap's --dev
# POSIX shared memory and semaphores (multiprocessing's locks): bubblewrap's /dev/shm is the worker's own, the
# plain worker shares the machine's (the harness and Ray keep nothing there under a name)
SHARED_MEMORY = tuple(p for p in ("/dev/shm",) if os.path.isdir(p) and not os.path.islink(p))


def landlock_rules(*, model_dir: Path | None, submission_dir: Path, scratch_dir: Path, home: Path, hidden: list[Path],
                   assets: dict[str, Path] | None = None, environment: Path | None = None) -> list[tuple[str, str]]:
    """The plain worker's Landlock allow-list (`benchmark.isolation.landlock`), [path, kind] pairs: what
    `bwrap_argv` binds, at the real paths. Read: the system (`/usr`, `/bin`, `/lib*` where they are
    folders, `/etc` but its shadow files, `/proc`, `/sys`), the Python installation and site-packages,
    the harness's package folders, the model folder, the staged submission, its environment and the
    track's assets; read and write: the devices bubblewrap's `--dev` makes, `/dev/shm`, the worker's
    private working folder (`home`) and its scratch folder. Nothing else: not `/tmp`, the data home, the
    mirror, the Hugging Face cache, results or the checkout outside the package folders. A `hidden`
    folder inside an allowed one is carved out (`_carve`)."""
    system = [(top, "read") for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
                                        "/proc", "/sys") if os.path.isdir(top) and not os.path.islink(top)]
    folders: list[Path] = [*_python_roots(), *_package_dirs(), *([model_dir] if model_dir is not None else []),
                           submission_dir, *([environment] if environment is not None else []),
                           *map(Path, (assets or {}).values())]
    rules = [*system, *((str(f.resolve()), "read") for f in folders),
             *((str(f.resolve()), "write") for f in (home, scratch_dir, *map(Path, SHARED_MEMORY)))]
    out = [(d, "device") for d in DEVICES]
    covered = [Path(h).resolve() for h in [*hidden, *map(Path, ETC_SECRETS)] if os.path.lexists(h)]
    for path, kind in rules:
        out += _carve(Path(path), kind, covered)
    return out


def _carve(folder: Path, kind: str, hidden: list[Path]) -> list[tuple[str, str]]:
    """[(folder, kind)], or, where a `hidden` path lies inside it, the right to list it and the rules of
    its entries but the hidden one (recursively; symlinks get none: Landlock checks where they lead).
    `folder` and `hidden` are real paths (resolved, no symlink on the way).
    Landlock grants a folder with everything below it, so this is how it leaves a hole (bubblewrap
    covers one with an empty tmpfs instead)."""
    inside = [h for h in hidden if h.is_relative_to(folder)]  # both resolved: real paths compare as text
    if not inside:
        return [(str(folder), kind)]
    if folder in inside or not folder.is_dir():
        return []
    out = [(str(folder), "list")]
    for entry in sorted(folder.iterdir()):
        if not entry.is_symlink():
            out += _carve(entry, kind, inside)
    return out


def file_system_problem(mode: str) -> str | None:
    """None when a worker started in sandbox `mode` ('auto', 'bwrap' or 'none') can read no file outside
    its allow-list (bubblewrap's view, or the plain worker's Landlock rules), else why not, one line.
    Hidden-copy runs (issue #50) must refuse a mode for which this is not None: its worker could read
    `<data home>/keys/hidden.secret`. `Worker.confined` says the same of a started worker."""
    from benchmark.isolation import landlock

    if mode not in MODES:
        raise XaibenchError(f"sandbox mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode != "none" and bwrap_problem() is None:
        return None
    if mode == "bwrap":
        return bwrap_problem()
    why = landlock.problem()
    return None if why is None else f"the plain worker's file system is not confined: {why}"


def _asset_name(name: str) -> str:
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise ValueError(f"asset name {name!r} must be 1–64 letters, digits, '_', '.', '-'")
    return name


def asset_paths(assets: dict[str, Path] | None, inside: bool) -> dict[str, str]:
    """`XAIBENCH_ASSET_<NAME>` → where the worker finds each asset (its sandbox path, or the real one)."""
    return {asset_env(n): (f"{INSIDE_ASSETS}/{_asset_name(n)}" if inside else str(Path(p).resolve()))
            for n, p in (assets or {}).items()}


def worker_env(scratch: str, home: str) -> dict[str, str]:
    """A sanitised environment: no XAIBENCH_HOME / mirror / tokens of the harness's user."""
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
            "OPENBLAS_NUM_THREADS")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({
        "HOME": home, "TMPDIR": home,
        "XAIBENCH_HOME": os.path.join(home, "xaibench"), "XAIBENCH_DATA_MIRROR": os.path.join(home, "no-mirror"),
        "XAIBENCH_SCRATCH": scratch, "XAIBENCH_PROGRESS": "0", "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
    })
    return env
