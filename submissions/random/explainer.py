"""Control: U(0, 1) noise per pixel from a per-instance seed derived from (batch.seed, instance id)."""

from __future__ import annotations

import numpy as np



class RandomExplainer:
    def explain(self, model, batch) -> list[np.ndarray]:
        inputs = np.asarray(batch.inputs)
        return [np.random.default_rng(batch.instance_seed(i)).random(x.shape).astype(np.float32)
                for i, x in enumerate(inputs)]
