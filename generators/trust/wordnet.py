"""The θ_relate pairs (SPECS §1.3) from WordNet 3.0 (its reader: `generators.lexicon.ensure_wordnet`).

`synonym_pairs` / `random_pairs` build the related / unrelated pairs:

* related [I, SPECS §1.3]: the `n_heads` most common single-word English lemmas (ranked by the sum of
  WordNet `lemma.count()` over the word's lemmas; ties by word), each paired with every single-token,
  lower-case, alphabetic synset lemma name ≠ the head word of every synset of the head word
  (Merriam-Webster's synonyms are not openly available);
* unrelated [P count, I rule]: pairs drawn uniformly from the single-word alphabetic lemmas, rejecting
  pairs that share a synset, identical words and duplicates, as many as the related pairs (or `n`);
* unrelated, corpus rule [I, issue #24] (`frequency_pairs`): pairs drawn by corpus frequency (p(w) ∝
  count(w)^power) from the words of the local corpora that every embedding model knows — the words TOKI
  meets in explanations, not WordNet's mostly rare lemmas — with the same rejections.
"""

from __future__ import annotations

import numpy as np

from benchmark.errors import ResourceError


def _single(name: str) -> str | None:
    w = name.lower()
    return w if w.isalpha() and "_" not in w else None


def lemma_counts(wn) -> dict[str, int]:
    """WordNet's tagged-sense count of every lemma key in `cntlist.rev`, read in one pass: what nltk's
    `Lemma.count()` finds by a binary search of that file per call (the last field of the key's line; 0 for a key
    without a line). 132,000 such searches were 40 s of `synonym_pairs`' 57 (2026-11-29)."""
    counts: dict[str, int] = {}
    with open(wn.abspath("cntlist.rev"), encoding="utf-8") as fh:
        for line in fh:
            key, sep, _ = line.partition(" ")
            if sep:
                counts[key] = int(line.rsplit(" ", 1)[-1])
    return counts


def synonym_pairs(wn, n_heads: int = 1000) -> tuple[list[tuple[str, str]], list[str]]:
    """(related pairs, head words): the n_heads most frequent single-word lemmas (by WordNet's tagged-sense
    counts summed over their senses, `lemma_counts`) with their synonyms."""
    counts = lemma_counts(wn)
    freq: dict[str, int] = {}
    for syn in wn.all_synsets():
        for lem in syn.lemmas():
            w = _single(lem.name())
            if w:
                freq[w] = freq.get(w, 0) + counts.get(lem.key(), 0)
    heads = sorted(freq, key=lambda w: (-freq[w], w))[:n_heads]
    pairs: set[tuple[str, str]] = set()
    for h in heads:
        for syn in wn.synsets(h):
            for lem in syn.lemma_names():
                w = _single(lem)
                if w and w != h:
                    pairs.add((h, w))
    return sorted(pairs), heads


def random_pairs(wn, n: int, seed: int = 0, words: list[str] | None = None) -> list[tuple[str, str]]:
    """n random single-word lemma pairs that share no synset (SPECS §1.3); `words` = the vocabulary to
    draw from (default: every single-word alphabetic WordNet lemma)."""
    if words is None:
        words = sorted({w for syn in wn.all_synsets() for lem in syn.lemma_names() if (w := _single(lem))})
    rng = np.random.default_rng(seed)
    out: set[tuple[str, str]] = set()
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 50 * n:
            raise ResourceError(f"could not draw {n} unrelated pairs")
        a, b = (words[i] for i in rng.integers(0, len(words), 2))
        if a == b or (a, b) in out:
            continue
        if set(wn.synsets(a)) & set(wn.synsets(b)):
            continue
        out.add((a, b))
    return sorted(out)


def frequency_pairs(freq: dict[str, int], n: int, seed: int = 0, power: float = 1.0,
                    wn=None) -> list[tuple[str, str]]:
    """n random word pairs, each word drawn with probability ∝ freq[w]^power (with replacement), rejecting
    identical words, duplicate pairs and (when `wn` is given) pairs that share a WordNet synset."""
    words = sorted(w for w, c in freq.items() if c > 0)
    if len(words) < 2:
        raise ResourceError("frequency_pairs needs at least two words with a positive count")
    p = np.array([float(freq[w]) ** float(power) for w in words])
    p /= p.sum()
    rng = np.random.default_rng(seed)
    out: set[tuple[str, str]] = set()
    synsets: dict[str, set] = {}

    def syn(w: str) -> set:
        if w not in synsets:
            synsets[w] = set(wn.synsets(w)) if wn is not None else set()
        return synsets[w]

    tries = 0
    while len(out) < n:
        if tries > 200 * n:
            raise ResourceError(f"could not draw {n} distinct unrelated pairs by frequency (got {len(out)}); "
                                "lower n or the frequency power")
        draws = rng.choice(len(words), size=(max(64, n - len(out)), 2), p=p)
        for a, b in draws:
            tries += 1
            x, y = words[a], words[b]
            if x == y or (x, y) in out or (syn(x) & syn(y)):
                continue
            out.add((x, y))
            if len(out) >= n:
                break
    return sorted(out)
