"""xaibench harness: contracts, submissions, resources, models under test, tracks, metrics, runner, store, CLI.

`benchmark` never imports `generators`, `submissions` or `leaderboard`; it finds them through
entry points (see `benchmark.registry`).
"""

from benchmark.errors import XaibenchError
from benchmark.provenance import VERSION as __version__

__all__ = ["XaibenchError", "__version__", "load_resource", "evaluate"]


def load_resource(name: str, **kwargs):
    """Load a ground-truth resource `<family>/<config>` (see `benchmark.resources.load_resource`)."""
    from benchmark.resources import load_resource as _load

    return _load(name, **kwargs)


def evaluate(submission, track: str, resource: str, **kwargs):
    """Evaluate a submission on a resource of a track (see `benchmark.runner.evaluate`)."""
    from benchmark.runner import evaluate as _evaluate

    return _evaluate(submission, track=track, resource=resource, **kwargs)
