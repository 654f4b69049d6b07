"""L2X (Chen et al. 2018, "Learning to Explain"), own PyTorch implementation of the word-level text
version (Jianbo-Lab/L2X `imdb-word/explain.py`, SPECS §4.5), with the paper's settings for the RCNN
verification (Camburu et al. 2019) and a regression adaptation.

Model
-----
* **Selector** (per-position logits): embedding → conv1d(filters, width 3, same, ReLU) → {global: max over
  positions → dense(filters, ReLU); local: two more conv1d(filters, width 3, same, ReLU)} → the global vector
  tiled along the positions, concatenated with the local features → dropout 0.2 → conv1d(filters, width 1,
  ReLU) → conv1d(1, width 1) = logit per position. Padding is masked after every convolution and in the
  max, so a document's logits do not depend on the documents padded beside it.
* **Relaxed top-K** (training): K independent Gumbel-softmax samples over the positions (temperature
  τ = 0.5), element-wise max over the K samples → a soft mask; **hard top-K** of the logits at validation.
* **Approximator**: a second embedding multiplied by the mask, summed over positions and divided by K →
  dense(250, ReLU) → output. Mini-batches: the training texts sorted by length, cut into batches of 40,
  the batch order shuffled every epoch (little padding; the reference pads everything to 400) [I].
  Regression models (`model.task == "regression"`, SPECS §4.5 [I]): one
  sigmoid unit, MSE to the model's prediction; classifiers: softmax, cross-entropy to the model's class
  probabilities. RMSprop (Keras defaults: lr 1e-3, ρ 0.9, ε 1e-7), batch 40.
* Paper settings [P]: 200-d embeddings (the RCNN's), up to 30 epochs (the reference: 5), K = 23 / 18 / 13 for
  appearance / aroma / palate (the mean number of human-highlighted tokens). `k = 0` (default) takes K
  from the model's `aspect` when it states one, else 23. The best epoch on a held-out 10 % of the training
  texts (by the approximator's loss with the hard top-K mask) is kept [I]; training stops after `patience`
  epochs without improvement [I].

What it learns from (never ground truth)
----------------------------------------
L2X is trained on the *model's own predictions* over a corpus, not on labels. The corpus (`train_on`):
* `"model-texts"` (default): the unlabeled texts the model exposes (`model.unlabeled_texts()` — for the
  RCNN, its training reviews as tokens only). One explainer per (model, corpus, seed), shared by every
  batch; documents are truncated to `maxlen` = 256 tokens for training. Models that expose no texts are
  unsupported (`unsupported(model)` says so).
* `"batch"`: the batch's own documents — works on any text model, but the explanation of a document then
  depends on its batch companions (an L2X trained on few documents).
Vocabulary: the `vocab_size` − 2 most frequent corpus words, plus padding and unknown. Both
embeddings start from the model's own word vectors when the model is a white box (`model.embed`, SPECS
§4.5 [I]; `init = "model"`), otherwise uniform(±0.05) (Keras' default), and are trained.

Scores: the selector's logit per position, shifted to be non-negative (logit − the document's smallest
logit), so ranking by score, signed or absolute, is ranking by logit; the top-K positions are L2X's
selection (`select`). Deterministic for a seed (the run seed `batch.seed`): initialisation, shuffling,
dropout and Gumbel noise are drawn from generators seeded by it. The trained selector is cached on disk
(`$XAIBENCH_SCRATCH/selectors/<key>.pt`, the submission's own scratch folder; key = parameters, seed, a
hash of the model's weights — or of its predictions for a black box — and of the corpus), so re-runs
reuse it. The first `explain` call trains (minutes at the paper's settings on a CPU): evaluate with
`--timeout 0` (the runner's per-instance limit would otherwise interrupt the training); `max_texts` /
`epochs` shorten it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from submissions.text_common import documents, explain_nonempty, predict_in_chunks

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model

ASPECT_K = {"appearance": 23, "aroma": 18, "palate": 13}  # [P] Camburu et al.: mean human highlights
DEFAULT_K = 23
TRAIN_ON = ("model-texts", "batch")
INITS = ("model", "random")
PAD, UNK = 0, 1


@dataclass(frozen=True)
class Params:
    """L2X's training parameters, checked and typed (the constructor's arguments but `cache` and `verbose`;
    `asdict` of them is part of a trained selector's cache key)."""

    k: int
    epochs: int
    patience: int
    batch_size: int
    tau: float
    filters: int
    hidden: int
    kernel_size: int
    dropout: float
    lr: float
    embed_dim: int
    maxlen: int
    vocab_size: int
    val_fraction: float
    init: str
    train_on: str
    max_texts: int


class Selector(nn.Module):
    """L2X's selector network (module docstring): ids (B, L), mask (B, L) → logits (B, L), −inf on padding."""

    def __init__(self, vocab_size: int, dim: int, filters: int = 100, kernel: int = 3, dropout: float = 0.2) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.conv1 = nn.Conv1d(dim, filters, kernel, padding=kernel // 2)
        self.glob = nn.Linear(filters, filters)
        self.conv2 = nn.Conv1d(filters, filters, kernel, padding=kernel // 2)
        self.conv3 = nn.Conv1d(filters, filters, kernel, padding=kernel // 2)
        self.dropout = nn.Dropout(dropout)
        self.conv4 = nn.Conv1d(2 * filters, filters, 1)
        self.out = nn.Conv1d(filters, 1, 1)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per-position logits (B, L), −inf at the padding."""
        m = mask.unsqueeze(1).to(torch.float32)  # (B, 1, L)
        x = self.embedding(ids).transpose(1, 2) * m  # (B, D, L)
        first = F.relu(self.conv1(x)) * m
        glob = F.relu(self.glob(first.max(dim=2).values))  # ReLU outputs ≥ 0: zeroed padding never wins
        local = F.relu(self.conv2(first)) * m
        local = F.relu(self.conv3(local)) * m
        both = torch.cat([glob.unsqueeze(2).expand(-1, -1, local.shape[2]), local], dim=1)
        h = F.relu(self.conv4(self.dropout(both))) * m
        return self.out(h).squeeze(1).masked_fill(~mask, float("-inf"))


class Approximator(nn.Module):
    """Mask-weighted bag of embeddings / K → dense(hidden, ReLU) → outputs (logits or a pre-sigmoid value)."""

    def __init__(self, vocab_size: int, dim: int, k: int, hidden: int = 250, n_out: int = 1) -> None:
        super().__init__()
        self.k = int(k)
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.hidden = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, n_out)

    def forward(self, ids: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """The output (B, n_out) from the bag of embeddings weighted by the (soft or hard) selection."""
        bag = (self.embedding(ids) * weights.unsqueeze(-1)).sum(1) / self.k
        return self.out(F.relu(self.hidden(bag)))


def relaxed_top_k(logits: torch.Tensor, k: int, tau: float, generator: torch.Generator) -> torch.Tensor:
    """K Gumbel-softmax samples over positions, element-wise max (B, L); padding (−inf) gets 0."""
    b, length = logits.shape
    u = torch.rand((b, k, length), generator=generator).clamp_(min=torch.finfo(torch.float32).tiny)
    noisy = (logits.unsqueeze(1) - torch.log(-torch.log(u))) / tau
    return torch.softmax(noisy, dim=2).max(dim=1).values


def hard_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    """1.0 at the k largest logits of every row (ties: earlier position first), 0 elsewhere (B, L)."""
    finite = torch.isfinite(logits)
    order = torch.argsort(-logits.masked_fill(~finite, float("-inf")), dim=1, stable=True)
    out = torch.zeros_like(logits)
    take = order[:, :k]
    out.scatter_(1, take, 1.0)
    return out * finite


def _encode(docs: Sequence[Sequence[str]], index: dict[str, int]) -> list[np.ndarray]:
    return [np.fromiter((index.get(w, UNK) for w in d), dtype=np.int64, count=len(d)) for d in docs]


def _pad(ids: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    length = max([1] + [len(i) for i in ids])
    out = np.zeros((len(ids), length), dtype=np.int64)
    for n, i in enumerate(ids):
        out[n, :len(i)] = i
    t = torch.from_numpy(out)
    lengths = torch.tensor([len(i) for i in ids])
    return t, torch.arange(length)[None, :] < lengths[:, None]


def _digest_docs(docs: Sequence[Sequence[str]]) -> str:
    h = hashlib.sha256()
    for d in docs:
        h.update("\x1f".join(d).encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()


def _model_fingerprint(model: Any, probe: Sequence[Sequence[str]]) -> str:
    """sha256 of the module's weights (white box) or of the model's outputs on `probe` (black box)."""
    h = hashlib.sha256()
    module = getattr(model, "module", None)
    if module is not None:
        for name, t in sorted(module.state_dict().items()):
            h.update(name.encode())
            h.update(t.detach().cpu().contiguous().numpy().tobytes())
    else:
        h.update(str(getattr(model, "name", "")).encode())
        h.update(np.asarray(model.predict([list(d) for d in probe]), dtype=np.float32).tobytes())
    return h.hexdigest()


class Trained:
    """A trained selector with its vocabulary."""

    def __init__(self, selector: Selector, vocab: list[str], k: int, info: dict[str, Any]) -> None:
        self.selector = selector.eval()
        self.vocab = vocab
        self.index = {w: i for i, w in enumerate(vocab)}
        self.k = k
        self.info = info

    def logits(self, docs: Sequence[Sequence[str]], chunk: int = 64) -> list[np.ndarray]:
        """The selector's logit per position of each document, `chunk` documents per pass."""
        out: list[np.ndarray] = []
        with torch.no_grad():
            for s in range(0, len(docs), chunk):
                part = docs[s:s + chunk]
                ids, mask = _pad(_encode(part, self.index))
                lg = self.selector(ids, mask).double().numpy()
                out += [lg[n, :len(d)].copy() for n, d in enumerate(part)]
        return out


class L2X:
    """L2X: a selector trained so that its K chosen words let an approximator reproduce the model's output.

    Chen, Song, Wainwright & Jordan 2018, Learning to Explain: An Information-Theoretic Perspective on Model
    Interpretation, ICML, https://arxiv.org/abs/1802.07814 (own PyTorch port of the word-level version,
    trained on the model's own predictions — module docstring). Score of a word = its selector logit,
    shifted to be ≥ 0. Text only.

    Args:
        k (int, optional): words selected; 0 = by the model's aspect (appearance 23, aroma 18, palate 13
            — Camburu et al.), else 23. Default: 0
        epochs (int, optional): training epochs at most (Camburu et al.: 30; the L2X reference: 5); the
            best held-out epoch is kept. Default: 30
        patience (int, optional): stop after this many epochs without held-out improvement (0 = never).
            Default: 5
        batch_size (int, optional): training documents per step (the L2X reference). Default: 40
        tau (float, optional): Gumbel-softmax temperature (the L2X reference). Default: 0.5
        filters (int, optional): selector convolution width (the L2X reference). Default: 100
        hidden (int, optional): approximator dense layer (the L2X reference). Default: 250
        kernel_size (int, optional): selector convolution window. Default: 3
        dropout (float, optional): selector dropout. Default: 0.2
        lr (float, optional): RMSprop learning rate (Keras defaults otherwise). Default: 1e-3
        embed_dim (int, optional): embedding size when the model gives no vectors (init "random");
            otherwise the model's. Default: 200
        maxlen (int, optional): training documents truncated to this many tokens. Default: 256
        vocab_size (int, optional): vocabulary size: the vocab_size − 2 most frequent corpus words,
            padding and unknown. Default: 20000
        val_fraction (float, optional): held-out share of the training texts (best-epoch selection).
            Default: 0.1
        init (str, optional): "model" = both embeddings start from the model's vectors (white box);
            "random" = uniform(±0.05). Default: "model"
        train_on (str, optional): "model-texts" = `model.unlabeled_texts()`; "batch" = the batch's own
            documents. Default: "model-texts"
        max_texts (int, optional): train on the first N texts only (0 = all; quick runs). Default: 0
        cache (bool, optional): keep trained selectors in the submission's scratch folder
            (`$XAIBENCH_SCRATCH/selectors`). Default: True
        verbose (bool, optional): print each epoch's losses. Default: True
    """

    def __init__(self, k: int = 0, epochs: int = 30, patience: int = 5, batch_size: int = 40, tau: float = 0.5,
                 filters: int = 100, hidden: int = 250, kernel_size: int = 3, dropout: float = 0.2,
                 lr: float = 1e-3, embed_dim: int = 200, maxlen: int = 256, vocab_size: int = 20000,
                 val_fraction: float = 0.1, init: str = "model", train_on: str = "model-texts",
                 max_texts: int = 0, cache: bool = True, verbose: bool = True) -> None:
        if k < 0:
            raise ValueError(f"k must be ≥ 0 (0 = by the model's aspect), got {k}")
        if epochs < 1 or batch_size < 1 or maxlen < 1 or vocab_size < 3:
            raise ValueError("epochs, batch_size and maxlen must be ≥ 1 and vocab_size ≥ 3")
        if tau <= 0:
            raise ValueError(f"tau must be > 0, got {tau}")
        if not 0.0 <= val_fraction < 1.0:
            raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        if train_on not in TRAIN_ON:
            raise ValueError(f"train_on must be one of {TRAIN_ON}, got {train_on!r}")
        self.params = Params(k=int(k), epochs=int(epochs), patience=int(patience), batch_size=int(batch_size),
                             tau=float(tau), filters=int(filters), hidden=int(hidden), kernel_size=int(kernel_size),
                             dropout=float(dropout), lr=float(lr), embed_dim=int(embed_dim), maxlen=int(maxlen),
                             vocab_size=int(vocab_size), val_fraction=float(val_fraction), init=init,
                             train_on=train_on, max_texts=int(max_texts))
        self.cache = bool(cache)
        self.verbose = bool(verbose)
        self._memo: dict[tuple[int, int | str, int], Trained] = {}
        self.last_trained: bool | None = None  # did the last explain train (True) or reuse (False)?

    # -- capability ------------------------------------------------------------------------------
    def unsupported(self, model: Model) -> str | None:
        """Why L2X cannot explain `model` (no texts to learn from with train_on="model-texts"), or None."""
        if self.params.train_on == "model-texts" and not self._texts(model):
            return (f"l2x learns from the model's unlabeled texts and model {getattr(model, 'name', '?')} exposes "
                    "none (unlabeled_texts()); pass train_on=batch to train on each batch's documents")
        return None

    @staticmethod
    def _texts(model) -> list[list[str]] | None:
        fn = getattr(model, "unlabeled_texts", None)
        texts = fn() if callable(fn) else None
        return texts if texts else None

    def k_for(self, model: Model) -> int:
        """K for `model`: the `k` parameter, else by the model's aspect (`ASPECT_K`), else 23."""
        if self.params.k > 0:
            return self.params.k
        aspect = getattr(model, "aspect", None)
        return ASPECT_K.get(str(aspect).lower(), DEFAULT_K) if aspect else DEFAULT_K

    # -- the explainer contract --------------------------------------------------------------------
    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One score per word: the selector's logit minus the document's smallest (trains on first use)."""
        reason = self.unsupported(model)
        if reason:
            raise ValueError(reason)
        docs = documents(batch)

        def run(idx: list[int]) -> list[np.ndarray]:
            trained = self.trained(model, [docs[i] for i in idx], batch.seed)
            return [(lg - lg.min()).astype(np.float32) for lg in trained.logits([docs[i] for i in idx])]

        return explain_nonempty(docs, run)

    def select(self, model: Model, batch: Batch) -> list[np.ndarray]:
        """L2X's selection per document: the top-K positions by logit (bool per position, min(K, n) True)."""
        docs = documents(batch)
        nonempty = [d for d in docs if d]
        trained = self.trained(model, nonempty, batch.seed) if nonempty else None
        out = []
        for d in docs:
            sel = np.zeros(len(d), dtype=bool)
            if d and trained is not None:  # a document with words: `nonempty` held it, so there is a selector
                lg = trained.logits([d])[0]
                sel[np.argsort(-lg, kind="stable")[:trained.k]] = True
            out.append(sel)
        return out

    # -- training ------------------------------------------------------------------------------------
    def trained(self, model: Model, batch_docs: Sequence[Sequence[str]], seed: int) -> Trained:
        """The selector for (model, corpus, seed): from memory, the disk cache, or trained now."""
        p = self.params
        memo: tuple[int, int | str, int]
        if p.train_on == "model-texts":
            corpus = self._texts(model)
            if corpus is None:
                raise ValueError(self.unsupported(model) or "l2x has no training text (the model exposes none)")
            memo = (id(model), id(corpus), int(seed))
        else:
            corpus = [list(d) for d in batch_docs if d]
            memo = (id(model), _digest_docs(corpus), int(seed))
        if memo in self._memo:
            self.last_trained = False
            return self._memo[memo]
        if p.max_texts > 0:
            corpus = corpus[:p.max_texts]
        texts = [list(d[:p.maxlen]) for d in corpus if d]
        if not texts:
            raise ValueError("l2x has no training text (an empty corpus)")
        k = self.k_for(model)
        key_src = {"params": asdict(p), "k": k, "seed": int(seed), "texts": _digest_docs(texts),
                   "model": _model_fingerprint(model, texts[:64]), "version": 1}
        key = hashlib.sha256(json.dumps(key_src, sort_keys=True).encode()).hexdigest()[:24]
        path = self._cache_dir() / f"{key}.pt"
        trained = self._load(path, k) if self.cache else None
        self.last_trained = trained is None
        if trained is None:
            trained = self._train(model, texts, k, int(seed))
            trained.info["key"] = key
            if self.cache:
                self._save(path, trained)
        self._memo[memo] = trained
        return trained

    @staticmethod
    def _cache_dir() -> Path:
        """The submission's own scratch folder (`$XAIBENCH_SCRATCH`, writable in the harness's sandbox
        and kept between runs); outside the harness, `$XAIBENCH_HOME/scratch/l2x`."""
        scratch = os.environ.get("XAIBENCH_SCRATCH")
        if scratch:
            return Path(scratch) / "selectors"
        from benchmark.resources import data_home

        return data_home() / "scratch" / "l2x" / "selectors"

    def _load(self, path: Path, k: int) -> Trained | None:
        if not path.exists():
            return None
        try:
            saved = torch.load(path, weights_only=True)
            sel = Selector(len(saved["vocab"]), int(saved["dim"]), self.params.filters,
                           self.params.kernel_size, self.params.dropout)
            sel.load_state_dict(saved["selector"])
        except Exception:  # noqa: BLE001 - a damaged cache entry is retrained, never trusted
            return None
        return Trained(sel, list(saved["vocab"]), k, json.loads(saved["info"]))

    @staticmethod
    def _save(path: Path, trained: Trained) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        torch.save({"selector": trained.selector.state_dict(), "vocab": trained.vocab,
                    "dim": trained.selector.embedding.embedding_dim, "info": json.dumps(trained.info)}, tmp)
        tmp.replace(path)

    def _vocab(self, texts: Sequence[Sequence[str]]) -> list[str]:
        counts = Counter(w for d in texts for w in d)
        words = sorted(counts, key=lambda w: (-counts[w], w))[: self.params.vocab_size - 2]
        return ["<pad>", "<unk>", *words]

    def _initial_vectors(self, model, vocab: list[str]) -> np.ndarray | None:
        """The model's own vectors of `vocab` (white box, init="model"), else None (random)."""
        if self.params.init != "model" or getattr(model, "module", None) is None or not callable(
                getattr(model, "embed", None)):
            return None
        words = vocab[2:]
        row = max(1, min(64, int(getattr(model, "max_len", None) or 64)))
        chunks = [words[s:s + row] for s in range(0, len(words), row)]
        vecs = []
        for s in range(0, len(chunks), 256):
            part = chunks[s:s + 256]
            emb = model.embed(part).detach().cpu().float().numpy()
            vecs += [emb[n, :len(c)] for n, c in enumerate(part)]
        body = np.concatenate(vecs) if vecs else np.zeros((0, 1), np.float32)
        out = np.zeros((len(vocab), body.shape[1]), dtype=np.float32)
        out[2:] = body
        return out

    def _train(self, model, texts: list[list[str]], k: int, seed: int) -> Trained:
        p = self.params
        regression = getattr(model, "task", "") == "regression"
        y = predict_in_chunks(model, texts)  # the model's own predictions: L2X's only supervision
        if regression:
            y = y[:, :1]
        vocab = self._vocab(texts)
        index = {w: i for i, w in enumerate(vocab)}
        vectors = self._initial_vectors(model, vocab)
        dim = p.embed_dim if vectors is None else vectors.shape[1]
        ids = _encode(texts, index)
        rng = np.random.RandomState(seed)
        perm = rng.permutation(len(texts))
        n_val = int(round(p.val_fraction * len(texts))) if len(texts) >= 10 else 0
        val, tr = perm[:n_val], perm[n_val:]
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            selector = Selector(len(vocab), dim, p.filters, p.kernel_size, p.dropout)
            approx = Approximator(len(vocab), dim, k, p.hidden, y.shape[1])
            for emb in (selector.embedding, approx.embedding):
                with torch.no_grad():
                    if vectors is None:
                        nn.init.uniform_(emb.weight, -0.05, 0.05)
                    else:
                        emb.weight.copy_(torch.from_numpy(vectors))
                    emb.weight[PAD].zero_()
            params = [*selector.parameters(), *approx.parameters()]
            opt = torch.optim.RMSprop(params, lr=p.lr, alpha=0.9, eps=1e-7)
            gumbel = torch.Generator().manual_seed(seed)
            yt = torch.from_numpy(y.astype(np.float32))

            def loss_of(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
                if regression:
                    return ((torch.sigmoid(out) - target) ** 2).mean()
                return -(target * torch.log_softmax(out, dim=1)).sum(1).mean()

            lengths = np.array([len(i) for i in ids])

            def batches(rows: np.ndarray, shuffle: bool) -> list[np.ndarray]:
                """Rows sorted by length cut into batches (little padding), batch order shuffled [I]."""
                rows = rows[np.argsort(lengths[rows], kind="stable")]
                chunks = [rows[s:s + p.batch_size] for s in range(0, len(rows), p.batch_size)]
                return [chunks[i] for i in rng.permutation(len(chunks))] if shuffle else chunks

            best, best_state, best_epoch, history = None, None, 0, []
            for epoch in range(1, p.epochs + 1):
                selector.train()
                approx.train()
                total = 0.0
                for rows in batches(tr, True):
                    bid, mask = _pad([ids[r] for r in rows])
                    weights = relaxed_top_k(selector(bid, mask), k, p.tau, gumbel)
                    loss = loss_of(approx(bid, weights), yt[rows])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += float(loss.detach()) * len(rows)
                selector.eval()
                approx.eval()
                rows_val = val if len(val) else tr
                with torch.no_grad():
                    vl = 0.0
                    for rows in batches(rows_val, False):
                        bid, mask = _pad([ids[r] for r in rows])
                        vl += float(loss_of(approx(bid, hard_top_k(selector(bid, mask), k)), yt[rows])) * len(rows)
                    vl /= max(1, len(rows_val))
                history.append({"epoch": epoch, "train_loss": total / max(1, len(tr)), "val_loss": vl})
                if best is None or vl < best:
                    best, best_epoch = vl, epoch
                    best_state = {n: t.clone() for n, t in selector.state_dict().items()}
                if self.verbose:
                    _log(f"  l2x epoch {epoch}: train {history[-1]['train_loss']:.5f} held-out (hard top-{k}) "
                         f"{vl:.5f}" + (" *" if best_epoch == epoch else ""))
                if p.patience > 0 and epoch - best_epoch >= p.patience:
                    break
            assert best_state is not None  # epochs ≥ 1, and the first epoch is the best so far
            selector.load_state_dict(best_state)
        base = float(((y[val] - y[tr].mean(0)) ** 2).mean()) if regression and len(val) else None
        info = {"k": k, "texts": len(texts), "train": len(tr), "val": len(val), "best_epoch": best_epoch,
                "best_val_loss": best, "baseline_val_mse": base, "history": history, "dim": dim,
                "init": "model" if vectors is not None else "random", "regression": regression}
        return Trained(selector, vocab, k, info)


def _log(msg: str) -> None:
    try:
        from benchmark.progress import console

        console.print(msg)
    except Exception:  # noqa: BLE001 - logging never breaks an explanation
        pass
