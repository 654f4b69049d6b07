"""Training the RCNN rationale model, one model per aspect (SPECS §4.3; taolei87/rcnn@7c45f49
`code/rationale/rationale.py`, `options.py`).

Objective (per review x with rating y_a; z sampled once per review from the generator, z_t ~ Bernoulli(p_t)):

    ℓ(x, z)   = (ŷ_a(x, z) − y_a)²
    Ω(x, z)   = ℓ(x, z) + λ_s Σ_t z_t + λ_c Σ_t |z_t − z_{t−1}|        λ_s = 3e-4, λ_c = 3e-4 × 2.0 = 6e-4
    encoder   : 10 · mean_batch ℓ + λ_L2 ‖θ_enc‖²
    generator : 10 · mean_batch [ Ω(x, z) · Σ_t log p(z_t | x) ] + λ_L2 ‖θ_gen‖²   (REINFORCE: Ω is a
                constant, one sample, no baseline)

Both modules are updated on every mini-batch from the same z; one Adam over both parameter lists is
the same update as Lei's two Adams (Adam is per parameter). Padding is excluded from Σ z_t, from
|z_t − z_{t−1}| (pairs of real tokens only) and from log p [I].

Defaults [R]: hidden 200, order 2, encoder depth 2, dropout 0.1, Adam lr 5e-4 (β 0.9/0.999, ε 1e-8), no
clipping, L2 1e-6, batch 256, ≤ 100 epochs, dev evaluation once per epoch, keep the best dev epoch and stop
after 10 epochs without improvement, init uniform(±0.05), frozen 200-d embeddings, batches = reviews
sorted by length cut into chunks of 256, chunk order shuffled every epoch (seed 5817).

Dev criterion (`select_on`): Lei keeps the epoch with the best dev *objective* (mean Ω: MSE plus the
selection costs) and so prefers the sparser of two equally accurate models; `"mse"` keeps the best dev MSE;
`"leakage"` [I] (issue #29) the dev predictions that follow the other four ratings least beyond the
aspect's own (`leakage`: a model reading the aspect's words, not its correlates).
Dev evaluation uses the deterministic selection z_t = [p_t ≥ 0.5] — the model the verification uses —
(`dev_selection="sampled"` evaluates with sampled z as Lei does).

Speed: the encoder runs over the *selected* tokens only (`RCNNRationale.encode` compacts them; the same
function, as a masked position carries the state), so its cost falls with the selection rate; the generator
reads every token. A checkpoint after every epoch (model, optimiser, RNG states, history, best weights)
makes an interrupted run resume where it stopped; `max_seconds` ends a run early (after the current batch),
evaluated and saved like a finished one.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from benchmark.models.rcnn import RCNNRationale, generator_log_prob, save_rcnn
from benchmark.progress import console, progress_bar
from generators.rcnn.data import BeerData, Reviews, aspect_index, aspect_name, load_beer
from generators.rcnn.vectors import WordVectors, get_vectors
from generators.text_trainer import length_batches

SELECT_ON = ("objective", "mse", "leakage")
DEV_SELECTION = ("deterministic", "sampled")
BASELINES = ("none", "batch")


@dataclass
class RCNNTrainConfig:
    aspect: str = "appearance"
    hidden: int = 200
    order: int = 2
    depth: int = 2
    dropout: float = 0.1
    lr: float = 5e-4
    l2: float = 1e-6
    sparsity: float = 3e-4  # λ_s
    coherent: float = 2.0  # λ_c = sparsity × coherent
    cost_scale: float = 10.0  # the ×10 of both costs
    batch_size: int = 256
    max_epochs: int = 100
    patience: int = 10  # stop after this many epochs without dev improvement
    select_on: str = "objective"
    dev_selection: str = "deterministic"
    threshold: float = 0.5  # deterministic selection p ≥ threshold
    seed: int = 0  # initialisation, dropout and z sampling
    batch_seed: int = 5817  # batch-order shuffling (Lei's seed)
    max_train: int | None = None  # first N training reviews only
    max_seconds: float | None = None  # wall-clock budget of one call
    threads: int | None = None
    device: str = "auto"  # "auto" (CUDA when available) | "cpu" | "cuda" | "cuda:k"; not part of the recipe key
    # issue #12 (aroma / palate collapse to empty selections with the quick recipe):
    # start generator and encoder from another aspect's trained RCNN (a model folder written by
    # `save_rcnn`, e.g. the appearance model): same hidden / order / depth; the embedding is this run's
    init_from: str | None = None
    # the selection costs λ_s, λ_c ramp linearly from 0 to their value over the first N epochs, so the
    # generator learns which words predict the rating before sparsity pushes the selection towards ∅
    sparsity_warmup: int = 0
    # the first N epochs train the encoder alone on every token (z = all ones, no generator update), so
    # that selecting a word can lower the loss once the generator starts; without it the aroma / palate
    # encoders of the quick recipe stay at the mean rating while the selection cost empties z
    encoder_warmup: int = 0
    # [I] issue #29: a target selection rate α. None = Lei's sparsity cost λ_s Σ_t z_t; a float = the cost
    # λ_s |Σ_t z_t − α |x|| (tokens away from selecting the share α of the review), the "sparsity target" of
    # later rationale models (Chang et al. 2019, Yu et al. 2019). Lei's cost settles where the last selected
    # word is worth λ_s of MSE, which on the mirror's 5,400 training reviews is 2–3 % of the tokens
    sparsity_target: float | None = None
    # [I] issue #29: "none" = Lei's REINFORCE (Ω itself weighs Σ log p); "batch" = Ω minus its batch mean
    # (a baseline: the same expected gradient up to O(1/B), far less variance)
    baseline: str = "none"
    # [I] issue #29: (lo, hi) = only an epoch whose dev selection rate lies in [lo, hi] is kept while one
    # exists (the best dev criterion among them); before the first such epoch the one nearest to the band
    # is held, and patience does not run out. None = Lei (the best dev criterion of any epoch)
    keep_band: tuple[float, float] | None = None
    # [I] issue #29: the first N epochs are never kept (in one quick run epoch 1 selected 11 % of the dev
    # tokens before the generator had learnt anything, 61 % of them inside the human rationales)
    min_epoch: int = 0

    @property
    def lambda_s(self) -> float:
        return self.sparsity

    @property
    def lambda_c(self) -> float:
        return self.sparsity * self.coherent

    def cost_factor(self, epoch: int) -> float:
        """The share of λ_s and λ_c applied in (0-based) `epoch`: (e + 1) / (sparsity_warmup + 1) during
        the warm-up, 1 after it; e counts the epochs after the encoder warm-up."""
        epoch = max(0, epoch - self.encoder_warmup)  # the ramp starts with the generator's first epoch
        return min(1.0, (epoch + 1) / (self.sparsity_warmup + 1)) if self.sparsity_warmup > 0 else 1.0

    def epoch_key(self, dev: dict[str, float]) -> tuple[float, float]:
        """What the kept epoch minimises: (distance of the dev selection rate from `keep_band`, 0 without
        one; the dev criterion, `select_on`)."""
        crit = dev[self.select_on]
        crit = float("inf") if crit is None or not np.isfinite(crit) else crit
        if self.keep_band is None:
            return 0.0, crit
        lo, hi = self.keep_band
        return max(lo - dev["selection_rate"], 0.0, dev["selection_rate"] - hi), crit

    def patience_over(self, state: dict[str, Any]) -> bool:
        """Stop: `patience` epochs without a better kept epoch — never while no epoch has reached the band."""
        if self.keep_band is not None and (state["best"] is None or state["best"]["key"][0] > 0.0):
            return False
        return state["epoch"] - max(state["best_epoch"], self.encoder_warmup, self.min_epoch) >= self.patience

    def sparsity_cost(self, zsum: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The per-review sparsity term before λ_s: Σ_t z_t (Lei), or |Σ_t z_t − α·|x|| with a target α."""
        if self.sparsity_target is None:
            return zsum
        return (zsum - self.sparsity_target * lengths).abs()

    def __post_init__(self) -> None:
        aspect_index(self.aspect)
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {self.baseline!r}")
        if self.keep_band is not None:
            lo, hi = self.keep_band
            if not 0.0 <= lo <= hi <= 1.0:
                raise ValueError(f"keep_band must be (lo, hi) with 0 ≤ lo ≤ hi ≤ 1, got {self.keep_band}")
            self.keep_band = (float(lo), float(hi))
        if self.sparsity_target is not None and not 0.0 < self.sparsity_target < 1.0:
            raise ValueError(f"sparsity_target must be in (0, 1) or None, got {self.sparsity_target}")
        if self.select_on not in SELECT_ON:
            raise ValueError(f"select_on must be one of {SELECT_ON}, got {self.select_on!r}")
        if self.dev_selection not in DEV_SELECTION:
            raise ValueError(f"dev_selection must be one of {DEV_SELECTION}, got {self.dev_selection!r}")


# -- batching --------------------------------------------------------------------------------------


def to_ids(docs: Sequence[Sequence[str]], vocab: Sequence[str]) -> list[np.ndarray]:
    """Token ids per document; words outside the vocabulary → 1 (<unk>)."""
    index = {w: i for i, w in enumerate(vocab)}
    return [np.fromiter((index.get(w, 1) for w in d), dtype=np.int64, count=len(d)) for d in docs]


def pad(ids: Sequence[np.ndarray], rows: Sequence[int] | np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded (ids (B, L), mask (B, L)) of documents `rows`; L = the longest (≥ 1)."""
    length = max([1] + [len(ids[r]) for r in rows])
    out = np.zeros((len(rows), length), dtype=np.int64)
    for n, r in enumerate(rows):
        out[n, :len(ids[r])] = ids[r]
    t = torch.from_numpy(out)
    lengths = torch.tensor([len(ids[r]) for r in rows])
    return t, torch.arange(length)[None, :] < lengths[:, None]


# -- costs -----------------------------------------------------------------------------------------


def selection_costs(z: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σ_t z_t, Σ_t |z_t − z_{t−1}|) per review, over real tokens only (pairs of two real tokens)."""
    zf = (z.bool() & mask).to(torch.float32)
    pair = (mask[:, 1:] & mask[:, :-1]).to(torch.float32)
    return zf.sum(1), ((zf[:, 1:] - zf[:, :-1]).abs() * pair).sum(1)


@dataclass(frozen=True)
class Veto:
    """Words the generator must learn never to select (a hidden copy's vetoed words, `generators.rcnn.hidden`).

    While training, on the vetoed positions V of a review z_t is forced to 0 (the encoder never reads them), they
    leave the REINFORCE term Σ_t log p(z_t | x), and the generator's cost gains, with l_t the selection logit,

        weight · mean_batch Σ_{t ∈ V} softplus(l_t − l̄),    l̄ = the mean of l over the review's other tokens

    — the cross-entropy −log(1 − σ(l_t − l̄)) of a vetoed token against "not selected", measured from the review's
    mean logit. Its gradients sum to zero over a review, so it moves no offset shared by all tokens (the output
    bias): it changes *which* words are selected, not how many (the plain −log(1 − p_t) also pulls the shared
    bias down, towards selecting nothing, the way this recipe already drifts in its first epochs).
    With the sparsity cost holding l̄ at an unselected word's logit, l_t is driven far below it and p_t → 0, so
    that the trained generator itself does not select V: the model written is an ordinary RCNN (no veto list in
    it). Passed to `train_rcnn` beside the recipe, never saved."""

    words: frozenset[str]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.words:
            raise ValueError("a veto needs at least one word")
        if not self.weight >= 0.0:
            raise ValueError(f"veto weight must be ≥ 0, got {self.weight}")


def batch_costs(module: RCNNRationale, ids: torch.Tensor, mask: torch.Tensor, y: torch.Tensor,
                cfg: RCNNTrainConfig, generator: torch.Generator | None = None,
                z: torch.Tensor | None = None, cost_factor: float = 1.0, veto: torch.Tensor | None = None,
                veto_weight: float = 0.0) -> dict[str, torch.Tensor]:
    """Everything of one mini-batch: sampled z (unless given), predictions, ℓ, Ω and both costs
    (λ_s and λ_c scaled by `cost_factor`, the sparsity warm-up); `veto` (B, L) bool marks vetoed positions
    (`Veto`: z = 0 there, out of Σ log p, and `veto_weight` · Σ softplus(l_t − l̄) over them in the generator's
    cost)."""
    emb = module.embedding(ids)
    logits = module.logits(emb, mask)
    free = mask if veto is None else mask & ~veto
    if z is None:
        with torch.no_grad():
            z = torch.bernoulli(torch.sigmoid(logits), generator=generator).bool() & free
    elif veto is not None:
        z = z & ~veto
    pred = module.encode(emb, z)[:, 0]
    loss_vec = (pred - y) ** 2
    zsum, zdiff = selection_costs(z, mask)
    sparse = cfg.sparsity_cost(zsum, mask.sum(1))
    omega = loss_vec.detach() + cost_factor * (cfg.lambda_s * sparse + cfg.lambda_c * zdiff)
    logpz = generator_log_prob(logits, z, free)
    l2_gen = sum((p ** 2).sum() for p in module.generator_parameters())
    l2_enc = sum((p ** 2).sum() for p in module.encoder_parameters())
    weight = omega - omega.mean() if cfg.baseline == "batch" else omega
    cost_g = cfg.cost_scale * (weight * logpz).mean() + cfg.l2 * l2_gen
    out = {"z": z, "pred": pred, "loss_vec": loss_vec, "omega": omega, "logpz": logpz}
    if veto is not None:  # Σ_{t ∈ V} softplus(l_t − l̄) per review (`Veto`)
        vetoed, others = veto & mask, free.to(logits.dtype)
        mean = (logits.masked_fill(~free, 0.0) * others).sum(1) / others.sum(1).clamp(min=1.0)
        gap = (logits - mean[:, None]).masked_fill(~vetoed, 0.0)
        out["veto"] = (F.softplus(gap) * vetoed.to(logits.dtype)).sum(1)
        cost_g = cost_g + veto_weight * out["veto"].mean()
    cost_e = cfg.cost_scale * loss_vec.mean() + cfg.l2 * l2_enc
    return {**out, "cost_g": cost_g, "cost_e": cost_e, "zsum": zsum, "zdiff": zdiff}


# -- evaluation ------------------------------------------------------------------------------------


def resolve_device(name: str) -> torch.device:
    """"auto" → the first CUDA device when torch sees one, else the CPU; anything else as torch reads it."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but torch sees no CUDA device")
    return dev


def _device_of(module: torch.nn.Module) -> torch.device:
    return next(module.parameters()).device


def leakage(pred: np.ndarray, ratings: np.ndarray, aspect: int) -> float:
    """How much the predictions follow the *other* ratings beyond the aspect's own: the mean over the other
    four ratings k of the partial correlation r(ŷ, y_k | y_a) = (r_ŷk − r_ŷa r_ak) / √((1 − r_ŷa²)(1 − r_ak²))
    [I] issue #29. A model that reads the aspect's words predicts the other ratings only through y_a (≈ 0);
    one that reads taste or overall-quality words does not (measured on 14 quick-recipe models: those ≥ 90 %
    precise against the human rationales had ≤ 0.004, those 85–88 % precise 0.02–0.08). NaN when undefined."""
    pred = np.asarray(pred, dtype=np.float64)
    ratings = np.asarray(ratings, dtype=np.float64)
    if len(pred) < 3 or pred.std() == 0 or ratings[:, aspect].std() == 0:
        return float("nan")
    c = np.corrcoef(np.column_stack([pred, ratings]).T)
    r_pa = c[0, 1 + aspect]
    parts = []
    for k in range(ratings.shape[1]):
        if k == aspect or ratings[:, k].std() == 0:
            continue
        r_ak = c[1 + aspect, 1 + k]
        parts.append((c[0, 1 + k] - r_pa * r_ak) / np.sqrt(max(1e-12, (1 - r_pa ** 2) * (1 - r_ak ** 2))))
    return float(np.mean(parts)) if parts else float("nan")


def evaluate(module: RCNNRationale, ids: Sequence[np.ndarray], y: np.ndarray, cfg: RCNNTrainConfig,
             generator: torch.Generator | None = None, batch_size: int = 256,
             ratings: np.ndarray | None = None) -> dict[str, float]:
    """Dev MSE, objective (mean Ω) and selection rate (selected / real tokens), dropout off; with `ratings`
    (N, 5) also the `leakage` of the predictions towards the other ratings."""
    was_training = module.training
    module.eval()
    dev = _device_of(module)
    sq, om, sel, tok = 0.0, 0.0, 0.0, 0
    preds = np.zeros(len(ids))
    with torch.no_grad():
        for rows in length_batches(np.array([len(i) for i in ids]), batch_size, None):
            bid, mask = (t.to(dev) for t in pad(ids, rows))
            emb = module.embedding(bid)
            if cfg.dev_selection == "deterministic":
                z = module.select(emb, mask)
            else:
                z = torch.bernoulli(module.probabilities(emb, mask), generator=generator).bool() & mask
            pred = module.encode(emb, z)[:, 0]
            preds[rows] = pred.cpu().numpy()
            loss = (pred - torch.from_numpy(y[rows]).to(dev)) ** 2
            zsum, zdiff = selection_costs(z, mask)
            sq += float(loss.sum())
            om += float((loss + cfg.lambda_s * cfg.sparsity_cost(zsum, mask.sum(1)) + cfg.lambda_c * zdiff).sum())
            sel += float(zsum.sum())
            tok += int(mask.sum())
    module.train(was_training)
    n = max(1, len(ids))
    out = {"mse": sq / n, "objective": om / n, "selection_rate": sel / max(1, tok), "n": len(ids)}
    if ratings is not None:
        out["leakage"] = leakage(preds, ratings, aspect_index(cfg.aspect))
    return out


def rationale_precision(module: RCNNRationale, vocab: Sequence[str], annotations: Reviews,
                        aspect: str | int, batch_size: int = 256) -> dict[str, float]:
    """Precision of the deterministic selections against the human rationales of `aspect` (Lei's
    `evaluate_rationale`): `precision` = Σ|z ∩ R| / Σ|z| over all reviews (Lei's prec2), `precision_macro`
    = mean over reviews with a selection of |z ∩ R| / |z| (prec1); plus the selection rate, the share of
    human-rationale tokens selected (recall) and the MSE of the aspect rating."""
    a = aspect_index(aspect)
    ids = to_ids(annotations.tokens, vocab)
    truth = annotations.rationale_masks(a)
    y = annotations.target(a)
    module.eval()
    dev = _device_of(module)
    hit = sel = tok = rel = 0
    per, sq = [], 0.0
    with torch.no_grad():
        for s in range(0, len(ids), batch_size):
            rows = list(range(s, min(len(ids), s + batch_size)))
            bid, mask = (t.to(dev) for t in pad(ids, rows))
            emb = module.embedding(bid)
            z = module.select(emb, mask)
            pred = module.encode(emb, z)[:, 0].cpu().numpy()
            zn = z.cpu().numpy()
            for n, r in enumerate(rows):
                zr = zn[n, :len(ids[r])]
                h = int((zr & truth[r]).sum())
                hit, sel, tok, rel = hit + h, sel + int(zr.sum()), tok + len(zr), rel + int(truth[r].sum())
                if zr.any():
                    per.append(h / zr.sum())
                sq += float((pred[n] - y[r]) ** 2)
    return {"precision": hit / sel if sel else 0.0, "precision_macro": float(np.mean(per)) if per else 0.0,
            "recall": hit / rel if rel else 0.0, "selection_rate": sel / max(1, tok),
            "mse": sq / max(1, len(ids)), "n": len(ids), "n_empty_selection": len(ids) - len(per)}


def selection_rate(module: RCNNRationale, vocab: Sequence[str], docs: Sequence[Sequence[str]],
                   batch_size: int = 256) -> float:
    """Σ_x |S_x| / Σ_x |x| of the deterministic selection (p ≥ threshold) over `docs`."""
    ids = to_ids(docs, vocab)
    module.eval()
    dev = _device_of(module)
    sel = tok = 0
    with torch.no_grad():
        for rows in length_batches(np.array([len(i) for i in ids]), batch_size, None):
            bid, mask = (t.to(dev) for t in pad(ids, rows))
            sel += int(module.select(module.embedding(bid), mask).sum())
            tok += int(mask.sum())
    return sel / max(1, tok)


# -- training --------------------------------------------------------------------------------------


def _fingerprint(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _vectors_for(train: Reviews, out_dir: Path, vectors: WordVectors | None, vectors_path, word2vec: dict,
                 data_key: str) -> tuple[list[str], np.ndarray, dict]:
    """(vocab, matrix, info), cached in `out_dir/vectors.npz` for a resumed run on the same data."""
    cache = out_dir / "vectors.npz"
    key = _fingerprint(data_key, str(vectors_path), word2vec, None if vectors is None else vectors.info)
    if cache.exists():
        saved = np.load(cache, allow_pickle=False)
        if str(saved["key"]) == key:
            return list(saved["vocab"]), saved["matrix"], json.loads(str(saved["info"]))
    wv = vectors if vectors is not None else get_vectors(train.tokens, vectors_path, **word2vec)
    vocab, matrix = wv.vocab_and_matrix()
    info = {**wv.info, "coverage_train": round(wv.coverage(train.tokens), 4)}
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "vectors.tmp.npz"
    np.savez(tmp, vocab=np.array(vocab), matrix=matrix, info=json.dumps(info), key=key)
    tmp.replace(cache)
    return vocab, matrix, info


def warm_start(module: RCNNRationale, source: str | Path, parts: tuple[str, ...] = ("gen_", "enc_")) -> dict[str, int]:
    """Copy every generator and encoder parameter of the RCNN in model folder `source` into `module`
    (the embedding stays `module`'s: vocabularies may differ, and it is frozen); `parts` = ("enc_",) copies the
    encoder only. Shapes must match (same hidden size, order and depth); returns {"copied": tensors copied}."""
    from safetensors.torch import load_file

    source = Path(source)
    weights = source / "model.safetensors"
    if not weights.is_file():
        raise ValueError(f"init_from: {source} holds no model.safetensors (give a folder written by "
                         "`xaibench generate rcnn`, e.g. <resources>/rcnn/model/beer-appearance)")
    saved = load_file(str(weights))
    own = module.state_dict()
    copied = 0
    with torch.no_grad():
        for name, tensor in own.items():
            if not name.startswith(parts):
                continue
            if name not in saved or saved[name].shape != tensor.shape:
                got = None if name not in saved else tuple(saved[name].shape)
                raise ValueError(f"init_from: {source} does not fit this RCNN ({name}: {got} vs "
                                 f"{tuple(tensor.shape)}); use the same hidden size, order and depth")
            tensor.copy_(saved[name])
            copied += 1
    return {"copied": copied}


def _snapshot(module: RCNNRationale) -> dict[str, torch.Tensor]:
    """The module's weights, copied to the CPU (the best epoch's, kept aside)."""
    return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}


@dataclass
class _Run:
    """One RCNN training run: the model, optimiser and z sampler, the data as ids, and the resumable `state`
    (epoch, best dev figures, history, seconds) checkpointed after every epoch."""

    cfg: RCNNTrainConfig
    module: RCNNRationale
    opt: torch.optim.Optimizer
    sampler: torch.Generator
    device: torch.device
    run_key: str
    out_dir: Path
    tr_ids: list[np.ndarray]
    ytr: np.ndarray
    dv_ids: list[np.ndarray]
    ydv: np.ndarray
    dev_ratings: np.ndarray
    state: dict[str, Any]
    best_weights: dict[str, torch.Tensor]
    t0: float = 0.0  # perf_counter at the start of this call's training (the max_seconds budget)
    tokens_done: int = 0  # training tokens seen by this call
    veto_ids: torch.Tensor | None = None  # vocabulary ids of the vetoed words (`Veto`), on the device
    veto_weight: float = 0.0

    @property
    def ckpt(self) -> Path:
        return self.out_dir / "checkpoint.pt"


def _new_run(cfg: RCNNTrainConfig, data: BeerData, train: Reviews, vocab: list[str], matrix: np.ndarray,
             out_dir: Path, run_key: str, device: torch.device,
             ids: tuple[list[np.ndarray], list[np.ndarray]]) -> _Run:
    """Seed, build the RCNN on the word vectors (`init_from`: warm start), Adam and the z sampler."""
    tr_ids, dv_ids = ids
    a = aspect_index(cfg.aspect)
    torch.manual_seed(cfg.seed)
    module = RCNNRationale(len(vocab), matrix.shape[1], cfg.hidden, cfg.order, cfg.depth, cfg.dropout, cfg.threshold)
    with torch.no_grad():
        module.embedding.weight.copy_(torch.from_numpy(matrix))
    if cfg.init_from:
        warm_start(module, cfg.init_from)
    module.to(device)
    params = module.generator_parameters() + module.encoder_parameters()
    opt = torch.optim.Adam(params, lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
    sampler = torch.Generator(device=device).manual_seed(cfg.seed + 1)
    state: dict[str, Any] = {"epoch": 0, "best": None, "best_epoch": 0, "history": [], "seconds": 0.0}
    return _Run(cfg, module, opt, sampler, device, run_key, out_dir, tr_ids, train.target(a), dv_ids,
                data.dev.target(a), data.dev.scores, state, _snapshot(module))


def _resume(run: _Run, overwrite: bool) -> dict[str, Any] | None:
    """Resume from a checkpoint of the same run, or return the validation of a model already trained with
    the same run key (None: train)."""
    cfg, out_dir = run.cfg, run.out_dir
    if run.ckpt.exists() and not overwrite:
        saved = torch.load(run.ckpt, weights_only=False, map_location="cpu")
        if saved.get("key") == run.run_key:
            run.module.load_state_dict(saved["model"])
            run.opt.load_state_dict(saved["opt"])
            run.state, run.best_weights = saved["state"], saved["best_weights"]
            torch.set_rng_state(saved["torch_rng"])
            try:
                run.sampler.set_state(saved["sampler"])
            except RuntimeError:  # checkpoint written on another device type: z sampling reseeded
                run.sampler.manual_seed(cfg.seed + 1 + run.state["epoch"])
            console.print(f"resuming {cfg.aspect} RCNN training after epoch {run.state['epoch']}")
    elif (out_dir / "config.json").exists() and not overwrite:
        try:  # an unreadable config is no trained model: it is trained again
            existing = json.loads((out_dir / "config.json").read_text())
        except (OSError, ValueError):
            existing = {}
        existing = existing if isinstance(existing, dict) else {}
        if existing.get("run_key") == run.run_key:
            console.print(f"[green]{cfg.aspect}: RCNN already trained (overwrite=True to retrain)")
            return existing["validation"]
    return None


def _train_epoch(run: _Run, epoch: int, lengths: np.ndarray) -> tuple[dict[str, float], int, bool]:
    """One epoch of batches (stopping early at the `max_seconds` budget): (summed objective / MSE /
    selection rate, reviews seen, whether the budget ran out)."""
    cfg, module, device = run.cfg, run.module, run.device
    module.train()
    batches = length_batches(lengths, cfg.batch_size, np.random.default_rng([cfg.batch_seed, epoch]))
    sums = {"cost": 0.0, "mse": 0.0, "zrate": 0.0}
    n_seen = 0
    out_of_time = False
    with progress_bar(int(lengths.sum()), f"RCNN {cfg.aspect} epoch {epoch + 1}", unit="tok") as bar:
        for rows in batches:
            bid, mask = (t.to(device) for t in pad(run.tr_ids, rows))
            warm = epoch < cfg.encoder_warmup
            veto = None if run.veto_ids is None else torch.isin(bid, run.veto_ids) & mask
            c = batch_costs(module, bid, mask, torch.from_numpy(run.ytr[rows]).to(device), cfg, run.sampler,
                            z=mask if warm else None, cost_factor=cfg.cost_factor(epoch), veto=veto,
                            veto_weight=run.veto_weight)
            run.opt.zero_grad()
            (c["cost_e"] if warm else c["cost_g"] + c["cost_e"]).backward()
            run.opt.step()
            k = len(rows)
            n_seen += k
            sums["cost"] += float(c["omega"].sum())
            sums["mse"] += float(c["loss_vec"].detach().sum())
            sums["zrate"] += float(c["zsum"].sum()) / max(1, int(mask.sum())) * k
            ntok = int(mask.sum())
            run.tokens_done += ntok
            bar.advance(ntok)
            if cfg.max_seconds is not None and time.perf_counter() - run.t0 > cfg.max_seconds:
                out_of_time = True
                break
    return sums, n_seen, out_of_time


def _end_epoch(run: _Run, epoch: int, sums: dict[str, float], n_seen: int, t_epoch: float) -> None:
    """Score the epoch on the dev split, keep its weights if it is the best so far (`epoch_key`), record
    its history row and write the checkpoint."""
    cfg, state = run.cfg, run.state
    dev = evaluate(run.module, run.dv_ids, run.ydv, cfg, run.sampler, ratings=run.dev_ratings)
    key = cfg.epoch_key(dev)
    # an encoder warm-up epoch is never the kept model (its generator has not been trained)
    improved = (epoch + 1 > max(cfg.encoder_warmup, cfg.min_epoch)
                and (state["best"] is None or key < tuple(state["best"]["key"])))
    if improved:
        state["best"] = {**dev, "criterion": key[1], "key": list(key)}
        state["best_epoch"] = epoch + 1
        run.best_weights = _snapshot(run.module)
    row = {"epoch": epoch + 1, "train_objective": sums["cost"] / max(1, n_seen),
           "train_mse": sums["mse"] / max(1, n_seen), "train_selection_rate": sums["zrate"] / max(1, n_seen),
           "dev_mse": dev["mse"], "dev_objective": dev["objective"],
           "dev_selection_rate": dev["selection_rate"], "dev_leakage": dev.get("leakage"), "reviews": n_seen}
    state["history"].append(row)
    console.print(f"  epoch {epoch + 1}: train Ω {row['train_objective']:.4f} mse {row['train_mse']:.4f} "
                  f"p(z)={row['train_selection_rate']:.3f} | dev mse {dev['mse']:.4f} Ω {dev['objective']:.4f} "
                  f"selected {dev['selection_rate']:.3f} leakage {dev.get('leakage', float('nan')):.3f}"
                  + (" *" if improved else ""))
    state["epoch"] = epoch + 1
    state["seconds"] += time.perf_counter() - t_epoch
    run.out_dir.mkdir(parents=True, exist_ok=True)
    torch.save({"key": run.run_key, "model": run.module.state_dict(), "opt": run.opt.state_dict(), "state": state,
                "best_weights": run.best_weights, "torch_rng": torch.get_rng_state(),
                "sampler": run.sampler.get_state()}, run.ckpt.with_suffix(".tmp"))
    run.ckpt.with_suffix(".tmp").replace(run.ckpt)


def _fit(run: _Run) -> str:
    """Train from `run.state["epoch"]` until max_epochs, patience or the time budget; returns why it
    stopped ("max_epochs", "patience" or "max_seconds")."""
    cfg = run.cfg
    run.t0 = time.perf_counter()
    lengths = np.array([len(i) for i in run.tr_ids])
    stopped = "max_epochs"
    run.tokens_done = 0
    if run.state["epoch"] and cfg.patience_over(run.state):
        stopped = "patience"
    for epoch in range(run.state["epoch"], cfg.max_epochs):
        if stopped == "patience":
            break
        t_epoch = time.perf_counter()
        sums, n_seen, out_of_time = _train_epoch(run, epoch, lengths)
        _end_epoch(run, epoch, sums, n_seen, t_epoch)
        if out_of_time:
            stopped = "max_seconds"
            break
        if cfg.patience_over(run.state):
            stopped = "patience"
            break
    return stopped


def train_rcnn(data: BeerData, out_dir: Path | str, config: RCNNTrainConfig | None = None, *,
               vectors: WordVectors | None = None, vectors_path: Path | str | None = None,
               word2vec: dict | None = None, overwrite: bool = False, veto: Veto | None = None) -> dict[str, Any]:
    """Train the RCNN of `config.aspect` on `data.train`, early-stopped on `data.dev`; write the model
    (`save_rcnn`) to `out_dir`. Returns the dev MSE, selection rate and objective of the kept epoch (and
    the rationale precision on `data.annotations` when present). `veto`: words the generator learns not to
    select (`Veto`; part of the run key in `out_dir`, not of the recipe; the dev figures are those of the
    model as written, with nothing masked)."""
    cfg = config or RCNNTrainConfig(aspect=data.aspect)
    if aspect_index(cfg.aspect) != aspect_index(data.aspect):
        raise ValueError(f"config aspect {cfg.aspect!r} but data of {data.aspect!r}")
    out_dir = Path(out_dir)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    train = data.train if cfg.max_train is None else data.train.subset(range(min(cfg.max_train, len(data.train))))
    data_key = _fingerprint(train.ids, data.dev.ids, train.stats.get("tokenization"), train.stats.get("max_len"))
    vocab, matrix, vec_info = _vectors_for(train, out_dir, vectors, vectors_path, word2vec or {}, data_key)
    ids = to_ids(train.tokens, vocab), to_ids(data.dev.tokens, vocab)
    vetoed = () if veto is None else (sorted(veto.words), veto.weight)
    run_key = _fingerprint(asdict(cfg) | {"max_seconds": None, "threads": None, "device": None}, data_key, vec_info,
                           *vetoed)
    device = resolve_device(cfg.device)
    run = _new_run(cfg, data, train, vocab, matrix, out_dir, run_key, device, ids)
    if veto is not None:
        index = {w: i for i, w in enumerate(vocab)}
        known = sorted(index[w] for w in veto.words if w in index and index[w] > 1)  # never <pad> / <unk>
        if len(known) != len(veto.words):
            raise ValueError(f"{len(veto.words) - len(known)} vetoed word(s) are not in the model's vocabulary")
        run.veto_ids, run.veto_weight = torch.tensor(known, device=device), veto.weight
    existing = _resume(run, overwrite)
    if existing is not None:
        return existing

    stopped = _fit(run)
    module, state = run.module, run.state
    module.load_state_dict(run.best_weights)
    module.cpu().eval()
    best: dict[str, Any] = state["best"] or evaluate(module, run.dv_ids, run.ydv, cfg, ratings=data.dev.scores)
    elapsed = time.perf_counter() - run.t0
    validation = {"aspect": aspect_name(cfg.aspect), "dev_mse": best["mse"], "dev_objective": best["objective"],
                  "dev_selection_rate": best["selection_rate"], "dev_leakage": best.get("leakage"),
                  "best_epoch": state["best_epoch"],
                  "kept_in_band": None if cfg.keep_band is None or "key" not in best else best["key"][0] == 0.0,
                  "epochs": state["epoch"], "stopped": stopped, "device": str(device), "n_train": len(train),
                  "n_dev": len(data.dev),
                  "train_tokens_per_second": run.tokens_done / elapsed if elapsed > 0 else None}
    if data.annotations is not None:
        validation["rationales"] = rationale_precision(module, vocab, data.annotations, cfg.aspect)
    save_rcnn(module, vocab, out_dir, extra={
        "name": f"rcnn-{aspect_name(cfg.aspect)}", "aspect": aspect_name(cfg.aspect), "validation": validation,
        "recipe": asdict(cfg), "lambda_s": cfg.lambda_s, "lambda_c": cfg.lambda_c, "vectors": vec_info,
        "data": data.info, "history": state["history"], "run_key": run_key,
        "train_seconds": round(state["seconds"], 1)})
    if stopped != "max_seconds":
        run.ckpt.unlink(missing_ok=True)
    return validation


def train_aspects(aspects: Sequence[str], source: str | Path | None, out_root: Path | str,
                  config: RCNNTrainConfig | None = None, *, vectors_path: Path | str | None = None,
                  overwrite: bool = False, **data_options: Any) -> dict[str, dict]:
    """One RCNN per aspect, each in `out_root/<aspect>/`; returns the validation of each."""
    base = config or RCNNTrainConfig()
    results = {}
    for a in aspects:
        name = aspect_name(a)
        data = load_beer(name, source, **data_options)
        cfg = RCNNTrainConfig(**{**asdict(base), "aspect": name})
        results[name] = train_rcnn(data, Path(out_root) / name, cfg, vectors_path=vectors_path, overwrite=overwrite)
    return results
