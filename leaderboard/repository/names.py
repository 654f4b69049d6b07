"""Submission names that cannot pass for one another (docs/submitting.md, "Names").

Two names collide when their skeletons are equal (`skeleton`), after Unicode TR39's recipe
(https://www.unicode.org/reports/tr39/#def-skeleton) adapted to names:

1. NFKC, then case folding (`str.casefold`): "Occlusion", "ｏｃｃｌｕｓｉｏｎ" → "occlusion";
2. each character that Unicode's confusables data (`confusables.txt`, as shipped by the
   `confusable-homoglyphs` package) lists with an ASCII prototype becomes that prototype: Cyrillic "о" → "o";
3. ASCII look-alikes (`ASCII_LOOKALIKES`, applied in order): "0" → "o", "1" / "i" / "|" / "!" → "l",
   "5" / "$" → "s", the separators "-", "_", ".", " " dropped, then "rn" → "m", "vv" → "w", "cl" → "d":
   "occ1usion", "occIusion", "0cclusion" and "occ-lusion" all have the skeleton of "occlusion".

A skeleton is for comparing only; it is never shown or stored.
"""

from __future__ import annotations

import functools
import json
import unicodedata

__all__ = ["ASCII_LOOKALIKES", "collides", "skeleton"]

ASCII_LOOKALIKES = (("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"), ("!", "l"), ("5", "s"), ("$", "s"), ("-", ""),
                    ("_", ""), (".", ""), (" ", ""), ("rn", "m"), ("vv", "w"), ("cl", "d"))


@functools.cache
def _prototypes() -> dict[str, str]:
    """character → its ASCII prototype, from the confusables data `confusable-homoglyphs` ships."""
    from importlib.resources import files

    data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8"))
    out = {}
    for ch, glyphs in data.items():
        if ch.isascii():
            continue
        ascii_ = [g["c"] for g in glyphs if g["c"].isascii() and g["c"].strip()]
        if ascii_:
            out[ch] = ascii_[0]
    return out


def skeleton(name: str) -> str:
    """The skeleton of `name` (module docstring): equal skeletons, confusable names."""
    text = unicodedata.normalize("NFKC", name).casefold()
    protos = _prototypes()
    text = "".join(protos.get(ch, ch) for ch in text).casefold()
    for a, b in ASCII_LOOKALIKES:
        text = text.replace(a, b)
    return text


def collides(name: str, others: list[str]) -> str | None:
    """The first of `others` (not `name` itself) that `name` could pass for, or None."""
    mine = skeleton(name)
    return next((o for o in sorted(others) if o != name and skeleton(o) == mine), None)
