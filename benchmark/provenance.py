"""Software provenance recorded in resources and results: xaibench version, git commit, libraries."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

LIBRARIES = ("numpy", "torch", "captum", "lime", "POT", "scikit-learn", "datasets", "opencv-python-headless")


@lru_cache(maxsize=1)
def git_hash() -> str:
    """The short commit of the checkout xaibench runs from ("unknown" outside a git checkout)."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                              capture_output=True, text=True, timeout=5).stdout.strip() or "unknown"
    except Exception:
        return "unknown"


def libraries() -> dict[str, str]:
    out = {}
    for lib in LIBRARIES:
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            pass
    return out


def software() -> dict[str, object]:
    import benchmark

    return {"xaibench": benchmark.__version__, "git": git_hash(), "libraries": libraries()}
