"""The zero-contribution verification of Camburu et al. (2019) (SPECS §4.4): from a trained RCNN and a pool
of reviews, the verified dataset D_a with a token partition x = N_x ∪ SDK_x ∪ SR_x per review.

For a review x with the deterministic selection S_x (positions with p_t ≥ 0.5):
1. **Handshake filter** (Eq. 3/7). x' = the sub-sequence of x at S_x (order kept). Run the generator on x'
   to get S_{S_x}; keep x only if S_{S_x} = S_x, i.e. the generator selects every token of x'. Then
   RCNN(x − N_x) = encoder(S_{S_x}) = encoder(S_x) = RCNN(x): deleting all non-selected tokens changes
   nothing, so no non-selected token passes information through the selected ones. (An empty S_x passes
   trivially and is dropped in step 3.)
2. **Clearly relevant tokens**: Δ_s = |encoder(S_x − s) − encoder(S_x)| for every s ∈ S_x ("removing" s =
   dropping it from the encoder's input, SPECS §4.8.3); SR_x = {s : Δ_s ≥ τ}, τ = 0.1 (ratings live on a
   0.1 grid); SDK_x = S_x ∖ SR_x.
3. Keep x iff |SR_x| ≥ 1.

Guarantees: every N token has exactly zero contribution (the encoder never reads it, and step 1 rules out a
handshake through the generator); P1 — every N token must rank below every SR token; P2 — the top token
must be in S_x. Token positions, not word types, are labelled.

Everything runs batched: the generator on x' and the encoder on S_x − s use the compacted sub-sequences
(`benchmark.models.rcnn.compact`), all leave-one-out variants of a batch in a few encoder calls.
Statistics (`table2`) follow the paper's Table 2: N, mean (std) of |x|, |S_x|, |SR_x|, |N_x| over D_a, the
% of the pool eliminated by the handshake test and the % of the remaining eliminated for want of an SR token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch

from benchmark.metrics.zero_contribution import N, SDK, SR
from benchmark.models.rcnn import RationaleModel, compact
from benchmark.progress import progress_bar

TAU = 0.1
# outcome per pool review
KEPT, HANDSHAKE, EMPTY, NO_SR = "kept", "handshake", "empty-selection", "no-sr"


@dataclass
class Verification:
    """The verified dataset (kept reviews, in pool order) and the outcome of every pool review."""

    ids: list[str]
    tokens: list[list[str]]
    labels: list[np.ndarray]  # int8 per position: N=0, SDK=1, SR=2
    prediction: np.ndarray  # RCNN(x) (= encoder(S_x)) per kept review
    delta: list[np.ndarray]  # Δ_s per position (NaN on N positions)
    outcome: list[str]  # per pool review: kept / handshake / empty-selection / no-sr
    pool_selected: np.ndarray  # |S_x| per pool review
    pool_lengths: np.ndarray  # |x| per pool review
    tau: float = TAU
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)


def _batch_partition(module, ids: torch.Tensor, mask: torch.Tensor, tau: float, loo_rows: int) -> dict:
    """Handshake test and Δ_s for one padded batch (see the module docstring)."""
    emb = module.embedding(ids)
    sel = module.select(emb, mask)  # S_x
    xc, mc, positions = compact(emb, sel)  # x' (B, K, D), its mask, original positions
    counts = mc.sum(1)
    if xc.shape[1]:
        again = module.select(xc, mc)  # S_{S_x}, positions within x'
        free = (again == mc).all(1)
    else:
        free = torch.ones(len(ids), dtype=torch.bool)
    y = module.encode(xc, mc)[:, 0]  # encoder(S_x) = RCNN(x)
    delta = torch.full(mc.shape, float("nan"))
    b_idx, j_idx = torch.nonzero(mc & free[:, None], as_tuple=True)
    for s in range(0, len(b_idx), loo_rows):
        b, j = b_idx[s:s + loo_rows], j_idx[s:s + loo_rows]
        m = mc[b].clone()
        m[torch.arange(len(b)), j] = False  # S_x − s
        delta[b, j] = (module.encode(xc[b], m)[:, 0] - y[b]).abs()
    return {"selection": sel, "positions": positions, "counts": counts, "free": free, "y": y, "delta": delta}


def verify(model: RationaleModel, tokens: Sequence[Sequence[str]], ids: Sequence[str] | None = None, *,
           tau: float = TAU, batch_size: int = 256, loo_rows: int = 2048) -> Verification:
    """Partition every review of the pool `tokens` (the model's deterministic selection) and keep the
    handshake-free reviews with at least one clearly relevant token."""
    module = model.module
    module.eval()
    docs = [list(t) for t in tokens]
    ids = [str(i) for i in (ids if ids is not None else range(len(docs)))]
    if len(ids) != len(docs):
        raise ValueError(f"{len(ids)} ids for {len(docs)} reviews")
    n = len(docs)
    lengths = np.array([len(d) for d in docs], dtype=np.int64)
    outcome = [""] * n
    selected = np.zeros(n, dtype=np.int64)
    labels: list[np.ndarray | None] = [None] * n
    deltas: list[np.ndarray | None] = [None] * n
    preds = np.full(n, np.nan)
    order = np.argsort(lengths, kind="stable")  # similar lengths together: little padding
    with torch.no_grad(), progress_bar(n, "verifying (handshake, Δ_s)", unit="review") as bar:
        for s in range(0, n, batch_size):
            rows = order[s:s + batch_size].tolist()
            bid, mask = model.ids([docs[r] for r in rows])
            out = _batch_partition(module, bid, mask, tau, loo_rows)
            for k, r in enumerate(rows):
                c = int(out["counts"][k])
                selected[r] = c
                if c == 0:
                    outcome[r] = EMPTY
                    continue
                if not bool(out["free"][k]):
                    outcome[r] = HANDSHAKE
                    continue
                pos = out["positions"][k, :c].numpy()
                d = out["delta"][k, :c].numpy().astype(np.float64)
                lab = np.full(len(docs[r]), N, dtype=np.int8)
                lab[pos] = np.where(d >= tau, SR, SDK)
                full_d = np.full(len(docs[r]), np.nan)
                full_d[pos] = d
                if not (lab == SR).any():
                    outcome[r] = NO_SR
                    continue
                outcome[r] = KEPT
                labels[r], deltas[r], preds[r] = lab, full_d, float(out["y"][k])
            bar.advance(len(rows))
    keep = [i for i in range(n) if outcome[i] == KEPT]
    kept_labels = [x for x in (labels[i] for i in keep) if x is not None]  # a kept review has both
    kept_deltas = [x for x in (deltas[i] for i in keep) if x is not None]
    return Verification([ids[i] for i in keep], [docs[i] for i in keep], kept_labels,
                        preds[keep], kept_deltas, outcome, selected, lengths, tau,
                        {"threshold": getattr(module, "threshold", None), "model": model.name})


def _mean_std(x: np.ndarray) -> dict[str, float]:
    x = np.asarray(x, dtype=np.float64)
    return {"mean": float(x.mean()) if x.size else float("nan"), "std": float(x.std()) if x.size else float("nan")}


def table2(v: Verification) -> dict[str, Any]:
    """Table-2 statistics of the verified dataset (and of the pool it came from)."""
    outcome = np.array(v.outcome)
    pool = len(outcome)
    handshake = int((outcome == HANDSHAKE).sum())
    passed = pool - handshake  # includes the empty selections (S_{∅} = ∅)
    no_sr = int(np.isin(outcome, [NO_SR, EMPTY]).sum())
    sizes = {name: np.array([int((lab == code).sum()) for lab in v.labels]) for name, code in
             (("N", N), ("SDK", SDK), ("SR", SR))}
    return {
        "N": len(v),
        "len_x": _mean_std(np.array([len(t) for t in v.tokens])),
        "S_x": _mean_std(sizes["SDK"] + sizes["SR"]),
        "SR_x": _mean_std(sizes["SR"]),
        "N_x": _mean_std(sizes["N"]),
        "pct_handshake": 100.0 * handshake / pool if pool else float("nan"),
        "pct_no_sr": 100.0 * no_sr / passed if passed else float("nan"),
        "pool": pool,
        "eliminated_handshake": handshake,
        "empty_selection": int((outcome == EMPTY).sum()),
        "eliminated_no_sr": no_sr,
        "pool_selection_rate": float(v.pool_selected.sum() / max(1, v.pool_lengths.sum())),
        "pool_S_x": _mean_std(v.pool_selected),
        "tau": v.tau,
    }


def format_table2(stats: dict[str, Any], aspect: str = "") -> str:
    """One row in the paper's Table-2 layout."""
    def ms(key: str, digits: int = 2) -> str:
        return f"{stats[key]['mean']:.{digits}f} ({stats[key]['std']:.{digits}f})"

    head = "aspect       N       |x|            |S_x|          |SR_x|        |N_x|          %(S_Sx≠S_x)  %(SR_x=∅)"
    row = (f"{aspect:<12} {stats['N']:<7} {ms('len_x', 0):<14} {ms('S_x', 1):<14} {ms('SR_x'):<13} "
           f"{ms('N_x', 0):<14} {stats['pct_handshake']:<12.1f} {stats['pct_no_sr']:.1f}")
    return head + "\n" + row
