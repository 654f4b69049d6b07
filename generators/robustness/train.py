"""Models under test of the robustness track (SPECS §2.8 [I]), trained on MR train (60/20/20 split of
`generators.corpora`), best validation epoch kept — the shared training loop (`generators.text_trainer`:
Adam 1e-3, batch 32, cross-entropy, dropout 0.5, keras init) with two more architectures:

* `cnn` — Kim CNN (`kim-cnn`, windows 3/4/5 × 50; SPECS §5.2);
* `lstm` — BiLSTM (`bilstm`, hidden 128 per direction, last states concatenated);
* `lstm-att` — BiLSTM + one additive attention head (`bilstm-attention`; the attention explainer reads it).

Embeddings [I]: `embeddings="glove-50d"` with `freeze_embeddings` (the generator's default) = frozen
GloVe 6B 50-d, the nearest to SPECS §2.8's frozen GloVe 300-d that installs here; "random" = trainable
random 128-d embeddings (earlier builds). MiniLM keeps its own word pieces. CPU, ≤ `epochs`.

Vocabulary [I] (`extra_vocab`, the generator's `vocab_rule="extend"`): the words of the attack's synonym
space get their own frozen GloVe rows beside the training words, so a swapped-in word is read as
itself, never as the <unk> row (what "Step-1 masking" does to a word).
"""

from __future__ import annotations

from pathlib import Path

from benchmark.models.recurrent import BiLSTM, BiLSTMAttention
from generators import text_trainer

# the IDC training loop builds modules from its ARCHES table; the robustness architectures join it
text_trainer.ARCHES.setdefault("bilstm", BiLSTM)
text_trainer.ARCHES.setdefault("bilstm-attention", BiLSTMAttention)

MODELS = {"cnn": "kim-cnn", "lstm": "bilstm", "lstm-att": "bilstm-attention", "minilm": "minilm"}
LOADERS = {"cnn": "word", "lstm": "word", "lstm-att": "word", "minilm": "minilm"}  # benchmark.models.spec


def train_models(xy: dict, root: Path, models=tuple(MODELS), epochs: int = 10, seed: int = 0,
                 overwrite: bool = False, threads: int | None = 1, embeddings: str = "glove-50d",
                 freeze_embeddings: bool | None = None, extra_vocab=None) -> dict[str, dict]:
    """Train (or reuse) `models`; `freeze_embeddings=None` freezes pre-trained embeddings and trains random
    ones; `extra_vocab` (word models, pre-trained embeddings only): words given their own rows."""
    freeze = embeddings != "random" if freeze_embeddings is None else bool(freeze_embeddings)
    out = {}
    for name in models:
        if name == "minilm":  # all-MiniLM-L6-v2 fine-tuned at the transformer helper's CPU scale
            from generators.corpora.transformer import MiniLMTrainConfig, train_minilm

            out[name] = train_minilm(xy["train"], xy["validation"], Path(root) / "model" / "mr-minilm",
                                     MiniLMTrainConfig.cpu(seed=seed, threads=threads), test=xy["test"],
                                     overwrite=overwrite, name="mr-minilm")
            continue
        cfg = text_trainer.TextTrainConfig(architecture=MODELS[name], epochs=epochs, seed=seed, threads=threads,
                                           patience=3, embeddings=embeddings, freeze_embeddings=freeze)
        if embeddings == "glove-50d":
            cfg.embed_dim = 50  # the GloVe table's width
        out[name] = text_trainer.train_text_classifier(xy["train"], xy["validation"],
                                                       Path(root) / "model" / f"mr-{name}", cfg, n_classes=2,
                                                       test=xy["test"], overwrite=overwrite, name=f"mr-{name}",
                                                       extra_vocab=extra_vocab)
    for name in models:  # the unlabeled training texts beside each model (L2X learns from them)
        write_model_texts(Path(root) / "model" / f"mr-{name}", xy["train"][0])
    return out


def write_model_texts(directory: Path, tokens) -> Path:
    """`texts.parquet` (the MR training sentences, tokens only) beside a model's weights."""
    from benchmark.models.rcnn import write_texts

    return write_texts(directory, [f"train-{i}" for i in range(len(tokens))], tokens)
