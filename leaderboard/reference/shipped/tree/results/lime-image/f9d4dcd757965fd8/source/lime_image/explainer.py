"""LIME (`lime.lime_image.LimeImageExplainer`) with the track's objects as superpixels.

* Superpixels: `segmentation_fn` returns the instance's `batch.segments`, relabelled 0..K (0 =
  background, objects 1..K). lime needs a partition of every pixel, so the background is kept as
  superpixel 0; on AIXI images (black background, hide colour 0) hiding it changes nothing, so its weight
  is noise around 0. The map paints every superpixel's weight, background included.
* Sampling: a fresh explainer per instance whose `random_state` is derived from (batch.seed, instance
  id), so the map depends on the seed only, not on the batch composition. `feature_selection='none'`
  (every superpixel gets a weight).
* The model sees lime's RGB copies (N, H, W, 3) as grayscale (N, H, W) = channel 0, in batches of
  `batch_size` (lime evaluates one instance's neighbourhood at a time).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Iterator

import numpy as np

from submissions.common import paint, relabel, require_segments, targets

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


@contextlib.contextmanager
def _quiet_lime() -> Iterator[None]:
    """lime 0.2.0.1 wraps its sampling loop in tqdm with no switch; silence it for the call."""
    from lime import lime_image

    saved = getattr(lime_image, "tqdm", None)
    lime_image.tqdm = lambda iterable, *a, **k: iterable
    try:
        yield
    finally:
        if saved is not None:
            lime_image.tqdm = saved


class LimeImage:
    """LIME on images, the track's objects as superpixels: a weighted ridge fit on random keep/hide samples.

    Ribeiro, Singh & Guestrin 2016, "Why Should I Trust You?": Explaining the Predictions of Any Classifier,
    KDD, https://arxiv.org/abs/1602.04938
    (the `lime` package's `LimeImageExplainer`; the background is its own superpixel). Needs
    `batch.segments`. Images only.

    Args:
        num_samples (int, optional): perturbed images per instance (lime's first one is the unperturbed
            image). Default: 256
        batch_size (int, optional): images per `model.predict` call (lime explains one image at a
            time). Default: 256
        kernel_width (float, optional): lime's kernel width (its image default). Default: 0.25
        hide_color (float, optional): value of a hidden superpixel's pixels. Default: 0.0
    """

    def __init__(self, num_samples: int = 256, batch_size: int = 256, kernel_width: float = 0.25,
                 hide_color: float = 0.0) -> None:
        if num_samples < 1:
            raise ValueError(f"num_samples must be ≥ 1, got {num_samples}")
        self.num_samples = int(num_samples)
        self.batch_size = max(1, int(batch_size))
        self.kernel_width = float(kernel_width)
        self.hide_color = float(hide_color)

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One map per image: each superpixel's LIME weight on its pixels, background included."""
        from lime.lime_image import LimeImageExplainer

        segments = require_segments(batch, "lime-image")
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)

        def classifier_fn(images: np.ndarray) -> np.ndarray:
            return np.asarray(model.predict(np.asarray(images, dtype=np.float32)[..., 0]), dtype=np.float64)

        maps = []
        with _quiet_lime():
            for i, x in enumerate(inputs):
                labels, k = relabel(segments[i])
                # lime numbers superpixels 0..n-1: without background pixels, objects become 0..K-1
                offset = 0 if (labels == 0).any() else 1
                seed = batch.instance_seed(i)
                explainer = LimeImageExplainer(kernel_width=self.kernel_width, feature_selection="none",
                                               random_state=seed)
                exp = explainer.explain_instance(
                    x.astype(np.float64), classifier_fn, labels=(target[i],), hide_color=self.hide_color,
                    top_labels=None, num_features=k + 1 - offset, num_samples=self.num_samples,
                    batch_size=self.batch_size, segmentation_fn=lambda _img, lab=labels - offset: lab,
                    random_seed=seed,
                )
                weights = np.zeros(k + 1, dtype=np.float64)
                for feature, w in exp.local_exp[target[i]]:
                    weights[int(feature) + offset] = w
                maps.append(paint(labels, weights[1:], background=float(weights[0])))
        return maps
