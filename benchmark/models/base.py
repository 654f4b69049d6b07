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
from benchmark.models.exact import EXACT_DTYPE, ExactCopy, rounded

TASKS = ("regression", "binary", "multiclass")


class Model:
    """Base wrapper. Subclasses implement `_predict` on one chunk; `predict` batches it."""

    modality: str = "image"
    module: torch.nn.Module | None = None
    repeats_worth_dropping = True  # predict an input repeated within a call once (False: the model is cheaper)

    def __init__(self, name: str, task: str, n_outputs: int = 1, batch_size: int = 256) -> None:
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        self.name = name
        self.task = task
        self.n_outputs = n_outputs
        self.batch_size = batch_size
        self._exact: ExactCopy = ExactCopy()

    # -- black box -------------------------------------------------------------------------
    def predict(self, inputs: Any) -> np.ndarray:
        """Outputs (N, n_outputs): regression values or class probabilities, in chunks. An input repeated
        within the call (LIME's and SHAP's masks repeat) is predicted once and its row copied: an input's
        output never depends on what else is in the batch (`benchmark.models.exact`), so these are the
        bits each copy would have got (`distinct_inputs`)."""
        if len(inputs) == 0:
            return np.zeros((0, self.n_outputs), dtype=np.float32)
        if not self.repeats_worth_dropping:
            return self._predict_all(inputs)
        unique, rows = distinct_inputs(inputs, self.modality)
        out = self._predict_all(unique)
        return out if rows is None else out[rows]

    def _predict_all(self, inputs: Any) -> np.ndarray:
        """Outputs of (distinct) inputs, `_predict` on consecutive chunks of `batch_size`."""
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

    def focus(self, instance: str) -> None:
        """Called by the runner with the id of the instance it explains next (`ModelSpec.per_instance`);
        a no-op here, models whose output depends on the explained instance override it."""

    def exact_module(self) -> torch.nn.Module:
        """The float64 copy of `module` that `predict` computes with, so a prediction never depends on its
        batch, the thread count or the CPU (`benchmark.models.exact`); `module` itself stays float32."""
        if self.module is None:
            raise TypeError(f"model {self.name} has no torch module")
        return self._exact(self.module)

    @property
    def white_box(self) -> bool:
        """True when `module` (the torch module gradient methods need) is available."""
        return self.module is not None


def distinct_inputs(inputs: Any, modality: str) -> tuple[Any, np.ndarray | None]:
    """(the distinct inputs in the order they first appear, rows) with `inputs[i]` equal to
    `distinct[rows[i]]`; rows is None when every input is distinct, or when the inputs cannot be compared
    (they are then returned as given, for the model to accept or refuse). Images are compared as their
    float32 bytes (what an image model reads; one sort of the rows as byte strings, ≈ 4 µs per 128×128
    image), documents as their token sequences."""
    n = len(inputs)
    if n < 2:
        return inputs, None
    try:
        if modality == "image":
            arr = np.ascontiguousarray(np.asarray(inputs, dtype=np.float32))
            flat = arr.reshape(n, -1)
            as_bytes = flat.view(np.dtype((np.void, flat.shape[1] * flat.itemsize))).ravel()
            _, first, rows = np.unique(as_bytes, return_index=True, return_inverse=True)
        else:
            index: dict[tuple, int] = {}
            rows = np.fromiter((index.setdefault(tuple(doc), len(index)) for doc in inputs), dtype=np.int64, count=n)
            first = np.unique(rows, return_index=True)[1]
    except (TypeError, ValueError):  # unhashable tokens, ragged images: the model's own checks decide
        return inputs, None
    if len(first) == n:
        return inputs, None
    order = np.argsort(first)  # the distinct inputs in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    first = first[order]
    return (arr[first] if modality == "image" else [inputs[i] for i in first]), rank[rows.reshape(-1)]


class ImageModel(Model):
    """A torch image model: `module` maps (N, 1, H, W) float tensors in [0, 1] to (N, n_outputs)."""

    modality = "image"
    module: torch.nn.Module

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
        """Images (N, H, W) or (N, 1, H, W) as a float32 tensor (N, 1, H, W)."""
        x = torch.as_tensor(np.asarray(inputs, dtype=np.float32))
        return x.unsqueeze(1) if x.dim() == 3 else x

    def _predict(self, inputs: Any) -> np.ndarray:
        """Outputs in float64 from the float32 images, rounded to float32 (`benchmark.models.exact`); through
        the module's `forward_eval` where it has one (the same values by a faster route)."""
        module = self.exact_module()
        dtype = next(module.parameters(), torch.empty(0, dtype=EXACT_DTYPE)).dtype
        forward = getattr(module, "forward_eval", module)
        with torch.no_grad():
            return rounded(forward(self.as_tensor(inputs).to(dtype))).numpy()


class TextModel(Model):
    """Word-level text model interface (built by the text tracks).

    Inputs are lists of word tokens; attributions have one value per word position. White-box
    access is at the embedding layer: `embed(tokens) -> (N, L, D)` and
    `forward_from_embeddings(embeddings, mask) -> (N, n_outputs)`. Sub-word scores are summed into
    their word by the wrapper (`word_scores`), never by a submission.
    """

    modality = "text"
    aspect: str | None = None  # the rated aspect, for models that predict one (RCNN)

    texts_file: Path | None = None  # `texts.parquet` beside the weights, when the loader found one
    _unlabeled: list[list[str]] | None = None

    def unlabeled_texts(self) -> list[list[str]] | None:
        """Unlabeled token lists the model was trained on, when it exposes them (L2X learns from the
        model's predictions on them): the `texts.parquet` the loader found beside the weights (read once);
        None otherwise."""
        if self.texts_file is None:
            return None
        if self._unlabeled is None:
            self._unlabeled = read_texts(self.texts_file)
        return self._unlabeled

    def embed(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        """The input embeddings (N, L, D) of a batch of token lists; L = the longest document."""
        raise NotImplementedError

    def forward_from_embeddings(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The logits (N, n_outputs) of embeddings (N, L, D) under the mask `mask(tokens)` gives."""
        raise NotImplementedError

    def word_scores(self, scores: np.ndarray, tokens: Sequence[str]) -> np.ndarray:
        """Sub-word → word aggregation; identity for word-level models."""
        return scores


# -- persistence --------------------------------------------------------------------------

TEXTS_FILE = "texts.parquet"  # a text model's unlabeled training texts (tokens only), beside its weights


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


def rebuild_command(directory: Path) -> str:
    """The command that rebuilds the model in `directory`, read off the resource layout
    `<resource folder>/model/<name>/`: the family is the resource folder's name (`<family>` under
    $XAIBENCH_HOME/resources, `xaibench-<family>` in a mirror or Hub snapshot). A folder outside a
    resource gets the generic form."""
    directory = Path(directory)
    family = directory.parent.parent.name.removeprefix("xaibench-") if directory.parent.name == "model" else ""
    if family == "aixi":
        return f"xaibench train aixi aixi/{directory.name} --overwrite"
    if family == "idc":
        return "xaibench generate idc --overwrite"
    if family == "rcnn":
        return f"xaibench generate rcnn --aspect {directory.name.removeprefix('beer-')} --overwrite"
    return "xaibench generate <family> --overwrite"


def read_model_config(directory: Path, rebuild: str | None = None) -> dict:
    """`config.json` of a saved model, checked: readable JSON, an object with `architecture` (str),
    `kwargs` (object) and `sha256` (the weights' 64-hex digest, which is also the model's cache key).
    Anything else raises `ResourceError` naming the file and the command that rebuilds it."""
    path = Path(directory) / "config.json"
    fix = rebuild or rebuild_command(directory)
    try:
        config = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResourceError(f"model config {path} is missing; rebuild the model with `{fix}`") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResourceError(f"model config {path} is unreadable ({type(exc).__name__}: {exc}); "
                            f"rebuild the model with `{fix}`") from exc
    problems = []
    if not isinstance(config, dict):
        problems.append(f"is a JSON {type(config).__name__}, not an object")
    else:
        if not isinstance(config.get("architecture"), str):
            problems.append("has no 'architecture' name")
        if not isinstance(config.get("kwargs"), dict):
            problems.append("has no 'kwargs' object")
        sha = config.get("sha256")
        if not (isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
            problems.append("has no 'sha256' of the weights")
    if problems:
        raise ResourceError(f"model config {path} is incomplete ({'; '.join(problems)}); "
                            f"rebuild the model with `{fix}`")
    return config


def load_model(directory: Path, rebuild: str | None = None) -> tuple[torch.nn.Module, dict]:
    """Rebuild a module from a resource's `model/<config>/` folder; returns (module, config).

    Checked on every load, so a damaged model never yields numbers: the config (`read_model_config`),
    the weights file against the sha256 the config records (a truncated, garbled or swapped file; ~4 ms
    for the 5 MB AIXI CNN, ~80 ms for a 120 MB embedding table), that the safetensors file parses and
    that its tensors fit the architecture exactly. Every failure is a `ResourceError` naming the file and
    `rebuild` (default: the command read off the resource layout, `rebuild_command`)."""
    from safetensors.torch import load_file

    from benchmark.errors import XaibenchError
    from benchmark.models.architectures import ARCHITECTURES
    from benchmark.resources.store import sha256_file

    directory = Path(directory)
    fix = rebuild or rebuild_command(directory)
    cfg_path, w_path = directory / "config.json", directory / "model.safetensors"
    if not cfg_path.exists() or not w_path.exists():
        missing = cfg_path.name if not cfg_path.exists() else w_path.name
        raise ResourceError(f"no trained model in {directory} ({missing} missing); build it with `{fix}` "
                            f"(or pass --model function)")
    config = read_model_config(directory, fix)
    try:
        digest = sha256_file(w_path)
    except OSError as exc:
        raise ResourceError(f"model weights {w_path} are unreadable ({exc}); rebuild the model with `{fix}`") from exc
    if digest != config["sha256"]:
        raise ResourceError(f"model weights {w_path} do not match the sha256 in config.json (damaged or replaced: "
                            f"{digest[:12]} != {config['sha256'][:12]}); rebuild the model with `{fix}`")
    try:
        module = ARCHITECTURES.get(config["architecture"])(**config["kwargs"])
    except (XaibenchError, TypeError, ValueError) as exc:
        raise ResourceError(f"model config {cfg_path} names an architecture this xaibench cannot build "
                            f"({exc}); rebuild the model with `{fix}` or update xaibench") from exc
    try:
        weights = load_file(str(w_path))
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error type for every bad file
        raise ResourceError(f"model weights {w_path} are unreadable ({type(exc).__name__}: {exc}); "
                            f"rebuild the model with `{fix}`") from exc
    try:
        module.load_state_dict(weights)
    except RuntimeError as exc:  # missing / unexpected tensors, shape mismatches
        detail = " ".join(str(exc).split())[:300]
        raise ResourceError(f"model weights {w_path} do not fit the {config['architecture']!r} architecture "
                            f"of config.json ({detail}); rebuild the model with `{fix}`") from exc
    return module.eval(), config


def write_texts(directory: Path, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> Path:
    """The model's unlabeled training texts beside its weights (`texts.parquet`: id, tokens)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    table = pa.table({"id": pa.array([str(i) for i in ids], pa.string()),
                      "tokens": pa.array([list(t) for t in tokens], pa.list_(pa.string()))})
    tmp = directory / (TEXTS_FILE + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(directory / TEXTS_FILE)
    return directory / TEXTS_FILE


def read_texts(path: Path, rebuild: str | None = None) -> list[list[str]]:
    """The token lists of `texts.parquet`; `ResourceError` naming the file and the rebuild command when
    it is not a Parquet file with a list-of-strings `tokens` column."""
    import pyarrow.parquet as pq

    fix = rebuild or rebuild_command(Path(path).parent)
    try:
        texts = [list(t) for t in pq.read_table(path, columns=["tokens"]).column("tokens").to_pylist()]
        if not all(isinstance(w, str) for t in texts for w in t):
            raise ValueError("tokens are not strings")
        return texts
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same problem for the user
        raise ResourceError(f"model texts {path} are unreadable ({type(exc).__name__}: {exc}); "
                            f"rebuild them with `{fix}`") from exc


def texts_file_in(directory: Path | str) -> Path | None:
    """The model's unlabeled training texts (`texts.parquet`) beside its weights in `directory`, or None."""
    path = Path(directory) / TEXTS_FILE
    return path if path.is_file() else None
