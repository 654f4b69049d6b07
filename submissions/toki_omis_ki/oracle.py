"""TOKI (–K.I) ablation with word-omission explanations of the test predictions."""

from __future__ import annotations

from typing import Any

from benchmark.toki.core import TokiKI


class Oracle(TokiKI):
    """TOKI (–K.I) with word-omission explanations of the test predictions.

    Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text
    Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663 (its −K.I ablation, SPECS §1.6).
    No keyword identification: a word relates to class c iff the cosine of its embedding and the class
    name's is ≥ θ_relate, voted across the embedding models.
    The method is `benchmark.toki.core.TokiKI`.

    Args:
        explainer (str, optional): the explainer of the predictions TOKI reads: "lime" (the project's batched
            LIME: 5,000 samples, bag-of-words features), "omission" or "grad" (SPECS §1.7). Default: "omission"
        judge_explanations (str, optional): "given" = judge the instance's own explanation (the trust set's
            LIME one) when present; "own" = explain it with `explainer`. Default: "own"

    Every other parameter, with its default, is `TokiKI`'s (see its docstring); this folder's
    submission.toml lists them all.
    """

    def __init__(self, explainer: str = "omission", judge_explanations: str = "own", **params: Any) -> None:
        super().__init__(explainer=explainer, judge_explanations=judge_explanations, **params)


__all__ = ["Oracle"]
