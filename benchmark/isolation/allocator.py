"""glibc allocator tuning for torch on CPU.

Activations of the AIXI CNN are tens of MB; glibc serves allocations above its mmap threshold with a
fresh `mmap` and returns them with `munmap`, so every forward/backward pass page-faults its buffers
anew and the process spends most of its time in the kernel (measured: 0.81 s of system time per
training step of 64 images). Raising the mmap threshold to its maximum (32 MB) and the trim
threshold keeps freed buffers in the heap for reuse; together with batches whose activations stay
under 32 MB this halves training time (0.96 → 0.46 s per step of 64 images on 2 cores).
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's upper limit on 64-bit systems
_done = False


def tune() -> bool:
    """Apply once per process; a no-op (False) where glibc's `mallopt` is unavailable."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        ok = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX) == 1
        ok &= libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1
    except (OSError, AttributeError):
        return False
    _done = ok
    return ok
