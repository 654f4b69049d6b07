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
