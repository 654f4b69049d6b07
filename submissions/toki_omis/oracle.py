"""TOKI with word omission (p_c(x) − p_c(x without every occurrence of w), batched) in both pipelines."""

from benchmark.toki.core import Toki as Oracle

__all__ = ["Oracle"]
