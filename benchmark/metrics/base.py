"""Metric metadata and registry (after Quantus / ferret: direction, range, family rendered directly)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from benchmark.registry import Registry


@dataclass(frozen=True)
class Metric:
    name: str  # registry key, e.g. "kl"
    label: str  # short column label, e.g. "KL"
    direction: str  # "lower" or "higher" is better
    range: tuple[float, float]
    family: str  # e.g. "distribution", "localisation"
    fn: Callable[..., np.ndarray]  # fn(explanations, truths, **params) -> (N,) float64, NaN = excluded
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    # pooled: the per-instance values are contingency counts (N, k); the track's `summarise` computes
    # the metric once over the summed counts (micro average) instead of averaging per-instance values
    pooled: bool = False
    # the paper the metric follows: authors, year, title, link (benchmark.references); required
    reference: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("lower", "higher"):
            raise ValueError(f"metric {self.name}: direction '{self.direction}' is unknown; must be "
                             "'lower' or 'higher'")
        if not isinstance(self.reference, str) or not self.reference.strip():
            raise ValueError(f"metric {self.name}: reference is missing; give the paper it follows (authors, "
                             "year, title, link — see benchmark.references)")

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_better else "↓"

    def __call__(self, explanations: Any, truths: Any, **params: Any) -> np.ndarray:
        """Scores with the registered defaults, overridden by those of `params` this metric takes."""
        own = {k: v for k, v in params.items() if k in self.params}
        return np.asarray(self.fn(explanations, truths, **{**self.params, **own}), dtype=np.float64)


METRICS: Registry[Metric] = Registry("metric")


def metric(name: str, label: str, direction: str, range: tuple[float, float], family: str,
           description: str = "", pooled: bool = False, *, reference: str = "",
           **params: Any) -> Callable[[Callable], Callable]:
    """Decorator registering a vectorised metric function with its metadata; `reference` (the paper,
    required) and `direction` are checked here, so a bad declaration fails at import, naming it."""

    def wrap(fn: Callable) -> Callable:
        METRICS.register(name, Metric(name, label, direction, range, family, fn,
                                      description or (fn.__doc__ or "").strip().split("\n")[0], params,
                                      pooled, reference))
        return fn

    return wrap
