"""Random control oracle."""

from submissions.toki_core import RandomOracle as Oracle

__all__ = ["Oracle"]
