"""Helpers shared by the built-in image explainers (each folder stays one module + its toml).

* `seeded_rngs(seed)` — forked, seeded global torch + NumPy RNGs for captum methods that draw from them;
* `image_tensor` / `targets` / `to_maps` — the conversions every captum explainer needs;
* `attribute_in_chunks` — a captum attribution over chunks of instances, as (H, W) maps;
* `blackbox_forward(model)` — `model.predict` as a torch forward function (for perturbation methods);
* `relabel(segments)` / `paint(labels, weights)` — contiguous object labels and per-object maps.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np
import torch

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Batch


@contextlib.contextmanager
def seeded_rngs(seed: int) -> Iterator[None]:
    """Seed torch's and NumPy's global RNGs inside forks of their states (restored on exit).

    captum draws from both (GradientShap's α from `np.random`, its noise and Kernel SHAP's coalitions
    from torch), so both are forked; the caller's random streams are left untouched."""
    state = np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            np.random.seed(int(seed))
            yield
    finally:
        np.random.set_state(state)


def image_tensor(inputs: Any, requires_grad: bool = False) -> torch.Tensor:
    """(N, H, W) array in [0, 1] → (N, 1, H, W) float32 tensor (a fresh copy, a leaf)."""
    x = torch.tensor(np.asarray(inputs, dtype=np.float32))
    x = x.unsqueeze(1) if x.dim() == 3 else x
    return x.requires_grad_(requires_grad)


def targets(model: Any, inputs: Any) -> list[int]:
    """The explained output index per instance, as captum wants it (a list of ints)."""
    return [int(t) for t in np.asarray(model.target(inputs)).reshape(-1)]


def to_maps(attributions: torch.Tensor | np.ndarray) -> list[np.ndarray]:
    """(N, 1, H, W) or (N, H, W) attributions → N float32 (H, W) arrays, non-finite values set to 0."""
    a = attributions.detach().cpu().numpy() if isinstance(attributions, torch.Tensor) else np.asarray(attributions)
    if a.ndim == 4:
        a = a[:, 0]
    a = np.nan_to_num(a.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    return [np.ascontiguousarray(m) for m in a]


def attribute_in_chunks(attribute: Callable[..., torch.Tensor], inputs: np.ndarray, target: list[int],
                        batch_size: int, **kwargs: Any) -> list[np.ndarray]:
    """`attribute(x, target=..., **kwargs)` on chunks of `batch_size` instances → one (H, W) map each."""
    maps: list[np.ndarray] = []
    for s in range(0, len(inputs), batch_size):
        x = image_tensor(inputs[s : s + batch_size], requires_grad=True)
        maps += to_maps(attribute(x, target=target[s : s + batch_size], **kwargs))
    return maps


def blackbox_forward(model: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    """`model.predict` as a torch forward function: (N, 1, H, W) or (N, H, W) tensor → (N, n_outputs).

    No gradients flow through it; it is for perturbation methods (Occlusion, Kernel SHAP) that only
    evaluate the model. Every call is one batched `predict` over all the perturbations captum hands in.
    """

    def forward(x: torch.Tensor) -> torch.Tensor:
        arr = x.detach().cpu().numpy().astype(np.float32, copy=False)
        if arr.ndim == 4:
            arr = arr[:, 0]
        out = np.asarray(model.predict(arr), dtype=np.float32)
        return torch.from_numpy(out.reshape(len(arr), -1))

    return forward


def relabel(segments: np.ndarray) -> tuple[np.ndarray, int]:
    """Object labels made contiguous: 0 stays background, objects become 1..K (in label order).

    Returns (labels, K). Works for any non-negative integer labelling (gaps, arbitrary ids)."""
    seg = np.asarray(segments)
    ids = np.unique(seg[seg > 0])
    lut = np.zeros(int(seg.max(initial=0)) + 1, dtype=np.int64)
    lut[ids] = np.arange(1, len(ids) + 1)
    return lut[np.maximum(seg, 0)], len(ids)


def paint(labels: np.ndarray, weights: Sequence[float] | np.ndarray, background: float = 0.0) -> np.ndarray:
    """Per-object map: pixels of object j (1..K) get `weights[j-1]`, the background gets `background`."""
    lut = np.empty(len(weights) + 1, dtype=np.float32)
    lut[0] = background
    lut[1:] = np.asarray(weights, dtype=np.float32)
    return lut[labels]


def require_segments(batch: Batch, name: str) -> np.ndarray:
    """The batch's segmentation, or a clear error for a track that provides none."""
    if batch.segments is None:
        raise ValueError(
            f"{name} explains objects and needs batch.segments; this track provides no object segmentation "
            f"(use a pixel-level explainer such as occlusion instead)"
        )
    return np.asarray(batch.segments)


def require_module(model: Any, name: str) -> torch.nn.Module:
    """The model's torch module for white-box methods, or a clear error for a black box."""
    module = getattr(model, "module", None)
    if module is None:
        raise ValueError(f"{name} needs gradients, but model {getattr(model, 'name', '?')} is a black box")
    return module
