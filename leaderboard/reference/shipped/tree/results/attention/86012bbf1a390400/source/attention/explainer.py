"""Word attention weights of attention models (SPECS §5.8 "Hierarchical Attention", §2.2 "A").

Score of word p = the model's normalised attention weight a_p (`model.attention(tokens)`; for the HAN
word level, softmax over the document's words, so a document's scores sum to 1). The weights do not
depend on the explained class. Models without an attention layer raise a clear error
(`unsupported(model)` says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence, cast

import numpy as np

from submissions.text_common import documents, explain_nonempty, is_text

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class _Attending(Protocol):
    """A text model with a word attention layer (the HAN): its weights per word of each document."""

    def attention(self, tokens: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """One weight per word of each document."""
        ...


class AttentionExplainer:
    """The model's own word attention weights as word scores (HAN word level; attention models only).

    Bahdanau, Cho & Bengio 2015, Neural Machine Translation by Jointly Learning to Align and Translate, ICLR,
    https://arxiv.org/abs/1409.0473; read as an explanation: Jain & Wallace 2019, Attention is not
    Explanation, NAACL, https://arxiv.org/abs/1902.10186.

    Takes no parameters.
    """

    def unsupported(self, model: Model) -> str | None:
        """Why this explainer cannot explain `model`, or None."""
        name = getattr(model, "name", "?")
        if not is_text(model):
            return "attention handles word-level text models only"
        if not callable(getattr(model, "attention", None)):
            return f"attention needs model.attention(tokens); model {name} exposes no attention weights"
        try:
            cast(_Attending, model).attention([["a"]])
        except (TypeError, NotImplementedError) as exc:
            return f"attention: model {name} has no word attention layer ({exc}); use a gradient method instead"
        return None

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One score per word: the model's attention weight (a document's scores sum to 1 for the HAN)."""
        docs = documents(batch)
        if not any(docs):
            return [np.zeros(0, dtype=np.float32) for _ in docs]
        reason = self.unsupported(model)
        if reason:
            raise ValueError(reason)
        attending = cast(_Attending, model)  # `unsupported` checked it has a word attention layer
        return explain_nonempty(docs, lambda idx: attending.attention([docs[i] for i in idx]))
