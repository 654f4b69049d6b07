"""Fine-tuning the transformer model under test (all-MiniLM-L6-v2 + a classification head,
`benchmark.models.transformer`) on word-token documents.

`train_minilm(train, validation, out_dir, config)` fine-tunes through the word-level wrapper's own input
path (`MiniLMModel.embed` → `forward_from_embeddings`: the same pieces, K-piece cut, [CLS]/[SEP] and
positions the explainers will see), keeps the epoch with the best validation accuracy, and saves the
model folder (`save_minilm`: model.safetensors, tokenizer.json, config.json with sha256, recipe, scores,
timings). Returns the saved config dict.

Recipe [I] (the papers fine-tune BERT-base for a few epochs at lr 2e-5 on a GPU): AdamW, lr 5e-5 with
linear warm-up (10 % of the steps) and linear decay, weight decay 0.01, batch 32, cross-entropy, dropout
0.1; documents cut to `max_words` words; mini-batches of documents of similar length (the training
documents sorted by piece count, cut into batches, the batch order shuffled per epoch by (seed, epoch)).
`freeze_embeddings` (default True) keeps the word-piece embedding matrix at its pretrained values — the
embedding layer explainers attribute at stays the pretrained space, and the 11.7 M-row update is the most
expensive part of a CPU step.

CPU scale (`MiniLMTrainConfig.cpu()`, the default): `max_train` = 2,000 training documents, 1 epoch,
`max_words` = 48 — minutes on two cores; `device="cuda"` with `max_train=None`, `epochs=3` is the full
scale. An interrupted run simply starts again (no checkpoint: an epoch at CPU scale is a few minutes).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from benchmark.errors import ResourceError
from benchmark.models.transformer import (DEFAULT_MAX_PIECES, TOKENIZER_FILE, MiniLMClassifier, MiniLMModel,
                                          bert_kwargs, load_tokenizer, pretrained_classifier, pretrained_path,
                                          save_minilm)
from benchmark.progress import console, progress_bar
from generators.text_trainer import length_batches, trained_config  # length_batches: batches of similar piece counts


@dataclass
class MiniLMTrainConfig:
    epochs: int = 1
    lr: float = 5e-5
    batch_size: int = 32
    max_words: int = 48  # documents cut to this many words (training and evaluation)
    max_pieces: int = DEFAULT_MAX_PIECES  # K: word pieces kept per word
    max_train: int | None = 2000  # training documents used (None: all)
    max_eval: int | None = None  # validation / test documents scored (None: all)
    weight_decay: float = 0.01
    warmup: float = 0.1
    pooling: str = "mean"
    dropout: float = 0.1
    freeze_embeddings: bool = True
    seed: int = 0
    device: str = "cpu"
    threads: int | None = None

    @classmethod
    def cpu(cls, **overrides) -> "MiniLMTrainConfig":
        """The reduced CPU scale (the defaults)."""
        return cls(**overrides)

    @classmethod
    def full(cls, **overrides) -> "MiniLMTrainConfig":
        """The full scale for a GPU: every training document, 3 epochs."""
        return cls(**{"epochs": 3, "max_train": None, "max_words": 128, "device": "cuda", **overrides})


def _key(docs: Sequence[Sequence[str]], labels: Sequence[int] | np.ndarray) -> str:
    h = hashlib.sha256()
    for d, y in zip(docs, labels):
        h.update((" ".join(d) + f"\t{int(y)}\n").encode())
    return h.hexdigest()[:16]


def evaluate(wrapper: MiniLMModel, docs: Sequence[Sequence[str]], labels: np.ndarray) -> float:
    """Accuracy of `wrapper.predict` on (docs, labels)."""
    if len(docs) == 0:
        return float("nan")
    wrapper.module.eval()
    return float((wrapper.predict(list(docs)).argmax(1) == labels).mean())


Docs = Sequence[Sequence[str]]


def _cut(data: tuple[Docs, Sequence[int]], cut: int, limit: int | None) -> tuple[list[list[str]], np.ndarray]:
    """Documents cut to `cut` words and their labels, the first `limit` of them (None: all)."""
    x = [list(d)[:cut] for d in data[0]]
    y = np.asarray(data[1], dtype=np.int64)
    if limit is not None:
        x, y = x[:limit], y[:limit]
    return x, y


def _training_data(train: tuple[Docs, Sequence[int]], validation: tuple[Docs, Sequence[int]],
                   cfg: MiniLMTrainConfig, n_classes: int
                   ) -> tuple[list[list[str]], np.ndarray, list[list[str]], np.ndarray]:
    """(xtr, ytr, xva, yva): cut, capped, empty training documents dropped; every class must be present."""
    xtr, ytr = _cut(train, cfg.max_words, cfg.max_train)
    keep = [i for i, d in enumerate(xtr) if d]
    xtr, ytr = [xtr[i] for i in keep], ytr[keep]
    xva, yva = _cut(validation, cfg.max_words, cfg.max_eval)
    if not xtr or not xva:
        raise ResourceError("training and validation sets must both be non-empty")
    missing = sorted(set(range(n_classes)) - set(ytr.tolist()))
    if missing:
        raise ResourceError(f"class(es) {missing} have no training documents; cannot train a classifier")
    return xtr, ytr, xva, yva


def _already_trained(cfg_path: Path, key: dict, name: str) -> dict | None:
    """The saved config when the folder holds a model trained on the same data and recipe, else None."""
    existing = trained_config(cfg_path, key)
    if existing is not None:
        console.print(f"[green]{name}: already trained on this corpus (overwrite to retrain)")
    return existing


@dataclass
class _FineTune:
    """The model being fine-tuned, its wrapper and optimiser, and the training data."""

    module: MiniLMClassifier
    kwargs: dict
    wrapper: MiniLMModel
    params: list[torch.nn.Parameter]
    opt: torch.optim.Optimizer
    sched: torch.optim.lr_scheduler.LRScheduler
    device: torch.device
    piece_stats: dict
    xtr: list[list[str]]
    ytr: np.ndarray


def _start(cfg: MiniLMTrainConfig, n_classes: int, name: str,
           init: Callable[[], tuple[MiniLMClassifier, dict]] | None,
           xtr: list[list[str]], ytr: np.ndarray, xva: list[list[str]]) -> _FineTune:
    """Seed, build the model (pretrained or `init`), its wrapper, AdamW and the warm-up/decay schedule."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = torch.device(cfg.device)
    torch.manual_seed(cfg.seed)
    if init is None:
        module = pretrained_classifier(n_classes, pooling=cfg.pooling, dropout=cfg.dropout)
        kwargs = {"bert": bert_kwargs(), "n_classes": n_classes, "pooling": cfg.pooling, "dropout": cfg.dropout}
    else:
        module, kwargs = init()
    module.to(device)
    tokenizer = load_tokenizer(pretrained_path() / TOKENIZER_FILE)
    wrapper = MiniLMModel(module, tokenizer, name=name, n_outputs=n_classes, max_pieces=cfg.max_pieces,
                          batch_size=64)
    stats = wrapper.piece_stats(xtr + xva)
    if cfg.freeze_embeddings:
        module.word_embeddings.weight.requires_grad_(False)
    params = [p for p in module.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() > 1]
    no_decay = [p for p in params if p.dim() <= 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
    n_batches = math.ceil(len(xtr) / cfg.batch_size)
    total_steps = max(1, n_batches * cfg.epochs)
    warm = max(1, int(cfg.warmup * total_steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total_steps - s) / max(1, total_steps - warm))))
    return _FineTune(module, kwargs, wrapper, params, opt, sched, device, stats, xtr, ytr)


def _train_epoch(ft: _FineTune, batches: list, loss_fn: nn.Module, label: str) -> float:
    """One pass over `batches` (index arrays into the training set); returns the summed loss."""
    ft.module.train()
    total = 0.0
    with progress_bar(len(batches), label, unit="batch") as bar:
        for idx in batches:
            docs = [ft.xtr[i] for i in idx]
            ids, mask = ft.wrapper.layout(docs)
            emb = ft.wrapper._embed_ids(ids)
            logits = ft.module.forward_embedded(emb, torch.from_numpy(mask).to(ft.device))
            loss = loss_fn(logits, torch.from_numpy(ft.ytr[idx]).to(ft.device))
            ft.opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(ft.params, 1.0)
            ft.opt.step()
            ft.sched.step()
            total += loss.item() * len(idx)
            bar.advance()
    return total


def _fit(ft: _FineTune, cfg: MiniLMTrainConfig, name: str, xva: list[list[str]], yva: np.ndarray
         ) -> tuple[float, list[dict], float]:
    """Train `cfg.epochs` epochs and load the best-validation weights: (best accuracy, history, train seconds)."""
    sizes = np.array([ft.wrapper.piece_stats([d])["pieces"] for d in ft.xtr])
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    train_seconds = 0.0
    best, best_state, history = -1.0, None, []
    for epoch in range(cfg.epochs):
        t_epoch = time.perf_counter()
        batches = length_batches(sizes, cfg.batch_size, np.random.default_rng([cfg.seed, epoch]))
        total = _train_epoch(ft, batches, loss_fn, f"fine-tune {name} epoch {epoch + 1}/{cfg.epochs}")
        train_seconds += time.perf_counter() - t_epoch
        val = evaluate(ft.wrapper, xva, yva)
        history.append({"epoch": epoch + 1, "train_loss": total / len(ft.xtr), "validation_accuracy": val,
                        "seconds": round(time.perf_counter() - t0, 1)})
        console.print(f"  {name} epoch {epoch + 1}: train loss {total / len(ft.xtr):.4f}, "
                      f"validation accuracy {val:.4f}")
        if val > best:
            best = val
            best_state = {k: v.detach().clone() for k, v in ft.module.state_dict().items()}
    assert best_state is not None  # epochs ≥ 1, and an accuracy ≥ 0 beats the start's −1
    ft.module.load_state_dict(best_state)
    ft.module.eval()
    return best, history, train_seconds


def train_minilm(train: tuple[Sequence[Sequence[str]], Sequence[int]],
                 validation: tuple[Sequence[Sequence[str]], Sequence[int]],
                 out_dir: Path | str, config: MiniLMTrainConfig | None = None, *, n_classes: int = 2,
                 test: tuple[Sequence[Sequence[str]], Sequence[int]] | None = None, overwrite: bool = False,
                 name: str = "minilm", init: Callable[[], tuple[MiniLMClassifier, dict]] | None = None) -> dict:
    """Fine-tune all-MiniLM-L6-v2 on (token lists, labels) and save it to `out_dir` (module docstring).
    An existing model trained on the same data with the same recipe is reused unless `overwrite`.
    `init` (tests) returns the starting (module, architecture kwargs) instead of the pretrained MiniLM."""
    cfg = config or MiniLMTrainConfig()
    out_dir = Path(out_dir)
    xtr, ytr, xva, yva = _training_data(train, validation, cfg, n_classes)
    key = {"train": _key(xtr, ytr), "validation": _key(xva, yva), "recipe": asdict(cfg)}
    cfg_path = out_dir / "config.json"
    if not overwrite:
        existing = _already_trained(cfg_path, key, name)
        if existing is not None:
            return existing

    ft = _start(cfg, n_classes, name, init, xtr, ytr, xva)
    best, history, train_seconds = _fit(ft, cfg, name, xva, yva)
    scores = {"validation_accuracy": best,
              "best_epoch": 1 + int(np.argmax([h["validation_accuracy"] for h in history])),
              "n_validation": len(xva)}
    if test is not None:
        xte, yte = _cut(test, cfg.max_words, cfg.max_eval)
        scores["test_accuracy"] = evaluate(ft.wrapper, xte, yte)
        scores["n_test"] = len(xte)
    ft.module.to("cpu")
    extra = {"recipe": asdict(cfg), "scores": scores, "history": history, "piece_stats": ft.piece_stats,
             "train_seconds": round(train_seconds, 1), "n_train": len(xtr), "training_key": key,
             "max_words": cfg.max_words}
    save_minilm(ft.module, out_dir, ft.kwargs, max_pieces=cfg.max_pieces, extra=extra)
    return json.loads(cfg_path.read_text())
