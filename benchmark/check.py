"""`xaibench check PATH`: what a third party runs before submitting (issues: isolation, run invariance).

Validates `submission.toml`, then runs the submission in the same sandboxed worker the harness uses
(`benchmark.isolation`) on tiny built-in data of each modality it declares — 16 drawn 32×32 images
(objects of three patterns) or 16 short texts — with small random-weight models of every kind the
tracks serve (a white-box CNN loaded from a model folder, the harness-served function model; a
word-level Kim CNN, a HAN with word attention, and a black-box text model). Checks, per model:

* **outputs** — one finite float array of the instance's shape (H×W, or one score per word) each;
* **deterministic** — a fresh worker with the same seed gives identical outputs (first 8 instances);
* **batch invariant** — batch sizes 7 and 16 (all 16 instances) and 1 (the first 8) give the same
  outputs (relative 1e-3, absolute 1e-4 of the map's scale), so an instance's explanation never
  depends on its batch companions;
* **ground truth** — by construction: the worker is handed ids, inputs, a segmentation and a seed.

Oracles (`kind = "oracle"`) get the same checks on the word-level Kim CNN: `fit` on the 16 texts as a
training split, then `judge` on them as explained predictions (word-deletion scores); outputs = one
[verdict, score] pair each (the trust track's output shape).

A `[parameters]` key the entry class's constructor does not accept (`**kwargs` followed through the
bases, `benchmark.submission.accepted_parameters`), an unknown `role`, a module that does not compile or
takes a harness module's name, a requirement that is not installed here (`benchmark.submission.requirements`) and
a package that fails to import or construct (a file `[files]` does not declare is named with the fix) fail
the check with one line (the last two at the first worker start: the code is imported only there).

A model the submission cannot use (capabilities, or its own `unsupported(model)`) is skipped with the
reason. Everything runs offline in well under a minute for the built-in explainers.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from benchmark.errors import ParameterError, SubmissionError, SubmissionImportError, XaibenchError
from benchmark.isolation import Worker, WorkerConfig, WorkerCrash
from benchmark.models.spec import ModelSpec
from benchmark.submission.requirements import check_installed
from benchmark.submission import Submission, load_submission

SIZE, N = 32, 16
BATCH_SIZES = (16, 7, 1)
TEXTS = ["a gripping and funny film !", "dull and slow , the plot is bad", "the cast shines but the plot is thin",
         "good good fun film", "bad acting and a dull script .", "an honest , moving story", "not funny at all",
         "the best film of the year", "i wanted to leave after ten minutes", "slow but worth it",
         "a mess", "charming , warm and clever", "the plot makes no sense", "great music , weak story",
         "never again", "one of the finest performances"]


@dataclass
class Row:
    """One line of the check's report: which check on which model, passed (True), failed (False) or
    skipped (None), and why."""

    check: str
    model: str
    ok: bool | None  # None: skipped
    detail: str


def draw_images(n: int = N, size: int = SIZE, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """n images of 2–4 non-touching objects (circle, square, cross) → images, object maps, patterns."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    images = np.zeros((n, size, size), np.float32)
    objects = np.zeros((n, size, size), np.int32)
    patterns = []
    cells = [(cy, cx) for cy in (6, 16, 26) for cx in (6, 16, 26)]
    for i in range(n):
        k = int(rng.integers(2, 5))
        pats = rng.integers(0, 3, size=k)
        value = float(rng.choice([0.6, 0.8, 1.0]))
        for j, c in enumerate(rng.choice(len(cells), size=k, replace=False), start=1):
            cy, cx = cells[c]
            dy, dx = yy - cy, xx - cx
            m = [dy**2 + dx**2 <= 9, (abs(dy) <= 3) & (abs(dx) <= 3),
                 ((abs(dy) <= 3) & (abs(dx) <= 1)) | ((abs(dx) <= 3) & (abs(dy) <= 1))][pats[j - 1]]
            images[i][m], objects[i][m] = value, j
        patterns.append(pats.astype(np.int64))
    return images, objects, patterns


def image_models(folder: Path, images: np.ndarray, objects: np.ndarray, patterns: list[np.ndarray],
                 ids: list[str]) -> list[ModelSpec]:
    """The image models checked (`draw_images`' data): a random-weight white-box AIXI CNN saved under
    `folder`, and the harness-served shape function model (black box, per instance)."""
    import torch

    from benchmark.models.aixi_function import FunctionModel, Reference, get_function
    from benchmark.models.architectures import AixiCNN
    from benchmark.models.base import save_model

    with torch.random.fork_rng():
        torch.manual_seed(0)
        cnn = AixiCNN(size=SIZE)
    save_model(cnn, folder / "cnn", "aixi-cnn", {"size": SIZE}, extra={"task": "regression"})
    refs = {i: Reference(images[n], objects[n], patterns[n]) for n, i in enumerate(ids)}
    function = FunctionModel(get_function("ssin"), "shape", refs)
    return [ModelSpec("cnn", "image", True, loader="image", directory=folder / "cnn"),
            ModelSpec("function", "image", False, served=function, per_instance=True)]


def text_models(folder: Path, docs: list[list[str]]) -> list[ModelSpec]:
    """The text models checked: a random-weight word-level Kim CNN and a HAN with word attention over
    the vocabulary of `docs`, saved under `folder` (white box)."""
    import torch

    from benchmark.models.base import save_model
    from benchmark.models.text import KimCNN, WordAttention, build_vocab

    vocab = build_vocab(docs)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        cnn = KimCNN(len(vocab), max_len=16, embed_dim=16, filters=6)
        han = WordAttention(len(vocab), embed_dim=16, hidden=8)
    extra = {"vocab": vocab, "n_classes": 2, "task": "binary"}
    save_model(cnn, folder / "kim-cnn", "kim-cnn", {"vocab_size": len(vocab), "max_len": 16, "embed_dim": 16,
                                                   "filters": 6}, extra={**extra, "max_len": 16})
    save_model(han, folder / "han", "word-attention", {"vocab_size": len(vocab), "embed_dim": 16, "hidden": 8},
               extra=extra)
    return [ModelSpec("kim-cnn", "text", True, loader="word", directory=folder / "kim-cnn"),
            ModelSpec("han", "text", True, loader="word", directory=folder / "han")]


def _same(a: list, b: list) -> str:
    """'' when every output of `a` equals `b`'s (relative 1e-3, absolute 1e-4 × scale), else the first
    difference."""
    for x, y in zip(a, b):
        if x.ok != y.ok:
            return f"{x.instance}: failed in one run only ({x.reason or y.reason})"
        if x.ok:
            scale = float(np.abs(x.array).max()) + 1e-12
            if not np.allclose(x.array, y.array, rtol=1e-3, atol=1e-4 * scale):
                return f"{x.instance}: max difference {float(np.abs(x.array - y.array).max()):.3g}"
    return ""


def check_submission(path: str | Path, sandbox: str = "auto", timeout: float = 60.0,
                     environment: Path | None = None) -> tuple[Submission, list[Row]]:
    """Run the checks of the module docstring; returns the submission and one row per check. `environment`:
    a folder of the submission's own packages (`benchmark.submission.environments`), else its requirements must be
    installed here."""
    sub = load_submission(path)
    if sub.kind not in ("explainer", "oracle"):
        raise SubmissionError(f"{sub.name} is an {sub.kind}; `xaibench check` checks explainers and oracles")
    sub.precheck()
    check_installed(sub.name, sub.requires, environment)
    config = WorkerConfig(sandbox=sandbox, environment=environment)
    rows: list[Row] = [Row("submission.toml", "-", True, f"{sub.name} {sub.version}: {', '.join(sub.modalities)}")]
    with tempfile.TemporaryDirectory(prefix="xaibench-check-") as tmp:
        if sub.kind == "oracle":
            if "text" not in sub.modalities:
                return sub, rows + [Row("applicable", "-", None, "oracles are checked on text (the trust track)")]
            for spec in text_models(Path(tmp), [t.split() for t in TEXTS])[:1]:
                rows += _check_oracle(sub, spec, config, timeout)
            return sub, rows
        for modality in sub.modalities:
            ids = [f"{modality}-{k:02d}" for k in range(N)]
            inputs: np.ndarray | list[list[str]]
            segments: np.ndarray | None
            shapes: list[tuple[int, ...]]
            if modality == "image":
                images, objects, patterns = draw_images()
                specs = image_models(Path(tmp), images, objects, patterns, ids)
                inputs, segments, shapes = images, objects, [(SIZE, SIZE)] * N
            else:
                docs = [t.split() for t in TEXTS]
                inputs, segments, shapes = docs, None, [(len(d),) for d in docs]
                specs = text_models(Path(tmp), docs)
            for spec in specs:
                rows += _check_model(sub, spec, ids, inputs, segments, shapes, config, timeout)
    return sub, rows


def oracle_data(spec: ModelSpec) -> tuple[dict, list[dict]]:
    """A `fit` message and judge inputs for an oracle check: the 16 texts as a training split (labels
    = the model's predictions, except every fourth) and as explained predictions (each word scored by
    how much deleting it lowers the predicted class's probability — one batched predict call)."""
    model = spec.load()
    docs = [t.split() for t in TEXTS]
    prob = model.predict(docs)
    pred = prob.argmax(1)
    train = {"tokens": docs, "text": list(TEXTS), "label": [int(p if k % 4 else 1 - p) for k, p in enumerate(pred)],
             "prediction": [int(p) for p in pred], "confidence": [float(c) for c in prob.max(1)]}
    variants = [d[:j] + d[j + 1 :] for d in docs for j in range(len(d))]
    drop = model.predict(variants)
    items, k = [], 0
    for n, d in enumerate(docs):
        scores = [float(prob[n, pred[n]] - drop[k + j, pred[n]]) for j in range(len(d))]
        k += len(d)
        items.append({"tokens": d, "text": TEXTS[n], "prediction": int(pred[n]),
                      "class_name": ("negative", "positive")[pred[n]], "confidence": float(prob[n].max()),
                      "explanation_words": d, "explanation_scores": scores})
    fit = {"train": train, "class_names": ["negative", "positive"], "explainer": {"name": "lime-text",
                                                                                  "parameters": {"num_samples": 200}}}
    return fit, items


def _check_oracle(sub, spec, config: WorkerConfig, timeout) -> list[Row]:
    """The explainer checks, for judgements: one [verdict, score] pair each (the trust track's output),
    deterministic, batch invariant; `fit` on a tiny training split first (the trust track's assets —
    embeddings, WordNet — when built here)."""
    from benchmark.tracks.trust import OUTPUT_SHAPE, TrustTrack

    fit, items = oracle_data(spec)
    config = replace(config, assets=TrustTrack().assets(None), fit_timeout_s=max(timeout, 1.0) * N)
    return _check_model(sub, spec, [f"text-{k:02d}" for k in range(N)], items, None, [OUTPUT_SHAPE] * N, config,
                        timeout, fit={**fit, "seed": 0})


def _check_model(sub, spec, ids, inputs, segments, shapes, config: WorkerConfig, timeout,
                 fit: dict | None = None) -> list[Row]:
    why = sub.supports(spec.modality, spec.white_box, segments is not None, config.assets)
    if why:
        return [Row("applicable", spec.name, None, why)]
    runs = {}
    half = len(ids) // 2  # batch 1 and the fresh worker: the first half is enough to compare
    try:
        for label, plan in (("first", ((16, len(ids)), (7, len(ids)), (1, half))), ("fresh worker", ((16, half),))):
            with Worker(sub, {}, spec, config, fit=fit) as worker:
                refused = worker.start()
                if refused:
                    return [Row("applicable", spec.name, None, f"the submission refuses it: {refused}")]
                for bs, n in plan:
                    t0 = time.perf_counter()
                    seg = None if segments is None else segments[:n]
                    runs[(label, bs)] = (worker.explain_all(ids[:n], inputs[:n], seg, shapes[:n], bs, 0, timeout),
                                         (time.perf_counter() - t0) / n)
    except (ParameterError, SubmissionImportError):  # the same for every model: one line, not a row per model
        raise
    except (WorkerCrash, XaibenchError) as exc:
        return [Row("runs", spec.name, False, str(getattr(exc, "reason", exc))[:300])]
    base, per = runs[("first", 16)]
    bad = [e for e in base if not e.ok]
    rows = [Row("outputs", spec.name, not bad,
                f"{len(base) - len(bad)}/{len(base)} valid, {per * 1000:.0f} ms per instance"
                + (f"; {bad[0].instance}: {bad[0].reason}" if bad else ""))]
    diff = _same(base, runs[("fresh worker", 16)][0])
    rows.append(Row("deterministic", spec.name, not diff, diff or "same seed, fresh worker: identical"))
    diffs = {bs: _same(base, runs[("first", bs)][0]) for bs in BATCH_SIZES[1:]}
    worst = next((f"batch {bs}: {d}" for bs, d in diffs.items() if d), "")
    rows.append(Row("batch invariant", spec.name, not worst, worst or "batch sizes 1, 7, 16 agree"))
    return rows
