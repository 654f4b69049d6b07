"""Random control oracle."""

from benchmark.toki.baselines import RandomOracle as Oracle

__all__ = ["Oracle"]
