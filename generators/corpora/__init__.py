"""Real text corpora for the text generators, all tokenised by `benchmark.tokenize.tokenize`.

Loaders (each returns a `Corpus` of `Document`s / `RationaleDocument`s; protocols in their modules):

* `load_mr(source="mirror"|"local"|"hub", path=None, seed=0, fractions=(0.6, 0.2, 0.2), hub_id=…)` —
  MR sentence polarity, pooled and re-split 60/20/20 by the shared seeded protocol (6,397/2,132/2,133);
* `load_eraser(directory=None, split=("train", "val"))` — ERASER-format rationale data sets
  (default: the ERASER movies mirror), one rationale flag per token;
* `load_text_table(path, text_column="text", label_column="label", format=None, …)` — CSV / TSV /
  JSON lines / Parquet tables.

`load_corpus(name, **kw)` looks loaders up in `CORPORA` (``mr``, ``eraser-movies``, ``table``; other
packages add theirs through the ``xaibench.corpora`` entry-point group).
"""

from __future__ import annotations

from typing import Any, Callable

from benchmark.registry import Registry

from .eraser import align_rationale, load_eraser
from .model import (
    DEFAULT_FRACTIONS,
    DEFAULT_SPLITS,
    Corpus,
    Document,
    RationaleDocument,
    canonical_order,
    content_hash,
    seeded_split,
    split_sizes,
)
from .mr import MR_CLASSES, load_mr
from .tables import load_text_table, read_table_rows

__all__ = [
    "Document",
    "RationaleDocument",
    "Corpus",
    "DEFAULT_FRACTIONS",
    "DEFAULT_SPLITS",
    "MR_CLASSES",
    "canonical_order",
    "content_hash",
    "seeded_split",
    "split_sizes",
    "align_rationale",
    "load_mr",
    "load_eraser",
    "load_text_table",
    "read_table_rows",
    "load_corpus",
    "CORPORA",
]

CORPORA: Registry[Callable[..., Corpus]] = Registry("corpus", group="xaibench.corpora")
CORPORA.register("mr", load_mr)
CORPORA.register("eraser-movies", load_eraser)
CORPORA.register("table", load_text_table)


def load_corpus(name: str, **kw: Any) -> Corpus:
    """The corpus `name` from the registry, loaded with `kw` (e.g. ``load_corpus("mr", seed=1)``)."""
    return CORPORA.get(name)(**kw)
