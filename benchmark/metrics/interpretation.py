"""Interpretation metrics of the IDC track (SPECS §5.3, §5.6): word-level precision, recall and Cohen's κ
of an interpretation method against a pseudo interpretation ground truth (PGT), RelativeConf (Eq. 8),
the set-level protocol, and token-level agreement with human rationales.

Contingency table
-----------------
Every comparison reduces to a 2×2 table of items (word types of a document, vocabulary words, or token
positions) labelled by the method (E, "explanation") and by the ground truth (G)::

                 G = 1   G = 0
        E = 1     tp      fp
        E = 0     fn      tn

stored as the last axis ``[tp, fp, fn, tn]`` of a count array. With N = tp + fp + fn + tn,

    P = tp / (tp + fp),   R = tp / (tp + fn),   κ = (p_o − p_e) / (1 − p_e),
    p_o = (tp + tn) / N,  p_e = [(tp + fp)(tp + fn) + (fn + tn)(fp + tn)] / N².

SPECS §0 edge rules: an empty denominator gives 0.0 (P with no predicted positive, R with no true
positive, all three on an empty table N = 0); κ with p_e = 1 is 1.0 if p_o = 1, else 0.0. κ is computed
in the equivalent, exactly-zero-detecting form κ = 2(tp·tn − fp·fn) / [(tp + fp)(fp + tn) + (tp + fn)(fn + tn)]
(the denominator is N²(1 − p_e)); for N > 0, p_e = 1 forces p_o = 1 (every item in one and the same
class for both labellings), so such a table scores 1.0.

Per-document protocol (SPECS §5.6 [I])
--------------------------------------
Items: the distinct lower-cased token types of a correctly classified test document d of class c
(optionally words only, `exclude_punctuation`). Ground truth ``G_d = {w ∈ d : w ∈ IF_c}``. Method labels:
the method's token scores for class c are normalised by the document maximum of the positive scores
(negatives clipped to 0), a word type scores the maximum over its occurrences, and
``E_d = {w : score ≥ α}`` (``binarise="threshold"``, α = 0.3) or the k = |G_d| best types
(``binarise="top-k"``; stable ranking, ties broken by first occurrence, SPECS §0).

Aggregation: the *pooled* (micro) values compute P, R, κ once over the counts summed over documents
(documents with ``G_d = ∅`` still contribute their fp/tn), with a percentile-bootstrap 95% CI over
documents; the *macro* values average the per-document values over documents with ``G_d ∪ E_d ≠ ∅``.

Registered metrics take ``explanations`` = the (N, 4) per-document count array (the track computes it
with `document_counts`) and ignore ``truths``; the per-instance output is the per-document value (NaN
where a macro metric excludes the document). For the ``pooled=True`` metrics the track's summary pools
the counts (`pooled` / `pooled_summary`) instead of averaging these values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from benchmark.metrics.base import Direction, Family, metric
from benchmark.references import IDC
from benchmark.tokenize import is_word

__all__ = [
    "ALPHA", "BETA", "BINARISATIONS", "STATISTICS", "TypeScores",
    "select_features", "type_scores", "method_labels", "document_counts", "batch_counts",
    "label_counts", "prk", "statistic", "macro_values", "macro", "pooled", "pooled_summary",
    "relative_conf", "average_relative_drop", "set_level_counts", "token_agreement", "binarise_scores",
]

ALPHA = 0.3  # relevance threshold α (WGA post-processing and the evaluation threshold, SPECS §5.10)
BETA = 0.25  # margin β of the WGA post-processing
BINARISATIONS = ("threshold", "top-k")
STATISTICS = ("precision", "recall", "kappa")
TOL = 1e-12  # slack of the ≥ comparisons in `select_features` (0.6 − 0.35 ≥ 0.25 is False in floats)
_BOOT_CHUNK = 64  # bootstrap resamples drawn per chunk (fixed: the draws depend only on the seed)


# ------------------------------------------------------------------------------ WGA post-processing
def select_features(rs, alpha: float = ALPHA, beta: float = BETA, tol: float = TOL) -> list[np.ndarray]:
    """Interpretation features per class from a relevance matrix (SPECS §5.3, Fig. 1):

        w ∈ IF_c  ⇔  RS[w, c] ≥ α  and  RS[w, c] − RS[w, ĉ] ≥ β  for all ĉ ≠ c,

    i.e. RS[w, c] − max_{ĉ≠c} RS[w, ĉ] ≥ β ("for all other classes"; identical to the pseudo-code for
    two classes). With β > 0 a word belongs to at most one class. Both comparisons allow a slack of
    `tol` so that hand-written decimal scores at the boundary are not lost to rounding.

    rs: (|V|, |C|) finite array. Returns |C| sorted int64 arrays of row (word) indices.
    """
    rs = np.asarray(rs, dtype=np.float64)
    if rs.ndim != 2 or rs.shape[1] == 0:
        raise ValueError(f"rs must be a (|V|, |C|) matrix with at least one class, got shape {rs.shape}")
    if not np.isfinite(rs).all():
        raise ValueError("rs contains non-finite values; relevance scores must be finite numbers")
    if not (math.isfinite(alpha) and math.isfinite(beta)):
        raise ValueError(f"alpha and beta must be finite, got alpha={alpha}, beta={beta}")
    n_v, n_c = rs.shape
    if n_c == 1:
        other = np.full_like(rs, -np.inf)  # no other class: only the α rule applies
    else:
        # max over the other classes: the row maximum, except in the argmax column → the runner-up
        order = np.argsort(rs, axis=1)
        rows = np.arange(n_v)
        top1, top2 = rs[rows, order[:, -1]], rs[rows, order[:, -2]]
        other = np.broadcast_to(top1[:, None], rs.shape).copy()
        other[rows, order[:, -1]] = top2
    keep = (rs >= alpha - tol) & (rs - other >= beta - tol)
    return [np.flatnonzero(keep[:, c]).astype(np.int64) for c in range(n_c)]


# ------------------------------------------------------------------------------ per-document protocol
class TypeScores(NamedTuple):
    """Distinct lower-cased token types of a document (first-occurrence order) and their scores."""

    types: list[str]
    scores: np.ndarray


def _scores_1d(tokens: Sequence[str], scores) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or len(s) != len(tokens):
        raise ValueError(f"scores must be one value per token: {len(tokens)} tokens, scores of shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError("scores contain non-finite values; explanations must be finite numbers")
    return s


def _normalise(s: np.ndarray) -> np.ndarray:
    """max(s, 0) / max(max(s, 0)); all zeros when no score is positive."""
    pos = np.maximum(s, 0.0)
    top = pos.max(initial=0.0)
    return pos / top if top > 0 else pos


def type_scores(tokens: Sequence[str], scores, exclude_punctuation: bool = False) -> TypeScores:
    """Word-type scores of one document (SPECS §5.6 [I]):

        s'(p) = max(s(p), 0) / max_q max(s(q), 0),     score(w) = max_{p : token_p = w} s'(p),

    over the lower-cased token types in first-occurrence order; every score is 0 when no token score is
    positive. With `exclude_punctuation` punctuation tokens (`benchmark.tokenize.is_word` False) are
    dropped *before* normalising: they are not items, and neither set the document maximum.
    """
    s = _scores_1d(tokens, scores)
    low = [t.lower() for t in tokens]
    if exclude_punctuation:
        keep = [i for i, t in enumerate(low) if is_word(t)]
        low, s = [low[i] for i in keep], s[keep]
    index: dict[str, int] = {}
    inverse = np.fromiter((index.setdefault(t, len(index)) for t in low), dtype=np.int64, count=len(low))
    values = np.zeros(len(index))
    np.maximum.at(values, inverse, _normalise(s))
    return TypeScores(list(index), values)


def _top_k_mask(values: np.ndarray, k: int) -> np.ndarray:
    """True for the k largest values; stable: ties go to the earlier position (SPECS §0)."""
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    mask = np.zeros(len(values), dtype=bool)
    mask[np.argsort(-values, kind="stable")[:k]] = True
    return mask


def _labels(values: np.ndarray, binarise: str, alpha: float, k: int | None) -> np.ndarray:
    if binarise == "threshold":
        if not math.isfinite(alpha):
            raise ValueError(f"alpha must be finite, got {alpha}")
        return values >= alpha
    if binarise == "top-k":
        if k is None:
            raise ValueError("binarise='top-k' needs k (document_counts uses k = |G_d| by default)")
        return _top_k_mask(values, int(k))
    raise ValueError(f"binarise must be one of {BINARISATIONS}, got {binarise!r}")


def method_labels(tokens: Sequence[str], scores, binarise: str = "threshold", alpha: float = ALPHA,
                  k: int | None = None, exclude_punctuation: bool = False) -> tuple[list[str], np.ndarray]:
    """The method's binary label per word type of one document (SPECS §5.6 [I]):
    ``binarise="threshold"``: E_d = {w : score(w) ≥ α} on the `type_scores`;
    ``binarise="top-k"``: the k types with the highest score (exactly min(k, #types) of them, ties to
    the earlier first occurrence; zero-score types fill up when fewer than k scores are positive).
    Returns (types, labels) with labels a bool array aligned with types."""
    types, values = type_scores(tokens, scores, exclude_punctuation)
    return types, _labels(values, binarise, alpha, k)


def label_counts(pred, truth) -> np.ndarray:
    """[tp, fp, fn, tn] (int64) of two equally long binary label vectors (method, ground truth)."""
    p = np.asarray(pred, dtype=bool).ravel()
    g = np.asarray(truth, dtype=bool).ravel()
    if p.shape != g.shape:
        raise ValueError(f"label vectors differ in length: {p.size} predicted vs {g.size} true")
    return np.bincount(_codes(p, g), minlength=4).astype(np.int64)


def _codes(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Cell of each item: 0 = tp, 1 = fp, 2 = fn, 3 = tn."""
    return 2 * (~p).astype(np.int64) + (~g).astype(np.int64)


def document_counts(tokens: Sequence[str], scores, features: Iterable[str], binarise: str = "threshold",
                    alpha: float = ALPHA, exclude_punctuation: bool = False, k: int | None = None) -> np.ndarray:
    """[tp, fp, fn, tn] (int64) of one document under the per-document protocol (SPECS §5.6 [I]).

    Items: the distinct lower-cased token types of the document (punctuation dropped with
    `exclude_punctuation`). G_d = items ∩ `features` (the PGT set IF_c of the document's class, as
    lower-cased word types); E_d from `method_labels` — ``binarise="threshold"`` (score ≥ `alpha`) or
    ``"top-k"`` with k = |G_d| unless `k` is given.
    """
    features = features if isinstance(features, (set, frozenset, dict)) else set(features)
    types, values = type_scores(tokens, scores, exclude_punctuation)
    g = np.fromiter((t in features for t in types), dtype=bool, count=len(types))
    if binarise == "top-k" and k is None:
        k = int(g.sum())
    e = _labels(values, binarise, alpha, k)
    return np.bincount(_codes(e, g), minlength=4).astype(np.int64)


def batch_counts(tokens: Sequence[Sequence[str]], scores: Sequence, features: Sequence[Iterable[str]],
                 **options) -> np.ndarray:
    """(N, 4) `document_counts` of N documents; `features[i]` is the PGT set of document i's class
    (the same set object may be repeated), `options` as for `document_counts`."""
    if not (len(tokens) == len(scores) == len(features)):
        raise ValueError(f"tokens, scores and features must be equally long, got "
                         f"{len(tokens)}, {len(scores)}, {len(features)}")
    out = np.zeros((len(tokens), 4), dtype=np.int64)
    for i, (t, s, f) in enumerate(zip(tokens, scores, features)):
        out[i] = document_counts(t, s, f, **options)
    return out


# ------------------------------------------------------------------------------ P, R, κ
def _counts(counts) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 0 or c.shape[-1] != 4:
        raise ValueError(f"counts must have a last axis [tp, fp, fn, tn] of length 4, got shape {c.shape}")
    if not np.isfinite(c).all() or (c < 0).any():
        raise ValueError("counts must be finite and non-negative")
    return c


def prk(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, R, κ) of count tables ``(..., 4) = [tp, fp, fn, tn]``, vectorised over the leading axes:

        P = tp/(tp+fp),  R = tp/(tp+fn),
        κ = (p_o − p_e)/(1 − p_e) = 2(tp·tn − fp·fn) / [(tp+fp)(fp+tn) + (tp+fn)(fn+tn)],

    with SPECS §0 edge rules: empty denominator → 0.0; p_e = 1 → κ = 1.0 if p_o = 1 else 0.0 (an
    empty table has p_o = 0 by this rule, so κ = 0.0). Returns float64 arrays of shape ``counts.shape[:-1]``.
    """
    c = _counts(counts)
    tp, fp, fn, tn = np.moveaxis(c, -1, 0)
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        r = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        den = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)  # = N² (1 − p_e)
        po = np.where(n > 0, (tp + tn) / n, 0.0)
        k = np.where(den > 0, 2.0 * (tp * tn - fp * fn) / den, np.where(po == 1.0, 1.0, 0.0))
    return p, r, k


def statistic(counts, which: str) -> np.ndarray:
    """One of `prk`'s values by name: "precision", "recall" or "kappa"."""
    if which not in STATISTICS:
        raise ValueError(f"which must be one of {STATISTICS}, got {which!r}")
    return prk(counts)[STATISTICS.index(which)]


def macro_values(counts, which: str) -> np.ndarray:
    """(N,) per-document values, NaN for documents with G_d ∪ E_d = ∅ (tp + fp + fn = 0), which the
    macro average excludes (SPECS §5.6 [I])."""
    c = _counts(counts)
    v = statistic(c, which)
    return np.where(c[..., :3].sum(-1) > 0, v, np.nan)


def macro(counts, which: str) -> float:
    """Macro average over documents with G_d ∪ E_d ≠ ∅; NaN when there is none."""
    v = macro_values(counts, which)
    ok = np.isfinite(v)
    return float(v[ok].mean()) if ok.any() else float("nan")


def _bootstrap(c: np.ndarray, which: str, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot,) statistic of the counts summed over documents resampled with replacement. Each chunk
    of resamples is an index matrix (b, N); bincount turns it into multiplicities W (b, N) and one
    matmul W @ counts gives the b summed tables."""
    n = len(c)
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    for s in range(0, n_boot, _BOOT_CHUNK):
        b = min(_BOOT_CHUNK, n_boot - s)
        idx = rng.integers(0, n, size=(b, n))
        w = np.bincount((idx + n * np.arange(b)[:, None]).ravel(), minlength=b * n).reshape(b, n)
        out[s:s + b] = statistic(w.astype(np.float64) @ c, which)
    return out


def _pooled(counts, which: str, n_boot: int, seed: int) -> tuple[np.ndarray, float, np.ndarray]:
    c = _counts(counts)
    if c.ndim != 2:
        raise ValueError(f"counts must be an (N, 4) array of per-document tables, got shape {c.shape}")
    if len(c) == 0:
        return c, float("nan"), np.empty(0)
    value = float(statistic(c.sum(0), which))
    boot = _bootstrap(c, which, int(n_boot), seed) if n_boot > 0 else np.empty(0)
    return c, value, boot


def pooled(counts, which: str, n_boot: int = 1000, seed: int = 0,
           level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Pooled (micro) value over documents and its percentile-bootstrap CI:

        value = stat(Σ_d counts_d),   CI = quantiles (1 ∓ level)/2 of stat(Σ_{d ∈ B} counts_d)

    over `n_boot` resamples B of the N documents drawn with replacement (`seed` fixes them; the same
    seed resamples the same documents for every statistic). counts: (N, 4). With no documents the
    value and the interval are NaN; with `n_boot=0` the interval is (value, value).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    _, value, boot = _pooled(counts, which, n_boot, seed)
    if boot.size == 0:
        return value, (value, value)
    return value, _interval(boot, level)


def _interval(boot: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def pooled_summary(counts, which: str, n_boot: int = 1000, seed: int = 0, label: str = "",
                   direction: str = "higher"):
    """A `MetricSummary` for a pooled metric: mean = the pooled value, ci95 = the percentile-bootstrap
    95% interval, std = the bootstrap standard error of the pooled value (not a per-document spread),
    n = the number of documents, excluded = 0 (every document's counts enter the pool)."""
    from benchmark.store.results import MetricSummary

    c, value, boot = _pooled(counts, which, n_boot, seed)
    if len(c) == 0:
        return MetricSummary(None, None, None, 0, 0, direction, label)
    if boot.size == 0:
        return MetricSummary(value, 0.0, (value, value), len(c), 0, direction, label)
    se = float(boot.std(ddof=1)) if boot.size > 1 else 0.0
    return MetricSummary(value, se, _interval(boot, 0.95), len(c), 0, direction, label)


# ------------------------------------------------------------------------------ registered metrics
_DESC = "per-document counts [tp, fp, fn, tn] against the PGT; summary pools the counts (micro)"


@metric(name="interp-kappa", label="κ", direction=Direction.HIGHER, range=(-1.0, 1.0), family=Family.INTERPRETATION,
        reference=IDC, pooled=True, description="Cohen's κ of the method's word labels vs the PGT; " + _DESC)
def interp_kappa(explanations, truths=None) -> np.ndarray:
    """Per-document Cohen's κ of the (N, 4) counts (`prk`); the track's summary pools the counts."""
    return statistic(explanations, "kappa")


@metric(name="interp-precision", label="P", direction=Direction.HIGHER, range=(0.0, 1.0), family=Family.INTERPRETATION,
        reference=IDC, pooled=True, description="Interpretation precision tp/(tp+fp); " + _DESC)
def interp_precision(explanations, truths=None) -> np.ndarray:
    """Per-document interpretation precision of the (N, 4) counts; the summary pools the counts."""
    return statistic(explanations, "precision")


@metric(name="interp-recall", label="R", direction=Direction.HIGHER, range=(0.0, 1.0), family=Family.INTERPRETATION,
        reference=IDC, pooled=True, description="Interpretation recall tp/(tp+fn); " + _DESC)
def interp_recall(explanations, truths=None) -> np.ndarray:
    """Per-document interpretation recall of the (N, 4) counts; the summary pools the counts."""
    return statistic(explanations, "recall")


_MACRO = "macro average over documents with G_d ∪ E_d ≠ ∅ (others excluded)"


@metric(name="interp-kappa-macro", label="κ/doc", direction=Direction.HIGHER, range=(-1.0, 1.0),
        family=Family.INTERPRETATION, reference=IDC, description="Cohen's κ per document, " + _MACRO)
def interp_kappa_macro(explanations, truths=None) -> np.ndarray:
    """Per-document κ, NaN where G_d ∪ E_d = ∅ (`macro_values`)."""
    return macro_values(explanations, "kappa")


@metric(name="interp-precision-macro", label="P/doc", direction=Direction.HIGHER, range=(0.0, 1.0),
        family=Family.INTERPRETATION, reference=IDC, description="Interpretation precision per document, " + _MACRO)
def interp_precision_macro(explanations, truths=None) -> np.ndarray:
    """Per-document precision, NaN where G_d ∪ E_d = ∅ (`macro_values`)."""
    return macro_values(explanations, "precision")


@metric(name="interp-recall-macro", label="R/doc", direction=Direction.HIGHER, range=(0.0, 1.0),
        family=Family.INTERPRETATION, reference=IDC, description="Interpretation recall per document, " + _MACRO)
def interp_recall_macro(explanations, truths=None) -> np.ndarray:
    """Per-document recall, NaN where G_d ∪ E_d = ∅ (`macro_values`)."""
    return macro_values(explanations, "recall")


# ------------------------------------------------------------------------------ RelativeConf
def _confidences(y, y_hat) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=np.float64)
    y_hat = np.asarray(y_hat, dtype=np.float64)
    if y.shape != y_hat.shape or y.ndim != 1 or y.size == 0:
        raise ValueError(f"y and y_hat must be non-empty 1-D arrays of the same length (one confidence per "
                         f"document), got shapes {y.shape} and {y_hat.shape}")
    for name, v in (("y", y), ("y_hat", y_hat)):
        if not np.isfinite(v).all() or (v < 0).any() or (v > 1).any():
            raise ValueError(f"{name} must hold confidences in [0, 1]")
    if (y <= 0).any():
        raise ValueError("y must be > 0: the confidence of a correctly classified document for its "
                         "predicted class cannot be 0 (RelativeConf divides by it)")
    return y, y_hat


def relative_conf(y, y_hat) -> float:
    """RelativeConf, SPECS §5.6 Eq. 8, implemented literally:

        RelativeConf = (1/n) Σ_d ( y_d − max(0, y_d − ŷ_d) / y_d ),

    y_d = confidence of correctly classified document d for its predicted class, ŷ_d = the same after
    deleting every PGT word of that class. Nothing removed (ŷ = y) gives the mean confidence; lower
    means the PGT words matter more."""
    y, y_hat = _confidences(y, y_hat)
    return float(np.mean(y - np.maximum(0.0, y - y_hat) / y))


def average_relative_drop(y, y_hat) -> float:
    """The standard average relative confidence drop (SPECS §5.6 [I]): (1/n) Σ_d max(0, y_d − ŷ_d)/y_d."""
    y, y_hat = _confidences(y, y_hat)
    return float(np.mean(np.maximum(0.0, y - y_hat) / y))


# ------------------------------------------------------------------------------ set-level protocol
def set_level_counts(method_rs, pgt_sets: Sequence[Iterable], alpha: float = ALPHA, beta: float = BETA,
                     vocab: Sequence[str] | None = None) -> dict:
    """Set-level protocol (SPECS §5.6, last bullet): the WGA post-processing (`select_features`, α, β)
    of the method's averaged relevance matrix `method_rs` (|V|, |C|) gives method feature sets M_c,
    compared per class with the PGT sets IF_c over the vocabulary V (items = the |V| rows):

        tp_c = |M_c ∩ IF_c|,  fp_c = |M_c \\ IF_c|,  fn_c = |IF_c \\ M_c|,  tn_c = |V| − tp_c − fp_c − fn_c.

    pgt_sets: one collection per class of row indices of V, or of words when `vocab` (the row labels)
    is given; PGT words outside V cannot be items and are counted in ``missing`` (per class).
    Returns {"method_sets": list of index arrays, "counts": (|C|, 4), "precision"/"recall"/"kappa":
    (|C|,) per class, "pooled": {"precision", "recall", "kappa"} over the counts summed over classes,
    "missing": (|C|,) int}.
    """
    rs = np.asarray(method_rs, dtype=np.float64)
    sets = select_features(rs, alpha, beta)
    n_v, n_c = rs.shape
    if len(pgt_sets) != n_c:
        raise ValueError(f"pgt_sets must hold one set per class: {n_c} classes, {len(pgt_sets)} sets")
    where = None
    if vocab is not None:
        where = {w: i for i, w in enumerate(vocab)}
        if len(where) != n_v:
            raise ValueError(f"vocab must list the {n_v} distinct words of method_rs's rows, got {len(vocab)}")
    counts = np.zeros((n_c, 4), dtype=np.int64)
    missing = np.zeros(n_c, dtype=np.int64)
    for c, pgt in enumerate(pgt_sets):
        truth = np.zeros(n_v, dtype=bool)
        if where is None:
            idx = np.asarray(list(pgt), dtype=np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= n_v):
                raise ValueError(f"pgt_sets[{c}] holds row indices outside 0..{n_v - 1}")
        else:
            found = [where.get(w) for w in pgt]
            missing[c] = sum(i is None for i in found)
            idx = np.asarray([i for i in found if i is not None], dtype=np.int64)
        truth[idx] = True
        pred = np.zeros(n_v, dtype=bool)
        pred[sets[c]] = True
        counts[c] = label_counts(pred, truth)
    p, r, k = prk(counts)
    pp, pr, pk = prk(counts.sum(0))
    return {"method_sets": sets, "counts": counts, "precision": p, "recall": r, "kappa": k,
            "pooled": {"precision": float(pp), "recall": float(pr), "kappa": float(pk)}, "missing": missing}


# ------------------------------------------------------------------------------ agreement with people
def binarise_scores(scores, alpha: float | None = ALPHA, top_fraction: float | None = None) -> np.ndarray:
    """Per-token binary labels from one document's token scores:
    threshold (default): max(s, 0)/max(max(s, 0)) ≥ α (all False when no score is positive and α > 0);
    ``top_fraction=f``: the ⌈f·n⌉ highest-scoring tokens (stable ranking, ties to the earlier
    position; ⌈·⌉ with a 1e-9 slack so that 0.3·10 selects 3). Giving `top_fraction` overrides `alpha`."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"scores must be a 1-D array (one score per token), got shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError("scores contain non-finite values; explanations must be finite numbers")
    if top_fraction is not None:
        if not 0 <= top_fraction <= 1:
            raise ValueError(f"top_fraction must be in [0, 1], got {top_fraction}")
        return _top_k_mask(s, math.ceil(top_fraction * len(s) - 1e-9))
    if alpha is None or not math.isfinite(alpha):
        raise ValueError("give a finite alpha or a top_fraction")
    return _normalise(s) >= alpha


def token_agreement(pred: Sequence, human: Sequence) -> dict:
    """Token-level agreement of a method's binary token labels with human rationales, per document and
    pooled over token positions (items = token positions, SPECS §0; ground truth = the human labels):

    Returns {"counts": (N, 4) [tp, fp, fn, tn], "precision"/"recall"/"kappa": (N,) per document (`prk`,
    SPECS §0 edge rules), "pooled_precision"/"pooled_recall"/"pooled_kappa": float over the summed
    counts}. Counted in one bincount over all positions."""
    if len(pred) != len(human):
        raise ValueError(f"pred and human must hold the same documents: {len(pred)} vs {len(human)}")
    ps = [np.asarray(p, dtype=bool).ravel() for p in pred]
    hs = [np.asarray(h, dtype=bool).ravel() for h in human]
    lens = np.array([len(p) for p in ps], dtype=np.int64)
    bad = [i for i, (p, h) in enumerate(zip(ps, hs)) if len(p) != len(h)]
    if bad:
        i = bad[0]
        raise ValueError(f"document {i}: {len(ps[i])} predicted labels vs {len(hs[i])} human labels "
                         f"({len(bad)} documents differ in length)")
    n = len(ps)
    if n == 0:
        counts = np.zeros((0, 4), dtype=np.int64)
    else:
        doc = np.repeat(np.arange(n), lens)
        codes = _codes(np.concatenate(ps), np.concatenate(hs))
        counts = np.bincount(4 * doc + codes, minlength=4 * n).reshape(n, 4).astype(np.int64)
    p, r, k = prk(counts)
    pp, pr, pk = prk(counts.sum(0))
    return {"counts": counts, "precision": p, "recall": r, "kappa": k,
            "pooled_precision": float(pp), "pooled_recall": float(pr), "pooled_kappa": float(pk)}
