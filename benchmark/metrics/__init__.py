"""Metrics: pure NumPy functions with metadata (name, label, direction, range, family).

Each metric maps a batch of explanations and ground truths to one score per instance (NaN where the
instance is excluded, e.g. an empty ground truth; the runner counts those)."""

from benchmark.metrics.base import METRICS, Metric, metric

__all__ = ["METRICS", "Metric", "metric"]
