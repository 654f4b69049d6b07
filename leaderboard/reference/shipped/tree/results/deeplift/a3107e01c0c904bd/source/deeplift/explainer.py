"""Captum `DeepLift` (rescale rule) from a constant (black) baseline.

DeepLift needs each non-linearity to be its own module used once: AixiCNN has relu1..relu4, two
MaxPool2d and an output module that is `nn.Sigmoid` (Class) or `nn.Identity` (regression). captum's
rescale rule covers ReLU, MaxPool2d and Sigmoid, so the explained output is the model's own output — the
sigmoid probability for Class, as SPECS §3.6 explains (Dropout is the identity in eval mode). A module
that reuses one activation module would give wrong multipliers; we refuse that case with a clear error.

Text (word-level models): DeepLift on `model.embedding_module()` (forward(emb, mask) = the logits) from
the padding embedding (`model.baseline_embeddings`, zeros), target logit, the attributions summed over
the embedding dimension (one signed score per word; a document's scores sum to f(x) − f(padding)). On
the Kim CNN every ReLU and max-pool is its own module, so the rescale rule applies throughout;
non-linearities computed functionally or inside fused modules (e.g. a GRU's gates, the attention
softmax of a HAN) are passed by their gradients, as captum does. `baseline` applies to images only.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import torch

from submissions.common import attribute_in_chunks, image_tensor, require_module, targets
from submissions.text_common import connected, documents, gradient_scores, is_text, require_embeddings

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model

_NONLINEAR = (torch.nn.ReLU, torch.nn.ELU, torch.nn.LeakyReLU, torch.nn.Sigmoid, torch.nn.Tanh,
              torch.nn.Softplus, torch.nn.MaxPool1d, torch.nn.MaxPool2d, torch.nn.MaxPool3d, torch.nn.Softmax)


def _check_no_reuse(module: torch.nn.Module, x: torch.Tensor, *extra: torch.Tensor) -> None:
    """DeepLift's hooks assume every non-linear module runs once per forward (`extra`: further
    forward arguments, e.g. a text padding mask)."""
    calls: Counter = Counter()
    hooks = [m.register_forward_hook(lambda mod, i, o: calls.update([id(mod)]))
             for m in module.modules() if isinstance(m, _NONLINEAR)]
    try:
        with torch.no_grad():
            module(x[:1], *(e[:1] for e in extra))
    finally:
        for h in hooks:
            h.remove()
    reused = [type(m).__name__ for m in module.modules() if calls.get(id(m), 0) > 1]
    if reused:
        raise ValueError(f"deeplift: the model reuses non-linear module(s) {reused} within one forward; "
                         f"DeepLift needs a distinct module per use (use integrated-gradients instead)")


class DeepLiftExplainer:
    """DeepLIFT (rescale rule): each input's share of f(x) − f(baseline), propagated layer by layer.

    Shrikumar, Greenside & Kundaje 2017, Learning Important Features Through Propagating Activation
    Differences, ICML, https://arxiv.org/abs/1704.02685 (captum's `DeepLift`). Text: from the padding
    embedding, target logit, summed per word.

    Args:
        baseline (float, optional): the constant baseline image (text: always the padding embedding,
            `model.baseline_embeddings`). Default: 0.0
        eps (float, optional): below this |Δinput| a non-linearity's multiplier falls back to its
            gradient (captum). Default: 1e-10
        batch_size (int, optional): instances (images or documents) per pass; captum runs inputs and
            baselines together (2 × this). Default: 16
    """

    def __init__(self, baseline: float = 0.0, eps: float = 1e-10, batch_size: int = 16) -> None:
        self.baseline = float(baseline)
        self.eps = float(eps)
        self.batch_size = max(1, int(batch_size))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One map per image, or one score per word (embedding attributions summed), from the baseline."""
        from captum.attr import DeepLift

        if is_text(model):
            return self._explain_text(model, batch, DeepLift)
        module = require_module(model, "deeplift")
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        if len(inputs):
            _check_no_reuse(module, image_tensor(inputs[:1]))
        method = DeepLift(module, eps=self.eps)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*hooks.*", category=UserWarning)
            return attribute_in_chunks(method.attribute, inputs, target, self.batch_size, baselines=self.baseline)

    def _explain_text(self, model, batch, deeplift) -> list[np.ndarray]:
        require_embeddings(model, "deeplift")
        module = connected(model.embedding_module())
        docs = [d for d in documents(batch) if d]
        if docs:
            _check_no_reuse(module, model.embed(docs[:1]), model.mask(docs[:1]))
        method = deeplift(module, eps=self.eps)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*hooks.*", category=UserWarning)
            return gradient_scores(model, batch, "deeplift", method.attribute, self.batch_size, baselines=True)
