"""The same input gives the same output, bit for bit, whatever shares its batch (issue #35; DESIGN §8).

For every loader a resource can name (`benchmark.models.spec.LOADERS`: a Kim CNN, the HAN word level, the
BiLSTM and BiLSTM-attention, the RCNN rationale model, MiniLM, the AIXI CNN), a model of the real
architecture is saved and loaded the way the tracks load it, then asked for the same inputs:
* alone, one call per input;
* all together, in the order given and reversed;
* in shuffled batches of 2, 3, 5 and 7 with other companions, and under a chunk size of 3;
* beside strangers: the longest and the shortest input of the set, and an empty document;
under 1 torch thread, and together and shuffled again under 2. Every output must be byte-equal to the lone,
one-thread one.
Before predictions were computed in float64 (`benchmark.models.exact`), every loader failed this here
(the Kim CNN's per-word-type tables `forward_ids` builds over the batch's distinct words by 6e-8).

Also the bad input of the issue: an empty document is predicted the same alone and in a batch, and a
document longer than the model supports raises the same error alone and in a batch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmark.models.exact import ExactCopy
from benchmark.models.spec import ModelSpec
from tests.conftest import mirror_dir_or_skip

N_DOCS = 16
MAX_LEN = 64


@pytest.fixture(scope="module")
def docs() -> list[list[str]]:
    """16 real MR sentences (8 positive, 8 negative) of 2 to MAX_LEN tokens, lengths spread out."""
    folder = mirror_dir_or_skip("rt_polarity", "rt-polarity.pos", "rt-polarity.neg")
    out = []
    for name in ("rt-polarity.pos", "rt-polarity.neg"):
        lines = (folder / name).read_text(encoding="latin-1").splitlines()
        picked = [t for t in (line.split() for line in lines[:400]) if 2 <= len(t) <= MAX_LEN]
        picked.sort(key=len)
        out += picked[:: max(1, len(picked) // (N_DOCS // 2))][: N_DOCS // 2]  # short to long
    return out


def _save_word(folder, architecture, module, vocab):
    from benchmark.models.base import save_model

    kwargs = {"vocab_size": len(vocab)} | ({"max_len": MAX_LEN} if architecture == "kim-cnn" else {})
    save_model(module, folder, architecture, kwargs, extra={"vocab": vocab, "n_classes": 2,
                                                             "max_len": MAX_LEN if architecture == "kim-cnn" else None})


def build(kind: str, folder, docs) -> tuple[ModelSpec, object]:
    """(the loaded model's spec, the inputs it takes) for one loader kind; seeded weights."""
    from benchmark.models.text import build_vocab

    torch.manual_seed(0)
    vocab = build_vocab(docs)
    if kind in ("kim-cnn", "word-attention", "bilstm", "bilstm-attention"):
        import benchmark.models.recurrent  # noqa: F401  (registers the BiLSTMs)
        from benchmark.models.architectures import ARCHITECTURES

        kwargs = {"vocab_size": len(vocab)} | ({"max_len": MAX_LEN} if kind == "kim-cnn" else {})
        _save_word(folder, kind, ARCHITECTURES.get(kind)(**kwargs), vocab)
        return ModelSpec(name=kind, modality="text", white_box=True, loader="word", directory=folder), docs
    if kind == "rcnn":
        from benchmark.models.rcnn import RCNNRationale, save_rcnn

        module = RCNNRationale(len(vocab))
        with torch.no_grad():  # a generator that selects some words and not others
            module.generator_parameters()[-1].add_(0.3)
        save_rcnn(module, vocab, folder)
        return ModelSpec(name=kind, modality="text", white_box=True, loader="rcnn", directory=folder), docs
    if kind == "minilm":
        transformer = pytest.importorskip("benchmark.models.transformer")
        try:  # MiniLM's tokenizer and configuration, two layers of width 96: the same kernels, a faster test
            bert = transformer.bert_kwargs(hidden_size=96, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=192)
        except Exception as exc:  # noqa: BLE001 - the offline package is a declared dependency
            pytest.skip(f"all-MiniLM-L6-v2 is not installed ({exc})")
        kwargs = {"bert": bert, "n_classes": 2}
        transformer.save_minilm(transformer.MiniLMClassifier(**kwargs), folder, kwargs)
        return ModelSpec(name=kind, modality="text", white_box=True, loader="minilm", directory=folder), docs
    if kind == "aixi-cnn":
        from benchmark.check import draw_images
        from benchmark.models.architectures import AixiCNN
        from benchmark.models.base import save_model

        save_model(AixiCNN(size=32), folder, "aixi-cnn", {"size": 32}, extra={"task": "regression"})
        images = draw_images(n=N_DOCS, size=32)[0]
        return ModelSpec(name=kind, modality="image", white_box=True, loader="image", directory=folder), images
    raise AssertionError(kind)


KINDS = ["kim-cnn", "word-attention", "bilstm", "bilstm-attention", "rcnn", "minilm", "aixi-cnn"]


def _take(inputs, idx):
    return inputs[np.asarray(idx)] if isinstance(inputs, np.ndarray) else [inputs[i] for i in idx]


def every_way(model, inputs) -> dict[str, np.ndarray]:
    """The outputs for `inputs`, computed in each of the ways of the module docstring."""
    n = len(inputs)
    lengths = [len(x) for x in inputs] if not isinstance(inputs, np.ndarray) else [0] * n
    strangers = _take(inputs, [int(np.argmax(lengths)), int(np.argmin(lengths))])
    if not isinstance(inputs, np.ndarray):
        strangers = [*strangers, []]
    out = {}
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        out["alone/1"] = np.concatenate([model.predict(_take(inputs, [i])) for i in range(n)])
        for t in (1, 2):  # under 2 threads, the ways that put several inputs in one call
            torch.set_num_threads(t)
            out[f"together/{t}"] = model.predict(inputs)
            rng = np.random.default_rng(t)
            perm, shuffled, s, k = rng.permutation(n), np.zeros_like(out["alone/1"]), 0, 0
            while s < n:
                size = (2, 3, 5, 7)[k % 4]
                part = perm[s:s + size]
                shuffled[part] = model.predict(_take(inputs, part))
                s, k = s + size, k + 1
            out[f"shuffled/{t}"] = shuffled
            if t == 1:
                out["reversed/1"] = model.predict(_take(inputs, list(range(n))[::-1]))[::-1]
                both = (np.concatenate([strangers, inputs]) if isinstance(inputs, np.ndarray)
                        else [*strangers, *inputs])
                out["strangers/1"] = model.predict(both)[len(strangers):]
                chunk = model.batch_size
                model.batch_size = 3
                out["chunks-of-3/1"] = model.predict(inputs)
                model.batch_size = chunk
    finally:
        torch.set_num_threads(threads)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_every_loader_predicts_an_input_the_same_in_any_batch(kind, docs, tmp_path):
    spec, inputs = build(kind, tmp_path / kind, docs)
    model = spec.load()
    outs = every_way(model, inputs)
    ref = outs["alone/1"]
    assert ref.dtype == np.float32 and ref.shape[0] == len(inputs) and np.isfinite(ref).all()
    assert len({row.tobytes() for row in ref}) > len(inputs) // 2, "the outputs must depend on the input"
    for way, got in outs.items():
        diff = np.abs(got.astype(np.float64) - ref).max()
        assert got.tobytes() == ref.tobytes(), f"{kind}: {way} differs from alone by up to {diff:.3g}"


@pytest.mark.parametrize("kind", ["kim-cnn", "bilstm", "word-attention", "rcnn", "minilm"])
def test_an_empty_document_is_predicted_the_same_alone_and_in_a_batch(kind, docs, tmp_path):
    model = build(kind, tmp_path / kind, docs)[0].load()
    alone = model.predict([[]])
    assert np.isfinite(alone).all()
    for companions in (docs[:1], docs[-3:], docs):
        assert model.predict([*companions, []])[-1].tobytes() == alone[0].tobytes()
        assert model.predict([[], *companions])[0].tobytes() == alone[0].tobytes()


@pytest.mark.parametrize("kind", ["kim-cnn", "minilm"])
def test_a_document_too_long_for_the_model_is_refused_alike_alone_and_in_a_batch(kind, docs, tmp_path):
    model = build(kind, tmp_path / kind, docs)[0].load()
    long_doc = (docs[-1] * 600)[: (MAX_LEN + 1) if kind == "kim-cnn" else 600]
    with pytest.raises(ValueError) as alone:
        model.predict([long_doc])
    for companions in (docs[:2], docs):
        with pytest.raises(ValueError) as batched:
            model.predict([*companions, long_doc])
        assert str(batched.value) == str(alone.value)
    assert "exceeds" in str(alone.value) or "at most" in str(alone.value)


def test_the_float64_copy_follows_the_weights(docs, tmp_path):
    """A model trained further after it was wrapped is never predicted with the weights it had then."""
    model = build("kim-cnn", tmp_path / "k", docs)[0].load()
    before = model.predict(docs[:4])
    with torch.no_grad():
        model.module.fc.bias.add_(torch.tensor([3.0, -3.0]))
    after = model.predict(docs[:4])
    assert (after[:, 0] > before[:, 0]).all()
    assert model.exact_module().fc.bias.dtype == torch.float64
    assert model.module.fc.bias.dtype == torch.float32  # what white-box methods and training use


def test_captums_hooks_on_the_module_never_reach_predictions(docs, tmp_path):
    """A forward hook a submission (or captum) put on `module` does not run inside `predict`."""
    model = build("kim-cnn", tmp_path / "k", docs)[0].load()
    ref = model.predict(docs[:5])
    calls = []
    handle = model.module.fc.register_forward_hook(lambda m, i, o: calls.append(1) or o * 0)
    try:
        model._exact = ExactCopy()  # a new copy made while the hook is on
        assert model.predict(docs[:5]).tobytes() == ref.tobytes()
    finally:
        handle.remove()
    assert not calls


def test_word_and_sentence_encoders_do_not_depend_on_their_batch(docs):
    """TOKI's `minilm-word` vectors and TEF's sentence similarity: a word's (a text's) encoding is the same
    whichever others are encoded beside it (they decide relatedness at a threshold, and attack candidates)."""
    pytest.importorskip("sentence_transformers")
    from benchmark.metrics.robustness import SentenceSimilarity
    from benchmark.toki.embeddings import MiniLMWord

    words = sorted({w for d in docs for w in d})[:60]
    together = MiniLMWord().vectors(words)[0]
    alone = np.stack([MiniLMWord().vectors([w])[0][0] for w in words[:12]])
    assert alone.tobytes() == together[:12].tobytes()
    threes = np.concatenate([MiniLMWord().vectors(words[s:s + 3])[0] for s in range(0, 12, 3)])
    assert threes.tobytes() == together[:12].tobytes()

    sim = SentenceSimilarity(batch_size=4)
    texts = [" ".join(d) for d in docs]
    batched = sim.encode(texts)
    single = np.concatenate([sim.encode([t]) for t in texts[:6]])
    assert single.tobytes() == batched[:6].tobytes()
    assert np.array_equal(sim(texts[:6], texts[6:12]), (single * batched[6:12]).sum(1).astype(np.float64))


def test_synonym_neighbours_break_ties_by_the_spaces_word_order():
    """Words tied in cosine with the k-th neighbour are all candidates before a stable sort: the list is
    the space's word order among equals, the same for every k (a partial sort's choice among ties follows
    the sorting kernel: before, the 4 nearest of w0 here ended in w109, not w101, of twelve tied words)."""
    from benchmark.attacks.synonyms import SynonymSpace

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16))
    tied = np.sort(rng.choice(np.arange(1, 300), 12, replace=False))
    vectors[tied] = vectors[0] + 0.05 * rng.normal(size=16)  # twelve equal words, nearest to w0
    words = [f"w{i}" for i in range(len(vectors))]
    expected = [f"w{i}" for i in tied]
    for k in range(1, 13):
        assert SynonymSpace(words, vectors).neighbours("w0", k) == expected[:k]
