"""Training the AIXI CNN per (dataset, function) (SPECS §3.5; recipe [I]).

Adam (lr 1e-3), batch 64, MSE (SSIN, SUUM) or binary cross-entropy on the sigmoid output (Class),
up to `epochs` epochs, the best validation epoch kept (early stopping after `patience` epochs
without improvement). The weights go to the resource's `model/<config>/` folder (safetensors +
config.json with the architecture, the recipe and the validation scores) and the config's
provenance records the model. A checkpoint after every epoch makes an interrupted training resume.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from rich.markup import escape
from torch import nn

from benchmark import allocator
from benchmark.errors import ResourceError
from benchmark.models.architectures import AixiCNN
from benchmark.models.base import load_model, save_model
from benchmark.progress import console, progress_bar
from benchmark.resources import load_resource
from benchmark.resources.aixi_schema import decode_split
from benchmark.resources.store import update_config_meta
from benchmark.tracks.aixi import model_quality


@dataclass
class TrainConfig:
    epochs: int = 30  # [I] SPECS §3.5: up to 30 epochs
    batch_size: int = 64
    micro_batch: int = 16  # gradients of a batch accumulated over micro-batches: same update, 2x faster
    lr: float = 1e-3
    patience: int = 5
    seed: int = 0
    max_train: int | None = None  # use only the first N training images
    threads: int | None = None
    # [I] "onecycle": torch's OneCycleLR over all epochs (warm-up to `lr`, cosine annealing to ~0);
    # "constant": Adam at `lr` throughout (the recipe before issue #12)
    schedule: str = "constant"
    # start the output layer's bias at the training labels' mean (regression) / base-rate logit (Class)
    init_output_bias: bool = False


def _load_split(resource, split: str, limit: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Images as uint8 (N, 1, H, W) (decoded in chunks) and labels (N,)."""
    table = resource.table(split, columns=["image", "label"])
    if limit is not None:
        table = table.slice(0, limit)
    images, labels = [], []
    for s in range(0, table.num_rows, 2000):
        d = decode_split(table.slice(s, 2000), columns=("image", "label"))
        images.append(np.rint(d["images"] * 255).astype(np.uint8)[:, None])
        labels.append(d["labels"])
    return np.concatenate(images), np.concatenate(labels).astype(np.float32)


def _evaluate(model: nn.Module, x: np.ndarray, y: np.ndarray, classification: bool, bs: int = 16) -> dict:
    model.eval()
    preds = []
    with torch.no_grad():
        for s in range(0, len(x), bs):
            preds.append(model(torch.from_numpy(x[s : s + bs]).float() / 255).squeeze(1).numpy())
    p = np.concatenate(preds)
    if classification:
        eps = 1e-7
        bce = float(-np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))
        return {"loss": bce, "accuracy": float(np.mean((p >= 0.5) == (y >= 0.5))), "n": int(len(y))}
    mse = float(np.mean((p - y) ** 2))
    ss = float(np.sum((y - y.mean()) ** 2)) or 1.0
    return {"loss": mse, "mse": mse, "r2": float(1 - np.sum((p - y) ** 2) / ss), "n": int(len(y))}


def train_aixi(resource_name: str, config: TrainConfig | None = None, *, overwrite: bool = False) -> dict:
    """Train the CNN for resource `aixi/<dataset>-<function>`; returns the validation scores."""
    cfg = config or TrainConfig()
    res = load_resource(resource_name)
    out_dir = res.model_dir()
    if (out_dir / "config.json").exists() and not overwrite:
        try:  # a damaged model is not "already trained": it is trained again
            _, existing = load_model(out_dir)
        except ResourceError as exc:
            console.print(f"[yellow]{resource_name}: the existing model is damaged, training it again[/] "
                          f"({escape(str(exc))})")
            existing = {}
        if existing.get("resource_revision") == res.revision:
            console.print(f"[green]{resource_name}: model already trained (use --overwrite to retrain)")
            return existing["validation"]
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    allocator.tune()
    classification = res.config.endswith("-class")
    xtr, ytr = _load_split(res, "train", cfg.max_train)
    xva, yva = _load_split(res, "validation", None)
    size = xtr.shape[-1]
    torch.manual_seed(cfg.seed)
    model = AixiCNN(size=size, classification=classification)
    if cfg.schedule not in ("constant", "onecycle"):
        raise ResourceError(f"schedule must be 'constant' or 'onecycle', got {cfg.schedule!r}")
    if cfg.init_output_bias:
        with torch.no_grad():
            m = float(np.mean(ytr))
            model.fc3.bias.fill_(float(np.log(max(m, 1e-3) / max(1 - m, 1e-3))) if classification else m)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    loss_fn = nn.BCELoss() if classification else nn.MSELoss()
    n_batches = (len(xtr) + cfg.batch_size - 1) // cfg.batch_size
    sched = (torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=cfg.epochs * n_batches)
             if cfg.schedule == "onecycle" else None)

    ckpt = out_dir / "checkpoint.pt"
    state = {"epoch": 0, "best": None, "best_epoch": -1, "history": []}
    if ckpt.exists() and not overwrite:
        saved = torch.load(ckpt, weights_only=False)
        if saved.get("revision") == res.revision and saved.get("config") == asdict(cfg):
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["opt"])
            if sched is not None and saved.get("sched"):
                sched.load_state_dict(saved["sched"])
            state = saved["state"]
            torch.set_rng_state(saved["torch_rng"])
            console.print(f"resuming {resource_name} training at epoch {state['epoch'] + 1}")
    best_weights = state.get("best_weights") or {k: v.clone() for k, v in model.state_dict().items()}
    t0 = time.perf_counter()
    for epoch in range(state["epoch"], cfg.epochs):
        # the permutation depends only on (seed, epoch), so a resumed run sees the same batches
        perm = np.random.default_rng([cfg.seed, epoch]).permutation(len(xtr))
        model.train()
        total = 0.0
        with progress_bar(n_batches, f"train {res.config} epoch {epoch + 1}/{cfg.epochs}", unit="batch") as bar:
            for b in range(n_batches):
                idx = perm[b * cfg.batch_size : (b + 1) * cfg.batch_size]
                opt.zero_grad()
                for mb in range(0, len(idx), cfg.micro_batch):
                    sub = idx[mb : mb + cfg.micro_batch]
                    xb = torch.from_numpy(xtr[sub]).float() / 255
                    yb = torch.from_numpy(ytr[sub])[:, None]
                    # the batch mean as a sum of micro-batch parts: identical gradient to one pass
                    loss = loss_fn(model(xb), yb) * (len(sub) / len(idx))
                    loss.backward()
                    total += loss.item() * len(idx)
                opt.step()
                if sched is not None:
                    sched.step()
                bar.advance()
        val = _evaluate(model, xva, yva, classification)
        state["history"].append({"epoch": epoch + 1, "train_loss": total / len(xtr), **val})
        if state["best"] is None or val["loss"] < state["best"]["loss"]:
            state["best"], state["best_epoch"] = val, epoch + 1
            best_weights = {k: v.clone() for k, v in model.state_dict().items()}
        console.print(f"  epoch {epoch + 1}: train loss {total / len(xtr):.5f}, validation "
                      + ", ".join(f"{k} {v:.4f}" for k, v in val.items() if k != "n"))
        state["epoch"] = epoch + 1
        state["best_weights"] = best_weights
        out_dir.mkdir(parents=True, exist_ok=True)
        torch.save({"revision": res.revision, "config": asdict(cfg), "model": model.state_dict(),
                    "opt": opt.state_dict(), "state": state,
                    "sched": sched.state_dict() if sched is not None else None,
                    "torch_rng": torch.get_rng_state()}, ckpt.with_suffix(".tmp"))
        ckpt.with_suffix(".tmp").replace(ckpt)
        if epoch + 1 - state["best_epoch"] >= cfg.patience:
            break
    model.load_state_dict(best_weights)
    validation = {**state["best"], "best_epoch": state["best_epoch"]}
    q = model_quality(validation)
    if q and not q["meets_floor"]:
        console.print(f"[yellow]{resource_name}: validation {q['metric']} {q['value']:.3f} is below the quality "
                      f"floor {q['floor']}: the CNN has not learned its function; results on it are marked[/]")
    save_model(model, out_dir, "aixi-cnn", {"size": size, "classification": classification},
               extra={"task": "binary" if classification else "regression", "validation": validation,
                      "quality": q,
                      "recipe": asdict(cfg), "resource_revision": res.revision,
                      "history": state["history"], "train_seconds": round(time.perf_counter() - t0, 1)})
    ckpt.unlink(missing_ok=True)
    update_config_meta(res.root, res.config, model={"architecture": "aixi-cnn", "validation": validation,
                                                     "quality": q, "recipe": asdict(cfg)})
    return validation
