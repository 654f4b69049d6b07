"""Outputs that do not depend on the batch, the thread count or the CPU (DESIGN §8, "same input, same output").

A float32 matrix product rounds according to how its kernel blocks the work, and the blocking follows the
batch's shape, the number of threads and the CPU's vector width. So a document's float32 logits move in
their last bits with the documents that share its batch (6e-8 measured on an AVX-512 machine), and a
decision taken on them — a top-k, a threshold, an argmax between near-equal scores — can flip.

The rule every model under test follows for its black-box outputs (`Model.predict`):

    computed in float64 from the float32 weights, rounded once to float32 at the end.

Two float64 evaluations of the same function differ by a few units in the last place (≈ 1e-15 relative
for these depths), about 10⁸ times below float32's resolution (2⁻²⁴ ≈ 6e-8). Rounding to float32 therefore
gives the same bits unless the exact value lies within ≈ 1e-15 of a float32 rounding boundary — about one
value in 10⁸ — whatever the batch, its order, the thread count or the CPU. That is the promise: identical
float32 outputs for identical inputs and weights, with that stated chance of a one-ulp difference.

`ExactCopy` keeps the float64 copy of a module: made on first use, with no hooks (captum's hooks on the
module a submission explains never reach it), frozen (`requires_grad` off), and made again when a
parameter or buffer of the float32 module changes (its tensors' version counters, so a model trained
further after it was wrapped is never predicted with stale weights). The float32 module stays what
white-box methods and training use.
"""

from __future__ import annotations

import copy
from typing import Generic, TypeVar

import torch
from torch import nn

EXACT_DTYPE = torch.float64  # what predictions are computed in; outputs are float32

M = TypeVar("M", bound=nn.Module)


def state_key(module: nn.Module) -> tuple[tuple[int, int], ...]:
    """(id, version) of every parameter and buffer: changes when any of them is replaced or edited in place."""
    tensors = [*module.parameters(), *module.buffers()]
    return tuple((id(t), t._version) for t in tensors)


def _without_hooks(module: nn.Module) -> None:
    """Drop every forward / backward hook a deep copy carried over (e.g. captum's, while it explains)."""
    for m in module.modules():
        for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                     "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called"):
            hooks = getattr(m, name, None)
            if hooks is not None:
                hooks.clear()


class ExactCopy(Generic[M]):
    """The float64 copy of a float32 module, kept in step with it (module docstring)."""

    def __init__(self) -> None:
        self._copy: M | None = None
        self._key: tuple[tuple[int, int], ...] | None = None

    def __call__(self, module: M) -> M:
        """The float64, eval-mode, hook-free copy of `module`, made again if its weights changed."""
        key = state_key(module)
        if self._copy is None or key != self._key:
            with torch.no_grad():
                twin = copy.deepcopy(module)
            _without_hooks(twin)
            twin = twin.to(EXACT_DTYPE).eval()
            twin.requires_grad_(False)
            self._copy, self._key = twin, key
        assert self._copy is not None
        return self._copy

    def __getstate__(self) -> dict:
        """Pickled (Ray, a worker) without the copy: it is made again where it is used."""
        return {"_copy": None, "_key": None}


def rounded(x: torch.Tensor) -> torch.Tensor:
    """The float64 result rounded once to float32 (the outputs' dtype)."""
    return x.detach().to(torch.float32)
