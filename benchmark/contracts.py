"""The contracts between the harness and submissions (DESIGN §4).

* `Batch` — what an explainer is handed: instance ids and inputs only, plus non-ground-truth side
  information a track declares (e.g. an object segmentation for object-level explainers).
* `Explainer` — one method, like Captum's `attribute`: `explain(model, batch) -> list[np.ndarray]`.
* `Oracle` — `fit(context)` once per model under test, `judge(batch) -> list[bool]`.
* Models under test are in `benchmark.models` (`Model`, `ImageModel`, `TextModel`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Batch:
    """Inputs of a batch of instances; never ground truth.

    `inputs`: images as one float32 array (B, H, W) in [0, 1]; text as a list of word-token lists.
    `segments`: optional per-instance segmentation (B, H, W) int32 — 0 background, 1..K objects —
    which object-level explainers use as interpretable features (it tells *where* objects are, not
    how important they are; the track decides whether to provide it).
    `seed`: the run seed. Stochastic explainers draw from `instance_seed(i)` (derived from the run
    seed and the instance id) so an instance's explanation never depends on the batch it is in.
    """

    ids: list[str]
    inputs: Any
    segments: np.ndarray | None = None
    seed: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    def instance_seed(self, i: int) -> int:
        """A 31-bit seed for instance `i` from (run seed, instance id): stable across runs, batch
        layouts and machines, so an instance's explanation never depends on its batch."""
        digest = hashlib.sha256(f"{int(self.seed)}:{self.ids[i]}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


@runtime_checkable
class Explainer(Protocol):
    """An attribution method. One array per instance: (H, W) for images, (n_words,) for text.

    Higher = more important for the explained output (`model.target(...)`).
    """

    def explain(self, model: Any, batch: Batch) -> Sequence[np.ndarray]: ...


@dataclass(frozen=True)
class OracleContext:
    """What an oracle gets once per model under test: a training split, the model, an explainer.

    `train`: the resource's training split as columns (`tokens`, `label`, `prediction`, `confidence`);
    `explainer`: the built-in explainer that produced the explanations it will judge (None when it
    cannot be built), `explainer_name` its registered name; `class_names`: one name per class."""

    model: Any
    train: Any
    explainer: Explainer | None = None
    seed: int = 0
    class_names: Sequence[str] = ()
    explainer_name: str = ""


@runtime_checkable
class Oracle(Protocol):
    """A trustworthiness oracle: judges whether explained predictions are trustworthy."""

    def fit(self, context: OracleContext) -> None: ...

    def judge(self, batch: Batch) -> Sequence[bool]: ...
