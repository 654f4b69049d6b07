"""TOKI with gradient×input at the embedding layer (summed over dimensions and occurrences) in both pipelines."""

from __future__ import annotations

from typing import Any

from benchmark.toki.core import Toki


class Oracle(Toki):
    """TOKI with gradient×input explanations (embedding layer, summed per word type) in both pipelines.

    Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text
    Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663 (SPECS §1.2–1.5).
    Pipeline 1 finds keywords in the explanations of the correct training predictions; pipeline 2
    labels a prediction trustworthy iff its top explanation words relate to its class (Eq. 5–6).
    The method is `benchmark.toki.core.Toki`.

    Args:
        explainer (str, optional): the explainer of the predictions TOKI reads: "lime" (the project's batched
            LIME: 5,000 samples, bag-of-words features), "omission" or "grad" (SPECS §1.7). Default: "grad"
        judge_explanations (str, optional): "given" = judge the instance's own explanation (the trust set's
            LIME one) when present; "own" = explain it with `explainer`. Default: "own"

    Every other parameter, with its default, is `Toki`'s (see its docstring); this folder's
    submission.toml lists them all.
    """

    def __init__(self, explainer: str = "grad", judge_explanations: str = "own", **params: Any) -> None:
        super().__init__(explainer=explainer, judge_explanations=judge_explanations, **params)


__all__ = ["Oracle"]
