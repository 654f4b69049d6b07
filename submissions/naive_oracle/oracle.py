"""Naive baseline oracle (SPECS §1.6)."""

from submissions.toki_core import Naive as Oracle

__all__ = ["Oracle"]
