"""Blind control oracle: a monotone score of the judged text's word count, reading nothing else."""

from __future__ import annotations

from benchmark.toki.controls import TextLengthOracle


class Oracle(TextLengthOracle):
    """Control: score m / (m + n) for a text of n words (m: the training texts' median); trustworthy iff n ≤ m.

    Controls for the length prior. A short text's rationale covers more of its words, so its explanation's
    top 10 are more often rationale — the trust label rises with shortness whatever the model did. This
    oracle reads only the word count: never the model, the confidence, the explanation, labels or
    rationales (issues #36, #38). No paper: a control. The method is
    `benchmark.toki.controls.TextLengthOracle`.

    Args:
        direction (str, optional): "shorter" = a shorter text is more trustworthy (score m / (m + n));
            "longer" = the reverse (score n / (m + n)). Default: "shorter"
    """


__all__ = ["Oracle"]
