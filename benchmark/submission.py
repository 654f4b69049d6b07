"""Submissions: a folder with `submission.toml` and one module (DESIGN §4).

    [submission]
    name = "integrated-gradients"        # unique; lower-case, digits, '-'
    version = "1.0.0"
    kind = "explainer"                   # or "oracle"
    entry = "explainer:IntegratedGradients"   # <module in the folder>:<class>
    description = "Captum IntegratedGradients, baseline = black image"
    reference = "Sundararajan et al. 2017, Axiomatic Attribution …, https://arxiv.org/abs/1703.01365"
                                         # the method's paper (optional; every built-in that is not a
                                         # control has one — tests/test_metadata.py)
    authors = ["A. Author <a@example.org>"]  # who wrote it, license and a link to its code: optional here,
    license = "MIT"                      # required by `xaibench submit` (the results repository's
    code = "https://example.org/repo"    # submission.json, docs/submitting.md)
    role = "method"                      # method (ranked) | control (a floor: random, constant, …) |
                                         # reference (a ceiling allowed to read more; never ranked)

    [capabilities]
    modalities = ["image"]               # "image" and/or "text"
    needs_gradients = true               # needs model.module (white box)
    needs_segments = false               # needs batch.segments (object-level methods)
    deterministic = true                 # same seed -> same output

    [parameters]                         # defaults, passed to the class constructor;
    n_steps = 50                         # overridable with `--param key=value`

Submissions are found in the entry-point group `xaibench.submissions` (an entry that is a package is
scanned for sub-folders holding a `submission.toml`; the built-ins come this way) or by path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.errors import ParameterError, RegistryError, SubmissionError
from benchmark.registry import iter_entry_points

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
KINDS = ("explainer", "oracle")
# What a submission is on a board: a `method` is ranked; a `control` is a floor (a random or constant
# answer that reads nothing of what matters) shown as a marked row; a `reference` is a ceiling allowed
# to read what methods may not (e.g. training rationales), shown as a marked row and never ranked.
ROLES = ("method", "control", "reference")
MODALITIES = ("image", "text")
CAPABILITY_FIELDS = {"modalities": list, "needs_gradients": bool, "needs_segments": bool, "deterministic": bool}


@dataclass
class Submission:
    """A submission folder as its `submission.toml` describes it (docs/submissions.md): name, version,
    kind (explainer or oracle), entry `<module>:<Class>`, capabilities, parameters and content hash."""

    name: str
    version: str
    kind: str
    entry: str
    path: Path
    description: str = ""
    modalities: list[str] = field(default_factory=lambda: ["image"])
    needs_gradients: bool = False
    needs_segments: bool = False
    deterministic: bool = True
    parameters: dict[str, Any] = field(default_factory=dict)
    role: str = "method"  # one of ROLES
    reference: str = ""  # the paper of the method (authors, year, title, link); optional
    authors: list[str] = field(default_factory=list)  # optional; `xaibench submit` needs them
    license: str = ""  # the code's licence (an SPDX id such as MIT); `xaibench submit` needs it
    code: str = ""  # where the code lives (a link); optional

    def hashed_files(self) -> list[Path]:
        """The files `hash` covers besides the harness's own library modules, in hash order: the folder's
        source files (toml + .py) and, when the folder sits in a Python package, the package modules those
        files import (transitively). Each is hashed under its path relative to the folder's parent."""
        files = [p for p in sorted(self.path.rglob("*")) if p.is_file() and p.suffix in (".py", ".toml")
                 and "__pycache__" not in p.parts]
        if (self.path.parent / "__init__.py").exists():
            files += _package_imports(self.path.parent, [p for p in files if p.suffix == ".py"])
        return files

    @property
    def hash(self) -> str:
        """sha256 over the folder's source files (toml + .py) and, when the folder sits in a Python
        package, the package modules those files import (transitively; e.g. `submissions/common.py`),
        so any change of the code a submission runs is a new cache key — and only such a change."""
        h = hashlib.sha256()
        files = self.hashed_files()
        for p in files:
            h.update(p.relative_to(self.path.parent).as_posix().encode())
            h.update(p.read_bytes())
        for p in _library_imports([p for p in files if p.suffix == ".py"]):  # e.g. benchmark/toki/core.py
            h.update(p.relative_to(_LIBRARY_ROOT).as_posix().encode())
            h.update(p.read_bytes())
        return h.hexdigest()[:16]

    def supports(self, modality: str, white_box: bool, has_segments: bool) -> str | None:
        """None if the submission can run on such a model, else the reason it cannot."""
        if modality not in self.modalities:
            return f"{self.name} does not handle {modality} inputs"
        if self.needs_gradients and not white_box:
            return f"{self.name} needs gradients and the model is a black box"
        if self.needs_segments and not has_segments:
            return f"{self.name} needs an object segmentation the track does not provide"
        return None

    def module_file(self) -> Path:
        """The entry module's file (`<module>.py` in the folder); `SubmissionError` when the entry is not
        `<module>:<Class>` or the file is missing."""
        module_name, _, class_name = self.entry.partition(":")
        file = self.path / f"{module_name}.py"
        if not file.exists() or not class_name:
            raise SubmissionError(
                f"{self.path}/submission.toml: entry '{self.entry}' must be '<module>:<Class>' with "
                f"<module>.py in the folder"
            )
        return file

    def precheck(self) -> None:
        """The entry module exists and compiles — checked in the harness without running any of it
        (a syntax error is named with its real path before anything else happens)."""
        file = self.module_file()
        try:
            compile(file.read_bytes(), str(file), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            raise SubmissionError(f"{file} failed to import ({type(exc).__name__}: {exc}); fix the module") from None
        except (OSError, RecursionError, MemoryError) as exc:
            raise SubmissionError(f"{file} cannot be read or compiled ({type(exc).__name__}); fix the module") from None

    def check_parameters(self, overrides: dict[str, Any]) -> None:
        """Refuse parameter overrides the submission does not declare (before anything runs)."""
        unknown = set(overrides) - set(self.parameters)
        if unknown:
            raise SubmissionError(
                f"{self.name} has no parameter(s) {', '.join(sorted(unknown))}; known: "
                f"{', '.join(sorted(self.parameters)) or 'none'}"
            )

    def instantiate(self, overrides: dict[str, Any] | None = None) -> Any:
        """Import the entry class from the folder and construct it with the parameters."""
        file = self.module_file()
        class_name = self.entry.partition(":")[2]
        mod_key = f"xaibench_submission_{self.name.replace('-', '_')}_{self.hash}"
        if mod_key not in sys.modules:
            spec = importlib.util.spec_from_file_location(mod_key, file)
            if spec is None or spec.loader is None:
                raise SubmissionError(f"{file} cannot be imported: Python finds no module loader for it; "
                                      "name a .py module in entry (submission.toml)")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_key] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[mod_key]
                raise SubmissionError(f"{file} failed to import ({type(exc).__name__}: {exc}); fix the module") from exc
        cls = getattr(sys.modules[mod_key], class_name, None)
        if cls is None:
            raise SubmissionError(f"{file} has no class '{class_name}' (named by entry in submission.toml)")
        params = {**self.parameters, **(overrides or {})}
        self.check_parameters(overrides or {})
        accepted = accepted_parameters(cls)
        refused = sorted(set(params) - accepted) if accepted is not None else []
        if refused and accepted is not None:
            raise ParameterError(
                f"{self.name}: [parameters] key(s) {', '.join(refused)} not accepted by {class_name}(); "
                f"accepted: {', '.join(sorted(accepted)) or 'none'}"
            )
        try:
            obj = cls(**params)
        except TypeError as exc:
            raise SubmissionError(f"{self.name}: {class_name}(**parameters) failed ({exc}); "
                                  "check [parameters]") from exc
        method = "explain" if self.kind == "explainer" else "judge"
        if not callable(getattr(obj, method, None)):
            raise SubmissionError(f"{self.name}: {class_name} has no {method}() method required of an {self.kind}")
        return obj


def accepted_parameters(cls: type) -> set[str] | None:
    """The keyword names `cls(...)` accepts, or None when it accepts any keyword.

    Walks the MRO the way a constructor hands `**kwargs` on: the named parameters of each `__init__`
    count; one without `**kwargs` ends the walk; one whose `**kwargs` goes into a call (e.g.
    `super().__init__(**kw)`) passes it on to the next base's `__init__`; one that keeps its `**kwargs`
    to itself (or whose source cannot be read) accepts anything. Reaching `object` accepts no more."""
    import inspect

    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass is object:
            return names
        try:
            sig = inspect.signature(init)
        except (TypeError, ValueError):  # a builtin without a signature: cannot tell
            return None
        params = list(sig.parameters.values())[1:]  # without self
        names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        var_kw = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
        if var_kw is None:
            return names
        if not _passes_on(init, var_kw):
            return None
    return names


def _passes_on(func: Any, var_kw: str) -> bool:
    """Whether `func`'s body splats its `**var_kw` into a call (read with `ast`; False if unreadable)."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Call) and any(k.arg is None and isinstance(k.value, ast.Name)
                                                  and k.value.id == var_kw for k in node.keywords)
               for node in ast.walk(tree))


def _imports_closure(sources: list[Path], resolve) -> list[Path]:
    """The files `sources` import, transitively, in sorted order: every absolute import's module name is
    handed to `resolve(name) -> [files]` (files that do not exist are ignored). Read with `ast`; nothing
    is executed; an unparsable source imports nothing here."""
    import ast

    found: set[Path] = set()
    todo = list(sources)
    while todo:
        try:
            tree = ast.parse(todo.pop().read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for mod in mods:
                for file in resolve(mod):
                    if file.is_file() and file not in found:
                        found.add(file)
                        todo.append(file)
    return sorted(found)


def _package_imports(package: Path, sources: list[Path]) -> list[Path]:
    """The modules of `package` (a folder with __init__.py) that `sources` import, transitively."""
    def resolve(mod: str) -> list[Path]:
        parts = mod.split(".")
        return [package / f"{parts[1]}.py"] if parts[0] == package.name and len(parts) > 1 else []

    return _imports_closure(sources, resolve)


# harness packages that hold algorithms built-in submissions wrap (DESIGN §8: library code below the
# submissions); a submission's hash covers the modules of these it imports, so changed library code is a
# new cache key for exactly the submissions that run it
LIBRARY_PACKAGES = ("benchmark.toki",)
_LIBRARY_ROOT = Path(__file__).resolve().parent.parent


def _library_imports(sources: list[Path]) -> list[Path]:
    """The modules of `LIBRARY_PACKAGES` that `sources` import, transitively (their package `__init__`
    included)."""
    def resolve(mod: str) -> list[Path]:
        lib = next((p for p in LIBRARY_PACKAGES if mod == p or mod.startswith(p + ".")), None)
        if lib is None:
            return []
        folder = _LIBRARY_ROOT.joinpath(*lib.split("."))
        rest = mod[len(lib):].lstrip(".").split(".") if mod != lib else []
        return [folder / "__init__.py", *([folder.joinpath(*rest).with_suffix(".py")] if rest else [])]

    return _imports_closure(sources, resolve)


def _fail(path: Path, msg: str) -> SubmissionError:
    return SubmissionError(f"{path}: {msg}")


def load_submission(path: str | Path) -> Submission:
    """Parse and validate a submission folder; every problem names the field and the fix."""
    path = Path(path)
    toml = path / "submission.toml" if path.is_dir() else path
    if not toml.exists():
        raise SubmissionError(f"{path}: no submission.toml; a submission is a folder with submission.toml + a module")
    try:
        data = tomllib.loads(toml.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:  # garbled bytes are not TOML either
        raise _fail(toml, f"is not valid TOML ({exc})") from exc
    except OSError as exc:
        raise _fail(toml, f"cannot be read ({exc})") from exc
    sub = data.get("submission")
    if not isinstance(sub, dict):
        raise _fail(toml, "missing [submission] table with name, version, kind, entry")
    for key in ("name", "version", "kind", "entry"):
        if not isinstance(sub.get(key), str) or not sub[key]:
            raise _fail(toml, f"[submission] field '{key}' is missing or not a string")
    if not NAME_RE.match(sub["name"]):
        raise _fail(toml, f"name '{sub['name']}' must be lower-case letters, digits and '-'")
    if sub["kind"] not in KINDS:
        raise _fail(toml, f"kind '{sub['kind']}' must be one of {', '.join(KINDS)}")
    role = sub.get("role", "method")
    if role not in ROLES:
        raise _fail(toml, f"[submission] role '{role}' is unknown; accepted: {', '.join(ROLES)}")
    reference = sub.get("reference", "")
    if not isinstance(reference, str):
        raise _fail(toml, "[submission] field 'reference' must be a string (authors, year, title, link)")
    authors = sub.get("authors", [])
    if not isinstance(authors, list) or not all(isinstance(a, str) and a.strip() for a in authors):
        raise _fail(toml, "[submission] field 'authors' must be a list of names, e.g. [\"A. Author <a@example.org>\"]")
    for key in ("license", "code"):
        if not isinstance(sub.get(key, ""), str):
            raise _fail(toml, f"[submission] field '{key}' must be a string")
    caps = data.get("capabilities", {})
    if not isinstance(caps, dict):
        raise _fail(toml, "[capabilities] must be a table")
    for key, typ in CAPABILITY_FIELDS.items():
        if key in caps and not isinstance(caps[key], typ):
            raise _fail(toml, f"[capabilities] field '{key}' must be a {typ.__name__}")
    unknown = set(caps) - set(CAPABILITY_FIELDS)
    if unknown:
        raise _fail(toml, f"[capabilities] has unknown field(s) {', '.join(sorted(unknown))}")
    modalities = caps.get("modalities", ["image"])
    if not modalities or any(m not in MODALITIES for m in modalities):
        raise _fail(toml, f"[capabilities] modalities must be a non-empty subset of {list(MODALITIES)}")
    params = data.get("parameters", {})
    if not isinstance(params, dict):
        raise _fail(toml, "[parameters] must be a table")
    return Submission(
        name=sub["name"], version=sub["version"], kind=sub["kind"], entry=sub["entry"], path=toml.parent,
        description=sub.get("description", ""), modalities=list(modalities),
        needs_gradients=caps.get("needs_gradients", False), needs_segments=caps.get("needs_segments", False),
        deterministic=caps.get("deterministic", True), parameters=params, role=role,
        reference=reference.strip(), authors=[a.strip() for a in authors], license=sub.get("license", "").strip(),
        code=sub.get("code", "").strip(),
    )


# the entry of the `xaibench.submissions` group that names the built-in submissions package (pyproject.toml)
BUILTIN_ENTRY = "builtin"


def builtin_folders() -> list[Path]:
    """The folders of the built-in submissions package — the package the `builtin` entry point of
    `xaibench.submissions` names — located without importing it (DESIGN §3: the harness never imports
    `submissions`); [] when no such entry point is installed."""
    import importlib.util

    for ep in iter_entry_points("xaibench.submissions"):
        if ep.name != BUILTIN_ENTRY:
            continue
        try:
            spec = importlib.util.find_spec(ep.value.partition(":")[0])
        except (ImportError, ValueError):
            return []
        return sorted({Path(p).resolve() for p in (spec.submodule_search_locations or [])}) if spec else []
    return []


def is_builtin(sub: Submission) -> bool:
    """Whether `sub` is one of the built-in submissions (its folder lies in `builtin_folders()`)."""
    path = Path(sub.path).resolve()
    return any(path.is_relative_to(folder) for folder in builtin_folders())


def _scan(folder: Path) -> list[Submission]:
    return [load_submission(p.parent) for p in sorted(folder.glob("*/submission.toml"))]


def discover() -> dict[str, Submission]:
    """All submissions from the `xaibench.submissions` entry-point group (duplicate names refused)."""
    found: dict[str, Submission] = {}
    for ep in iter_entry_points("xaibench.submissions"):
        obj = ep.load()
        if hasattr(obj, "__path__"):  # a package: scan its sub-folders
            subs = [s for p in obj.__path__ for s in _scan(Path(p))]
        elif isinstance(obj, (str, Path)):
            subs = [load_submission(obj)]
        else:
            raise SubmissionError(f"entry point {ep.name}={ep.value} must name a package or a folder path")
        for s in subs:
            if s.name in found:
                raise RegistryError(f"submission '{s.name}' is registered twice ({found[s.name].path} and {s.path})")
            found[s.name] = s
    return found


def get_submission(name_or_path: str | Path) -> Submission:
    """A submission by registered name, or by folder path."""
    p = Path(name_or_path)
    if p.exists():
        return load_submission(p)
    subs = discover()
    if str(name_or_path) not in subs:
        raise RegistryError(
            f"unknown submission '{name_or_path}' (neither a folder nor a registered name); "
            f"known: {', '.join(sorted(subs)) or 'none'} — see `xaibench list`"
        )
    return subs[str(name_or_path)]
