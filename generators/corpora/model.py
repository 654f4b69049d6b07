"""The corpus data model and the one split protocol shared by every loader.

* `Document` — one labelled text: a stable `id`, its `tokens` (always `benchmark.tokenize.tokenize`),
  an integer `label` indexing `Corpus.classes`, the `text` the tokens were made from, and `meta`
  (where it came from: file line, Hub split/row, …; not part of equality).
* `RationaleDocument` — a `Document` with human rationales: `rationale` holds one flag per token,
  `token_source` the index of the source (whitespace) token each token came from, `evidence` the valid
  source spans `(start, end)` (end exclusive).
* `Corpus` — `name`, `classes`, ordered `splits` (name → documents) and `stats` (JSON-friendly counts:
  documents, tokens, per class and split, plus every exclusion with its reason).

**Split protocol** (`seeded_split`): the pooled documents are put in a *canonical order* that depends only
on their content — sorted by `(label, sha256 of the normalised text, sha256 of the text)`, the normalised
text being the tokens joined by single spaces — then permuted with `numpy.random.default_rng(seed)` and
cut in order. Split sizes: every split but the last gets `floor(fraction · n)` documents, the last gets
the rest (MR, n = 10,662, 60/20/20 → 6,397 / 2,132 / 2,133). Two sources holding the same documents
therefore give the same splits, whatever their file or row order.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from benchmark.errors import ResourceError

__all__ = [
    "Document",
    "RationaleDocument",
    "Corpus",
    "content_hash",
    "canonical_order",
    "split_sizes",
    "seeded_split",
    "check_fractions",
    "corpus_stats",
    "DEFAULT_SPLITS",
    "DEFAULT_FRACTIONS",
    "require_every_class",
]

DEFAULT_SPLITS: tuple[str, ...] = ("train", "validation", "test")
DEFAULT_FRACTIONS: tuple[float, ...] = (0.6, 0.2, 0.2)


@dataclass
class Document:
    """One labelled text. `tokens` come from `benchmark.tokenize.tokenize`; `label` indexes the classes."""

    id: str
    tokens: list[str]
    label: int
    text: str
    meta: dict[str, Any] = field(default_factory=dict, kw_only=True, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(eq=False)
class RationaleDocument(Document):
    """A document with a human rationale: `rationale[i]` flags token `i` as evidence.

    `token_source[i]` is the index of the source (whitespace-split) token that token `i` came from, and
    `evidence` lists the valid evidence spans over the source tokens, `(start, end)` with end exclusive.
    """

    rationale: np.ndarray
    token_source: np.ndarray
    evidence: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rationale = np.asarray(self.rationale, dtype=bool)
        self.token_source = np.asarray(self.token_source, dtype=np.int64)
        if self.rationale.shape != (len(self.tokens),):
            raise ValueError(
                f"document {self.id}: rationale has shape {self.rationale.shape}, "
                f"expected one flag per token ({len(self.tokens)})"
            )
        if self.token_source.shape != (len(self.tokens),):
            raise ValueError(f"document {self.id}: token_source must have one entry per token")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RationaleDocument):
            return NotImplemented
        return (
            (self.id, self.tokens, self.label, self.text, self.evidence)
            == (other.id, other.tokens, other.label, other.text, other.evidence)
            and np.array_equal(self.rationale, other.rationale)
            and np.array_equal(self.token_source, other.token_source)
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value (arrays too): unhashable, as a dataclass with eq

    @property
    def rationale_tokens(self) -> list[str]:
        """The tokens flagged as rationale, in document order."""
        return [t for t, f in zip(self.tokens, self.rationale) if f]


@dataclass
class Corpus:
    """A labelled text corpus: `classes[label]` names a label; `splits` keeps its split order."""

    name: str
    classes: list[str]
    splits: dict[str, list[Document]]
    stats: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, split: str) -> list[Document]:
        try:
            return self.splits[split]
        except KeyError:
            raise KeyError(
                f"corpus '{self.name}' has no split '{split}'; its splits are {list(self.splits)}"
            ) from None

    def documents(self) -> Iterator[Document]:
        """Every document, split after split."""
        for docs in self.splits.values():
            yield from docs

    @property
    def sizes(self) -> dict[str, int]:
        return {name: len(docs) for name, docs in self.splits.items()}

    def __len__(self) -> int:
        return sum(self.sizes.values())

    def __repr__(self) -> str:
        return f"Corpus({self.name!r}, classes={self.classes}, sizes={self.sizes})"


# ----------------------------------------------------------------------------------------------------
# The split protocol
# ----------------------------------------------------------------------------------------------------


def content_hash(doc: Document) -> str:
    """sha256 of the normalised text (the tokens joined by single spaces)."""
    return hashlib.sha256(" ".join(doc.tokens).encode("utf-8")).hexdigest()


def canonical_order(docs: Iterable[Document]) -> list[Document]:
    """Documents sorted by (label, sha256 of the normalised text, sha256 of the raw text)."""
    return sorted(
        docs,
        key=lambda d: (d.label, content_hash(d), hashlib.sha256(d.text.encode("utf-8")).hexdigest()),
    )


def check_fractions(fractions: Sequence[float], names: Sequence[str]) -> tuple[float, ...]:
    """Validate split fractions: one per split name, each in [0, 1], summing to 1."""
    fr = tuple(float(f) for f in fractions)
    if len(fr) != len(names):
        raise ResourceError(
            f"got {len(fr)} split fractions {fr} for {len(names)} splits {tuple(names)}; "
            "give one fraction per split"
        )
    if any(not (0.0 <= f <= 1.0) or math.isnan(f) for f in fr) or abs(sum(fr) - 1.0) > 1e-6:
        raise ResourceError(f"split fractions {fr} must each lie in [0, 1] and sum to 1 (e.g. 0.6, 0.2, 0.2)")
    if len(set(names)) != len(names):
        raise ResourceError(f"split names {tuple(names)} must be unique")
    return fr


def split_sizes(n: int, fractions: Sequence[float]) -> list[int]:
    """`floor(f · n)` for every split but the last, which gets the rest (10,662 → 6,397/2,132/2,133)."""
    sizes = [int(math.floor(f * n + 1e-9)) for f in fractions[:-1]]
    sizes.append(n - sum(sizes))
    return sizes


def seeded_split(
    docs: Iterable[Document],
    seed: int = 0,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    names: Sequence[str] = DEFAULT_SPLITS,
) -> dict[str, list[Document]]:
    """Canonical order → `default_rng(seed).permutation` → consecutive cuts of `split_sizes`.

    Within a split, documents keep their permuted order.
    """
    fr = check_fractions(fractions, names)
    ordered = canonical_order(docs)
    perm = np.random.default_rng(seed).permutation(len(ordered))
    shuffled = [ordered[i] for i in perm]
    out: dict[str, list[Document]] = {}
    start = 0
    for name, size in zip(names, split_sizes(len(ordered), fr)):
        out[name] = shuffled[start : start + size]
        start += size
    return out


def corpus_stats(splits: Mapping[str, Sequence[Document]], classes: Sequence[str]) -> dict[str, Any]:
    """Counts every loader reports: documents and tokens overall, per split and per class."""
    per_class: Counter[int] = Counter()
    per_split: dict[str, dict[str, Any]] = {}
    n_docs = n_tokens = 0
    for name, docs in splits.items():
        cls = Counter(d.label for d in docs)
        per_class.update(cls)
        toks = sum(len(d.tokens) for d in docs)
        per_split[name] = {
            "documents": len(docs),
            "tokens": toks,
            "per_class": {classes[k]: cls.get(k, 0) for k in range(len(classes))},
        }
        n_docs += len(docs)
        n_tokens += toks
    return {
        "documents": n_docs,
        "tokens": n_tokens,
        "per_class": {classes[k]: per_class.get(k, 0) for k in range(len(classes))},
        "splits": per_split,
    }


def require_every_class(docs: Sequence[Document], classes: Sequence[str], where: str) -> None:
    """ResourceError when a class has no (non-empty) document."""
    present = {d.label for d in docs}
    missing = [c for k, c in enumerate(classes) if k not in present]
    if missing:
        raise ResourceError(
            f"{where}: class(es) {missing} have no non-empty documents; check the data (a file or label "
            "value is missing or every document of the class is empty), or drop the class from `classes`"
        )
