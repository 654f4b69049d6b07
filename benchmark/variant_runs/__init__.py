"""Runs of a submission on model variants: the randomisation test, the hidden copies, how alike two runs' maps are.

* `randomisation` — the randomised-model run, the harness's side of the boards' randomisation test (Adebayo et
  al. 2018): pairing it with its trained Result and comparing their maps;
* `hidden` — the hidden-copy run, the harness's side of ranking on models no submission has seen (issue #50);
* `similarity` — the measures of how alike two maps of one instance are (Spearman of |map|, SSIM for images).

Each run is an ordinary evaluation through `benchmark.runner` (which imports this package) on a variant of the
board's model (`benchmark.models.variants`), written as a Result (`benchmark.store`). This package imports the
store, the model variants and the isolation package's checks of the machine, never the runner, the tracks or
the leaderboard; `xaibench verify` (`benchmark.verify`) re-scores both kinds of run from above.
"""
