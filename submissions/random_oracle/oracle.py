"""Chance control oracle: verdicts drawn from the instance seed, looking at nothing."""

from __future__ import annotations

from benchmark.toki.baselines import RandomOracle


class Oracle(RandomOracle):
    """Control: u ~ U(0, 1) per instance from the instance seed; trustworthy iff u < p, score 1 − u.

    Controls for chance: it reads neither the model, the explanation nor the confidence. Its AUC (the board's
    primary metric) is ½ in expectation at every p — the score 1 − u does not depend on p — so p matters only
    for the verdict metrics (G-mean, Acc, Sen, Spec): run it with p = an oracle's trustworthy rate to read
    those at the same rate. The blind controls that *can* beat chance are `text-length-oracle` and
    `explanation-size-oracle`. No paper: a control. The method is `benchmark.toki.baselines.RandomOracle`.

    Args:
        p (float, optional): the trustworthy rate. Default: 0.5
        score (str, optional): "uniform" = the score 1 − u beside each verdict; "none" = verdicts only.
            Default: "uniform"
    """


__all__ = ["Oracle"]
