"""Metric metadata and registry (after Quantus's metric attributes and MTEB's `TaskMetadata`).

A metric is a vectorised NumPy function `fn(explanations, truths, **params) -> (N,) float64` (NaN =
instance excluded) declared with keyword metadata, validated where it is declared:

    @metric(name="kl", label="KL", direction=Direction.LOWER, range=(0.0, inf),
            family=Family.DISTRIBUTION, reference=AIXI, description="...")
    def kl(explanations, truths, attribution: str = "signed") -> np.ndarray: ...

The metric's parameters (and their defaults) are the keyword parameters of `fn` after
(explanations, truths), read from its signature: they are written once, in the function.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, TypeVar

import numpy as np

from benchmark.registry import MetadataError, Registry

MetricFn = Callable[..., np.ndarray]
F = TypeVar("F", bound=Callable[..., Any])


class Direction(StrEnum):
    """Which way a metric improves; the values are the strings stored in Results ("lower", "higher")."""

    LOWER = "lower"
    HIGHER = "higher"


class Family(StrEnum):
    """What a metric measures; the site groups and explains metrics by it (values as stored and shown)."""

    DISTRIBUTION = "distribution"  # distance between normalised maps (KL, EMD)
    LOCALISATION = "localisation"  # relevance inside the ground-truth region (RMA, RRA)
    SIMILARITY = "similarity"  # correlation with the ground-truth map (PCC)
    INTERPRETATION = "interpretation"  # word labels vs a pseudo ground truth (IDC's κ, P, R)
    ZERO_CONTRIBUTION = "zero-contribution"  # ranks of provably irrelevant tokens (Camburu et al.)
    ROBUSTNESS = "robustness"  # attributions before vs after an attack (TEF)
    FAITHFULNESS = "faithfulness"  # model output when top-attributed words are removed (ERASER)
    TRUST = "trust"  # an oracle's trustworthy / untrustworthy verdicts (TOKI)


E = TypeVar("E", bound=StrEnum)


def _choice(enum: type[E], value: object, what: str, owner: str) -> E:
    """`value` as a member of `enum`, or a MetadataError naming `owner` and the allowed values."""
    if isinstance(value, str):
        try:
            return enum(value)
        except ValueError:
            pass
    allowed = ", ".join(f"'{m.value}'" for m in enum)
    raise MetadataError(f"{owner}: {what} '{value}' is unknown; must be one of {allowed}")


def require_reference(reference: object, owner: str) -> None:
    """Raise a MetadataError naming `owner` unless `reference` is a non-empty citation string."""
    if not isinstance(reference, str) or not reference.strip():
        raise MetadataError(f"{owner}: reference is missing; give the paper it follows (authors, year, title, "
                            "link — see benchmark.references)")


def signature_params(fn: Callable[..., Any], owner: str) -> dict[str, Any]:
    """The metric parameters of `fn`: its parameters after the first two (explanations, truths), each
    with its default. Raises a MetadataError naming `owner` where `fn` takes fewer than two positional
    parameters, `*args` / `**kwargs`, or a parameter without a default."""
    params = list(inspect.signature(fn).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(params) < 2 or any(p.kind not in positional for p in params[:2]):
        raise MetadataError(f"{owner}: its function must take (explanations, truths, **params) positionally")
    out: dict[str, Any] = {}
    for p in params[2:]:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise MetadataError(f"{owner}: its function takes *{p.name}; name every parameter with its default")
        if p.default is inspect.Parameter.empty:
            raise MetadataError(f"{owner}: parameter '{p.name}' of its function has no default")
        out[p.name] = p.default
    return out


@dataclass(frozen=True, kw_only=True)
class Metric:
    """A registered metric: its function and validated metadata (checked in `__post_init__`)."""

    name: str  # registry key, e.g. "kl"
    label: str  # short column label, e.g. "KL"
    direction: Direction  # which way is better; compares equal to "lower" / "higher"
    range: tuple[float, float]  # (low, high), low < high; ±inf for unbounded
    family: Family
    fn: MetricFn  # fn(explanations, truths, **params) -> (N,) float64, NaN = excluded
    # the paper the metric follows: authors, year, title, link (benchmark.references); required
    reference: str
    description: str = ""  # one line for the site; defaults to the first line of fn's docstring
    # pooled: the per-instance values are contingency counts (N, k); the track's `summarise` computes
    # the metric once over the summed counts (micro average) instead of averaging per-instance values
    pooled: bool = False
    # the keyword parameters of `fn` after (explanations, truths), with their defaults (read from fn)
    params: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        owner = f"metric {self.name}"
        if not isinstance(self.name, str) or not self.name.strip():
            raise MetadataError(f"metric {self.name!r}: name is empty")
        if not isinstance(self.label, str) or not self.label.strip():
            raise MetadataError(f"{owner}: label is empty")
        object.__setattr__(self, "direction", _choice(Direction, self.direction, "direction", owner))
        object.__setattr__(self, "family", _choice(Family, self.family, "family", owner))
        require_reference(self.reference, owner)
        low, high = self.range
        if math.isnan(low) or math.isnan(high) or not low < high:
            raise MetadataError(f"{owner}: range {self.range} is not (low, high) with low < high")
        object.__setattr__(self, "params", signature_params(self.fn, owner))
        if not self.description:
            object.__setattr__(self, "description", (self.fn.__doc__ or "").strip().split("\n")[0])

    @property
    def higher_is_better(self) -> bool:
        """True where a higher value is better (`direction` is "higher")."""
        return self.direction == Direction.HIGHER

    @property
    def arrow(self) -> str:
        """↑ where higher is better, ↓ where lower is."""
        return "↑" if self.higher_is_better else "↓"

    def __call__(self, explanations: Any, truths: Any, **params: Any) -> np.ndarray:
        """Scores with the registered defaults, overridden by those of `params` this metric takes."""
        own = {k: v for k, v in params.items() if k in self.params}
        return np.asarray(self.fn(explanations, truths, **{**self.params, **own}), dtype=np.float64)


METRICS: Registry[Metric] = Registry("metric")


def metric(*, name: str, label: str, direction: Direction | str, range: tuple[float, float],
           family: Family | str, reference: str = "", description: str = "",
           pooled: bool = False) -> Callable[[F], F]:
    """Decorator registering a vectorised metric function with its metadata (keywords only).

    The metric's parameters are the function's keyword parameters after (explanations, truths).
    Every field is validated here (`Metric.__post_init__`) and the name must be new, so a bad
    declaration fails at import with a `MetadataError` (or `RegistryError` for a duplicate) naming it."""

    def wrap(fn: F) -> F:
        owner = f"metric {name}"
        METRICS.register(name, Metric(name=name, label=label, range=range, fn=fn, reference=reference,
                                      direction=_choice(Direction, direction, "direction", owner),
                                      family=_choice(Family, family, "family", owner),
                                      description=description, pooled=pooled))
        return fn

    return wrap
