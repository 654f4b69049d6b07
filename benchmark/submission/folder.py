"""Submissions: a folder with `submission.toml` and a Python package of modules (DESIGN §4).

    [submission]
    name = "integrated-gradients"        # unique; lower-case, digits, '-'
    version = "1.0.0"
    kind = "explainer"                   # or "oracle"
    entry = "explainer:IntegratedGradients"   # <module of the folder, dotted for a sub-package>:<class>
    requires = ["shap>=0.46,<0.47"]      # PEP 508 requirements beyond the harness's packages (optional)
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
    needs_assets = []                    # read-only assets the track must offer (e.g. ["lexicon"]); a board
                                         # whose resource has none is refused before anything runs
    data_prior = false                   # true: a control built from the data alone (a foreground mask, a
                                         # corpus lexicon), the floor of data priors on a board (issue #50)

    [parameters]                         # defaults, passed to the class constructor;
    n_steps = 50                         # overridable with `--param key=value`

    [files]                              # data the code reads: name = "path relative to the folder"
    weights = "weights.npz"

The folder is imported as a package (`benchmark.submission.importing`); its code hash covers `submission.toml`, every
module of the package (sub-packages included) and the declared `[files]` — nothing else, and nothing else is
present when it runs (`Submission.stage`). Requirements are checked against what is installed
(`benchmark.submission.requirements`).

Submissions are found in the entry-point group `xaibench.submissions` (an entry that is a package is
scanned for sub-folders holding a `submission.toml`; the built-ins come this way) or by path.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Collection

from benchmark.errors import ParameterError, RegistryError, SubmissionError
from benchmark.registry import iter_entry_points

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
KINDS = ("explainer", "oracle")
# What a submission is on a board: a `method` is ranked; a `control` is a floor (a random or constant
# answer that reads nothing of what matters) shown as a marked row; a `reference` is a ceiling allowed
# to read what methods may not (e.g. training rationales), shown as a marked row and never ranked.
ROLES = ("method", "control", "reference")
MODALITIES = ("image", "text")
CAPABILITY_FIELDS = {"modalities": list, "needs_gradients": bool, "needs_segments": bool, "deterministic": bool,
                     "needs_assets": list, "data_prior": bool}
ASSET_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # `benchmark.isolation.sandbox`'s asset names


ENTRY_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
FILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# bounds of what a submission's hash covers (also the results repository's bound on a source file)
MAX_FILE_BYTES = 4 << 20  # one module or declared data file
MAX_SOURCE_BYTES = 16 << 20  # all of them together
MAX_FILES = 512  # modules and data files together
SKIP_DIRS = ("__pycache__",)


@dataclass
class Submission:
    """A submission folder as its `submission.toml` describes it (docs/submissions.md): name, version,
    kind (explainer or oracle), entry `<module>:<Class>`, capabilities, parameters, declared data files,
    requirements and content hash."""

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
    files: dict[str, str] = field(default_factory=dict)  # [files]: name → path relative to the folder
    requires: list[str] = field(default_factory=list)  # PEP 508 requirements beyond the harness's packages
    needs_assets: list[str] = field(default_factory=list)  # read-only assets the track must offer (`supports`)
    data_prior: bool = False  # a control built from the data alone: a board's data-prior floor (issue #50)

    def modules(self) -> list[Path]:
        """The modules of the submission package, sorted: every `.py` file of the folder whose name and
        folders (sub-packages) are Python identifiers; `__pycache__` and other folders are not walked. A
        symbolic link among them is refused (its target would be code outside the folder), and so is a
        `.py` name that is not a regular file."""
        out: list[Path] = []
        for top, dirs, names in os.walk(self.path):
            here = Path(top)
            keep = []
            for d in sorted(dirs):
                if d.isidentifier() and d not in SKIP_DIRS:
                    if (here / d).is_symlink():
                        raise _fail(here / d, "is a symbolic link; copy the sub-package into the folder")
                    keep.append(d)
            dirs[:] = keep
            for n in names:
                if n.endswith(".py") and n[:-3].isidentifier():
                    if (here / n).is_symlink():
                        raise _fail(here / n, "is a symbolic link; copy the module into the folder")
                    if not (here / n).is_file():  # a pipe or a device would hang or flood the hash
                        raise _fail(here / n, "is not a regular file; a module is a .py file")
                    out.append(here / n)
        return sorted(out)

    def data_files(self) -> dict[str, Path]:
        """The declared data files (`[files]`): name → path in the folder."""
        return {k: self.path / v for k, v in self.files.items()}

    def sibling_names(self) -> frozenset[str]:
        """The top-level names of the package's modules and sub-packages (what `import <name>` may mean)."""
        return frozenset(p.relative_to(self.path).parts[0].removesuffix(".py") for p in self.modules()
                         if p.relative_to(self.path).as_posix() != "__init__.py")

    def own_files(self) -> list[Path]:
        """The folder's files the hash covers, sorted: `submission.toml`, the modules, the declared data files."""
        return sorted({self.path / "submission.toml", *self.modules(), *self.data_files().values()})

    def hashed_files(self) -> list[Path]:
        """The files `hash` covers besides the harness's own library modules, in hash order: the folder's own
        files (`own_files`) and, when the folder sits in a Python package, the package modules its modules
        import (transitively). Each is hashed under its path relative to the folder's parent."""
        files = self.own_files()
        if (self.path.parent / "__init__.py").exists():
            files += _package_imports(self.path.parent, [p for p in files if p.suffix == ".py"])
        return files

    @property
    def hash(self) -> str:
        """sha256 over `hashed_files()` (path and bytes of each) and the harness library modules its modules
        import (`LIBRARY_PACKAGES`), so any change of the code or data a submission runs is a new cache key —
        and only such a change."""
        h = hashlib.sha256()
        files = self.hashed_files()
        for p in files:
            h.update(p.relative_to(self.path.parent).as_posix().encode())
            h.update(p.read_bytes())
        for p in _library_imports([p for p in files if p.suffix == ".py"]):  # e.g. benchmark/toki/core.py
            h.update(p.relative_to(_LIBRARY_ROOT).as_posix().encode())
            h.update(p.read_bytes())
        return h.hexdigest()[:16]

    def stage(self, dest: Path) -> Path:
        """Copy exactly the folder's hashed files (`own_files`) to `dest/<folder name>/`, read-only, and
        return that folder: what the submission's code runs from everywhere (undeclared files are absent)."""
        folder = Path(dest) / self.path.name
        try:
            for src in self.own_files():
                target = folder / src.relative_to(self.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target, follow_symlinks=False)
                target.chmod(0o444)
            for d in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
                d.chmod(0o755)
        except OSError as exc:
            raise SubmissionError(f"{self.path}: cannot copy its files to run them ({exc}); check the folder") from None
        return folder

    def supports(self, modality: str, white_box: bool, has_segments: bool,
                 assets: Collection[str] = ()) -> str | None:
        """None if the submission can run on such a model, else the reason it cannot. `assets`: the names of
        the read-only assets the track offers for the resource (`Track.assets`); none by default."""
        if modality not in self.modalities:
            return f"{self.name} does not handle {modality} inputs"
        if self.needs_gradients and not white_box:
            return f"{self.name} needs gradients and the model is a black box"
        if self.needs_segments and not has_segments:
            return f"{self.name} needs an object segmentation the track does not provide"
        missing = sorted(set(self.needs_assets) - set(assets))
        if missing:
            return (f"{self.name} needs the '{missing[0]}' asset, which this board does not offer (a resource "
                    "built before the asset existed has none: regenerate it with `xaibench generate`)")
        return None

    def module_file(self) -> Path:
        """The entry module's file (`<module>.py`, or `<module>/__init__.py` for a sub-package, dotted names
        through sub-packages); `SubmissionError` when the entry is malformed or the file is missing."""
        module_name = self.entry.partition(":")[0]
        base = self.path.joinpath(*module_name.split("."))
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if ENTRY_RE.match(self.entry) and file in self.modules():
                return file
        raise SubmissionError(
            f"{self.path}/submission.toml: entry '{self.entry}' must be '<module>:<Class>' naming a module of the "
            f"folder ({module_name.replace('.', '/')}.py is not there)"
        )

    def precheck(self) -> None:
        """What the harness checks without running any of the submission (`check`, `evaluate`, and `results
        validate` / `verify` before any re-run): the entry module exists, every module compiles (a syntax error
        is named with its real path before anything else happens), no requirement would replace a harness
        package (`benchmark.submission.requirements.never_runs`), and no module takes the name of a harness module
        (`benchmark.submission.requirements.harness_modules`), of a requirement (`import_names`) or of a module its
        requirements install here."""
        from benchmark.submission.requirements import harness_modules, import_names, never_runs, requirement_modules

        self.module_file()
        for file in self.modules():
            try:
                compile(file.read_bytes(), str(file), "exec", dont_inherit=True)
            except (SyntaxError, ValueError) as exc:
                raise SubmissionError(f"{file} failed to import ({type(exc).__name__}: {exc}); fix the "
                                      "module") from None
            except (OSError, RecursionError, MemoryError) as exc:
                raise SubmissionError(f"{file} cannot be read or compiled ({type(exc).__name__}); fix the "
                                      "module") from None
        clash = sorted(self.sibling_names() & harness_modules())
        if clash:
            raise SubmissionError(f"{self.path}: module '{clash[0]}' has the name of a module the harness uses "
                                  f"(the standard library's, xaibench's or one of its packages'); rename it")
        why = never_runs(self.requires)
        if why:
            raise SubmissionError(f"{self.name} requires {why}")
        clash = sorted(self.sibling_names() & (requirement_modules(self.requires) | import_names(self.requires)))
        if clash:
            raise SubmissionError(f"{self.path}: module '{clash[0]}' has the name of a module its requirements "
                                  "install; rename it")

    def check_parameters(self, overrides: dict[str, Any]) -> None:
        """Refuse parameter overrides the submission does not declare (before anything runs)."""
        unknown = set(overrides) - set(self.parameters)
        if unknown:
            raise SubmissionError(
                f"{self.name} has no parameter(s) {', '.join(sorted(unknown))}; known: "
                f"{', '.join(sorted(self.parameters)) or 'none'}"
            )

    def instantiate(self, overrides: dict[str, Any] | None = None, *, staged: bool = False,
                    package: str | None = None, allowed: frozenset[str] | None = None) -> Any:
        """Import the entry class and construct it with the parameters.

        The package is imported from a copy of exactly its hashed files (`stage`, in a folder of this
        process), or — `staged` — from this folder, which is such a copy already (the worker's). `package`:
        the name it is imported under (default `benchmark.submission.importing.package_name`); `allowed`: the top-level
        names its modules may import besides their own (default: `benchmark.submission.requirements.allowed_modules` of
        its requirements)."""
        from benchmark.submission import importing

        module_name, _, class_name = self.entry.partition(":")
        package = package or importing.package_name(self.name, self.hash)
        folder = self.path if staged else _staged_copy(self, package)
        sub = self if staged else replace(self, path=folder)
        file = sub.module_file()
        if allowed is None:
            from benchmark.submission.requirements import allowed_modules

            allowed = allowed_modules(self.requires)
        shown = self.path / file.relative_to(folder)  # the author's file, not the staged copy
        try:
            importing.import_package(folder, package, sub.sibling_names(), allowed, sub.data_files())
            module = importing.import_entry(package, module_name)
        except Exception as exc:
            importing.forget(package)
            why = f"{type(exc).__name__}: {exc}".replace(str(folder), str(self.path))
            raise SubmissionError(self.undeclared(f"{shown} failed to import ({why}){_cycle_hint(sub, exc)}; "
                                                  "fix the module")) from exc
        cls = getattr(module, class_name, None)
        if cls is None:
            raise SubmissionError(f"{shown} has no class '{class_name}' (named by entry in submission.toml)")
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

    def undeclared(self, message: str) -> str:
        """`message` (a failure seen while the submission ran from its staged copy, the copy's paths already
        replaced by the folder's), with the fix when it names a file of the folder that `[files]` does not
        declare: such a file is absent at run time."""
        for m in re.finditer(r"No such file or directory: '([^']+)'", message):
            path = Path(m.group(1))
            try:
                rel = path.relative_to(self.path)
            except ValueError:
                continue
            if (self.path / rel).is_file() and self.path / rel not in self.own_files():
                key = re.sub(r"[^A-Za-z0-9_.-]", "_", rel.stem)[:64] or "data"
                return (f"{self.name} reads {rel.as_posix()}, which submission.toml does not declare: add "
                        f"{key} = \"{rel.as_posix()}\" under [files] (only declared files are present when it runs)")
        return message


_stage_root: Path | None = None


def _staged_copy(sub: Submission, package: str) -> Path:
    """This process's staged copy of `sub` (made once per package name, removed at exit)."""
    global _stage_root
    if _stage_root is None:
        import atexit
        import tempfile

        _stage_root = Path(tempfile.mkdtemp(prefix="xaibench-submissions-"))
        atexit.register(shutil.rmtree, _stage_root, True)
    folder = _stage_root / package / sub.path.name
    if not folder.is_dir():
        tmp = _stage_root / f".{package}-{os.getpid()}-{threading.get_ident()}"
        shutil.rmtree(tmp, ignore_errors=True)
        sub.stage(tmp)
        try:
            os.rename(tmp, _stage_root / package)
        except OSError:  # another thread staged it first
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _cycle_hint(sub: Submission, exc: BaseException) -> str:
    """" (an import cycle: a → b → a)" when `exc` is Python's error for a partially initialised module and
    the package's module-level imports hold a cycle, else ""."""
    if "partially initialized module" not in str(exc):
        return ""
    cycle = import_cycle(sub)
    return f" — its modules import each other in a cycle ({' → '.join(cycle)}); import inside a function or " \
           "move the shared names to a module of their own" if cycle else ""


def import_cycle(sub: Submission) -> list[str]:
    """A cycle among the package's module-level imports (module names, the first repeated at the end), or
    [] (read with `ast`; imports inside functions do not count: they run later)."""
    import ast

    files: dict[str, Path] = {}
    for p in sub.modules():
        parts = list(p.relative_to(sub.path).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p  # "" is the package itself
    siblings = sub.sibling_names()

    def join(*parts: str) -> str:
        return ".".join(p for p in parts if p)

    def targets(name: str, file: Path) -> set[str]:
        try:
            tree = ast.parse(file.read_bytes())
        except (SyntaxError, ValueError, OSError):
            return set()
        here = name.split(".") if name else []
        if file.name != "__init__.py":
            here = here[:-1]
        out = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names if a.name.partition(".")[0] in siblings]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    stem = join(*here[: len(here) - node.level + 1], node.module or "")
                elif (node.module or "").partition(".")[0] in siblings:
                    stem = node.module or ""
                else:
                    continue
                mods = [stem] + [join(stem, a.name) for a in node.names]
            else:
                continue
            out |= {m for m in mods if m in files and m != name}
        return out

    graph = {name: targets(name, file) for name, file in files.items()}
    label = {name: name or "__init__" for name in files}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [label[n] for n in stack[stack.index(nxt):] + [nxt]]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


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
_LIBRARY_ROOT = Path(__file__).resolve().parents[2]  # the folder holding `benchmark/`


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
    needs_assets = caps.get("needs_assets", [])
    if not all(isinstance(a, str) and ASSET_NAME_RE.match(a) for a in needs_assets):
        raise _fail(toml, "[capabilities] needs_assets must be a list of asset names (1–64 letters, digits, '_', "
                    "'.', '-'), e.g. [\"lexicon\"]")
    params = data.get("parameters", {})
    if not isinstance(params, dict):
        raise _fail(toml, "[parameters] must be a table")
    if not ENTRY_RE.match(sub["entry"]):
        raise _fail(toml, f"entry '{sub['entry'][:80]}' must be '<module>:<Class>' (a dotted module of the folder, "
                    "e.g. \"explainer:MyExplainer\" or \"method.core:MyExplainer\")")
    from benchmark.submission.requirements import parse_requires

    out = Submission(
        name=sub["name"], version=sub["version"], kind=sub["kind"], entry=sub["entry"], path=toml.parent,
        description=sub.get("description", ""), modalities=list(modalities),
        needs_gradients=caps.get("needs_gradients", False), needs_segments=caps.get("needs_segments", False),
        deterministic=caps.get("deterministic", True), needs_assets=sorted(set(needs_assets)),
        data_prior=caps.get("data_prior", False), parameters=params, role=role,
        reference=reference.strip(), authors=[a.strip() for a in authors], license=sub.get("license", "").strip(),
        code=sub.get("code", "").strip(), files=_declared_files(data.get("files", {}), toml),
        requires=parse_requires(sub.get("requires", []), str(toml)),
    )
    _check_sizes(out, toml)
    return out


# what a data file may never be (`code_like`): Python source, bytecode, a compiled extension, a path configuration
CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".so", ".pyd", ".pth")


def code_like(rel: str) -> str:
    """Why the path `rel` (relative, '/' between folders) names code rather than data — "" when it does not: a
    file under a `__pycache__` folder, or one whose name ends in `CODE_SUFFIXES` (case folded: `.PYC` too)."""
    parts = rel.split("/")
    if "__pycache__" in (p.casefold() for p in parts[:-1]):
        return "under __pycache__ (bytecode)"
    suffix = next((s for s in CODE_SUFFIXES if parts[-1].casefold().endswith(s)), "")
    return {".py": "a Python module", ".pth": "a path configuration file (.pth)"}.get(
        suffix, f"compiled code ({suffix})" if suffix else "")


def _declared_files(table: object, toml: Path) -> dict[str, str]:
    """`[files]` checked: `name = "relative/path"` per data file, each a regular file inside the folder
    (no `..`, no absolute path, no symbolic link on the way), never code (`code_like`), at most `MAX_FILE_BYTES`."""
    if not isinstance(table, dict):
        raise _fail(toml, "[files] must be a table of name = \"relative/path\"")
    folder = toml.parent
    out: dict[str, str] = {}
    for name, rel in table.items():
        if not FILE_NAME_RE.match(name):
            raise _fail(toml, f"[files] name '{name[:80]}' must be 1–64 letters, digits, '_', '.', '-'")
        parts = rel.split("/") if isinstance(rel, str) else []
        if (not parts or len(rel) > 255 or rel.startswith("/") or "\\" in rel
                or any(p in ("", ".", "..") or not p.isprintable() for p in parts)):
            raise _fail(toml, f"[files] {name} must be a relative path inside the folder with '/' between "
                        f"folders, e.g. \"data/weights.npz\" (got {str(rel)[:80]!r})")
        path = folder / rel
        for i in range(1, len(parts) + 1):
            if folder.joinpath(*parts[:i]).is_symlink():
                raise _fail(toml, f"[files] {name}: {'/'.join(parts[:i])} is a symbolic link; copy the data into "
                            "the folder")
        if rel == "submission.toml":
            raise _fail(toml, f"[files] {name}: submission.toml is always included; declare data files only")
        code = code_like(rel)
        if code:
            raise _fail(toml, f"[files] {name}: {rel} is {code}, not data (a data file is never .py, .pyc, .pyo, .so, "
                        ".pyd or .pth, nor under __pycache__: modules are the package's .py files, and nothing "
                        "compiled is ever loaded); declare data files only")
        if not path.is_file():
            raise _fail(toml, f"[files] {name}: {rel} is not a file in the folder")
        if rel in out.values():
            raise _fail(toml, f"[files] {name}: {rel} is declared twice")
        out[name] = rel
    return out


def _check_sizes(sub: Submission, toml: Path) -> None:
    """The hashed files within `MAX_FILES`, `MAX_FILE_BYTES` each and `MAX_SOURCE_BYTES` together."""
    files = sub.own_files()
    if len(files) > MAX_FILES:
        raise _fail(toml, f"the submission has {len(files)} modules and data files; at most {MAX_FILES}")
    total = 0
    for f in files:
        size = f.stat().st_size
        total += size
        if size > MAX_FILE_BYTES:
            raise _fail(f, f"is {size:,} bytes; a module or data file may have at most {MAX_FILE_BYTES:,} "
                        "(keep large weights out of the submission, e.g. train them in $XAIBENCH_SCRATCH)")
    if total > MAX_SOURCE_BYTES:
        raise _fail(toml, f"the modules and data files hold {total:,} bytes; at most {MAX_SOURCE_BYTES:,} together")


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


def builtins() -> dict[str, Submission]:
    """The built-in submissions by name, read from `builtin_folders()` without importing the package ({} when none
    is installed). What the boards recognise as a built-in is its code (`Submission.hash`), never a name alone
    (`leaderboard.floors`, issue #58)."""
    out: dict[str, Submission] = {}
    for folder in builtin_folders():
        for s in _scan(folder):
            out.setdefault(s.name, s)
    return out


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
