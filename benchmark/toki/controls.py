"""Blind controls of the trust track (issue #38): oracles that read one surface quantity of a judged
prediction and nothing that could carry trust — no model, no confidence, no explanation *words*, no labels,
no rationales. A trust board whose winner does not beat them says so (the leaderboard's verdict is against
the best control).

Why they are needed: the trust label is explanation precision against people's rationale (≥ ½ of the
explanation's top-10 positive words in the rationale, SPECS §1.8). Two things raise that precision without
any understanding of the model or of the class:

* `TextLengthOracle` — a *short text*: its rationale covers a larger share of its words, so any ten words
  of it are more often rationale. Score m / (m + n) for a text of n words (m: the training texts' median
  word count, so the score is ½ at the median); trustworthy iff n ≤ m.
* `ExplanationSizeOracle` — a *small explanation*: fewer than ten positive words (short texts, or LIME
  giving most words a negative weight) leave fewer chances to miss the rationale. Score (k − e) / k for
  e positive explanation words out of top_k = k (1 for none, 0 for k); trustworthy iff e ≤ the training
  explanations' median size. (An explanation with no positive word is untrustworthy by the labels; it
  scores 1 here all the same: the control reads the count, not the rule.)

Each has a `direction` ("shorter" / "smaller", default: the direction the label construction favours,
fixed before any measurement, never fitted on labels) so the reverse reading is available by name.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from benchmark.contracts import Batch, Judgement, OracleContext
from benchmark.toki.core import columns, instance_fields
from benchmark.toki.keywords import judgement

TEXT_DIRECTIONS = ("shorter", "longer")
SIZE_DIRECTIONS = ("smaller", "larger")


def word_count(tokens: Sequence[str] | None) -> int:
    """The number of word tokens (punctuation left out, as in the explanations)."""
    from benchmark.tokenize import is_word

    return sum(1 for t in (tokens or []) if is_word(str(t)))


def explanation_size(words: Sequence[str] | None, scores: Sequence[float] | None, top_k: int = 10) -> int:
    """How many of the explanation's words an oracle reading its top-k positive words would judge: the
    positive-scored word tokens, capped at top_k (the words themselves are not read)."""
    from benchmark.tokenize import is_word

    pairs = zip(words or [], scores or [])
    return min(int(top_k), sum(1 for w, s in pairs if float(s) > 0 and is_word(str(w))))


class TextLengthOracle:
    """Control: a monotone score of the judged text's word count only (module docstring).

    It reads the instance's tokens to count its words (`fit`: the training texts' median count m); never
    the model, the confidence, the explanation, the labels or the rationales. No paper: a control.

    Args:
        direction (str, optional): "shorter" = a shorter text is more trustworthy (score m / (m + n));
            "longer" = the reverse (score n / (m + n)). Default: "shorter"
    """

    def __init__(self, direction: str = "shorter") -> None:
        if direction not in TEXT_DIRECTIONS:
            raise ValueError(f"direction must be one of {TEXT_DIRECTIONS}, got {direction!r}")
        self.direction = direction
        self.median: float | None = None

    def fit(self, context: OracleContext) -> None:
        """m = the median word count of the training texts (1 when there are none)."""
        docs = columns(context.train, ("tokens",)).get("tokens") or [] if context.train is not None else []
        lengths = [word_count(d) for d in docs]
        self.median = max(1.0, float(np.median(lengths))) if lengths else 1.0

    def judge(self, batch: Batch) -> Judgement:
        """Per instance: n words → score m / (m + n) (n / (m + n) for "longer"); trustworthy iff score ≥ ½."""
        if self.median is None:
            raise RuntimeError("judge() before fit()")
        m = self.median
        n = [word_count(instance_fields(x).get("tokens")) for x in batch.inputs]
        scores = [m / (m + k) if self.direction == "shorter" else k / (m + k) for k in n]
        return judgement([s >= 0.5 for s in scores], scores)


class ExplanationSizeOracle:
    """Control: a monotone score of the number of positive words in the judged explanation (module
    docstring) — never which words they are, the model, the confidence, the labels or the rationales.
    `fit` reads the training explanations' sizes (their median is the verdict's cut). No paper: a control.

    Args:
        direction (str, optional): "smaller" = fewer explanation words is more trustworthy (score
            (k − e) / k); "larger" = the reverse (e / k). Default: "smaller"
        top_k (int, optional): the explanation words the labels read ([P] 10). Default: 10
    """

    def __init__(self, direction: str = "smaller", top_k: int = 10) -> None:
        if direction not in SIZE_DIRECTIONS:
            raise ValueError(f"direction must be one of {SIZE_DIRECTIONS}, got {direction!r}")
        if int(top_k) < 1:
            raise ValueError("top_k must be ≥ 1")
        self.direction = direction
        self.top_k = int(top_k)
        self.median: float | None = None

    def fit(self, context: OracleContext) -> None:
        """The median size of the training split's explanations (top_k when it has none)."""
        cols = columns(context.train, ("explanation_words", "explanation_scores")) if context.train is not None \
            else {}
        sizes = [explanation_size(w, s, self.top_k) for w, s in
                 zip(cols.get("explanation_words") or [], cols.get("explanation_scores") or []) if w]
        self.median = float(np.median(sizes)) if sizes else float(self.top_k)

    def judge(self, batch: Batch) -> Judgement:
        """Per instance: e positive explanation words → score (k − e) / k (e / k for "larger"); trustworthy
        iff e ≤ the training median (≥ for "larger")."""
        if self.median is None:
            raise RuntimeError("judge() before fit()")
        k = self.top_k
        items = [instance_fields(x) for x in batch.inputs]
        e = [explanation_size(x.get("explanation_words"), x.get("explanation_scores"), k) for x in items]
        if self.direction == "smaller":
            return judgement([v <= self.median for v in e], [(k - v) / k for v in e])
        return judgement([v >= self.median for v in e], [v / k for v in e])
