"""A submission's requirements (`requires` under `[submission]`, PEP 508) against the harness's packages.

* **The harness's packages** are the distributions xaibench itself needs: the closure of its installed
  distribution's requirements (`importlib.metadata`, markers evaluated, no extras), or every installed
  distribution when xaibench runs from a tree that is not installed. A submission runs with them and may not
  replace any: a requirement on one of them must accept the installed version.
* **What a submission may import** by an `import` statement in its own modules (`benchmark.submission.importing`): the
  standard library, its own modules, the harness's public packages (`benchmark`, and `submissions` for the
  built-ins' shared helpers) and the top-level modules of the harness's packages and of its requirements
  (their closure). Anything else — a package that happens to be installed on the author's machine, the
  ground-truth builders (`generators`), the leaderboard — is refused with the line that names it, so a
  submission that runs here runs on the maintainer's machine too.
* **Resolved versions**: the installed versions of the requirements' closure outside the harness's packages,
  recorded in a Result's provenance (`requirements`) and pinned by the re-run's environment
  (`benchmark.submission.environments`).

Requirements are parsed with `packaging` (the reference implementation of PEP 508 / PEP 440).
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from benchmark.errors import SubmissionError

MAX_REQUIREMENTS = 64
MAX_REQUIREMENT_CHARS = 200
HARNESS_DISTRIBUTION = "xaibench"
# the harness's own top-level packages a submission may import: the contracts, models and helpers; the
# ground-truth builders and the leaderboard are not a submission's business
PUBLIC_PACKAGES = frozenset({"benchmark", "submissions"})
PRIVATE_PACKAGES = frozenset({"generators", "leaderboard"})


def parse_requires(value: object, where: str) -> list[str]:
    """`requires` of submission.toml as normalised PEP 508 strings; `SubmissionError` naming the bad entry.

    A requirement names a distribution and a version range (`shap>=0.46,<0.47`, extras and markers allowed);
    a URL (`name @ https://…`), anything naming a file or URL (`file:`, `://`) and arbitrary equality (`===`, a
    string match that a path can pass) are refused: the re-run installs from the maintainer's index or
    wheelhouse."""
    if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
        raise SubmissionError(f"{where}: [submission] requires must be a list of PEP 508 strings, e.g. "
                              "[\"shap>=0.46,<0.47\"]")
    if len(value) > MAX_REQUIREMENTS:
        raise SubmissionError(f"{where}: [submission] requires lists {len(value)} requirements; at most "
                              f"{MAX_REQUIREMENTS}")
    out: list[str] = []
    seen: set[str] = set()
    for text in value:
        shown = text[:80]
        if len(text) > MAX_REQUIREMENT_CHARS:
            raise SubmissionError(f"{where}: requirement '{shown}…' is longer than {MAX_REQUIREMENT_CHARS} characters")
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise SubmissionError(f"{where}: requirement '{shown}' is not PEP 508 "
                                  f"({' '.join(str(exc).split())[:120]})") from None
        if req.url:
            raise SubmissionError(f"{where}: requirement '{shown}' is a URL; name a version range instead "
                                  "(e.g. \"shap>=0.46,<0.47\") — the re-run installs from an index or wheelhouse")
        if any(spec.operator == "===" for spec in req.specifier) or "://" in text or "file:" in text.casefold():
            raise SubmissionError(f"{where}: requirement '{shown}' points at a file or URL, or uses arbitrary equality "
                                  "(===, which matches any string); name a version range instead (e.g. "
                                  "\"shap>=0.46,<0.47\") — the re-run installs from an index or wheelhouse")
        name = canonicalize_name(req.name)
        if name in seen:
            raise SubmissionError(f"{where}: requirement '{req.name}' is listed twice; give one version range")
        seen.add(name)
        out.append(str(req))
    return out


def applies(req: Requirement, extras: Iterable[str] = ("",)) -> bool:
    """Whether `req`'s marker holds on this machine (for one of `extras`; "" = no extra)."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": e}) for e in extras)  # merged into this machine's environment


@lru_cache(maxsize=8)
def _installed(paths: tuple[str, ...]) -> dict[str, md.Distribution]:
    """canonical name → the first distribution of that name on `paths` (as the import system finds it)."""
    out: dict[str, md.Distribution] = {}
    for dist in md.distributions(path=list(paths)):
        out.setdefault(canonicalize_name(dist.metadata["Name"] or ""), dist)
    return out


def _distribution(name: str, paths: tuple[str, ...]) -> md.Distribution | None:
    """The installed distribution `name` on `paths`, or None."""
    return _installed(paths).get(canonicalize_name(name))


def _closure(roots: Iterable[Requirement], paths: tuple[str, ...]) -> dict[str, md.Distribution]:
    """canonical name → installed distribution for `roots` and everything they require (markers evaluated,
    extras followed); requirements not installed are left out."""
    found: dict[str, md.Distribution] = {}
    todo = [(r, tuple(r.extras) or ("",)) for r in roots if applies(r)]
    while todo:
        req, extras = todo.pop()
        name = canonicalize_name(req.name)
        if name in found:
            continue
        dist = _distribution(name, paths)
        if dist is None:
            continue
        found[name] = dist
        for text in dist.requires or []:
            try:
                sub = Requirement(text)
            except InvalidRequirement:
                continue
            if applies(sub, ("", *extras)):
                todo.append((sub, tuple(sub.extras) or ("",)))
    return found


@lru_cache(maxsize=1)
def harness_packages() -> dict[str, str]:
    """canonical name → installed version of every harness package (module docstring)."""
    paths = tuple(sys.path)
    root = _distribution(HARNESS_DISTRIBUTION, paths)
    if root is None:  # a source tree that is not installed: everything installed is the harness's
        return {name: dist.version for name, dist in _installed(paths).items()}
    closure = _closure([Requirement(HARNESS_DISTRIBUTION)], paths)
    return {name: dist.version for name, dist in closure.items()}


@lru_cache(maxsize=4)
def _top_level(paths: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """canonical distribution name → its top-level import names, for the distributions on `paths`."""
    out: dict[str, set[str]] = {}
    for name, dist in _installed(paths).items():
        tops = (dist.read_text("top_level.txt") or "").split()
        if not tops:
            tops = [f.parts[0].removesuffix(".py") for f in dist.files or []
                    if len(f.parts) > 1 or f.suffix == ".py"]
        tops = [t for t in tops if t.isidentifier()]
        out.setdefault(name, set()).update(tops)
    return {k: frozenset(v) for k, v in out.items()}


def _paths(environment: Path | None) -> tuple[str, ...]:
    return ((str(environment),) if environment is not None else ()) + tuple(sys.path)


def harness_modules() -> frozenset[str]:
    """Top-level module names a submission's own module may not take: the standard library's, the harness's
    own packages and its packages' modules."""
    tops = _top_level(tuple(sys.path))
    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | PUBLIC_PACKAGES | PRIVATE_PACKAGES
    for name in harness_packages():
        names |= tops.get(name, frozenset())
    return frozenset(names)


def requirement_closure(requires: Iterable[str], environment: Path | None = None) -> dict[str, md.Distribution]:
    """canonical name → distribution of the requirements' closure as installed (the environment's own
    packages first, then the harness's), the harness's packages included."""
    return _closure([Requirement(r) for r in requires], _paths(environment))


def requirement_modules(requires: Iterable[str], environment: Path | None = None) -> frozenset[str]:
    """The top-level modules the requirements' closure installs (as installed; the harness's packages' too)."""
    tops = _top_level(_paths(environment))
    return frozenset(t for name in requirement_closure(requires, environment) for t in tops.get(name, frozenset()))


def allowed_modules(requires: Iterable[str], environment: Path | None = None) -> frozenset[str]:
    """The top-level names a submission's modules may import besides the standard library and their own
    (module docstring): the harness's public packages and every top-level module of the harness's packages
    and of the requirements' closure."""
    requires = tuple(requires)
    tops = _top_level(_paths(environment))
    names = set(PUBLIC_PACKAGES) | set(sys.stdlib_module_names) | set(sys.builtin_module_names) | {"__future__"}
    for name in set(harness_packages()) | set(requirement_closure(requires, environment)):
        names |= tops.get(name, frozenset())
    return frozenset(names - PRIVATE_PACKAGES)


def replaces_harness(req: Requirement) -> str | None:
    """Why `req` would replace a harness package (its name is one and the installed version is outside its
    range), or None."""
    name = canonicalize_name(req.name)
    installed = harness_packages().get(name)
    if installed is None or not applies(req):
        return None
    if req.specifier.contains(installed, prereleases=True):
        return None
    return (f"'{req}' would replace the harness's {req.name} {installed} (a submission runs with the harness's "
            f"own packages, which it may not replace); accept {req.name} {installed} in requires")


def import_names(requires: Iterable[str]) -> frozenset[str]:
    """The top-level module names the requirements' distributions go by (`shap`, `scikit_learn` for
    scikit-learn): what a submission's own module may not shadow, even where a requirement is not installed."""
    return frozenset(canonicalize_name(Requirement(r).name).replace("-", "_") for r in requires)


def never_runs(requires: Iterable[str]) -> str | None:
    """Why a re-run can never install `requires` here — the first requirement that would replace a harness
    package (`replaces_harness`) — or None. Pure: nothing is installed or downloaded."""
    for text in requires:
        why = replaces_harness(Requirement(text))
        if why:
            return why
    return None


def check_installed(name: str, requires: Iterable[str], environment: Path | None = None) -> None:
    """Every requirement of submission `name` that applies here is installed at a version it accepts (in
    `environment` first, then the harness's packages); else `SubmissionError` naming the first one that is
    missing, at the wrong version or would replace a harness package, and how to install it."""
    paths = _paths(environment)
    for text in requires:
        req = Requirement(text)
        if not applies(req):
            continue
        why = replaces_harness(req)
        if why:
            raise SubmissionError(f"{name} requires {why}")
        dist = _distribution(req.name, paths)
        fix = f"install it with: pip install '{req}'"
        if dist is None:
            raise SubmissionError(f"{name} requires '{req}', and {req.name} is not installed; {fix}")
        if not req.specifier.contains(dist.version, prereleases=True):
            raise SubmissionError(f"{name} requires '{req}', and {req.name} {dist.version} is installed; {fix}")


def resolved_versions(requires: Iterable[str], environment: Path | None = None) -> dict[str, str]:
    """canonical name → installed version of the requirements' closure outside the harness's packages: what a
    Result records and a re-run pins."""
    harness = harness_packages()
    return {name: dist.version for name, dist in sorted(requirement_closure(requires, environment).items())
            if name not in harness}


def parse_pins(value: object, limit: int = 256) -> dict[str, str]:
    """A Result's recorded `requirements` (canonical name → exact version) checked strictly; `ValueError`
    naming what is wrong."""
    if not isinstance(value, dict) or len(value) > limit:
        raise ValueError(f"must be an object of at most {limit} name → version pairs")
    out: dict[str, str] = {}
    for name, version in value.items():
        if not isinstance(name, str) or not isinstance(version, str) or canonicalize_name(name) != name:
            raise ValueError(f"{str(name)[:60]!r}: names must be canonical distribution names, versions strings")
        try:
            Version(version)
        except InvalidVersion:
            raise ValueError(f"{name}: {version[:60]!r} is not a PEP 440 version") from None
        out[name] = version
    return out
