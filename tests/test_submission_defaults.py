"""One copy of each default (issue #31): a built-in submission's `[parameters]` in submission.toml and
its class's constructor defaults never disagree, so the explainer a board ranks is the one Python
gives you (`OcclusionExplainer()` is the `occlusion` on the board)."""

from __future__ import annotations

import importlib.util
import inspect

import pytest

from benchmark.submission import discover

BUILTINS = {name: s for name, s in discover().items() if "submissions" in s.path.parts}


def _entry_class(sub):
    module_name, _, class_name = sub.entry.partition(":")
    spec = importlib.util.spec_from_file_location(f"_defaults_{sub.name.replace('-', '_')}",
                                                  sub.path / f"{module_name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, class_name)


def constructor_defaults(cls) -> dict:
    """Every keyword default the constructor takes, following `**kwargs` into the bases' constructors."""
    out: dict = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        sig = inspect.signature(init)
        for name, p in sig.parameters.items():
            if p.default is not inspect.Parameter.empty and name not in out:
                out[name] = p.default
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
            break
    return out


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_parameters_equal_the_constructor_defaults(name):
    sub = BUILTINS[name]
    defaults = constructor_defaults(_entry_class(sub))
    differ = {k: (v, defaults[k]) for k, v in sub.parameters.items() if k in defaults and defaults[k] != v}
    assert not differ, f"{name}: submission.toml [parameters] vs constructor defaults: {differ}"


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_every_parameter_is_accepted_by_the_constructor(name):
    """The load-time check (`accepted_parameters`, issue #31) passes every built-in."""
    from benchmark.submission import accepted_parameters

    sub = BUILTINS[name]
    accepted = accepted_parameters(_entry_class(sub))
    assert accepted is None or set(sub.parameters) <= accepted, (name, sorted(set(sub.parameters) - accepted))
