"""Software provenance recorded in resources and results: xaibench version, git commit, libraries."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

VERSION = "0.1.0"  # xaibench's version (`benchmark.__version__`; pyproject.toml's [project] version)
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
    """The installed versions of `LIBRARIES` (those not installed are left out)."""
    out = {}
    for lib in LIBRARIES:
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            pass
    return out


def software() -> dict[str, object]:
    """What a resource or result records of the software that made it: xaibench's version, the git
    commit and the versions of the libraries that can change a number (`LIBRARIES`)."""
    return {"xaibench": VERSION, "git": git_hash(), "libraries": libraries()}
