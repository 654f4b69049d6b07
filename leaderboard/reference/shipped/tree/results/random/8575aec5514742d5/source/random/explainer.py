"""Control: U(0, 1) noise per pixel from a per-instance seed derived from (batch.seed, instance id).

Text: one U(0, 1) draw per word position from the same per-instance seed (never looks at the model)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.text_common import documents, is_text

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class RandomExplainer:
    """Control: a U(0, 1) random map (text: one draw per word) from the instance seed; never looks at the model.

    Controls for chance: the score of an explanation that carries no information about the model, the
    floor a method must beat on every metric. No paper: a control.

    Takes no parameters.
    """

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One U(0, 1) array per instance (the image's shape, or one draw per word)."""
        if is_text(model):
            return [np.random.default_rng(batch.instance_seed(i)).random(len(doc)).astype(np.float32)
                    for i, doc in enumerate(documents(batch))]
        inputs = np.asarray(batch.inputs)
        return [np.random.default_rng(batch.instance_seed(i)).random(x.shape).astype(np.float32)
                for i, x in enumerate(inputs)]
