"""Recurrent text architectures of the robustness track (SPECS §2.8 [I]): a 1-layer BiLSTM (hidden 128
per direction, the last states of both directions concatenated) and the same BiLSTM with one additive
attention head over time steps (LSTMAtt; `attend` gives the word weights the attention explainer
reads). Same interface as `benchmark.models.text` (embedding row 0 = padding, `forward_embedded`).
Sequences are packed, so a document's output never depends on the padding its batch adds."""

from __future__ import annotations

import torch
from torch import nn

from benchmark.models import recurrence
from benchmark.models.architectures import ARCHITECTURES, WordClassifier


class _BiLSTMBase(WordClassifier):
    def __init__(self, vocab_size: int, n_classes: int = 2, embed_dim: int = 128, hidden: int = 128,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def encode(self, emb: torch.Tensor, mask: torch.Tensor | None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(states (N, L, 2h), last states of both directions (N, 2h), mask (N, L)); packed sequences."""
        if mask is None:
            mask = torch.ones(emb.shape[:2], dtype=torch.bool, device=emb.device)
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, (h, _) = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=emb.shape[1])
        return out, torch.cat([h[0], h[1]], dim=1), mask

    def encode_ids(self, ids: torch.Tensor, mask: torch.Tensor, states: bool
                   ) -> tuple[torch.Tensor | None, torch.Tensor, recurrence.Rows]:
        """`encode(embedding(ids), mask)` per distinct word (`benchmark.models.recurrence`), rows sorted by
        length: (states (N, L, 2h) or None, last states (N, 2h), the sorted rows)."""
        rows = recurrence.Rows.of(mask.sum(1).clamp(min=1))
        ids = ids[rows.order]
        uniq, index = recurrence.distinct(ids)
        words = self.embedding.weight[uniq]
        out: list[torch.Tensor] = []
        last: list[torch.Tensor] = []
        for suffix, seq in (("", index), ("_reverse", recurrence.reverse_within(index, rows.lengths))):
            lstm = self.lstm
            table = recurrence.word_table(words, getattr(lstm, f"weight_ih_l0{suffix}"),
                                          getattr(lstm, f"bias_ih_l0{suffix}") + getattr(lstm, f"bias_hh_l0{suffix}"))
            trace = recurrence.States(rows, lstm.hidden_size, table) if states else None
            last.append(recurrence.lstm(table, seq, rows, getattr(lstm, f"weight_hh_l0{suffix}"), trace))
            if trace is not None:
                h = recurrence.padded(trace.out, ids.shape[1])
                out.append(h if suffix == "" else recurrence.reverse_within(h, rows.lengths))
        return (torch.cat(out, dim=2) if out else None), torch.cat(last, dim=1), rows


@ARCHITECTURES.decorator("bilstm")
class BiLSTM(_BiLSTMBase):
    """1-layer BiLSTM: logits = fc(dropout([h_fwd; h_bwd])), the last states of both directions."""

    def forward_embedded(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (N, C) of embeddings (N, L, D) under the word mask (N, L)."""
        return self.fc(self.dropout(self.encode(emb, mask)[1]))

    @torch.no_grad()
    def forward_ids(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """`forward_embedded(embedding(ids), mask)` computed per distinct word, in the module's dtype (what
        `predict` calls on the float64 copy; `benchmark.models.recurrence`)."""
        _, last, rows = self.encode_ids(ids, mask, states=False)
        return rows.unsort(self.fc(self.dropout(last)))


@ARCHITECTURES.decorator("bilstm-attention")
class BiLSTMAttention(_BiLSTMBase):
    """BiLSTM + one additive attention head: e_t = vᵀ tanh(W h_t), a = softmax(e) over words, s = Σ a_t h_t."""

    def __init__(self, vocab_size: int, n_classes: int = 2, embed_dim: int = 128, hidden: int = 128,
                 dropout: float = 0.5) -> None:
        super().__init__(vocab_size, n_classes, embed_dim, hidden, dropout)
        self.proj = nn.Linear(2 * hidden, 2 * hidden)
        self.context = nn.Linear(2 * hidden, 1, bias=False)

    def attend(self, emb: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """(sentence vector s (N, 2h), attention weights a (N, L)); padding gets weight 0."""
        out, _, mask = self.encode(emb, mask)
        scores = self.context(torch.tanh(self.proj(out))).squeeze(-1).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1).nan_to_num(0.0)
        return (weights.unsqueeze(-1) * out).sum(1), weights

    def forward_embedded(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (N, C) = fc(dropout(s)), s the attention-weighted states."""
        return self.fc(self.dropout(self.attend(emb, mask)[0]))

    @torch.no_grad()
    def forward_ids(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """`forward_embedded(embedding(ids), mask)` computed per distinct word, in the module's dtype (what
        `predict` calls on the float64 copy; `benchmark.models.recurrence`)."""
        out, _, rows = self.encode_ids(ids, mask, states=True)
        assert out is not None
        pooled = recurrence.attention_pool(out, mask[rows.order],
                                           lambda h: self.context(recurrence.tanh(self.proj(h))).squeeze(-1))
        return rows.unsort(self.fc(self.dropout(pooled)))
