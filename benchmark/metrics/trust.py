"""Trust-track metrics (SPECS §1.10): an oracle's trustworthy / untrustworthy verdicts against the
ground-truth trust labels, with *trustworthy as the positive class*.

Confusion table of N judged predictions (last axis ``[tp, fp, fn, tn]``, as in
`benchmark.metrics.interpretation`)::

                      truth trustworthy   truth untrustworthy
    judged trustworthy        tp                  fp
    judged untrustworthy      fn                  tn

    Acc    = (TP + TN) / N
    Pre    = TP / (TP + FP)
    Sen    = TP / (TP + FN)                 (recall of the trustworthy class)
    F1     = 2·Pre·Sen / (Pre + Sen) = 2TP / (2TP + FP + FN)
    Spec   = TN / (TN + FP)                 (recall of the untrustworthy class)
    G-mean = sqrt(Sen · Spec)
    BAcc   = (Sen + Spec) / 2               (balanced accuracy)
    AUC    = P(s_i > s_j) + ½ P(s_i = s_j)  over trustworthy i, untrustworthy j (Mann–Whitney), from the
             oracle's scores; for a verdict-only oracle the verdict is a two-level score and AUC = BAcc

Rate-free vs rate-bound [I, issue #24]: an oracle blind to trust that says "trustworthy" at rate q has
expected Sen = q and Spec = 1 − q, so its G-mean is √(q(1 − q)) (at most 0.5, at q = ½) and its
accuracy q·π + (1 − q)(1 − π) (π = the trustworthy share) — both depend on the rate it picks — while its
BAcc and AUC are ½ whatever q. `chance_at_rate` gives every metric's expected value for such an oracle
at a given rate; `weighted_auc` / `trust_values` take bootstrap multiplicities.

Undefined values [I, overrides SPECS §0's "0.0 and log" for this track, per issue #9]: a metric whose
denominator is empty is *undefined* — `NaN` in arrays, `None` with a reason in `trust_scores` — and is
never averaged silently. Typical case: a trust set whose test split has one class only (no
untrustworthy prediction → Spec and G-mean undefined). F1 uses the 2TP/(2TP+FP+FN) form, so it is
undefined only when the table has no positive in either the truth or the verdicts (it is 0 when
TP = 0 but FP + FN > 0, as scikit-learn's f1_score). G-mean is undefined when Sen or Spec is.
`zero_division=0.0` restores SPECS §0's global rule (0.0 in place of an undefined value; the reason is
still reported).

Registered metrics (``pooled=True``): ``explanations`` = the oracle's verdicts (N,) bool (True =
trustworthy) or an (N, 4) count array, ``truths`` = the ground-truth labels (N,) bool. The per-instance
value is the metric on that instance's one-row table (NaN where undefined); a track summarises by
pooling the counts (`confusion` → `trust_scores`), never by averaging per-instance values.

Naive baseline (SPECS §1.6): `naive_from_bins` rebuilds the confusion table of "trustworthy iff
confidence ≥ θ_conf" from the Fig. 6 per-bin counts; `FIG6_BINS` holds them (SPECS §1.11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from benchmark.metrics.base import Direction, Family, metric
from benchmark.references import TOKI



def _added(what: str) -> str:
    """The reference of a figure the TOKI paper does not report (it reports Acc, Pre, Sen, F1, Spec,
    G-mean): the setting is the paper's, the figure this benchmark's."""
    return f"{TOKI} (the setting; {what} is this benchmark's addition)"


__all__ = [
    "TRUST_METRICS", "LABELS", "FIG6_EDGES", "FIG6_BINS", "TrustScores", "chance_at_rate",
    "confusion", "instance_counts", "trust_values", "trust_scores", "naive_from_bins", "weighted_auc",
]

TRUST_METRICS = ("acc", "pre", "sen", "f1", "spec", "gmean", "bacc")  # of the confusion table
LABELS = {"acc": "Acc", "pre": "Pre", "sen": "Sen", "f1": "F1", "spec": "Spec", "gmean": "G-mean", "bacc": "BAcc",
          "auc": "AUC"}

# Fig. 6 of the TOKI paper (SPECS §1.11): confidence bins and (untrustworthy, trustworthy) counts per bin
FIG6_EDGES = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0)
FIG6_BINS: dict[str, tuple[tuple[int, int], ...]] = {
    "dongs": ((0, 0), (0, 0), (7, 23), (3, 13), (6, 15), (31, 260)),
    "cams": ((22, 18), (171, 152), (175, 179), (63, 98), (110, 104), (198, 655)),
    "hatexplain": ((0, 0), (0, 0), (85, 270), (49, 279), (50, 518), (120, 1934)),
    "ours": ((0, 0), (0, 1), (1, 4), (0, 5), (1, 7), (17, 209)),
}


def _bool(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of booleans (one per prediction), got shape {a.shape}")
    if a.dtype != bool:
        if a.size and not np.isin(a, (0, 1)).all():
            raise ValueError(f"{name} must hold booleans / 0-1 values")
        a = a.astype(bool)
    return a


def instance_counts(judged: Any, truth: Any) -> np.ndarray:
    """(N, 4) int64 one-hot rows ``[tp, fp, fn, tn]`` (trustworthy = positive)."""
    j, t = _bool(judged, "judged"), _bool(truth, "truth")
    if j.shape != t.shape:
        raise ValueError(f"{len(j)} verdicts for {len(t)} ground-truth labels")
    return np.stack([j & t, j & ~t, ~j & t, ~j & ~t], axis=1).astype(np.int64)


def confusion(judged: Any, truth: Any) -> np.ndarray:
    """The pooled table ``[tp, fp, fn, tn]`` of verdicts vs labels."""
    return instance_counts(judged, truth).sum(0)


def trust_values(counts: Any, zero_division: float = float("nan")) -> dict[str, np.ndarray]:
    """The six metrics of (…, 4) count arrays, vectorised; undefined → `zero_division` (NaN default)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.shape[-1:] != (4,):
        raise ValueError(f"counts must have a last axis of 4 ([tp, fp, fn, tn]), got shape {c.shape}")
    if (c < 0).any():
        raise ValueError("counts must be non-negative")
    tp, fp, fn, tn = np.moveaxis(c, -1, 0)

    def ratio(num, den):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    out = {"acc": ratio(tp + tn, tp + fp + fn + tn), "pre": ratio(tp, tp + fp), "sen": ratio(tp, tp + fn),
           "f1": ratio(2 * tp, 2 * tp + fp + fn), "spec": ratio(tn, tn + fp)}
    out["gmean"] = np.sqrt(out["sen"] * out["spec"])  # NaN propagates
    out["bacc"] = (out["sen"] + out["spec"]) / 2
    if not math.isnan(zero_division):
        out = {k: np.where(np.isnan(v), float(zero_division), v) for k, v in out.items()}
    return out


_REASONS = {
    "acc": "no judged predictions (N = 0)",
    "pre": "the oracle judged no prediction trustworthy (TP + FP = 0)",
    "sen": "the ground truth has no trustworthy prediction (TP + FN = 0)",
    "f1": "no trustworthy prediction in the ground truth or the verdicts (2TP + FP + FN = 0)",
    "spec": "the ground truth has no untrustworthy prediction (TN + FP = 0)",
    "auc": "the scored predictions hold one class only (AUC needs trustworthy and untrustworthy ones)",
}


@dataclass(frozen=True)
class TrustScores:
    """Pooled scores: `values[m]` is a float or None (undefined), `undefined[m]` the reason."""

    counts: dict[str, int]
    values: dict[str, float | None]
    undefined: dict[str, str]

    def __getitem__(self, name: str) -> float | None:
        return self.values[name]

    def as_dict(self) -> dict[str, Any]:
        """The counts, values and reasons for undefined values as one plain dict."""
        return {"counts": self.counts, "values": self.values, "undefined": self.undefined}


def trust_scores(counts: Any = None, *, judged: Any = None, truth: Any = None) -> TrustScores:
    """The six metrics of one pooled table (``counts`` = [tp, fp, fn, tn]) or of verdicts vs labels;
    an undefined metric is None with its reason in `undefined` (never NaN, never 0)."""
    if counts is None:
        if judged is None or truth is None:
            raise ValueError("give counts, or judged and truth")
        counts = confusion(judged, truth)
    c = np.asarray(counts, dtype=np.int64).reshape(-1)
    if c.shape != (4,):
        raise ValueError(f"a confusion table is 4 counts [tp, fp, fn, tn], got {c.tolist()}")
    vals = trust_values(c)
    values: dict[str, float | None] = {}
    undefined: dict[str, str] = {}
    for m in TRUST_METRICS:
        v = float(vals[m])
        if math.isnan(v):
            values[m] = None
            undefined[m] = (_REASONS[m] if m not in ("gmean", "bacc")
                            else "Sen or Spec undefined: " + "; ".join(_REASONS[k] for k in ("sen", "spec")
                                                                       if math.isnan(float(vals[k]))))
        else:
            values[m] = v
    return TrustScores(dict(zip(("tp", "fp", "fn", "tn"), (int(x) for x in c))), values, undefined)


def naive_from_bins(bins: Sequence[tuple[int, int]], edges: Sequence[float] = FIG6_EDGES,
                    theta_conf: float = 0.9) -> np.ndarray:
    """Confusion table of the Naive oracle (trustworthy iff confidence ≥ θ_conf, SPECS §1.6) from
    per-bin (untrustworthy, trustworthy) counts. θ_conf must be a bin edge (the bins cannot be split)."""
    edges = [float(e) for e in edges]
    if len(bins) != len(edges) - 1:
        raise ValueError(f"{len(bins)} bins for {len(edges)} edges")
    if not any(math.isclose(theta_conf, e) for e in edges):
        raise ValueError(f"θ_conf = {theta_conf} is not a bin edge {edges}: the bins cannot be split")
    tp = fp = fn = tn = 0
    for (lo, _hi), (untrust, trust) in zip(zip(edges[:-1], edges[1:]), bins):
        if lo >= theta_conf - 1e-12:  # the whole bin is judged trustworthy
            tp, fp = tp + trust, fp + untrust
        else:
            fn, tn = fn + trust, tn + untrust
    return np.array([tp, fp, fn, tn], dtype=np.int64)


def weighted_auc(scores: Any, truth: Any, weights: Any = None) -> np.ndarray:
    """AUC of `scores` (n,) against `truth` (n,) bool under instance weights (B, n) (bootstrap
    multiplicities; None = one row of ones): Σ_i Σ_j w_i w_j ([s_i > s_j] + ½ [s_i = s_j]) / (W₊ W₋) over
    trustworthy i and untrustworthy j — the Mann–Whitney statistic, ties counting ½ (= scikit-learn's
    `roc_auc_score` with `sample_weight`). Vectorised: one sort, per-score-level weight sums
    (`np.add.reduceat`). (B,) float64; NaN where a row has no weight on one of the classes."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    t = _bool(truth, "truth")
    if s.shape != t.shape:
        raise ValueError(f"{len(s)} scores for {len(t)} ground-truth labels")
    w = np.ones((1, len(s))) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.ndim == 1:
        w = w[None]
    if w.shape[1] != len(s):
        raise ValueError(f"weights of shape {w.shape} for {len(s)} scores")
    if len(s) == 0:
        return np.full(len(w), np.nan)
    order = np.argsort(s, kind="stable")
    ss, ts, ws = s[order], t[order], w[:, order]
    starts = np.flatnonzero(np.r_[True, np.diff(ss) != 0])  # first index of each distinct score level
    pos = np.add.reduceat(ws * ts, starts, axis=1)
    neg = np.add.reduceat(ws * ~ts, starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    num = (pos * (below + 0.5 * neg)).sum(1)
    den = pos.sum(1) * neg.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def chance_at_rate(rate: float, trust_share: float) -> dict[str, float]:
    """Expected metrics of an oracle blind to trust that says trustworthy at `rate` q, on a set whose
    trustworthy share is π: Sen = q, Spec = 1 − q, Pre = π, Acc = qπ + (1 − q)(1 − π), F1 = 2πq/(π + q),
    G-mean = √(q(1 − q)), BAcc = AUC = ½ (expected counts; NaN where undefined)."""
    q, pi = float(rate), float(trust_share)
    v = trust_values(np.array([q * pi, q * (1 - pi), (1 - q) * pi, (1 - q) * (1 - pi)]))
    out = {m: float(v[m]) for m in TRUST_METRICS}
    out["auc"] = 0.5 if 0 < pi < 1 else float("nan")
    return out


# ------------------------------------------------------------------------------ registered metrics
def _counts_of(explanations: Any, truths: Any) -> np.ndarray:
    e = np.asarray(explanations)
    if e.ndim == 2 and e.shape[1] == 4:
        return e.astype(np.int64)
    return instance_counts(e, truths)


_DESC = "trustworthy = positive; per-prediction [tp, fp, fn, tn], the summary pools the counts (SPECS §1.10)"


def _register(name: str, label: str, desc: str) -> None:
    def fn(explanations, truths=None) -> np.ndarray:
        return trust_values(_counts_of(explanations, truths))[name]

    fn.__name__ = f"trust_{name}"
    fn.__doc__ = desc
    metric(name=f"trust-{name}", label=label, direction=Direction.HIGHER, range=(0.0, 1.0), family=Family.TRUST,
           reference=_added("balanced accuracy") if name == "bacc" else TOKI, pooled=True,
           description=f"{desc}; {_DESC}")(fn)


for _m, _d in (("acc", "Accuracy (TP+TN)/N"), ("pre", "Precision TP/(TP+FP)"),
               ("sen", "Sensitivity TP/(TP+FN)"), ("f1", "F1 2TP/(2TP+FP+FN)"),
               ("spec", "Specificity TN/(TN+FP)"), ("gmean", "G-mean sqrt(Sen·Spec)"),
               ("bacc", "Balanced accuracy (Sen+Spec)/2: ½ for any oracle blind to trust, whatever its rate")):
    _register(_m, LABELS[_m], _d)


def _auc_metric(explanations, truths=None) -> np.ndarray:
    """AUC needs every prediction's score at once: per instance it is undefined (NaN); the trust track
    computes it over the judged predictions (`weighted_auc`)."""
    return np.full(len(np.asarray(explanations)), np.nan)


metric(name="trust-auc", label="AUC", direction=Direction.HIGHER, range=(0.0, 1.0), family=Family.TRUST,
       reference=_added("the rate-free AUC (Mann–Whitney)"), pooled=True,
       description="AUC of the oracle's scores (Mann–Whitney; a verdict-only oracle's verdict is a two-level score, "
       "AUC = BAcc): ½ for any oracle blind to trust, whatever its rate; computed over the judged "
       "predictions by the track")(_auc_metric)
