"""Captum `LRP` (layer-wise relevance propagation, ε-rule) for word-level text models (SPECS §5.8).

LRP runs on `model.embedding_module()` (forward(emb, mask) = the class logits) from the target logit
down to the word embeddings; a word's relevance is the sum of its embedding's relevances. Every layer
captum has a rule for (Conv2d, Linear, MaxPool2d, ... and their subclasses, such as the Kim CNN's
`WindowConv`) gets `EpsilonRule(epsilon)`; ReLU and Dropout
(identity in eval mode) pass relevance unchanged, as captum does. captum needs a rule on every leaf
module, including the model's `nn.Embedding`, which `forward(emb, mask)` never calls: it gets an
ε-rule too, which never fires. Layers captum has no rule for (a GRU, an LSTM, ...) make the model
unsupported (`unsupported(model)` says why; `explain` raises a ValueError): LRP applies to the Kim
CNN, built from Conv2d/ReLU/MaxPool2d/Linear for that reason.

With ε → 0 a document's relevances sum to the target logit minus what the biases absorb: for the Kim
CNN, Σ_words R = Σ_{k: p_k > 0} w_{c,k} (p_k − b_k), p_k the max-pooled feature of filter k, b_k its
bias, w_{c,k} the dense weight (exactly the logit when all biases are 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

import torch

from submissions.text_common import gradient_scores, is_text

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class _Layered(Protocol):
    """A text model whose forward from embeddings is an `nn.Module` (captum's LRP walks its layers)."""

    def embedding_module(self) -> torch.nn.Module:
        """`forward_from_embeddings` as a module."""
        ...


def _leaves(module: torch.nn.Module) -> list[torch.nn.Module]:
    return [m for m in module.modules() if len(list(m.children())) == 0]


class LRPExplainer:
    """Layer-wise relevance propagation (ε-rule on every layer) from the target logit to the word embeddings.

    Bach et al. 2015, On Pixel-Wise Explanations for Non-Linear Classifier Decisions by Layer-Wise Relevance
    Propagation, PLOS ONE, https://doi.org/10.1371/journal.pone.0130140 (captum's `LRP`; relevances summed
    per word). Text CNNs (the Kim CNN) only.

    Args:
        epsilon (float, optional): ε of the ε-rule on every Conv2d/Linear/MaxPool2d (captum's
            `EpsilonRule` default). Default: 1e-9
        batch_size (int, optional): documents per forward/backward pass. Default: 16
    """

    def __init__(self, epsilon: float = 1e-9, batch_size: int = 16) -> None:
        if epsilon < 0:
            raise ValueError(f"epsilon must be ≥ 0, got {epsilon}")
        self.epsilon = float(epsilon)
        self.batch_size = max(1, int(batch_size))

    def unsupported(self, model: Model) -> str | None:
        """Why LRP cannot explain `model`, or None."""
        from captum.attr._core.lrp import SUPPORTED_LAYERS_WITH_RULES, SUPPORTED_NON_LINEAR_LAYERS

        name = getattr(model, "name", "?")
        if not is_text(model):
            return "lrp handles word-level text models only"
        if getattr(model, "module", None) is None or not callable(getattr(model, "embedding_module", None)):
            return f"lrp needs gradients and model.embedding_module(); model {name} is a black box"
        known = {*SUPPORTED_LAYERS_WITH_RULES, *SUPPORTED_NON_LINEAR_LAYERS, torch.nn.Embedding}
        missing = sorted({type(m).__name__ for m in _leaves(cast(_Layered, model).embedding_module())
                          if not isinstance(m, tuple(known)) and not hasattr(m, "rule")})
        if missing:
            return (f"lrp: captum has no propagation rule for layer(s) {', '.join(missing)} of model {name}; "
                    f"LRP applies to models built from {', '.join(t.__name__ for t in SUPPORTED_LAYERS_WITH_RULES)} "
                    f"and ReLU/Dropout/Tanh (e.g. the Kim CNN) — use integrated-gradients instead")
        return None

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One relevance per word (its embedding's relevances summed); a ValueError for unsupported models."""
        from captum.attr import LRP
        from captum.attr._core.lrp import SUPPORTED_LAYERS_WITH_RULES
        from captum.attr._utils.lrp_rules import EpsilonRule

        reason = self.unsupported(model)
        if reason:
            raise ValueError(reason)
        module = cast(_Layered, model).embedding_module()  # `unsupported` checked it has one
        ruled = {*SUPPORTED_LAYERS_WITH_RULES, torch.nn.Embedding}
        leaves = [m for m in _leaves(module) if isinstance(m, tuple(ruled)) and not hasattr(m, "rule")]
        before = {id(m): hasattr(m, "activations") for m in leaves}
        method = LRP(module)

        def attribute(emb, target, additional_forward_args):
            for m in leaves:  # captum deletes every rule after each call: attach ours each time
                m.rule = EpsilonRule(epsilon=self.epsilon)
            return method.attribute(emb, target=target, additional_forward_args=additional_forward_args)

        try:
            return gradient_scores(model, batch, "lrp", attribute, self.batch_size)
        finally:  # leave the model's modules as they were (captum keeps `activations` on them)
            for m in leaves:
                if hasattr(m, "rule"):
                    del m.rule
                if hasattr(m, "activations") and not before[id(m)]:
                    del m.activations
