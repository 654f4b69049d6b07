"""Ground-truth-free evaluation metrics, computed on the explanations a ground-truth board already holds.

The field scores explainers with metrics that need no ground truth (deletion curves, ERASER's
comprehensiveness and sufficiency, faithfulness correlation, infidelity, sparseness). xaibench has
ground truth, so it can say which of those metrics agree with it (`leaderboard.metric_board`).

A `GtFreeMetric` maps (model, inputs, maps, targets) of a batch of instances to one score per instance
(NaN where it is undefined, with a failure code). Image metrics are the field's own implementations
(Quantus 0.6.0, `benchmark.gtfree.image`); text metrics are ERASER's and Samek et al.'s definitions,
batched (`benchmark.gtfree.text`). `benchmark.gtfree.compute` runs them over a board's cached maps.
"""

from __future__ import annotations

import benchmark.gtfree.image  # noqa: F401  (registers the image metrics)
import benchmark.gtfree.text  # noqa: F401  (registers the text metrics)
from benchmark.gtfree.base import _REGISTRY, FAILURE_CODES, GtFreeMetric, Scored, register


def metrics_for(modality: str) -> list[GtFreeMetric]:
    """The registered metrics of one modality, in registration order."""
    return [m for m in _REGISTRY.values() if m.modality == modality]


def get_metric(name: str) -> GtFreeMetric:
    """The metric `name`; KeyError naming the known ones."""
    if name not in _REGISTRY:
        raise KeyError(f"no GT-free metric {name!r}; known: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


__all__ = ["FAILURE_CODES", "GtFreeMetric", "Scored", "get_metric", "metrics_for", "register"]
