"""RCNN rationale-model training throughput (tokens/s), in one run: ours (a length-sorted mini-batch of
reviews in one pass, the encoder over the compacted selection) against the straightforward way (one review
at a time, the masked encoder over every position, gradients accumulated over the same reviews — the same
update). Full-size model (200-d embeddings, hidden 200, order 2), one thread, Lei-like review lengths.

    python tests/perf/bench_rcnn_train.py      (or: make perf)
"""

from __future__ import annotations

import time

import numpy as np

import timing
import torch

from benchmark.models.rcnn import RCNNRationale
from generators.rcnn.train import RCNNTrainConfig, batch_costs, pad, selection_costs


def _reviews(n: int, seed: int = 0, vocab: int = 5000) -> list[np.ndarray]:
    """Token ids with BeerAdvocate-like lengths (mean ≈ 150, sd ≈ 80, 10 … 256)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.normal(150, 80, n), 10, 256).astype(int)
    return [rng.integers(2, vocab, k) for k in lengths]


def _model(seed: int = 0) -> tuple[RCNNRationale, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    m = RCNNRationale(5000)
    return m, torch.optim.Adam(m.generator_parameters() + m.encoder_parameters(), 5e-4)


def _ours(reviews, y, cfg, steps: int) -> float:
    m, opt = _model()
    order = np.argsort([len(r) for r in reviews], kind="stable")
    ids, mask = pad(reviews, order.tolist())
    yt = torch.from_numpy(y[order])
    g = torch.Generator().manual_seed(0)

    def step():
        c = batch_costs(m, ids, mask, yt, cfg, g)
        opt.zero_grad()
        (c["cost_g"] + c["cost_e"]).backward()
        opt.step()

    step()  # warm-up
    t = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * int(mask.sum()) / (time.perf_counter() - t)


def _plain(reviews, y, cfg) -> float:
    """One review at a time; the encoder reads every position through the mask (no compaction)."""
    m, opt = _model()
    g = torch.Generator().manual_seed(0)
    t = time.perf_counter()
    opt.zero_grad()
    for r, target in zip(reviews, y):
        ids = torch.from_numpy(r)[None]
        mask = torch.ones_like(ids, dtype=torch.bool)
        emb = m.embedding(ids)
        logits = m.logits(emb, mask)
        with torch.no_grad():
            z = torch.bernoulli(torch.sigmoid(logits), generator=g).bool()
        loss = (m.encode(emb, z, compacted=False)[:, 0] - float(target)) ** 2
        zsum, zdiff = selection_costs(z, mask)
        omega = loss.detach() + cfg.lambda_s * zsum + cfg.lambda_c * zdiff
        logp = -torch.nn.functional.binary_cross_entropy_with_logits(logits, z.float(), reduction="sum")
        cost = cfg.cost_scale * (loss + omega * logp) / len(reviews)  # the batch mean, review by review
        cost.backward()
    opt.step()
    return sum(len(r) for r in reviews) / (time.perf_counter() - t)


def run(n_batch: int = 128, n_plain: int = 16, steps: int = 2) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cfg = RCNNTrainConfig()
        reviews = _reviews(n_batch)
        y = np.random.default_rng(1).random(n_batch).astype(np.float32)
        ours = _ours(reviews, y, cfg, steps)
        plain = _plain(reviews[:n_plain], y[:n_plain], cfg)
    finally:
        torch.set_num_threads(threads)
    print(f"\nRCNN training (hidden 200, 200-d embeddings, 1 thread), mean review length "
          f"{np.mean([len(r) for r in reviews]):.0f} tokens, selection rate ≈ 0.5 (untrained generator)")
    print(f"  straightforward (one review at a time, masked encoder) : {plain:8.0f} tokens/s")
    print(f"  ours (batch of {n_batch}, length-sorted, compacted encoder): {ours:8.0f} tokens/s")
    print(f"  speed-up                                               : {ours / plain:8.1f}×")
    return {"ours": ours, "plain": plain, "ratio": ours / plain}


def test_rcnn_train_throughput():
    r = run()
    timing.record("bench_rcnn_train", "RCNN training: one review at a time / batched", r["ratio"], "", "> 1")
    assert r["ratio"] > 1.0


if __name__ == "__main__":
    run()
