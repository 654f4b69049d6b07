"""References as validated metadata (issue #31): every registered track and metric names the paper it
follows, every built-in submission that is not a control names the paper of its method, and a
declaration without one (or with an unknown direction) fails where it is made, naming it."""

from __future__ import annotations

import pytest

from benchmark.errors import RegistryError
from benchmark.metrics import METRICS, metric
from benchmark.submission import discover
from benchmark.tracks.base import TRACKS, Track, _ensure_builtin

_ensure_builtin()
BUILTINS = {name: s for name, s in discover().items() if "submissions" in s.path.parts}


@pytest.mark.parametrize("name", METRICS.names())
def test_every_metric_has_a_reference(name):
    ref = METRICS.get(name).reference
    assert ref.strip() and "http" in ref, (name, ref)


@pytest.mark.parametrize("name", TRACKS.names())
def test_every_track_has_a_reference(name):
    ref = TRACKS.get(name).reference
    assert ref.strip() and "http" in ref, (name, ref)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_every_builtin_method_has_a_reference(name):
    sub = BUILTINS[name]
    if sub.role == "control":
        return
    assert sub.reference.strip(), f"{name} ({sub.role}) has no [submission] reference"


def test_a_metric_without_a_reference_or_with_an_unknown_direction_fails_at_declaration():
    with pytest.raises(ValueError, match="metric test-no-ref: reference is missing"):
        metric("test-no-ref", "X", "lower", (0.0, 1.0), "test")(lambda e, t: e)
    with pytest.raises(ValueError, match="metric test-up: direction 'up' is unknown"):
        metric("test-up", "X", "up", (0.0, 1.0), "test", reference="Someone 2020, A paper, https://x")(
            lambda e, t: e)
    assert "test-no-ref" not in METRICS and "test-up" not in METRICS


def test_a_track_without_a_reference_fails_at_registration():
    class NoPaper(Track):
        name = "test-no-paper"

    with pytest.raises(RegistryError, match="track 'test-no-paper' has no reference"):
        TRACKS.register("test-no-paper", NoPaper())
    assert "test-no-paper" not in TRACKS
