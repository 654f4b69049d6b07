"""Captum `InputXGradient`: x ⊙ ∂ f_target / ∂ x (one forward/backward per chunk of instances).

Text (word-level models): e ⊙ ∂f/∂e at the word embeddings e (target logit, via
`model.forward_from_embeddings`), summed over the embedding dimension: one signed score per word."""

from __future__ import annotations

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets
from submissions.text_common import connected, gradient_scores, is_text, require_embeddings


class InputXGradientExplainer:
    def __init__(self, batch_size: int = 16) -> None:
        self.batch_size = max(1, int(batch_size))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import InputXGradient

        if is_text(model):
            require_embeddings(model, "input-x-gradient")
            method = InputXGradient(connected(model.forward_from_embeddings))
            return gradient_scores(model, batch, "input-x-gradient", method.attribute, self.batch_size)
        method = InputXGradient(require_module(model, "input-x-gradient"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        return attribute_in_chunks(method.attribute, inputs, target, self.batch_size)
