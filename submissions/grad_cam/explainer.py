"""Captum `LayerGradCam` on `model.layer()` (the architecture's declared layer), with ReLU on the
class-activation map, upsampled to (H, W) by `LayerAttribution.interpolate` (bilinear)."""

from __future__ import annotations

import numpy as np

from submissions.common import attribute_in_chunks, require_module, targets


class GradCamExplainer:
    def __init__(self, layer: str = "", relu_attributions: bool = True, interpolate_mode: str = "bilinear",
                 batch_size: int = 256) -> None:
        self.layer = layer or None
        self.relu_attributions = bool(relu_attributions)
        self.interpolate_mode = interpolate_mode
        self.batch_size = max(1, int(batch_size))

    def explain(self, model, batch) -> list[np.ndarray]:
        from captum.attr import LayerAttribution, LayerGradCam

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


def _interpolate(layer_attribution, cam, size, mode, kwargs):
    try:
        return layer_attribution.interpolate(cam, size, interpolate_mode=mode, **kwargs)
    except TypeError:  # captum versions without interpolation kwargs
        return layer_attribution.interpolate(cam, size, interpolate_mode=mode)
