"""A seccomp filter the worker installs on itself: `fallocate` is refused (EOPNOTSUPP).

Why: the scratch folder's size bound is enforced by accounting (`benchmark.isolation.scratch`), which sees
allocation at the speed blocks are written — but `fallocate` reserves a GiB of disk in well under a
millisecond (measured here: 0.3 ms), far faster than any check. With the call refused, glibc's
`posix_fallocate` falls back to writing the blocks and everything else that uses it keeps working.

The filter is classic BPF over `seccomp_data` (syscall number at offset 0, audit architecture at
4), one block per architecture this runs on: x86-64 (and its x32 numbers), i386, AArch64, 32-bit
ARM. It is installed with `SECCOMP_FILTER_FLAG_TSYNC`, so threads started before it (OpenBLAS's
pool, at numpy's import) get it too, after `PR_SET_NO_NEW_PRIVS`; children inherit it and cannot
remove it. On another architecture nothing is installed (`install` says so).
"""

from __future__ import annotations

import ctypes
import errno
import platform

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h)
_LD_W_ABS, _JEQ_K, _RET_K = 0x20, 0x15, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32 = 0x40000000
# audit architecture → fallocate's syscall numbers there
DENIED = {
    0xC000003E: (285, _X32 | 285),  # AUDIT_ARCH_X86_64 (and the x32 ABI)
    0x40000003: (324,),  # AUDIT_ARCH_I386
    0xC00000B7: (47,),  # AUDIT_ARCH_AARCH64
    0x40000028: (352,),  # AUDIT_ARCH_ARM
}
_SECCOMP_NR = {"x86_64": 317, "aarch64": 277, "i686": 354, "armv7l": 383}
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1


def program(denied: dict[int, tuple[int, ...]] = DENIED,
            err: int = errno.EOPNOTSUPP) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions: per architecture, load the arch, skip the block
    unless it matches, load the syscall number, jump to DENY on a listed number, else allow."""
    blocks = list(denied.items())
    body: list[tuple] = []
    for arch, numbers in blocks:
        body.append((_LD_W_ABS, 0, 0, 4))
        body.append((_JEQ_K, 0, 1 + len(numbers) + 1, arch))  # not this arch: skip to the next block
        body.append((_LD_W_ABS, 0, 0, 0))
        for n in numbers:
            body.append(("deny", n))
        body.append((_RET_K, 0, 0, _ALLOW))
    body.append((_RET_K, 0, 0, _ALLOW))
    deny_at = len(body)
    out = []
    for i, ins in enumerate(body):
        if ins[0] == "deny":
            out.append((_JEQ_K, deny_at - i - 1, 0, ins[1]))
        else:
            out.append(ins)
    out.append((_RET_K, 0, 0, _ERRNO | err))
    return out


def install() -> str | None:
    """Install the filter on this process (all its threads); None when done, else why not."""
    nr = _SECCOMP_NR.get(platform.machine())
    if nr is None:
        return f"no seccomp filter for {platform.machine()}"

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    ins = program()
    arr = (SockFilter * len(ins))(*[SockFilter(c, jt, jf, k) for c, jt, jf, k in ins])
    prog = SockFprog(len(ins), arr)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl(NO_NEW_PRIVS) failed (errno {ctypes.get_errno()})"
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(nr), ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
                    ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog)) != 0:
        return f"seccomp() failed (errno {ctypes.get_errno()})"
    return None

