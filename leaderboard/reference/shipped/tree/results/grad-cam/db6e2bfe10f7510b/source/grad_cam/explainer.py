"""Captum `LayerGradCam` on `model.layer()` (the architecture's declared layer), with ReLU on the
class-activation map, upsampled to (H, W) by `LayerAttribution.interpolate` (bilinear).

Text (word-level CNNs exposing `module.feature_maps(emb)`, `module.classify(maps)` and
`module.windows`, i.e. the Kim CNN): for each window size r, FM_r (N, q, T) = the post-ReLU feature
maps over the model's T = max_len window positions, α_k = mean over the T positions of ∂y_c/∂FM_r[k, ·]
(y_c = target logit), cam_r[j] = ReLU(Σ_k α_k FM_r[k, j]) (`relu_attributions`). Window j covers
positions j − ⌊(r−1)/2⌋ … j + ⌊r/2⌋ ("same" padding), so word p receives the cam of the windows
j ∈ [p − ⌊r/2⌋, p + ⌊(r−1)/2⌋] — their sum (`text_spread` = "sum", as WGA distributes window relevance,
SPECS §5.3) or mean ("mean"); the word score is the mean over window sizes. Other text models raise a
clear error (`unsupported(model)` says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence, cast

import numpy as np
import torch

from submissions.common import attribute_in_chunks, require_module, targets
from submissions.text_common import documents, explain_nonempty, is_text, require_embeddings, text_targets

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model

TEXT_SPREADS = ("sum", "mean")


class _WindowCNN(Protocol):
    """A convolutional text model's module as Grad-CAM reads it (the Kim CNN): its window sizes, the
    feature maps of embeddings and the logits from the maps."""

    windows: Sequence[int]

    def feature_maps(self, emb: torch.Tensor) -> list[torch.Tensor]:
        """Per window size, the post-ReLU feature maps (N, q, T)."""
        ...

    def classify(self, maps: Sequence[torch.Tensor]) -> torch.Tensor:
        """The logits (N, C) from the feature maps."""
        ...


class GradCamExplainer:
    """Grad-CAM: a layer's activations weighted by their position-averaged gradients, ReLU'd, upsampled.

    Selvaraju et al. 2017, Grad-CAM: Visual Explanations from Deep Networks via Gradient-based Localization,
    ICCV, https://arxiv.org/abs/1610.02391 (captum's `LayerGradCam`; text: per window size on the Kim CNN's
    feature maps, spread to the words — module docstring).

    Args:
        layer (str, optional): sub-module name; "" = the layer the model declares (AixiCNN: conv2).
            Images only. Default: ""
        relu_attributions (bool, optional): ReLU on the class-activation map. Default: True
        interpolate_mode (str, optional): upsampling to the image size (`LayerAttribution.interpolate`);
            images only. Default: "bilinear"
        batch_size (int, optional): instances (images or documents) per forward/backward pass.
            Default: 16
        text_spread (str, optional): a word gets the "sum" (or the "mean") of the cams of the windows
            covering it; then the mean over window sizes. Default: "sum"
    """

    def __init__(self, layer: str = "", relu_attributions: bool = True, interpolate_mode: str = "bilinear",
                 batch_size: int = 16, text_spread: str = "sum") -> None:
        if text_spread not in TEXT_SPREADS:
            raise ValueError(f"text_spread must be one of {TEXT_SPREADS}, got {text_spread!r}")
        self.layer = layer or None
        self.relu_attributions = bool(relu_attributions)
        self.interpolate_mode = interpolate_mode
        self.batch_size = max(1, int(batch_size))
        self.text_spread = text_spread

    def unsupported(self, model: Model) -> str | None:
        """Why this explainer cannot explain `model`, or None."""
        if getattr(model, "module", None) is None:
            return f"grad-cam needs gradients, but model {getattr(model, 'name', '?')} is a black box"
        if not is_text(model):
            return None if hasattr(model, "layer") else "grad-cam needs model.layer() to name a convolutional layer"
        module = model.module
        if not (callable(getattr(module, "feature_maps", None)) and callable(getattr(module, "classify", None))
                and hasattr(module, "windows")):
            return (f"grad-cam on text needs a convolutional text model exposing feature_maps / classify / "
                    f"windows (the Kim CNN); model {getattr(model, 'name', '?')} ({type(module).__name__}) has "
                    f"no feature maps — use saliency or integrated-gradients instead")
        return None

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) upsampled class-activation map per image, or one score per word (Kim CNN)."""
        from captum.attr import LayerAttribution, LayerGradCam

        if is_text(model):
            return self._explain_text(model, batch)
        module = require_module(model, "grad-cam")
        if not hasattr(model, "layer"):
            raise ValueError(f"grad-cam needs model.layer() to name a convolutional layer; {model!r} has none")
        method = LayerGradCam(module, model.layer(self.layer))
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        target = targets(model, inputs)
        kwargs = {"align_corners": False} if self.interpolate_mode in ("bilinear", "bicubic") else {}

        def upsampled_cam(x, target):
            cam = method.attribute(x, target=target, relu_attributions=self.relu_attributions)
            return _interpolate(LayerAttribution, cam, tuple(x.shape[-2:]), self.interpolate_mode, kwargs)

        return attribute_in_chunks(upsampled_cam, inputs, target, self.batch_size)

    # -- text ------------------------------------------------------------------------------------
    def _explain_text(self, model, batch) -> list[np.ndarray]:
        reason = self.unsupported(model)
        if reason:
            raise ValueError(reason)
        docs = documents(batch)

        def run(idx: list[int]) -> list[np.ndarray]:
            scores: list[np.ndarray] = []
            for s in range(0, len(idx), self.batch_size):
                sub = [docs[i] for i in idx[s : s + self.batch_size]]
                scores += self.text_cams(model, sub)
            return scores

        return explain_nonempty(docs, run)

    def window_cams(self, model: Model, docs: list[list[str]]) -> list[np.ndarray]:
        """Per window size r: cam_r (N, T) over the model's window positions."""
        white = require_embeddings(model, "grad-cam")
        module = cast(_WindowCNN, white.module)  # `unsupported` checked it has feature maps
        emb = white.embed(docs).detach().float() * white.mask(docs).unsqueeze(-1).float()
        with torch.no_grad():
            maps = [m.detach().requires_grad_(True) for m in module.feature_maps(emb)]
        with torch.enable_grad():
            logits = module.classify(maps)
            target = torch.as_tensor(text_targets(model, docs), dtype=torch.long)
            grads = torch.autograd.grad(logits.gather(1, target[:, None]).sum(), maps)
        cams = []
        for fm, g in zip(maps, grads):
            alpha = g.mean(dim=2, keepdim=True)  # (N, q, 1): mean over window positions
            cam = (alpha * fm.detach()).sum(dim=1)  # (N, T)
            cams.append((torch.relu(cam) if self.relu_attributions else cam).double().numpy())
        return cams

    def text_cams(self, model: Model, docs: list[list[str]]) -> list[np.ndarray]:
        """Word scores: each window's cam spread to the words it covers, mean over window sizes."""
        windows = [int(r) for r in cast(_WindowCNN, model.module).windows]
        per_r = []
        for r, cam in zip(windows, self.window_cams(model, docs)):
            t = cam.shape[1]
            cum = np.concatenate([np.zeros((len(docs), 1)), np.cumsum(cam, axis=1)], axis=1)
            p = np.arange(t)
            lo = np.clip(p - r // 2, 0, t)
            hi = np.clip(p + (r - 1) // 2 + 1, 0, t)
            spread = cum[:, hi] - cum[:, lo]
            if self.text_spread == "mean":
                spread = spread / np.maximum(hi - lo, 1)
            per_r.append(spread)
        words = np.mean(per_r, axis=0)
        return [words[n, : len(d)].astype(np.float32) for n, d in enumerate(docs)]


def _interpolate(layer_attribution, cam, size, mode, kwargs):
    try:
        return layer_attribution.interpolate(cam, size, interpolate_mode=mode, **kwargs)
    except TypeError:  # captum versions without interpolation kwargs
        return layer_attribution.interpolate(cam, size, interpolate_mode=mode)
