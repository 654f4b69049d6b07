"""Captum `Saliency`: |∂ f_target / ∂ x| per pixel (one forward/backward per chunk of instances).

Text (word-level models): the gradient of the target logit with respect to the word embeddings
(`model.forward_from_embeddings`), reduced to one score per word over the embedding dimension by
`word_reduce`: "sum" gives Σ_d |∂f/∂e_d| (captum's abs gradients summed — TEF's saliency, SPECS §2.2),
"l2" the Euclidean norm ‖∂f/∂e‖₂ (then `abs` has no effect)."""

from __future__ import annotations

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets
from submissions.text_common import check_reduce, connected, gradient_scores, is_text, require_embeddings


class SaliencyExplainer:
    def __init__(self, abs: bool = True, batch_size: int = 16, word_reduce: str = "sum") -> None:
        self.abs = bool(abs)
        self.batch_size = max(1, int(batch_size))
        self.word_reduce = check_reduce(word_reduce)

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import Saliency

        if is_text(model):
            require_embeddings(model, "saliency")
            return gradient_scores(model, batch, "saliency", Saliency(connected(model.forward_from_embeddings)).attribute,
                                   self.batch_size, self.word_reduce, abs=self.abs)
        method = Saliency(require_module(model, "saliency"))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        return attribute_in_chunks(method.attribute, inputs, target, self.batch_size, abs=self.abs)
