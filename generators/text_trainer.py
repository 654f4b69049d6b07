"""The text trainer every text track shares: the word-level classifiers IDC, robustness and trust test.

The Kim CNN (SPECS §5.2), the HAN word-attention classifier and any architecture a generator adds to
`ARCHES` (robustness: the BiLSTMs), plus what the transformer generator reuses (`trained_config`,
`length_batches`). No track's generator owns it, so none imports another's.

Recipe [P]: Adam lr 1e-3, mini-batch 32, at most 10 epochs, cross-entropy, dropout 0.5; the epoch with
the best validation accuracy is kept [I]. Documents are padded to `max_len` = the longest training
document, capped at 500 tokens [I]; longer documents are truncated and counted. The vocabulary is every
training word (+ <pad>, <unk>), and — with pre-trained embeddings and `extra_vocab` — every further word
the pre-trained table has a row for (appended after the training words; the robustness track gives its
synonym space here so that every word an attack may swap in has its own frozen row instead of <unk>;
the training key then includes a digest of those words, and is unchanged without them). A caller may fix
the vocabulary and `max_len` instead (`vocab=`, `max_len=`: IDC's hidden copies keep the published model's,
so that neither the word order nor the length tells what their training data changed). A checkpoint
after each epoch makes an interrupted training resume; the permutation of an epoch depends only on
(seed, epoch).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence, cast

import numpy as np
import torch
from torch import nn

from benchmark.isolation import allocator
from benchmark.errors import ResourceError
from benchmark.models.base import save_model
from benchmark.models.text import PAD, UNK, KimCNN, WordAttention, build_vocab
from benchmark.progress import console, progress_bar
from generators.lexicon import glove_6b_50d

ARCHES = {"kim-cnn": KimCNN, "word-attention": WordAttention}


@dataclass
class TextTrainConfig:
    architecture: str = "kim-cnn"  # or "word-attention" (HAN word level)
    epochs: int = 10  # [P] at most 10
    batch_size: int = 32  # [P]
    lr: float = 1e-3  # [P] Adam
    # [I] torch's Adam implementation: "fused" (one kernel over every parameter; the same update rule, ≈ 4× faster
    # per step on the embedding table here, issue #50's copies) or "loop" (the per-parameter loop models were
    # trained with before; their weights differ in the last bits)
    adam: str = "fused"
    embed_dim: int = 128  # [P]
    max_len_cap: int = 500  # [I] pad to the longest training document, capped
    min_count: int = 1  # vocabulary: training words seen at least this often
    patience: int | None = None  # stop early after this many epochs without improvement (None: never)
    # [I] initialisation: "keras" = the paper's TF 2.5 defaults (embeddings U(-0.05, 0.05), Glorot-uniform
    # kernels, zero biases); "torch" = PyTorch's defaults (embeddings N(0, 1))
    init: str = "keras"
    # [I] word embeddings: "random" (initialised by `init`) or "glove-50d" (GloVe 6B 50-d rows for the
    # vocabulary words GloVe has, the rest as `init` draws them; needs embed_dim = 50) — SPECS §2.8's
    # models read pre-trained GloVe (300-d there, not installable offline)
    embeddings: str = "random"
    freeze_embeddings: bool = False  # [I] keep the embedding table fixed while training (SPECS §2.8: frozen)
    # [I, issue #24] rationale supervision (as HateXplain's BERT-HX): an auxiliary loss, weight λ =
    # `rationale_weight`, on the posts that carry a rationale (`train_text_classifier(rationales=...)`), acting
    # on the input gradient at the embedding layer (`rationale_on`): "rrr" = Ross et al. 2017's "right for the
    # right reasons" penalty Σ_{t ∉ G} ||∂ log p_y / ∂e_t||²; "attribution" = cross-entropy between the
    # rationale as a distribution over positions (G normalised) and softmax(gradient×input / τ); "erasure" =
    # acts on the model's output on erased inputs (ERASER's sufficiency and comprehensiveness as losses):
    # CE(f(x_G), y) on the post cut to its rationale words + CE(f(x_{−G}), uniform) on the post without them
    # (the rest alone should not tell the class); "none" = off
    rationale_loss: str = "none"
    rationale_weight: float = 1.0
    rationale_tau: float = 1.0  # temperature of the "attribution" softmax
    # what rrr / attribution act on (the Kim CNN has no attention); erasure acts on the output
    rationale_on: str = "input-gradient"
    seed: int = 0
    threads: int | None = None


def encode(vocab_index: dict[str, int], docs: Sequence[Sequence[str]], max_len: int) -> np.ndarray:
    """(N, max_len) int64 ids; unknown words → 1; documents truncated to max_len."""
    ids = np.zeros((len(docs), max_len), dtype=np.int64)
    for n, d in enumerate(docs):
        row = [vocab_index.get(w, 1) for w in d[:max_len]]
        ids[n, : len(row)] = row
    return ids


def accuracy(module: nn.Module, ids: np.ndarray, labels: np.ndarray, bs: int = 512) -> float:
    module.eval()
    correct = 0
    with torch.no_grad():
        for s in range(0, len(ids), bs):
            pred = module(torch.from_numpy(ids[s : s + bs])).argmax(1).numpy()
            correct += int((pred == labels[s : s + bs]).sum())
    return correct / max(1, len(ids))


def keras_init(module: nn.Module) -> None:
    """TF 2.5 Keras default initialisers: Embedding U(-0.05, 0.05), Conv/Dense kernels Glorot-uniform,
    biases 0 (the padding row stays 0); recurrent layers keep PyTorch's defaults."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Embedding):
                nn.init.uniform_(m.weight, -0.05, 0.05)
                if m.padding_idx is not None:
                    m.weight[m.padding_idx].zero_()
            elif isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)


def corpus_key(train: Sequence[Sequence[str]], labels: Sequence[int] | np.ndarray) -> str:
    h = hashlib.sha256()
    for d, y in zip(train, labels):
        h.update((" ".join(d) + f"\t{int(y)}\n").encode())
    return h.hexdigest()[:16]


EMBEDDINGS = ("random", "glove-50d")
RATIONALE_LOSSES = ("none", "rrr", "attribution", "erasure")
RATIONALE_ON = ("input-gradient",)
# recipe fields added after models were trained
_LATER = {"embeddings": "random", "freeze_embeddings": False, "rationale_loss": "none", "rationale_weight": 1.0,
          "rationale_tau": 1.0, "rationale_on": "input-gradient", "adam": "loop"}


def recipe_key(cfg: TextTrainConfig) -> dict:
    """The recipe part of the training key: every field, except later-added ones left at their default
    (so models trained before those fields existed are still recognised as trained)."""
    return {k: v for k, v in asdict(cfg).items() if not (k in _LATER and v == _LATER[k])}


def rationale_masks(docs: Sequence[Sequence[str]], rationales: Sequence[Any] | None, max_len: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(N, max_len) float32 — 1 where a (truncated) document's token is one of its rationale word types — and
    (N,) bool — the documents that carry a rationale (the others get no auxiliary loss)."""
    mask = np.zeros((len(docs), max_len), dtype=np.float32)
    has = np.zeros(len(docs), dtype=bool)
    for n, d in enumerate(docs):
        g = set(rationales[n] or ()) if rationales is not None else set()
        if not g:
            continue
        row = [float(t in g) for t in d[:max_len]]
        mask[n, : len(row)] = row
        has[n] = bool(sum(row))
    return mask, has


def _compact(ids: torch.Tensor) -> torch.Tensor:
    """Each row's non-padding ids moved to the front, in order (a document with words removed, as LIME and
    omission remove them), padding after."""
    order = torch.argsort((ids == 0).to(torch.int8), dim=1, stable=True)
    return ids.gather(1, order)


class _Embedded(Protocol):
    """A word-level classifier as the rationale losses drive it (every architecture of `ARCHES`): its
    embedding table and its forward from embeddings."""

    embedding: nn.Embedding

    def forward_embedded(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The logits (N, C) of embedded documents (N, T, D) and their mask (N, T)."""
        ...


def supervised_loss(module: nn.Module, ids: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor,
                    has: torch.Tensor, cfg: TextTrainConfig) -> tuple[torch.Tensor, float]:
    """Cross-entropy + λ · the rationale loss of `cfg.rationale_loss` over the batch's documents with a
    rationale (`TextTrainConfig`); returns (loss, the auxiliary term's value). The input gradient is taken
    with `create_graph=True` (double back-propagation)."""
    net = cast(_Embedded, module)
    emb = net.embedding(ids)
    logits = net.forward_embedded(emb, ids != 0)
    ce = nn.functional.cross_entropy(logits, labels)
    if cfg.rationale_loss == "none" or not bool(has.any()):
        return ce, 0.0
    if cfg.rationale_loss == "erasure":  # sufficiency + comprehensiveness on the posts with a rationale
        keep = (mask > 0) & has[:, None]
        only = _compact(torch.where(keep, ids, torch.zeros_like(ids)))[has]
        rest = _compact(torch.where(keep, torch.zeros_like(ids), ids))[has]
        suff = nn.functional.cross_entropy(module(only), labels[has])
        logq = torch.log_softmax(module(rest), dim=1)
        comp = -logq.mean(1).mean()  # cross-entropy against the uniform distribution
        aux = suff + comp
        return ce + float(cfg.rationale_weight) * aux, float(aux.detach())
    logp = torch.log_softmax(logits, dim=1).gather(1, labels[:, None]).squeeze(1)
    grad = torch.autograd.grad(logp[has].sum(), emb, create_graph=True)[0]  # (B, L, D)
    words = (ids != 0) & has[:, None]
    if cfg.rationale_loss == "rrr":
        outside = words & (mask == 0)
        aux = (grad.pow(2).sum(-1) * outside).sum() / has.sum()
    else:  # "attribution": cross-entropy of softmax(gradient×input / τ) against the normalised rationale
        attr = (grad * emb).sum(-1) / float(cfg.rationale_tau)
        logq = torch.log_softmax(attr.masked_fill(ids == 0, float("-inf")), dim=1)
        target = mask / mask.sum(1, keepdim=True).clamp(min=1.0)
        aux = -(target * logq.masked_fill(ids == 0, 0.0)).sum(1)[has].mean()
    return ce + float(cfg.rationale_weight) * aux, float(aux.detach())


def pretrained_words(source: str) -> set[str]:
    """The words the pre-trained table `source` has a row for (empty for "random")."""
    if source == "random":
        return set()
    if source != "glove-50d":
        raise ValueError(f"embeddings must be one of {EMBEDDINGS}, got {source!r}")
    return set(glove_6b_50d()[0])


def extend_vocab(vocab: list[str], extra: Sequence[str], source: str) -> tuple[list[str], int]:
    """`vocab` + the words of `extra` (sorted) that it lacks and `source` has a row for; (vocab, added)."""
    have, rows = set(vocab), pretrained_words(source)
    added = sorted({w for w in extra if w not in have and w in rows})
    return list(vocab) + added, len(added)


def vocab_digest(words: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(words))).encode()).hexdigest()[:16]


def load_pretrained(embedding: nn.Embedding, vocab: Sequence[str], source: str) -> int | None:
    """Copy pre-trained vectors into the rows of `vocab` (row 0 = padding stays zero, row 1 = unknown
    keeps its initial draw); returns how many vocabulary words were found (None for "random")."""
    if source == "random":
        return None
    if source != "glove-50d":
        raise ValueError(f"embeddings must be one of {EMBEDDINGS}, got {source!r}")
    words, matrix = glove_6b_50d()
    if embedding.embedding_dim != matrix.shape[1]:
        raise ValueError(f"embeddings {source!r} are {matrix.shape[1]}-d; set embed_dim={matrix.shape[1]} "
                         f"(got {embedding.embedding_dim})")
    index = {w: i for i, w in enumerate(words)}
    rows = [(k, index[w]) for k, w in enumerate(vocab) if k >= 2 and w in index]
    if rows:
        with torch.no_grad():
            mine, theirs = zip(*rows)
            embedding.weight[list(mine)] = torch.from_numpy(np.asarray(matrix[list(theirs)], dtype=np.float32))
    return len(rows)


TextData = tuple[Sequence[Sequence[str]], Sequence[int]]


def length_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    """Documents sorted by length (stable), cut into chunks of `batch_size`, chunk order shuffled by `rng`."""
    order = np.argsort(lengths, kind="stable")
    chunks = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    if rng is not None:
        chunks = [chunks[i] for i in rng.permutation(len(chunks))]
    return chunks


def _check_inputs(cfg: TextTrainConfig, train: TextData, validation: TextData, n_classes: int,
                  rationales: Sequence[Any] | None, extra_vocab: Sequence[str] | None
                  ) -> tuple[list, np.ndarray, list, np.ndarray]:
    """Refuse a recipe or corpus that cannot be trained; returns (train docs, labels, validation docs, labels)."""
    if cfg.architecture not in ARCHES:
        raise ValueError(f"architecture must be one of {sorted(ARCHES)}")
    if cfg.rationale_loss not in RATIONALE_LOSSES or cfg.rationale_on not in RATIONALE_ON:
        raise ValueError(f"rationale_loss must be one of {RATIONALE_LOSSES} and rationale_on one of {RATIONALE_ON}")
    if cfg.rationale_loss != "none":
        if cfg.architecture != "kim-cnn":
            raise ValueError("rationale supervision acts on the Kim CNN's input gradient; architecture must be kim-cnn")
        if rationales is None or len(rationales) != len(train[0]) or not any(rationales):
            raise ResourceError(f"rationale_loss={cfg.rationale_loss!r} needs one rationale per training document "
                                "(some non-empty)")
    xtr, ytr = list(train[0]), np.asarray(train[1], dtype=np.int64)
    xva, yva = list(validation[0]), np.asarray(validation[1], dtype=np.int64)
    if len(xtr) == 0 or len(xva) == 0:
        raise ResourceError("training and validation sets must both be non-empty")
    missing = sorted(set(range(n_classes)) - set(ytr.tolist()))
    if missing:
        raise ResourceError(f"class(es) {missing} have no training documents; cannot train a classifier")
    if cfg.embeddings not in EMBEDDINGS:
        raise ValueError(f"embeddings must be one of {EMBEDDINGS}, got {cfg.embeddings!r}")
    if extra_vocab is not None and cfg.embeddings == "random":
        raise ValueError("extra_vocab needs pre-trained embeddings (embeddings='glove-50d'): a word never seen in "
                         "training would get an untrained random row")
    return xtr, ytr, xva, yva


def _training_key(cfg: TextTrainConfig, xtr: list, ytr: np.ndarray, xva: list, yva: np.ndarray,
                  rationales: Sequence[Any] | None, extra_vocab: Sequence[str] | None,
                  vocab: Sequence[str] | None = None, max_len: int | None = None) -> dict:
    """What a saved model must have been trained on to be reused: corpus, validation set, recipe (and the
    rationales / extra vocabulary / fixed vocabulary (in order) and length when given)."""
    key: dict[str, Any] = {"corpus": corpus_key(xtr, ytr), "validation": corpus_key(xva, yva),
                           "recipe": recipe_key(cfg)}
    if cfg.rationale_loss != "none":
        assert rationales is not None  # checked by _check_inputs
        key["rationales"] = corpus_key([sorted(g or ()) for g in rationales], ytr)
    if extra_vocab is not None:  # absent otherwise: models trained before the option keep their key
        key["extra_vocab"] = vocab_digest(extra_vocab)
    if vocab is not None:
        key["vocab"] = hashlib.sha256("\n".join(vocab).encode()).hexdigest()[:16]
    if max_len is not None:
        key["max_len"] = int(max_len)
    return key


def trained_config(cfg_path: Path, key: dict) -> dict | None:
    """The saved model's config when it was trained under `key`, else None (an unreadable config is no
    trained model: it is trained again)."""
    if not cfg_path.exists():
        return None
    try:
        existing = json.loads(cfg_path.read_text())
    except (OSError, ValueError):
        existing = {}
    existing = existing if isinstance(existing, dict) else {}
    return existing if existing.get("training_key") == key else None


@dataclass
class _TextRun:
    """What the stages of one `train_text_classifier` call share: the recipe, the encoded corpus, the
    module and its optimiser."""

    cfg: TextTrainConfig
    name: str
    key: dict
    vocab: list[str]
    n_added: int | None  # words added by `extra_vocab` (None without it)
    index: dict[str, int]
    max_len: int
    truncated: int  # training + validation documents longer than max_len
    itr: np.ndarray  # encoded training documents
    ytr: np.ndarray
    iva: np.ndarray  # encoded validation documents
    yva: np.ndarray
    rmask: np.ndarray  # rationale masks (rationale_masks)
    rhas: np.ndarray
    kwargs: dict  # the architecture's constructor arguments (saved with the model)
    module: nn.Module
    found: int | None  # vocabulary words with a pre-trained row (None for random embeddings)
    opt: torch.optim.Optimizer


def _prepare(cfg: TextTrainConfig, name: str, key: dict, n_classes: int, xtr: list, ytr: np.ndarray, xva: list,
             yva: np.ndarray, rationales: Sequence[Any] | None, extra_vocab: Sequence[str] | None,
             fixed_vocab: Sequence[str] | None = None, fixed_max_len: int | None = None) -> _TextRun:
    """Vocabulary (built from the training documents, or `fixed_vocab`), encoding (to the longest training
    document, capped, or `fixed_max_len`), the seeded module (initialised by `cfg.init`, pre-trained rows loaded)
    and Adam."""
    vocab = build_vocab(xtr, min_count=cfg.min_count) if fixed_vocab is None else list(fixed_vocab)
    n_added = None
    if extra_vocab is not None:
        vocab, n_added = extend_vocab(vocab, extra_vocab, cfg.embeddings)
    index = {w: i for i, w in enumerate(vocab)}
    max_len = min(cfg.max_len_cap, max(len(d) for d in xtr)) if fixed_max_len is None else int(fixed_max_len)
    truncated = int(sum(len(d) > max_len for d in xtr + xva))
    itr, iva = encode(index, xtr, max_len), encode(index, xva, max_len)
    rmask, rhas = rationale_masks(xtr, rationales if cfg.rationale_loss != "none" else None, max_len)
    torch.manual_seed(cfg.seed)
    if cfg.architecture == "kim-cnn":
        kwargs = {"vocab_size": len(vocab), "n_classes": n_classes, "max_len": max_len, "embed_dim": cfg.embed_dim}
    else:
        kwargs = {"vocab_size": len(vocab), "n_classes": n_classes, "embed_dim": cfg.embed_dim}
    module = ARCHES[cfg.architecture](**kwargs)
    if cfg.init == "keras":
        keras_init(module)
    elif cfg.init != "torch":
        raise ValueError(f"init must be 'keras' or 'torch', got {cfg.init!r}")
    found = load_pretrained(module.embedding, vocab, cfg.embeddings)
    if cfg.freeze_embeddings:
        module.embedding.weight.requires_grad_(False)
    if cfg.adam not in ("fused", "loop"):
        raise ValueError(f"adam must be 'fused' or 'loop', got {cfg.adam!r}")
    fused = cfg.adam == "fused"
    opt = torch.optim.Adam([p for p in module.parameters() if p.requires_grad], lr=cfg.lr, fused=fused or None,
                           foreach=None if fused else False)
    return _TextRun(cfg=cfg, name=name, key=key, vocab=vocab, n_added=n_added, index=index, max_len=max_len,
                    truncated=truncated, itr=itr, ytr=ytr, iva=iva, yva=yva, rmask=rmask, rhas=rhas, kwargs=kwargs,
                    module=module, found=found, opt=opt)


def _resume(run: _TextRun, ckpt: Path, overwrite: bool) -> tuple[dict, dict]:
    """(training state, best weights) — from the checkpoint when it belongs to this training key."""
    state: dict = {"epoch": 0, "best": -1.0, "best_epoch": 0, "history": []}
    best = {k: v.clone() for k, v in run.module.state_dict().items()}
    if ckpt.exists() and not overwrite:
        saved = torch.load(ckpt, weights_only=False)
        if saved.get("key") == run.key:
            run.module.load_state_dict(saved["model"])
            run.opt.load_state_dict(saved["opt"])
            state, best = saved["state"], saved["best"]
            console.print(f"resuming {run.name} training at epoch {state['epoch'] + 1}")
    return state, best


def _train_epoch(run: _TextRun, epoch: int, loss_fn: nn.Module) -> tuple[float, float]:
    """One epoch over a permutation seeded by (seed, epoch); returns the summed (loss, rationale loss)."""
    cfg, module, itr, ytr = run.cfg, run.module, run.itr, run.ytr
    n_batches = (len(itr) + cfg.batch_size - 1) // cfg.batch_size
    perm = np.random.default_rng([cfg.seed, epoch]).permutation(len(itr))
    module.train()
    total = aux_total = 0.0
    with progress_bar(n_batches, f"train {run.name} epoch {epoch + 1}/{cfg.epochs}", unit="batch") as bar:
        for b in range(n_batches):
            idx = perm[b * cfg.batch_size : (b + 1) * cfg.batch_size]
            run.opt.zero_grad()
            if cfg.rationale_loss == "none":
                loss = loss_fn(module(torch.from_numpy(itr[idx])), torch.from_numpy(ytr[idx]))
            else:
                loss, aux = supervised_loss(module, torch.from_numpy(itr[idx]), torch.from_numpy(ytr[idx]),
                                            torch.from_numpy(run.rmask[idx]), torch.from_numpy(run.rhas[idx]), cfg)
                aux_total += aux * len(idx)
            loss.backward()
            run.opt.step()
            total += loss.item() * len(idx)
            bar.advance()
    return total, aux_total


def _fit(run: _TextRun, ckpt: Path, state: dict, best: dict) -> dict:
    """Epochs from `state["epoch"]`, keeping the best validation epoch's weights, a checkpoint after each,
    stopping after `cfg.patience` epochs without improvement; returns the best weights."""
    cfg, n = run.cfg, len(run.itr)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(state["epoch"], cfg.epochs):
        total, aux_total = _train_epoch(run, epoch, loss_fn)
        val = accuracy(run.module, run.iva, run.yva)
        state["history"].append({"epoch": epoch + 1, "train_loss": total / n, "validation_accuracy": val,
                                 **({"rationale_loss": aux_total / n} if cfg.rationale_loss != "none" else {})})
        console.print(f"  {run.name} epoch {epoch + 1}: train loss {total / n:.4f}, validation accuracy {val:.4f}")
        if val > state["best"]:
            state["best"], state["best_epoch"] = val, epoch + 1
            best = {k: v.clone() for k, v in run.module.state_dict().items()}
        state["epoch"] = epoch + 1
        torch.save({"key": run.key, "model": run.module.state_dict(), "opt": run.opt.state_dict(), "state": state,
                    "best": best}, ckpt.with_suffix(".tmp"))
        ckpt.with_suffix(".tmp").replace(ckpt)
        if cfg.patience is not None and epoch + 1 - state["best_epoch"] >= cfg.patience:
            break
    return best


def _save(run: _TextRun, out_dir: Path, state: dict, test: TextData | None, t0: float,
          extra_vocab: Sequence[str] | None) -> None:
    """Score the kept weights on `test` and save the model with its config (vocabulary, max_len, recipe,
    scores, history, training key); `t0`: perf_counter at the start of training."""
    cfg, vocab = run.cfg, run.vocab
    n_classes = run.kwargs["n_classes"]
    scores = {"validation_accuracy": state["best"], "best_epoch": state["best_epoch"]}
    if test is not None:
        ite, yte = encode(run.index, list(test[0]), run.max_len), np.asarray(test[1], dtype=np.int64)
        scores["test_accuracy"] = accuracy(run.module, ite, yte)
        scores["n_test"] = int(len(yte))
    extra = {"task": "binary" if n_classes == 2 else "multiclass", "n_classes": n_classes, "vocab": vocab,
             "max_len": run.max_len, "truncated_documents": run.truncated, "recipe": asdict(cfg), "scores": scores,
             "history": state["history"], "train_seconds": round(time.perf_counter() - t0, 1),
             "n_train": len(run.itr), "n_validation": len(run.iva), "training_key": run.key}
    if run.found is not None:
        extra["pretrained_words"] = {"found": run.found, "vocabulary": len(vocab) - 2}
    if run.n_added is not None:
        assert extra_vocab is not None  # n_added is set only with extra_vocab
        extra["vocab_extension"] = {"requested": len(set(extra_vocab)), "added": run.n_added,
                                    "training_words": len(vocab) - 2 - run.n_added}
    save_model(run.module, out_dir, cfg.architecture, run.kwargs, extra=extra)


def train_text_classifier(train: TextData, validation: TextData, out_dir: Path, config: TextTrainConfig | None = None,
                          *, n_classes: int = 2, test: TextData | None = None, overwrite: bool = False,
                          name: str = "model", rationales: Sequence[Any] | None = None,
                          extra_vocab: Sequence[str] | None = None, vocab: Sequence[str] | None = None,
                          max_len: int | None = None) -> dict:
    """Train (or reuse) a text classifier on (token lists, labels); saves it to `out_dir` (safetensors +
    config.json with the vocabulary, max_len, recipe and accuracies); returns the model's config dict.
    `rationales`: one collection of rationale word types per training document (empty: none), read when
    `config.rationale_loss` is not "none". `extra_vocab`: words that get their own pre-trained row beside
    the training words (module docstring); refused with random embeddings (their rows would be
    untrained noise). `vocab` ([<pad>, <unk>, words…]) and `max_len` fix the vocabulary and the padded length
    instead of deriving them from `train` (words outside `vocab` read as <unk>)."""
    cfg = config or TextTrainConfig()
    xtr, ytr, xva, yva = _check_inputs(cfg, train, validation, n_classes, rationales, extra_vocab)
    if vocab is not None and (list(vocab[:2]) != [PAD, UNK] or len(set(vocab)) != len(vocab)):
        raise ValueError(f"a fixed vocab must start with {PAD!r}, {UNK!r} and hold each word once")
    if max_len is not None and (type(max_len) is not int or max_len < 1):
        raise ValueError(f"a fixed max_len must be a positive integer, got {max_len!r}")
    key = _training_key(cfg, xtr, ytr, xva, yva, rationales, extra_vocab, vocab, max_len)
    cfg_path = out_dir / "config.json"
    existing = None if overwrite else trained_config(cfg_path, key)
    if existing is not None:
        console.print(f"[green]{name}: already trained on this corpus (overwrite to retrain)")
        return existing
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    allocator.tune()
    run = _prepare(cfg, name, key, n_classes, xtr, ytr, xva, yva, rationales, extra_vocab, vocab, max_len)
    out_dir.mkdir(parents=True, exist_ok=True)
    ckpt = out_dir / "checkpoint.pt"
    state, best = _resume(run, ckpt, overwrite)
    t0 = time.perf_counter()
    run.module.load_state_dict(_fit(run, ckpt, state, best))
    _save(run, out_dir, state, test, t0, extra_vocab)
    ckpt.unlink(missing_ok=True)
    return json.loads(cfg_path.read_text())
