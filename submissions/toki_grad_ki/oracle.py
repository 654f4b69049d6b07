"""TOKI (–K.I) ablation with gradient×input explanations of the test predictions."""

from typing import Any

from benchmark.toki.core import TokiKI


class Oracle(TokiKI):
    """TokiKI whose defaults are this submission's: explainer 'grad', judge_explanations 'own'."""

    def __init__(self, explainer: str = "grad", judge_explanations: str = "own", **params: Any) -> None:
        super().__init__(explainer=explainer, judge_explanations=judge_explanations, **params)


__all__ = ["Oracle"]
