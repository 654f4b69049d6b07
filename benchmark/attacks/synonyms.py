"""The synonym space of word-substitution attacks (SPECS §2.4 step 2): N nearest neighbours by cosine.

TEF's space is counter-fitted GloVe (Mrkšić et al. 2016). `SynonymSpace.from_text(path)` reads that
file (`counter-fitted-vectors.txt`: one word and its values per line) when a user supplies it.
Offline, `generators.robustness.counterfit` builds the closest equivalent that installs here —
GloVe 6B 50-d counter-fitted with WordNet 3.0 synonym / antonym constraints — and saves it with
`save` (an `.npz` of words + unit vectors); `load` reads it back.

`neighbours(word, n)` = the `n` words of highest cosine to `word` (excluding itself; ties by lower
row), no similarity threshold (SPECS §2.4 [I]); a word outside the space has none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from benchmark.errors import ResourceError


class SynonymSpace:
    """Words and their unit vectors (module docstring); `neighbours` by cosine, `similarity` of two words.

    Args:
        words: one word per row of `vectors`.
        vectors: (n_words, dim) float; normalised to unit length here.
        name: the space's name, recorded in Results (default "space").
        info: how it was built (default {}).
    """

    def __init__(self, words: Sequence[str], vectors: np.ndarray, name: str = "space",
                 info: dict | None = None) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(words):
            raise ValueError(f"{len(words)} words but vectors of shape {vectors.shape}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.vectors = vectors / np.maximum(norms, 1e-12)
        self.words = [str(w) for w in words]
        self.index = {w: i for i, w in enumerate(self.words)}
        self.name = name
        self.info = dict(info or {})
        self._cache: dict[tuple[str, int], list[str]] = {}

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __len__(self) -> int:
        return len(self.words)

    def neighbours(self, word: str, n: int = 15) -> list[str]:
        """The `n` nearest words by cosine (excluding `word`); [] for a word outside the space."""
        key = (word, int(n))
        if key in self._cache:
            return list(self._cache[key])
        i = self.index.get(word)
        if i is None or n <= 0:
            return []
        sims = self.vectors @ self.vectors[i]
        sims[i] = -np.inf
        k = min(n, len(self.words) - 1)
        # the k most similar; equal cosines in the space's word order: every word tied with the (k+1)-th
        # is a candidate before the stable sort, so no partial sort's choice among ties (which differs
        # between CPUs' sorting kernels) decides the list
        cand = np.arange(len(sims))
        if k < len(sims) - 1:
            cand = np.flatnonzero(sims >= -np.partition(-sims, k)[k])
        order = cand[np.argsort(-sims[cand], kind="stable")][: k + 1]
        out = [self.words[j] for j in order.tolist() if j != i][:k]
        self._cache[key] = out
        return list(out)

    def similarity(self, a: str, b: str) -> float:
        """The cosine of two words; NaN when either is outside the space."""
        if a not in self.index or b not in self.index:
            return float("nan")
        return float(self.vectors[self.index[a]] @ self.vectors[self.index[b]])

    # -- files ---------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the space as an `.npz` (words, unit vectors, name and info as JSON), atomically."""
        import json

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, words=np.asarray(self.words), vectors=self.vectors.astype(np.float32),
                 info=np.asarray(json.dumps({"name": self.name, **self.info})))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> "SynonymSpace":
        """A space written by `save`; `ResourceError` when the file is missing."""
        import json

        path = Path(path)
        if not path.is_file():
            raise ResourceError(f"synonym space {path} is missing; build it with `xaibench generate robustness`")
        with np.load(path, allow_pickle=False) as z:
            info = json.loads(str(z["info"]))
            return cls(z["words"].tolist(), z["vectors"], name=info.pop("name", path.stem), info=info)

    @classmethod
    def from_text(cls, path: Path, name: str = "counter-fitted") -> "SynonymSpace":
        """A word-vector text file (word v1 … vd per line; a word2vec header line is skipped)."""
        words, rows = [], []
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.rstrip().split(" ")
                if len(parts) < 3:
                    continue
                try:
                    rows.append(np.asarray(parts[1:], dtype=np.float32))
                except ValueError:
                    continue
                words.append(parts[0])
        if not rows or len({len(r) for r in rows}) != 1:
            raise ResourceError(f"{path}: not a word-vector text file (word v1 … vd per line)")
        return cls(words, np.stack(rows), name=name, info={"source": str(path)})
