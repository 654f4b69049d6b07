"""Rationale data sets of the trust track (SPECS §1.8), read from the data mirror, every exclusion counted.

Each loader returns a `TrustCorpus`: train / validation / test lists of `TrustDoc` (tokens from
`benchmark.tokenize.tokenize`, label, and `rationale` = G, the set of lower-cased word types the people
marked) plus `stats` with the counts of everything excluded.

* **HateXplain** (`<mirror>/hatexplain`, ERASER conversion; classes non-toxic / toxic): G = the word
  types inside the majority rationale spans. Train = the 5,514 labelled official-train posts
  (`train_partial.jsonl`), validation = official val, test = official test. Normal (non-toxic) posts
  have no rationale (G = ∅): they stay in train / validation but cannot be labelled by explanation
  precision, so the generator leaves them out of the trust test set (counted).
* **CAMS** (`<mirror>/cams`, 6 cause classes): all rows of the three CSV files with a cause label, pooled
  and split 60/20/20 by the shared seeded protocol. G = the word types of the annotator's
  `inference` / `Interpretations` text that also occur in the post (the text is a free phrase, mostly
  copied from the post); an empty interpretation → G = ∅; interpretation words absent from the post
  are counted (`rationale_words_outside_text`).
* **ERASER movies** (`<mirror>/eraser_movies`, NEG / POS): the official train split (1,600 reviews)
  split 7:1 into train / validation (seeded), test = the official *val* split (200 reviews; the
  official test split is withheld from the mirror). G = word types in the evidence spans; spans
  outside the text are counted by `load_eraser` and dropped.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.errors import ResourceError
from benchmark.resources.store import mirror_root
from benchmark.tokenize import is_word, tokenize

DATASETS = ("hatexplain", "cams", "movies")

# class names to embed for TOKI (SPECS §1.2 [I]: a per-dataset class-name map)
CLASS_WORDS = {
    "hatexplain": ["normal", "hateful offensive"],
    "cams": ["no reason", "bias abuse", "jobs careers", "medication", "relationship", "alienation"],
    "movies": ["negative", "positive"],
}
CLASSES = {
    "hatexplain": ["non-toxic", "toxic"],
    "cams": ["no reason", "bias or abuse", "jobs and careers", "medication", "relationship", "alienation"],
    "movies": ["NEG", "POS"],
}


@dataclass
class TrustDoc:
    id: str
    text: str
    tokens: list[str]
    label: int
    rationale: frozenset[str] = frozenset()


@dataclass
class TrustCorpus:
    name: str
    classes: list[str]
    class_words: list[str]
    splits: dict[str, list[TrustDoc]]
    stats: dict[str, Any] = field(default_factory=dict)


def _mirror(sub: str) -> Path:
    root = mirror_root()
    if root is None or not (Path(root) / sub).is_dir():
        raise ResourceError(f"data mirror folder {sub}/ not found (mirror root: {root}); set XAIBENCH_DATA_MIRROR "
                            "to the shared data folder")
    return Path(root) / sub


def _from_eraser(corpus, split: str) -> list[TrustDoc]:
    out = []
    for d in corpus.splits[split]:
        g = frozenset(t for t, f in zip(d.tokens, d.rationale) if f and is_word(t))
        out.append(TrustDoc(d.id, d.text, list(d.tokens), int(d.label), g))
    return out


def load_hatexplain(limit: int | None = None) -> TrustCorpus:
    from generators.corpora import load_eraser

    folder = _mirror("hatexplain")
    c = load_eraser(folder, split=("train_partial", "val", "test"), classes=("non-toxic", "toxic"),
                    name="hatexplain")
    splits = {"train": _from_eraser(c, "train_partial"), "validation": _from_eraser(c, "val"),
              "test": _from_eraser(c, "test")}
    if limit:
        splits = {k: v[:limit] for k, v in splits.items()}
    stats = {"source": str(folder), "loader": c.stats.get("splits", {}),
             "spans_out_of_range": c.stats.get("spans_out_of_range", 0),
             "excluded_empty": c.stats.get("excluded_empty", 0),
             "posts_without_label_not_in_mirror": 9869,  # official train posts with text but no label (SOURCE.md)
             "toxic_without_rationale": {k: sum(d.label == 1 and not d.rationale for d in v)
                                         for k, v in splits.items()}}
    return TrustCorpus("hatexplain", CLASSES["hatexplain"], CLASS_WORDS["hatexplain"], splits, stats)


def _cams_rows(path: Path, text_col: str, label_col: str, rat_col: str) -> list[dict[str, str]]:
    text = path.read_bytes().decode("utf-8", errors="replace")  # SOURCE.md: mixed encodings
    rows = []
    for r in csv.DictReader(io.StringIO(text)):
        rows.append({"text": r.get(text_col) or "", "label": (r.get(label_col) or "").strip(),
                     "rationale": r.get(rat_col) or ""})
    return rows


def load_cams(seed: int = 0, limit: int | None = None) -> TrustCorpus:
    from generators.corpora.model import Document, seeded_split

    folder = _mirror("cams")
    raw = (_cams_rows(folder / "added_CAMS_data.csv", "selftext", "cause", "inference")
           + _cams_rows(folder / "IntentSDCNL_Training.csv", "selftext", "ANNOTATIONS", "Interpretations")
           + _cams_rows(folder / "IntentSDCNL_Testing.csv", "selftext", "ANNOTATIONS", "Interpretations"))
    counts = {"rows": len(raw), "excluded_no_label": 0, "excluded_bad_label": 0, "excluded_empty_text": 0,
              "duplicates_dropped": 0, "empty_rationale": 0, "rationale_words_outside_text": 0,
              "rationale_without_text_overlap": 0}
    docs: list[Document] = []
    seen: set[str] = set()
    for i, r in enumerate(raw):
        if not r["label"]:
            counts["excluded_no_label"] += 1
            continue
        try:
            label = int(float(r["label"]))
        except ValueError:
            counts["excluded_bad_label"] += 1
            continue
        if not 0 <= label <= 5:
            counts["excluded_bad_label"] += 1
            continue
        tokens = tokenize(r["text"])
        if not tokens:
            counts["excluded_empty_text"] += 1
            continue
        key = " ".join(tokens)
        if key in seen:
            counts["duplicates_dropped"] += 1
            continue
        seen.add(key)
        words = {t for t in tokens if is_word(t)}
        rat = {t for t in tokenize(r["rationale"]) if is_word(t)}
        if not rat:
            counts["empty_rationale"] += 1
        outside = rat - words
        counts["rationale_words_outside_text"] += len(outside)
        if rat and not rat & words:
            counts["rationale_without_text_overlap"] += 1
        docs.append(Document(id=f"cams-{i:05d}", tokens=tokens, label=label, text=r["text"],
                             meta={"rationale": frozenset(rat & words)}))
    parts = seeded_split(docs, seed=seed)
    splits = {k: [TrustDoc(d.id, d.text, d.tokens, d.label, d.meta["rationale"]) for d in v] for k, v in parts.items()}
    if limit:
        splits = {k: v[:limit] for k, v in splits.items()}
    return TrustCorpus("cams", CLASSES["cams"], CLASS_WORDS["cams"], splits, {"source": str(folder), **counts})


def load_movies(seed: int = 0, limit: int | None = None) -> TrustCorpus:
    from generators.corpora import load_eraser

    folder = _mirror("eraser_movies")
    c = load_eraser(folder, split=("train", "val"), name="eraser-movies")
    train = _from_eraser(c, "train")
    perm = np.random.default_rng(seed).permutation(len(train))
    n_val = len(train) // 8
    splits = {"train": [train[i] for i in perm[n_val:]], "validation": [train[i] for i in perm[:n_val]],
              "test": _from_eraser(c, "val")}
    if limit:
        splits = {k: v[:limit] for k, v in splits.items()}
    stats = {"source": str(folder), "spans_out_of_range": c.stats.get("spans_out_of_range", 0),
             "spans_text_mismatch": c.stats.get("spans_text_mismatch", 0),
             "excluded_empty": c.stats.get("excluded_empty", 0),
             "note": "test = the official ERASER val split (the official test split is withheld)"}
    return TrustCorpus("movies", CLASSES["movies"], CLASS_WORDS["movies"], splits, stats)


def load_trust_corpus(name: str, seed: int = 0, limit: int | None = None) -> TrustCorpus:
    if name == "hatexplain":
        return load_hatexplain(limit)
    if name == "cams":
        return load_cams(seed, limit)
    if name == "movies":
        return load_movies(seed, limit)
    raise ResourceError(f"unknown trust data set {name!r}; choose from {', '.join(DATASETS)}")
