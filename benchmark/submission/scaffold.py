"""`xaibench new explainer|oracle NAME [--modality text|image] [--from captum.attr.X]`: a ready submission folder.

Writes `./NAME/` with `submission.toml` (every field explained), one typed module and a short README with the
five commands of docs/submitting.md. The module keeps the contract as generated — `xaibench check NAME/`
passes (tests/test_packages.py) — and is a real method to start from:

* explainer, image: occlusion of 8×8 patches (the explained output's drop; one batched `predict` per batch);
* explainer, text: leave-one-out word deletion (the explained class's probability drop);
* oracle (text, the trust track): trusts a prediction whose confidence reaches a quantile of the training
  split's confidences (`fit`), and gives the confidence as its score;
* `--from captum.attr.X`: captum's attribution method X on the image (the model's torch module, or its
  `predict` for a perturbation method) or at the word embeddings (summed per word); `CAPTUM` lists the
  methods it wraps and the arguments each needs.

The folder is written to a temporary name beside the target and renamed into place: nothing is left
half-written, and an existing folder is never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmark.errors import XaibenchError
from benchmark.submission.folder import NAME_RE


@dataclass(frozen=True)
class CaptumMethod:
    """How a captum attribution class is wrapped: `gradient` (needs the white-box model) or perturbation
    (the model's `predict` serves on images), and the `attribute` arguments per modality (Python source,
    with `x` the input tensor and `chunk` the documents)."""

    gradient: bool
    image_args: tuple[str, ...] = ()
    text_args: tuple[str, ...] = ()


_ZERO = "baselines=x * 0"
_PAD = "baselines=model.baseline_embeddings(chunk).float()"
CAPTUM = {
    "Saliency": CaptumMethod(True, ("abs=True",), ("abs=True",)),
    "InputXGradient": CaptumMethod(True),
    "IntegratedGradients": CaptumMethod(True, (_ZERO, "n_steps=32"), (_PAD, "n_steps=32")),
    "DeepLift": CaptumMethod(True, (_ZERO,), (_PAD,)),
    "GuidedBackprop": CaptumMethod(True),
    "Deconvolution": CaptumMethod(True),
    "FeatureAblation": CaptumMethod(False, ("baselines=0.0", "feature_mask=patches(x, 4)", "perturbations_per_eval=64"),
                                    (_PAD, "feature_mask=words(x)")),
    "Occlusion": CaptumMethod(False, ("sliding_window_shapes=(1, 4, 4)", "strides=(1, 4, 4)", "baselines=0.0",
                                      "perturbations_per_eval=64"),
                              ("sliding_window_shapes=(1, x.shape[-1])", "strides=(1, x.shape[-1])", _PAD)),
}
_ARGS = ",\n                "  # one attribute() argument per line, under the first


TRACKS = {"image": "--track aixi --model cnn", "text": "--track idc --model cnn", "oracle": "--track trust --model cnn"}


def class_name(name: str, kind: str) -> str:
    """`my-method` → `MyMethodExplainer` (or `…Oracle`)."""
    stem = "".join(part.capitalize() for part in re.split(r"[-_]", name) if part)
    stem = stem if stem[:1].isalpha() else "X" + stem
    return stem + ("Oracle" if kind == "oracle" else "Explainer")


def captum_method(spec: str | None) -> str | None:
    """The captum class named by `--from` (`captum.attr.Saliency` or `Saliency`), or None; an unknown one is
    refused naming those this command wraps."""
    if spec is None:
        return None
    name = spec.removeprefix("captum.attr.")
    if name not in CAPTUM:
        raise XaibenchError(f"--from {spec}: not a captum method `xaibench new` wraps; choose one of "
                            + ", ".join(f"captum.attr.{m}" for m in CAPTUM))
    return name


def new_submission(kind: str, name: str, modality: str = "image", source: str | None = None,
                   where: Path | None = None) -> Path:
    """Write the folder `<where>/<name>/` (module docstring) and return it; `XaibenchError` with one line
    (and nothing written) for a bad name, kind, modality or `--from`, or a folder that exists."""
    if kind not in ("explainer", "oracle"):
        raise XaibenchError(f"kind '{kind}' must be explainer or oracle")
    if not NAME_RE.match(name) or len(name) > 64:
        raise XaibenchError(f"name '{name[:80]}' must be lower-case letters, digits and '-' (at most 64), e.g. "
                            "my-explainer")
    if modality not in ("image", "text"):
        raise XaibenchError(f"--modality '{modality}' must be image or text")
    if kind == "oracle" and modality != "text":
        raise XaibenchError("oracles judge explained text predictions (the trust track): use --modality text")
    if kind == "oracle" and source is not None:
        raise XaibenchError("--from wraps a captum attribution method: it makes explainers, not oracles")
    method = captum_method(source)
    parent = Path(where) if where is not None else Path.cwd()
    target = parent / name
    if target.exists() or target.is_symlink():
        raise XaibenchError(f"{target} exists already; choose another name or folder (nothing was written)")
    if not parent.is_dir():
        raise XaibenchError(f"{parent} is not a folder (nothing was written)")
    files = _files(kind, name, modality, method)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
    try:
        for rel, text in files.items():
            (tmp / rel).write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o755)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _files(kind: str, name: str, modality: str, method: str | None) -> dict[str, str]:
    cls = class_name(name, kind)
    module = "oracle" if kind == "oracle" else "explainer"
    if kind == "oracle":
        source, params, gradients, what = _oracle(cls), "quantile = 0.5", False, \
            "trusts a prediction whose confidence reaches the training split's median"
    elif method is not None:
        spec = CAPTUM[method]
        source = (_captum_image if modality == "image" else _captum_text)(cls, method, spec)
        params, gradients = "batch_size = 16", spec.gradient or modality == "text"
        what = f"captum's {method}" + (" at the word embeddings, summed per word" if modality == "text" else "")
    elif modality == "image":
        source, params, gradients, what = _occlusion_image(cls), "patch = 8", False, \
            "the explained output's drop when a patch is set to 0"
    else:
        source, params, gradients, what = _deletion_text(cls), "", False, \
            "the explained class's probability drop when a word is deleted"
    return {"submission.toml": _toml(kind, name, f"{module}:{cls}", modality, gradients, params, what),
            f"{module}.py": source, "README.md": _readme(kind, name, modality)}


def _toml(kind: str, name: str, entry: str, modality: str, gradients: bool, params: str, what: str) -> str:
    def line(setting: str, comment: str) -> str:
        return f"{setting:<30} # {comment}" if len(setting) < 30 else f"{setting}  # {comment}"

    return "\n".join([
        "# What xaibench needs to know about this submission (docs/submissions.md).",
        "",
        "[submission]",
        line(f'name = "{name}"', "unique on a board: lower-case letters, digits and '-'"),
        line('version = "0.1.0"', "bump it when the code changes what it computes"),
        line(f'kind = "{kind}"', "explainer (explain: one map per instance) | oracle (fit, then judge)"),
        line(f'entry = "{entry}"', "<module of this folder, dotted for a sub-package>:<class>"),
        f'description = "{what}"',
        line('role = "method"', "method (ranked) | control (a floor, never ranked) | reference (a ceiling, never "
             "ranked)"),
        line('reference = ""', "the method's paper, \"Authors Year, Title, https://…\" (the site shows it)"),
        line("authors = []", "[\"Your Name <you@example.org>\"]: `xaibench submit` needs them"),
        line('license = ""', "the licence you publish the code under (an SPDX id, e.g. \"MIT\"): `submit` needs it"),
        line('code = ""', "optional: where the code lives (a link)"),
        line("requires = []", "packages beyond xaibench's own (PEP 508), e.g. [\"shap>=0.46,<0.47\"]"),
        "",
        "[capabilities]",
        line(f'modalities = ["{modality}"]', "image and/or text: the inputs it handles"),
        line(f"needs_gradients = {str(gradients).lower()}", "true: needs model.module (a white-box model)"),
        line("needs_segments = false", "true: needs batch.segments (an object segmentation)"),
        line("deterministic = true", "the same seed gives the same output (`xaibench check` checks it)"),
        line("needs_assets = []", "read-only assets it reads, e.g. [\"lexicon\"]: boards without them refuse it"),
        line("data_prior = false", "true: a control built from the data alone (a board's data-prior floor)"),
        "",
        line("[parameters]", "the constructor's keyword arguments and their defaults; --param key=value overrides"),
        *([params] if params else []),
        "",
        line("[files]", "data files the code reads, name = \"path relative to this folder\": hashed and"),
        line("", "shipped with the code; read one as Path(__file__).parent / \"path\""),
        ""])


def _readme(kind: str, name: str, modality: str) -> str:
    track = TRACKS["oracle" if kind == "oracle" else modality]
    board = track.split(" --model")[0]
    commands = [(f"xaibench check {name}/", "conformance in the sandbox"),
                (f"xaibench evaluate {name}/ {track}", "a complete Result (no --limit)"),
                (f"xaibench leaderboard {board}", "your own board"),
                (f"xaibench submit {name}/ --to hf://datasets/ORG/board --dry-run", "what would be sent"),
                (f"xaibench submit {name}/ --to hf://datasets/ORG/board", "opens the pull request")]
    width = max(len(c) for c, _ in commands) + 2
    module = "oracle" if kind == "oracle" else "explainer"
    return "\n".join([
        f"# {name}", "",
        f"An {kind} for xaibench, made by `xaibench new`. Edit `{module}.py` and `submission.toml`:",
        "docs/submissions.md says what a submission may use (modules, data files, requirements), and",
        "docs/submitting.md how it reaches a shared leaderboard. From the folder above this one:", "", "```",
        *(f"{c:<{width}}# {why}" for c, why in commands), "```", "",
        "`submit` needs `authors` and `license` in submission.toml.", ""])


_HEADER = '''"""{cls}: {line}.

Made by `xaibench new`{made}. `xaibench check .` (from the folder above) says whether it keeps the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
{imports}
if TYPE_CHECKING:  # the contract's types, for annotations only
    from benchmark.contracts import {types}{model}
'''


_MODEL = "\n    from benchmark.models.base import Model"


def _occlusion_image(cls: str) -> str:
    return _HEADER.format(cls=cls, line="occlusion — the explained output's drop when a patch is set to 0",
                          made="", imports="", types="Attributions, Batch", model=_MODEL) + f'''

class {cls}:
    """Occlusion: each pixel scores the drop of the explained output when its patch is set to 0.

    Zeiler & Fergus 2014, Visualizing and Understanding Convolutional Networks, ECCV,
    https://arxiv.org/abs/1311.2901

    Args:
        patch (int, optional): the side of the square patches, pixels. Default: 8
    """

    def __init__(self, patch: int = 8) -> None:
        self.patch = max(1, int(patch))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) map per image: one `target` and one `predict` call for the whole batch (each image
        followed by its occluded copies)."""
        images = np.asarray(batch.inputs, dtype=np.float32)
        if not len(images):
            return []
        targets = np.asarray(model.target(images)).reshape(-1)
        h, w = images.shape[1:]
        corners = [(r, c) for r in range(0, h, self.patch) for c in range(0, w, self.patch)]
        copies = np.repeat(images, len(corners) + 1, axis=0)  # image n at n * (K + 1), then its K copies
        for n in range(len(images)):
            for k, (r, c) in enumerate(corners, start=1):
                copies[n * (len(corners) + 1) + k, r : r + self.patch, c : c + self.patch] = 0.0
        out = np.asarray(model.predict(copies), dtype=np.float64).reshape(len(images), len(corners) + 1, -1)
        maps = []
        for n, target in enumerate(targets):
            heat = np.zeros((h, w), dtype=np.float32)
            for k, (r, c) in enumerate(corners, start=1):
                heat[r : r + self.patch, c : c + self.patch] = out[n, 0, target] - out[n, k, target]
            maps.append(heat)
        return maps
'''


def _deletion_text(cls: str) -> str:
    return _HEADER.format(cls=cls, line="leave-one-out — the explained class's probability drop per deleted word",
                          made="", imports="", types="Attributions, Batch", model=_MODEL) + f'''

class {cls}:
    """Leave-one-out: each word scores the drop of the explained class's probability when it is deleted.

    Li, Monroe & Jurafsky 2016, Understanding Neural Networks through Representation Erasure,
    https://arxiv.org/abs/1612.08220
    """

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One score per word of each document (an empty document: an empty array): one `target` and one
        `predict` call for the whole batch (each document followed by its variants without one word)."""
        docs = [[str(w) for w in d] for d in batch.inputs]
        todo = [d for d in docs if d]
        if not todo:
            return [np.zeros(0, dtype=np.float32) for _ in docs]
        targets = iter(np.asarray(model.target(todo)).reshape(-1))
        variants = [v for d in todo for v in [d] + [d[:j] + d[j + 1 :] for j in range(len(d))]]
        prob = iter(np.asarray(model.predict(variants), dtype=np.float64))
        scores = []
        for doc in docs:
            if not doc:
                scores.append(np.zeros(0, dtype=np.float32))
                continue
            t = int(next(targets))
            rows = [next(prob)[t] for _ in range(len(doc) + 1)]
            scores.append((rows[0] - np.array(rows[1:])).astype(np.float32))
        return scores
'''


def _oracle(cls: str) -> str:
    return _HEADER.format(cls=cls, line="trust a confident prediction", made="", imports="",
                          types="Batch, Judgement, OracleContext", model="") + f'''

class {cls}:
    """Trusts a prediction whose confidence reaches the `quantile` of the training split's confidences.

    Args:
        quantile (float, optional): which quantile of the training confidences is the threshold. Default: 0.5
    """

    def __init__(self, quantile: float = 0.5) -> None:
        self.quantile = float(quantile)
        self.threshold = 0.5

    def fit(self, context: OracleContext) -> None:
        """Once per model under test: the threshold from the training split's confidences."""
        confidence = np.asarray(context.train["confidence"], dtype=np.float64)
        if len(confidence):
            self.threshold = float(np.quantile(confidence, self.quantile))

    def judge(self, batch: Batch) -> Judgement:
        """One verdict per explained prediction (True = trustworthy), with the confidence as its score."""
        confidence = [min(max(float(x["confidence"]), 0.0), 1.0) for x in batch.inputs]
        return {{"verdicts": [c >= self.threshold for c in confidence], "scores": confidence}}
'''


def _captum_image(cls: str, method: str, spec: CaptumMethod) -> str:
    helpers = ""
    if not spec.gradient:
        helpers = '''

def forward(model: Model):
    """The model as a function of (N, 1, H, W) tensors: its torch module (white box), else its `predict`."""
    if getattr(model, "module", None) is not None:
        return model.module

    def predict(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.asarray(model.predict(x.detach().numpy()[:, 0]), dtype=np.float32))

    return predict
'''
        if any("patches(" in a for a in spec.image_args):
            helpers += '''

def patches(x: torch.Tensor, side: int) -> torch.Tensor:
    """One feature per side × side patch of (N, 1, H, W) images: the feature mask captum ablates together."""
    h, w = x.shape[-2:]
    rows, cols = torch.arange(h) // side, torch.arange(w) // side
    return (rows[:, None] * ((w + side - 1) // side) + cols[None, :]).expand(x.shape[0], 1, h, w)
'''
    model_arg = "model.module" if spec.gradient else "forward(model)"
    args = "".join(_ARGS + a for a in spec.image_args)
    return _HEADER.format(cls=cls, line=f"captum's {method} on the image", made=f" --from captum.attr.{method}",
                          imports=f"import torch\nfrom captum.attr import {method}\n",
                          types="Attributions, Batch", model=_MODEL) + helpers + f'''

class {cls}:
    """captum's `{method}` of the explained output on each image.

    Args:
        batch_size (int, optional): images per `attribute` call. Default: 16
    """

    def __init__(self, batch_size: int = 16) -> None:
        self.batch_size = max(1, int(batch_size))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) map per image."""
        images = np.asarray(batch.inputs, dtype=np.float32)
        maps: list[np.ndarray] = []
        for start in range(0, len(images), self.batch_size):
            chunk = images[start : start + self.batch_size]
            x = torch.tensor(chunk).unsqueeze(1).requires_grad_(True)  # (N, 1, H, W)
            target = [int(t) for t in np.asarray(model.target(chunk)).reshape(-1)]
            attr = {method}({model_arg}).attribute(
                x,
                target=target{args})
            maps += [np.nan_to_num(a[0].detach().numpy().astype(np.float32)) for a in attr]
        return maps
'''


def _captum_text(cls: str, method: str, spec: CaptumMethod) -> str:
    helpers = ""
    if any("words(" in a for a in spec.text_args):
        helpers = '''

def words(x: torch.Tensor) -> torch.Tensor:
    """One feature per word position of (N, L, D) embeddings: the feature mask captum ablates together."""
    return torch.arange(x.shape[1])[None, :, None].expand(x.shape[0], x.shape[1], 1)
'''
    args = "".join(_ARGS + a for a in spec.text_args)
    return _HEADER.format(cls=cls, line=f"captum's {method} at the word embeddings",
                          made=f" --from captum.attr.{method}",
                          imports=f"import torch\nfrom captum.attr import {method}\n",
                          types="Attributions, Batch", model=_MODEL) + helpers + f'''

class {cls}:
    """captum's `{method}` of the explained output at the word embeddings, summed over each word's embedding.

    Args:
        batch_size (int, optional): documents per `attribute` call. Default: 16
    """

    def __init__(self, batch_size: int = 16) -> None:
        self.batch_size = max(1, int(batch_size))

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One score per word of each document (an empty document: an empty array)."""
        docs = [[str(w) for w in d] for d in batch.inputs]
        scores = [np.zeros(len(d), dtype=np.float32) for d in docs]
        todo = [i for i, d in enumerate(docs) if d]
        for start in range(0, len(todo), self.batch_size):
            idx = todo[start : start + self.batch_size]
            chunk = [docs[i] for i in idx]
            x = model.embed(chunk).detach().float().requires_grad_(True)  # (N, L, D), padded to the longest
            target = [int(t) for t in np.asarray(model.target(chunk)).reshape(-1)]
            attr = {method}(model.embedding_module()).attribute(
                x,
                target=target,
                additional_forward_args=(model.mask(chunk),){args})
            per_word = attr.detach().double().sum(-1).numpy()
            for n, i in enumerate(idx):
                scores[i] = np.nan_to_num(per_word[n, : len(docs[i])].astype(np.float32))
        return scores
'''
