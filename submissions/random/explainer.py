"""Control: U(0, 1) noise per pixel from a per-instance seed derived from (batch.seed, instance id).

Text: one U(0, 1) draw per word position from the same per-instance seed (never looks at the model)."""

from __future__ import annotations

import numpy as np

from submissions.text_common import documents, is_text


class RandomExplainer:
    def explain(self, model, batch) -> list[np.ndarray]:
        if is_text(model):
            return [np.random.default_rng(batch.instance_seed(i)).random(len(doc)).astype(np.float32)
                    for i, doc in enumerate(documents(batch))]
        inputs = np.asarray(batch.inputs)
        return [np.random.default_rng(batch.instance_seed(i)).random(x.shape).astype(np.float32)
                for i, x in enumerate(inputs)]
