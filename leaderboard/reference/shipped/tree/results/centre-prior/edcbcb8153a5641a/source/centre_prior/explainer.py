"""Control: a centred Gaussian bump over the image — a map built from the image's shape, never its pixels.

Map of an (H, W) image: exp(−((y − c_y)² + (x − c_x)²) / (2 s²)) with (c_y, c_x) the image centre and
s = `sigma` × min(H, W). The same map for every image of a shape, so it reads neither the pixel values
nor the model: what a prior that "objects sit towards the middle" scores on an image board. Where an
image board's ground truth is spread evenly (AIXI places objects over the whole canvas), the bump
scores close to the uniform control on KL and better on EMD (transport to the centre is short on
average); a method must beat both (docs/aixi.md gives the numbers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


def centre_bump(shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """The (H, W) centred Gaussian bump with standard deviation `sigma` × min(H, W), peak 1."""
    h, w = int(shape[0]), int(shape[1])
    s = float(sigma) * min(h, w)
    yy, xx = np.mgrid[:h, :w].astype(np.float64)
    d2 = (yy - (h - 1) / 2.0) ** 2 + (xx - (w - 1) / 2.0) ** 2
    return np.exp(-d2 / (2.0 * s * s)).astype(np.float32)


class CentrePriorExplainer:
    """Control: a centred Gaussian bump (module docstring); reads the image's shape, never its pixels or the model.

    Controls for image-blind priors: the score of a map that knows where objects tend to be but not
    where they are in this image. No paper: a control. Image only.

    Args:
        sigma (float, optional): the bump's standard deviation as a fraction of the image's shorter side
            (> 0). Default: 0.5
    """

    def __init__(self, sigma: float = 0.5) -> None:
        if not float(sigma) > 0:
            raise ValueError(f"sigma must be > 0, got {sigma!r}")
        self.sigma = float(sigma)

    def unsupported(self, model: Model) -> str | None:
        """Why this control cannot score `model` (a text model: words have no centre), or None."""
        return "the centre prior is an image map (image models only)" if getattr(model, "modality", "image") == "text" \
            else None

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """The same bump for every image of a shape (only `np.shape` of each input is read)."""
        why = self.unsupported(model)
        if why:
            raise ValueError(why)
        shapes = [tuple(np.shape(x))[-2:] for x in batch.inputs]
        return [centre_bump(s, self.sigma) for s in shapes]
