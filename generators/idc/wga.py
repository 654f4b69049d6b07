"""IDC Method 1 — Weighted Gram Activation (WGA) relevance scores (SPECS §5.3) and the Hybrid
vocabulary (SPECS §5.5), on the Kim CNN of `benchmark.models.text`.

For a document ``d = (w_0 … w_{n-1})`` and target class ``c`` (SPECS §5.3 steps 1–7)::

    FM_r            post-ReLU feature maps of window size r, (n windows × q filters)     [step 1]
    GM_r = ∂y_c/∂FM_r  one backward pass of the class-c logit                             [step 2]
    δ_r[j] = max_k GM_r[j,k]                                                             [step 3]
    z_r[j] = ReLU(Σ_k δ_r[j]·FM_r[j,k])                                                  [step 4, Eq. 1]
    s(p,k,j) = e(w_p)·f_k[i] / Conv(window_j, f_k) · z_r[j]   (p = j − ⌊(r−1)/2⌋ + i)     [step 5, Eq. 2]
    R_r[p] = Σ_{j ∋ p} (1/q'_j) Σ_{k kept} s(p,k,j)                                       [step 6]
    R = mean_r R_r, negatives clipped, divided by the document maximum                    [step 7]

with ``Conv(window_j, f_k) = Σ_i e(w_{j−a+i})·f_k[i]`` (bias excluded), filter k of window j skipped
when ``FM_r[j,k] = 0`` or ``|Conv| < 1e-8``, ``q'_j`` the kept filters of window j, and padding
positions (zero embeddings) contributing and receiving nothing. Only the document's own ``n``
windows are used (the paper's ``FM ∈ R^{n×q}``); ``window_positions="all"`` also uses the
``⌊(r−1)/2⌋`` trailing windows that straddle the end of the document.

Step 8 (`relevance_scores`): ``RS[w,c]`` = average of ``R[p]`` over every occurrence ``p`` of ``w`` in
the documents the model classifies correctly as ``c`` (0 if none). `wga_features` applies the α/β
post-processing (`benchmark.metrics.interpretation.select_features`); `hybrid_vocabulary` ranks words
by ``max_c RS[w,c]``.

Every [I] choice of SPECS §5.3 is a field of `WgaOptions` (SPECS defaults), which every function takes
as ``options=`` and/or as keyword overrides (``document_relevance(..., bias_in_denominator=True)``).

The computation is vectorised over the documents of a batch, all windows and all filters (one matrix
product per window size, then ``unfold`` + ``einsum`` + ``index_add``); the only Python loop is over the
window sizes. Documents are batched by similar length. The distribution step (Eq. 2) runs in float64 by
default (``compute_dtype``) so that the 1e-8 skip threshold is meaningful; forward and backward passes run
in the model's dtype, in eval mode.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field, fields, replace
from typing import Any, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from benchmark.progress import progress_bar

__all__ = [
    "WgaOptions",
    "WgaScores",
    "document_relevance",
    "hybrid_vocabulary",
    "relevance_scores",
    "wga_features",
]

_CHOICES = {
    "gradient_target": ("logit", "probability", "log_probability"),
    "filter_aggregation": ("mean", "mean_all", "sum"),
    "window_aggregation": ("sum", "mean"),
    "size_aggregation": ("mean", "sum", "max"),
    "normalisation": ("max", "clip", "none"),
    "window_positions": ("document", "all"),
    "compute_dtype": ("float64", "float32"),
}


@dataclass(frozen=True)
class WgaOptions:
    """The operational ([I]) choices of SPECS §5.3, defaults as specified there.

    * ``gradient_target`` — what step 2 differentiates: the pre-softmax ``"logit"`` (SPECS), the
      softmax ``"probability"`` or the ``"log_probability"`` of the target class.
    * ``bias_in_denominator`` — Eq. 2's ``Conv(window, f)`` with the filter bias added (SPECS: no, so
      the shares of a window's words sum to ``z``).
    * ``skip_threshold`` — filters with ``|Conv| < skip_threshold`` are skipped (SPECS 1e-8).
    * ``skip_inactive`` — filters with ``FM[j,k] = 0`` (ReLU off) are skipped (SPECS: yes).
    * ``filter_aggregation`` — over the filters of one window: ``"mean"`` over the ``q'`` kept filters
      (SPECS), ``"mean_all"`` (divide by ``q``) or ``"sum"``.
    * ``window_aggregation`` — over the windows containing a position: ``"sum"`` (SPECS) or
      ``"mean"`` (divide by the number of the document's windows containing the position).
    * ``size_aggregation`` — over the window sizes: ``"mean"`` (SPECS, paper), ``"sum"`` or ``"max"``.
    * ``normalisation`` — per document: ``"max"`` = clip negatives, divide by the maximum (SPECS);
      ``"clip"`` = clip only; ``"none"``.
    * ``window_positions`` — ``"document"``: windows ``j < n`` (the paper's ``n`` r-grams, SPECS);
      ``"all"``: also the trailing windows ``n ≤ j < n + ⌊(r−1)/2⌋`` (within ``max_len``) that the
      "same"-padded model computes and that still cover words of the document.
    * ``compute_dtype`` — dtype of the Eq. 2 distribution step (``"float64"`` or ``"float32"``).
    """

    gradient_target: str = "logit"
    bias_in_denominator: bool = False
    skip_threshold: float = 1e-8
    skip_inactive: bool = True
    filter_aggregation: str = "mean"
    window_aggregation: str = "sum"
    size_aggregation: str = "mean"
    normalisation: str = "max"
    window_positions: str = "document"
    compute_dtype: str = "float64"

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"WgaOptions.{name} must be one of {allowed}, not {getattr(self, name)!r}")
        if not self.skip_threshold >= 0:
            raise ValueError("WgaOptions.skip_threshold must be ≥ 0")


def _options(options: WgaOptions | None, overrides: dict[str, Any]) -> WgaOptions:
    base = options if options is not None else WgaOptions()
    names = {f.name for f in fields(WgaOptions)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise TypeError(f"unknown WGA option(s) {unknown}; known: {sorted(names)}")
    return replace(base, **overrides) if overrides else base


# ----------------------------------------------------------------------------------------------
# steps 1–7: per-document heat maps
# ----------------------------------------------------------------------------------------------
def _module(model):
    """The KimCNN inside a `WordModel` (or the module itself)."""
    module = getattr(model, "module", model)
    for attr in ("embedding", "convs", "windows", "feature_maps", "classify"):
        if not hasattr(module, attr):
            raise TypeError(f"WGA needs a KimCNN-like module (missing {attr!r}), got {type(module).__name__}")
    return module


def _forward_backward(module, ids: torch.Tensor, mask: torch.Tensor, targets: torch.Tensor | None,
                      opts: WgaOptions):
    """Steps 1–2: (masked embeddings, feature maps, their gradients, logits, targets used)."""
    with torch.no_grad():
        emb = module.embedding(ids) * mask.unsqueeze(-1).to(module.embedding.weight.dtype)
        maps = [m.detach().requires_grad_(True) for m in module.feature_maps(emb)]
    with torch.enable_grad():
        logits = module.classify(maps)
        if targets is None:
            targets = logits.detach().argmax(1)
        if opts.gradient_target == "logit":
            scores = logits
        elif opts.gradient_target == "probability":
            scores = torch.softmax(logits, dim=1)
        else:
            scores = torch.log_softmax(logits, dim=1)
        y = scores.gather(1, targets.view(-1, 1)).sum()  # documents are independent: one backward
        grads = torch.autograd.grad(y, maps)
    return emb, [m.detach() for m in maps], [g.detach() for g in grads], logits.detach(), targets


def _distribute(module, emb: torch.Tensor, maps, grads, lengths: torch.Tensor, opts: WgaOptions) -> torch.Tensor:
    """Steps 3–7 for a batch: (N, L) heat maps (zero beyond each document's length)."""
    dtype = torch.float64 if opts.compute_dtype == "float64" else torch.float32
    n_docs, length, _ = emb.shape
    max_len = maps[0].shape[2]
    e = emb.to(dtype)
    pos = torch.arange(length, device=emb.device)
    in_doc = pos.unsqueeze(0) < lengths.unsqueeze(1)  # (N, L)
    heat = []
    for r, conv, fm_r, gm_r in zip(module.windows, module.convs, maps, grads):
        a, b = (r - 1) // 2, r // 2  # window j covers positions j − a … j + b
        n_win = length if opts.window_positions == "document" else min(max_len, length + a)
        last = lengths if opts.window_positions == "document" else torch.clamp(lengths + a, max=max_len)
        win_ok = torch.arange(n_win, device=emb.device).unsqueeze(0) < last.unsqueeze(1)  # (N, J)
        q = conv.weight.shape[0]
        weight = conv.weight.detach()[:, 0].to(dtype)  # (q, r, D): f_k[i]
        # every word against every filter slice, one matrix product: P[n, p, k, i] = e(w_p)·f_k[i]
        prod = (e.reshape(-1, e.shape[2]) @ weight.permute(2, 0, 1).reshape(e.shape[2], q * r))
        prod = F.pad(prod.view(n_docs, length, q, r), (0, 0, 0, 0, a, n_win + b - length))  # zero padding
        # contrib[n, j, k, i] = P[n, j − a + i, k, i]: the word at offset i of window j against f_k[i]
        contrib = prod.unfold(1, r, 1).diagonal(dim1=3, dim2=4)  # (N, J, q, r), a view
        denom = contrib.sum(3)  # Conv(window_j, f_k), bias excluded
        if opts.bias_in_denominator and conv.bias is not None:
            denom = denom + conv.bias.detach().to(dtype)
        fm = fm_r[:, :, :n_win].transpose(1, 2).to(dtype)  # (N, J, q)
        gm = gm_r[:, :, :n_win].transpose(1, 2).to(dtype)
        delta = gm.max(dim=2).values  # step 3
        z = torch.relu((delta.unsqueeze(2) * fm).sum(2))  # step 4 (Eq. 1)
        keep = (denom.abs() >= opts.skip_threshold) & win_ok.unsqueeze(2)
        if opts.skip_inactive:
            keep &= fm != 0
        if opts.filter_aggregation == "mean":
            scale = z / keep.sum(2).clamp(min=1)
        elif opts.filter_aggregation == "mean_all":
            scale = z / q
        else:
            scale = z
        coef = torch.where(keep, scale.unsqueeze(2) / torch.where(keep, denom, torch.ones_like(denom)),
                           torch.zeros_like(denom))  # z_j / (q'_j · Conv_jk) on kept filters   (N, J, q)
        share = torch.einsum("njk,njki->nji", coef, contrib)  # Σ_k s(p, k, j), p = j − a + i
        # scatter window offsets back to positions: slot m = p + a = j + i
        slots = (torch.arange(n_win, device=emb.device).unsqueeze(1) + torch.arange(r, device=emb.device)).reshape(-1)
        acc = torch.zeros(n_docs, n_win + r - 1, dtype=dtype, device=emb.device)
        acc.index_add_(1, slots, share.reshape(n_docs, -1))
        r_map = acc[:, a: a + length]
        if opts.window_aggregation == "mean":
            count = torch.zeros_like(acc)
            count.index_add_(1, slots, win_ok.to(dtype).unsqueeze(2).expand(-1, -1, r).reshape(n_docs, -1))
            r_map = r_map / count[:, a: a + length].clamp(min=1)
        heat.append(torch.where(in_doc, r_map, torch.zeros_like(r_map)))
    stacked = torch.stack(heat)
    if opts.size_aggregation == "mean":
        rel = stacked.mean(0)
    elif opts.size_aggregation == "sum":
        rel = stacked.sum(0)
    else:
        rel = stacked.max(0).values
    if opts.normalisation != "none":
        rel = rel.clamp(min=0)
    if opts.normalisation == "max":
        top = rel.max(dim=1, keepdim=True).values  # ≥ 0 (or NaN, which propagates)
        rel = torch.where(top == 0, torch.zeros_like(rel), rel / torch.where(top == 0, torch.ones_like(top), top))
    return rel


def _as_lengths(ids: torch.Tensor, lengths) -> torch.Tensor:
    if lengths is None:
        return (ids != 0).sum(1)
    lengths = torch.as_tensor(lengths, dtype=torch.long, device=ids.device).reshape(-1)
    if lengths.shape[0] != ids.shape[0]:
        raise ValueError(f"{lengths.shape[0]} lengths for {ids.shape[0]} documents")
    if len(lengths) and (int(lengths.min()) < 0 or int(lengths.max()) > ids.shape[1]):
        raise ValueError("lengths must lie in [0, ids.shape[1]]")
    return lengths


class _EvalMode:
    """Eval mode (no dropout) for the duration of a call, restoring the module's training flag."""

    def __init__(self, module) -> None:
        self.module, self.was = module, module.training

    def __enter__(self):
        self.module.eval()

    def __exit__(self, *exc) -> None:
        self.module.train(self.was)


def document_relevance(model, ids: torch.Tensor, lengths=None, targets=None, *,
                       options: WgaOptions | None = None, **overrides) -> list[np.ndarray]:
    """WGA word heat maps (SPECS §5.3 steps 1–7) of a batch of documents.

    ``model`` — a `KimCNN` (or a `WordModel` wrapping one); ``ids`` — (N, L) word ids, document ``n``
    in positions ``0 … lengths[n]−1`` (``lengths`` defaults to the count of non-zero ids);
    ``targets`` — the class of each document (default: the model's prediction).
    Returns one float64 array of length ``lengths[n]`` per document, in [0, 1] with the default
    normalisation (all zeros when no position gets positive relevance).
    """
    opts = _options(options, overrides)
    module = _module(model)
    ids = torch.as_tensor(ids, dtype=torch.long)
    if ids.dim() != 2:
        raise ValueError(f"ids must be (N, L), got shape {tuple(ids.shape)}")
    lengths = _as_lengths(ids, lengths)
    if targets is not None:
        targets = torch.as_tensor(targets, dtype=torch.long, device=ids.device).reshape(-1)
    mask = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)
    with _EvalMode(module):
        emb, maps, grads, _, _ = _forward_backward(module, ids, mask, targets, opts)
        rel = _distribute(module, emb, maps, grads, lengths, opts)
    return [rel[n, : int(lengths[n])].cpu().numpy() for n in range(ids.shape[0])]


# ----------------------------------------------------------------------------------------------
# step 8: RS over the correctly classified documents
# ----------------------------------------------------------------------------------------------
@dataclass
class WgaScores:
    """``rs[w, c]`` (|V| × |C|) with ``vocab[w]``, plus bookkeeping.

    ``occurrences[w, c]`` — occurrences of ``w`` in the correctly classified class-``c`` documents;
    ``documents``, ``correct`` and ``used`` count per class (by the true label): all documents, those
    the model classifies correctly, and the correct ones with at least one word of ``vocab`` (those
    that entered RS); ``empty`` — documents with no tokens (skipped, never correct);
    ``zero_relevance`` — correct documents whose heat map is all zeros (they still count: their words
    contribute zeros to the averages).
    """

    rs: np.ndarray
    vocab: list[str]
    occurrences: np.ndarray
    documents: list[int]
    correct: list[int]
    used: list[int]
    empty: int
    zero_relevance: int
    seconds: float
    options: WgaOptions = field(default_factory=WgaOptions)

    @property
    def n_documents(self) -> int:
        return int(sum(self.documents))

    @property
    def n_correct(self) -> int:
        return int(sum(self.correct))

    @property
    def n_used(self) -> int:
        return int(sum(self.used))

    @property
    def accuracy(self) -> float:
        return self.n_correct / self.n_documents if self.n_documents else float("nan")

    @property
    def docs_per_second(self) -> float:
        return self.n_documents / self.seconds if self.seconds > 0 else float("inf")

    def summary(self) -> dict[str, Any]:
        return {"documents": self.documents, "correct": self.correct, "used": self.used, "empty": self.empty,
                "zero_relevance": self.zero_relevance, "accuracy": self.accuracy, "vocabulary": len(self.vocab),
                "seconds": self.seconds, "docs_per_second": self.docs_per_second}


def relevance_scores(model, docs: Sequence[Sequence[str]], labels: Sequence[int],
                     vocab: Sequence[str] | None = None, *, batch_size: int = 256,
                     model_vocab: Sequence[str] | None = None, progress: bool = True,
                     options: WgaOptions | None = None, **overrides) -> WgaScores:
    """``RS`` of SPECS §5.3 step 8 over the documents ``docs`` (token lists) with class indices
    ``labels`` (0 … C−1).

    ``model`` is a `WordModel` wrapping a KimCNN (or a bare KimCNN with ``model_vocab``, whose first
    two entries are ``<pad>``, ``<unk>``). ``vocab`` = the words ``V`` of RS's rows (default: the
    unique words of ``docs``, sorted — ExtractUniqueTerms); occurrences of other words are ignored.
    Words unknown to the model are read as ``<unk>`` but keep their own RS row. Documents are
    processed in batches of similar length; each batch costs one forward and one backward pass.
    """
    opts = _options(options, overrides)
    module = _module(model)
    encode = _encoder(model, module, model_vocab)
    docs = [list(d) for d in docs]
    y_all = np.asarray(labels, dtype=np.int64).reshape(-1)
    if len(y_all) != len(docs):
        raise ValueError(f"{len(y_all)} labels for {len(docs)} documents")
    n_classes = int(module.fc.out_features) if hasattr(module, "fc") else int(y_all.max()) + 1
    if len(y_all) and (y_all.min() < 0 or y_all.max() >= n_classes):
        raise ValueError(f"labels must be class indices in [0, {n_classes})")
    if vocab is None:
        vocab = sorted({w for d in docs for w in d})
    vocab = list(vocab)
    row = {w: i for i, w in enumerate(vocab)}
    if len(row) != len(vocab):
        raise ValueError("vocab has duplicate words")

    sums = np.zeros((len(vocab), n_classes), dtype=np.float64)
    occ = np.zeros((len(vocab), n_classes), dtype=np.int64)
    documents = np.bincount(y_all, minlength=n_classes)
    correct = np.zeros(n_classes, dtype=np.int64)
    used = np.zeros(n_classes, dtype=np.int64)
    empty = zero = 0
    nonempty = [i for i, d in enumerate(docs) if d]
    empty = len(docs) - len(nonempty)
    order = sorted(nonempty, key=lambda i: (-len(docs[i]), i))  # similar lengths per batch
    start = time.perf_counter()
    bar_context = progress_bar(len(docs), "WGA relevance", unit="doc") if progress else nullcontext(_NullBar())
    with _EvalMode(module), bar_context as bar:
        bar.advance(empty)
        for s in range(0, len(order), max(1, int(batch_size))):
            idx = order[s: s + batch_size]
            ids, mask = encode([docs[i] for i in idx])
            lengths = mask.sum(1)
            y = torch.as_tensor(y_all[idx])
            emb, maps, grads, logits, _ = _forward_backward(module, ids, mask, y, opts)
            ok = logits.argmax(1) == y
            if bool(ok.any()):
                sel = ok.nonzero().view(-1)
                rel = _distribute(module, emb[sel], [m[sel] for m in maps], [g[sel] for g in grads],
                                  lengths[sel], opts).cpu().numpy()
                rows, cols, vals = [], [], []
                for k, n in enumerate(sel.tolist()):
                    i, c = idx[n], int(y_all[idx[n]])
                    correct[c] += 1
                    heat = rel[k, : len(docs[i])]
                    zero += int(not (heat > 0).any())
                    where = [(p, row[w]) for p, w in enumerate(docs[i]) if w in row]
                    if where:
                        used[c] += 1
                        pos, wid = zip(*where)
                        rows.append(np.asarray(wid))
                        cols.append(np.full(len(wid), c))
                        vals.append(heat[list(pos)])
                if rows:
                    r_, c_ = np.concatenate(rows), np.concatenate(cols)
                    np.add.at(sums, (r_, c_), np.concatenate(vals))
                    np.add.at(occ, (r_, c_), 1)
            bar.advance(len(idx))
            bar.update(description=f"WGA relevance ({int(correct.sum())} correct)")
    rs = np.divide(sums, occ, out=np.zeros_like(sums), where=occ > 0)
    return WgaScores(rs=rs, vocab=vocab, occurrences=occ, documents=documents.tolist(), correct=correct.tolist(),
                     used=used.tolist(), empty=empty, zero_relevance=zero,
                     seconds=time.perf_counter() - start, options=opts)


class _NullBar:
    def advance(self, n: float = 1) -> None:
        pass

    def update(self, **kwargs) -> None:
        pass


def _encoder(model, module, model_vocab):
    if hasattr(model, "ids") and model_vocab is None:
        return model.ids
    if model_vocab is None:
        raise TypeError("a bare KimCNN needs model_vocab= (or pass a WordModel)")
    index = {w: i for i, w in enumerate(model_vocab)}
    max_len = getattr(module, "max_len", None)

    def ids_of(tokens):
        length = max([1] + [len(t) for t in tokens])
        if max_len is not None and length > max_len:
            raise ValueError(f"document of {length} tokens exceeds the model's max_len {max_len}")
        ids = torch.zeros((len(tokens), length), dtype=torch.long)
        for n, t in enumerate(tokens):
            if t:
                ids[n, : len(t)] = torch.tensor([index.get(w, 1) for w in t], dtype=torch.long)
        mask = torch.arange(length).unsqueeze(0) < torch.tensor([len(t) for t in tokens]).unsqueeze(1)
        return ids, mask

    return ids_of


# ----------------------------------------------------------------------------------------------
# post-processing and the Hybrid vocabulary
# ----------------------------------------------------------------------------------------------
def _rs_vocab(rs, vocab: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    if isinstance(rs, WgaScores):
        vocab = rs.vocab if vocab is None else vocab
        rs = rs.rs
    rs = np.asarray(rs, dtype=np.float64)
    if vocab is None:
        raise TypeError("vocab is required with a bare RS matrix")
    vocab = list(vocab)
    if rs.ndim != 2 or rs.shape[0] != len(vocab):
        raise ValueError(f"RS must be (|V|, |C|) = ({len(vocab)}, C), got {rs.shape}")
    return rs, vocab


def wga_features(rs, vocab: Sequence[str] | None = None, alpha: float = 0.3,
                 beta: float = 0.25) -> list[list[tuple[str, float]]]:
    """The WGA pseudo ground truth (SPECS §5.3, Fig. 1 lines 3–9): for each class ``c`` the words with
    ``RS[w,c] ≥ α`` and ``RS[w,c] − RS[w,ĉ] ≥ β`` for every other class, as ``(word, RS[w,c])``
    sorted by score (descending, ties by word). ``rs`` is an RS matrix (with ``vocab``) or `WgaScores`.
    """
    from benchmark.metrics.interpretation import select_features

    rs, vocab = _rs_vocab(rs, vocab)
    out = []
    for c, sel in enumerate(select_features(rs, alpha=alpha, beta=beta)):
        sel = np.asarray(sel)
        index = np.flatnonzero(sel) if sel.dtype == bool else sel.astype(np.int64).reshape(-1)
        words = [(vocab[i], float(rs[i, c])) for i in index]
        out.append(sorted(words, key=lambda t: (-t[1], t[0])))
    return out


def hybrid_vocabulary(rs, vocab: Sequence[str] | None = None, size: int = 3000, rank: str = "max") -> list[str]:
    """Hybrid's ``V`` (SPECS §5.5): the ``size`` words with the highest WGA relevance, ties by word.

    ``rank`` [I]: ``"max"`` — ``max_c RS[w,c]`` (SPECS' reading; favours words seen once at a document's
    maximum); ``"total"`` — ``max_c RS[w,c]·occurrences[w,c]``, the word's summed relevance in its best
    class (favours frequent relevant words; needs a `WgaScores`)."""
    if rank not in ("max", "total"):
        raise ValueError(f"rank must be 'max' or 'total', got {rank!r}")
    if rank == "total" and not isinstance(rs, WgaScores):
        raise TypeError("rank='total' needs the WgaScores (occurrence counts), not a bare RS matrix")
    occ = rs.occurrences if rank == "total" else None
    rs, vocab = _rs_vocab(rs, vocab)
    weighted = rs * occ if occ is not None else rs
    key = weighted.max(axis=1) if rs.shape[1] else np.zeros(len(vocab))
    order = sorted(range(len(vocab)), key=lambda i: (-float(key[i]), vocab[i]))
    return [vocab[i] for i in order[: max(0, int(size))]]
