"""How a submission folder is imported: as a Python package under a name of its own (docs/submissions.md).

* The folder is the package `xaibench_submission_<name>_<code hash>` (its `__init__.py`, if any, runs
  first); the entry `module.sub:Class` is the attribute `Class` of `<package>.module.sub`. Sibling modules,
  sub-packages and relative imports (`from .lexicon import WEIGHTS`) work as in any package.
* A module may also import a sibling by its top-level name in the folder, as a script would (`from lexicon
  import WEIGHTS`): every module of the package runs with an `__import__` of its own (`_Importer`) that maps
  such a name to the package's module. One module object per file; nothing is entered in `sys.modules`
  under a bare name, so two submissions that each have a `lexicon.py` never meet, and no code outside the
  folder (the harness, a library) can import a submission's module by accident.
* The same `__import__` refuses a top-level name outside the allowed set
  (`benchmark.submission.requirements.allowed_modules`: the standard library, the harness's public packages, the
  harness's packages and the declared requirements): the line names the module and the fix. It governs
  the submission's `import` statements — a rule that keeps a submission reproducible; what keeps ground
  truth out of reach is the sandbox (`benchmark.isolation`).
* Only `.py` files are modules, always compiled from their source (`_Loader.get_code`): a compiled extension,
  or a `.pyc` beside them or in `__pycache__` (even one whose header matches the source), is never loaded.

The same code imports a submission in-process, in the sandboxed worker, in `check`, `evaluate`, `submit`
and `results verify`: the folder it is handed is always a copy of exactly the submission's hashed files
(`Submission.stage`).
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from pathlib import Path
from typing import Any

FILES_ATTRIBUTE = "__xaibench_files__"  # on the package: declared data file name → path (contracts.data_file)
_lock = threading.Lock()
_packages: dict[str, "_Importer"] = {}  # package name → its importer


def package_name(name: str, code_hash: str) -> str:
    """The package a submission is imported as: unique per name and code."""
    return f"xaibench_submission_{name.replace('-', '_')}_{code_hash}"


class _Importer:
    """The `__import__` of one submission's modules (module docstring)."""

    def __init__(self, package: str, siblings: frozenset[str], allowed: frozenset[str] | None) -> None:
        self.package, self.siblings, self.allowed = package, siblings, allowed
        self.builtins = {**builtins.__dict__, "__import__": self}

    def __call__(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        top = name.partition(".")[0]
        if level == 0 and top in self.siblings:
            module = builtins.__import__(f"{self.package}.{name}", globals, locals, fromlist, 0)
            return module if fromlist else sys.modules[f"{self.package}.{top}"]
        if level == 0 and self.allowed is not None and top not in self.allowed and top != self.package:
            raise ModuleNotFoundError(
                f"No module named '{top}' for this submission: it is neither one of its own modules nor a "
                f"declared requirement; add it to requires in submission.toml (or put the module in the folder)",
                name=top)
        return builtins.__import__(name, globals, locals, fromlist, level)


class _Loader(importlib.machinery.SourceFileLoader):
    """Runs a module of a submission package with the package's `__import__`, compiled from its source: the
    bytecode cache (`__pycache__/*.pyc`) is neither read nor written, so no compiled file beside a module — whose
    bytes no hash covers — can stand in for it."""

    def get_code(self, fullname: str) -> types.CodeType:
        """The module's code, compiled from its `.py` source (never from a `.pyc`)."""
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)

    def exec_module(self, module: types.ModuleType) -> None:
        """Execute the module's source with its package's builtins (and so its `__import__`)."""
        importer = _packages[module.__name__.partition(".")[0]]
        module.__dict__["__builtins__"] = importer.builtins
        super().exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the modules of registered submission packages: `.py` sources only, run by `_Loader`."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        """The spec of `fullname` when it is a module of a registered submission package (else None)."""
        if fullname.partition(".")[0] not in _packages or "." not in fullname:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or not spec.has_location:  # missing, or a folder without __init__
            return spec
        if not spec.origin.endswith(".py"):
            raise ImportError(f"{spec.origin}: a submission's modules are .py files; compiled modules are not loaded",
                              name=fullname)
        ours = importlib.util.spec_from_file_location(fullname, spec.origin, loader=_Loader(fullname, spec.origin),
                                                      submodule_search_locations=spec.submodule_search_locations)
        if ours is None:
            raise ImportError(f"{spec.origin}: Python finds no module loader for it", name=fullname)
        return ours


_FINDER = _Finder()


def import_package(folder: Path, package: str, siblings: frozenset[str], allowed: frozenset[str] | None,
                   files: dict[str, Path]) -> types.ModuleType:
    """Import `folder` as the package `package` (once per process: an imported package is returned as is);
    `siblings` are its top-level module names, `allowed` the other top-level names its modules may import
    (None: any), `files` its declared data files (`benchmark.contracts.data_file`)."""
    with _lock:
        if package in sys.modules:
            return sys.modules[package]
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        _packages[package] = _Importer(package, siblings, allowed)
        init = folder / "__init__.py"
        if init.is_file():
            spec = importlib.util.spec_from_file_location(package, init, loader=_Loader(package, str(init)),
                                                          submodule_search_locations=[str(folder)])
            if spec is None:
                raise ImportError(f"{init}: Python finds no module loader for it", name=package)
            module = importlib.util.module_from_spec(spec)
        else:
            spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
            spec.submodule_search_locations = [str(folder)]
            module = importlib.util.module_from_spec(spec)
        setattr(module, FILES_ATTRIBUTE, dict(files))
        sys.modules[package] = module
        try:
            if spec.loader is not None:
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[package]
            raise
        return module


def import_entry(package: str, module: str) -> types.ModuleType:
    """`<package>.<module>` (the package imported first with `import_package`)."""
    return importlib.import_module(f"{package}.{module}")


def forget(package: str) -> None:
    """Remove an imported package and its modules from this process (a failed import is retried afresh)."""
    with _lock:
        for key in [k for k in sys.modules if k == package or k.startswith(package + ".")]:
            del sys.modules[key]
        _packages.pop(package, None)
