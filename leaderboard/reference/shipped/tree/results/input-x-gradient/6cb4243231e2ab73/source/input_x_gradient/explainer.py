"""Captum `InputXGradient`: x ⊙ ∂ f_target / ∂ x (one forward/backward per chunk of instances).

Text (word-level models): e ⊙ ∂f/∂e at the word embeddings e (target logit, via
`model.forward_from_embeddings`), summed over the embedding dimension: one signed score per word."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets
from submissions.text_common import connected, gradient_scores, is_text, require_embeddings

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class InputXGradientExplainer:
    """Input × gradient: x ⊙ ∂f_target/∂x (text: e ⊙ ∂f/∂e at the word embeddings, summed per word).

    Shrikumar, Greenside, Shcherbina & Kundaje 2016, Not Just a Black Box: Learning Important Features
    Through Propagating Activation Differences, https://arxiv.org/abs/1605.01713 (captum's `InputXGradient`).

    Args:
        batch_size (int, optional): instances (images or documents) per forward/backward pass.
            Default: 16
    """

    def __init__(self, batch_size: int = 16) -> None:
        self.batch_size = max(1, int(batch_size))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) map per image, or one signed score per word, in chunks of `batch_size`."""
        from captum.attr import InputXGradient

        if is_text(model):
            white = require_embeddings(model, "input-x-gradient")
            method = InputXGradient(connected(white.forward_from_embeddings))
            return gradient_scores(model, batch, "input-x-gradient", method.attribute, self.batch_size)
        method = InputXGradient(require_module(model, "input-x-gradient"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        return attribute_in_chunks(method.attribute, inputs, target, self.batch_size)
