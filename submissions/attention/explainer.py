"""Word attention weights of attention models (SPECS §5.8 "Hierarchical Attention", §2.2 "A").

Score of word p = the model's normalised attention weight a_p (`model.attention(tokens)`; for the HAN
word level, softmax over the document's words, so a document's scores sum to 1). The weights do not
depend on the explained class. Models without an attention layer raise a clear error
(`unsupported(model)` says why).
"""

from __future__ import annotations

import numpy as np

from submissions.text_common import documents, explain_nonempty, is_text


class AttentionExplainer:
    def unsupported(self, model) -> str | None:
        """Why this explainer cannot explain `model`, or None."""
        name = getattr(model, "name", "?")
        if not is_text(model):
            return "attention handles word-level text models only"
        if not callable(getattr(model, "attention", None)):
            return f"attention needs model.attention(tokens); model {name} exposes no attention weights"
        try:
            model.attention([["a"]])
        except (TypeError, NotImplementedError) as exc:
            return f"attention: model {name} has no word attention layer ({exc}); use a gradient method instead"
        return None

    def explain(self, model, batch) -> list[np.ndarray]:
        docs = documents(batch)
        if not any(docs):
            return [np.zeros(0, dtype=np.float32) for _ in docs]
        reason = self.unsupported(model)
        if reason:
            raise ValueError(reason)
        return explain_nonempty(docs, lambda idx: model.attention([docs[i] for i in idx]))
