"""IDC WGA relevance (SPECS §5.3): a hand-computed tiny Kim CNN, the vectorised implementation against a
loop transcription of the formulas, window shares, skipping, padding, RS averaging, Hybrid vocabulary."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from benchmark.models.text import KimCNN, WordModel
from generators.idc.wga import (
    WgaOptions,
    document_relevance,
    hybrid_vocabulary,
    relevance_scores,
    wga_features,
)

VOCAB = ["<pad>", "<unk>", "a", "b", "c"]


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: one intra-op thread is faster (and steadier on shared cores); restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def hand_model(max_len: int = 3) -> KimCNN:
    """vocab 5, D = 2, windows (1, 2), q = 2 filters, 2 classes, every weight set by hand."""
    m = KimCNN(len(VOCAB), n_classes=2, max_len=max_len, embed_dim=2, windows=(1, 2), filters=2, dropout=0.5)
    with torch.no_grad():
        m.embedding.weight.copy_(torch.tensor([[0, 0], [0, 0], [1, 0], [0, 1], [2, 1]], dtype=torch.float32))
        # r = 1: f0 = [1, 2] (bias 0.5), f1 = [-1, 1] (bias 0)
        m.convs[0].weight.copy_(torch.tensor([[[[1, 2]]], [[[-1, 1]]]], dtype=torch.float32))
        m.convs[0].bias.copy_(torch.tensor([0.5, 0.0]))
        # r = 2: f0[0] = [1, 0], f0[1] = [0, 2] (bias 0); f1[0] = [1, 1], f1[1] = [-1, 0] (bias -1.5)
        m.convs[1].weight.copy_(torch.tensor([[[[1, 0], [0, 2]]], [[[1, 1], [-1, 0]]]], dtype=torch.float32))
        m.convs[1].bias.copy_(torch.tensor([0.0, -1.5]))
        # pooled features in the order [r1 f0, r1 f1, r2 f0, r2 f1]
        m.fc.weight.copy_(torch.tensor([[1, -2, 0.5, 1], [-1, 1, 0, 0.5]], dtype=torch.float32))
        m.fc.bias.zero_()
    return m.eval()


# Hand computation for the document "a b c" (ids 2 3 4): e(a) = [1,0], e(b) = [0,1], e(c) = [2,1].
#
# r = 1 (window j = position j).  Conv (no bias):  f0: 1, 2, 4        f1: -1, 1, -1
#                                 FM = ReLU(Conv + b): f0: 1.5, 2.5, 4.5  f1: 0, 1, 0
#   max-pool argmax: f0 at j=2, f1 at j=1.
# r = 2 (window j = positions j, j+1; position 3 is padding, e = 0).
#   f0: j0: e(a)·[1,0] + e(b)·[0,2] = 1 + 2 = 3;  j1: 0 + 2 = 2;  j2: e(c)·[1,0] + 0 = 2
#   f1: j0: e(a)·[1,1] + e(b)·[-1,0] = 1 + 0 = 1; j1: 1 + (-2) = -1;  j2: e(c)·[1,1] + 0 = 3
#   FM: f0: 3, 2, 2 (bias 0)   f1: ReLU(1-1.5)=0, ReLU(-1-1.5)=0, ReLU(3-1.5)=1.5
#   max-pool argmax: f0 at j=0, f1 at j=2.
# logits: class 0 = 4.5 - 2·1 + 0.5·3 + 1·1.5 = 5.5;  class 1 = -4.5 + 1 + 0 + 0.5·1.5 = -2.75  → predicts 0.
#
# Target class 0.  GM = fc weight at the pool argmax, 0 elsewhere.
#   r = 1: GM rows j0 [0, 0], j1 [0, -2], j2 [1, 0]  → δ = [0, 0, 1]
#          z = ReLU(δ·ΣFM) = [0, 0, 1·(4.5 + 0)] = [0, 0, 4.5]
#          j2: f0 kept (FM 4.5, Conv 4): share of c = 4/4 · 4.5 = 4.5; f1 skipped (FM = 0). q' = 1
#          R_1 = [0, 0, 4.5]
#   r = 2: GM rows j0 [0.5, 0], j1 [0, 0], j2 [0, 1]  → δ = [0.5, 0, 1]
#          z = [0.5·(3 + 0), 0, 1·(2 + 1.5)] = [1.5, 0, 3.5]
#          j0: f0 kept (Conv 3): a gets 1/3·1.5 = 0.5, b gets 2/3·1.5 = 1.0; f1 skipped (FM = 0). q' = 1
#          j1: z = 0 → nothing
#          j2: f0 (Conv 2): c gets 2/2·3.5 = 3.5; f1 (Conv 3): c gets 3/3·3.5 = 3.5; q' = 2 → c: 3.5
#              (the padding position 3 gets 0/2·3.5 from f0 and is ignored anyway)
#          R_2 = [0.5, 1.0, 3.5]
#   R = mean = [0.25, 0.5, 4.0]  → / 4.0 = [0.0625, 0.125, 1.0]
HAND_RAW = [0.25, 0.5, 4.0]
HAND = [0.0625, 0.125, 1.0]


def test_hand_computed_relevance():
    m = hand_model()
    ids = torch.tensor([[2, 3, 4]])
    assert m(ids).argmax(1).item() == 0
    assert np.allclose(m(ids).detach().numpy(), [[5.5, -2.75]])
    np.testing.assert_allclose(document_relevance(m, ids, [3], [0])[0], HAND, atol=1e-6)
    np.testing.assert_allclose(document_relevance(m, ids, [3], [0], normalisation="none")[0], HAND_RAW, atol=1e-6)
    # default targets = the prediction (class 0); default lengths = non-padding ids
    np.testing.assert_allclose(document_relevance(m, ids)[0], HAND, atol=1e-6)


def test_hand_computed_options():
    m = hand_model()
    ids = torch.tensor([[2, 3, 4]])
    # skip_inactive=False: r = 2, j0 also uses f1 (FM 0, Conv 1): a gets 1/1·1.5 = 1.5, b gets 0; q' = 2
    #   → a: (0.5 + 1.5)/2 = 1.0, b: (1.0 + 0)/2 = 0.5;  r = 1, j2 f1 (Conv -1): c gets -1/-1·4.5 → (4.5+4.5)/2
    #   R_1 = [0, 0, 4.5], R_2 = [1.0, 0.5, 3.5] → R = [0.5, 0.25, 4.0] → [0.125, 0.0625, 1.0]
    np.testing.assert_allclose(document_relevance(m, ids, [3], [0], skip_inactive=False)[0],
                               [0.125, 0.0625, 1.0], atol=1e-6)
    # bias_in_denominator=True: r = 1 j2 f0: 4/(4+0.5)·4.5 = 4.0 → R_1 = [0, 0, 4]
    #   r = 2 j0 f0: denominator 3 + 0 → a 0.5, b 1.0;  j2 f0: 2/2·3.5 = 3.5, f1: 3/(3-1.5)·3.5 = 7 → c 5.25
    #   R = [(0+0.5)/2, (0+1)/2, (4+5.25)/2] = [0.25, 0.5, 4.625]
    np.testing.assert_allclose(
        document_relevance(m, ids, [3], [0], bias_in_denominator=True, normalisation="none")[0],
        [0.25, 0.5, 4.625], atol=1e-6)
    # target class 1: r = 1 GM rows j1 [0, 1], j2 [-1, 0] → δ = [0, 1, 0], z = [0, 2.5+1, 0] = [0, 3.5, 0]
    #   j1: f0 (Conv 2) and f1 (Conv 1) both give b 3.5 → R_1 = [0, 3.5, 0]
    #   r = 2: fc weights [0, 0.5] → GM j2 [0, 0.5] → δ = [0, 0, 0.5] (rows j0, j1 are [0, 0]),
    #   z = [0, 0, 0.5·(2+1.5)] = [0, 0, 1.75]; j2: c gets 1.75 from both filters → R_2 = [0, 0, 1.75]
    #   R = [0, 1.75, 0.875] → [0, 1, 0.5]
    np.testing.assert_allclose(document_relevance(m, ids, [3], [1])[0], [0.0, 1.0, 0.5], atol=1e-6)
    # aggregation alternatives: sum over sizes doubles the raw map; "sum" over filters at r = 2 j2 → c: 7
    np.testing.assert_allclose(
        document_relevance(m, ids, [3], [0], size_aggregation="sum", normalisation="none")[0],
        [0.5, 1.0, 8.0], atol=1e-6)
    np.testing.assert_allclose(
        document_relevance(m, ids, [3], [0], filter_aggregation="sum", normalisation="none")[0],
        [0.25, 0.5, (4.5 + 7.0) / 2], atol=1e-6)


def test_options_are_validated():
    m = hand_model()
    with pytest.raises(TypeError):
        document_relevance(m, torch.tensor([[2, 3, 4]]), no_such_option=1)
    with pytest.raises(ValueError):
        WgaOptions(gradient_target="softmax")
    opts = WgaOptions()
    assert (opts.gradient_target, opts.bias_in_denominator, opts.skip_threshold, opts.filter_aggregation,
            opts.window_aggregation, opts.size_aggregation, opts.normalisation) == (
        "logit", False, 1e-8, "mean", "sum", "mean", "max")


def test_zero_conv_filter_is_skipped():
    # r = 2 filter f1 gets zero weights and bias 1: Conv ≡ 0, FM ≡ 1 > 0 → skipped by |Conv| < 1e-8
    m = hand_model()
    with torch.no_grad():
        m.convs[1].weight[1].zero_()
        m.convs[1].bias[1] = 1.0
    ids = torch.tensor([[2, 3, 4]])
    r = document_relevance(m, ids, [3], [0])[0]
    assert np.isfinite(r).all() and r.max() == pytest.approx(1.0)
    assert not np.isfinite(document_relevance(m, ids, [3], [0], skip_threshold=0.0)[0]).all()


def test_padding_positions_never_receive_relevance():
    m = hand_model(max_len=6)
    # the padding row of the embedding is masked out: a non-zero row 0 changes nothing
    with torch.no_grad():
        m.embedding.weight[0] = torch.tensor([5.0, -3.0])
    ids = torch.tensor([[2, 3, 4, 0, 0, 0], [4, 2, 3, 3, 2, 4]])
    out = document_relevance(m, ids, [3, 6], [0, 0])
    assert [len(o) for o in out] == [3, 6]
    np.testing.assert_allclose(out[0], HAND, atol=1e-6)  # same as alone, with max_len 3
    for pos in ("document", "all"):
        opts = WgaOptions(window_positions=pos, normalisation="none")
        r_alone = document_relevance(m, ids[:1, :3], [3], [0], options=opts)[0]
        r_batch = document_relevance(m, ids, [3, 6], [0, 0], options=opts)[0]
        np.testing.assert_allclose(r_alone, r_batch, atol=1e-6)


def test_eval_mode_and_training_flag_restored():
    m = hand_model()
    m.train()
    ids = torch.tensor([[2, 3, 4]])
    for _ in range(3):  # dropout 0.5 would make this random in training mode
        np.testing.assert_allclose(document_relevance(m, ids, [3], [0])[0], HAND, atol=1e-6)
    assert m.training


# ----------------------------------------------------------------------------------------------
# loop transcription of SPECS §5.3 steps 1–7 (one document at a time, every index spelled out)
# ----------------------------------------------------------------------------------------------
def reference_relevance(module: KimCNN, doc: list[int], target: int, opts: WgaOptions) -> np.ndarray:
    module.eval()
    n = len(doc)
    emb = module.embedding(torch.tensor([doc])).detach()
    maps = module.feature_maps(emb)
    for fm in maps:
        fm.retain_grad()
    logits = module.classify(maps)
    if opts.gradient_target == "logit":
        y = logits[0, target]
    elif opts.gradient_target == "probability":
        y = torch.softmax(logits, 1)[0, target]
    else:
        y = torch.log_softmax(logits, 1)[0, target]
    y.backward()
    E = emb[0].double().numpy()
    heats = []
    for r, conv, fm in zip(module.windows, module.convs, maps):
        a = (r - 1) // 2
        W = conv.weight.detach()[:, 0].double().numpy()  # (q, r, D)
        bias = conv.bias.detach().double().numpy()
        FM = fm[0].detach().double().numpy().T  # (max_len, q)
        GM = fm.grad[0].double().numpy().T
        q = FM.shape[1]
        n_win = n if opts.window_positions == "document" else min(module.max_len, n + a)
        R_r = np.zeros(n)
        count = np.zeros(n)
        for j in range(n_win):
            delta = max(GM[j, k] for k in range(q))
            z = max(0.0, sum(delta * FM[j, k] for k in range(q)))
            for i in range(r):
                if 0 <= j - a + i < n:
                    count[j - a + i] += 1
            per_pos = np.zeros(n)
            kept = 0
            for k in range(q):
                contrib, conv_val = {}, 0.0
                for i in range(r):
                    p = j - a + i
                    if 0 <= p < n:  # padding positions have e = 0: they neither count nor receive
                        contrib[p] = float(E[p] @ W[k, i])
                        conv_val += contrib[p]
                if opts.bias_in_denominator:
                    conv_val += bias[k]
                if opts.skip_inactive and FM[j, k] == 0:
                    continue
                if abs(conv_val) < opts.skip_threshold:
                    continue
                kept += 1
                for p, c in contrib.items():
                    per_pos[p] += c / conv_val * z
            if kept:
                if opts.filter_aggregation == "mean":
                    R_r += per_pos / kept
                elif opts.filter_aggregation == "mean_all":
                    R_r += per_pos / q
                else:
                    R_r += per_pos
        if opts.window_aggregation == "mean":
            R_r = R_r / np.maximum(count, 1)
        heats.append(R_r)
    heats = np.array(heats)
    R = {"mean": heats.mean(0), "sum": heats.sum(0), "max": heats.max(0)}[opts.size_aggregation]
    if opts.normalisation != "none":
        R = np.clip(R, 0, None)
    if opts.normalisation == "max":
        R = R / R.max() if R.max() > 0 else np.zeros_like(R)
    return R


def random_model(seed: int, vocab: int = 30, dim: int = 6, filters: int = 5, max_len: int = 14,
                 classes: int = 3) -> KimCNN:
    torch.manual_seed(seed)
    m = KimCNN(vocab, n_classes=classes, max_len=max_len, embed_dim=dim, windows=(3, 4, 5), filters=filters)
    with torch.no_grad():
        for conv in m.convs:
            conv.bias.uniform_(-0.6, 0.3)  # some filters inactive at some windows
    return m.double().eval()


def random_docs(seed: int, n: int, vocab: int, max_len: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [rng.integers(2, vocab, size=int(rng.integers(1, max_len + 1))).tolist() for _ in range(n)]


def pad(docs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    length = max(len(d) for d in docs)
    ids = torch.zeros((len(docs), length), dtype=torch.long)
    for n, d in enumerate(docs):
        ids[n, : len(d)] = torch.tensor(d)
    return ids, torch.tensor([len(d) for d in docs])


@pytest.mark.parametrize("opts", [
    WgaOptions(),
    WgaOptions(normalisation="none"),
    WgaOptions(window_positions="all", normalisation="none"),
    WgaOptions(bias_in_denominator=True, skip_inactive=False, normalisation="clip"),
    WgaOptions(filter_aggregation="mean_all", window_aggregation="mean", size_aggregation="max"),
    WgaOptions(filter_aggregation="sum", gradient_target="probability", normalisation="none"),
    WgaOptions(gradient_target="log_probability", skip_threshold=0.05),
])
def test_vectorised_matches_loop_transcription(opts):
    m = random_model(0)
    docs = random_docs(1, 12, 30, m.max_len)
    ids, lengths = pad(docs)
    targets = torch.tensor(np.random.default_rng(2).integers(0, 3, len(docs)))
    fast = document_relevance(m, ids, lengths, targets, options=opts)
    for d, t, r in zip(docs, targets.tolist(), fast):
        np.testing.assert_allclose(r, reference_relevance(m, d, t, opts), atol=1e-5, rtol=1e-5)
    if opts.normalisation == "max":
        assert all(r.min() >= 0 and (r.max() == pytest.approx(1.0) or r.max() == 0) for r in fast)


def test_vectorised_matches_loop_float32_model():
    m = random_model(3).float()
    docs = random_docs(4, 8, 30, m.max_len)
    ids, lengths = pad(docs)
    fast = document_relevance(m, ids, lengths)
    preds = m(ids).argmax(1).tolist()
    for d, t, r in zip(docs, preds, fast):
        np.testing.assert_allclose(r, reference_relevance(m, d, t, WgaOptions()), atol=1e-5)


def test_window_shares_sum_to_z():
    # one window size, default options, no normalisation: with the bias excluded, the shares of one
    # window's words sum to z for every kept filter, so Σ_p R[p] = Σ_{windows with q' > 0} z_j
    torch.manual_seed(5)
    m = KimCNN(30, n_classes=2, max_len=12, embed_dim=5, windows=(3,), filters=4).double().eval()
    with torch.no_grad():
        m.convs[0].bias.uniform_(-0.5, 0.5)
    docs = random_docs(6, 10, 30, 12)
    ids, lengths = pad(docs)
    raw = document_relevance(m, ids, lengths, normalisation="none")
    with_bias = document_relevance(m, ids, lengths, normalisation="none", bias_in_denominator=True)
    differs = 0
    for n, d in enumerate(docs):
        emb = m.embedding(torch.tensor([d])).detach()
        (fm,) = m.feature_maps(emb)
        fm.retain_grad()
        logits = m.classify([fm])
        logits[0, logits.argmax(1).item()].backward()
        FM, GM = fm[0, :, : len(d)].detach().T, fm.grad[0, :, : len(d)].T  # (n, q)
        z = torch.relu(GM.max(1).values * FM.sum(1))
        conv = torch.nn.functional.conv2d(torch.nn.functional.pad(emb.unsqueeze(1), (0, 0, 1, 1)),
                                          m.convs[0].weight)[0, :, : len(d), 0].T.detach()
        kept = ((FM != 0) & (conv.abs() >= 1e-8)).any(1)
        assert raw[n].sum() == pytest.approx(float(z[kept].sum()), abs=1e-9)
        differs += abs(with_bias[n].sum() - float(z[kept].sum())) > 1e-6
    assert differs > 0  # with the bias in the denominator the shares no longer sum to z


# ----------------------------------------------------------------------------------------------
# step 8: RS, the post-processing, the Hybrid vocabulary
# ----------------------------------------------------------------------------------------------
def test_relevance_scores_occurrence_average_and_misclassified_excluded():
    wm = WordModel(hand_model(max_len=6), VOCAB, "hand")
    docs = [["a", "b", "c"], ["c", "a", "c"], ["a", "b", "c"], ["b", "b"], ["zz", "a"], []]
    preds = wm.predict(docs[:5]).argmax(1).tolist()
    assert preds[0] == preds[2] == 0
    labels = [0, preds[1], 1, preds[3], preds[4], 1]  # doc 2 is misclassified, doc 5 is empty
    vocab = ["a", "b", "c", "zz", "never"]
    res = relevance_scores(wm, docs, labels, vocab, batch_size=2)
    assert res.documents == [int(np.sum(np.array(labels) == c)) for c in (0, 1)]
    assert res.n_correct == 4 and res.n_used == 4 and res.empty == 1 and res.n_documents == 6
    assert res.correct == [sum(1 for i in (0, 1, 3, 4) if labels[i] == c) for c in (0, 1)]
    heat = {i: document_relevance(wm.module, wm.ids([docs[i]])[0], [len(docs[i])], [labels[i]])[0]
            for i in (0, 1, 3, 4)}
    expected = np.zeros((5, 2))
    occ = np.zeros((5, 2))
    for i, h in heat.items():
        for p, w in enumerate(docs[i]):
            expected[vocab.index(w), labels[i]] += h[p]
            occ[vocab.index(w), labels[i]] += 1
    expected = np.divide(expected, occ, out=np.zeros_like(expected), where=occ > 0)
    np.testing.assert_allclose(res.rs, expected, atol=1e-9)
    np.testing.assert_array_equal(res.occurrences, occ)
    assert res.rs[vocab.index("never")].tolist() == [0.0, 0.0]
    # occurrence-level: "c" in class-0 docs 0 (once) and 1 (twice, if predicted 0) → mean of 3 values
    if labels[1] == 0:
        assert res.rs[2, 0] == pytest.approx((heat[0][2] + heat[1][0] + heat[1][2]) / 3)
    # the misclassified copy of doc 0 (label 1) contributes nothing to class 1
    assert res.occurrences[vocab.index("c"), 1] == sum(docs[i].count("c") for i in (1, 3, 4) if labels[i] == 1)
    # default vocabulary: the sorted unique words; order of documents / batch size does not matter
    res2 = relevance_scores(wm, docs[::-1], labels[::-1], batch_size=4)
    assert res2.vocab == ["a", "b", "c", "zz"]
    np.testing.assert_allclose(res2.rs, res.rs[:4], atol=1e-12)
    assert res2.summary()["correct"] == res.correct


def test_relevance_scores_bare_module_and_label_checks():
    m = hand_model()
    docs = [["a", "b", "c"]]
    res = relevance_scores(m, docs, [0], model_vocab=VOCAB)
    np.testing.assert_allclose(res.rs[:, 0], HAND)  # vocab a, b, c
    with pytest.raises(TypeError):
        relevance_scores(m, docs, [0])
    with pytest.raises(ValueError):
        relevance_scores(m, docs, [2], model_vocab=VOCAB)


def test_hybrid_vocabulary_ordering():
    vocab = ["d", "b", "a", "c", "e"]
    rs = np.array([[0.1, 0.7], [0.7, 0.2], [0.0, 0.0], [0.5, 0.7], [0.3, 0.1]])
    # max_c: d 0.7, b 0.7, a 0, c 0.7, e 0.3 → ties at 0.7 broken by word: b, c, d
    assert hybrid_vocabulary(rs, vocab, size=4) == ["b", "c", "d", "e"]
    assert hybrid_vocabulary(rs, vocab, size=10) == ["b", "c", "d", "e", "a"]
    assert hybrid_vocabulary(rs, vocab, size=0) == []


def test_hybrid_vocabulary_by_total_relevance():
    from generators.idc.wga import WgaScores

    vocab = ["d", "b", "a", "c", "e"]
    rs = np.array([[0.1, 0.7], [0.7, 0.2], [0.0, 0.0], [0.5, 0.7], [0.3, 0.1]])
    occ = np.array([[9, 1], [1, 1], [0, 0], [4, 2], [10, 0]])
    scores = WgaScores.__new__(WgaScores)
    scores.rs, scores.vocab, scores.occurrences = rs, vocab, occ
    # max_c RS·occ: d max(0.9, 0.7) = 0.9, b 0.7, a 0, c max(2.0, 1.4) = 2.0, e 3.0
    assert hybrid_vocabulary(scores, size=4, rank="total") == ["e", "c", "d", "b"]
    with pytest.raises(TypeError, match="needs the WgaScores"):
        hybrid_vocabulary(rs, vocab, rank="total")
    with pytest.raises(ValueError, match="rank must be"):
        hybrid_vocabulary(scores, rank="mean")


def test_wga_features_post_processing():
    pytest.importorskip("benchmark.metrics.interpretation")
    vocab = ["good", "bad", "movie", "great", "weak"]
    rs = np.array([[0.9, 0.1], [0.05, 0.8], [0.5, 0.45], [0.6, 0.3], [0.2, 0.29]])
    # class 0: good (0.9 ≥ .3, margin .8), great (0.6, margin .3); movie fails β; class 1: bad only
    feats = wga_features(rs, vocab)
    assert [[w for w, _ in f] for f in feats] == [["good", "great"], ["bad"]]
    assert feats[0][0] == ("good", pytest.approx(0.9))
    assert [[w for w, _ in f] for f in wga_features(rs, vocab, alpha=0.3, beta=0.05)] == [
        ["good", "great", "movie"], ["bad"]]


def test_throughput_print():
    """Not a performance assertion: prints relevance_scores throughput (SPECS-size CNN, ~1000 docs)."""
    torch.manual_seed(0)
    words = [f"w{i}" for i in range(2000)]
    m = KimCNN(len(words) + 2, n_classes=2, max_len=40, embed_dim=128, windows=(3, 4, 5), filters=50)
    wm = WordModel(m, ["<pad>", "<unk>"] + words, "perf")
    rng = np.random.default_rng(0)
    docs = [[words[i] for i in rng.integers(0, len(words), int(rng.integers(15, 26)))] for _ in range(1000)]
    labels = wm.predict(docs).argmax(1)
    labels[::5] = 1 - labels[::5]  # 80 % correct
    for threads in (1, 2):
        torch.set_num_threads(threads)  # the autouse fixture restores the setting
        t0 = time.perf_counter()
        res = relevance_scores(wm, docs, labels.tolist())
        dt = time.perf_counter() - t0
        print(f"\nWGA relevance_scores: {len(docs)} docs (len 15-25, D=128, q=50, windows 3/4/5, {threads} "
              f"thread(s)) in {dt:.2f} s = {len(docs) / dt:.0f} docs/s; correct {res.n_correct}")
    assert res.n_correct == 800 and res.rs.shape == (len(res.vocab), 2)
