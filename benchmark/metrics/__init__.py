"""Metrics: pure NumPy functions with validated metadata (name, label, direction, range, family, reference).

Each metric maps a batch of explanations and ground truths to one score per instance (NaN where the
instance is excluded, e.g. an empty ground truth; the runner counts those). Declare one with the
keyword-only `metric` decorator (`benchmark.metrics.base`); its parameters are its function's."""

from benchmark.metrics.base import METRICS, Direction, Family, Metric, metric

__all__ = ["METRICS", "Direction", "Family", "Metric", "metric"]
