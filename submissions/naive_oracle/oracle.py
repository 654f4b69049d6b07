"""Naive baseline oracle (SPECS §1.6)."""

from benchmark.toki.baselines import Naive as Oracle

__all__ = ["Oracle"]
