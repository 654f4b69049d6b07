"""Naive baseline oracle (SPECS §1.6): trustworthy iff the model's confidence ≥ θ_conf."""

from __future__ import annotations

from benchmark.toki.baselines import Naive


class Oracle(Naive):
    """Naive baseline: trustworthy iff the model's confidence (max class probability) ≥ θ_conf.

    Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text
    Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663 (its Naive
    confidence baseline, SPECS §1.6). The method is `benchmark.toki.baselines.Naive`.

    Args:
        theta_conf (float, optional): confidence threshold, inclusive ([P] chosen by maximising G-mean,
            Fig. 8). Default: 0.9
        score (str, optional): "confidence" = the confidence beside each verdict; "none" = verdicts only.
            Default: "confidence"
    """


__all__ = ["Oracle"]
