"""The one tokenisation of the project: every corpus, model, PGT and metric uses `tokenize`.

`tokenize(text)`: Unicode NFKC, lower-case, then tokens are
* words — runs of letters/digits that may contain inner apostrophes, hyphens or slashes
  (``century's``, ``co-writer/director``, ``21st``), and
* single punctuation characters (``,`` ``.`` ``"`` ``(`` …).

Already-tokenised corpora (MR, ERASER, BeerAdvocate: tokens separated by spaces) come out as their own
tokens, lower-cased, with stray quotes split off (``'who`` → ``'``, ``who``). `is_word` tells words from
punctuation tokens (metrics may exclude the latter).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["tokenize", "is_word", "detokenize"]

_TOKEN = re.compile(r"[^\W_](?:[\w'’\-/]*[^\W_])?|[^\w\s]|_+")
_WORD = re.compile(r"^[^\W_]")


def tokenize(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens of `text` (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__}")
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def is_word(token: str) -> bool:
    """True for word tokens (start with a letter or digit), False for punctuation tokens."""
    return bool(_WORD.match(token))


def detokenize(tokens: list[str]) -> str:
    """Tokens joined by single spaces (the inverse of `tokenize` on MR-style pre-tokenised text)."""
    return " ".join(tokens)
