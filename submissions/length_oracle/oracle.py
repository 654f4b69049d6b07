"""Length control oracle: a monotone score of the explained text's length, reading nothing else."""

from __future__ import annotations

from benchmark.toki.baselines import LengthOracle


class Oracle(LengthOracle):
    """Control: score m / (m + n) for a text of n words (m: the training texts' median length); trustworthy iff n ≤ m.

    Controls for the length prior: a short text leaves fewer non-rationale words in its explanation's
    top 10, so it is more often labelled trustworthy; this oracle reads only the word count, never the
    model, the explanation, the confidence, labels or rationales. No paper: a control. The method is
    `benchmark.toki.baselines.LengthOracle`.

    Args:
        direction (str, optional): "shorter" = a shorter text is more trustworthy (score m / (m + n));
            "longer" = the reverse (score n / (m + n)). Default: "shorter"
    """


__all__ = ["Oracle"]
