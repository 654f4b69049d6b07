"""TOKI's algorithm as a library (SPECS §1; DESIGN §8 "library code lives below the submissions").

* `benchmark.toki.core` — keyword identification (pipeline 1), the θ_relate search, Eq. 5–6 labelling,
  the `Toki` and `TokiKI` oracles (and `TokiBase`, what they share), `DedupModel` (each distinct perturbed
  document predicted once);
* `benchmark.toki.embeddings` — the offline word-embedding ensemble;
* `benchmark.toki.baselines` — Naive, the random control, the rationale ceiling (reference).

The trust generator, the attack layer and the oracle folders (`submissions/toki_*`, `naive_oracle`,
`random_oracle`, `rationale_ceiling`: thin wrappers) import from here; nothing imports `submissions`.
"""

from benchmark.toki.baselines import Naive, RandomOracle, RationaleCeiling
from benchmark.toki.core import DedupModel, Toki, TokiBase, TokiKI, theta_relate_search

__all__ = ["DedupModel", "Naive", "RandomOracle", "RationaleCeiling", "Toki", "TokiBase", "TokiKI",
           "theta_relate_search"]
