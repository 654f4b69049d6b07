"""`benchmark.models.spec.ModelSpec` validation: a spec is either loaded (a known loader and the model
directory it reads) or served (a harness-held model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.models.spec import ModelSpec


def test_a_loaded_spec_needs_its_directory():
    with pytest.raises(ValueError, match="needs the model directory"):
        ModelSpec("cnn", "image", True, loader="image")


def test_a_spec_is_loaded_or_served_and_names_a_known_loader():
    with pytest.raises(ValueError, match="either loaded"):
        ModelSpec("cnn", "image", True)
    with pytest.raises(ValueError, match="unknown model loader"):
        ModelSpec("cnn", "image", True, loader="nope", directory=Path("x"))
    spec = ModelSpec("cnn", "image", True, loader="image", directory=Path("m"))
    assert spec.wire("/sandbox/m") == {"loader": "image", "name": "cnn", "options": {}, "directory": "/sandbox/m",
                                       "per_instance": False, "targets": None}


def test_load_word_model_refuses_a_module_that_is_no_word_classifier(tmp_path, monkeypatch):
    """A saved module with a fitting embedding but no `forward_embedded` (not a `WordClassifier`) is not
    wrapped as a word model: ResourceError naming config.json."""
    from torch import nn

    from benchmark.errors import ResourceError
    from benchmark.models.architectures import ARCHITECTURES
    from benchmark.models.base import save_model
    from benchmark.models.text import PAD, UNK, load_word_model

    class EmbeddingOnly(nn.Module):
        def __init__(self, vocab_size: int) -> None:
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, 4, padding_idx=0)

    monkeypatch.setitem(ARCHITECTURES._items, "test-embedding-only", EmbeddingOnly)
    vocab = [PAD, UNK, "good"]
    save_model(EmbeddingOnly(len(vocab)), tmp_path / "m", "test-embedding-only", {"vocab_size": len(vocab)},
               extra={"vocab": vocab, "n_classes": 2})
    with pytest.raises(ResourceError, match="not a word classifier"):
        load_word_model(tmp_path / "m", "m")
