"""The oracles a trust board measures TOKI against (SPECS §1.6; DESIGN §8 "a floor and a ceiling").

* `Naive` [P] — trustworthy iff the model's confidence ≥ θ_conf (inclusive, θ_conf = 0.9); its score is
  the confidence itself, so its AUC does not depend on θ_conf.
* `RandomOracle` (control, a floor) — one uniform draw u per instance from the instance seed; trustworthy
  iff u < p (rate p), score 1 − u (so the verdict is the score thresholded at 1 − p). It looks at nothing:
  whatever p, its expected AUC and balanced accuracy are 0.5, and its G-mean is √(p(1 − p))·… at most
  0.5 — run it at another oracle's trustworthy rate (`p` = that rate) for the rate-matched floor.
* The blind controls (text length, explanation size) are in `benchmark.toki.controls`.
* `RationaleCeiling` (reference, a ceiling) — the best keyword list the training rationales allow: per
  class c, the words that are rationale in at least `min_rate` (½) of the training posts of class c with
  a rationale that contain them. Its score is the share of the judged explanation's words in that list
  (`weighting="count"`, as the labels count words; "importance": weighted by the explanation's scores),
  or with `mode="rate"` the mean training rationale rate of the explanation's words (an estimate of the
  explanation precision the labels threshold). It reads `context.train["rationale"]`, which the harness
  hands only to a submission whose role is "reference" (`benchmark.tracks.trust`): no method sees it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import numpy as np

from benchmark.contracts import Batch, Judgement, OracleContext
from benchmark.toki.core import columns, instance_fields
from benchmark.toki.explanations import top_positive
from benchmark.toki.keywords import judgement

WEIGHTINGS = ("count", "importance")
CEILING_MODES = ("keywords", "rate")


class Naive:
    """Naive baseline (SPECS §1.6): trustworthy iff confidence ≥ θ_conf (inclusive); score = the confidence.

    Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text
    Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663 (its Naive confidence baseline).

    Args:
        theta_conf (float, optional): the confidence threshold θ_conf, inclusive ([P] chosen by maximising
            G-mean, Fig. 8). Default: 0.9
        score (str, optional): "confidence" = the confidence beside each verdict; "none" = verdicts only.
            Default: "confidence"
    """

    def __init__(self, theta_conf: float = 0.9, score: str = "confidence") -> None:
        if not 0 <= theta_conf <= 1:
            raise ValueError("theta_conf must lie in [0, 1]")
        if score not in ("confidence", "none"):
            raise ValueError("score must be 'confidence' or 'none'")
        self.theta_conf = float(theta_conf)
        self.score = score

    def fit(self, context: OracleContext) -> None:
        """Nothing to learn: the threshold is fixed."""
        return None

    def judge(self, batch: Batch) -> Judgement:
        """Per instance: confidence ≥ θ_conf, with the confidence as the score; ValueError for an instance
        without a confidence in [0, 1]."""
        items = [instance_fields(x) for x in batch.inputs]
        bad = [i for i, x in enumerate(items) if not 0.0 <= float(x.get("confidence", float("nan"))) <= 1.0]
        if bad:
            raise ValueError(f"instance(s) {bad[:5]} have no confidence in [0, 1]; "
                             "Naive judges by the model's confidence")
        conf = [float(x["confidence"]) for x in items]
        return judgement([c >= self.theta_conf for c in conf], conf if self.score == "confidence" else None)


class RandomOracle:
    """Chance control: u ~ U(0, 1) per instance from `batch.instance_seed(i)`; trustworthy iff u < p, score 1 − u.

    It never looks at the model, the explanation or the confidence. Its AUC is ½ in expectation whatever p
    (the score does not depend on p: not a rate-matched control for AUC); p sets the verdict rate, which
    G-mean, Acc, Sen and Spec depend on (module docstring). No paper: a control.

    Args:
        p (float, optional): the trustworthy rate. Default: 0.5
        score (str, optional): "uniform" = the score 1 − u beside each verdict; "none" = verdicts only.
            Default: "uniform"
    """

    def __init__(self, p: float = 0.5, score: str = "uniform") -> None:
        if not 0 <= p <= 1:
            raise ValueError("p must lie in [0, 1]")
        if score not in ("uniform", "none"):
            raise ValueError("score must be 'uniform' or 'none'")
        self.p = float(p)
        self.score = score

    def fit(self, context: OracleContext) -> None:
        """Nothing to learn: the draws depend on the instance seeds only."""
        return None

    def judge(self, batch: Batch) -> Judgement:
        """Per instance i: u from `batch.instance_seed(i)`; verdict u < p, score 1 − u."""
        u = [float(np.random.default_rng(batch.instance_seed(i)).random()) for i in range(len(batch))]
        return judgement([x < self.p for x in u], [1.0 - x for x in u] if self.score == "uniform" else None)


def rationale_rates(docs: Sequence[Sequence[str]], classes: Sequence[int], rationales: Sequence[Sequence[str]],
                    words_only: bool = True) -> dict[int, dict[str, tuple[int, int]]]:
    """Per class c and lower-cased word type w: (posts of class c with a rationale in which w is rationale,
    posts of class c with a rationale that contain w). Posts without a rationale (e.g. HateXplain's
    normal posts) say nothing about which words people mark and are left out."""
    from benchmark.tokenize import is_word

    out: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for doc, c, rationale in zip(docs, classes, rationales):
        marked = {str(w).lower() for w in (rationale or [])}
        if not marked:
            continue
        for w in {str(t).lower() for t in doc if not words_only or is_word(str(t))}:
            cell = out[int(c)][w]
            cell[0] += int(w in marked)
            cell[1] += 1
    return {c: {w: (a, b) for w, (a, b) in d.items()} for c, d in out.items()}


class RationaleCeiling:
    """Reference (ceiling): the best keyword list the *training* rationales allow (module docstring).

    No published method: a ceiling of this project (xaibench) for the trust track; it reads the training
    rationales, which the harness hands to a "reference" submission only.

    Args:
        min_rate (float, optional): keyword iff rationale in ≥ min_rate of the training posts (of its class,
            with a rationale) containing it. Default: 0.5
        min_count (int, optional): training posts a word must occur in to be scored. Default: 1
        mode (str, optional): "keywords" = share of the explanation's words in the keyword list; "rate" =
            their mean training rationale rate. Default: "keywords"
        weighting (str, optional): "count" = every top-k word alike (the labels count words); "importance" =
            weighted by the explanation's scores. Default: "count"
        top_k (int, optional): explanation words judged ([P] the labels' top 10). Default: 10
        words_only (bool, optional): punctuation tokens left out, as in the labels. Default: True
        threshold (float, optional): trustworthy iff score ≥ threshold ([P] the labels' precision cut).
            Default: 0.5
    """

    def __init__(self, min_rate: float = 0.5, min_count: int = 1, mode: str = "keywords", weighting: str = "count",
                 top_k: int = 10, words_only: bool = True, threshold: float = 0.5) -> None:
        if mode not in CEILING_MODES:
            raise ValueError(f"mode must be one of {CEILING_MODES}, got {mode!r}")
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
        if not 0 <= min_rate <= 1 or not 0 <= threshold <= 1:
            raise ValueError("min_rate and threshold must lie in [0, 1]")
        self.min_rate, self.min_count = float(min_rate), max(1, int(min_count))
        self.mode, self.weighting = mode, weighting
        self.top_k, self.words_only, self.threshold = int(top_k), bool(words_only), float(threshold)
        self.rates: dict[int, dict[str, float]] = {}
        self.prior: dict[int, float] = {}

    def fit(self, context: OracleContext) -> None:
        """Per class, each word's training rationale rate, the keyword list and the class's prior rate, from
        `context.train["rationale"]` (ValueError when the context holds no rationales)."""
        cols = columns(context.train, ("tokens", "label", "rationale"))
        if "rationale" not in cols:
            raise ValueError("the training rationales are not in the fit context: this reference oracle must run "
                             "with role = \"reference\" (the harness hands rationales to references only)")
        counts = rationale_rates(cols["tokens"], [int(y) for y in cols["label"]], cols["rationale"],
                                 self.words_only)
        self.rates, self.prior, self.keywords = {}, {}, {}
        for c, d in counts.items():
            seen = {w: a / b for w, (a, b) in d.items() if b >= self.min_count}
            self.rates[c] = seen
            self.keywords[c] = {w for w, r in seen.items() if r >= self.min_rate}
            hits, total = sum(a for a, _ in d.values()), sum(b for _, b in d.values())
            self.prior[c] = hits / total if total else 0.0

    def judge(self, batch: Batch) -> Judgement:
        """Per instance: the score of its explanation's top-k words (class docstring), trustworthy iff ≥
        threshold; an empty explanation is untrustworthy (score 0)."""
        if not hasattr(self, "keywords"):
            raise RuntimeError("judge() before fit()")
        verdicts, scores = [], []
        for x in (instance_fields(v) for v in batch.inputs):
            c = int(x["prediction"])
            e = top_positive(x.get("explanation_words") or [], x.get("explanation_scores") or [], self.top_k,
                             words_only=self.words_only)
            if not len(e):
                verdicts.append(False)  # the labels: |E| = 0 → precision 0 → untrustworthy
                scores.append(0.0)
                continue
            w = np.ones(len(e)) if self.weighting == "count" else e.scores
            if self.mode == "keywords":
                hit = np.array([word in self.keywords.get(c, ()) for word in e.words], dtype=float)
            else:
                rates = self.rates.get(c, {})
                hit = np.array([rates.get(word, self.prior.get(c, 0.0)) for word in e.words])
            s = float(np.clip((w * hit).sum() / w.sum(), 0.0, 1.0))
            scores.append(s)
            verdicts.append(s >= self.threshold)
        return judgement(verdicts, scores)
