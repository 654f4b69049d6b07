"""Landlock: the plain worker's file-system boundary (where bubblewrap cannot run; docs/isolation.md).

Landlock (Linux ≥ 5.13; the kernel's `Documentation/userspace-api/landlock.rst`, landlock(7)) lets an
unprivileged process restrict its own file-system access, irrevocably, for itself and every process it
starts. The plain worker is started as

    python -m benchmark.isolation.landlock RULES benchmark.isolation.worker --fd N

which confines the interpreter to RULES (JSON: [path, kind] pairs, built by the harness,
`benchmark.isolation.sandbox.landlock_rules`) and only then imports and runs the worker module.

**Why at the start, not after the model is loaded** (where a bubblewrap worker switches to a uid of its
own): `landlock_restrict_self` confines the calling thread only (all threads only with the TSYNC flag of
ABI 8, Linux 7.0), and numpy's OpenBLAS and torch's OpenMP start thread pools on import; a submission can
run code on such a thread (e.g. `GOMP_parallel` with a ctypes callback), which would still read anything.
Confined before any import, every thread and child of the worker is. The model folder is therefore on the
allow-list (read-only), as bubblewrap binds it for the worker's whole life.

**Kinds** of rule (each masked by what the running ABI knows, and to the file rights for a non-folder):
`read` (read and execute files, list folders), `list` (list the folder and those below only), `write`
(everything below it but making device nodes), `device` (read, write, truncate and ioctl one device).

**ABI versions** (landlock(7), "Access rights"; each handled right is denied unless a rule grants it):
1 (5.13) the thirteen file rights EXECUTE … MAKE_SYM; 2 (5.19) REFER (a rename or link across folders:
unhandled, always denied); 3 (6.2) TRUNCATE; 4 (6.7) TCP bind and connect (handled with no rule: no TCP
at all); 5 (6.10) IOCTL_DEV; 6 (6.12) scopes: connecting to an abstract unix socket and signalling a
process outside the worker's domain are denied; 7 (6.15) logging flags only. The syscalls are 444–446 on
x86-64 and AArch64 alike (the generic table).

Landlock also denies ptrace of processes outside the domain: measured on Linux 6.18, the worker can
neither read `/proc/<pid>/mem` of another process of its user nor open a file that process holds through
`/proc/<pid>/fd/N`, but it can still read that process's `environ`, `maps`, `auxv` and `cmdline`. Not
covered by any ABI: UDP and other non-TCP sockets, unix sockets with a path (connecting to one needs no
file right), SysV IPC.
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys
from functools import lru_cache

# access rights (include/uapi/linux/landlock.h)
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

FS_ABI1 = (1 << 13) - 1  # EXECUTE … MAKE_SYM
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a non-folder may hold
KINDS = {"read": READ_FILE | READ_DIR | EXECUTE, "list": READ_DIR,
         "write": ((1 << 16) - 1) & ~(MAKE_CHAR | MAKE_BLOCK | IOCTL_DEV),
         "device": READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV}

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # x86-64 and AArch64 (and every generic-table arch)
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_O_PATH = getattr(os, "O_PATH", 0o10000000)

enforced = 0  # the ABI this process confined itself under (set by `restrict`; 0: not confined)


def handled(abi: int) -> tuple[int, int, int]:
    """(file rights, network rights, scopes) a ruleset handles under `abi`: everything ABIs 1–7 know of it
    (a right a later ABI adds stays unhandled, that is allowed, until it is listed here)."""
    fs = FS_ABI1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0) | (IOCTL_DEV if abi >= 5 else 0)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return (fs if abi >= 1 else 0), net, scoped


def allowed(kind: str, abi: int, folder: bool) -> int:
    """The rights a rule of `kind` grants under `abi` on a folder (or, `folder` False, on a file)."""
    return KINDS[kind] & handled(abi)[0] & (~0 if folder else FILE_RIGHTS)


def _attr_size(abi: int) -> int:
    """sizeof the ruleset attribute `abi` reads: handled_access_fs, + handled_access_net (4), + scoped (6)."""
    return 24 if abi >= 6 else 16 if abi >= 4 else 8


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)): 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _call(libc: ctypes.CDLL, nr: int, *args: object) -> int:
    """syscall(nr, *args); OSError with the errno on failure."""
    r = libc.syscall(ctypes.c_long(nr), *args)
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return r


@lru_cache(maxsize=1)
def version() -> int:
    """The Landlock ABI this kernel offers, 0 when none (not built, disabled at boot, or blocked)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return _call(_libc(), _CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    except OSError:
        return 0


def problem() -> str | None:
    """None when this kernel lets the worker confine itself, else why not (one line)."""
    if version() >= 1:
        return None
    if not sys.platform.startswith("linux"):
        return f"Landlock is Linux-only (this is {sys.platform})"
    return (f"Linux {os.uname().release} offers no Landlock (older than 5.13, or not in its lsm= boot list, "
            "or a container's seccomp filter blocks it)")


def restrict(rules: list[tuple[str, str]]) -> int:
    """Confine this process (every thread it starts later and every child) to `rules`, [path, kind] pairs;
    returns the ABI enforced. A path that does not exist grants nothing. OSError when the kernel refuses."""
    global enforced
    abi = version()
    if abi < 1:
        raise OSError(f"{problem()}")
    libc = _libc()
    fs, net, scoped = handled(abi)
    attr = _RulesetAttr(fs, net, scoped)
    ruleset = _call(libc, _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(_attr_size(abi)), ctypes.c_uint32(0))
    try:
        for path, kind in rules:
            try:
                fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rights = allowed(kind, abi, stat.S_ISDIR(os.fstat(fd).st_mode))
                if rights:
                    rule = _PathBeneathAttr(rights, fd)
                    _call(libc, _ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                          ctypes.byref(rule), ctypes.c_uint32(0))
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        _call(libc, _RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    enforced = abi
    return abi


def main(argv: list[str]) -> None:
    """`python -m benchmark.isolation.landlock RULES MODULE [ARGS...]`: confine this process to RULES, then run
    MODULE as `__main__` with ARGS (a confinement the kernel refuses ends the process, status 1)."""
    import runpy

    rules, module, args = json.loads(argv[0]), argv[1], argv[2:]
    try:
        restrict([(str(p), str(k)) for p, k in rules])
    except OSError as exc:
        sys.stderr.write(f"Landlock could not confine the worker ({exc}); run with --sandbox bwrap instead\n")
        sys.stderr.flush()
        os._exit(1)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":  # run as the module itself, so the worker reads `enforced` where it was set
    from benchmark.isolation.landlock import main as _main

    _main(sys.argv[1:])
