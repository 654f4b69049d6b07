"""Isolation: where a submission's code runs, and what it can reach (DESIGN §8, docs/isolation.md).

The promise: a submission's code runs only in a worker process (`worker`) that never holds ground
truth. The harness (`harness.Worker`) hands it inputs and the model under test over one socket whose
messages are JSON plus raw arrays, never unpickled (`wire`); every output is validated before it is
kept, and a hang, crash or flood becomes a recorded failure, never a stop of the run. On Linux the
worker runs under bubblewrap with an allow-list of folders, no network, no capabilities and resource
limits it sets on itself (`sandbox`), refuses `fallocate` (`seccomp`), and its scratch folder is held
to a size bound by the harness's guard (`scratch`). Without bubblewrap the plain worker confines its own
file system to the same allow-list with Landlock (`landlock`) where the kernel has it;
`file_system_problem(mode)` says whether a mode's worker is so confined. `allocator` tunes glibc for
torch on CPU in every process that trains or runs a model.

This package sits below the runner, the backends, the tracks, the metrics and the Results (an
import-linter contract): it moves inputs and outputs and never scores them.

Exports (loaded on first use, so that `python -m benchmark.isolation.worker` imports nothing before
it has lowered its limits): `Worker`, `WorkerConfig`, `WorkerCrash`, `FitError`, `MAX_CRASHES`,
`validate_output` (the harness side); `Limits`, `MODES`, `SCRATCH_GB`, `SandboxError`,
`default_memory_gb`, `default_processes`, `machine_memory_bytes`, `asset_env`, `file_system_problem`
(the sandbox).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmark.isolation.harness import MAX_CRASHES, FitError, Worker, WorkerConfig, WorkerCrash, validate_output
    from benchmark.isolation.sandbox import (MODES, SCRATCH_GB, Limits, SandboxError, asset_env, default_memory_gb,
                                             default_processes, file_system_problem, machine_memory_bytes)

__all__ = ["MAX_CRASHES", "MODES", "SCRATCH_GB", "FitError", "Limits", "SandboxError", "Worker", "WorkerConfig",
           "WorkerCrash", "asset_env", "default_memory_gb", "default_processes", "file_system_problem",
           "machine_memory_bytes", "validate_output"]


def __getattr__(name: str) -> object:
    """The exported name `name`, imported on first use from `sandbox` (light: the worker reads
    `asset_env` through it) or else `harness`."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for home in ("sandbox", "harness"):
        module = importlib.import_module(f"{__name__}.{home}")
        if name in vars(module):
            globals()[name] = value = vars(module)[name]
            return value
    raise AttributeError(f"{__name__}.{name} is exported but defined in none of its modules")
