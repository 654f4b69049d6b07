"""TOKI (SPECS §1.2–1.5) with the project's batched LIME (5,000 samples, bag-of-words features) in pipeline 1; pipeline 2 uses the trust set's LIME explanation."""

from benchmark.toki.core import Toki as Oracle

__all__ = ["Oracle"]
