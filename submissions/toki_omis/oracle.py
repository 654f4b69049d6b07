"""TOKI with word omission (p_c(x) − p_c(x without every occurrence of w), batched) in both pipelines."""

from typing import Any

from benchmark.toki.core import Toki


class Oracle(Toki):
    """Toki whose defaults are this submission's: explainer 'omission', judge_explanations 'own'."""

    def __init__(self, explainer: str = "omission", judge_explanations: str = "own", **params: Any) -> None:
        super().__init__(explainer=explainer, judge_explanations=judge_explanations, **params)


__all__ = ["Oracle"]
