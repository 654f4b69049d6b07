"""TextExplanationFooler (Ivankay et al., ICLR 2022) and its baselines RA / RI / RS (SPECS §2.4–2.5).

The attacker is black box: it reads the model's class probabilities through `predict(texts) -> (N, C)`
and the explainer's word scores through `attribute(texts) -> list[np.ndarray]` (one vector per text,
explaining the model's predicted class). A track plugs in an in-process explainer (generation) or the
sandboxed worker (`worker_attribute`, live attacks). Evaluation is batched: every candidate of one
position is scored in ONE `predict` call and the prediction-preserving ones in ONE `attribute` call;
the importance ranking (step 1) is one `attribute` call over all masked copies.

| method | word order                      | candidate                                  |
|--------|---------------------------------|--------------------------------------------|
| tef    | by I_i (masking importance)     | the one of largest d̃, kept if d̃ > d_max    |
| ra     | uniformly random permutation    | uniformly random prediction-preserving one |
| ri     | uniformly random permutation    | as tef                                     |
| rs     | by I_i                          | as ra                                      |

Options (every [I] of SPECS §2.4 named): `budget_check` "pre" (default: (r+1)/n > ρ_max is tested
before every position, so r/n ≤ ρ_max always) or "post" (the paper's pseudo-code: tested after each
position); `pcc_undefined` "zero" (PCC := 0, d = 0.5) or "nan" (such a candidate never improves);
`n_candidates` N = 15; `mask_token` = the padding token (its embedding is the zero vector: "masked to
the zero embedding"); stop-word and POS filters (`benchmark.attacks.filters`) on by default.

Vocabulary rule [I] (`unrepresentable`, with `represents(word) -> bool` = "the model reads this word as
itself", e.g. `WordModel.known`): "drop" (default) removes the candidates the model cannot represent —
a word-level model maps them to its <unk> row, so the "swap" is a deletion the Step-1 mask already
is; "keep" lets them through (earlier builds). Either way, when `represents` is given,
`AttackResult.vocab` counts the neighbours drawn, those the model cannot represent, the positions with
at least one such neighbour, and the applied substitutions to such a word.

Speed option `pos_check` (the same adversarial texts and skip counts either way, for an explainer whose
scores depend on the text alone — not the instance id or the batch; a gradient explainer's scores
depend on the batch at float rounding, since the batch's longest text sets the padded length, so two
candidates whose d differ by ≈ 1e-7 can swap places: seen on a one-epoch test model over raw GloVe
neighbours, not on the published models' benchmark texts): "before" (default) tags
every prediction-preserving candidate and explains the POS-valid ones; "after" (greedy methods only)
explains every prediction-preserving candidate, tags only those that improve on the current distance
and takes the first POS-valid one in descending d — the candidate "before" picks; where none is
accepted, the rest are tagged (to tell `no_candidate` from `no_improving_candidate`) only when
`AttackResult.skipped` is read. "after" explains ≈ 1.5× the texts and
tags a fraction of them: faster for cheap explainers (saliency, attention), slower for IG or LIME; it
also asks the explainer about texts "before" never shows it.

Step 1 is computed only for the positions the loop can substitute (a non-stop word token with
neighbours): the other positions are skipped whatever their rank, so the result is the same.
Random variants draw from `numpy.random.default_rng([seed, sample_seed])`: deterministic under a seed.

Deviation [I]: the explainer explains the class the model predicts for each text it is given; for the
masked copies of step 1 whose prediction changes this is not class l (the paper's A(s_i→0, F, l)).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from benchmark.attacks.filters import PosTagger, stop_words, substitutable
from benchmark.attacks.synonyms import SynonymSpace
from benchmark.metrics.robustness import PCC_UNDEFINED, attribution_distance, attribution_distances, pcc

Predict = Callable[[list[list[str]]], np.ndarray]
Attribute = Callable[[list[list[str]]], list[np.ndarray]]

METHODS = ("tef", "ra", "ri", "rs")
BUDGET_CHECKS = ("pre", "post")
UNREPRESENTABLE = ("drop", "keep")
POS_CHECKS = ("before", "after")
MASK_TOKEN = "<pad>"
RHO_GRID = tuple(round(0.05 * k, 2) for k in range(1, 9))  # 0.05 … 0.40 (SPECS §2.7 [I])


class AttributionFailed(RuntimeError):
    """The explainer failed (or returned a wrong shape) on a text the attack needed."""


@dataclass
class AttackConfig:
    """One attack's settings (module docstring): `method` (tef / ra / ri / rs), N = `n_candidates` (15),
    ρ_max = `rho_max` (0.4), `budget_check`, `pcc_undefined`, the stop-word and POS filters (on), the
    `mask_token` of step 1, the random variants' `seed`, `batched` calls, `pos_check`, `unrepresentable`."""

    method: str = "tef"
    n_candidates: int = 15
    rho_max: float = 0.4
    budget_check: str = "pre"
    pcc_undefined: str = "zero"
    stopword_filter: bool = True
    pos_filter: bool = True
    mask_token: str = MASK_TOKEN
    seed: int = 0
    batched: bool = True  # False: one predict and one attribute call per text (the sequential baseline)
    pos_check: str = "before"  # "after": explain first, tag lazily (greedy methods; module docstring)
    unrepresentable: str = "drop"  # candidates the model cannot represent (module docstring)

    def check(self) -> None:
        """Raise ValueError for a setting outside its allowed values."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.budget_check not in BUDGET_CHECKS:
            raise ValueError(f"budget_check must be one of {BUDGET_CHECKS}, got {self.budget_check!r}")
        if self.pcc_undefined not in PCC_UNDEFINED:
            raise ValueError(f"pcc_undefined must be one of {PCC_UNDEFINED}, got {self.pcc_undefined!r}")
        if self.pos_check not in POS_CHECKS:
            raise ValueError(f"pos_check must be one of {POS_CHECKS}, got {self.pos_check!r}")
        if self.unrepresentable not in UNREPRESENTABLE:
            raise ValueError(f"unrepresentable must be one of {UNREPRESENTABLE}, got {self.unrepresentable!r}")
        if not (0 <= self.rho_max <= 1) or self.n_candidates < 1:
            raise ValueError("rho_max must lie in [0, 1] and n_candidates be ≥ 1")

    @property
    def ordered(self) -> bool:
        """Positions are visited by masking importance I_i (tef, rs), not in random order."""
        return self.method in ("tef", "rs")

    @property
    def greedy(self) -> bool:
        """The candidate of largest distance d̃ is taken (tef, ri), not a random prediction-preserving one."""
        return self.method in ("tef", "ri")


@dataclass
class Step:
    """One accepted substitution: `original` → `replacement` at `position`, with the attribution and class
    probabilities of the text after it."""

    position: int
    original: str
    replacement: str
    d: float  # distance of the attribution after this substitution to the original attribution
    attribution: np.ndarray
    probs: np.ndarray


@dataclass
class AttackResult:
    """One attacked text: the original `tokens`, predicted `label`, `probs` and `attribution`, the accepted
    `steps` in order, why it was `excluded` (if so), skip counts, the model / explainer calls made."""

    tokens: list[str]
    label: int
    probs: np.ndarray
    attribution: np.ndarray
    steps: list[Step] = field(default_factory=list)
    excluded: str | None = None  # why the sample yields no attack (no_substitutable_word, explainer_failed, …)
    counted: dict[str, int] = field(default_factory=dict)  # positions skipped, by reason (see `skipped`)
    pending: list = field(default_factory=list)  # reasons still to work out: callables → reason (pos_check="after")
    order: list[int] = field(default_factory=list)  # the substitutable positions in visiting order
    calls: dict[str, int] = field(default_factory=lambda: {"predict": 0, "attribute": 0, "texts_attributed": 0})
    seconds: float = 0.0
    # with `represents`: candidates drawn / not representable, positions with any such, applied swaps to one
    vocab: dict[str, int] = field(default_factory=dict)

    @property
    def skipped(self) -> dict[str, int]:
        """Positions skipped, by reason. With `pos_check="after"` the reason of a position where no
        candidate was accepted (no candidate passes the POS filter, or none improves) needs the tags of
        the candidates that did not improve: it is worked out here, when first read — never for the
        attacks whose reasons nobody reads."""
        while self.pending:
            why = self.pending.pop()()
            self.counted[why] = self.counted.get(why, 0) + 1
        return self.counted

    @property
    def n(self) -> int:
        """The text's length in words."""
        return len(self.tokens)

    @property
    def r(self) -> int:
        """The number of substitutions made."""
        return len(self.steps)

    @property
    def rho(self) -> float:
        """The perturbation rate r / n (0 for an empty text)."""
        return self.r / self.n if self.n else 0.0

    def adversarial(self, r: int | None = None) -> list[str]:
        """The text after the first `r` substitutions (all by default)."""
        out = list(self.tokens)
        for s in self.steps[: self.r if r is None else r]:
            out[s.position] = s.replacement
        return out

    def attribution_after(self, r: int) -> np.ndarray:
        """The attribution of the text after the first `r` substitutions (r = 0: the original's)."""
        return self.attribution if r == 0 else self.steps[r - 1].attribution

    def prediction_after(self, r: int) -> int:
        """The predicted class after the first `r` substitutions."""
        return self.label if r == 0 else int(np.argmax(self.steps[r - 1].probs))

    def d_after(self, r: int) -> float:
        """The attribution distance d to the original after the first `r` substitutions (0 for r = 0)."""
        return 0.0 if r == 0 else self.steps[r - 1].d


def model_vocabulary(model) -> Callable[[str], bool] | None:
    """`represents(word)` for a model under test: its `known([word])` (a word-level model's vocabulary;
    MiniLM: no [UNK] piece), cached; None for a model without `known` (nothing is dropped)."""
    known = getattr(model, "known", None)
    if not callable(known):
        return None
    cache: dict[str, bool] = {}

    def represents(word: str) -> bool:
        got = cache.get(word)
        if got is None:
            got = cache[word] = bool(np.asarray(known([word])).reshape(-1)[0])
        return got
    return represents


def budget_r(rho_max: float, n: int) -> int:
    """The most substitutions the pre check allows: the largest r with r/n ≤ ρ_max."""
    return int(math.floor(rho_max * n + 1e-9)) if n else 0


class Attacker:
    """Runs one attack `config` with `predict` / `attribute` over a synonym `space` (see module doc)."""

    def __init__(self, predict: Predict, attribute: Attribute, space: SynonymSpace, config: AttackConfig,
                 tagger: PosTagger | None = None, represents: Callable[[str], bool] | None = None) -> None:
        config.check()
        self.predict, self.attribute_fn, self.space, self.cfg = predict, attribute, space, config
        self.represents = represents
        self.tagger = tagger if tagger is not None or not config.pos_filter else PosTagger()
        self._stop = stop_words() if config.stopword_filter else frozenset()

    # -- helpers ---------------------------------------------------------------------------
    def _attribute(self, texts: list[list[str]], res: AttackResult) -> list[np.ndarray]:
        res.calls["attribute"] += 1 if self.cfg.batched else len(texts)
        res.calls["texts_attributed"] += len(texts)
        try:
            if self.cfg.batched:
                out = list(self.attribute_fn(texts))
            else:
                out = [a for t in texts for a in self.attribute_fn([t])]
        except Exception as exc:  # noqa: BLE001 - any explainer failure is recorded, never hidden
            raise AttributionFailed(f"{type(exc).__name__}: {exc}"[:300]) from exc
        if len(out) != len(texts):
            raise AttributionFailed(f"explainer returned {len(out)} attributions for {len(texts)} texts")
        vecs = []
        for t, a in zip(texts, out):
            a = np.asarray(a, dtype=np.float64).reshape(-1)
            if a.shape != (len(t),) or not np.all(np.isfinite(a)):
                raise AttributionFailed(f"explainer returned shape {a.shape} (or non-finite values) for a "
                                        f"text of {len(t)} words")
            vecs.append(a)
        return vecs

    def _predict(self, texts: list[list[str]], res: AttackResult) -> np.ndarray:
        if not self.cfg.batched:
            res.calls["predict"] += len(texts)
            return np.concatenate([np.asarray(self.predict([t]), dtype=np.float64).reshape(1, -1) for t in texts])
        res.calls["predict"] += 1
        return np.asarray(self.predict(texts), dtype=np.float64).reshape(len(texts), -1)

    def _greedy_ds(self, a0: np.ndarray, attrs: list[np.ndarray]) -> list[float]:
        """d of each attribution to `a0` for the greedy choice (an undefined PCC under "nan" never wins)."""
        ds = attribution_distances(a0, attrs, self.cfg.pcc_undefined)
        return [-np.inf if math.isnan(x) else x for x in ds] if self.cfg.pcc_undefined == "nan" else ds

    def _d(self, a0: np.ndarray, a: np.ndarray) -> float:
        return attribution_distance(a0, a, self.cfg.pcc_undefined)

    def eligible(self, word: str) -> str | None:
        """None if `word` may be substituted, else the reason it is skipped."""
        if not substitutable(word) or word.lower() in self._stop:
            return "stop_word_or_punctuation"
        if word not in self.space:
            return "no_vector"
        return None

    def candidates(self, text: list[str], j: int, res: AttackResult | None = None) -> list[str]:
        """The N nearest neighbours of text[j], minus the word itself and stop words (and, under the
        "drop" rule, the words the model cannot represent; counted in `res.vocab`)."""
        out = [c for c in self.space.neighbours(text[j], self.cfg.n_candidates)
               if c != text[j] and (c.lower() not in self._stop)]
        if self.represents is None:
            return out
        bad = [not self.represents(c) for c in out]
        if res is not None:
            v = res.vocab
            v["candidates"] = v.get("candidates", 0) + len(out)
            v["unrepresentable"] = v.get("unrepresentable", 0) + sum(bad)
            v["positions"] = v.get("positions", 0) + 1
            v["positions_unrepresentable"] = v.get("positions_unrepresentable", 0) + int(any(bad))
        if self.cfg.unrepresentable == "drop":
            out = [c for c, b in zip(out, bad) if not b]
        return out

    def same_pos(self, texts: list[list[str]], j: int, pos0: str | None) -> list[bool]:
        """Whether position j of each text keeps the original word's tag `pos0` (True without the filter).
        Batched: one tagger call on the words around j (exact: `PosTagger.tag_at`); sequential: one call
        per whole text."""
        if not (self.cfg.pos_filter and self.tagger is not None) or not texts:
            return [True] * len(texts)
        if self.cfg.batched:
            tags = self.tagger.tag_at(texts, j)
        else:
            tags = [(self.tagger.tag([t])[0] or ("",) * len(t))[j] for t in texts]
        return [t == pos0 for t in tags]

    # -- the attack -------------------------------------------------------------------------
    def attack(self, tokens: Sequence[str], sample_seed: int = 0, known_label: int | None = None) -> AttackResult:
        """Attack one text (module docstring); `sample_seed` seeds the random variants with the config's seed,
        `known_label` skips one `predict` call when the text's predicted class is known."""
        t0 = time.perf_counter()
        s = [str(w) for w in tokens]
        res = AttackResult(tokens=s, label=-1, probs=np.zeros(0), attribution=np.zeros(0))
        try:
            self._run(s, res, sample_seed)
        except AttributionFailed as exc:
            res.excluded = f"explainer_failed: {exc}"
        if self.represents is not None:
            res.vocab["applied"] = res.r
            res.vocab["applied_unrepresentable"] = sum(not self.represents(st.replacement) for st in res.steps)
        res.seconds = time.perf_counter() - t0
        return res

    def _skip(self, res: AttackResult, why: str) -> None:
        res.counted[why] = res.counted.get(why, 0) + 1

    def _run(self, s: list[str], res: AttackResult, sample_seed: int) -> None:
        cfg, n = self.cfg, len(s)
        if n == 0:
            res.excluded = "empty_text"
            return
        probs = self._predict([s], res)[0]
        res.probs, res.label = probs, int(np.argmax(probs))
        reasons = [self.eligible(w) for w in s]
        positions = [i for i in range(n) if reasons[i] is None]
        for why in reasons:
            if why is not None:
                self._skip(res, why)
        if not positions:
            res.excluded = "no_substitutable_word"
            return
        a0 = self._attribute([s], res)[0]
        res.attribution = a0
        if math.isnan(pcc(a0, a0)):
            res.excluded = "constant_attribution"  # PCC with the original is undefined for every text
            return
        rng = np.random.default_rng([cfg.seed, sample_seed])
        if cfg.ordered:  # step 1: importance by masking each position's embedding (one attribute call)
            masked = [s[:i] + [cfg.mask_token] + s[i + 1 :] for i in positions]
            imp = attribution_distances(a0, self._attribute(masked, res), cfg.pcc_undefined)
            order = [positions[k] for k in sorted(range(len(positions)), key=lambda k: (-imp[k], positions[k]))]
        else:
            order = [int(i) for i in rng.permutation(n) if reasons[int(i)] is None]
        res.order = list(order)
        pos_tags = self.tagger.tag([s])[0] if (cfg.pos_filter and self.tagger is not None) else None
        adv, d_cur = list(s), 0.0
        for j in order:
            if cfg.budget_check == "pre" and (res.r + 1) / n > cfg.rho_max + 1e-12:
                break
            cands = self.candidates(adv, j, res)
            texts = [adv[:j] + [c] + adv[j + 1 :] for c in cands]
            p = self._predict(texts, res) if texts else np.zeros((0, 1))
            # the POS filter and prediction preservation are independent tests: the tagger only sees the
            # prediction-preserving candidates (same sets, fewer texts tagged)
            preserving = [k for k in range(len(cands)) if int(np.argmax(p[k])) == res.label]
            pos0 = pos_tags[j] if pos_tags else None
            if cfg.greedy and cfg.pos_check == "after" and preserving:
                d_cur = self._greedy_after(s, j, d_cur, cands, texts, p, preserving, a0, pos0, res)
                adv = res.adversarial()
                continue
            keep = [k for k, ok in zip(preserving, self.same_pos([texts[k] for k in preserving], j, pos0)) if ok]
            if not keep:  # why: no candidate passes the filters, or all that do flip the prediction
                any_pos = any(self.same_pos(texts, j, pos0))
                self._skip(res, "all_candidates_flip" if any_pos else "no_candidate")
            elif cfg.greedy:
                attrs = self._attribute([texts[k] for k in keep], res)
                ds = self._greedy_ds(a0, attrs)
                best = int(np.argmax(ds))  # first of the largest: ties → earlier candidate
                if ds[best] > d_cur:
                    k = keep[best]
                    adv = texts[k]
                    d_cur = ds[best]
                    res.steps.append(Step(j, s[j], cands[k], d_cur, attrs[best], p[k]))
                else:
                    self._skip(res, "no_improving_candidate")
            else:
                k = keep[int(rng.integers(len(keep)))]
                a = self._attribute([texts[k]], res)[0]
                d = self._d(a0, a)
                adv = texts[k]
                d_cur = 0.5 if math.isnan(d) else d
                res.steps.append(Step(j, s[j], cands[k], d_cur, a, p[k]))
            if cfg.budget_check == "post" and (res.r + 1) / n > cfg.rho_max + 1e-12:
                break

    def _greedy_after(self, s, j, d_cur, cands, texts, p, preserving, a0, pos0, res) -> float:
        """The greedy step with `pos_check="after"`: explain every prediction-preserving candidate, then
        tag those that improve on `d_cur` in descending d (ties → earlier candidate) and accept the first
        POS-valid one."""
        attrs = self._attribute([texts[k] for k in preserving], res)
        ds = self._greedy_ds(a0, attrs)
        improving = sorted((i for i in range(len(preserving)) if ds[i] > d_cur), key=lambda i: (-ds[i], i))
        for i in improving:  # tagged one by one: ≈ 60 % of candidates keep their tag, the first usually does
            if self.same_pos([texts[preserving[i]]], j, pos0)[0]:
                k = preserving[i]
                res.steps.append(Step(j, s[j], cands[k], ds[i], attrs[i], p[k]))
                return ds[i]
        # nothing accepted: the skip reason "before" records, from the tags of the rest — when it is read
        kept = [texts[k] for k in preserving]

        def reason() -> str:
            if any(self.same_pos(kept, j, pos0)):
                return "no_improving_candidate"
            return "all_candidates_flip" if any(self.same_pos(texts, j, pos0)) else "no_candidate"

        res.pending.append(reason)
        return d_cur


def sweep(attacker: Attacker, tokens: Sequence[str], rho_grid: Sequence[float] = RHO_GRID,
          sample_seed: int = 0) -> tuple[AttackResult, dict[float, int]]:
    """One attack at max(ρ grid) and, per ρ_max of the grid, the number of substitutions that a run at
    that ρ_max makes. With the pre check a run at a smaller ρ_max is exactly the prefix of the run at the
    largest one (same order, same random draws, stopped once (r+1)/n > ρ_max), so one run serves the
    whole grid (tested against separate runs). The post check needs separate runs: refused here."""
    if attacker.cfg.budget_check != "pre":
        raise ValueError("sweep needs budget_check='pre'; with 'post' run one attack per ρ_max")
    top = max(rho_grid)
    old = attacker.cfg.rho_max
    attacker.cfg.rho_max = top
    try:
        res = attacker.attack(tokens, sample_seed)
    finally:
        attacker.cfg.rho_max = old
    return res, {float(r): min(res.r, budget_r(r, res.n)) for r in rho_grid}


def result_row(res: AttackResult, r: int) -> dict:
    """A JSON-friendly record of the attack's state after `r` substitutions."""
    return {"adversarial": res.adversarial(r), "positions": [st.position for st in res.steps[:r]],
            "replacements": [[st.original, st.replacement] for st in res.steps[:r]], "r": r,
            "rho": r / res.n if res.n else 0.0, "pred_before": res.label, "pred_after": res.prediction_after(r),
            "d": res.d_after(r)}


def config_dict(cfg: AttackConfig) -> dict:
    """The config as a JSON-friendly dict (a Result's record of the attack)."""
    return asdict(cfg)
