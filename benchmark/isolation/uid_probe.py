"""`python -m benchmark.isolation.uid_probe UID GID`, run in bubblewrap as a worker is (`sandbox.worker_command`):
the probe of `sandbox.own_uid_problem`. It switches to UID and GID, imports the worker, lists the scratch folder,
and prints its uid."""

from __future__ import annotations

import os
import sys

from benchmark.isolation.sandbox import INSIDE_SCRATCH, drop_privileges

if __name__ == "__main__":
    drop_privileges(int(sys.argv[1]), int(sys.argv[2]))
    import benchmark.isolation.worker  # noqa: F401 - importable under the worker's uid

    os.listdir(INSIDE_SCRATCH)
    print(os.getuid())
