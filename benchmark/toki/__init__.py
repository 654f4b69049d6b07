"""TOKI's algorithm as a library (SPECS §1; DESIGN §8 "library code lives below the submissions").

* `benchmark.toki.core` — the `Toki` and `TokiKI` oracles (and `TokiBase`, what they share): pipeline 1
  (keyword identification, once per model) and pipeline 2 (labelling) over the pieces below;
* `benchmark.toki.keywords` — the θ_relate search, the word pool, clustering, the keyword test, r(w, c)
  and the Eq. 6 decision (SPECS §1.2–1.5);
* `benchmark.toki.explanations` — the explanation record, top-k words, word omission, `DedupModel` (each
  distinct perturbed document predicted once) and the lemmatiser;
* `benchmark.toki.embeddings` — the offline word-embedding ensemble;
* `benchmark.toki.baselines` — Naive, the chance (random) control, the rationale ceiling (reference);
* `benchmark.toki.controls` — the blind controls: text length, explanation size (issue #38).

The trust generator, the attack layer and the oracle folders (`submissions/toki_*`, `naive_oracle`,
`random_oracle`, `text_length_oracle`, `explanation_size_oracle`, `rationale_ceiling`: thin
wrappers) import from here; nothing imports `submissions`.
"""

from benchmark.toki.baselines import Naive, RandomOracle, RationaleCeiling
from benchmark.toki.core import Toki, TokiBase, TokiKI
from benchmark.toki.explanations import DedupModel
from benchmark.toki.keywords import theta_relate_search

__all__ = ["DedupModel", "Naive", "RandomOracle", "RationaleCeiling", "Toki", "TokiBase", "TokiKI",
           "theta_relate_search"]
