"""Semi-universal policies (SPECS §2.6; paper Fig. 6): query-free substitutions learned from TEF runs.

* The test set is split 50/50 with a fixed seed [I] (`split_halves`): TEF runs on the *policy half*
  (every model and explainer of the build) record every substitution event (original token →
  replacement, lower-cased; `events_of`); the attacked samples of the resource — the ones TEF, RA, RI
  and RS are scored on — come from the *evaluation half*, so the policy never saw them.
* `policy(events)`: the original tokens by replacement count (descending, ties alphabetical), each with
  its most frequent replacement (ties alphabetical).
* `apply_policy(tokens, policy, ρ_max)`: the policy top to bottom, each occurrence left to right,
  r ← r + 1 per replaced position, stop when (r+1)/n > ρ_max (the pre budget check of TEF). With
  `keeps_pos(tokens, i, replacement)` given, an occurrence is replaced only when the part of speech of
  position i stays the same — the submission version's rule [X: submission], on by default
  (`RobustnessConfig.policy_pos`).
* `policy_rows`: the resource rows of attack "su" on the evaluation samples — for every ρ_max of the
  grid the policy's text, one row per distinct r (as `build.attack_rows`), scored under each explainer;
  a text whose prediction changes is not an attack sample (Eq. 5): it is recorded as excluded
  ("prediction_changed"), never scored. A run at a smaller ρ_max is a prefix of one at a larger one.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

import numpy as np

KeepsPos = Callable[[list[str], int, str], bool]


def split_halves(n: int, seed: int = 0) -> tuple[list[int], list[int]]:
    """(policy half, evaluation half): indices 0 … n−1 split by one seeded permutation, each sorted."""
    perm = np.random.default_rng([seed, 2026]).permutation(n)
    half = n // 2
    return sorted(perm[:half].tolist()), sorted(perm[half:].tolist())


def events_of(res) -> list[tuple[str, str]]:
    """The substitution events (original, replacement) of one attack (`tef.AttackResult`), lower-cased."""
    return [(st.original.lower(), st.replacement.lower()) for st in res.steps]


def policy(events: Sequence[tuple[str, str]], top: int | None = None) -> list[tuple[str, str, int]]:
    """Semi-universal policy from substitution events (original, replacement), lower-cased: original tokens
    by count (descending, ties alphabetical), each with its most frequent replacement (ties alphabetical)."""
    per: dict[str, Counter] = {}
    for o, r in events:
        per.setdefault(o.lower(), Counter())[r.lower()] += 1
    rows = [(o, min(c, key=lambda w: (-c[w], w)), sum(c.values())) for o, c in per.items()]
    rows.sort(key=lambda t: (-t[2], t[0]))
    return rows[:top] if top else rows


def model_policy(events: dict, represents: Callable[[str], bool] | None) -> list[tuple[str, str, int]]:
    """The policy one model faces: learned from the events ({(model, explainer): [(original, replacement)]},
    every model's) whose replacement the model can represent (`represents`; None: every event — the
    vocabulary rule "off"). Events from another model may swap in words this model reads as <unk>."""
    return policy([x for ev in events.values() for x in ev if represents is None or represents(x[1])])


def apply_policy(tokens: Sequence[str], pol: Sequence[tuple[str, str, int]], rho_max: float,
                 keeps_pos: KeepsPos | None = None) -> tuple[list[str], int, list[int]]:
    """Query-free attack (module docstring): (adversarial tokens, r, substituted positions in order)."""
    out, r, n = list(tokens), 0, len(tokens)
    where: list[int] = []
    for o, rep, _ in pol:
        for i, w in enumerate(tokens):
            if (r + 1) / max(n, 1) > rho_max + 1e-12:
                return out, r, where
            if w == o and out[i] == o and (keeps_pos is None or keeps_pos(out, i, rep)):
                out[i] = rep
                r += 1
                where.append(i)
    return out, r, where


def pos_keeper(tagger) -> KeepsPos:
    """`keeps_pos` from a `filters.PosTagger`: the tag of position i is the same before and after."""
    def keeps(tokens: list[str], i: int, rep: str) -> bool:
        before, after = tagger.tag_at([tokens, tokens[:i] + [rep] + tokens[i + 1 :]], i)
        return before == after
    return keeps


def policy_rows(docs, pol, model, explainers: dict[str, Callable], rho_grid: Sequence[float],
                keeps_pos: KeepsPos | None, represents: Callable[[str], bool] | None = None) -> tuple[list[dict], dict]:
    """The "su" rows of `docs` (the evaluation samples) under every explainer of `explainers`
    ({name: attribute(texts)}), and counts (samples, texts, prediction_changed, no_substitution,
    unrepresentable replacements applied)."""
    from benchmark.metrics import robustness as rm

    texts: dict[tuple[str, int], tuple[list[str], list[int], list[float]]] = {}
    for d in docs:
        for rho in sorted(rho_grid):
            adv, r, where = apply_policy(d.tokens, pol, rho, keeps_pos)
            key = (d.id, r)
            if key in texts:
                texts[key][2].append(float(rho))
            else:
                texts[key] = (adv, where, [float(rho)])
    by_doc = {d.id: d for d in docs}
    keys = list(texts)
    attacked = [k for k in keys if k[1] > 0]
    preds = model.predict([texts[k][0] for k in attacked]) if attacked else np.zeros((0, 2))
    p0 = model.predict([by_doc[s].tokens for s, _ in attacked]) if attacked else np.zeros((0, 2))
    flips = {k: int(np.argmax(a)) != int(np.argmax(b)) for k, a, b in zip(attacked, preds, p0)}
    probs = {k: (b, a) for k, a, b in zip(attacked, preds, p0)}
    counts = {"samples": len(docs), "texts": len(attacked), "prediction_changed": sum(flips.values()),
              "no_substitution": sum(1 for d in docs if all(k[1] == 0 for k in keys if k[0] == d.id))}
    if represents is not None:
        counts["applied"] = sum(len(texts[k][1]) for k in attacked)
        counts["applied_unrepresentable"] = sum(not represents(texts[k][0][i]) for k in attacked for i in texts[k][1])
    rows = []
    for name, attribute in explainers.items():
        scored = [k for k in attacked if not flips[k]]
        originals = sorted({s for s, _ in scored})
        a_orig = dict(zip(originals, attribute([by_doc[s].tokens for s in originals]))) if originals else {}
        a_adv = dict(zip(scored, attribute([texts[k][0] for k in scored]))) if scored else {}
        for key in keys:
            sid, r = key
            d, (adv, where, rhos) = by_doc[sid], texts[key]
            flipped = flips.get(key, False)
            m = rm.pair_metrics(a_orig[sid], a_adv[key]) if key in a_adv else {}
            pb, pa = probs.get(key, (None, None))
            label = int(np.argmax(pb)) if pb is not None else int(d.label)
            rows.append({"id": f"{sid}~su~{name}~r{r}", "sample": sid, "attack": "su", "explainer": name,
                         "tokens": list(d.tokens), "adversarial": adv, "positions": list(where),
                         "replacements": [f"{d.tokens[i]}>{adv[i]}" for i in where], "n": len(d.tokens), "r": r,
                         "rho": r / len(d.tokens), "rho_max": rhos, "label": int(d.label), "pred_before": label,
                         "pred_after": int(np.argmax(pa)) if pa is not None else label,
                         "prob_before": float(pb[label]) if pb is not None else float("nan"),
                         "prob_after": float(pa[label]) if pa is not None else float("nan"),
                         **{k: m.get(k, float("nan")) for k in ("pcc", "kendall", "spearman", "top10", "top30",
                                                                "top50")},
                         "excluded": ("prediction_changed" if flipped else "" if r > 0 else
                                      "budget: ρ_max below 1/n" if any(k[0] == sid and k[1] > 0 for k in keys)
                                      else "no_substitution: none of the policy's words")})
    return rows, counts
