"""Model specs: how a submission's worker gets the model under test (DESIGN §8, the ground-truth boundary).

A track does not hand a model object to a submission; it returns a `ModelSpec`:

* a **loaded** model — `loader` names one of `LOADERS` and `directory` a resource's `model/<config>/`
  folder (weights + config.json, nothing else): the worker rebuilds the white-box model from those
  files alone, read-only, inside its sandbox;
* a **served** model — a black box the harness must keep because it is built from ground truth (the
  AIXI function model holds every instance's objects and patterns). It stays in the harness; the
  worker gets a proxy whose `predict` calls round-trip over the pipe, batched. A served model may name
  a part of itself that needs no ground truth (`worker_part()`: the function model's `ObjectView`,
  which objects an image still shows); the proxy runs it and sends its result instead of the inputs.

`targets` fixes the explained output of each instance (e.g. a document's labelled class, for
agreement with people) instead of the model's prediction; it implies one instance per call.

`randomisation` makes a loaded spec the model's randomised copy (`benchmark.models.variants.randomise`): the loader's
model, re-initialised under the given seed wherever it is loaded, its weights checked against the digest.

`per_instance = True` declares a model whose output depends on which instance is being explained
(the function model counts the objects of *that* instance still visible): the worker then calls the
explainer on one instance at a time and tells the harness the instance before each `predict`, so an
input's output never depends on what else is in the batch (issue: batch-invariant models).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from benchmark.errors import ResourceError
from benchmark.models.base import Model


def _load_image(directory: Path, name: str, **options: Any) -> Model:
    from benchmark.models.base import ImageModel, load_model

    module, config = load_model(directory)
    return ImageModel(module, name=name, task=config.get("task", "regression"),
                      gradcam_layer=getattr(module, "gradcam_layer", None))


def _load_word(directory: Path, name: str, **options: Any) -> Model:
    from benchmark.models.text import load_word_model

    return load_word_model(directory, name=name, rebuild=options.get("rebuild"))


def _load_rcnn(directory: Path, name: str, batch_size: int = 256, **options: Any) -> Model:
    from benchmark.models.rcnn import load_rcnn

    return load_rcnn(directory, name=name, batch_size=int(batch_size), **options)


def _load_minilm(directory: Path, name: str, **options: Any) -> Model:
    from benchmark.models.transformer import load_minilm

    return load_minilm(directory, name=name, rebuild=options.get("rebuild"),
                       batch_size=int(options.get("batch_size", 64)))


LOADERS: dict[str, Callable[..., Model]] = {"image": _load_image, "word": _load_word, "rcnn": _load_rcnn,
                                            "minilm": _load_minilm}


@dataclass
class ModelSpec:
    """The model under test as a submission will get it (see the module docstring)."""

    name: str
    modality: str  # "image" | "text"
    white_box: bool
    loader: str | None = None  # a key of LOADERS (loaded models)
    directory: Path | None = None  # the model folder the loader reads (loaded models)
    options: dict[str, Any] = field(default_factory=dict)
    served: Model | None = None  # harness-held black box (served models); never sent to a worker
    per_instance: bool = False
    targets: dict[str, int] | None = None  # explain this output per instance (instead of the prediction)
    # a loaded model's randomised copy: {"seed", "top", "sha256"} (`randomised_spec` of
    # `benchmark.models.variants.randomise`); applied wherever the model is loaded, and checked against the digest there
    randomisation: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.loader is None) == (self.served is None):
            raise ValueError("a ModelSpec is either loaded (loader + directory) or served (a model)")
        if self.loader is not None and self.loader not in LOADERS:
            raise ValueError(f"unknown model loader {self.loader!r}; one of {', '.join(LOADERS)}")
        if self.loader is not None and self.directory is None:
            raise ValueError(f"a loaded ModelSpec needs the model directory the {self.loader!r} loader reads")

    @property
    def one_at_a_time(self) -> bool:
        """Explain one instance per call (the model must know which instance it is explaining)."""
        return self.per_instance or self.targets is not None

    def load(self) -> Model:
        """The model object itself (in the harness or in a worker)."""
        if self.served is not None:
            return self.served
        assert self.loader is not None and self.directory is not None  # a loaded spec (__post_init__)
        from benchmark.models.variants.randomise import apply

        try:
            return apply(LOADERS[self.loader](Path(self.directory), self.name, **self.options), self.randomisation)
        except ResourceError:
            raise
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ResourceError(f"model {self.name} in {self.directory} could not be loaded "
                                f"({type(exc).__name__}: {exc}); rebuild the resource's model") from exc

    def wire(self, directory: str | None = None) -> dict[str, Any]:
        """What the worker is told (`directory`: where the folder appears inside its sandbox)."""
        out: dict[str, Any]
        if self.served is not None:
            m = self.served
            part = getattr(m, "worker_part", None)  # what the worker may run of it (no ground truth)
            out = {"served": {"name": m.name, "task": m.task, "n_outputs": int(m.n_outputs),
                              "modality": self.modality, "batch_size": int(m.batch_size),
                              **(part() if callable(part) else {})}}
        else:
            out = {"loader": self.loader, "name": self.name, "options": dict(self.options),
                   "directory": directory or str(self.directory),
                   **({"randomisation": dict(self.randomisation)} if self.randomisation else {})}
        return {**out, "per_instance": self.one_at_a_time, "targets": self.targets}
