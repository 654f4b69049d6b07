"""One copy of each default (issue #31): a built-in submission's `[parameters]` in submission.toml and
its class's constructor defaults never disagree, so the explainer a board ranks is the one Python
gives you (`OcclusionExplainer()` is the `occlusion` on the board)."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import sys

import pytest

from benchmark.submission import discover

BUILTINS = {name: s for name, s in discover().items() if "submissions" in s.path.parts}


def _entry_class(sub):
    """The entry class, imported from its file as the harness does (`Submission.instantiate`: the module is
    in `sys.modules` while it runs, so a dataclass in it resolves its annotations)."""
    module_name, _, class_name = sub.entry.partition(":")
    key = f"_defaults_{sub.name.replace('-', '_')}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, sub.path / f"{module_name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return getattr(sys.modules[key], class_name)


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
                out[name] = list(p.default) if isinstance(p.default, tuple) else p.default  # TOML has lists only
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


# -- the class docstring (issue #31): Captum style, the paper and every default, the same as the toml's ----------

_ENTRY = re.compile(r"^(\w+) \([^)]*\):")


def docstring_args(doc: str) -> dict:
    """The `Args:` block of a Captum-style docstring → {parameter: its `Default:` value (a Python literal)}."""
    lines = inspect.cleandoc(doc).splitlines()
    if "Args:" not in lines:
        return {}
    entries: dict[str, str] = {}
    current = None
    for line in lines[lines.index("Args:") + 1:]:
        if not line.strip():
            break
        m = _ENTRY.match(line.strip()) if line.startswith("    ") and not line.startswith("     ") else None
        if m:
            current = m.group(1)
            entries[current] = line
        elif current is not None and line.startswith("        "):
            entries[current] += " " + line.strip()
        else:
            break
    out = {}
    for name, text in entries.items():
        assert "Default: " in text, f"parameter {name} gives no default: {text!r}"
        out[name] = ast.literal_eval(text.rsplit("Default: ", 1)[1].strip())
    return out


def test_docstring_args_reads_names_and_defaults():
    doc = '''What it does.

    Args:
        n (int, optional): how many, over
            two lines. Default: 50
        mode (str, optional): "a" or "b". Default: "a"

    Other text. Default: 7
    '''
    assert docstring_args(doc) == {"n": 50, "mode": "a"}
    with pytest.raises(AssertionError, match="k gives no default"):
        docstring_args("X.\n\nArgs:\n    k (int): no default here\n")


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_the_class_docstring_gives_every_default(name):
    """The entry class's own docstring lists its parameters with the defaults of the toml and the constructor
    (every parameter, or — for a thin subclass — the ones it sets, pointing at its base for the rest)."""
    sub = BUILTINS[name]
    cls = _entry_class(sub)
    doc = cls.__dict__.get("__doc__") or ""
    assert doc.strip(), f"{name}: {cls.__name__} has no docstring of its own"
    documented = docstring_args(doc)
    defaults = constructor_defaults(cls)
    differ = {k: (v, defaults.get(k), sub.parameters.get(k, v)) for k, v in documented.items()
              if k not in defaults or defaults[k] != v or sub.parameters.get(k, v) != v}
    assert not differ, f"{name}: docstring default vs (constructor, toml): {differ}"
    if "Every other parameter" in doc:
        assert any(f"`{base.__name__}`" in doc for base in cls.__mro__[1:]), f"{name}: points at no base class"
        return
    missing = (set(sub.parameters) | set(defaults)) - set(documented)
    assert not missing, f"{name}: docstring Args lack {sorted(missing)}"
    if not defaults:
        assert "Takes no parameters." in doc, name


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_the_class_docstring_names_the_paper_or_what_it_controls_for(name):
    """The same paper as the toml's `reference` (its every link), or, for a control, what it controls for."""
    sub = BUILTINS[name]
    doc = _entry_class(sub).__dict__.get("__doc__") or ""
    if sub.role == "control":
        assert not sub.reference, name
        assert sub.description.startswith("Control for "), f"{name}: the description says what it controls for"
        assert "Controls for " in doc and "No paper: a control." in doc, name
        return
    links = re.findall(r"https?://\S+?(?=[;,)]?(?:\s|$))", sub.reference)
    if not links or sub.data_prior:  # a reference of this project (the rationale ceiling), or a data prior whose
        # reference names the papers whose published data it returns (published-truth): no published method
        assert "No published method" in doc, name
        return
    for link in links:
        assert link in doc, f"{name}: the docstring does not cite {link} (submission.toml reference)"
    year = re.search(r"\b(19|20)\d\d\b", sub.reference)
    assert year and year.group(0) in doc, name
