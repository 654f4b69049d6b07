"""Word vectors of the RCNN (SPECS §4.2): Lei's 200-d `review+wiki.filtered.200.txt.gz` when the user has
it, otherwise 200-d word2vec trained with gensim on the training reviews.

The vocabulary of the model is `[<pad>, <unk>] + the vector words` (the `WordModel` layout); `<pad>` and
`<unk>` are zero vectors (Lei: `<unk>` zero; his `<padding>` vector is never read here because padding is
masked). Tokens without a vector map to `<unk>`. The vectors are frozen during training [R].
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.errors import ResourceError
from benchmark.models.text import PAD, UNK

LEI_VECTORS = "review+wiki.filtered.200.txt.gz"
DIM = 200


@dataclass
class WordVectors:
    words: list[str]
    vectors: np.ndarray  # (V, D) float32
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def vocab_and_matrix(self) -> tuple[list[str], np.ndarray]:
        """(vocabulary [<pad>, <unk>, words…], embedding matrix (V + 2, D) with zero rows 0 and 1)."""
        matrix = np.zeros((len(self.words) + 2, self.dim), dtype=np.float32)
        matrix[2:] = self.vectors
        return [PAD, UNK, *self.words], matrix

    def coverage(self, docs: Sequence[Sequence[str]]) -> float:
        """Share of token occurrences of `docs` that have a vector."""
        known = set(self.words)
        total = sum(len(d) for d in docs)
        return sum(w in known for d in docs for w in d) / total if total else 0.0


def read_vectors(path: Path | str, limit: int | None = None) -> WordVectors:
    """Lei's text format: one word a line followed by its floats (gzip or plain). Rows with another
    dimension than the first row, or non-numbers, raise `ResourceError`; repeated words keep the first."""
    path = Path(path)
    if not path.exists():
        raise ResourceError(f"word-vector file {path} does not exist (Lei's is {LEI_VECTORS}); omit it to "
                            "train word2vec on the training reviews instead")
    opener = gzip.open if path.suffix == ".gz" else open
    words, rows, seen, dim = [], [], set(), None
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if n == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # a word2vec text header "V D"
            word, vals = parts[0], parts[1:]
            try:
                vec = np.asarray(vals, dtype=np.float32)
            except ValueError as exc:
                raise ResourceError(f"{path.name}:{n}: the vector of {word!r} is not numeric") from exc
            if dim is None:
                dim = vec.size
            elif vec.size != dim:
                raise ResourceError(f"{path.name}:{n}: {vec.size} values for {word!r}, expected {dim}")
            if word in seen or word in (PAD, UNK, "<padding>"):
                continue
            seen.add(word)
            words.append(word)
            rows.append(vec)
            if limit is not None and len(words) >= limit:
                break
    if not words:
        raise ResourceError(f"{path} holds no word vectors")
    return WordVectors(words, np.stack(rows), {"source": str(path), "kind": "file", "words": len(words)})


def _stable_hash(text: str) -> int:
    """gensim seeds each word's initial vector with `hashfxn(word + seed)`; Python's `hash` of a str
    changes between processes, so use a fixed one (deterministic vectors for a given seed)."""
    return zlib.crc32(text.encode("utf-8"))


def train_word2vec(docs: Sequence[Sequence[str]], dim: int = DIM, *, window: int = 5, min_count: int = 2,
                   epochs: int = 5, sg: int = 1, negative: int = 5, seed: int = 0, workers: int = 1) -> WordVectors:
    """word2vec (gensim) on tokenised `docs`. Defaults [I]: skip-gram, window 5, 5 negatives, words seen
    at least twice, 5 epochs (gensim's default). Lei's vectors were word2vec, 200-d, on reviews + Wikipedia
    (not available). One worker keeps the vectors deterministic for a seed."""
    try:
        from gensim.models import Word2Vec
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ResourceError("training word vectors needs gensim (`pip install gensim`), or pass Lei's "
                            f"vectors file ({LEI_VECTORS})") from exc
    sentences = [list(d) for d in docs if len(d)]
    if not sentences:
        raise ResourceError("no training text for word2vec")
    model = Word2Vec(sentences=sentences, vector_size=dim, window=window, min_count=min_count, sg=sg,
                     negative=negative, epochs=epochs, seed=seed, workers=workers, hashfxn=_stable_hash)
    kv = model.wv
    words = list(kv.index_to_key)  # most frequent first
    info = {"kind": "word2vec", "dim": dim, "window": window, "min_count": min_count, "epochs": epochs,
            "sg": sg, "negative": negative, "seed": seed, "words": len(words),
            "train_tokens": int(sum(len(s) for s in sentences))}
    return WordVectors(words, np.asarray(kv.vectors, dtype=np.float32).copy(), info)


def get_vectors(docs: Sequence[Sequence[str]], path: Path | str | None = None, **word2vec: Any) -> WordVectors:
    """Lei's vectors from `path` if given, else word2vec trained on `docs`."""
    if path is not None:
        return read_vectors(path)
    return train_word2vec(docs, **word2vec)
