"""Reference (ceiling): the best keyword list the training rationales allow (benchmark.toki.baselines)."""

from benchmark.toki.baselines import RationaleCeiling as Oracle

__all__ = ["Oracle"]
