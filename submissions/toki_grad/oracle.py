"""TOKI with gradient×input at the embedding layer (summed over dimensions and occurrences) in both pipelines."""

from benchmark.toki.core import Toki as Oracle

__all__ = ["Oracle"]
