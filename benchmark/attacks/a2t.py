"""A2T (Yoo & Qi 2021) re-implemented on the attack layer, and TOKI's candidate rule (SPECS §1.9).

TextAttack's recipe `a2t_yoo_2021` [R: QData/TextAttack@f800c2c] does not run offline (TOOLS.md), so
the same rules are written here with the project's components:

* goal: untargeted classification — success when the prediction leaves the original class l;
* search: greedy word swap with word importance ranking by gradient (per word, the L1 norm of the
  gradient of the cross-entropy loss of l with respect to the word's embedding; `gradient_importance`),
  words visited in descending order (ties → lower index); at each word the best candidate (largest
  1 − p_l) is kept only if it raises 1 − p_l; stop at success;
* transformation: the 20 nearest neighbours in the synonym space with cosine ≥ 0.8
  (counter-fitted space; `benchmark.attacks.synonyms`);
* constraints: no repeated modification, no stop-word modification (spaCy STOP_WORDS), same coarse
  UPOS (spaCy tagger; A2T forbids verb↔noun swaps, i.e. equal POS), at most max(ceil(0.1·n), 4)
  modified words, sentence-encoder cosine ≥ 0.9 (SBERT `stsb-distilbert-base` in A2T; here the offline
  all-MiniLM-L6-v2 — `similarity(a_texts, b_texts) -> cosines`; None disables the constraint).
Every candidate of a word is checked in ONE predict call (and one similarity call).

Vocabulary rule: the attack layer's (`benchmark.attacks.tef`, `unrepresentable`): with
`represents(word)` given, "drop" (default) removes the candidates the model cannot represent (a
word-level model would read them as <unk>); `A2TResult.vocab` counts them either way.

TOKI's variant changes only the candidate source (`toki_candidates`): for a word related to the
predicted class c, similar keywords of c with LOW importance; otherwise similar non-keywords of another
class with HIGH importance (ordered by s_w, first 20). "Similar" (SPECS §1.9 [I], `TOKI_RULES`):
"pools" (default, the paper's reading) = TOKI's own relatedness of the two words (`similar(w, words)`:
the voted embedding similarity TOKI uses for keywords), so the candidates come from TOKI's pools whatever
A2T's space holds; "a2t-neighbourhood" (the earlier reading, kept by name) = counter-fitted cosine ≥ 0.8
to the word (A2T's word-embedding constraint), which makes TOKI's list mostly a subset of A2T's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from benchmark.attacks.filters import PosTagger, stop_words, substitutable
from benchmark.attacks.synonyms import SynonymSpace
from benchmark.attacks.tef import UNREPRESENTABLE, Predict

if TYPE_CHECKING:  # the models import torch; gradient_importance imports it when called
    from benchmark.models.text import EmbeddingLayerModel

Candidates = Callable[[list[str], int, int], list[str]]  # (text, position, class) -> candidate words
Importance = Callable[[list[str], int], np.ndarray]  # (text, class) -> one importance per word
Similarity = Callable[[list[str], list[str]], Sequence[float] | np.ndarray]  # (texts a, texts b) -> cosine per pair


@dataclass
class A2TConfig:
    """A2T's settings (module docstring): `n_candidates` synonyms (20) of cosine ≥ `min_cos` (0.8); at most
    max(ceil(`max_rate` · n), `min_threshold`) modified words (0.1, 4); sentence cosine ≥ `sim_threshold`
    (0.9); the POS filter (on); candidates the model cannot represent: "drop" (default) or "keep"."""

    n_candidates: int = 20
    min_cos: float = 0.8
    max_rate: float = 0.1
    min_threshold: int = 4
    sim_threshold: float = 0.9
    pos_filter: bool = True
    unrepresentable: str = "drop"  # or "keep" (benchmark.attacks.tef.UNREPRESENTABLE)


@dataclass
class A2TResult:
    """One attacked input: the original `tokens` and predicted `label`, the `adversarial` text, whether it
    flips the prediction, the modified `positions`, why it was `skipped` (if so), model queries made."""

    tokens: list[str]
    label: int
    adversarial: list[str]
    success: bool
    positions: list[int] = field(default_factory=list)
    skipped: str | None = None  # "misclassified" (TextAttack skips), "empty"
    queries: int = 0
    similarity: float = 1.0
    vocab: dict[str, int] = field(default_factory=dict)  # as `AttackResult.vocab`


def max_words(n: int, cfg: A2TConfig) -> int:
    """A2T's budget for a text of `n` words: max(ceil(max_rate · n), min_threshold)."""
    return max(math.ceil(cfg.max_rate * n), cfg.min_threshold)


def gradient_importance(model: EmbeddingLayerModel) -> Importance:
    """Per word, ‖∂ CE(F(s), l) / ∂ e_i‖₁ (a white-box word model: embed / forward_from_embeddings)."""
    import torch

    def fn(tokens: list[str], label: int) -> np.ndarray:
        emb = model.embed([tokens]).clone().requires_grad_(True)
        mask = model.mask([tokens])
        logits = model.forward_from_embeddings(emb, mask)
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([label]))
        (g,) = torch.autograd.grad(loss, emb)
        return g[0, : len(tokens)].abs().sum(-1).detach().numpy().astype(np.float64)

    return fn


def embedding_candidates(space: SynonymSpace, cfg: A2TConfig) -> Candidates:
    """A2T's transformation: the `n_candidates` nearest words in `space` with cosine ≥ `min_cos`."""
    def fn(text: list[str], j: int, c: int) -> list[str]:
        w = text[j]
        return [x for x in space.neighbours(w, cfg.n_candidates) if space.similarity(w, x) >= cfg.min_cos]
    return fn


TOKI_RULES = ("pools", "a2t-neighbourhood")  # what "similar" means for TOKI's candidates (module docstring)


def toki_candidates(space: SynonymSpace, related: Callable[[str, int], bool],
                    keywords: Mapping[int, Mapping[str, float]], features: Mapping[int, Mapping[str, float]],
                    n: int = 20, min_cos: float = 0.8, rule: str = "a2t-neighbourhood",
                    similar: Callable[[str, list[str]], Sequence[bool] | np.ndarray] | None = None) -> Candidates:
    """TOKI's rule (SPECS §1.9 [I]): `keywords[c]` = K_c with importance s_w, `features[c]` = the
    non-keyword pool F_c with s_w; `related(w, c)` = TOKI's r(w, c). `rule` (`TOKI_RULES`): "pools" keeps
    the pool words x with `similar(w, [x, …])` true (TOKI's own word–word relatedness); "a2t-neighbourhood"
    those with cosine ≥ `min_cos` to w in `space`. (The library default stays the earlier reading; Table 4
    passes rule="pools".)"""
    if rule not in TOKI_RULES:
        raise ValueError(f"rule must be one of {TOKI_RULES}, got {rule!r}")
    if rule == "pools" and similar is None:
        raise ValueError("rule='pools' needs similar(word, words) -> bools (TOKI's own relatedness)")

    def fn(text: list[str], j: int, c: int) -> list[str]:
        w = text[j]
        if related(w, c):
            pool, reverse = dict(keywords.get(c, {})), False
        else:
            pool, reverse = {}, True
            for c2, f in features.items():
                if c2 != c:
                    for x, s in f.items():
                        pool[x] = max(s, pool.get(x, -np.inf))
        others = [x for x in pool if x != w]
        if rule == "pools" and similar is not None:
            keep = similar(w, others)
            near = [x for x, k in zip(others, keep) if k]
        else:
            near = [x for x in others if space.similarity(w, x) >= min_cos]
        near.sort(key=lambda x: ((-pool[x]) if reverse else pool[x], x))
        return near[:n]
    return fn


class A2TAttacker:
    """The greedy A2T search (module docstring) over `candidates` (A2T's or TOKI's rule).

    Args:
        predict: texts → class probabilities (N, C), one batched call per position.
        importance: (text, class) → per-word importance (`gradient_importance`).
        candidates: (text, position, class) → candidate words.
        config: the settings (default `A2TConfig()`).
        tagger: the POS tagger (default: a new `PosTagger` when `config.pos_filter`).
        similarity: the sentence-encoder cosine of text pairs (default None: no similarity constraint).
        represents: whether the model can represent a word (default None: every candidate kept).
    """

    def __init__(self, predict: Predict, importance: Importance, candidates: Candidates,
                 config: A2TConfig | None = None, tagger: PosTagger | None = None,
                 similarity: Similarity | None = None, represents: Callable[[str], bool] | None = None) -> None:
        self.predict, self.importance, self.candidates = predict, importance, candidates
        self.cfg = config or A2TConfig()
        if self.cfg.unrepresentable not in UNREPRESENTABLE:
            raise ValueError(f"unrepresentable must be one of {UNREPRESENTABLE}, got {self.cfg.unrepresentable!r}")
        self.represents = represents
        self.tagger = tagger if tagger is not None or not self.cfg.pos_filter else PosTagger()
        self.similarity = similarity
        self._stop = stop_words()

    def attack(self, tokens: Sequence[str], label: int | None = None) -> A2TResult:
        """Attack one text; with `label`, a text the model misclassifies is skipped (as TextAttack does)."""
        s = [str(w) for w in tokens]
        if not s:
            return A2TResult(s, -1, s, False, skipped="empty")
        p0 = np.asarray(self.predict([s]))[0]
        pred = int(np.argmax(p0))
        res = A2TResult(s, pred, list(s), False, queries=1)
        if label is not None and pred != label:
            res.skipped = "misclassified"
            return res
        imp = self.importance(s, pred)
        order = sorted(range(len(s)), key=lambda i: (-imp[i], i))
        tagger = self.tagger if self.cfg.pos_filter else None
        tags = tagger.tag([s])[0] if tagger is not None else None
        budget = max_words(len(s), self.cfg)
        cur, score = list(s), 1.0 - float(p0[pred])
        for j in order:
            if len(res.positions) >= budget:
                break
            if not substitutable(s[j]) or s[j].lower() in self._stop:
                continue
            cands = [c for c in self.candidates(cur, j, pred) if c != cur[j] and c.lower() not in self._stop]
            if self.represents is not None:
                bad = [not self.represents(c) for c in cands]
                v = res.vocab
                for k, x in (("candidates", len(cands)), ("unrepresentable", sum(bad)), ("positions", 1),
                             ("positions_unrepresentable", int(any(bad)))):
                    v[k] = v.get(k, 0) + x
                if self.cfg.unrepresentable == "drop":
                    cands = [c for c, b in zip(cands, bad) if not b]
            texts = [cur[:j] + [c] + cur[j + 1 :] for c in cands]
            if texts and tagger is not None and tags is not None:
                ok = [t for t, tg in zip(texts, tagger.tag_at(texts, j)) if tg == tags[j]]
                texts = ok
            if texts and self.similarity is not None:
                sims = self.similarity([" ".join(s)] * len(texts), [" ".join(t) for t in texts])
                texts = [t for t, v in zip(texts, sims) if v >= self.cfg.sim_threshold]
            if not texts:
                continue
            p = np.asarray(self.predict(texts))
            res.queries += len(texts)
            goal = 1.0 - p[:, pred]
            best = int(np.argmax(goal))
            if goal[best] > score:
                cur, score = texts[best], float(goal[best])
                res.positions.append(j)
                if int(np.argmax(p[best])) != pred:
                    res.success = True
                    break
        res.adversarial = cur
        if self.represents is not None:
            res.vocab["applied"] = len(res.positions)
            res.vocab["applied_unrepresentable"] = sum(not self.represents(cur[j]) for j in res.positions)
        return res


def summary(results: Sequence[A2TResult], similarity: Similarity | None = None) -> dict:
    """ASR over attacked (not skipped) inputs, NP = mean perturbed words over successes, similarity."""
    att = [r for r in results if r.skipped is None]
    ok = [r for r in att if r.success]
    out = {"attacked": len(att), "skipped": len(results) - len(att), "successful": len(ok),
           "asr": len(ok) / len(att) if att else float("nan"),
           "np": float(np.mean([len(r.positions) for r in ok])) if ok else float("nan")}
    if similarity is not None and ok:
        out["similarity"] = float(np.mean(similarity([" ".join(r.tokens) for r in ok],
                                                     [" ".join(r.adversarial) for r in ok])))
    return out
