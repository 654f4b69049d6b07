"""An attack on the AIXI hidden copies (issues #55 / #58), kept as a test submission: it knows the public form of the
AIXI function model — the output is a function of how many objects of each of three patterns are visible,
f = Σ_k w_k c(ι_k), and the ground truth is G = Σ_k w_k M_k (SPECS §3.3-3.4) — and reads the weights back by deleting
objects (setting their pixels to the background, 0), never by explaining in general.

Per image (K ≤ 6 objects, `batch.segments`):

1. **Patterns** from the outputs: objects of one pattern are interchangeable, so deleting any one of them moves the
   output by the same amount; objects are grouped by their leave-one-out drop (equal to 1e-9). An object whose
   deletion moves nothing gets weight 0.
2. **Weights**, regression outputs (SSIN / SUUM):
   * `form = "public"`: the published forms and ι_max (2 on AIXI-Shape, whose images are binary; 6 on AIXI-Color):
     SUUM's drop is w_k/ι_max, SSIN's w_k (sin(π/2·ι_k/ι_max) − sin(π/2·(ι_k − 1)/ι_max)); SSIN is told from SUUM by
     deleting two objects of a pattern (SUUM's drops add up, SSIN's do not);
   * `form = "shared"`: no form at all beyond a count curve c the patterns share (c(0) = 0): the drop of the *last*
     object of pattern k — every other object of it deleted, then that one too — is w_k c(1), the same factor for
     every pattern, so the weights' ratios (all a distribution needs) are exact.
3. **Class** (a binary output): every keep/delete vector of the objects (2^K ≤ 64 inputs) is compared with every
   assignment of the objects to the rule's roles — counted for (weight 1), counted against (0.5), irrelevant (0) —
   under both published rules ([ι_a > ι_b] and [ι_a − ι_b/2 > 0]); an object's weight is its mean over the
   assignments that reproduce every output (its leave-one-out |drop| if none does).

On the published function and on the v2 hidden copies (drawn weights, one pattern irrelevant, Class' order drawn) it
reproduces the ground truth exactly on SSIN and SUUM (KL 0): the copies draw the weights, not the form."""

from __future__ import annotations

from itertools import product

import numpy as np

_TOL = 1e-9


def _relabel(seg: np.ndarray) -> tuple[np.ndarray, int]:
    """Objects as 1..K (0 background), in order of their labels."""
    labels = [int(v) for v in np.unique(seg) if v != 0]
    out = np.zeros(seg.shape, dtype=np.int64)
    for j, v in enumerate(labels, 1):
        out[seg == v] = j
    return out, len(labels)


class FormInverter:
    """Attack: the pattern weights of an AIXI function model, read by deleting objects (module docstring)."""

    def __init__(self, form: str = "public") -> None:
        if form not in ("public", "shared"):
            raise ValueError(f"form must be 'public' or 'shared', got {form!r}")
        self.form = form

    def explain(self, model, batch):
        """One (H, W) map per image: each object's pixels carry its pattern's weight as read from the model."""
        out = []
        for n, x in enumerate(batch.inputs):
            img = np.asarray(x, dtype=np.float32)
            seg, k = _relabel(np.asarray(batch.segments[n]))
            s = np.zeros(img.shape, dtype=np.float32)
            if k:
                w = self._weights(model, img, seg, k)
                for j in range(k):
                    s[seg == j + 1] = w[j]
            out.append(s)
        return out

    # ------------------------------------------------------------------------------------------------------------
    @staticmethod
    def _predict(model, img: np.ndarray, seg: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """Outputs (M,) for the images keeping the objects where keep (M, K) is True (the others set to 0)."""
        x = np.repeat(img[None], len(keep), axis=0)
        for m, row in enumerate(keep):
            x[m][np.isin(seg, np.flatnonzero(~row) + 1)] = 0.0
        return np.asarray(model.predict(x), dtype=np.float64).reshape(len(keep), -1)[:, -1]

    def _weights(self, model, img, seg, k: int) -> np.ndarray:
        everything = np.ones((1, k), dtype=bool)
        loo = ~np.eye(k, dtype=bool)
        y = self._predict(model, img, seg, np.concatenate([everything, loo]))
        drops = y[0] - y[1:]
        if set(np.round(y, 6)) <= {0.0, 1.0} and self._binary(model, img, seg, k):
            return self._class_weights(model, img, seg, k, drops)
        groups = self._groups(drops)
        w = np.zeros(k)
        if self.form == "shared":
            for g in groups:
                if abs(drops[g[0]]) <= _TOL:
                    continue
                keep = np.ones((2, k), dtype=bool)
                keep[:, g] = False
                keep[0, g[0]] = True  # only one object of the pattern left, then none
                last = self._predict(model, img, seg, keep)
                w[g] = last[0] - last[1]
            return w
        iota = 6 if np.any((img > 0) & (np.abs(img - 1.0) > 1e-3)) else 2  # AIXI-Color's intensities: not binary
        ssin = False
        for g in groups:  # SUUM's drops add up: two objects of a pattern deleted move it by twice one's drop
            if len(g) >= 2 and abs(drops[g[0]]) > _TOL:
                keep = np.ones((1, k), dtype=bool)
                keep[0, g[:2]] = False
                two = y[0] - self._predict(model, img, seg, keep)[0]
                ssin = abs(two - 2 * drops[g[0]]) > 1e-6
                break
        for g in groups:
            c = len(g)
            step = (np.sin(np.pi / 2 * c / iota) - np.sin(np.pi / 2 * (c - 1) / iota)) if ssin else 1.0 / iota
            w[g] = drops[g[0]] / step
        return w

    @staticmethod
    def _groups(drops: np.ndarray) -> list[list[int]]:
        """Objects with equal leave-one-out drops (one pattern each)."""
        groups: list[list[int]] = []
        for j, d in enumerate(drops):
            for g in groups:
                if abs(drops[g[0]] - d) <= _TOL * max(1.0, abs(d)):
                    g.append(j)
                    break
            else:
                groups.append([j])
        return groups

    def _binary(self, model, img, seg, k: int) -> bool:
        """True when every keep/delete vector gives 0 or 1 (a Class model); caches the outputs."""
        z = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(bool)
        self._z, self._y = z, self._predict(model, img, seg, z)
        return bool(np.all(np.isin(np.round(self._y, 6), (0.0, 1.0))))

    def _class_weights(self, model, img, seg, k: int, drops: np.ndarray) -> np.ndarray:
        z, y = self._z.astype(np.float64), self._y > 0.5
        roles = np.array(list(product(range(3), repeat=k)))  # (3^K, K): 0 for, 1 against, 2 irrelevant
        a, b = z @ (roles == 0).T, z @ (roles == 1).T  # (2^K, 3^K) counts
        fits = np.all((a > b) == y[:, None], axis=0) | np.all((a - 0.5 * b > 0) == y[:, None], axis=0)
        if not fits.any():
            return np.abs(drops)
        weight = np.array([1.0, 0.5, 0.0])[roles[fits]]  # (fits, K)
        return weight.mean(axis=0)
