"""TOKI (–K.I) ablation with gradient×input explanations of the test predictions."""

from benchmark.toki.core import TokiKI as Oracle

__all__ = ["Oracle"]
