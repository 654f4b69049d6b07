"""Reference (ceiling): the best keyword list the training rationales allow (benchmark.toki.baselines)."""

from __future__ import annotations

from benchmark.toki.baselines import RationaleCeiling


class Oracle(RationaleCeiling):
    """Reference (ceiling, never ranked): judges an explanation by the keywords the training rationales give.

    No published method: a ceiling of this project (xaibench) for the trust track, allowed to read the
    training rationales (a keyword = a word that is rationale in at least half of its training posts).
    The method is `benchmark.toki.baselines.RationaleCeiling`.

    Args:
        min_rate (float, optional): keyword iff rationale in ≥ min_rate of the training posts (of its
            class, with a rationale) containing it. Default: 0.5
        min_count (int, optional): training posts a word must occur in to be scored. Default: 1
        mode (str, optional): "keywords" = share of the explanation's words in the keyword list; "rate" =
            their mean training rationale rate. Default: "keywords"
        weighting (str, optional): "count" = every top-k word alike (the labels count words);
            "importance" = weighted by the explanation's scores. Default: "count"
        top_k (int, optional): explanation words judged ([P] the labels' top 10). Default: 10
        words_only (bool, optional): punctuation tokens left out, as in the labels. Default: True
        threshold (float, optional): trustworthy iff score ≥ threshold ([P] the labels' precision cut).
            Default: 0.5
    """


__all__ = ["Oracle"]
