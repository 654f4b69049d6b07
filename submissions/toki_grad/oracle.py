"""TOKI with gradient×input at the embedding layer (summed over dimensions and occurrences) in both pipelines."""

from typing import Any

from benchmark.toki.core import Toki


class Oracle(Toki):
    """Toki whose defaults are this submission's: explainer 'grad', judge_explanations 'own'."""

    def __init__(self, explainer: str = "grad", judge_explanations: str = "own", **params: Any) -> None:
        super().__init__(explainer=explainer, judge_explanations=judge_explanations, **params)


__all__ = ["Oracle"]
