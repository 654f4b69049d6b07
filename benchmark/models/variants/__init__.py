"""Model variants: the randomised model of the sanity test and the hidden copies drawn from a secret.

* `randomise` — Adebayo et al.'s model-parameter randomisation (full and cascading): the randomised copy the
  boards' randomisation test and the metric board's control run on;
* `hidden` — the hidden copies of a board's model, drawn from a round's secret at evaluation time (issue #50):
  rounds, draws, commitments and the constructions that build a copy.

Both import only `benchmark.errors`, `benchmark.registry` and `benchmark.resources` (the data home); the runs of
a submission on these variants are `benchmark.variant_runs`, beside the runner. Nothing is re-exported.
"""
