"""Model wrappers: the same thin shape for every track (DESIGN §4).

* `predict(inputs) -> np.ndarray (N, n_outputs)` — batched black-box outputs;
* `target(inputs) -> np.ndarray (N,)` — which output is explained for each instance;
* `module` — the torch module for white-box methods (None for black-box models);
* text models add `embed(tokens)` / `forward_from_embeddings(...)` (word level).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from benchmark.errors import ResourceError

TASKS = ("regression", "binary", "multiclass")


class Model:
    """Base wrapper. Subclasses implement `_predict` on one chunk; `predict` batches it."""

    modality: str = "image"
    module: torch.nn.Module | None = None

    def __init__(self, name: str, task: str, n_outputs: int = 1, batch_size: int = 256) -> None:
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        self.name = name
        self.task = task
        self.n_outputs = n_outputs
        self.batch_size = batch_size

    # -- black box -------------------------------------------------------------------------
    def predict(self, inputs: Any) -> np.ndarray:
        """Outputs (N, n_outputs): regression values or class probabilities, in chunks."""
        n = len(inputs)
        out = [self._predict(inputs[i : i + self.batch_size]) for i in range(0, n, self.batch_size)]
        if not out:
            return np.zeros((0, self.n_outputs), dtype=np.float32)
        return np.concatenate(out, axis=0)

    def _predict(self, inputs: Any) -> np.ndarray:
        raise NotImplementedError

    def target(self, inputs: Any) -> np.ndarray:
        """Index of the explained output: the single head, or the predicted class."""
        if self.n_outputs == 1:
            return np.zeros(len(inputs), dtype=np.int64)
        return self.predict(inputs).argmax(axis=1)

    def focus(self, ids: Sequence[str]) -> None:
        """Called by the runner before each batch (models that depend on the instance use it)."""

    @property
    def white_box(self) -> bool:
        return self.module is not None


class ImageModel(Model):
    """A torch image model: `module` maps (N, 1, H, W) float tensors in [0, 1] to (N, n_outputs)."""

    modality = "image"

    def __init__(
        self,
        module: torch.nn.Module,
        name: str,
        task: str,
        n_outputs: int = 1,
        batch_size: int = 16,  # small chunks: activations stay under glibc's mmap threshold (allocator.py)
        gradcam_layer: str | None = None,
    ) -> None:
        super().__init__(name, task, n_outputs, batch_size)
        self.module = module.eval()
        self.gradcam_layer = gradcam_layer

    def layer(self, name: str | None = None) -> torch.nn.Module:
        """A named sub-module (default: the Grad-CAM layer declared by the architecture)."""
        name = name or self.gradcam_layer
        if name is None:
            raise ValueError(f"model {self.name} declares no Grad-CAM layer")
        return dict(self.module.named_modules())[name]

    @staticmethod
    def as_tensor(inputs: Any) -> torch.Tensor:
        x = torch.as_tensor(np.asarray(inputs, dtype=np.float32))
        return x.unsqueeze(1) if x.dim() == 3 else x

    def _predict(self, inputs: Any) -> np.ndarray:
        with torch.no_grad():
            return self.module(self.as_tensor(inputs)).numpy()


class TextModel(Model):
    """Word-level text model interface (built by the text tracks).

    Inputs are lists of word tokens; attributions have one value per word position. White-box
    access is at the embedding layer: `embed(tokens) -> (N, L, D)` and
    `forward_from_embeddings(embeddings, mask) -> (N, n_outputs)`. Sub-word scores are summed into
    their word by the wrapper (`word_scores`), never by a submission.
    """

    modality = "text"
    aspect: str | None = None  # the rated aspect, for models that predict one (RCNN)

    def unlabeled_texts(self):
        """Unlabeled token lists the model was trained on, when it exposes them (L2X learns from the
        model's predictions on them); None otherwise."""
        return None

    def embed(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        raise NotImplementedError

    def forward_from_embeddings(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def word_scores(self, scores: np.ndarray, tokens: Sequence[str]) -> np.ndarray:
        """Sub-word → word aggregation; identity for word-level models."""
        return scores


# -- persistence --------------------------------------------------------------------------


def save_model(module: torch.nn.Module, directory: Path, architecture: str, kwargs: dict,
               extra: dict | None = None) -> str:
    """Write `model.safetensors` + `config.json`; returns the weights' sha256 (the model hash)."""
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / "model.safetensors.tmp"
    save_file({k: v.contiguous() for k, v in module.state_dict().items()}, str(tmp))
    tmp.replace(directory / "model.safetensors")
    digest = hashlib.sha256((directory / "model.safetensors").read_bytes()).hexdigest()
    config = {"architecture": architecture, "kwargs": kwargs, "sha256": digest, **(extra or {})}
    tmpc = directory / "config.json.tmp"
    tmpc.write_text(json.dumps(config, indent=2, sort_keys=True))
    tmpc.replace(directory / "config.json")
    return digest


def read_model_config(directory: Path, rebuild: str = "rebuild the resource's model") -> dict:
    """A model folder's config.json, or a one-line ResourceError naming the file and the fix."""
    path = Path(directory) / "config.json"
    if not path.exists():
        raise ResourceError(f"no trained model in {directory} (missing config.json); run `{rebuild}`")
    try:
        config = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResourceError(f"model config {path} is damaged ({exc}); run `{rebuild}`") from None
    if not isinstance(config, dict) or not isinstance(config.get("sha256"), str):
        raise ResourceError(f"model config {path} is incomplete (no sha256); run `{rebuild}`")
    return config


def load_model(directory: Path) -> tuple[torch.nn.Module, dict]:
    """Rebuild a module from a resource's `model/<config>/` folder; returns (module, config)."""
    from safetensors.torch import load_file

    from benchmark.models.architectures import ARCHITECTURES

    cfg_path, w_path = directory / "config.json", directory / "model.safetensors"
    if not cfg_path.exists() or not w_path.exists():
        raise ResourceError(
            f"no trained model in {directory}; run `xaibench train aixi` (or pass --model function)"
        )
    config = json.loads(cfg_path.read_text())
    module = ARCHITECTURES.get(config["architecture"])(**config["kwargs"])
    try:
        module.load_state_dict(load_file(str(w_path)))
    except Exception as exc:  # truncated or mismatched weights
        raise ResourceError(f"model weights in {w_path} are unreadable ({exc}); retrain the model") from exc
    return module.eval(), config
