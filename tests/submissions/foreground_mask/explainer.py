"""An attack on the image boards (issue #45), kept as a test submission: a map of the data, not of the model.

Map of an (H, W) image: 1 on every pixel whose value differs from the background (the image's most frequent
value), 0 elsewhere. The model is never called, so the map is the same on any model — an edge or foreground
detector of the kind Adebayo et al. (2018) showed to look like a saliency map. On AIXI-Shape SSIN (40 images,
function model) it scored KL 0.067, below Kernel SHAP's 0.117, and ranked 2nd among methods before the
randomisation test; `tests/test_randomisation_board.py` shows it ranks with the controls now."""

from __future__ import annotations

import numpy as np


class ForegroundMask:
    """Attack: the image's foreground (every pixel unlike the most frequent value); reads no model."""

    def explain(self, model, batch):
        """One float32 mask per image (1 = foreground)."""
        out = []
        for x in batch.inputs:
            img = np.asarray(x, dtype=np.float32)
            values, counts = np.unique(img, return_counts=True)
            background = values[int(np.argmax(counts))]
            out.append((img != background).astype(np.float32))
        return out
