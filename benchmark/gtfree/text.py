"""Ground-truth-free metrics for word-level text explanations, batched: every perturbed text of a batch
goes to the model in one `predict` call.

Tokens are removed (not masked), as ERASER does; the most important tokens are the map's largest
values, ties broken by position (`benchmark.metrics.robustness.top_indices`).

* comprehensiveness, sufficiency (DeYoung et al. 2020, ERASER §4): the project's one implementation,
  `benchmark.metrics.erasure.eraser` (the mean over bins B = {1, 5, 10, 20, 50} % of f(x)_j − f(x ∖ r_k)_j,
  resp. f(x)_j − f(r_k)_j; NaN for a text of fewer than two words); comprehensiveness higher, sufficiency
  lower is better.
* deletion-aopc (Samek et al. 2017, AOPC of the MoRF curve; Nguyen 2018 for text): steps k/K of the
  tokens removed (⌈k/K·L⌉ tokens), k = 0..K (K = 10): 1/(K+1) · Σ_k [f(x)_j − f(x ∖ r_{k/K})_j]; higher is
  better.
* insertion-auc (Petsiuk et al. 2018, RISE's insertion game): the area under f(r_{k/K})_j, k = 0..K,
  inserting the most important tokens first into the empty text (trapezoid rule on [0, 1]); higher is
  better.

Here f(·)_j is the model's output j — the explained class's probability, or a regressor's value.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from benchmark.gtfree.base import GtFreeMetric, Scored, register
from benchmark.metrics.erasure import ERASER_BINS, eraser
from benchmark.metrics.robustness import top_indices
from benchmark.references import ERASER, RISE, SAMEK_AOPC

CURVE_STEPS = 10


def _top(n: int, fraction: float) -> int:
    return min(n, math.ceil(fraction * n - 1e-9)) if fraction > 0 else 0


def _variants(tokens: Sequence[str], m: np.ndarray, fractions: Sequence[float], keep: bool) -> list[list[str]]:
    """`tokens` with the top ⌈f·L⌉ tokens removed (keep=False) or alone kept (keep=True), per fraction."""
    order = top_indices(m, len(tokens))
    out = []
    for f in fractions:
        top = set(order[: _top(len(tokens), f)].tolist())
        out.append([t for p, t in enumerate(tokens) if (p in top) == keep])
    return out


def _curves(model: Any, inputs: Sequence[Sequence[str]], maps: Sequence[np.ndarray], targets: np.ndarray,
            fractions: Sequence[float], keep: bool) -> tuple[np.ndarray, np.ndarray]:
    """(f(x)_j (N,), f(variant)_j (N, F)) with every variant of every instance in one predict call."""
    texts: list[list[str]] = []
    for tokens, m in zip(inputs, maps):
        if len(m) != len(tokens):
            raise ValueError(f"a map of {len(m)} values for a text of {len(tokens)} tokens")
        texts.append(list(tokens))
        texts.extend(_variants(tokens, m, fractions, keep))
    out = np.asarray(model.predict(texts), dtype=np.float64)
    f = len(fractions)
    per = out.reshape(len(inputs), f + 1, -1)
    j = np.asarray(targets, dtype=np.int64)
    picked = per[np.arange(len(inputs)), :, j]  # (N, F+1)
    return picked[:, 0], picked[:, 1:]


def _shape_codes(inputs: Sequence[Sequence[str]], maps: Sequence[np.ndarray]) -> list[str]:
    return ["shape" if np.asarray(m).ndim != 1 or len(m) != len(t) else "" for t, m in zip(inputs, maps)]


def _scored(inputs, maps, compute) -> Scored:
    codes = _shape_codes(inputs, maps)
    ok = [i for i, c in enumerate(codes) if not c]
    values = np.full(len(maps), np.nan)
    if ok:
        values[ok] = compute([inputs[i] for i in ok], [np.asarray(maps[i]) for i in ok], ok)
    return Scored(values, codes)


def comprehensiveness(model, inputs, maps, targets, bins: Sequence[float] = ERASER_BINS, **_: Any) -> Scored:
    """ERASER comprehensiveness (`benchmark.metrics.erasure`)."""
    return _scored(inputs, maps, lambda x, m, ok: eraser(model, x, m, np.asarray(targets)[ok], fractions=bins)[0])


def sufficiency(model, inputs, maps, targets, bins: Sequence[float] = ERASER_BINS, **_: Any) -> Scored:
    """ERASER sufficiency (`benchmark.metrics.erasure`)."""
    return _scored(inputs, maps, lambda x, m, ok: eraser(model, x, m, np.asarray(targets)[ok], fractions=bins)[1])


def deletion_aopc(model, inputs, maps, targets, steps: int = CURVE_STEPS, **_: Any) -> Scored:
    """AOPC of the most-relevant-first deletion curve (module docstring)."""
    fractions = [k / steps for k in range(1, steps + 1)]

    def compute(x, m, ok):
        base, removed = _curves(model, x, m, np.asarray(targets)[ok], fractions, keep=False)
        return (base[:, None] - removed).sum(axis=1) / (steps + 1)
    return _scored(inputs, maps, compute)


def insertion_auc(model, inputs, maps, targets, steps: int = CURVE_STEPS, **_: Any) -> Scored:
    """Area under the insertion curve, most relevant first, from the empty text (module docstring)."""
    fractions = [k / steps for k in range(0, steps + 1)]

    def compute(x, m, ok):
        _base, inserted = _curves(model, x, m, np.asarray(targets)[ok], fractions, keep=True)
        return np.trapezoid(inserted, dx=1.0 / steps, axis=1)
    return _scored(inputs, maps, compute)


register(GtFreeMetric("comprehensiveness", "text", ERASER, "higher", comprehensiveness,
                      {"bins": ERASER_BINS}, description="ERASER comprehensiveness (mean over 1/5/10/20/50 %)"))
register(GtFreeMetric("sufficiency", "text", ERASER, "lower", sufficiency,
                      {"bins": ERASER_BINS}, description="ERASER sufficiency (mean over 1/5/10/20/50 %)"))
register(GtFreeMetric("deletion-aopc", "text", SAMEK_AOPC, "higher", deletion_aopc,
                      {"steps": CURVE_STEPS}, description="AOPC of the MoRF deletion curve, 10 steps"))
register(GtFreeMetric("insertion-auc", "text", RISE, "higher", insertion_auc,
                      {"steps": CURVE_STEPS}, description="area under the insertion curve, 10 steps"))
