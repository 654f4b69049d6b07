"""Captum `IntegratedGradients` from a constant (black) baseline, all instances of a batch at once;
captum splits the n_steps × B path points into passes of `internal_batch_size`.

Text (word-level models): the path runs from the padding embedding (`model.baseline_embeddings`, zeros)
to the word embeddings, target logit via `model.forward_from_embeddings` with the documents' padding
mask; the attributions are summed over the embedding dimension (one signed score per word; their sum
over a document ≈ f(x) − f(padding), completeness). `baseline` applies to images only."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.common import image_tensor, require_module, targets, to_maps
from submissions.text_common import connected, gradient_scores, is_text, require_embeddings

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class IntegratedGradientsExplainer:
    """Integrated Gradients: (x − x′) ⊙ ∫₀¹ ∂f(x′ + α(x − x′))/∂x dα from a constant baseline x′.

    Sundararajan, Taly & Yan 2017, Axiomatic Attribution for Deep Networks, ICML,
    https://arxiv.org/abs/1703.01365 (captum's `IntegratedGradients`). Text: from the padding embedding,
    target logit, summed per word.

    Args:
        n_steps (int, optional): points of the integral's approximation. Default: 50
        method (str, optional): captum's approximation of the integral. Default: "gausslegendre"
        baseline (float, optional): constant baseline image (text: always the padding embedding,
            `model.baseline_embeddings`). Default: 0.0
        internal_batch_size (int, optional): path points per forward/backward pass (n_steps × instances
            are chunked; raised to the number of instances, as captum does). Default: 16
    """

    def __init__(self, n_steps: int = 50, method: str = "gausslegendre", baseline: float = 0.0,
                 internal_batch_size: int = 16) -> None:
        self.n_steps = int(n_steps)
        self.method = method
        self.baseline = float(baseline)
        self.internal_batch_size = max(1, int(internal_batch_size))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) map per image, or one signed score per word (sums ≈ f(x) − f(baseline))."""
        from captum.attr import IntegratedGradients

        if is_text(model):
            white = require_embeddings(model, "integrated-gradients")
            ig = IntegratedGradients(connected(white.forward_from_embeddings))

            def attribute(emb, **kwargs):
                return ig.attribute(emb, internal_batch_size=self._chunk(len(emb)), **kwargs)

            return gradient_scores(model, batch, "integrated-gradients", attribute, 0, baselines=True,
                                   n_steps=self.n_steps, method=self.method)
        if len(batch) == 0:
            return []
        ig = IntegratedGradients(require_module(model, "integrated-gradients"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        x = image_tensor(inputs, requires_grad=True)
        attr = ig.attribute(x, baselines=self.baseline, target=targets(model, inputs), n_steps=self.n_steps,
                            method=self.method, internal_batch_size=self._chunk(len(inputs)))
        return to_maps(attr)

    def _chunk(self, n_examples: int) -> int:
        """captum's pass size: at least one path point of every example per pass. captum itself raises a
        smaller `internal_batch_size` to the number of examples, with a UserWarning on every call (once
        per document in `xaibench agreement`); passing the raised value computes the same passes
        without the warning."""
        return max(self.internal_batch_size, int(n_examples), 1)
