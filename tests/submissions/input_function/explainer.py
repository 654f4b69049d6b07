"""A constructed case for the randomisation test (issue #45): a map that is a fixed function of the input only.

Image (H, W): |x − mean(x)| per pixel (how far each pixel is from the image's mean: an edge-and-object map).
Text: each word's length in characters, plus its position / 1000 (so no two words tie). The model is never
called: the map is the same on any model, so the randomisation test must find it model-blind on every board
kind (`tests/test_randomisation_board.py`)."""

from __future__ import annotations

import numpy as np


class InputFunction:
    """A fixed function of the input (module docstring); reads no model."""

    def explain(self, model, batch):
        """One float32 map per input."""
        out = []
        for x in batch.inputs:
            if isinstance(x, (list, tuple)):
                out.append(np.array([len(str(w)) + k / 1000 for k, w in enumerate(x)], dtype=np.float32))
            else:
                img = np.asarray(x, dtype=np.float32)
                out.append(np.abs(img - img.mean()).astype(np.float32))
        return out
