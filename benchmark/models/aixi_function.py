"""AIXI attribution functions (SPECS §3.3) and the function itself as a model (§3.5, Experiment 2).

Counts ι_k = number of objects of pattern k, normalised ι̂_k = ι_k / ι_max (ι_max = 2 for Shape,
6 for Color).
* SSIN(x)  = Σ_k w_k sin(π/2 · ι̂_k), w = (1/2, 1/4, 1/6)   (Cortez & Embrechts' weights)
* SUUM(x)  = Σ_k w_k ι̂_k,            w = (1/2, 1/4, 1/6)
* Class(x) = [ι_1 > ι_2] (rule "count", default) or [w_1 ι_1 − w_2 ι_2 > 0] (rule "weighted"),
  GT weights (1, 0.5, 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from benchmark.models.base import Model

IOTA_MAX = {"shape": 2, "color": 6}
PATTERNS = {"shape": ("circle", "square", "cross"), "color": ("intensity1", "intensity2", "intensity3")}


@dataclass(frozen=True)
class AixiFunction:
    """One attribution function of SPECS §3.3 (module docstring): `name` "ssin" | "suum" | "class", the
    pattern weights w, the task, and Class' rule; called on pattern counts (N, 3)."""

    name: str
    weights: tuple[float, float, float]
    task: str  # "regression" | "binary"
    class_rule: str = "count"  # [I] SPECS §3.3: "count" = [ι1 > ι2]; "weighted" = [w1 ι1 − w2 ι2 > 0]

    def __call__(self, counts: np.ndarray, iota_max: int) -> np.ndarray:
        """counts (N, 3) integer → outputs (N,) float32."""
        counts = np.asarray(counts, dtype=np.float64)
        w = np.asarray(self.weights)
        if self.name == "ssin":
            out = (w * np.sin(np.pi / 2 * counts / iota_max)).sum(axis=1)
        elif self.name == "suum":
            out = (w * counts / iota_max).sum(axis=1)
        elif self.class_rule == "count":
            out = (counts[:, 0] > counts[:, 1]).astype(np.float64)
        elif self.class_rule == "weighted":
            out = (w[0] * counts[:, 0] - w[1] * counts[:, 1] > 0).astype(np.float64)
        else:
            raise ValueError(f"class_rule must be 'count' or 'weighted', got {self.class_rule!r}")
        return out.astype(np.float32)


FUNCTIONS: dict[str, AixiFunction] = {
    "ssin": AixiFunction("ssin", (1 / 2, 1 / 4, 1 / 6), "regression"),
    "suum": AixiFunction("suum", (1 / 2, 1 / 4, 1 / 6), "regression"),
    "class": AixiFunction("class", (1.0, 0.5, 0.0), "binary"),
}


def get_function(name: str, class_rule: str = "count") -> AixiFunction:
    """The function `name` of `FUNCTIONS` with Class' `class_rule` ("count" or "weighted"); ValueError
    for an unknown name."""
    try:
        f = FUNCTIONS[name]
    except KeyError:
        raise ValueError(f"unknown AIXI function '{name}'; one of {', '.join(FUNCTIONS)}") from None
    return f if class_rule == f.class_rule else AixiFunction(f.name, f.weights, f.task, class_rule)


def ground_truth_map(instances: np.ndarray, patterns: Sequence[int], weights: Sequence[float]) -> np.ndarray:
    """G_p = Σ_k w_k M_k(p) (SPECS §3.4): each object's pixels get its pattern's weight.

    `instances` (H, W): 0 background, j = object j; `patterns[j-1]` ∈ {0, 1, 2} its pattern."""
    lut = np.zeros(len(patterns) + 1, dtype=np.float32)
    lut[1:] = np.asarray(weights, dtype=np.float32)[np.asarray(patterns, dtype=np.int64)]
    return lut[instances]


@dataclass(frozen=True)
class Reference:
    """What the function model knows of an instance: its image, objects and their patterns."""

    image: np.ndarray  # (H, W) float32 in [0, 1]
    instances: np.ndarray  # (H, W) int: 0 background, j = object j
    patterns: np.ndarray  # (K,) pattern index of object j (at j-1)


class FunctionModel(Model):
    """The attribution function as the model under test (Experiment 2).

    The model is told which instance is being explained (`focus(instance_id)`: the runner does it
    before each explanation, one instance per `explain` call — `ModelSpec.per_instance`). Every
    input is read as a perturbation of that instance: an object counts as present when at least
    `visible_fraction` of its pixels keep their original value [I: counting rule], and the function
    is applied to those counts. The output for an input therefore depends on the input and the
    explained instance only, never on what else is in the batch (the earlier design searched the
    batch for the best-fitting source, and a perturbation that hides objects could fit another
    instance better: KL differed by up to 24 % between batch sizes 1 and 16).
    The references (objects and their patterns) are ground truth: this model lives in the harness
    and a submission reaches it only through `predict` (`benchmark.isolation`).
    """

    def __init__(self, function: AixiFunction, dataset: str, references: Mapping[str, Reference],
                 visible_fraction: float = 0.5, batch_size: int = 1024) -> None:
        super().__init__(f"function-{function.name}", function.task, 1, batch_size)
        # private: the function's weights and the objects' patterns are ground truth
        self._function = function
        self._iota_max = IOTA_MAX[dataset]
        self._references = references
        self.visible_fraction = visible_fraction
        self._focus: str | None = None

    def randomised(self, seed: int = 0) -> "FunctionModel":
        """Adebayo et al.'s (2018) model randomisation for a model with no trained weights: the same
        counting rule with the pattern weights re-drawn from U(−1, 1) (seeded) and Class' rule made
        "weighted", so the output no longer follows the ground-truth function (the metric board's control)."""
        w = np.random.default_rng([seed, 35]).uniform(-1.0, 1.0, size=3)
        f = self._function
        rule = "weighted" if f.name == "class" else f.class_rule
        fn = AixiFunction(f.name, (float(w[0]), float(w[1]), float(w[2])), f.task, rule)
        dataset = next(d for d, v in IOTA_MAX.items() if v == self._iota_max)
        return FunctionModel(fn, dataset, self._references, self.visible_fraction, self.batch_size)

    def focus(self, instance: str) -> None:
        """Explain `instance` next: every input is read as a perturbation of it."""
        if instance not in self._references:
            raise KeyError(f"unknown instance {instance!r}")
        self._focus = instance

    def _counts(self, inputs: np.ndarray) -> np.ndarray:
        x = np.asarray(inputs, dtype=np.float32)
        if x.ndim == 4:
            x = x[:, 0]
        if self._focus is None:
            raise RuntimeError("FunctionModel.predict called before focus(instance); the runner sets it")
        ref = self._references[self._focus]
        if x.ndim != 3 or x.shape[1:] != ref.image.shape:
            raise ValueError(f"inputs must be (N, {ref.image.shape[0]}, {ref.image.shape[1]}) images, got {x.shape}")
        out = np.zeros((len(x), 3), dtype=np.int64)
        k = len(ref.patterns)
        if k == 0 or len(x) == 0:
            return out
        idx, onehot, original, tot = self._objects(self._focus, ref, k)
        keep = np.abs(x.reshape(len(x), -1)[:, idx] - original[None]) < 1e-4  # (N, object pixels) unchanged
        kept = keep.astype(np.int64) @ onehot  # (N, K) unchanged pixels per object: an exact integer product
        visible = kept >= self.visible_fraction * np.maximum(tot, 1)[None]
        for p in range(3):
            out[:, p] = (visible & (ref.patterns == p)[None]).sum(axis=1)
        return out

    def _objects(self, instance: str, ref: Reference, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(flat indices of the object pixels, their one-hot object (n, K), original values, pixels per object),
        computed once per instance: only object pixels can hide an object, so only they are compared."""
        cache = self.__dict__.setdefault("_object_cache", {})
        if instance not in cache:
            inst = ref.instances.ravel()
            idx = np.flatnonzero(inst)
            onehot = (inst[idx][:, None] == np.arange(1, k + 1)[None]).astype(np.int64)
            cache[instance] = (idx, onehot, ref.image.ravel()[idx],
                               np.bincount(inst, minlength=k + 1)[1 : k + 1])
        return cache[instance]

    def _predict(self, inputs: np.ndarray) -> np.ndarray:
        return self._function(self._counts(inputs), self._iota_max)[:, None]
