"""The fast exact forwards give the bits the definition gives (issue #47; `benchmark.models.recurrence`).

`predict` of the BiLSTM, the BiLSTM with attention, the HAN word level and the RCNN runs `forward_ids` on
the float64 copy (per-word input terms, rows sorted by length, tanh through σ), and the AIXI CNN's runs
`forward_eval` (strided max-pool before the ReLU). Each is checked here against the float64 copy's torch
forward — the definition, `forward_embedded(embedding(ids), mask)` / `forward(x)` — rounded to float32:
byte-equal on real MR sentences of 2 to 64 words, on 100 LIME-style masks of one of them (words replaced
by "<pad>", as the text explainers do) and on random images. The RCNN's probabilities, selections and
encoder (what the ground truth is built from) likewise. Also: a repeated input is predicted once and
gets the bits it gets alone.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmark.models.exact import rounded
from tests.test_batch_invariance import build, docs  # noqa: F401 - `docs` is the fixture of real sentences

RECURRENT = ["bilstm", "bilstm-attention", "word-attention", "rcnn"]


def masks_of(doc: list[str], n: int = 100, seed: int = 0) -> list[list[str]]:
    """LIME-style perturbations of `doc`: each word kept with probability 0.6, else "<pad>"."""
    rng = np.random.default_rng(seed)
    return [[w if keep else "<pad>" for w, keep in zip(doc, rng.random(len(doc)) < 0.6)] for _ in range(n)]


def definition(model, tokens) -> np.ndarray:
    """The float64 copy's torch forward from the embeddings, rounded once (what `predict` computed before)."""
    module = model.exact_module()
    ids, mask = model.ids(tokens)
    with torch.no_grad():
        out = module.forward_embedded(module.embedding(ids), mask)
    return rounded(out if out.shape[1] == 1 and model.task == "regression" else torch.softmax(out, dim=1)).numpy()


@pytest.mark.parametrize("kind", RECURRENT)
def test_the_fast_forward_gives_the_definitions_bits(kind, docs, tmp_path):  # noqa: F811
    model = build(kind, tmp_path / kind, docs)[0].load()
    longest = max(docs, key=len)
    for tokens in (docs, masks_of(longest), [[], *docs[:3]]):
        got, ref = model.predict(tokens), definition(model, tokens)
        assert got.dtype == np.float32 and got.shape == ref.shape
        diff = np.abs(got.astype(np.float64) - ref).max()
        assert got.tobytes() == ref.tobytes(), f"{kind}: predict differs from the definition by up to {diff:.3g}"
    assert len({row.tobytes() for row in model.predict(masks_of(longest))}) > 50  # the masks matter


def test_the_rcnn_ground_truth_paths_give_the_definitions_bits(docs, tmp_path):  # noqa: F811
    """probabilities, selections and the encoder under given selections: what `generators/rcnn` verifies."""
    model = build("rcnn", tmp_path / "rcnn", docs)[0].load()
    module = model.exact_module()
    tokens = [*docs, *masks_of(max(docs, key=len), 60)]
    ids, mask = model.ids(tokens)
    with torch.no_grad():
        emb = module.embedding(ids)
        p_ref = rounded(module.probabilities(emb, mask)).numpy()
        s_ref = module.select(emb, mask).numpy()
    selected = model.selections(tokens)
    assert 0 < np.mean(np.concatenate(selected)) < 1  # some words selected, some not
    for n, (p, z) in enumerate(zip(model.probabilities(tokens), selected)):
        assert p.tobytes() == p_ref[n, : len(tokens[n])].tobytes()
        assert np.array_equal(z, s_ref[n, : len(tokens[n])])
    other = [np.asarray(z) ^ (np.arange(len(z)) % 3 == 0) for z in selected]  # selections the generator did not make
    chosen = torch.zeros_like(mask)
    for n, z in enumerate(other):
        chosen[n, : len(z)] = torch.from_numpy(z)
    with torch.no_grad():
        e_ref = rounded(module.encode(emb, chosen & mask)[:, 0]).numpy()
    assert model.encode(tokens, other).tobytes() == e_ref.tobytes()


def test_the_aixi_cnns_fast_forward_gives_the_definitions_bits(docs, tmp_path):  # noqa: F811
    spec, images = build("aixi-cnn", tmp_path / "cnn", docs)
    model = spec.load()
    noise = np.random.default_rng(0).random((8, *images.shape[1:])).astype(np.float32)
    for x in (images, noise):
        with torch.no_grad():
            ref = rounded(model.exact_module()(model.as_tensor(x).double())).numpy()
        assert model.predict(x).tobytes() == ref.tobytes()


@pytest.mark.parametrize("kind", ["kim-cnn", "bilstm", "rcnn", "aixi-cnn"])
def test_a_repeated_input_is_predicted_once_with_its_own_bits(kind, docs, tmp_path, monkeypatch):  # noqa: F811
    spec, inputs = build(kind, tmp_path / kind, docs)
    model = spec.load()
    alone = np.concatenate([model.predict(inputs[i : i + 1]) for i in range(4)])
    order = [2, 0, 2, 1, 3, 0, 2, 3]
    repeated = inputs[order] if isinstance(inputs, np.ndarray) else [inputs[i] for i in order]
    seen: list[int] = []
    inner = model._predict_all
    monkeypatch.setattr(model, "_predict_all", lambda x: seen.append(len(x)) or inner(x))
    got = model.predict(repeated)
    assert seen == [4]  # four distinct inputs reached the model, once each
    assert got.tobytes() == alone[order].tobytes()
