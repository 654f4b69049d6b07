"""Control: each word's |class log-odds| in the resource's training split — a map of the corpus, never of the model.

Score of word w: |s(w)| with s(w) = log[(n₁(w)+α)/(N₁+α|V|)] − log[(n₀(w)+α)/(N₀+α|V|)] the smoothed class
log-odds of document frequencies over the resource's training split (the `lexicon` asset its generator wrote,
`generators.lexicon.class_log_odds`), 0 for a word the lexicon does not hold. The model is never called: the
same map on any model, so the randomisation test finds it model-blind. It is the floor of data priors on the
text boards (issue #50): a word the training data ties to a class is often a word the trained model relies on
(IDC's WGA ground truth is made from such words), so a method must beat what the corpus alone gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.text_common import LexiconControl, documents

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class CorpusLexiconExplainer(LexiconControl):
    """Control: |class log-odds| of each word in the resource's training split (module docstring); model-blind.

    Controls for data priors: what a map that knows which words the training data ties to a class, and
    nothing of the model, scores. No paper: a control. Text only; needs the board's `lexicon` asset.

    Takes no parameters.
    """

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One |log-odds| per word (0 for words outside the lexicon)."""
        lexicon = self.check(model)
        return [np.abs(lexicon.scores(doc)) for doc in documents(batch)]
