"""The GT-free metric interface, its registry and the failure codes a cell can carry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

# Why a (metric, explainer, instance) cell has no score. The board counts them per metric.
FAILURE_CODES = {
    "missing": "the explainer produced no map for this instance (it failed there)",
    "shape": "the map's shape does not match the input",
    "constant-map": "the map is constant: the metric orders or correlates features and is undefined on it",
    "nan": "the metric returned NaN or ±inf (e.g. a correlation with a constant model response)",
    "unsupported-task": "the metric is defined for classifiers only and the model is a regressor",
    "error": "the metric raised an exception on this batch",
}


@dataclass
class Scored:
    """Per-instance scores (NaN where undefined) and each undefined instance's failure code ("" if scored)."""

    values: np.ndarray
    codes: list[str]

    @classmethod
    def failed(cls, n: int, code: str) -> "Scored":
        """n instances that all failed with `code`."""
        return cls(np.full(n, np.nan), [code] * n)

    def finish(self) -> "Scored":
        """Mark every non-finite value that has no code yet as "nan"."""
        v = np.asarray(self.values, dtype=np.float64)
        codes = [c or ("" if np.isfinite(x) else "nan") for c, x in zip(self.codes, v)]
        return Scored(np.where(np.isfinite(v), v, np.nan), codes)


@dataclass(frozen=True)
class GtFreeMetric:
    """One ground-truth-free metric.

    `fn(model, inputs, maps, targets, **params) -> Scored` scores a batch; `direction` is the direction
    its authors call better ("higher" or "lower"); `needs_model` is False for metrics of the map alone
    (sparseness, complexity: no randomised-model control); `needs_variation` marks metrics that order or
    correlate a map's features, undefined on a constant map."""

    name: str
    modality: str  # "image" | "text"
    reference: str
    direction: str
    fn: Callable[..., Scored]
    params: dict[str, Any] = field(default_factory=dict)
    needs_model: bool = True
    needs_variation: bool = True
    classification_only: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"direction must be 'higher' or 'lower', got {self.direction!r}")
        if self.modality not in ("image", "text"):
            raise ValueError(f"modality must be 'image' or 'text', got {self.modality!r}")

    def __call__(self, model: Any, inputs: Sequence[Any], maps: Sequence[np.ndarray], targets: np.ndarray,
                 ids: Sequence[str] | None = None, **params: Any) -> Scored:
        """Scores of the batch; constant maps and (for classifier-only metrics) regressors are coded,
        an exception codes the whole batch "error"; the metric is never given a cell it cannot score."""
        n = len(maps)
        if self.classification_only and getattr(model, "task", "") == "regression":
            return Scored.failed(n, "unsupported-task")
        codes = [""] * n
        if self.needs_variation:
            codes = ["constant-map" if np.ptp(np.asarray(m, dtype=np.float64)) == 0 else "" for m in maps]
        keep = [i for i, c in enumerate(codes) if not c]
        values = np.full(n, np.nan)
        if keep:
            try:
                got = self.fn(model, [inputs[i] for i in keep], [maps[i] for i in keep], np.asarray(targets)[keep],
                              ids=None if ids is None else [ids[i] for i in keep], **{**self.params, **params})
            except Exception:  # noqa: BLE001 — a metric that breaks on a batch is a recorded failure, not a crash
                return Scored(values, [c or "error" for c in codes]).finish()
            values[keep] = got.values
            for j, i in enumerate(keep):
                codes[i] = got.codes[j]
        return Scored(values, codes).finish()


_REGISTRY: dict[str, GtFreeMetric] = {}


def register(metric: GtFreeMetric) -> GtFreeMetric:
    """Add `metric` to the registry (a name is registered once)."""
    if metric.name in _REGISTRY:
        raise ValueError(f"GT-free metric {metric.name!r} is registered twice")
    _REGISTRY[metric.name] = metric
    return metric
