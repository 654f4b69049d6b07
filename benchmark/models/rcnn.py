"""The RCNN rationale model of Lei, Barzilay & Jaakkola (2016), independent-selection version
(SPECS §4.3; taolei87/rcnn@7c45f49 `code/rationale/rationale.py`, `nn/advanced.py`), the model under
test of the `rcnn` resources (Camburu et al. 2019 zero-contribution verification, SPECS §4).

RCNN unit (order 2, "mode 1" = additive, tanh, no output gate)
----------------------------------------------------------------
For input x_t and the previous *visible* state h_{t-1} (all states start at 0):

    λ_t      = σ(W_λ x_t + U_λ h_{t-1} + b_λ)                       (forget gate, a recurrent layer)
    c⁽¹⁾_t   = λ_t ⊙ c⁽¹⁾_{t-1} + (1 − λ_t) ⊙ (W_1 x_t)
    c⁽²⁾_t   = λ_t ⊙ c⁽²⁾_{t-1} + (1 − λ_t) ⊙ (c⁽¹⁾_{t-1} + W_2 x_t)
    h_t      = tanh(c⁽²⁾_t + b)

(`W_1`, `W_2` have no bias; c⁽¹⁾_{t-1}, not c⁽¹⁾_t, enters the second-order cell.) For order k the
pattern continues: c⁽ⁱ⁾_t = λ_t ⊙ c⁽ⁱ⁾_{t-1} + (1 − λ_t) ⊙ (c⁽ⁱ⁻¹⁾_{t-1} + W_i x_t), h_t = tanh(c⁽ᵏ⁾_t + b).

Masked unit: with a mask m_t ∈ {0, 1}, a position with m_t = 0 leaves *every* state unchanged,
(c⁽¹⁾_t, c⁽²⁾_t, h_t) = (c⁽¹⁾_{t-1}, c⁽²⁾_{t-1}, h_{t-1}) (copied, `torch.where`, not blended), so the
recurrence over x with mask m is the recurrence over the sub-sequence of the positions with m_t = 1:
a masked token provably contributes nothing (its embedding is never read).

Model
-----
* generator: embeddings (frozen) → dropout → two independent RCNN layers (left-to-right, and
  right-to-left over the reversed sequence) → the aligned states concatenated (2·hidden) → dropout →
  linear → sigmoid = p(z_t = 1 | x). Training samples z_t ~ Bernoulli(p_t); at inference the selection
  is deterministic, z_t = [p_t ≥ threshold] (threshold 0.5 = the Bernoulli mode, SPECS §4.3 [I]).
* encoder: embeddings → dropout → masked RCNN layer 1 → dropout → masked RCNN layer 2 (mask = z);
  representation = the last visible state of every layer concatenated (depth·hidden) → dropout →
  linear → sigmoid = the aspect rating in [0, 1]. (Lei's output layer has 5 units of which only the
  aspect's is trained; one unit is the same model.) A review with nothing selected gets σ(bias).

Padding [I]: reviews are right-padded and padding positions are masked in *both* modules (the
generator's recurrences carry their state over padding), so a review's selection and prediction do
not depend on the batch it is in. (Lei left-pads and lets the generator read the padding vector.)

`forward_embedded(emb, mask)` is the whole model, RCNN(x) = encoder(x, [generator(x) ≥ 0.5]): the
function `WordModel.forward_from_embeddings` explains (the hard threshold has zero gradient, so a
gradient method sees exactly the encoder over the selected tokens). `encode(emb, selection)` is the
encoder given a selection and `probabilities(emb, mask)` the generator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from benchmark.errors import ResourceError
from benchmark.models import recurrence
from benchmark.models.architectures import ARCHITECTURES, WordClassifier
from benchmark.models.base import TEXTS_FILE, load_model, read_model_config, read_texts, rebuild_command, save_model
from benchmark.models.base import write_texts  # noqa: F401 - re-exported: generators and tests import it from here
from benchmark.models.exact import rounded
from benchmark.models.text import PAD, UNK, WordModel, check_vocab

ARCHITECTURE = "rcnn-rationale"


class RCNNLayer(nn.Module):
    """One RCNN layer (see the module docstring). `forward(x (N, L, D), mask (N, L) bool | None,
    reverse=False) -> h (N, L, n_out)`: the visible state after every position (carried over masked
    positions). Parameters are initialised uniform(−init, init) like Lei's `random_init`."""

    def __init__(self, n_in: int, n_out: int, order: int = 2, init: float = 0.05) -> None:
        super().__init__()
        if order < 1:
            raise ValueError(f"RCNN order must be ≥ 1, got {order}")
        self.n_in, self.n_out, self.order = int(n_in), int(n_out), int(order)
        # the input projections of all positions in one matmul: [W_λ | W_1 | … | W_order] x_t
        self.w_in = nn.Parameter(torch.empty(n_in, (order + 1) * n_out))
        self.b_forget = nn.Parameter(torch.empty(n_out))  # b_λ
        self.u_forget = nn.Parameter(torch.empty(n_out, n_out))  # U_λ
        self.bias = nn.Parameter(torch.empty(n_out))  # b
        for p in self.parameters():
            nn.init.uniform_(p, -init, init)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, reverse: bool = False) -> torch.Tensor:
        """The visible states h (N, L, n_out) after every position of x (N, L, n_in) (class docstring)."""
        n, length, _ = x.shape
        k, d = self.order, self.n_out
        if length == 0:
            return x.new_zeros(n, 0, d)
        proj = (x @ self.w_in).unbind(1)  # per position: (N, (order+1)·d)
        steps = range(length - 1, -1, -1) if reverse else range(length)
        if mask is not None:
            masks = mask.unsqueeze(-1).unbind(1)
            # positions where no row is masked need no carry (a fast path; the values are the same)
            full = mask.all(0).tolist()
        cells = [x.new_zeros(n, d) for _ in range(k)]
        h = x.new_zeros(n, d)
        out: list[torch.Tensor] = [h] * length
        for t in steps:
            p = proj[t]
            lam = torch.sigmoid(torch.addmm(p[:, :d] + self.b_forget, h, self.u_forget))
            new = []
            for i in range(k):
                inp = p[:, (i + 1) * d:(i + 2) * d]
                if i > 0:
                    inp = inp + cells[i - 1]  # c^(i-1)_{t-1}
                new.append(torch.lerp(inp, cells[i], lam))  # λ ⊙ c_{t-1} + (1 − λ) ⊙ inp
            h_new = torch.tanh(new[-1] + self.bias)
            if mask is not None and not full[t]:
                m = masks[t]  # masked rows keep every state exactly (copied, not blended)
                new = [torch.where(m, a, b) for a, b in zip(new, cells)]
                h_new = torch.where(m, h_new, h)
            cells, h = new, h_new
            out[t] = h
        return torch.stack(out, dim=1)


def compact(x: torch.Tensor, selection: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The selected positions of every row moved to the front, in order: (x' (N, K, D), mask' (N, K),
    positions (N, K)), K = the largest selection. A masked RCNN over (x, selection) equals one over
    (x', mask'): masked positions carry the state unchanged, so deleting them changes nothing."""
    sel = selection.bool()
    counts = sel.sum(1)
    k = int(counts.max()) if sel.numel() else 0
    order = torch.argsort((~sel).to(torch.int8), dim=1, stable=True)[:, :k]
    xc = x.gather(1, order.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
    mc = torch.arange(k, device=x.device) < counts[:, None]
    return xc, mc, order


@ARCHITECTURES.decorator(ARCHITECTURE)
class RCNNRationale(WordClassifier):
    """Generator + encoder of Lei et al. (2016) (module docstring). `embedding` row 0 = padding (zero),
    row 1 = unknown word (zero, as Lei's `<unk>`); the embedding is frozen (not trained)."""

    def __init__(self, vocab_size: int, embed_dim: int = 200, hidden: int = 200, order: int = 2,
                 depth: int = 2, dropout: float = 0.1, threshold: float = 0.5, init: float = 0.05) -> None:
        super().__init__()
        self.embed_dim, self.hidden, self.order, self.depth = int(embed_dim), int(hidden), int(order), int(depth)
        self.threshold = float(threshold)
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.embedding.weight.requires_grad_(False)
        self.gen_fwd = RCNNLayer(embed_dim, hidden, order, init)
        self.gen_bwd = RCNNLayer(embed_dim, hidden, order, init)
        self.gen_out = nn.Linear(2 * hidden, 1)
        self.enc_layers = nn.ModuleList(
            RCNNLayer(embed_dim if i == 0 else hidden, hidden, order, init) for i in range(depth))
        self.enc_out = nn.Linear(depth * hidden, 1)
        for lin in (self.gen_out, self.enc_out):
            nn.init.uniform_(lin.weight, -init, init)
            nn.init.uniform_(lin.bias, -init, init)
        self.dropout = nn.Dropout(dropout)

    # -- parameter groups (Lei's two parameter lists; the embedding is in neither) ---------------
    def generator_parameters(self) -> list[nn.Parameter]:
        """The generator's parameters (both RCNN layers and its output layer)."""
        return [*self.gen_fwd.parameters(), *self.gen_bwd.parameters(), *self.gen_out.parameters()]

    def encoder_parameters(self) -> list[nn.Parameter]:
        """The encoder's parameters (its RCNN layers and output layer)."""
        return [*self.enc_layers.parameters(), *self.enc_out.parameters()]

    # -- generator -------------------------------------------------------------------------------
    def logits(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Selection logits (N, L); padding positions get −inf (p = 0)."""
        if mask is None:
            mask = torch.ones(emb.shape[:2], dtype=torch.bool, device=emb.device)
        x = self.dropout(emb)
        h = torch.cat([self.gen_fwd(x, mask), self.gen_bwd(x, mask, reverse=True)], dim=2)
        out = self.gen_out(self.dropout(h)).squeeze(-1)
        return out.masked_fill(~mask, float("-inf"))

    def probabilities(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """p(z_t = 1 | x) (N, L), 0 on padding."""
        return torch.sigmoid(self.logits(emb, mask))

    def select(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The deterministic selection z_t = [p_t ≥ threshold] (N, L) bool, False on padding; p_t is compared
        as float32 (in the float64 copy `predict` uses, the rounded value: the one `probabilities` reports)."""
        p = self.probabilities(emb, mask)
        sel = p.float() >= self.threshold
        return sel if mask is None else sel & mask

    # -- encoder ---------------------------------------------------------------------------------
    def encode(self, emb: torch.Tensor, selection: torch.Tensor, compacted: bool = True) -> torch.Tensor:
        """Encoder output (N, 1) in [0, 1] reading only the positions where `selection` is True.

        `compacted` (default) runs the layers over the selected tokens only (`compact`), which is the
        same function — a masked position carries the state — at the cost of the selection's length;
        `compacted=False` runs the masked recurrence over every position (the definition)."""
        selection = selection.bool()
        if compacted:
            emb, selection, _ = compact(emb, selection)
        x = self.dropout(emb)
        last = []
        for i, layer in enumerate(self.enc_layers):
            h = layer(x, selection)
            last.append(h[:, -1] if h.shape[1] else h.new_zeros(h.shape[0], self.hidden))
            if i + 1 < len(self.enc_layers):
                x = self.dropout(h)
        return torch.sigmoid(self.enc_out(self.dropout(torch.cat(last, dim=1))))

    # -- the whole model ---------------------------------------------------------------------------
    def forward_embedded(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """RCNN(x) = encoder(x, deterministic selection of the generator), (N, 1)."""
        return self.encode(emb, self.select(emb, mask))

    # -- the same function from word ids (what `RationaleModel` computes with, on the float64 copy) ---------
    @staticmethod
    def _input_bias(layer: RCNNLayer) -> torch.Tensor:
        """[b_λ | 0 … 0]: the bias of a layer's input terms [W_λ x + b_λ | W_1 x | …]."""
        return torch.cat([layer.b_forget, layer.b_forget.new_zeros(layer.order * layer.n_out)])

    @torch.no_grad()
    def logits_ids(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """`logits(embedding(ids), mask)` (eval mode) for a word mask that is each document's first positions,
        computed per distinct word with rows sorted by length (`benchmark.models.recurrence`)."""
        length = ids.shape[1]
        rows = recurrence.Rows.of(mask.sum(1))
        uniq, index = recurrence.distinct(ids[rows.order])
        words = self.dropout(self.embedding.weight[uniq])
        # gen_out(dropout([h_fwd; h_bwd])) = h_fwd · w_fwd + h_bwd · w_bwd + b: each direction's share per step
        weight = self.gen_out.weight[0]
        out = self.gen_out.bias.expand(len(ids), length).clone()
        directions = ((self.gen_fwd, weight[:self.hidden], False), (self.gen_bwd, weight[self.hidden:], True))
        for layer, w, reverse in directions:
            table = recurrence.word_table(words, layer.w_in.t(), self._input_bias(layer))
            seq = recurrence.reverse_within(index, rows.lengths) if reverse else index
            share = torch.zeros_like(out)

            def emit(t: int, k: int, h: torch.Tensor, share: torch.Tensor = share, w: torch.Tensor = w) -> None:
                share[:k, t] = self.dropout(h) @ w

            recurrence.rcnn(recurrence.looked_up(table, seq), rows, layer.u_forget, layer.bias, layer.order, table,
                            emit)
            out += recurrence.reverse_within(share, rows.lengths) if reverse else share
        return rows.unsort(out.masked_fill(~mask[rows.order], float("-inf")))

    def select_ids(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """`select(embedding(ids), mask)`: z_t = [p_t ≥ threshold], p_t compared as float32 (`select`)."""
        return (torch.sigmoid(self.logits_ids(ids, mask)).float() >= self.threshold) & mask

    @torch.no_grad()
    def encode_ids(self, ids: torch.Tensor, selection: torch.Tensor) -> torch.Tensor:
        """`encode(embedding(ids), selection)` (eval mode): the selected words moved to the front (`compact`),
        the first layer from per-word input terms, rows sorted by their selection's size."""
        selection = selection.bool()
        ids, _, _ = compact(ids[..., None], selection)
        rows = recurrence.Rows.of(selection.sum(1))
        uniq, index = recurrence.distinct(ids[rows.order, :, 0])
        layers = [cast(RCNNLayer, layer) for layer in self.enc_layers]
        words = self.dropout(self.embedding.weight[uniq])
        table = recurrence.word_table(words, layers[0].w_in.t(), self._input_bias(layers[0]))
        inputs = recurrence.looked_up(table, index)
        last = []
        for i, layer in enumerate(layers):
            trace = recurrence.States(rows, layer.n_out, table) if i + 1 < len(layers) else None
            last.append(recurrence.rcnn(inputs, rows, layer.u_forget, layer.bias, layer.order, table, trace))
            if trace is not None:  # the next layer's input terms, from these states
                nxt = layers[i + 1]
                h = self.dropout(trace.out)
                proj = torch.addmm(self._input_bias(nxt), h.flatten(0, 1), nxt.w_in)
                inputs = recurrence.stepwise(proj.view(*h.shape[:2], nxt.w_in.shape[1]))
        return rows.unsort(torch.sigmoid(self.enc_out(self.dropout(torch.cat(last, dim=1)))))

    def forward_ids(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """RCNN(x) = encoder(x, selection) from word ids (N, 1): `forward_embedded(embedding(ids), mask)`."""
        return self.encode_ids(ids, self.select_ids(ids, mask))


def generator_log_prob(logits: torch.Tensor, z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Σ_t log p(z_t | x) per review (N,), padding excluded (stable: −BCE on the logits)."""
    safe = logits.masked_fill(~mask, 0.0)
    lp = -F.binary_cross_entropy_with_logits(safe, z.to(safe.dtype), reduction="none")
    return (lp * mask.to(lp.dtype)).sum(1)


class RationaleModel(WordModel):
    """The wrapper submissions see: a word-level *regression* model with one output in [0, 1].

    `predict(tokens) -> (N, 1)` = RCNN(x) with the deterministic selection; `target` = 0 (the head).
    White box as every `WordModel`: `embed`, `forward_from_embeddings(emb, mask)` (the whole RCNN),
    `embedding_module()`. Optional text-model members (None when unknown): `aspect` (the rated aspect)
    and `unlabeled_texts()` — the reviews the model was fitted on, tokens only, no ratings and no ground
    truth — for explainers that learn from a corpus on the model's own predictions (L2X). Extra, for the
    verification (never for submissions): `selections(tokens)`, `probabilities(tokens)`,
    `encode(tokens, selections)`.

    `predict` sorts the documents of a call by length before cutting them into chunks of `batch_size`
    (the recurrences run over the longest document of a chunk: perturbed documents of very different
    lengths, as LIME / SHAP send them, waste little on padding); a document's output does not depend on
    its chunk (padding is masked), so the order is only a matter of speed.
    """

    module: RCNNRationale

    def __init__(self, module: RCNNRationale, vocab: Sequence[str], name: str, aspect: str | None = None,
                 batch_size: int = 256, max_len: int | None = None,
                 texts: Callable[[], list[list[str]] | None] | Sequence[Sequence[str]] | None = None) -> None:
        super().__init__(module, vocab, name, n_outputs=1, batch_size=batch_size, max_len=max_len)
        self.task = "regression"
        self.aspect = aspect
        self._texts_source = texts  # read on the first `unlabeled_texts()` call
        self._texts: list[list[str]] | None = None

    def unlabeled_texts(self) -> list[list[str]] | None:
        """The model's training reviews as token lists (no ratings), or None; loaded once, then the same
        list object on every call."""
        if self._texts is None and self._texts_source is not None:
            source, self._texts_source = self._texts_source, None
            self._texts = source() if callable(source) else [list(t) for t in source]
        return self._texts

    def _predict_all(self, inputs: Any) -> np.ndarray:
        """Outputs (N, 1) in [0, 1]; documents sorted by length into `batch_size` chunks (class docstring)."""
        docs = list(inputs)
        if not docs:
            return np.zeros((0, 1), dtype=np.float32)
        order = np.argsort([len(d) for d in docs], kind="stable")
        out = np.empty((len(docs), 1), dtype=np.float32)
        for s in range(0, len(docs), self.batch_size):
            rows = order[s:s + self.batch_size]
            out[rows] = self._predict([docs[r] for r in rows])
        return out

    def exact_module(self) -> RCNNRationale:
        """The float64 copy of `module` that `predict`, `selections`, `probabilities` and `encode` compute
        with (`benchmark.models.exact`): the selection, and so the ground truth, never depends on the batch."""
        return cast(RCNNRationale, super().exact_module())

    def _predict(self, inputs: Any) -> np.ndarray:
        ids, mask = self.ids(inputs)
        with torch.no_grad():
            return rounded(self.exact_module().forward_ids(ids, mask)).numpy()

    def _chunks(self, tokens: Sequence[Sequence[str]]
                ) -> Iterator[tuple[Sequence[Sequence[str]], torch.Tensor, torch.Tensor]]:
        for s in range(0, len(tokens), self.batch_size):
            chunk = tokens[s:s + self.batch_size]
            ids, mask = self.ids(chunk)
            yield chunk, ids, mask

    def probabilities(self, tokens: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The generator's p(z_t = 1 | x) per document (float32 per position)."""
        out = []
        with torch.no_grad():
            for chunk, ids, mask in self._chunks(tokens):
                p = rounded(torch.sigmoid(self.exact_module().logits_ids(ids, mask))).numpy()
                out += [p[n, :len(t)] for n, t in enumerate(chunk)]
        return out

    def selections(self, tokens: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The deterministic selection S_x per document (bool per position)."""
        out = []
        with torch.no_grad():
            for chunk, ids, mask in self._chunks(tokens):
                z = self.exact_module().select_ids(ids, mask).numpy()
                out += [z[n, :len(t)].copy() for n, t in enumerate(chunk)]
        return out

    def encode(self, tokens: Sequence[Sequence[str]], selections: Sequence[np.ndarray]) -> np.ndarray:
        """encoder(x, selection) (N,) for given selections (float64, rounded to float32)."""
        out = []
        module = self.exact_module()
        with torch.no_grad():
            for s in range(0, len(tokens), self.batch_size):
                chunk = tokens[s:s + self.batch_size]
                ids, mask = self.ids(chunk)
                sel = torch.zeros_like(mask)
                for n, z in enumerate(selections[s:s + self.batch_size]):
                    z = np.asarray(z, dtype=bool)
                    if len(z) != len(chunk[n]):
                        raise ValueError(f"selection of length {len(z)} for a document of {len(chunk[n])} tokens")
                    sel[n, :len(z)] = torch.from_numpy(z)
                out.append(rounded(module.encode_ids(ids, sel & mask)[:, 0]).numpy())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


# -- persistence ---------------------------------------------------------------------------------


def save_rcnn(module: RCNNRationale, vocab: Sequence[str], directory: Path, extra: dict | None = None) -> str:
    """`model.safetensors` + `config.json` (architecture "rcnn-rationale", the vocabulary under `vocab`
    as the other text models keep it, task "regression"); returns the weights' sha256."""
    vocab = list(vocab)
    if len(vocab) != module.embedding.num_embeddings:
        raise ValueError(f"vocabulary has {len(vocab)} words, the embedding {module.embedding.num_embeddings} rows")
    if vocab[:2] != [PAD, UNK]:
        raise ValueError(f"vocabulary must start with {PAD!r}, {UNK!r}")
    kwargs = {"vocab_size": len(vocab), "embed_dim": module.embed_dim, "hidden": module.hidden,
              "order": module.order, "depth": module.depth, "dropout": module.dropout.p,
              "threshold": module.threshold}
    return save_model(module, Path(directory), ARCHITECTURE, kwargs,
                      extra={"task": "regression", "n_outputs": 1, **(extra or {}), "vocab": vocab})


def load_rcnn(directory: Path, name: str | None = None, batch_size: int = 256,
              rebuild: str | None = None) -> RationaleModel:
    """The wrapper for a model written by `save_rcnn`. A damaged or inconsistent model folder raises
    `ResourceError` naming the file and `rebuild` (default: `xaibench generate rcnn --aspect … --overwrite`,
    read off the resource layout)."""
    directory = Path(directory)
    fix = rebuild or rebuild_command(directory)
    module, config = load_model(directory, fix)
    if config.get("architecture") != ARCHITECTURE or not isinstance(module, RCNNRationale):
        raise ResourceError(f"{directory} holds a {config.get('architecture')!r} model, not {ARCHITECTURE!r}; "
                            f"rebuild it with `{fix}`")
    vocab = check_vocab(config, module, directory, fix)
    texts_file = directory / TEXTS_FILE
    return RationaleModel(module, vocab, name or config.get("name", directory.name),
                          aspect=config.get("aspect"), batch_size=batch_size,
                          texts=(lambda: read_texts(texts_file, fix)) if texts_file.exists() else None)


def config_of(directory: Path, rebuild: str | None = None) -> dict:
    """A saved model's checked `config.json` (`benchmark.models.base.read_model_config`)."""
    return read_model_config(Path(directory), rebuild)
