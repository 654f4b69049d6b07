"""The sandbox a submission's worker runs in (issue: a leaderboard people can trust).

On Linux the worker is started under bubblewrap (`bwrap`, Debian package `bubblewrap`) with an
**allow-list** of what it may see, so nothing the harness did not name is reachable:

* read-only: the system (`/usr` and its `/bin`, `/lib*` links, `/etc` minus shadow files), the
  Python installation and the site-packages on `sys.path`, the harness's own `benchmark` package
  and the built-in `submissions` package, the model folder (at `/xaibench/model`) and the
  submission folder (at `/xaibench/submission`);
* writable: a private, size-limited `/tmp` (the worker's `HOME` and working directory) and the
  submission's own scratch folder (`/xaibench/scratch`, `$XAIBENCH_SCRATCH`; e.g. L2X keeps its
  trained selector there) — never beside resources, caches or results;
* nothing else: `$XAIBENCH_HOME` (resources, caches, results, keys), the data mirror, the Hugging
  Face cache and the repository are not mounted at all (and are covered by empty tmpfs mounts
  should a bound path contain one); no network (`--unshare-net`: only an unconnected loopback), a
  private PID namespace (a process the worker forks dies with it), all capabilities dropped
  (`--cap-drop ALL`: root inside cannot unmount the cover of a hidden folder).

Resource limits (set by the worker on itself before it loads any submission code, and with
capabilities dropped it cannot raise them again): address space, CPU time, file size, no core
files, open files. The harness also enforces a wall clock and SIGKILLs a worker past it, whether
it hangs in Python or in native code.

Where bubblewrap is missing or cannot start (no user namespaces), `mode="auto"` says so once and
runs the worker without the file-system sandbox: still a separate process that never holds ground
truth, with the same resource limits, a private working directory and a sanitised environment
(`XAIBENCH_HOME`, the mirror and tokens removed) — but it could read files it knows the path of.
`mode="bwrap"` refuses to run instead; `mode="none"` asks for the plain worker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from benchmark.errors import XaibenchError

MODES = ("auto", "bwrap", "none")
INSIDE_MODEL = "/xaibench/model"
INSIDE_SUBMISSION = "/xaibench/submission"
INSIDE_SCRATCH = "/xaibench/scratch"
INSIDE_ASSETS = "/xaibench/assets"  # read-only folders a track hands every worker (e.g. word embeddings)


def asset_env(name: str) -> str:
    """The environment variable that tells a worker where asset `name` is: `XAIBENCH_ASSET_<NAME>`
    (upper case, every character other than a letter or digit → `_`)."""
    import re

    return "XAIBENCH_ASSET_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


class SandboxError(XaibenchError):
    """The sandbox was required but cannot start."""


@dataclass(frozen=True)
class Limits:
    """Per-worker resource limits (None = unlimited)."""

    memory_bytes: int | None = 8 << 30  # RLIMIT_AS
    cpu_seconds: int | None = None  # RLIMIT_CPU (the harness's wall clock is the primary limit)
    file_bytes: int = 1 << 30  # RLIMIT_FSIZE: largest file the worker may write
    open_files: int = 1024  # RLIMIT_NOFILE
    tmp_bytes: int = 1 << 30  # size of the private /tmp (bubblewrap only)

    def as_dict(self) -> dict:
        return {"memory_bytes": self.memory_bytes, "cpu_seconds": self.cpu_seconds,
                "file_bytes": self.file_bytes, "open_files": self.open_files}


def apply_limits(limits: dict) -> None:
    """Lower this process's limits (called by the worker first thing; soft = hard, so they stick)."""
    import resource

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
    lim(resource.RLIMIT_CORE, 0)


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


_warned = False


def resolve_mode(mode: str) -> str:
    """'bwrap' or 'none' for a requested mode; warns once when 'auto' falls back."""
    global _warned
    if mode not in MODES:
        raise XaibenchError(f"sandbox mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "none":
        return "none"
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError(f"{problem}; install it (apt-get install bubblewrap) or choose --sandbox none")
    if not _warned:
        _warned = True
        from benchmark.progress import console

        console.print(f"[yellow]warning:[/] {problem}: submissions run in a separate ground-truth-free "
                      "process with resource limits, but without a file-system sandbox (install "
                      "bubblewrap for it)", highlight=False, soft_wrap=True)
    return "none"


def _python_roots() -> list[Path]:
    """Folders the worker's Python needs: its installation, the venv, site-packages on sys.path."""
    roots = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix),
             Path(os.path.realpath(sys.executable)).parent.parent}
    for p in sys.path:
        if p and ("site-packages" in p or "dist-packages" in p) and Path(p).exists():
            roots.add(Path(p))
    return sorted(roots)


def _package_dirs() -> list[Path]:
    import benchmark
    import submissions

    return sorted({Path(p).resolve() for pkg in (benchmark, submissions) for p in pkg.__path__})


def _under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def bwrap_argv(worker_argv: list[str], *, model_dir: Path | None, submission_dir: Path,
               scratch_dir: Path, hidden: list[Path], limits: Limits,
               assets: dict[str, Path] | None = None) -> list[str]:
    """The bubblewrap command line that runs `worker_argv` in the sandbox described above."""
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL"]
    bound: list[Path] = []

    def ro(src: Path, dst: str | None = None) -> None:
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
    for secret in ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"):
        if os.path.exists(secret):
            argv.extend(["--ro-bind", "/dev/null", secret])
    argv.extend(["--proc", "/proc", "--dev", "/dev"])
    if os.path.isdir("/sys"):
        ro(Path("/sys"))
    for root in _python_roots() + _package_dirs():
        if not any(_under(root, b) for b in bound):
            ro(root)
    argv.extend(["--size", str(int(limits.tmp_bytes)), "--tmpfs", "/tmp"])
    # second layer: cover any hidden folder that happens to lie inside a bound one
    for h in hidden:
        if h.exists() and any(_under(h, b) for b in bound):
            argv.extend(["--tmpfs", str(h.resolve())])
    if model_dir is not None:
        ro(model_dir, INSIDE_MODEL)
    ro(submission_dir, INSIDE_SUBMISSION)
    for name, folder in sorted((assets or {}).items()):
        ro(Path(folder), f"{INSIDE_ASSETS}/{_asset_name(name)}")
    argv.extend(["--bind", str(scratch_dir), INSIDE_SCRATCH, "--chdir", "/tmp", "--"])
    return argv + worker_argv


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
        "HOME": home, "TMPDIR": home if home.startswith("/tmp") else os.path.join(home, "tmp"),
        "XAIBENCH_HOME": os.path.join(home, "xaibench"), "XAIBENCH_DATA_MIRROR": os.path.join(home, "no-mirror"),
        "XAIBENCH_SCRATCH": scratch, "XAIBENCH_PROGRESS": "0", "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
    })
    return env
