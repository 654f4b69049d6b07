"""ERASER comprehensiveness and sufficiency of word attributions on a model, one `predict` call per batch.

DeYoung et al. 2020 (ERASER §4), with r_k the top ⌈k·L⌉ words of a text of L words (at least one; by
`top_indices`: largest first, by |a| when `by_abs`, ties by position), over bins B = {1, 5, 10, 20, 50} %:

    comprehensiveness = 1/|B| · Σ_{k∈B} [f(x)_j − f(x ∖ r_k)_j]      (higher: the words mattered)
    sufficiency       = 1/|B| · Σ_{k∈B} [f(x)_j − f(r_k)_j]          (lower: the words suffice)

where j is the explained output (`targets`; by default the predicted class of x). ERASER's paper also
averages in the k = 0 term, which is 0: that only scales both by |B|/(|B|+1), and no ranking changes.
A text of fewer than two words (or whose attribution has another length) gets NaN. Used by the robustness
track (its faithfulness gate) and the metric board (`benchmark.gtfree.text`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from benchmark.metrics.robustness import top_indices

ERASER_BINS = (0.01, 0.05, 0.1, 0.2, 0.5)


def eraser(model: Any, texts: Sequence[Sequence[str]], attributions: Sequence[np.ndarray],
           targets: Sequence[int] | np.ndarray | None = None, by_abs: bool = False,
           fractions: Sequence[float] = ERASER_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(comprehensiveness, sufficiency) per text (module docstring): two arrays, NaN where undefined."""
    probe: list[list[str]] = []
    owner: list[tuple[int, str]] = []  # (text, "x" / "comp" / "suff")
    for t, (toks, a) in enumerate(zip(texts, attributions)):
        n = len(toks or [])
        if n < 2 or len(a) != n:
            continue
        probe.append(list(toks))
        owner.append((t, "x"))
        for f in fractions:
            top = set(top_indices(a, max(1, math.ceil(f * n - 1e-9)), by_abs).tolist())
            probe.append([w for i, w in enumerate(toks) if i not in top])
            owner.append((t, "comp"))
            probe.append([w for i, w in enumerate(toks) if i in top])
            owner.append((t, "suff"))
    comp, suff = np.full(len(texts), np.nan), np.full(len(texts), np.nan)
    if not probe:
        return comp, suff
    probs = np.asarray(model.predict(probe), dtype=np.float64)
    full: dict[int, tuple[int, float]] = {}
    for (t, what), p in zip(owner, probs):
        if what == "x":
            label = int(np.argmax(p)) if targets is None else int(targets[t])
            full[t] = (label, float(p[label]))
    parts: dict[tuple[int, str], list[float]] = {}
    for (t, what), p in zip(owner, probs):
        if what != "x":
            label, p0 = full[t]
            parts.setdefault((t, what), []).append(p0 - float(p[label]))
    for (t, what), v in parts.items():
        (comp if what == "comp" else suff)[t] = float(np.mean(v))
    return comp, suff
