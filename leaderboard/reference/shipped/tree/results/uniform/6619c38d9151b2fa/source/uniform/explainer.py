"""Control: a constant map (all `value`); under SPECS §3.7 normalisation it is the uniform distribution.

Text: the same constant for every word position."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.text_common import documents, is_text

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model


class UniformExplainer:
    """Control: a constant map, every pixel (text: every word) equally important.

    Controls for ties: what a metric gives an explanation that ranks nothing above anything else (under
    SPECS §3.7 normalisation, the uniform distribution). No paper: a control.

    Args:
        value (float, optional): the constant. Default: 1.0
    """

    def __init__(self, value: float = 1.0) -> None:
        self.value = float(value)

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One constant array per instance (the image's shape, or one value per word)."""
        if is_text(model):
            return [np.full(len(doc), self.value, dtype=np.float32) for doc in documents(batch)]
        return [np.full(np.shape(x), self.value, dtype=np.float32) for x in np.asarray(batch.inputs)]
