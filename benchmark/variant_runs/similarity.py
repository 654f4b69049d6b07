"""How alike two maps of the same instance are: the randomisation test's measures (Adebayo et al. 2018).

Reference: J. Adebayo et al., "Sanity Checks for Saliency Maps", NeurIPS 2018, §3: the map an explainer
gives on the trained model is compared with the one it gives on the randomised model by

* **Spearman's rank correlation of the absolute values**, ρ(|a|, |b|) over the map's features (pixels or
  words): the Pearson correlation of their average ranks (ties share their mean rank; scipy's
  `spearmanr`), in [−1, 1]. Undefined (NaN) when either map is constant (every feature tied);
* **SSIM** for images (Wang et al. 2004, "Image quality assessment: from error visibility to structural
  similarity"; scikit-image's `structural_similarity`, Gaussian-free 7 × 7 window, or the largest odd
  window the image allows, ≥ 3) of |a| / max|a| and |b| / max|b| — each map scaled to [0, 1] by its own
  maximum, as the paper's visualisations are, data range 1. Undefined when either map is all zero or
  the image is narrower than 3 pixels.

`compare(trained, randomised)` scores a list of instances at once and says, per instance, why a value is
undefined (`CODES`): the explainer failed there on either model, or the map is constant on either. A constant map is
no missing data (issue #58): `Compared.constant` records, per instance, which of the two maps is constant (bit 1: the
trained model's, bit 2: the randomised model's; 0: neither; NaN where either failed, the shapes differ or the map has
fewer than 2 features), so the board judges it (`leaderboard.randomisation`: constant on both models, the map did not
change; on one only, it did).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

CODES = {
    "failed-trained": "the explainer failed on this instance of the trained model",
    "failed-randomised": "the explainer failed on this instance of the randomised model",
    "constant-trained": "the map on the trained model is constant (no ranking to compare)",
    "constant-randomised": "the map on the randomised model is constant (no ranking to compare)",
    "shape": "the two maps have different shapes",
}
MEASURES = ("spearman", "spearman-signed", "ssim")  # ssim: images only


def spearman_abs(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ between |a| and |b| over their features (module docstring); NaN when either is constant."""
    return spearman(np.abs(np.asarray(a, dtype=np.float64)), np.abs(np.asarray(b, dtype=np.float64)))


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ between a and b over their features (signed values); NaN when either is constant."""
    from scipy.stats import rankdata

    x, y = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    rx, ry = rankdata(x), rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum()))


def ssim_abs(a: np.ndarray, b: np.ndarray) -> float:
    """SSIM of |a| / max|a| and |b| / max|b| (module docstring); NaN when either is all zero or too small."""
    from skimage.metrics import structural_similarity

    x, y = np.abs(np.asarray(a, dtype=np.float64)), np.abs(np.asarray(b, dtype=np.float64))
    if x.ndim != 2 or x.shape != y.shape or x.max() == 0 or y.max() == 0:
        return float("nan")
    side = min(x.shape)
    win = min(7, side if side % 2 else side - 1)
    if win < 3:
        return float("nan")
    return float(structural_similarity(x / x.max(), y / y.max(), win_size=win, data_range=1.0))


@dataclass
class Compared:
    """Per-instance similarity of two runs' maps: {measure: (n,) values, NaN where undefined} and each
    undefined instance's code (`CODES`; "" where every measure has a value)."""

    values: dict[str, np.ndarray]
    codes: list[str] = field(default_factory=list)
    constant: np.ndarray | None = None  # per instance: 1 = the trained map constant, 2 = the randomised, 3 = both

    def counts(self) -> dict[str, int]:
        """How many instances carry each code."""
        out: dict[str, int] = {}
        for c in self.codes:
            if c:
                out[c] = out.get(c, 0) + 1
        return out


def compare(trained: Sequence[np.ndarray | None], randomised: Sequence[np.ndarray | None],
            image: bool) -> Compared:
    """Spearman (and, for `image` maps, SSIM) of each instance's two maps; None marks a failed instance."""
    n = len(trained)
    measures = MEASURES if image else MEASURES[:2]
    values = {m: np.full(n, np.nan) for m in measures}
    constant = np.full(n, np.nan)
    codes = [""] * n
    for i, (a, b) in enumerate(zip(trained, randomised)):
        if a is None or b is None:
            codes[i] = "failed-trained" if a is None else "failed-randomised"
            continue
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            codes[i] = "shape"
            continue
        if a.size >= 2:
            constant[i] = float((np.ptp(a) == 0) + 2 * (np.ptp(b) == 0))
        if np.ptp(a) == 0 or np.ptp(np.abs(a)) == 0:
            codes[i] = "constant-trained"
            continue
        if np.ptp(b) == 0 or np.ptp(np.abs(b)) == 0:
            codes[i] = "constant-randomised"
            continue
        values["spearman"][i] = spearman_abs(a, b)
        values["spearman-signed"][i] = spearman(a, b)
        if image:
            values["ssim"][i] = ssim_abs(a, b)
    return Compared(values, codes, constant)
