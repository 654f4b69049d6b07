"""Recurrences for exact predictions (`benchmark.models.exact`): the BiLSTM, HAN and RCNN `forward_ids`.

The rule is unchanged — every value is computed in float64 from the float32 weights and the output is
rounded once to float32 — but the float64 work is organised so that it costs about what the float32
forward did (`tests/perf/bench_exact.py`):

1. **Input projections per distinct word.** A recurrent layer's input term W x_t + b depends on the word
   at t only. It is computed once per call for the call's distinct words (`word_table`: one float64
   product over U ≤ N·L rows), and step t gathers its rows. The float32 forward multiplies all N·L
   positions; a LIME batch of 1,000 masks of a 40-word review has at most 41 distinct ids.
2. **Rows sorted by length** (`Rows`): step t runs over the rows whose document is longer than t — a
   prefix of the sorted rows — and the others keep their state, as packed sequences do. A backward
   direction runs forward over each document reversed within its own length (`reverse_within`).
3. **tanh(x) = 2σ(2x) − 1** (`tanh`): torch's float64 tanh takes ≈ 3.8 ns per value on this CPU, its
   sigmoid ≈ 0.5 ns; the identity is exact, and in float64 the two sides differ by ≲ 2⁻⁵³ absolutely.

Why this keeps the rule: each change alters only the order or form of float64 operations, so every
intermediate value differs from the float64 copy's torch forward by a few float64 rounding errors
(≈ 1e-16, against float32's 6e-8 resolution). The float32 output is therefore the same bits, except
when the exact value lies within ≈ 1e-15 of a float32 rounding boundary (≈ one output in 10⁸), and
it is the same bits alone or in any batch, as before. `tests/test_exact_forwards.py` checks both:
bit-identical outputs to the torch float64 forward on real sentences and LIME masks of every
recurrent loader, and `tests/test_batch_invariance.py` the batch invariance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch.nn import functional as F

StepInputs = Callable[[int, int], torch.Tensor]  # (step t, active rows k) -> the (k, G) input terms of step t
Emit = Callable[[int, int, torch.Tensor], None]  # (step t, active rows k, their h (k, H)) after step t


def tanh(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) = 2σ(2x) − 1, in x's dtype (float64 here: exact up to ≈ 2⁻⁵³ absolute; module docstring)."""
    return torch.sigmoid(x * 2).mul_(2).sub_(1)


def distinct(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(the distinct ids U, index): `uniq[index] == ids` (item 1 of the module docstring)."""
    uniq, index = torch.unique(ids, return_inverse=True)
    return uniq, index


def looked_up(table: torch.Tensor, seq: torch.Tensor) -> StepInputs:
    """Step inputs from a per-word table: the rows `table[seq[n, t]]` of the k rows active at step t."""
    return lambda t, k: table[seq[:k, t]]


def stepwise(terms: torch.Tensor) -> StepInputs:
    """Step inputs computed ahead for every row and step: `terms[n, t]` (N, L, G) of the k rows active at t."""
    return lambda t, k: terms[:k, t]


def word_table(words: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """The input terms `words @ weightᵀ + bias` (U, G) of the distinct words' embeddings `words` (U, D);
    `weight` is (G, D) as in `nn.Linear` / `nn.LSTM`."""
    return words @ weight.t() if bias is None else torch.addmm(bias, words, weight.t())


@dataclass(frozen=True)
class Rows:
    """The rows of a call sorted by length, longest first (stable): `order[i]` is the original row of
    sorted row i, `lengths` the sorted lengths, `active[t]` the number of rows longer than t."""

    order: torch.Tensor
    lengths: torch.Tensor
    active: list[int]

    @classmethod
    def of(cls, lengths: torch.Tensor) -> "Rows":
        """The sorted rows for documents of `lengths` (N,) (each ≥ 0)."""
        order = torch.argsort(lengths, descending=True, stable=True)
        sorted_lengths = lengths[order]
        longest = int(sorted_lengths[0]) if len(lengths) else 0
        counts = torch.bincount(sorted_lengths, minlength=longest + 1)  # documents of each length
        longer = len(lengths) - torch.cumsum(counts, 0)  # documents longer than t
        return cls(order, sorted_lengths, [int(k) for k in longer[:longest]])

    @property
    def steps(self) -> int:
        """The longest length: the number of steps of a recurrence over these rows."""
        return len(self.active)

    def unsort(self, x: torch.Tensor) -> torch.Tensor:
        """Rows of `x` (in sorted order) back in the original order."""
        out = torch.empty_like(x)
        out[self.order] = x
        return out


def reverse_within(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's first `lengths[n]` entries along dim 1 reversed, the rest left as they are: (N, L, …) →
    (N, L, …). Its own inverse; a backward recurrence is a forward one over `reverse_within(ids)`."""
    n, length = x.shape[:2]
    pos = torch.arange(length).expand(n, length)
    flipped = lengths[:, None] - 1 - pos
    index = torch.where(flipped >= 0, flipped, pos)
    if x.dim() > 2:
        index = index.view(n, length, *([1] * (x.dim() - 2))).expand(x.shape)
    return x.gather(1, index)


def attention_pool(states: torch.Tensor, mask: torch.Tensor,
                   score: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Σ_t a_t h_t with a = softmax over the document's positions of `score(h_t)` ((T, H) → (T,)), scored
    at the positions of `mask` (N, L) only (no work on padding); a document with no position gets 0."""
    scores = states.new_full(mask.shape, float("-inf"))
    scores[mask] = score(states[mask])
    weights = torch.softmax(scores, dim=1).nan_to_num(0.0)
    return torch.bmm(weights.unsqueeze(1), states).squeeze(1)


def padded(states: torch.Tensor, length: int) -> torch.Tensor:
    """States (N, steps, H) padded with zero states to (N, length, H) (a mask longer than every document)."""
    return states if states.shape[1] >= length else F.pad(states, (0, 0, 0, length - states.shape[1]))


class States:
    """An `Emit` that keeps every step's h: `out` (N, steps, H), zero after each row's last step."""

    def __init__(self, rows: Rows, width: int, like: torch.Tensor) -> None:
        self.out = like.new_zeros(len(rows.order), rows.steps, width)

    def __call__(self, t: int, k: int, h: torch.Tensor) -> None:
        """Keep the h of the k rows active at step t."""
        self.out[:k, t] = h


def _run(rows: Rows, width: int, like: torch.Tensor, n_states: int,
         cell: Callable[[int, int, list[torch.Tensor]], list[torch.Tensor]], emit: Emit | None) -> torch.Tensor:
    """The shared loop over steps: the state tensors (the first one is the visible h) of the rows still
    active, `cell(t, k, states)` → the new states of the first k = `active[t]` rows (the rest finished and
    keep their last h); `emit(t, k, h)` after each step. Returns the last h (N, width), rows in sorted order."""
    n = len(rows.order)
    state = [like.new_zeros(n, width) for _ in range(n_states)]
    last = like.new_zeros(n, width)
    prev = n
    for t, k in enumerate(rows.active):
        if k < prev:  # rows k … prev − 1 ended at step t − 1
            last[k:prev] = state[0][k:prev]
            state = [s[:k] for s in state]
        state = cell(t, k, state)
        if emit is not None:
            emit(t, k, state[0])
        prev = k
    last[:prev] = state[0]
    return last


def lstm(table: torch.Tensor, seq: torch.Tensor, rows: Rows, w_hh: torch.Tensor, emit: Emit | None = None
         ) -> torch.Tensor:
    """One LSTM direction (torch's gate order i, f, g, o) over word indices `seq` (N, L) into `table`
    (U, 4H) = x W_ihᵀ + b_ih + b_hh per distinct word: gates = table[seq_t] + h W_hhᵀ,
    c = σ(f)c + σ(i)tanh(g), h = σ(o)tanh(c). Returns the last h.

    Computed with the g block of the gates and the cell state doubled (exact: a power of 2): one σ over
    all four blocks gives σ(2g), tanh(g) = 2σ(2g) − 1, and tanh(c) = 2σ(2c) − 1 needs no extra product."""
    hidden = w_hh.shape[1]
    scale = torch.ones(4 * hidden, dtype=table.dtype)
    scale[2 * hidden:3 * hidden] = 2
    table, w = table * scale, w_hh.t() * scale

    def cell(t: int, k: int, s: list[torch.Tensor]) -> list[torch.Tensor]:
        h, c2 = s  # c2 = 2c
        sig = torch.sigmoid(torch.addmm(table[seq[:k, t]], h, w))
        i, f, o = sig[:, :hidden], sig[:, hidden:2 * hidden], sig[:, 3 * hidden:]
        tanh_g2 = sig[:, 2 * hidden:3 * hidden] * 4 - 2  # 2 tanh(g)
        c2 = torch.addcmul(f * c2, i, tanh_g2)
        return [torch.sigmoid(c2).mul_(2).sub_(1).mul_(o), c2]

    return _run(rows, hidden, table, 2, cell, emit)


def gru(inputs: StepInputs, rows: Rows, w_hh: torch.Tensor, b_hh: torch.Tensor, like: torch.Tensor,
        emit: Emit | None = None) -> torch.Tensor:
    """One GRU direction (torch's gate order r, z, n): with a = inputs(t) = x_t W_ihᵀ + b_ih and
    b = h W_hhᵀ + b_hh: r, z = σ(a + b) on the first two blocks, n = tanh(a_n + r b_n),
    h' = n + z (h − n) = (1 − z) n + z h. Returns the last h."""
    hidden = w_hh.shape[1]
    w = w_hh.t()

    def cell(t: int, k: int, s: list[torch.Tensor]) -> list[torch.Tensor]:
        (h,) = s
        a, b = inputs(t, k), torch.addmm(b_hh, h, w)
        rz = torch.sigmoid(a[:, :2 * hidden] + b[:, :2 * hidden])
        n = tanh(a[:, 2 * hidden:] + rz[:, :hidden] * b[:, 2 * hidden:])
        return [torch.lerp(n, h, rz[:, hidden:])]

    return _run(rows, hidden, like, 1, cell, emit)


def rcnn(inputs: StepInputs, rows: Rows, u_forget: torch.Tensor, bias: torch.Tensor, order: int,
         like: torch.Tensor, emit: Emit | None = None) -> torch.Tensor:
    """One RCNN layer (`benchmark.models.rcnn`): with inputs(t) = [W_λ x_t + b_λ | W_1 x_t | … ]:
    λ = σ(inputs_λ + h U_λ), c⁽ⁱ⁾ = λ c⁽ⁱ⁾ + (1 − λ)(W_i x_t + c⁽ⁱ⁻¹⁾_{t−1}), h = tanh(c⁽ᵏ⁾ + b).
    Returns the last h."""
    d = u_forget.shape[0]

    def cell(t: int, k: int, s: list[torch.Tensor]) -> list[torch.Tensor]:
        p, h, cells = inputs(t, k), s[0], s[1:]
        lam = torch.sigmoid(torch.addmm(p[:, :d], h, u_forget))
        new = []
        for i in range(order):
            inp = p[:, (i + 1) * d:(i + 2) * d]
            if i > 0:
                inp = inp + cells[i - 1]  # c^(i-1)_{t-1}
            new.append(torch.lerp(inp, cells[i], lam))
        return [tanh(new[-1] + bias), *new]

    return _run(rows, d, like, order + 1, cell, emit)
