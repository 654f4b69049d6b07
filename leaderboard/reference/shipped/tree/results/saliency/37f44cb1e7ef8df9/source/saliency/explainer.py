"""Captum `Saliency`: |∂ f_target / ∂ x| per pixel (one forward/backward per chunk of instances).

Text (word-level models): the gradient of the target logit with respect to the word embeddings
(`model.forward_from_embeddings`), reduced to one score per word over the embedding dimension by
`word_reduce`: "sum" gives Σ_d |∂f/∂e_d| (captum's abs gradients summed — TEF's saliency, SPECS §2.2),
"l2" the Euclidean norm ‖∂f/∂e‖₂ (then `abs` has no effect)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets
from submissions.text_common import check_reduce, connected, gradient_scores, is_text, require_embeddings

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class SaliencyExplainer:
    """Saliency: the absolute gradient |∂f_target/∂x| of the explained output (text: reduced per word).

    Simonyan, Vedaldi & Zisserman 2014, Deep Inside Convolutional Networks: Visualising Image Classification
    Models and Saliency Maps, ICLR workshop, https://arxiv.org/abs/1312.6034 (captum's `Saliency`).

    Args:
        abs (bool, optional): |∂f/∂x| (Simonyan et al.); False keeps the sign. Default: True
        batch_size (int, optional): instances (images or documents) per forward/backward pass.
            Default: 16
        word_reduce (str, optional): text: "sum" = Σ_d |∂f/∂e_d| over the word's embedding (TEF, SPECS
            §2.2); "l2" = ‖∂f/∂e‖₂. Default: "sum"
    """

    def __init__(self, abs: bool = True, batch_size: int = 16, word_reduce: str = "sum") -> None:
        self.abs = bool(abs)
        self.batch_size = max(1, int(batch_size))
        self.word_reduce = check_reduce(word_reduce)

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) gradient map per image, or one score per word (`word_reduce`)."""
        from captum.attr import Saliency

        if is_text(model):
            white = require_embeddings(model, "saliency")
            method = Saliency(connected(white.forward_from_embeddings))
            return gradient_scores(model, batch, "saliency", method.attribute, self.batch_size, self.word_reduce,
                                   abs=self.abs)
        method = Saliency(require_module(model, "saliency"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        return attribute_in_chunks(method.attribute, inputs, target, self.batch_size, abs=self.abs)
