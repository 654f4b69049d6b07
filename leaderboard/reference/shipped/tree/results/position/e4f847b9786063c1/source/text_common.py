"""Helpers shared by the built-in explainers on word-level text models (DESIGN §4, SPECS §5.8, §4.5).

A text batch holds lists of word tokens; an explainer returns one float32 score per word position (an
empty array for an empty document). Explainers dispatch on `model.modality == "text"` (`is_text`).

* `documents(batch)` — fresh copies of the token lists (the batch is never mutated);
* `explain_nonempty(docs, fn)` — run `fn` on the non-empty documents only, empty arrays for the others;
* `gradient_scores(...)` — a captum attribution at the embedding layer: the documents of a chunk are
  embedded together by `model.embed` (padded to the chunk's longest document), the padding mask goes to
  the forward function as an additional argument, the baseline is `model.baseline_embeddings` (the
  padding embedding), the target is `model.target`. The (N, L, D) attribution becomes one score per
  word by `reduce_words` over the embedding dimension — "sum" (the attribution of the word's whole
  embedding vector: Input×Gradient, IG, DeepLIFT and LRP keep their completeness properties) or "l2"
  (the Euclidean norm, a common Saliency variant) — and each document keeps its first len(tokens)
  positions;
* `connected(forward)` — the forward function given to captum: the model's values, with the embeddings
  always in the autograd graph (zero gradients, not an autograd error, when a model's output ignores
  them for a whole chunk, e.g. a rationale model that selects no word);
* `delete_positions` / `replace_positions` — perturbed documents for black-box methods (SPECS §4.5:
  removing a word deletes it from the list; occlusion may instead put the padding token there);
* `predict_in_chunks` — `model.predict` over many perturbed documents, `chunk` documents per call.

* `Lexicon` / `read_lexicon()` — the resource's lexicon (issue #50), the read-only asset the tracks hand every
  worker where the resource's generator wrote one (`$XAIBENCH_ASSET_LEXICON/log_odds.json`,
  `generators.lexicon.write_lexicon`): each training word's smoothed class log-odds (> 0: class 1), what
  the data-prior controls `corpus-lexicon` and `predicted-class-lexicon` read; `LexiconControl` their
  shared refusal (not a text model, no lexicon) and loading.

Explainers that only work on some text models (attention weights, Kim CNN feature maps, LRP rules)
expose `unsupported(model) -> str | None`: the reason they cannot explain `model`, or None. `explain`
raises a ValueError with the same reason; the conformance tests skip such (explainer, model) pairs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, cast

import numpy as np
import torch

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Batch

PAD_TOKEN = "<pad>"  # the project's padding token: word-level models map it to the padding embedding
REDUCTIONS = ("sum", "l2")
LEXICON_ENV = "XAIBENCH_ASSET_LEXICON"  # `benchmark.isolation.sandbox.asset_env("lexicon")`
LEXICON_FILE = "log_odds.json"  # `generators.lexicon.LEXICON_FILE`


def is_text(model: Any) -> bool:
    """True when `model` takes lists of word tokens (DESIGN §4)."""
    return getattr(model, "modality", "image") == "text"


def documents(batch: Batch) -> list[list[str]]:
    """The batch's documents as fresh lists of str (never the batch's own lists)."""
    return [[str(w) for w in doc] for doc in batch.inputs]


def empty_scores() -> np.ndarray:
    """The scores of an empty document: a float32 array of length 0."""
    return np.zeros(0, dtype=np.float32)


def explain_nonempty(docs: Sequence[Sequence[str]],
                     fn: Callable[[list[int]], Sequence[np.ndarray]]) -> list[np.ndarray]:
    """`fn(indices)` explains the non-empty documents (indices into `docs`, in order); empty documents
    get an empty array. Every result is a float32 vector of its document's length (non-finite → 0)."""
    out = [empty_scores() for _ in docs]
    idx = [i for i, d in enumerate(docs) if len(d)]
    if idx:
        for i, s in zip(idx, fn(idx)):
            s = np.nan_to_num(np.asarray(s, dtype=np.float32).reshape(-1), nan=0.0, posinf=0.0, neginf=0.0)
            if s.shape != (len(docs[i]),):
                raise RuntimeError(f"internal error: {len(s)} scores for a document of {len(docs[i])} words")
            out[i] = np.ascontiguousarray(s)
    return out


def text_targets(model: Any, docs: Sequence[Sequence[str]]) -> list[int]:
    """The explained output index per document (a list of ints, as captum wants it)."""
    return [int(t) for t in np.asarray(model.target([list(d) for d in docs])).reshape(-1)]


class WhiteBoxText(Protocol):
    """What a white-box word-level model offers the embedding-layer methods (DESIGN §4), where it allows it."""

    module: torch.nn.Module

    def embed(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        """The documents' word embeddings (N, T, D)."""
        ...

    def mask(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        """True at the documents' real (non-padding) positions (N, T)."""
        ...

    def forward_from_embeddings(self, embeddings: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The model's outputs from embeddings (N, T, D) and their mask."""
        ...


def require_embeddings(model: Any, name: str) -> WhiteBoxText:
    """`model` as a white-box text model (`embed`, `mask`, `forward_from_embeddings`), or a clear error."""
    if getattr(model, "module", None) is None or not all(
            callable(getattr(model, a, None)) for a in ("embed", "mask", "forward_from_embeddings")):
        raise ValueError(f"{name} attributes at the embedding layer and needs a white-box text model "
                         f"(embed / forward_from_embeddings); model {getattr(model, 'name', '?')} is a black box")
    return cast(WhiteBoxText, model)


class Connected(torch.nn.Module):
    """`forward(emb, mask) = fn(emb, mask) + 0 · Σ emb` — the same values and gradients, but `emb` is
    always part of the graph. `fn` is a callable or a module (a module is registered as a child, so
    hook-based methods such as DeepLift see its layers)."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """`fn(emb, mask)` plus a zero that keeps `emb` in the autograd graph."""
        out = self.fn(emb, mask)
        tie = emb.sum(dim=tuple(range(1, emb.dim()))) * 0.0
        return out + tie.reshape((-1,) + (1,) * (out.dim() - 1))


def connected(fn: Callable[..., torch.Tensor]) -> Connected:
    """`fn` wrapped as a `Connected` module in eval mode (the forward function given to captum)."""
    return Connected(fn).eval()


def reduce_words(attributions: torch.Tensor, lengths: Sequence[int], reduce: str = "sum") -> list[np.ndarray]:
    """(N, L, D) attributions → N word-score vectors: `reduce` over D, first `lengths[n]` positions."""
    if reduce == "sum":
        words = attributions.sum(-1)
    elif reduce == "l2":
        words = attributions.norm(dim=-1)
    else:
        raise ValueError(f"word reduction must be one of {REDUCTIONS}, got {reduce!r}")
    w = words.detach().cpu().double().numpy()
    return [w[n, :k].astype(np.float32) for n, k in enumerate(lengths)]


def check_reduce(reduce: str) -> str:
    """`reduce` when it is a known word reduction (`REDUCTIONS`), else a ValueError."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"word reduction must be one of {REDUCTIONS}, got {reduce!r}")
    return reduce


def gradient_scores(model: Any, batch: Batch, name: str, attribute: Callable[..., torch.Tensor],
                    batch_size: int, reduce: str = "sum", baselines: bool = False,
                    **kwargs: Any) -> list[np.ndarray]:
    """`attribute(emb, target=..., additional_forward_args=(mask,), [baselines=...], **kwargs)` on chunks
    of `batch_size` non-empty documents (0 = all in one call) → one score per word (module docstring)."""
    require_embeddings(model, name)
    docs = documents(batch)

    def run(idx: list[int]) -> list[np.ndarray]:
        scores: list[np.ndarray] = []
        step = len(idx) if batch_size <= 0 else int(batch_size)
        for s in range(0, len(idx), step):
            sub = [docs[i] for i in idx[s : s + step]]
            emb = model.embed(sub).detach().clone().float().requires_grad_(True)
            mask = model.mask(sub)
            extra = dict(kwargs)
            if baselines:
                extra["baselines"] = model.baseline_embeddings(sub).detach().clone().float()
            attr = attribute(emb, target=text_targets(model, sub), additional_forward_args=(mask,), **extra)
            scores += reduce_words(attr, [len(d) for d in sub], reduce)
        return scores

    return explain_nonempty(docs, run)


# -- perturbations (black box) ----------------------------------------------------------------------


def delete_positions(doc: Sequence[str], keep: Sequence[bool] | np.ndarray) -> list[str]:
    """The document without the positions where `keep` is False (SPECS §4.5 deletion semantics)."""
    return [w for w, k in zip(doc, keep) if k]


def replace_positions(doc: Sequence[str], keep: Sequence[bool] | np.ndarray, token: str = PAD_TOKEN) -> list[str]:
    """The document with `token` at the positions where `keep` is False (the length is kept)."""
    return [w if k else token for w, k in zip(doc, keep)]


def predict_in_chunks(model: Any, docs: Sequence[Sequence[str]], chunk: int = 0) -> np.ndarray:
    """`model.predict` over `docs`, `chunk` documents per call (0 = one call), as float64 (N, C)."""
    docs = list(docs)
    if not docs:
        return np.zeros((0, int(getattr(model, "n_outputs", 1))), dtype=np.float64)
    step = len(docs) if chunk <= 0 else int(chunk)
    outs = [np.asarray(model.predict(docs[s : s + step]), dtype=np.float64) for s in range(0, len(docs), step)]
    return np.concatenate([o.reshape(len(o), -1) for o in outs])


# -- the resource's lexicon (data priors, issue #50) ------------------------------------------------


@dataclass(frozen=True)
class Lexicon:
    """A resource's lexicon: `log_odds` {word: smoothed class log-odds over the training split; > 0 = more
    typical of class 1}, and the rating `threshold` its training labels were cut at (class 1 = rating ≥
    threshold), or None where the labels are classes."""

    log_odds: dict[str, float]
    threshold: float | None

    def scores(self, doc: Sequence[str]) -> np.ndarray:
        """Each word's signed log-odds, 0 for a word the lexicon does not hold (float32, one per word)."""
        return np.array([self.log_odds.get(w, 0.0) for w in doc], dtype=np.float32)


def read_lexicon() -> Lexicon:
    """The lexicon asset of the board's resource (`$XAIBENCH_ASSET_LEXICON/log_odds.json`), or a ValueError
    saying what is missing and what to do."""
    folder = os.environ.get(LEXICON_ENV)
    if not folder:
        raise ValueError("this board offers no lexicon asset ($XAIBENCH_ASSET_LEXICON is not set): its resource was "
                         "built before lexicons existed; regenerate it with `xaibench generate`")
    path = Path(folder) / LEXICON_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        odds, recipe = data["log_odds"], data["recipe"]
        threshold = recipe.get("threshold")
        lexicon = Lexicon({str(w): float(v) for w, v in odds.items()}, None if threshold is None else float(threshold))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"the lexicon asset {path} cannot be read ({type(exc).__name__}); regenerate the resource "
                         "with `xaibench generate`") from None
    return lexicon


class LexiconControl:
    """What the lexicon controls share: the lexicon, read once per worker (`lexicon()`), and `unsupported`:
    not a text model, or no readable lexicon on this board."""

    _lexicon: Lexicon | None = None

    def lexicon(self) -> Lexicon:
        """The board's lexicon (read on first use)."""
        if self._lexicon is None:
            self._lexicon = read_lexicon()
        return self._lexicon

    def unsupported(self, model: Any) -> str | None:
        """Why this control cannot score `model` (not a text model; no lexicon here), or None."""
        if not is_text(model):
            return "the lexicon controls score words (text models only)"
        try:
            self.lexicon()
        except ValueError as exc:
            return str(exc)
        return None

    def check(self, model: Any) -> Lexicon:
        """The lexicon, or the ValueError `unsupported` gives."""
        why = self.unsupported(model)
        if why:
            raise ValueError(why)
        return self.lexicon()
