"""Validated metadata (issue #31): every registered track and metric names the paper it follows, every
built-in submission that is not a control names the paper of its method, and a declaration with a
missing reference, an unknown direction or family, a bad range, a main score that is not one of the
track's metrics (...) fails where it is made, naming it. A metric's parameters are its function's."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from benchmark.errors import RegistryError
from benchmark.metrics import METRICS, Direction, Family, Metric, metric
from benchmark.registry import MetadataError, Registry
from benchmark.submission import discover
from benchmark.tracks import TRACKS, Track, TrackMetadata, get_track, register_track
from benchmark.tracks.base import _ensure_builtin

_ensure_builtin()
BUILTINS = {name: s for name, s in discover().items() if "submissions" in s.path.parts}
PAPER = "Someone 2020, A paper, https://example.org/paper"


def _ok(e, t):
    return np.zeros(len(e))


def _declare(**overrides):
    """Declare a metric "test-…" with valid metadata except `overrides`."""
    fn = overrides.pop("fn", _ok)
    kw = {"name": "test-metric", "label": "X", "direction": "lower", "range": (0.0, 1.0),
          "family": "distribution", "reference": PAPER, **overrides}
    return metric(**kw)(fn)


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


# ------------------------------------------------------------------------------------------ metrics
@pytest.mark.parametrize("overrides, message", [
    ({"name": "test-no-ref", "reference": ""}, "metric test-no-ref: reference is missing"),
    ({"name": "test-blank-ref", "reference": "  "}, "metric test-blank-ref: reference is missing"),
    ({"name": "test-up", "direction": "up"}, "metric test-up: direction 'up' is unknown; must be one of 'lower', "
                                             "'higher'"),
    ({"name": "test-fam", "family": "vibes"}, "metric test-fam: family 'vibes' is unknown"),
    ({"name": "test-range", "range": (1.0, 0.0)}, r"metric test-range: range \(1.0, 0.0\) is not \(low, high\)"),
    ({"name": "test-flat", "range": (1.0, 1.0)}, "metric test-flat: range"),
    ({"name": "test-nodef", "fn": lambda e, t, k: e}, "metric test-nodef: parameter 'k' of its function has no "
                                                       "default"),
    ({"name": "test-kwargs", "fn": lambda e, t, **kw: e}, r"metric test-kwargs: its function takes \*kw"),
    ({"name": "test-arity", "fn": lambda e: e}, "metric test-arity: its function must take"),
])
def test_a_bad_metric_declaration_fails_naming_it(overrides, message):
    with pytest.raises(MetadataError, match=message):
        _declare(**dict(overrides))
    assert overrides["name"] not in METRICS


def test_metadata_errors_are_value_and_registry_errors():
    with pytest.raises(ValueError, match="metric test-no-ref2: reference is missing"):
        _declare(name="test-no-ref2", reference="")
    with pytest.raises(RegistryError, match="metric test-up2: direction"):
        _declare(name="test-up2", direction="up")


def test_a_duplicate_metric_name_fails_naming_it():
    with pytest.raises(RegistryError, match="metric 'kl' is registered twice"):
        _declare(name="kl")


def test_metric_metadata_is_keyword_only():
    with pytest.raises(TypeError):
        metric("test-positional", "X", "lower", (0.0, 1.0), "distribution", reference=PAPER)


def test_metric_direction_and_family_are_enums_equal_to_their_strings():
    kl = METRICS.get("kl")
    assert kl.direction is Direction.LOWER and kl.direction == "lower" and str(kl.direction) == "lower"
    assert kl.family is Family.DISTRIBUTION and kl.family == "distribution"
    assert f"{Family.ZERO_CONTRIBUTION}" == "zero-contribution"
    assert not kl.higher_is_better and kl.arrow == "↓"
    m = Metric(name="test-direct", label="X", direction="higher", range=(0.0, 1.0),
               family="trust", fn=_ok, reference=PAPER)
    assert m.direction is Direction.HIGHER and m.family is Family.TRUST and m.arrow == "↑"


@pytest.mark.parametrize("name", METRICS.names())
def test_metric_params_are_its_functions_signature_defaults(name):
    m = METRICS.get(name)
    sig = list(inspect.signature(m.fn).parameters.values())[2:]
    assert m.params == {p.name: p.default for p in sig}


def test_metric_params_come_from_the_function():
    def fn(explanations, truths, grid: int = 7, *, mode: str = "a"):
        """First line. Second line."""
        return np.full(len(explanations), float(grid))

    m = Metric(name="test-sig", label="S", direction=Direction.LOWER, range=(0.0, np.inf),
               family=Family.DISTRIBUTION, fn=fn, reference=PAPER)
    assert m.params == {"grid": 7, "mode": "a"}
    assert m.description == "First line. Second line."
    assert m(np.zeros(2), None).tolist() == [7.0, 7.0]
    assert m(np.zeros(2), None, grid=3, other=1).tolist() == [3.0, 3.0]  # options of other metrics are dropped
    assert METRICS.get("emd").params["grid"] == 32 and METRICS.get("emd-paper").params["grid"] == 4


# ------------------------------------------------------------------------------------------- tracks
def _meta(**overrides):
    kw = {"name": "test-track", "description": "a test track", "reference": PAPER, "resource": "aixi",
          "main_score": "kl", "metrics": ("kl", "emd"), "models": ("function",), **overrides}
    return TrackMetadata(**kw)


@pytest.mark.parametrize("overrides, message", [
    ({"name": "test-no-paper", "reference": ""}, "track 'test-no-paper': reference is missing"),
    ({"name": "test-main", "main_score": "pcc"}, "track 'test-main': main score 'pcc' is not one of its metrics"),
    ({"name": "test-res", "resource": "AIXI data"}, "track 'test-res': resource family 'AIXI data' is not"),
    ({"name": "test-mod", "modality": "audio"}, "track 'test-mod': modality 'audio' is unknown"),
    ({"name": "test-kind", "submission_kind": "judge"}, "track 'test-kind': submission kind 'judge' is unknown"),
    ({"name": "test-nometric", "metrics": (), "main_score": ""}, "track 'test-nometric': metrics"),
    ({"name": "test-nomodel", "models": ()}, "track 'test-nomodel': models is empty"),
    ({"name": "Test Track"}, "track 'Test Track': name must be a lower-case slug"),
])
def test_a_bad_track_declaration_fails_naming_it(overrides, message):
    with pytest.raises(MetadataError, match=message):
        _meta(**overrides)


def test_a_track_class_with_bad_metadata_fails_at_class_definition():
    with pytest.raises(MetadataError, match="track 'test-no-paper': reference is missing"):
        class NoPaper(Track):  # noqa: F841
            metadata = _meta(name="test-no-paper", reference="")


def test_a_track_without_metadata_or_under_another_name_is_refused():
    class Bare(Track):
        pass

    with pytest.raises(MetadataError, match="track 'test-bare' declares no metadata"):
        TRACKS.register("test-bare", Bare())

    class Named(Track):
        metadata = _meta(name="test-named")

    with pytest.raises(MetadataError, match="track 'test-other' is registered under another name"):
        TRACKS.register("test-other", Named())

    class UnknownMetric(Track):
        metadata = _meta(name="test-unknown-metric", metrics=("kl", "test-nowhere"))

    with pytest.raises(MetadataError, match="track 'test-unknown-metric': metric.s. test-nowhere are not registered"):
        register_track(UnknownMetric())
    assert not {"test-bare", "test-other", "test-named", "test-unknown-metric"} & set(TRACKS.names())


def test_track_attributes_read_the_metadata():
    class Later(Track):
        metadata = _meta(name="test-later", main_score="emd", metrics=("kl", "emd", "pcc"), control_note="why")

    t = Later()
    assert (t.name, t.family, t.reference, t.description) == ("test-later", "aixi", PAPER, "a test track")
    assert t.primary_metric == "emd" and t.metrics == ("emd", "kl", "pcc")  # the main score first
    assert (t.modality, t.default_split, t.submission_kind, t.control_note) == ("image", "validation",
                                                                                  "explainer", "why")
    assert [m.name for m in t.metric_objects()] == ["emd", "kl", "pcc"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.metadata.name = "x"


@pytest.mark.parametrize("name", TRACKS.names())
def test_every_builtin_track_is_registered_under_its_metadata_name(name):
    t = get_track(name)
    assert t.name == t.metadata.name == name
    assert t.primary_metric == t.metrics[0] == t.metadata.main_score
    assert set(t.metrics) == set(t.metadata.metrics) and all(m in METRICS for m in t.metrics)


# ---------------------------------------------------------------------------------------- registry
def test_a_registry_runs_its_loaders_on_the_first_lookup_and_retries_one_that_failed():
    reg: Registry[int] = Registry("thing")
    calls = []

    def loader():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first import fails")
        reg.register("b", 2)

    reg.register("a", 1)
    reg.on_first_lookup(loader)
    assert calls == []  # lazy
    with pytest.raises(RuntimeError):
        reg.names()
    assert reg.names() == ["a", "b"] and calls == [1, 1]
    assert reg.get("b") == 2 and calls == [1, 1]  # loaded once
    late = []
    reg.on_first_lookup(lambda: late.append(1))  # after the first lookup: runs at once
    assert late == [1]
