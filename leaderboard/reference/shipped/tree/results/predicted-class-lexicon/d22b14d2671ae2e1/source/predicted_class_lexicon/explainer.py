"""Control: each word's class log-odds turned toward the class the model predicts (a prior following the model).

Score of word w in document d: σ(d) · s(w), with s(w) the smoothed class log-odds of w over the resource's
training split (the `lexicon` asset, `generators.lexicon.class_log_odds`; > 0: more typical of class 1; 0 for a
word the lexicon does not hold) and σ(d) = +1 when the model predicts class 1 for the whole document, −1
otherwise. The predicted class: the larger of two outputs (a tie → class 0); for a model with one output (the
RCNN's rating in [0, 1]) class 1 ("high") when the output is ≥ the threshold the lexicon's training ratings were
cut at (its recipe's `threshold`, `generators.rcnn.build.RCNNBuildConfig.lexicon_threshold`). One batched
`model.predict` per batch, of the non-empty documents.

It reads the model only through its prediction, so it can pass the randomisation test (the signs follow the
randomised model's predictions) while explaining nothing of how the model decides: the floor of data priors
that the hidden copies of a model are there to expose (issue #50; DESIGN §8)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from submissions.text_common import Lexicon, LexiconControl, documents, explain_nonempty

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


def predicted_class(outputs: np.ndarray, threshold: float | None) -> np.ndarray:
    """Class 0 / 1 per row of `outputs` (N, 1 or 2): the argmax of two outputs (first maximum: a tie → 0), or
    output ≥ `threshold` for one output (`threshold` None: ValueError)."""
    out = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
    if out.shape[1] == 2:
        return np.argmax(out, axis=1)
    if threshold is None:
        raise ValueError("a one-output model needs a lexicon cut at a rating threshold; this lexicon records none")
    return (out[:, 0] >= threshold).astype(np.int64)


class PredictedClassLexiconExplainer(LexiconControl):
    """Control: the class log-odds of each word, signed toward the model's predicted class (module docstring).

    Controls for data priors that follow the model's output: a lexicon turned toward the predicted class
    reaches κ 0.507 on IDC (issue #50) without reading how the model decides. No paper: a control. Text only;
    needs the board's `lexicon` asset.

    Takes no parameters.
    """

    def unsupported(self, model: Model) -> str | None:
        """Why this control cannot score `model` (not text, no lexicon, not one or two outputs), or None."""
        why = super().unsupported(model)
        if why:
            return why
        n = int(getattr(model, "n_outputs", 2))
        if n not in (1, 2):
            return f"the lexicon has two classes; model {getattr(model, 'name', '?')} has {n} outputs"
        if n == 1 and self.lexicon().threshold is None:
            return "a one-output model needs a lexicon cut at a rating threshold; this lexicon records none"
        return None

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """σ(d) · s(w) per word: one `model.predict` over the batch's non-empty documents."""
        lexicon: Lexicon = self.check(model)
        docs = documents(batch)

        def signed(idx: list[int]) -> list[Any]:
            chosen = [docs[i] for i in idx]
            cls = predicted_class(np.asarray(model.predict(chosen)), lexicon.threshold)
            return [lexicon.scores(d) * (1.0 if c == 1 else -1.0) for d, c in zip(chosen, cls)]

        return explain_nonempty(docs, signed)
