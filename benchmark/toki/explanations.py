"""TOKI's explanations (SPECS §1.2, §1.7): the explanation record, its top-k positive words, word-type
scores, word omission (p_c(x) − p_c(x without w), batched), the de-duplicating model wrapper LIME's
repeated samples go through, and the lower-casing WordNet lemmatiser."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np


@dataclass
class Explanation:
    """Top-k positive words of one explained prediction (word types, scores > 0, descending)."""

    words: list[str]
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.words)


def top_positive(words: Sequence[str], scores: Sequence[float], top_k: int,
                 normalise: Callable[[str], str] = str.lower, words_only: bool = False) -> Explanation:
    """Word/score pairs → Explanation: scores of the same (normalised) word are summed inside the
    explanation (SPECS §1.2 [I]), only s > 0 kept, top-k by score (stable: ties by first occurrence).
    `words_only` drops punctuation tokens first (LIME's own tokenizer never yields them [I])."""
    from benchmark.tokenize import is_word

    agg: dict[str, float] = {}
    for w, s in zip(words, scores):
        if words_only and not is_word(str(w)):
            continue
        key = normalise(str(w))
        agg[key] = agg.get(key, 0.0) + float(s)
    items = [(w, s) for w, s in agg.items() if s > 0 and math.isfinite(s)]
    items.sort(key=lambda t: -t[1])  # Python's sort is stable: ties keep first-occurrence order
    items = items[: int(top_k)]
    return Explanation([w for w, _ in items], np.array([s for _, s in items], dtype=np.float64))


def type_scores(tokens: Sequence[str], scores: Sequence[float] | np.ndarray,
                aggregate: str = "sum") -> tuple[list[str], list[float]]:
    """Per-position scores → per word type: "sum" over occurrences (gradient, SPECS §1.7) or "first"
    (explainers that give every occurrence its type's weight: LIME bag-of-words, type omission)."""
    out: dict[str, float] = {}
    for w, s in zip(tokens, scores):
        if aggregate == "first":
            out.setdefault(w, float(s))
        else:
            out[w] = out.get(w, 0.0) + float(s)
    return list(out), list(out.values())


def omission_scores(model: Any, docs: Sequence[Sequence[str]], targets: Sequence[int],
                    batch_size: int = 4096) -> list[tuple[list[str], list[float]]]:
    """Word omission (SPECS §1.7 -omis): score(w) = p_c(x) − p_c(x without every occurrence of w), for
    every word type of every document, all perturbations of all documents in batched predict calls."""
    plans, perturbed = [], []
    for doc in docs:
        types = list(dict.fromkeys(doc))
        plans.append(types)
        perturbed.append(list(doc))
        perturbed += [[w for w in doc if w != t] for t in types]
    probs = np.concatenate([np.asarray(model.predict(perturbed[s : s + batch_size]), dtype=np.float64)
                            for s in range(0, len(perturbed), batch_size)]) if perturbed else np.zeros((0, 1))
    out, start = [], 0
    for types, c in zip(plans, targets):
        p = probs[start : start + 1 + len(types), int(c)]
        start += 1 + len(types)
        out.append((types, (p[0] - p[1:]).tolist()))
    return out


class DedupModel:
    """A model wrapper for pipeline 1 whose `predict` sends every *distinct* document once to the wrapped
    model and copies the rows back (an exact shortcut: LIME's bag-of-words perturbations repeat — on the
    HateXplain training posts about half of 5,000 samples are duplicates — and the empty document recurs
    in every instance). `target` goes through the same `predict`; every other attribute is the model's.
    `calls` / `documents` / `distinct` count what it saved."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.documents = 0
        self.distinct = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def predict(self, docs: Sequence[Sequence[str]]) -> np.ndarray:
        """The wrapped model's outputs (N, n_outputs), each distinct document predicted once."""
        from benchmark.models.base import distinct_inputs

        unique, rows = distinct_inputs(docs, "text")
        self.documents += len(docs)
        self.distinct += len(unique)
        out = np.asarray(self._model.predict([list(d) for d in unique]))
        return out if rows is None else out[rows]

    def target(self, docs: Sequence[Sequence[str]]) -> np.ndarray:
        """The explained output per document: 0 for a single-output model, else the predicted class."""
        p = self.predict(docs)
        n_out = int(getattr(self._model, "n_outputs", p.shape[1] if p.ndim == 2 else 1))
        return np.zeros(len(docs), dtype=np.int64) if n_out == 1 else p.argmax(axis=1)


class Lemmatizer:
    """Lower-case + WordNet lemmatiser (SPECS §1.2 [I: no lemmatisation table]); the WordNet data must be set
    up (generators/lexicon.py: `ensure_wordnet`).

    Rule [I], closer to a lemma table (the released script loads one): a function word (scikit-learn's English
    stop-word list, plus does / did / doing / having) takes only its *verb* lemma (was/is/are → be, has → have,
    does → do) and is otherwise kept; any other word takes its noun lemma (jews → jew, women → woman) and, when
    that leaves it unchanged, its verb lemma (fucking → fuck). The noun reading alone mangles function words:
    was → "wa", has → "ha", us → "u", does → "doe", as → "a" (WordNet knows those nouns), which sent them to
    unrelated embeddings.

    Args:
        enabled (bool, optional): lemmatise; False = lower-case only (no WordNet needed). Default: True
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._cache: dict[str, str] = {}
        self._lem: Any = None  # NLTK's WordNetLemmatizer (NLTK ships no type information)
        if enabled:
            from benchmark.toki.embeddings import wordnet_lemmatizer

            self._lem = wordnet_lemmatizer()

    def __call__(self, word: str) -> str:
        """The word lower-cased and lemmatised (class docstring), cached."""
        w = str(word).lower()
        lem = self._lem
        if lem is None:  # not enabled
            return w
        out = self._cache.get(w)
        if out is None:
            if not w.isalpha():
                out = w
            elif w in _function_words():
                out = lem.lemmatize(w, "v")
            else:
                out = lem.lemmatize(w)
                if out == w:
                    out = lem.lemmatize(w, "v")
            self._cache[w] = out
        return out


_FUNCTION_WORDS: frozenset[str] | None = None


def _function_words() -> frozenset[str]:
    global _FUNCTION_WORDS
    if _FUNCTION_WORDS is None:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        # plus the auxiliaries the list lacks
        _FUNCTION_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"does", "did", "doing", "having"}
    return _FUNCTION_WORDS
