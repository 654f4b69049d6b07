"""L2X (submissions/l2x): shapes, determinism, K selected tokens, the per-aspect K, the on-disk cache, what
it learns from (the model's own predictions on its unlabeled texts — never ground truth), and the
relaxed / hard top-K by hand."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from benchmark.contracts import Batch
from benchmark.models.rcnn import RCNNRationale, RationaleModel
from benchmark.models.text import PAD, UNK, KimCNN, WordModel, build_vocab
from benchmark.submission import discover

WORDS = [f"w{i}" for i in range(30)]
VOCAB = [PAD, UNK, *WORDS]
SMALL = {"epochs": 2, "filters": 8, "hidden": 16, "batch_size": 16, "k": 3, "verbose": False}


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def docs(n: int, seed: int, lo: int = 2, hi: int = 20) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(lo, hi))] for _ in range(n)]


def rcnn(aspect: str | None = "aroma", texts=True) -> RationaleModel:
    torch.manual_seed(0)
    m = RCNNRationale(len(VOCAB), 8, 8)
    with torch.no_grad():
        m.embedding.weight[2:] = torch.randn(len(VOCAB) - 2, 8)
        m.gen_out.weight.mul_(60)
        m.enc_out.weight.mul_(40)
    return RationaleModel(m.eval(), VOCAB, "rcnn", aspect=aspect, texts=docs(120, seed=1) if texts else None)


class Recording:
    """The model as L2X uses it: records every attribute read and every document predicted."""

    def __init__(self, model) -> None:
        self._model = model
        self.reads: set[str] = set()
        self.predicted: list[list[str]] = []

    def predict(self, tokens):
        self.predicted += [list(t) for t in tokens]
        return self._model.predict(tokens)

    def __getattr__(self, name):
        self.reads.add(name)
        return getattr(self._model, name)


def l2x(**params):
    return discover()["l2x"].instantiate({**SMALL, **params})


def batch(ids=("a", "b", "c", "d"), seed: int = 0, empty: bool = True) -> Batch:
    d = docs(len(ids), seed=9, lo=1)
    if empty:
        d[-1] = []
    return Batch(ids=list(ids), inputs=d, seed=seed)


def test_shapes_scores_and_k_selected_tokens():
    model = rcnn()
    b = batch()
    scores = l2x(cache=False).explain(model, b)
    assert [s.shape for s in scores] == [(len(d),) for d in b.inputs]
    assert all(s.dtype == np.float32 and np.isfinite(s).all() and (s >= 0).all() for s in scores)
    assert scores[-1].size == 0
    explainer = l2x(cache=False)
    sel = explainer.select(model, b)
    for s, m, d in zip(scores, sel, b.inputs):
        assert m.sum() == min(3, len(d))  # exactly K tokens (all of a shorter document)
        if len(d):  # the selection is the top K of the scores
            assert set(np.flatnonzero(m)) == set(np.argsort(-s, kind="stable")[:3])
            assert s.min() == 0.0  # shifted logits: ranking by |score| = ranking by logit


def test_deterministic_under_seed_and_cached_on_disk(tmp_path):
    model = rcnn()
    first = l2x()
    a = first.explain(model, batch())
    assert first.last_trained is True
    assert len(list((tmp_path / "scratch" / "l2x" / "selectors").glob("*.pt"))) == 1
    again = l2x()  # a fresh explainer (a new process): loads the trained selector from the cache
    b = again.explain(model, batch())
    assert again.last_trained is False
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    fresh = l2x(cache=False).explain(model, batch())  # retrained from scratch: the same numbers
    assert all(np.array_equal(x, y) for x, y in zip(a, fresh))
    other = l2x(cache=False).explain(model, batch(seed=1))  # another run seed: another L2X
    assert not all(np.array_equal(x, y) for x, y in zip(a[:3], other[:3]))
    # an instance's scores do not depend on its batch companions
    alone = l2x().explain(model, Batch(ids=["b"], inputs=[batch().inputs[1]], seed=0))[0]
    np.testing.assert_allclose(alone, a[1], rtol=1e-5, atol=1e-5)


def test_k_by_aspect_and_explicit_k():
    ex = discover()["l2x"].instantiate({"verbose": False})
    assert [ex.k_for(rcnn(a)) for a in ("appearance", "aroma", "palate", None)] == [23, 18, 13, 23]
    assert discover()["l2x"].instantiate({"k": 5}).k_for(rcnn("palate")) == 5
    with pytest.raises(Exception, match="k must be"):
        discover()["l2x"].instantiate({"k": -1})


def test_learns_only_from_the_models_predictions_on_its_texts():
    model = rcnn()
    rec = Recording(model)
    out = l2x(cache=False).explain(rec, batch())
    assert len(out) == 4
    # what L2X read beyond the text Model contract: the corpus hook and the aspect, nothing else
    assert rec.reads <= {"unlabeled_texts", "aspect", "module", "embed", "task", "name", "max_len"}
    # its only supervision: the model's predictions on the model's own (unlabeled) texts
    corpus = [list(t) for t in model.unlabeled_texts()]
    assert rec.predicted == corpus
    assert not any(d in rec.predicted for d in batch().inputs if d not in corpus)


def test_models_without_texts_unsupported_unless_trained_on_the_batch():
    vocab = build_vocab([WORDS])
    torch.manual_seed(0)
    kim = WordModel(KimCNN(len(vocab), max_len=24, embed_dim=8, filters=4), vocab, name="kim")
    ex = l2x()
    reason = ex.unsupported(kim)
    assert "exposes none" in reason
    with pytest.raises(ValueError, match="exposes none"):
        ex.explain(kim, batch())
    assert ex.unsupported(rcnn(texts=True)) is None
    on_batch = l2x(train_on="batch", cache=False)
    scores = on_batch.explain(kim, batch())  # a classifier: softmax approximator, soft cross-entropy
    assert [s.shape for s in scores] == [(len(d),) for d in batch().inputs]
    trained = next(iter(on_batch._memo.values()))
    assert trained.info["regression"] is False and trained.info["texts"] == 3


def test_relaxed_and_hard_top_k():
    mod = discover()["l2x"]
    ex = mod.instantiate({"verbose": False})
    module = sys.modules[type(ex).__module__]
    logits = torch.tensor([[2.0, 0.5, 1.0, float("-inf")], [1.0, 3.0, 1.0, 0.0]])
    hard = module.hard_top_k(logits, 2)
    assert hard.tolist() == [[1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]]  # tie → earlier position
    assert module.hard_top_k(logits, 4)[0].tolist() == [1.0, 1.0, 1.0, 0.0]  # padding is never selected
    soft = module.relaxed_top_k(logits, 2, 0.5, torch.Generator().manual_seed(0))
    assert soft.shape == (2, 4) and soft[0, 3] == 0 and ((soft >= 0) & (soft <= 1)).all()
    # a very sharp logit is (almost) always sampled; at τ → 0 the max of K samples is one-hot-like
    sharp = module.relaxed_top_k(torch.tensor([[50.0, 0.0, 0.0]]), 3, 0.1, torch.Generator().manual_seed(1))
    assert sharp[0, 0] > 0.99
