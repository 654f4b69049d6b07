"""Random control oracle: verdicts drawn from the instance seed, looking at nothing."""

from __future__ import annotations

from benchmark.toki.baselines import RandomOracle


class Oracle(RandomOracle):
    """Control: u ~ U(0, 1) per instance from the instance seed; trustworthy iff u < p, score 1 − u.

    Controls for the trustworthy rate: it reads neither the model, the explanation nor the confidence,
    so an oracle must beat it at its own rate (run it with p = that oracle's trustworthy rate for the
    rate-matched floor). No paper: a control. The method is `benchmark.toki.baselines.RandomOracle`.

    Args:
        p (float, optional): the trustworthy rate. Default: 0.5
        score (str, optional): "uniform" = the score 1 − u beside each verdict; "none" = verdicts only.
            Default: "uniform"
    """


__all__ = ["Oracle"]
