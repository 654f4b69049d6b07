"""Zero-contribution error rates of Camburu et al. (2019), SPECS §4.6 Eqs. 4–6, for the `rcnn` track.

Ground truth per instance: one label per token position, `N` (non-selected: provably zero contribution),
`SDK` (selected, relevance unknown) or `SR` (selected and clearly relevant) — see
`generators/rcnn/verify.py`. An explanation is one score per token (higher = more important); the
explainer's ranking r_1 … r_n sorts the tokens by score, decreasing.

Per instance (the runner reports the mean (std) over instances):
* `pct-first`   (A): 100 · [r_1 ∈ N]                           — the mean is Eq. 4 ×100;
* `pct-misrank` (B): 100 · [∃ i < j : r_i ∈ N ∧ r_j ∈ SR]      — Eq. 5 ×100 (at least one N token is
  ranked above the lowest-ranked SR token);
* `avg-misrank` (C): Σ_{i < last_si} [r_i ∈ N], last_si = the lowest rank of an SR token — Eq. 6.
Lower is better for all three. An instance with an empty N scores 0 on all three.

Ties (`ties`)
-------------
* `"position"` (SPECS §0, the default): a stable sort by decreasing score, ties broken by ascending token
  position — an N token ahead of a tied SR token counts as misranked only if it comes first in the review.
* `"pessimistic"`: every tie is broken against the explainer — N before SDK before SR — so an N token
  that merely *ties* with the top (or with the lowest SR token) counts as an error. A constant explanation
  scores 100 / 100 / |N| under it (it distinguishes nothing), while under `"position"` it scores whatever
  the review's word order happens to give. Registered as `*-pessimistic`.

`attribution="absolute"` ranks by |score| (SPECS §4.5 ranks LIME / SHAP weights by absolute value; L2X
logits and other "higher = more important" scores rank as they are, the default `"signed"`).
Undefined instances are NaN (counted as excluded by the runner): an explanation with a non-finite value,
an empty review, and — for (B) and (C) — a review without an SR token (it is not in the verified dataset).
Everything is vectorised over a padded (instances × positions) array.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from benchmark.metrics.base import Direction, Family, metric
from benchmark.references import CAMBURU

N, SDK, SR = 0, 1, 2  # token labels of the ground truth
LABELS = {"N": N, "SDK": SDK, "SR": SR}
TIES = ("position", "pessimistic")
ATTRIBUTIONS = ("signed", "absolute")
_PAD = -1


def _padded(explanations: Sequence[np.ndarray], truths: Sequence[np.ndarray],
            attribution: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores (n, L) float64 with −inf padding, labels (n, L) int8 with −1 padding, valid (n,) bool)."""
    if attribution not in ATTRIBUTIONS:
        raise ValueError(f"attribution must be one of {ATTRIBUTIONS}, got {attribution!r}")
    if len(explanations) != len(truths):
        raise ValueError(f"{len(explanations)} explanations for {len(truths)} ground truths")
    n = len(truths)
    s_list = [np.asarray(e, dtype=np.float64).reshape(-1) for e in explanations]
    g_list = [np.asarray(g).reshape(-1) for g in truths]
    lens = np.array([len(g) for g in g_list], dtype=np.int64)
    for i, (s, g) in enumerate(zip(s_list, g_list)):
        if len(s) != len(g):
            raise ValueError(f"instance {i}: explanation of {len(s)} scores for a review of {len(g)} tokens")
    width = int(lens.max()) if n else 0
    scores = np.full((n, max(width, 1)), -np.inf)
    labels = np.full((n, max(width, 1)), _PAD, dtype=np.int8)
    valid = lens > 0
    if n and lens.sum():
        flat_s, flat_g = np.concatenate(s_list), np.concatenate(g_list).astype(np.int64)
        if not np.isin(flat_g, (N, SDK, SR)).all():
            raise ValueError(f"ground-truth labels must be N={N}, SDK={SDK} or SR={SR}")
        rows = np.repeat(np.arange(n), lens)
        cols = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
        if attribution == "absolute":
            flat_s = np.abs(flat_s)
        bad = ~np.isfinite(flat_s)
        valid[np.unique(rows[bad])] = False
        scores[rows, cols] = np.where(bad, 0.0, flat_s)
        labels[rows, cols] = flat_g
    return scores, labels, valid


def zero_contribution_errors(explanations: Sequence[np.ndarray], truths: Sequence[np.ndarray],
                             ties: str = "position", attribution: str = "signed") -> dict[str, np.ndarray]:
    """The three per-instance values {"first", "misrank", "count"} (n,) float64 (see the module docstring)."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    s, g, valid = _padded(explanations, truths, attribution)
    n, width = s.shape
    pos = np.arange(width)[None, :]
    is_n, is_sr = g == N, g == SR
    top = s.max(axis=1, keepdims=True)
    if ties == "position":
        # argmax returns the first (lowest-position) maximum: the stable-sort tie rule
        first = is_n[np.arange(n), s.argmax(axis=1)]
    else:
        first = (is_n & (s == top)).any(axis=1)
    has_sr = is_sr.any(axis=1)
    low = np.where(is_sr, s, np.inf).min(axis=1, keepdims=True)  # score of the lowest-ranked SR token
    if ties == "position":
        # among SR tokens with that score the lowest-ranked is the last in position
        last_pos = np.where(is_sr & (s == low), pos, -1).max(axis=1, keepdims=True)
        above = (s > low) | ((s == low) & (pos < last_pos))
    else:
        above = s >= low
    count = (is_n & above).sum(axis=1).astype(np.float64)
    out = {"first": 100.0 * first, "misrank": 100.0 * (count > 0), "count": count}
    out = {k: v.astype(np.float64) for k, v in out.items()}
    for k in ("misrank", "count"):
        out[k][~has_sr] = np.nan
    for v in out.values():
        v[~valid] = np.nan
    return out


@metric(name="pct-first", label="%first", direction=Direction.LOWER, range=(0.0, 100.0),
        family=Family.ZERO_CONTRIBUTION, reference=CAMBURU,
        description="Eq. 4: % of instances whose top-ranked token has zero contribution (∈ N)")
def pct_first(explanations, truths, ties: str = "position", attribution: str = "signed") -> np.ndarray:
    """Eq. 4 of Camburu et al. 2019 (SPECS §1): % of instances whose top-ranked token is in N."""
    return zero_contribution_errors(explanations, truths, ties, attribution)["first"]


@metric(name="pct-misrank", label="%misrnk", direction=Direction.LOWER, range=(0.0, 100.0),
        family=Family.ZERO_CONTRIBUTION, reference=CAMBURU,
        description="Eq. 5: % of instances with an N token ranked above a clearly relevant (SR) token")
def pct_misrank(explanations, truths, ties: str = "position", attribution: str = "signed") -> np.ndarray:
    """Eq. 5: % of instances where some N token outranks some SR token."""
    return zero_contribution_errors(explanations, truths, ties, attribution)["misrank"]


@metric(name="avg-misrank", label="avg misrnk", direction=Direction.LOWER, range=(0.0, float("inf")),
        family=Family.ZERO_CONTRIBUTION, reference=CAMBURU,
        description="Eq. 6: number of N tokens ranked above the lowest-ranked SR token")
def avg_misrank(explanations, truths, ties: str = "position", attribution: str = "signed") -> np.ndarray:
    """Eq. 6: mean number of N tokens ranked above the lowest-ranked SR token."""
    return zero_contribution_errors(explanations, truths, ties, attribution)["count"]


@metric(name="pct-first-pessimistic", label="%first (pess.)", direction=Direction.LOWER, range=(0.0, 100.0),
        family=Family.ZERO_CONTRIBUTION, reference=CAMBURU,
        description="Eq. 4 with ties broken against the explainer (an N token tied with the top counts)")
def pct_first_pessimistic(explanations, truths, ties: str = "pessimistic", attribution: str = "signed") -> np.ndarray:
    """`pct_first` with ties broken against the explainer."""
    return zero_contribution_errors(explanations, truths, ties, attribution)["first"]


@metric(name="pct-misrank-pessimistic", label="%misrnk (pess.)", direction=Direction.LOWER, range=(0.0, 100.0),
        family=Family.ZERO_CONTRIBUTION, reference=CAMBURU, description="Eq. 5 with ties broken against the explainer")
def pct_misrank_pessimistic(explanations, truths, ties: str = "pessimistic", attribution: str = "signed") -> np.ndarray:
    """`pct_misrank` with ties broken against the explainer."""
    return zero_contribution_errors(explanations, truths, ties, attribution)["misrank"]


@metric(name="avg-misrank-pessimistic", label="avg misrnk (pess.)", direction=Direction.LOWER,
        range=(0.0, float("inf")), family=Family.ZERO_CONTRIBUTION, reference=CAMBURU,
        description="Eq. 6 with ties broken against the explainer")
def avg_misrank_pessimistic(explanations, truths, ties: str = "pessimistic", attribution: str = "signed") -> np.ndarray:
    """`avg_misrank` with ties broken against the explainer."""
    return zero_contribution_errors(explanations, truths, ties, attribution)["count"]
