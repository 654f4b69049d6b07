"""The contracts between the harness and submissions (DESIGN §4).

* `Batch` — what an explainer is handed: instance ids and inputs only, plus non-ground-truth side
  information a track declares (e.g. an object segmentation for object-level explainers).
* `Explainer` — one method, like Captum's `attribute`: `explain(model, batch) -> list[np.ndarray]`.
* `Oracle` — `fit(context)` once per model under test, `judge(batch) -> list[bool]`, or
  `{"verdicts": list[bool], "scores": list[float]}` with a score in [0, 1] beside each verdict.
* Models under test are in `benchmark.models` (`Model`, `ImageModel`, `TextModel`).
* `data_file(__name__, "weights")` — the path of a data file the submission declares under `[files]`.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence, TypeAlias, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # the models import torch; the contracts stay importable without it
    from benchmark.models.base import Model

# What `Explainer.explain` returns: one float array per instance, (H, W) for images, (n_words,) for text.
Attributions: TypeAlias = Sequence[np.ndarray]
# What `Oracle.judge` returns: one verdict per instance (True = trustworthy), or verdicts with scores.
Judgement: TypeAlias = Sequence[bool] | dict[str, Sequence[Any]]


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

    @classmethod
    def of(cls, ids: Sequence[str], inputs: Any, segments: np.ndarray | None, positions: Sequence[int],
           seed: int) -> Batch:
        """The batch of the instances at `positions` of a split held as `ids`, `inputs` (an array, or a
        list of token lists) and optional `segments`: what a track's `Instances` and a Ray shard hand out."""
        pos = list(positions)
        seg = None if segments is None else segments[pos]
        picked = inputs[pos] if isinstance(inputs, np.ndarray) else [inputs[p] for p in pos]
        return cls(ids=[ids[p] for p in pos], inputs=picked, segments=seg, seed=seed)

    def instance_seed(self, i: int) -> int:
        """A 31-bit seed for instance `i` from (run seed, instance id): stable across runs, batch
        layouts and machines, so an instance's explanation never depends on its batch."""
        digest = hashlib.sha256(f"{int(self.seed)}:{self.ids[i]}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def data_file(module: str, name: str) -> Path:
    """The path of the data file `name` that the submission's `submission.toml` declares under `[files]`,
    asked for from any module of the submission: `data_file(__name__, "weights")`. The file is a copy the
    harness made of the declared one (read-only; in the sandbox on a read-only mount); it is the same
    file as `Path(__file__).parent / "<its path>"` from the folder's top level. `KeyError` naming the
    declared names when `name` is not one; `LookupError` when `module` is not a submission's module."""
    from benchmark.submission.importing import FILES_ATTRIBUTE

    files = getattr(sys.modules.get(module.partition(".")[0]), FILES_ATTRIBUTE, None)
    if files is None:
        raise LookupError(f"{module} is not a module of a submission imported by xaibench; call "
                          "data_file(__name__, name) from the submission's own code")
    if name not in files:
        raise KeyError(f"[files] of submission.toml declares no '{name}'; declared: "
                       f"{', '.join(sorted(files)) or 'none'}")
    return files[name]


@runtime_checkable
class Explainer(Protocol):
    """An attribution method. One array per instance: (H, W) for images, (n_words,) for text.

    Higher = more important for the explained output (`model.target(...)`).
    """

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One attribution array per instance of `batch`, in its order (the shapes above)."""
        ...


@dataclass(frozen=True)
class OracleContext:
    """What an oracle gets once per model under test: a training split, the model, an explainer.

    `train`: the resource's training split as columns (`tokens`, `label`, `prediction`, `confidence`);
    `explainer`: the built-in explainer that produced the explanations it will judge (None when it
    cannot be built), `explainer_name` its registered name; `class_names`: one name per class."""

    model: Model
    train: Any
    explainer: Explainer | None = None
    seed: int = 0
    class_names: Sequence[str] = ()
    explainer_name: str = ""


@runtime_checkable
class Oracle(Protocol):
    """A trustworthiness oracle: judges whether explained predictions are trustworthy.

    `judge` returns one bool per instance (True = trustworthy), or a dict ``{"verdicts": [bool, …],
    "scores": [float, …]}`` whose score in [0, 1] says how trustworthy (higher = more; rate-free
    metrics such as AUC rank by it). A bad score (outside [0, 1], NaN, missing for an instance, not a
    number, or a list of the wrong length) is that instance's recorded score failure; its verdict
    still counts (`judgement_outputs`)."""

    def fit(self, context: OracleContext) -> None:
        """Learn from the training split once per model under test, before any `judge`."""
        ...

    def judge(self, batch: Batch) -> Judgement:
        """Verdicts (and optionally scores) for the explained predictions of `batch` (see above)."""
        ...


# What an oracle's instance output carries on the wire and in the cache: a float32 array
# [verdict (1 = trustworthy), score in [0, 1] or one of these negative codes].
SCORE_NONE = -1.0  # the judge gave verdicts only
SCORE_REASONS = {  # code → why the score does not count (the verdict still does)
    -2.0: "a verdict without a score (the judge scored other predictions)",
    -3.0: "the score is not a number",
    -4.0: "the score is NaN or infinite",
    -5.0: "the score lies outside [0, 1]",
    -6.0: "the judge returned scores for a different number of predictions than it judged",
}
_SCORE_TYPES = (float, int, np.float64, np.float32, np.float16, np.int64, np.int32)


def score_code(value: Any) -> float:
    """A judged score as itself (a float in [0, 1]) or its failure code (`SCORE_REASONS`). The exact type
    is checked (a hostile object cannot pass for a number) and nothing of it is called."""
    if value is None:
        return -2.0
    if type(value) not in _SCORE_TYPES:
        return -3.0
    x = float(value)
    if not np.isfinite(x):
        return -4.0
    return x if 0.0 <= x <= 1.0 else -5.0


def judgement_parts(value: Any, n: int) -> tuple[Any, list[float]]:
    """(the verdict items, one score or code each) of what `judge` returned for a batch of `n`: a
    sequence of verdicts → every score `SCORE_NONE`; a dict with "verdicts" and "scores" → each score
    checked (`score_code`), a scores list of the wrong length → code −6 for every instance. The
    verdicts are returned as given (the caller checks their count and types)."""
    if type(value) is dict:
        verdicts = value.get("verdicts")
        scores = value.get("scores")
        if type(scores) is list or type(scores) is tuple:  # exactly these: no subclass's len / iter runs
            codes = [score_code(v) for v in scores] if len(scores) == n else [-6.0] * n
        else:
            codes = [-2.0 if scores is None else -6.0] * n
        return verdicts, codes
    return value, [SCORE_NONE] * n
