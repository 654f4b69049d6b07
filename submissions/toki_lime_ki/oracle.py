"""TOKI (–K.I) ablation (SPECS §1.6): r(w,c) = [cos(w, class name) ≥ θ_relate], voted; the trust set's LIME explanation."""

from benchmark.toki.core import TokiKI as Oracle

__all__ = ["Oracle"]
