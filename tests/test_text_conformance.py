"""Conformance of every text explainer submission (DESIGN §4, §6) + focused checks of the text methods.

The matrix covers every explainer `discover()` finds whose modalities include "text" (future ones
included) × three small random-weight word-level models on hand-written token lists (a one-word
document, unknown words, a repeated word, an empty document): a Kim CNN (max_len 12), a HAN word-level
attention model, and the Kim CNN seen as a black box (predict / target only). Each explainer must
return one finite float score per word (an empty array for the empty document), the same scores for
the same seed, the same scores for an instance whatever its batch companions, leave the batch
untouched, and use only the public text-model contract. Explainers that cannot handle a model (no
gradients, no attention layer, no feature maps, no LRP rule) are skipped with the reason — after
checking that `explain` raises a clear error.

The focused checks pin numbers: LRP conservation on the Kim CNN (Σ relevance = the logit minus the
bias terms, exactly the logit without biases), IG/DeepLIFT completeness, Grad-CAM against captum's
LayerGradCam per window size, LIME against the lime package's LimeTextExplainer run with the same
seed, leave-one-out and Kernel SHAP against values computed by hand.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from benchmark.contracts import Batch
from benchmark.models.text import KimCNN, WordAttention, WordModel, build_vocab
from benchmark.submission import discover

TRAIN = [
    ["a", "gripping", "and", "funny", "film", "!"],
    ["dull", "and", "slow", ",", "the", "plot", "is", "bad"],
    ["the", "cast", "shines", "but", "the", "plot", "is", "thin"],
    ["good", "good", "fun", "film"],
    ["bad", "acting", "and", "a", "dull", "script", "."],
]
DOCS = {
    "pos": ["a", "gripping", "and", "funny", "film", "!"],
    "one": ["dull"],
    "unk": ["the", "qwzx", "plot", "is", "blorft", "but", "the", "cast", "shines", "."],  # 2 unknown words
    "rep": ["bad", "bad", "good", "bad"],
    "empty": [],
}
IDS = list(DOCS)
MAX_LEN = 12
LABELS = [1, 0, 0, 1, 0]  # TRAIN's classes (1 = positive): the lexicon of the data-prior controls
ASSETS = ("lexicon",)  # what the board offers: the lexicon below, as a track hands it to the worker


def make_batch(ids=IDS, seed: int = 7) -> Batch:
    return Batch(ids=list(ids), inputs=[list(DOCS[i]) for i in ids], seed=seed)


def kim_cnn(seed: int = 0, zero_biases: bool = False) -> WordModel:
    vocab = build_vocab(TRAIN)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        module = KimCNN(len(vocab), max_len=MAX_LEN, embed_dim=16, filters=6)
        with torch.no_grad():  # a random CNN whose logits depend clearly on the words
            module.embedding.weight.mul_(2.0)
            module.embedding.weight[0].zero_()
            if zero_biases:
                for conv in module.convs:
                    conv.bias.zero_()
                module.fc.bias.zero_()
    return WordModel(module, vocab, name="kim-cnn")


def word_attention(seed: int = 0) -> WordModel:
    vocab = build_vocab(TRAIN)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        module = WordAttention(len(vocab), embed_dim=16, hidden=8)
        with torch.no_grad():
            module.embedding.weight[0].zero_()
            module.context.mul_(10.0)  # visibly non-uniform attention
    return WordModel(module, vocab, name="han-word")


class BlackBoxText:
    """A text model seen through `predict` / `target` only (what black-box tracks give)."""

    modality = "text"
    module = None
    white_box = False

    def __init__(self, model: WordModel) -> None:
        self._model = model
        self.name, self.task, self.n_outputs, self.batch_size = "kim-cnn-blackbox", model.task, model.n_outputs, 256

    def predict(self, tokens):
        return self._model.predict(tokens)

    def target(self, tokens):
        return self._model.target(tokens)

    def focus(self, ids) -> None:
        pass


class GuardedModel:
    """The model as an explainer may use it: the text Model contract only. Counts predict calls/rows
    and records any attribute read outside the contract (e.g. the vocabulary or the token ids)."""

    ALLOWED = {"predict", "target", "focus", "module", "modality", "white_box", "task", "n_outputs", "name",
               "batch_size", "max_len", "architecture", "embed", "mask", "baseline_embeddings",
               "forward_from_embeddings", "embedding_module", "attention", "word_scores", "aspect",
               "unlabeled_texts"}

    def __init__(self, model) -> None:
        self._model = model
        self.calls = 0
        self.rows = 0
        self.seen: list[list[list[str]]] = []
        self.forbidden: list[str] = []

    def predict(self, tokens):
        self.calls += 1
        self.rows += len(tokens)
        self.seen.append([list(t) for t in tokens])
        return self._model.predict(tokens)

    def __getattr__(self, name):
        if name in self.ALLOWED:
            return getattr(self._model, name)
        self.forbidden.append(name)
        raise AttributeError(f"explainers may not read model.{name}: it is not part of the text Model contract")


def run(explainer, model, batch: Batch) -> tuple[list[np.ndarray], GuardedModel]:
    guarded = GuardedModel(model)
    model.focus(batch.ids)
    return list(explainer.explain(guarded, batch)), guarded


def unsupported(explainer, model) -> str | None:
    check = getattr(explainer, "unsupported", None)
    return check(model) if callable(check) else None


def batch_invariant(model) -> bool:
    """Does the model itself give a document the same output alone and in a batch?"""
    docs = [DOCS[i] for i in IDS]
    together = model.predict(docs)
    alone = np.concatenate([model.predict([d]) for d in docs])
    return bool(np.allclose(together, alone, rtol=0, atol=1e-6))


EXPLAINERS = {name: s for name, s in discover().items() if s.kind == "explainer" and "text" in s.modalities}
MODEL_KINDS = ["kim-cnn", "han-word", "blackbox"]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models: one intra-op thread is fastest and immune to a busy machine (restored after)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(autouse=True, scope="module")
def lexicon_asset(tmp_path_factory):
    """The lexicon asset of the data-prior controls (issue #50), written from TRAIN by the generators' own
    `write_lexicon` and offered the way the worker finds it (`$XAIBENCH_ASSET_LEXICON`)."""
    from generators.lexicon import write_lexicon

    root = tmp_path_factory.mktemp("lexicon")
    write_lexicon(root, "train", TRAIN, LABELS, classes=("negative", "positive"), target="label")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XAIBENCH_ASSET_LEXICON", str(root / "lexicon" / "train"))
        yield root / "lexicon" / "train"


@pytest.fixture(scope="module")
def models():
    kim = kim_cnn()
    return {"kim-cnn": kim, "han-word": word_attention(), "blackbox": BlackBoxText(kim)}


def test_builtin_text_explainers_are_found():
    expected = {"saliency", "integrated-gradients", "input-x-gradient", "deeplift", "occlusion", "grad-cam",
                "kernel-shap", "random", "uniform", "lrp", "lime-text", "attention"}
    assert expected <= set(EXPLAINERS)
    # the same method keeps one submission across modalities
    assert {"image", "text"} <= set(EXPLAINERS["integrated-gradients"].modalities)


@pytest.mark.parametrize("model_kind", MODEL_KINDS)
@pytest.mark.parametrize("name", sorted(EXPLAINERS))
def test_text_conformance(name, model_kind, models):
    sub, model = EXPLAINERS[name], models[model_kind]
    batch = make_batch()
    reason = sub.supports(model.modality, model.white_box, batch.segments is not None, ASSETS)
    if reason:
        pytest.skip(reason)
    explainer = sub.instantiate()
    reason = unsupported(explainer, model)
    if reason:
        with pytest.raises(ValueError) as err:
            explainer.explain(GuardedModel(model), batch)
        assert str(err.value) == reason
        pytest.skip(reason)
    inputs_before = copy.deepcopy(batch.inputs)
    lists_before = [id(t) for t in batch.inputs]

    scores, guarded = run(explainer, model, batch)
    assert guarded.forbidden == [], f"{name} read non-contract model attributes {guarded.forbidden}"
    assert batch.inputs == inputs_before and [id(t) for t in batch.inputs] == lists_before, \
        f"{name} modified the batch"
    assert len(scores) == len(batch)
    for s, i in zip(scores, batch.ids):
        s = np.asarray(s)
        assert s.shape == (len(DOCS[i]),), f"{name}: {s.shape} scores for {len(DOCS[i])} words ({i})"
        assert np.issubdtype(s.dtype, np.floating)
        assert np.isfinite(s).all()

    # deterministic: same seed (fresh batch object and fresh explainer) → identical scores
    again, _ = run(sub.instantiate(), model, make_batch())
    for s, a in zip(scores, again):
        assert np.array_equal(s, a), f"{name} is not deterministic for a fixed seed"

    # an empty batch gives no scores (and no error)
    assert list(explainer.explain(GuardedModel(model), make_batch([]))) == []

    # independent of the batch composition: an instance alone gets its scores in the batch (checkable
    # only where the model's own outputs do not depend on the batch)
    for i in ("one", "unk"):
        (alone,), _ = run(explainer, model, make_batch([i]))
        full = scores[IDS.index(i)]
        scale = float(np.abs(full).max()) + 1e-12
        np.testing.assert_allclose(alone, full, rtol=1e-4, atol=1e-5 * max(scale, 1.0),
                                   err_msg=f"{name}: an instance's scores depend on its batch companions")


@pytest.mark.parametrize("kind", ["kim-cnn", "han-word"])
def test_text_models_are_batch_invariant(kind, models):
    assert batch_invariant(models[kind])


def test_empty_and_one_word_documents(models):
    batch = make_batch(["empty", "one", "empty"])
    for name, sub in sorted(EXPLAINERS.items()):
        explainer = sub.instantiate()
        for model in (models["kim-cnn"], models["han-word"]):
            if sub.supports("text", True, False, ASSETS) or unsupported(explainer, model):
                continue
            scores, _ = run(explainer, model, batch)
            assert [np.shape(s) for s in scores] == [(0,), (1,), (0,)], name


def test_random_control_depends_on_seed_and_instance(models):
    explainer = EXPLAINERS["random"].instantiate()
    s7, _ = run(explainer, models["kim-cnn"], make_batch(seed=7))
    s8, _ = run(explainer, models["kim-cnn"], make_batch(seed=8))
    assert not np.array_equal(s7[0], s8[0])
    assert not np.array_equal(s7[0][:4], s7[3][:4])  # different instances, different draws
    assert ((s7[0] >= 0) & (s7[0] < 1)).all()


# -- gradient methods at the embedding layer --------------------------------------------------------


def explain(name: str, model, ids=IDS, **overrides) -> dict[str, np.ndarray]:
    scores, _ = run(EXPLAINERS[name].instantiate(overrides), model, make_batch(ids))
    return dict(zip(ids, scores))


def logits(model, docs) -> torch.Tensor:
    with torch.no_grad():
        return model.forward_from_embeddings(model.embed(docs), model.mask(docs))


def embedding_gradients(model, docs) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(embedding, ∂ logit_target / ∂ embedding) per document, the documents embedded together."""
    emb = model.embed(docs).clone().requires_grad_(True)
    out = model.forward_from_embeddings(emb, model.mask(docs))
    t = torch.as_tensor(model.target(docs))
    (g,) = torch.autograd.grad(out.gather(1, t[:, None]).sum(), emb)
    return [(emb.detach()[n, : len(d)], g[n, : len(d)]) for n, d in enumerate(docs)]


@pytest.mark.parametrize("kind", ["kim-cnn", "han-word"])
def test_saliency_and_input_x_gradient_by_hand(kind, models):
    model = models[kind]
    l1 = explain("saliency", model)
    l2 = explain("saliency", model, word_reduce="l2")
    ixg = explain("input-x-gradient", model)
    ids = [i for i in IDS if DOCS[i]]
    for i, (emb, g) in zip(ids, embedding_gradients(model, [DOCS[i] for i in ids])):
        np.testing.assert_allclose(l1[i], g.abs().sum(-1).numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(l2[i], g.norm(dim=-1).numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(ixg[i], (emb * g).sum(-1).numpy(), rtol=1e-4, atol=1e-6)


class IgnoresWords(torch.nn.Module):
    """A text classifier whose logits ignore the words (as a rationale model that selects nothing)."""

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, 4, padding_idx=0)
        self.bias = torch.nn.Parameter(torch.tensor([0.3, -0.2]))

    def forward_embedded(self, emb, mask=None):
        return self.bias.expand(len(emb), 2)


@pytest.mark.parametrize("name", ["saliency", "input-x-gradient", "integrated-gradients", "deeplift"])
def test_gradient_methods_when_the_output_ignores_the_words(name):
    """Zero scores, not autograd's "tensor not used in the graph" error."""
    model = WordModel(IgnoresWords(len(build_vocab(TRAIN))), build_vocab(TRAIN), name="constant")
    scores = explain(name, model)
    assert all(s.shape == (len(DOCS[i]),) and not s.any() for i, s in scores.items())


@pytest.mark.parametrize("name, overrides, atol", [
    ("integrated-gradients", {"n_steps": 500, "internal_batch_size": 512}, 5e-4),
    ("deeplift", {}, 1e-5),
])
def test_completeness_from_the_padding_baseline(name, overrides, atol, models):
    """IG and DeepLIFT: a document's word scores sum to f_t(x) − f_t(padding) (logits); for IG up to the
    quadrature error, which the ReLU/max-pool kinks make ~5e-3 at 50 steps, hence 500 here."""
    model = models["kim-cnn"]
    scores = explain(name, model, **overrides)
    for i in ("pos", "unk", "rep", "one"):
        doc = DOCS[i]
        t = int(model.target([doc])[0])
        full = logits(model, [doc])[0, t]
        with torch.no_grad():
            base = model.forward_from_embeddings(model.baseline_embeddings([doc]), model.mask([doc]))[0, t]
        assert scores[i].sum() == pytest.approx(float(full - base), abs=atol * max(1.0, abs(float(full))))


def test_lrp_conservation_on_kim_cnn(models):
    """LRP-ε (ε → 0) on the Kim CNN: Σ_words R = Σ_{k: p_k > 0} w_{t,k} (p_k − b_k) — the target logit
    minus the dense bias and the conv biases of the winning windows — and exactly the logit when every
    bias is 0. (For a ReLU/max-pool network LRP-0 is gradient × input: compare with input-x-gradient.)"""
    model = models["kim-cnn"]
    lrp = explain("lrp", model)
    ixg = explain("input-x-gradient", model)
    module = model.module
    for i in ("pos", "unk", "rep", "one"):
        doc = DOCS[i]
        t = int(model.target([doc])[0])
        with torch.no_grad():
            maps = module.feature_maps(model.embed([doc]))
            pooled = torch.cat([m.amax(dim=2) for m in maps], dim=1)[0]  # (3q,)
            bias = torch.cat([c.bias for c in module.convs])
            expected = (module.fc.weight[t] * (pooled - bias) * (pooled > 0)).sum()
        assert lrp[i].sum() == pytest.approx(float(expected), rel=1e-4, abs=1e-6)
        assert float(logits(model, [doc])[0, t]) != pytest.approx(float(expected), abs=1e-3)  # biases matter
        np.testing.assert_allclose(lrp[i], ixg[i], rtol=1e-3, atol=1e-5)

    unbiased = kim_cnn(zero_biases=True)
    scores = explain("lrp", unbiased)
    for i in ("pos", "unk", "one"):
        t = int(unbiased.target([DOCS[i]])[0])
        assert scores[i].sum() == pytest.approx(float(logits(unbiased, [DOCS[i]])[0, t]), rel=1e-5)

    # the model is left as it was: no rules or captum activations stay on its modules
    assert not any(hasattr(m, "rule") or hasattr(m, "activations") for m in model.module.modules())


def test_lrp_epsilon_absorbs_relevance(models):
    model = kim_cnn(zero_biases=True)
    small = explain("lrp", model, epsilon=1e-9)["pos"].sum()
    large = explain("lrp", model, epsilon=1.0)["pos"].sum()
    assert abs(large) < abs(small)


def test_grad_cam_matches_captum_layer_grad_cam(models):
    """Per window size, the text Grad-CAM equals captum's LayerGradCam on the ReLU module of that
    window size (α = gradients averaged over the window positions, ReLU of the weighted sum); word p
    then gets the sum of the cams of the windows covering it, averaged over window sizes."""
    from captum.attr import LayerGradCam

    model = models["kim-cnn"]
    explainer = EXPLAINERS["grad-cam"].instantiate()
    docs = [DOCS[i] for i in ("pos", "unk", "one")]
    target = [int(t) for t in model.target(docs)]
    cams = explainer.window_cams(model, docs)
    forward = model.embedding_module()
    for cam, relu in zip(cams, model.module.relus):
        ref = LayerGradCam(forward, relu).attribute(model.embed(docs), target=target,
                                                    additional_forward_args=(model.mask(docs),),
                                                    relu_attributions=True)
        np.testing.assert_allclose(cam, ref[:, 0, :, 0].detach().double().numpy(), rtol=1e-5, atol=1e-7)
    # the spread by hand: window j covers j − ⌊(r−1)/2⌋ … j + ⌊r/2⌋
    words = explain("grad-cam", model, ids=["pos", "unk", "one"])
    for n, i in enumerate(("pos", "unk", "one")):
        expected = np.zeros(len(DOCS[i]))
        for r, cam in zip(model.module.windows, cams):
            for j in range(MAX_LEN):
                for p in range(j - (r - 1) // 2, j + r // 2 + 1):
                    if 0 <= p < len(DOCS[i]):
                        expected[p] += cam[n, j] / len(model.module.windows)
        np.testing.assert_allclose(words[i], expected, rtol=1e-5, atol=1e-7)
    mean = explain("grad-cam", model, ids=["pos"], text_spread="mean")["pos"]
    assert mean[0] > 0 and not np.allclose(mean, words["pos"])


# -- black-box methods ---------------------------------------------------------------------------------


@pytest.mark.parametrize("removal", ["pad", "delete"])
def test_leave_one_out_by_hand(removal, models):
    model = models["kim-cnn"]
    scores, guarded = run(EXPLAINERS["occlusion"].instantiate({"text_removal": removal}), model, make_batch())
    assert guarded.calls == 1  # the whole batch's perturbations in one predict call
    assert guarded.rows == sum(len(d) + 1 for d in DOCS.values() if d)
    for i, s in zip(IDS, scores):
        doc = DOCS[i]
        if not doc:
            continue
        t = int(model.target([doc])[0])
        for p in range(len(doc)):
            other = doc[:p] + doc[p + 1:] if removal == "delete" else doc[:p] + ["<pad>"] + doc[p + 1:]
            expected = model.predict([doc])[0, t] - model.predict([other])[0, t]
            assert s[p] == pytest.approx(expected, abs=1e-6)


def test_kernel_shap_text_efficiency(models):
    """Shapley values add up to f(x) − f(empty document) (captum weights the full and empty coalitions
    heavily); the one-word document gets that difference exactly."""
    model = models["kim-cnn"]
    scores = explain("kernel-shap", model, ids=["pos", "one", "rep"])
    for i in ("pos", "one", "rep"):
        t = int(model.target([DOCS[i]])[0])
        gap = model.predict([DOCS[i]])[0, t] - model.predict([[]])[0, t]
        assert scores[i].sum() == pytest.approx(gap, abs=1e-3)
    t = int(model.target([DOCS["one"]])[0])
    assert scores["one"][0] == pytest.approx(model.predict([DOCS["one"]])[0, t] - model.predict([[]])[0, t],
                                             abs=1e-6)


def lime_reference(model, doc: list[str], seed: int, num_samples: int, per_document: bool = False,
                   bow: bool = False) -> np.ndarray:
    """The lime package's LimeTextExplainer with the given tokens as words (custom split) and deleted
    words dropped. bow=False: positions as features (the classifier removes lime's mask token);
    bow=True: lime's own defaults (word types as features, a removed type deleted everywhere), the
    type's weight given to each of its positions."""
    from lime.lime_text import LimeTextExplainer

    mask = "\x00"

    def classifier(texts):
        docs = [[w for w in text.split(" ") if w and w != mask] for text in texts]
        if per_document:
            return np.concatenate([model.predict([d]) for d in docs])
        return model.predict(docs)

    t = int(model.target([doc])[0])
    features = list(dict.fromkeys(doc)) if bow else doc
    lime = LimeTextExplainer(kernel_width=25, feature_selection="none", split_expression=lambda s: s.split(" "),
                             bow=bow, mask_string=None if bow else mask, random_state=seed)
    exp = lime.explain_instance(" ".join(doc), classifier, labels=(t,), num_features=len(features),
                                num_samples=num_samples)
    if bow:
        assert [exp.domain_mapper.indexed_string.word(k) for k in range(len(features))] == features
    weights = np.zeros(len(features))
    for f, w in exp.local_exp[t]:
        weights[f] = w
    return weights[[features.index(w) for w in doc]] if bow else weights


def test_lime_text_equals_the_lime_package(models):
    model = models["kim-cnn"]
    batch = make_batch()
    scores, guarded = run(EXPLAINERS["lime-text"].instantiate({"num_samples": 500}), model, batch)
    assert guarded.calls == 1  # one batched classifier call for the whole batch
    assert guarded.rows == 500 * sum(1 for d in DOCS.values() if d)
    for n, (i, s) in enumerate(zip(IDS, scores)):
        if DOCS[i]:
            ref = lime_reference(model, DOCS[i], batch.instance_seed(n), 500)
            np.testing.assert_allclose(s, ref, rtol=1e-5, atol=1e-7)
    # deletion semantics: the perturbed documents are sub-sequences of the document (no mask tokens)
    seen = guarded.seen[0]
    assert seen[0] == DOCS["pos"] and all(len(d) < len(DOCS["pos"]) for d in seen[1:500])
    assert all(w in DOCS["pos"] for d in seen[1:500] for w in d)


def test_lime_text_chunked_classifier_gives_the_same_scores(models):
    model = models["kim-cnn"]
    one, _ = run(EXPLAINERS["lime-text"].instantiate({"num_samples": 300}), model, make_batch())
    chunked, guarded = run(EXPLAINERS["lime-text"].instantiate({"num_samples": 300, "batch_size": 256}),
                           model, make_batch())
    assert guarded.calls == int(np.ceil(300 * 4 / 256))
    for a, b in zip(one, chunked):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def test_lime_text_type_features_equal_lime_defaults(models):
    """features="type" (SPECS §4.8.4 strict mode) = LimeTextExplainer(bow=True); repeated words tie."""
    model = models["kim-cnn"]
    batch = make_batch()
    scores, guarded = run(EXPLAINERS["lime-text"].instantiate({"num_samples": 400, "features": "type"}), model, batch)
    assert guarded.calls == 1
    for n, (i, s) in enumerate(zip(IDS, scores)):
        if DOCS[i]:
            np.testing.assert_allclose(s, lime_reference(model, DOCS[i], batch.instance_seed(n), 400, bow=True),
                                       rtol=1e-5, atol=1e-7)
    rep = scores[IDS.index("rep")]  # ["bad", "bad", "good", "bad"]
    assert rep[0] == rep[1] == rep[3] and rep[2] != rep[0]
    # with no repeated word the two modes are the same explainer
    pos = IDS.index("pos")
    by_position, _ = run(EXPLAINERS["lime-text"].instantiate({"num_samples": 400}), model, batch)
    np.testing.assert_allclose(scores[pos], by_position[pos], rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="features must be one of"):
        EXPLAINERS["lime-text"].instantiate({"features": "sentence"})


def test_attention_scores_are_the_model_weights(models):
    model = models["han-word"]
    docs = [DOCS[i] for i in IDS if DOCS[i]]
    scores = explain("attention", model)
    ref = model.attention(docs)
    for s, r in zip([scores[i] for i in IDS if DOCS[i]], ref):
        np.testing.assert_allclose(s, r, rtol=1e-6)
        assert s.sum() == pytest.approx(1.0, abs=1e-5)
    assert not np.allclose(scores["pos"], scores["pos"][0])  # not uniform



@pytest.mark.parametrize("max_len", [6, 9, 40])
def test_kim_cnn_per_type_forward_equals_the_convolution(max_len):
    """`KimCNN.forward_ids` (the black-box path of `WordModel.predict`) gives the convolution's logits:
    documents of every length up to max_len (windows reaching into the padding, and max_len equal to the
    batch's length), empty rows, unknown words and masked positions holding non-padding ids."""
    torch.manual_seed(3)
    module = KimCNN(vocab_size=30, n_classes=3, max_len=max_len, embed_dim=8, filters=5).eval()
    with torch.no_grad():
        module.convs[0].bias.uniform_(-1, 1)  # relu(b) > 0 for some filters: windows wholly in the padding matter
    gen = torch.Generator().manual_seed(0)
    length = min(max_len, 6)
    ids = torch.randint(1, 30, (12, length), generator=gen)
    lengths = torch.tensor([0, 1, 2, length, length, 3, 5, 1, length, 4, 2, length]).clamp(max=length)
    mask = torch.arange(length)[None, :] < lengths[:, None]
    ids[~mask & (torch.arange(12)[:, None] % 2 == 0)] = 0  # padding ids in half the rows, stray ids in the others
    with torch.no_grad():
        ref = module.forward_embedded(module.embedding(ids), mask)
        fast = module.forward_ids(ids, mask)
    assert fast.dtype == torch.float64  # the dense layer in float64; `predict` rounds once
    fast = fast.float()
    assert torch.allclose(fast, ref, atol=1e-5), float((fast - ref).abs().max())
    assert not torch.equal(fast[1], fast[3])  # the rows differ: the comparison is not trivially of constants
    with pytest.raises(ValueError, match="exceeds the model's max_len"):
        module.forward_ids(torch.ones((1, max_len + 1), dtype=torch.long))
    assert module.forward_ids(torch.zeros((0, length), dtype=torch.long)).shape == (0, 3)


def test_kim_cnn_per_type_forward_in_row_chunks():
    """Long documents are computed in row chunks (buffers under the mmap threshold): the same logits."""
    torch.manual_seed(4)
    module = KimCNN(vocab_size=50, n_classes=2, max_len=3000, embed_dim=8, filters=50).eval()
    ids = torch.randint(1, 50, (40, 2900))  # 16 MB / (4 · 2,905 · 50) = 28 rows per chunk: two chunks
    with torch.no_grad():
        ref = module.forward_embedded(module.embedding(ids), ids != 0)
        fast = module.forward_ids(ids, ids != 0).float()
    assert torch.allclose(fast, ref, atol=1e-4), float((fast - ref).abs().max())


@pytest.mark.parametrize("length", [1, 3, 7, 9])
def test_kim_cnn_feature_maps_skip_windows_in_the_padding(length):
    """`feature_maps` convolves only the windows touching the given positions and appends b_q for the
    rest: the same maps, logits and embedding gradients as convolving all max_len windows."""
    torch.manual_seed(5)
    module = KimCNN(vocab_size=30, n_classes=2, max_len=9, embed_dim=8, filters=5).eval()
    with torch.no_grad():
        for conv in module.convs:
            conv.bias.uniform_(-1, 1)
    emb = torch.randn(4, length, 8, requires_grad=True)

    def full(e):
        x = module.pad_to_max(e).unsqueeze(1)
        return [torch.relu(conv(F.pad(x, (0, 0, (r - 1) // 2, r // 2)))).squeeze(3)
                for r, conv in zip(module.windows, module.convs)]

    ref, fast = full(emb), module.feature_maps(emb)
    assert [m.shape for m in fast] == [m.shape for m in ref] == [(4, 5, 9)] * 3
    for a, b in zip(fast, ref):
        assert torch.allclose(a, b, atol=1e-6)
    g_ref = torch.autograd.grad(module.classify(ref)[:, 1].sum(), emb)[0]
    g_fast = torch.autograd.grad(module.classify(fast)[:, 1].sum(), emb)[0]
    assert torch.allclose(g_fast, g_ref, atol=1e-6) and g_ref.abs().sum() > 0


def test_window_conv_equals_the_2d_convolution():
    """`WindowConv` (the Kim CNN's full-width Conv2d computed as a conv1d): same outputs and input
    gradients as `F.conv2d`; other inputs go to the 2-d kernel."""
    from benchmark.models.text import WindowConv

    torch.manual_seed(6)
    conv = WindowConv(1, 7, (3, 10))
    assert isinstance(conv, torch.nn.Conv2d)
    x = torch.randn(4, 1, 12, 10, requires_grad=True)
    fast, ref = conv(x), F.conv2d(x, conv.weight, conv.bias)
    assert fast.shape == ref.shape == (4, 7, 10, 1) and torch.allclose(fast, ref, atol=1e-5)
    w = torch.randn_like(ref)
    g1, g2 = (torch.autograd.grad((y * w).sum(), x)[0] for y in (fast, ref))
    assert torch.allclose(g1, g2, atol=1e-5)
    wide = torch.randn(2, 1, 12, 14)  # kernel narrower than the input: the 2-d convolution
    assert torch.allclose(conv(wide), F.conv2d(wide, conv.weight, conv.bias), atol=1e-5)


def test_kim_cnn_tables_are_shared_by_equal_weights_only():
    """`vocabulary_tables` is computed once per weight set in a process: a second module with the same weights (a
    model loaded again) gets the same tables; a module whose weights differ in one value, or one edited in place
    after its tables were made, gets its own — and its logits follow its own weights."""
    import copy

    torch.manual_seed(5)
    a = KimCNN(vocab_size=40, n_classes=2, max_len=8, embed_dim=8, filters=5).eval()
    b = copy.deepcopy(a)
    ids = torch.randint(1, 40, (6, 7))
    assert b.vocabulary_tables() is not None and a.vocabulary_tables()[0] is b.vocabulary_tables()[0]
    assert torch.equal(a.forward_ids(ids), b.forward_ids(ids))
    c = copy.deepcopy(a)
    with torch.no_grad():
        c.embedding.weight[ids[0, 0]] += 0.5
    assert c.vocabulary_tables()[0] is not a.vocabulary_tables()[0]
    with torch.no_grad():
        ref = c.forward_embedded(c.embedding(ids)).double()
    assert torch.allclose(c.forward_ids(ids), ref, atol=1e-5)
    assert not torch.equal(c.forward_ids(ids), a.forward_ids(ids))
    with torch.no_grad():  # edited in place after its tables were made
        b.convs[1].weight.mul_(2.0)
    assert b.vocabulary_tables()[1] is not a.vocabulary_tables()[1]
    with torch.no_grad():
        assert torch.allclose(b.forward_ids(ids), b.forward_embedded(b.embedding(ids)).double(), atol=1e-5)
