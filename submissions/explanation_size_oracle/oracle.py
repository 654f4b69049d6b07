"""Blind control oracle: a monotone score of how many positive words the explanation has, reading nothing else."""

from __future__ import annotations

from benchmark.toki.controls import ExplanationSizeOracle


class Oracle(ExplanationSizeOracle):
    """Control: score (k − e) / k for e positive explanation words of top_k = k; trustworthy iff e ≤ training median.

    Controls for the explanation-size cue. The trust label is the share of the explanation's words in
    people's rationale: a smaller explanation has fewer chances to miss it. This oracle counts the positive
    words only — never which words they are, the model, the confidence, labels or rationales (issue #38).
    No paper: a control. The method is `benchmark.toki.controls.ExplanationSizeOracle`.

    Args:
        direction (str, optional): "smaller" = fewer explanation words is more trustworthy (score
            (k − e) / k); "larger" = the reverse (e / k). Default: "smaller"
        top_k (int, optional): the explanation words the labels read ([P] 10). Default: 10
    """


__all__ = ["Oracle"]
