"""The RCNN rationale model (benchmark/models/rcnn.py), its training objective (generators/rcnn/train.py)
and the zero-contribution verification (generators/rcnn/verify.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from torch import nn

from benchmark.metrics.zero_contribution import N, SDK, SR
from benchmark.models.architectures import ARCHITECTURES
from benchmark.models.rcnn import (
    RCNNLayer,
    RCNNRationale,
    RationaleModel,
    compact,
    generator_log_prob,
    load_rcnn,
    save_rcnn,
)
from benchmark.models.text import PAD, UNK
from generators.rcnn.data import BeerData, Reviews
from generators.rcnn.train import (
    RCNNTrainConfig,
    batch_costs,
    pad,
    resolve_device,
    selection_costs,
    to_ids,
    train_rcnn,
)
from generators.rcnn.vectors import WordVectors
from generators.rcnn.verify import EMPTY, HANDSHAKE, KEPT, NO_SR, table2, verify


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def scalar_layer(w_lam, u_lam, b_lam, w1, w2, b) -> RCNNLayer:
    layer = RCNNLayer(1, 1, order=2)
    with torch.no_grad():
        layer.w_in.copy_(torch.tensor([[w_lam, w1, w2]]))  # [W_λ | W_1 | W_2]
        layer.u_forget.fill_(u_lam)
        layer.b_forget.fill_(b_lam)
        layer.bias.fill_(b)
    return layer


# -- the RCNN unit ---------------------------------------------------------------------------------


def test_rcnn_unit_two_steps_by_hand():
    # W_λ = 1, U_λ = 2, b_λ = −1, W_1 = 2, W_2 = −1, b = 0; inputs x_1 = 1, x_2 = 0.25; all states start at 0.
    layer = scalar_layer(1.0, 2.0, -1.0, 2.0, -1.0, 0.0)
    h = layer(torch.tensor([[[1.0], [0.25]]], dtype=torch.float64).float())[0, :, 0].double()
    # t = 1: λ_1 = σ(1·1 + 2·0 − 1) = σ(0) = 0.5
    #        c1_1 = 0.5·0 + 0.5·(2·1) = 1.0
    #        c2_1 = 0.5·0 + 0.5·(c1_0 + (−1)·1) = 0.5·(0 − 1) = −0.5
    #        h_1 = tanh(−0.5 + 0) = −0.46211715726…
    h1 = math.tanh(-0.5)
    assert h[0].item() == pytest.approx(h1, abs=1e-6)
    assert h1 == pytest.approx(-0.46211715726000974)
    # t = 2: λ_2 = σ(1·0.25 + 2·h_1 − 1) = σ(−0.75 − 0.92423431452) = σ(−1.67423431452) = 0.15786045099
    #        c1_2 = λ_2·1.0 + (1 − λ_2)·(2·0.25) = 0.5 + 0.5·λ_2 = 0.57893022549   (not used by h_2)
    #        c2_2 = λ_2·(−0.5) + (1 − λ_2)·(c1_1 + (−1)·0.25)      ← c1 of step 1, not of step 2
    #             = −0.5·λ_2 + 0.75·(1 − λ_2) = 0.75 − 1.25·λ_2 = 0.55267443627
    #        h_2 = tanh(0.55267443627) = 0.50252196206
    lam2 = sigmoid(0.25 + 2 * h1 - 1)
    assert lam2 == pytest.approx(0.15786045098751791)
    c2_2 = 0.75 - 1.25 * lam2
    assert h[1].item() == pytest.approx(math.tanh(c2_2), abs=1e-6)
    assert h[1].item() == pytest.approx(0.5025219620588927, abs=1e-6)
    # had c1_2 (0.5789) entered c2_2 instead of c1_1 the value would differ
    wrong = math.tanh(-0.5 * lam2 + (1 - lam2) * (0.5 + 0.5 * lam2 - 0.25))
    assert abs(h[1].item() - wrong) > 0.05


def test_rcnn_unit_reverse_and_masked_carry():
    layer = scalar_layer(1.0, 2.0, -1.0, 2.0, -1.0, 0.0)
    x = torch.tensor([[[1.0], [3.0], [0.25]]])
    # reverse over (x1, x2, x3) = forward over (x3, x2, x1), outputs aligned to positions
    rev = layer(x, reverse=True)[0, :, 0]
    fwd = layer(x.flip(1))[0, :, 0].flip(0)
    torch.testing.assert_close(rev, fwd)
    # mask out position 2 (x = 3.0): its output repeats position 1's state, and position 3 is the
    # two-step recurrence of the hand-computed test over (1, 0.25)
    h = layer(x, torch.tensor([[True, False, True]]))[0, :, 0]
    assert h[1].item() == h[0].item()
    assert h[2].item() == pytest.approx(0.5025219620588927, abs=1e-6)
    # nothing selected: all states stay 0
    assert layer(x, torch.zeros(1, 3, dtype=torch.bool)).abs().max().item() == 0.0


# -- the model: masking -------------------------------------------------------------------------------

VOCAB = [PAD, UNK] + [f"w{i}" for i in range(38)]


def random_rcnn(seed: int = 0, dim: int = 8, hidden: int = 8) -> RCNNRationale:
    """A small RCNN with spread-out selection probabilities and a sensitive encoder."""
    torch.manual_seed(seed)
    m = RCNNRationale(len(VOCAB), dim, hidden)
    with torch.no_grad():
        m.embedding.weight[2:] = torch.randn(len(VOCAB) - 2, dim)
        m.gen_out.weight.mul_(60)
        m.enc_out.weight.mul_(40)
        for layer in m.enc_layers:
            layer.w_in.mul_(10)
    return m.eval()


def random_docs(n: int, seed: int = 0, lo: int = 3, hi: int = 25) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[VOCAB[i] for i in rng.integers(2, len(VOCAB), rng.integers(lo, hi))] for _ in range(n)]


def test_non_selected_tokens_contribute_nothing():
    m = random_rcnn()
    wrapper = RationaleModel(m, VOCAB, "r")
    rng = np.random.default_rng(1)
    ids, mask = wrapper.ids(random_docs(32, seed=1))
    emb = m.embedding(ids)
    sel = torch.from_numpy(rng.random(ids.shape) < 0.4) & mask
    with torch.no_grad():
        base = m.encode(emb, sel, compacted=False)
        # (1) replace every non-selected token by another word: no change
        other = torch.where(sel, ids, torch.from_numpy(rng.integers(2, len(VOCAB), ids.shape)))
        torch.testing.assert_close(m.encode(m.embedding(other), sel, compacted=False), base, atol=1e-6, rtol=0)
        # … or by arbitrary (even huge) vectors
        noise = torch.where(sel[..., None], emb, 1e6 * torch.randn_like(emb))
        torch.testing.assert_close(m.encode(noise, sel, compacted=False), base, atol=1e-6, rtol=0)
        # (2) delete them: the encoder over the sub-sequence alone gives the same output
        for n in range(len(ids)):
            kept = ids[n][sel[n]][None]
            sub = m.encode(m.embedding(kept), torch.ones_like(kept, dtype=torch.bool), compacted=False)
            torch.testing.assert_close(sub, base[n:n + 1], atol=1e-6, rtol=0)
        # (3) the compacted encoder (the default) is the same function
        torch.testing.assert_close(m.encode(emb, sel), base, atol=1e-6, rtol=0)


def test_rcnn_is_encoder_of_its_deterministic_selection():
    m = random_rcnn()
    docs = random_docs(16, seed=2)
    wrapper = RationaleModel(m, VOCAB, "r")
    ids, mask = wrapper.ids(docs)
    with torch.no_grad():
        emb = m.embedding(ids)
        p = m.probabilities(emb, mask)
        sel = m.select(emb, mask)
        assert torch.equal(sel, (p >= 0.5) & mask) and p[~mask].eq(0).all()
        torch.testing.assert_close(m.forward_embedded(emb, mask), m.encode(emb, sel))
        torch.testing.assert_close(m(ids), m.encode(emb, sel))
        # a review with nothing selected gets the encoder's bias score σ(b)
        none = m.encode(emb[:1], torch.zeros_like(sel[:1]))
        assert none.item() == pytest.approx(torch.sigmoid(m.enc_out.bias).item())


def test_padding_and_batch_do_not_change_a_review():
    m = random_rcnn()
    wrapper = RationaleModel(m, VOCAB, "r", batch_size=7)
    docs = random_docs(20, seed=3)
    together = wrapper.predict(docs)
    alone = np.concatenate([wrapper.predict([d]) for d in docs])
    np.testing.assert_allclose(together, alone, atol=1e-6)
    sels = wrapper.selections(docs)
    for d, s in zip(docs, sels):
        assert np.array_equal(wrapper.selections([d])[0], s)


def test_wrapper_regression_contract_and_zero_gradient_off_selection():
    m = random_rcnn()
    wrapper = RationaleModel(m, VOCAB, "rcnn-test", aspect="appearance")
    docs = random_docs(6, seed=4)
    out = wrapper.predict(docs)
    assert wrapper.task == "regression" and wrapper.n_outputs == 1 and out.shape == (6, 1)
    assert ((out >= 0) & (out <= 1)).all()
    assert np.array_equal(wrapper.target(docs), np.zeros(6, dtype=np.int64))
    emb = wrapper.embed(docs).requires_grad_(True)
    mask = wrapper.mask(docs)
    y = wrapper.forward_from_embeddings(emb, mask)
    np.testing.assert_allclose(y.detach().numpy(), out, atol=1e-6)
    y.sum().backward()
    sel = m.select(emb.detach(), mask)
    grad_norm = emb.grad.norm(dim=2)
    assert grad_norm[~sel].max().item() == 0.0  # a non-selected token gets exactly zero gradient
    assert grad_norm[sel].max().item() > 0.0
    enc = wrapper.encode(docs, wrapper.selections(docs))
    np.testing.assert_allclose(enc, out[:, 0], atol=1e-6)
    emb_module = wrapper.embedding_module()
    torch.testing.assert_close(emb_module(emb.detach(), mask), y.detach())


def test_compact_keeps_order():
    x = torch.arange(10, dtype=torch.float32).reshape(2, 5, 1)
    sel = torch.tensor([[False, True, False, True, True], [True, False, False, False, False]])
    xc, mc, pos = compact(x, sel)
    assert xc[0, :, 0].tolist() == [1.0, 3.0, 4.0] and mc[0].tolist() == [True, True, True]
    assert xc[1, 0, 0].item() == 5.0 and mc[1].tolist() == [True, False, False]
    assert pos[0].tolist() == [1, 3, 4]


def test_registered_and_round_trip(tmp_path):
    assert ARCHITECTURES.get("rcnn-rationale") is RCNNRationale
    m = random_rcnn()
    digest = save_rcnn(m, VOCAB, tmp_path / "model", extra={"aspect": "appearance", "name": "rcnn-appearance"})
    cfg = json.loads((tmp_path / "model" / "config.json").read_text())
    assert cfg["architecture"] == "rcnn-rationale" and cfg["sha256"] == digest and cfg["task"] == "regression"
    assert cfg["vocab"] == VOCAB
    loaded = load_rcnn(tmp_path / "model")
    docs = random_docs(5, seed=5)
    np.testing.assert_array_equal(loaded.predict(docs), RationaleModel(m, VOCAB, "r").predict(docs))
    assert loaded.aspect == "appearance" and loaded.name == "rcnn-appearance"
    assert not loaded.module.embedding.weight.requires_grad


# -- the objective ----------------------------------------------------------------------------------


def test_default_recipe_constants():
    cfg = RCNNTrainConfig()
    assert cfg.lambda_s == 3e-4 and cfg.lambda_c == pytest.approx(6e-4) and cfg.cost_scale == 10.0
    assert (cfg.hidden, cfg.order, cfg.depth, cfg.dropout) == (200, 2, 2, 0.1)
    assert (cfg.lr, cfg.l2, cfg.batch_size, cfg.max_epochs, cfg.patience) == (5e-4, 1e-6, 256, 100, 10)
    assert cfg.threshold == 0.5 and cfg.batch_seed == 5817
    with pytest.raises(Exception, match="unknown aspect"):
        RCNNTrainConfig(aspect="colour")


def test_selection_costs_by_hand():
    z = torch.tensor([[1, 1, 0, 1, 0, 0], [0, 1, 1, 1, 1, 1]], dtype=torch.bool)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]], dtype=torch.bool)
    zsum, zdiff = selection_costs(z, mask)
    # row 0: Σz = 3; transitions 1→1→0→1→0→0: |0|+|1|+|1|+|1|+|0| = 3
    # row 1: only 3 real tokens (0, 1, 1): Σz = 2; transitions 0→1→1 = 1 (padding never counts)
    assert zsum.tolist() == [3.0, 2.0] and zdiff.tolist() == [3.0, 1.0]


def test_reinforce_costs_by_hand():
    m = random_rcnn()
    cfg = RCNNTrainConfig(hidden=8)
    ids, mask = pad(to_ids(random_docs(3, seed=6, lo=4, hi=7), VOCAB), [0, 1, 2])
    y = torch.tensor([0.2, 0.9, 0.5])
    z = torch.zeros_like(mask)
    z[:, :2] = True
    z &= mask
    c = batch_costs(m, ids, mask, y, cfg, z=z)
    emb = m.embedding(ids)
    logits = m.logits(emb, mask)
    p = torch.sigmoid(logits).detach()
    pred = m.encode(emb, z)[:, 0]
    loss = (pred - y) ** 2
    # Ω = ℓ + 3e-4·Σz + 6e-4·Σ|Δz|: every row selects its first 2 tokens → Σz = 2, one 1→0 transition
    omega = loss + 3e-4 * 2 + 6e-4 * 1
    torch.testing.assert_close(c["omega"], omega.detach())
    logp = torch.zeros(3)
    for n in range(3):
        k = int(mask[n].sum())
        logp[n] = sum(math.log(p[n, t]) if z[n, t] else math.log(1 - p[n, t]) for t in range(k))
    torch.testing.assert_close(generator_log_prob(logits, z, mask), logp, atol=1e-5, rtol=1e-5)
    l2g = sum((q ** 2).sum() for q in m.generator_parameters())
    l2e = sum((q ** 2).sum() for q in m.encoder_parameters())
    torch.testing.assert_close(c["cost_g"], 10 * (omega.detach() * logp).mean() + 1e-6 * l2g, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(c["cost_e"], 10 * loss.mean() + 1e-6 * l2e)
    # REINFORCE: Ω is a constant — the generator gradient is 10·mean(Ω·∇Σ log p), the encoder's is from ℓ
    (c["cost_g"] + c["cost_e"]).backward()
    assert all(q.grad is not None for q in m.generator_parameters() + m.encoder_parameters())
    assert m.embedding.weight.grad is None  # frozen


# -- the verification -----------------------------------------------------------------------------------


class Figure2Model(nn.Module):
    """A rule model in the shape of the RCNN with the paper's Figure-2 handshake planted:
    IF "very good": SELECT "very", RETURN 1.0; IF "not good": SELECT "not", RETURN 0.1;
    IF "good": SELECT "good" (and an "a" right before it), RETURN 0.8; ELSE SELECT ∅, RETURN 0.5.
    Embeddings are one-hot, so the rules read the token ids back from the embeddings."""

    vocab = [PAD, UNK, "the", "movie", "was", "very", "good", "not", "a"]
    threshold = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(len(self.vocab), len(self.vocab), padding_idx=0)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.eye(len(self.vocab)))
            self.embedding.weight[0] = 0

    def _words(self, emb, mask):
        ids = emb.argmax(-1)
        return [[(t, self.vocab[int(ids[n, t])]) for t in range(ids.shape[1]) if mask[n, t]]
                for n in range(ids.shape[0])]

    def select(self, emb, mask=None):
        if mask is None:
            mask = torch.ones(emb.shape[:2], dtype=torch.bool)
        sel = torch.zeros(emb.shape[:2], dtype=torch.bool)
        for n, words in enumerate(self._words(emb, mask)):
            pairs = list(zip(words, words[1:]))
            very = [a for a, b in pairs if a[1] == "very" and b[1] == "good"]
            neg = [a for a, b in pairs if a[1] == "not" and b[1] == "good"]
            if very or neg:
                for t, _ in very or neg:
                    sel[n, t] = True
            else:
                for i, (t, w) in enumerate(words):
                    if w == "good":
                        sel[n, t] = True
                        if i and words[i - 1][1] == "a":
                            sel[n, words[i - 1][0]] = True
        return sel

    def encode(self, emb, selection, compacted=True):
        out = []
        for words in self._words(emb, selection):
            ws = {w for _, w in words}
            out.append(1.0 if "very" in ws else 0.1 if "not" in ws else 0.8 if "good" in ws else 0.5)
        return torch.tensor(out)[:, None]

    def forward_embedded(self, emb, mask=None):
        return self.encode(emb, self.select(emb, mask))

    # what `RationaleModel` calls: the same rules from word ids
    def select_ids(self, ids, mask):
        return self.select(self.embedding(ids), mask)

    def encode_ids(self, ids, selection):
        return self.encode(self.embedding(ids), selection)

    def forward_ids(self, ids, mask):
        return self.forward_embedded(self.embedding(ids), mask)


def test_handshake_filter_on_planted_handshake():
    model = RationaleModel(Figure2Model(), Figure2Model.vocab, "figure2")
    pool = ["the movie was very good", "the movie was not good", "the movie was a good",
            "the movie was the movie", "good good"]
    v = verify(model, [s.split() for s in pool], ids=[f"r{i}" for i in range(5)])
    # "very good": S = {very}; alone, "very" is not selected (S_{S_x} = ∅ ≠ S_x) — the handshake through
    # "good" is caught; same for "not good". "a good": S = {a, good} is selected again on its own → no
    # handshake; Δ_a = |0.8 − 0.8| = 0 (SDK), Δ_good = |0.5 − 0.8| = 0.3 ≥ 0.1 (SR). Nothing selected →
    # dropped; "good good": both selected again, but removing either leaves a "good": Δ = 0, no SR → dropped.
    assert v.outcome == [HANDSHAKE, HANDSHAKE, KEPT, EMPTY, NO_SR]
    assert v.ids == ["r2"]
    assert v.labels[0].tolist() == [N, N, N, SDK, SR]
    np.testing.assert_allclose(v.delta[0][3:], [0.0, 0.3], atol=1e-6)
    assert np.isnan(v.delta[0][:3]).all() and v.prediction[0] == pytest.approx(0.8)
    stats = table2(v)
    assert stats["N"] == 1 and stats["pool"] == 5
    assert stats["pct_handshake"] == pytest.approx(40.0)
    assert stats["pct_no_sr"] == pytest.approx(100 * 2 / 3)  # of the 3 that passed the handshake test
    assert (stats["SR_x"]["mean"], stats["S_x"]["mean"], stats["N_x"]["mean"]) == (1.0, 2.0, 3.0)
    # the guarantee on the kept review: deleting all of N_x leaves the prediction unchanged
    kept = v.tokens[0]
    assert model.predict([[w for w, lab in zip(kept, v.labels[0]) if lab != N]])[0, 0] == pytest.approx(0.8)
    # while for the handshake review deleting N_x ("good") changes the prediction 1.0 → 0.5
    assert model.predict([["the", "movie", "was", "very", "good"]])[0, 0] == 1.0
    assert model.predict([["very"]])[0, 0] == 0.5


def test_verified_reviews_keep_their_guarantees_on_a_real_rcnn():
    m = random_rcnn()
    model = RationaleModel(m, VOCAB, "r", batch_size=64)
    docs = random_docs(120, seed=7)
    v = verify(model, docs, batch_size=32, loo_rows=50)
    stats = table2(v)
    assert stats["N"] > 20 and stats["eliminated_handshake"] > 0 and stats["eliminated_no_sr"] > 0
    for toks, lab, d, pred in list(zip(v.tokens, v.labels, v.delta, v.prediction))[:20]:
        kept = [w for w, lb in zip(toks, lab) if lb != N]
        # RCNN(x − N_x) = RCNN(x): the generator selects all of x' again and the encoder reads the same
        assert np.array_equal(model.selections([kept])[0], np.ones(len(kept), bool))
        assert model.predict([kept])[0, 0] == pytest.approx(model.predict([toks])[0, 0], abs=1e-6)
        assert model.predict([toks])[0, 0] == pytest.approx(pred, abs=1e-6)
        # Δ_s by brute force: the encoder without s
        sel = lab != N
        for s in np.flatnonzero(sel):
            without = sel.copy()
            without[s] = False
            brute = abs(model.encode([toks], [without])[0] - pred)
            assert brute == pytest.approx(d[s], abs=1e-5)
            assert (lab[s] == SR) == (d[s] >= 0.1)
    # the same partition whatever the batch size
    v2 = verify(model, docs, batch_size=7)
    assert v2.outcome == v.outcome and all(np.array_equal(a, b) for a, b in zip(v.labels, v2.labels))


# -- training ------------------------------------------------------------------------------------------


def _toy_data(n_train=120, n_dev=40, seed=0) -> BeerData:
    """Reviews whose appearance rating is set by one word ("dark" 0.2 / "pale" 0.9) among fillers."""
    rng = np.random.default_rng(seed)
    fill = [f"f{i}" for i in range(20)]

    def make(n):
        toks, scores = [], []
        for _ in range(n):
            key = rng.integers(2)
            doc = [str(w) for w in rng.choice(fill, rng.integers(4, 12))]
            doc.insert(int(rng.integers(len(doc) + 1)), ("dark", "pale")[key])
            toks.append(doc)
            scores.append([(0.2, 0.9)[key], 0.5, 0.5, 0.5, 0.5])
        return Reviews([str(i) for i in range(n)], toks, np.array(scores, np.float32), {"kept": n})

    return BeerData("appearance", make(n_train), make(n_dev), None, {"source": "toy"})


def _toy_vectors(data: BeerData) -> WordVectors:
    words = sorted({w for d in data.train.tokens for w in d})
    rng = np.random.default_rng(0)
    return WordVectors(words, rng.normal(size=(len(words), 16)).astype(np.float32), {"kind": "random"})


def test_training_returns_dev_mse_and_selection_rate_and_resumes(tmp_path):
    data = _toy_data()
    cfg = RCNNTrainConfig(hidden=8, batch_size=32, max_epochs=3, patience=10)
    # a zero time budget stops after the first batch: evaluated, saved, and a checkpoint is left
    first = train_rcnn(data, tmp_path / "m", RCNNTrainConfig(**{**cfg.__dict__, "max_seconds": 0.0}),
                       vectors=_toy_vectors(data))
    assert first["stopped"] == "max_seconds" and first["epochs"] == 1
    assert (tmp_path / "m" / "checkpoint.pt").exists()
    # the same recipe without the budget resumes at epoch 2 and runs to the end
    res = train_rcnn(data, tmp_path / "m", cfg, vectors=_toy_vectors(data))
    assert res["epochs"] == 3 and res["stopped"] == "max_epochs"
    assert 0.0 <= res["dev_mse"] < 1.0 and 0.0 <= res["dev_selection_rate"] <= 1.0
    assert not (tmp_path / "m" / "checkpoint.pt").exists()
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert [h["epoch"] for h in config["history"]] == [1, 2, 3]
    assert config["lambda_s"] == 3e-4 and config["lambda_c"] == pytest.approx(6e-4)
    model = load_rcnn(tmp_path / "m")
    assert model.predict(data.dev.tokens).shape == (len(data.dev), 1)
    assert res["device"] == str(resolve_device("auto"))
    # a finished model is not retrained, whichever device is asked for (the device is not part of the recipe)
    again = train_rcnn(data, tmp_path / "m", RCNNTrainConfig(**{**cfg.__dict__, "device": "cpu"}),
                       vectors=_toy_vectors(data))
    assert again["dev_mse"] == res["dev_mse"]


def test_device_resolution():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda")


def test_quick_recipe_outlasts_the_selection_collapse():
    """The quick recipe keeps Lei's patience: its selection rate falls to ~0 for a few epochs before
    recovering, and a patience of 3 stopped in that valley (generators.rcnn.build.quick_train_config)."""
    from generators.rcnn.build import RCNNBuildConfig, quick_train_config

    assert RCNNBuildConfig().pool_fraction == 0.4  # 4,000 of the 10,000-review file → 999 verified reviews
    q = quick_train_config("aroma")
    assert q.aspect == "aroma" and q.patience == RCNNTrainConfig().patience == 10 and q.max_epochs >= 20
    assert (q.hidden, q.batch_size, q.lr) == (64, 64, 2e-3)
    # issue #29: the quick recipe aims at Lei's selection (the targets' band) — Lei's recipe stays as it was
    from benchmark.models.rcnn_targets import TARGETS
    assert q.keep_band == (TARGETS.selection_min, TARGETS.selection_max) and q.coherent == 1.0
    assert TARGETS.selection_min < q.sparsity_target < TARGETS.selection_max
    lei = RCNNTrainConfig()
    assert (lei.sparsity_target, lei.keep_band, lei.coherent, lei.baseline) == (None, None, 2.0, "none")
