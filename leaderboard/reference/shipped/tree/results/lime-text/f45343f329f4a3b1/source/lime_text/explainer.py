"""LIME for word-level text models with word POSITIONS as features (SPECS §4.5, §1.7).

The `lime` package's text explainer with the adaptations of SPECS §4.5: every token position is a
feature (LimeTextExplainer's `bow=False`; the given tokens are the words, no re-tokenisation), and
removing a feature deletes the token from the list before the model sees it (lime's own `bow=False`
would put "UNKWORDZ" there instead). Sampling follows `LimeTextExplainer` exactly: from a
`np.random.RandomState(batch.instance_seed(i))`, sample 0 is the document, each other sample removes
`randint(1, n + 1)` positions chosen without replacement; distances are cosine distances ×100 on the
binary keep vectors, weights sqrt(exp(−d²/σ²)) with σ = `kernel_width` (25); `lime.lime_base.LimeBase`
fits the weighted ridge surrogate (sklearn Ridge, `alpha`, with intercept) of the target class
probability on all positions (`num_features = n`, `feature_selection = 'none'` — with every feature
kept, lime's 'auto' selection keeps them all too). Score of position p = its ridge coefficient.

`features="type"` is SPECS §4.8.4's "strict defaults" mode, closer to LIME's own defaults
(`LimeTextExplainer(bow=True)`): the features are the word TYPES (in order of first appearance, as lime's
`IndexedString` orders them), removing a type deletes every occurrence of it, and every occurrence gets
its type's weight (so repeated words tie; the metrics' tie rule orders them).

Batched classifier: the perturbed documents of ALL instances of a batch go to one `model.predict`
call (split into calls of `batch_size` documents when > 0), instead of lime's one call per instance.
Explaining an instance alone or in a batch gives the same scores (the model permitting).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from submissions.text_common import delete_positions, documents, explain_nonempty, predict_in_chunks, text_targets

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


def lime_kernel(d: np.ndarray, kernel_width: float) -> np.ndarray:
    """lime's default kernel: sqrt(exp(−d² / σ²))."""
    return np.sqrt(np.exp(-(d**2) / kernel_width**2))


def sample_masks(n_words: int, num_samples: int, random_state: np.random.RandomState) -> np.ndarray:
    """(num_samples, n_words) keep vectors, drawn exactly as LimeTextExplainer draws them."""
    sizes = random_state.randint(1, n_words + 1, num_samples - 1)
    data = np.ones((num_samples, n_words))
    # lime calls random_state.choice(range(n_words), size, replace=False), which numpy implements as
    # permutation(n_words)[:size]: the same random stream, without choice's argument handling per sample
    for i, size in enumerate(sizes, start=1):
        data[i, random_state.permutation(n_words)[:size]] = 0
    return data


def cosine_distances(data: np.ndarray) -> np.ndarray:
    """lime's text distance: cosine distance of each sample to the first (the document), ×100."""
    import scipy.sparse
    from sklearn.metrics.pairwise import pairwise_distances

    x = scipy.sparse.csr_matrix(data)
    return pairwise_distances(x, x[0], metric="cosine").ravel() * 100


FEATURES = ("position", "type")


def word_types(doc: list[str]) -> tuple[list[str], np.ndarray]:
    """(types in order of first appearance, the type index of every position)."""
    types = list(dict.fromkeys(doc))
    index = {w: k for k, w in enumerate(types)}
    return types, np.array([index[w] for w in doc], dtype=np.int64)


class LimeText:
    """LIME on text, word positions as features: a weighted ridge fit on random word deletions.

    Ribeiro, Singh & Guestrin 2016, "Why Should I Trust You?": Explaining the Predictions of Any Classifier,
    KDD, https://arxiv.org/abs/1602.04938
    (`lime_base` with `LimeTextExplainer`'s sampling, deleted words removed from the list, all
    perturbations of a batch in one predict call — module docstring). Text only.

    Args:
        num_samples (int, optional): perturbed documents per instance, the document itself first
            (`LimeTextExplainer`'s default). Default: 5000
        kernel_width (float, optional): σ of sqrt(exp(−d²/σ²)), d = cosine distance × 100 (lime's text
            default). Default: 25.0
        alpha (float, optional): ridge penalty of the surrogate (lime's `Ridge(alpha=1)`, with
            intercept). Default: 1.0
        batch_size (int, optional): perturbed documents per `model.predict` call; 0 = all of a batch's
            perturbations in one call. Default: 0
        features (str, optional): "position" (SPECS §4.5) or "type": lime's `bow=True`, every occurrence
            gets its type's weight (SPECS §4.8.4 strict mode). Default: "position"
    """

    def __init__(self, num_samples: int = 5000, kernel_width: float = 25.0, alpha: float = 1.0,
                 batch_size: int = 0, features: str = "position") -> None:
        if num_samples < 2:
            raise ValueError(f"num_samples must be ≥ 2 (the document + perturbations), got {num_samples}")
        if kernel_width <= 0:
            raise ValueError(f"kernel_width must be > 0, got {kernel_width}")
        self.num_samples = int(num_samples)
        self.kernel_width = float(kernel_width)
        self.alpha = float(alpha)
        self.batch_size = int(batch_size)
        if features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
        self.features = features

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One score per word: its position's (or its type's) ridge coefficient."""
        docs = documents(batch)

        def run(idx: list[int]) -> list[np.ndarray]:
            target = text_targets(model, [docs[i] for i in idx])
            plans, perturbed = [], []
            for i in idx:
                rs = np.random.RandomState(batch.instance_seed(i))
                if self.features == "type":
                    types, of = word_types(docs[i])
                else:
                    types, of = docs[i], np.arange(len(docs[i]))
                data = sample_masks(len(types), self.num_samples, rs)
                perturbed += [delete_positions(docs[i], keep) for keep in (data[:, of] > 0).tolist()]
                plans.append((data, rs, of))
            probs = predict_in_chunks(model, perturbed, self.batch_size)  # the batched classifier
            scores, start = [], 0
            for (data, rs, of), t in zip(plans, target):
                labels = probs[start : start + len(data)]
                start += len(data)
                scores.append(self.fit(data, labels, t, rs)[of])
            return scores

        return explain_nonempty(docs, run)

    def fit(self, data: np.ndarray, labels: np.ndarray, target: int,
            random_state: np.random.RandomState) -> np.ndarray:
        """lime_base's weighted ridge on (keep vectors, class probabilities) → one weight per feature."""
        from lime.lime_base import LimeBase
        from sklearn.linear_model import Ridge

        base = LimeBase(partial(lime_kernel, kernel_width=self.kernel_width), random_state=random_state)
        _, exp, _, _ = base.explain_instance_with_data(
            data, labels, cosine_distances(data), target, data.shape[1], feature_selection="none",
            model_regressor=Ridge(alpha=self.alpha, fit_intercept=True, random_state=random_state))
        weights = np.zeros(data.shape[1], dtype=np.float64)
        for feature, w in exp:
            weights[int(feature)] = w
        return weights
