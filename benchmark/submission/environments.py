"""A submission's own environment: the packages its requirements need beyond the harness's, installed in a
folder that the sandboxed worker puts first on its `sys.path` (`xaibench results verify`; docs/submissions.md).

Built with pip, wheels only (`--only-binary :all:`: no package's build code runs on the harness's machine):

1. **resolve** — `pip install --dry-run --report` by the harness's own interpreter, so that the harness's
   installed packages satisfy what they can; the report lists what is missing and the wheel each comes from
   (its file and sha256: `Wheel`). A harness package in that list (`benchmark.submission.requirements.harness_packages`)
   would be replaced: refused with the reason. This step runs every time, cached or not;
2. **install** exactly those wheels (`name==version --hash=sha256:…`, `--require-hashes`, `--no-deps`) into
   `<folder>/packages` (`pip install --target`), from the sources given: `--find-links` (a wheelhouse or a
   page of links; with no index, offline) and/or `--index-url`;
3. **check** — the installed distributions are exactly the planned ones, and none installs a top-level
   module of the harness's (`harness_modules`: such a module would shadow the harness's for the worker);
4. write `environment.json` (requirements, installed versions, the wheels, Python, the sha256 of every file of
   the packages folder) and rename the folder into place.

The folder is `$XAIBENCH_HOME/environments/<key>`, `key` = sha256 of the Python version and platform, the
harness's package versions, the sorted requirements and the wheels they resolved to (name, version, sha256):
an environment is keyed by what built it. A second re-run uses it as built only when the sources resolve the
requirements to exactly those wheels again — so an environment the current wheelhouse could not rebuild (a
wheel gone, or replaced by other bytes) is never reused: the resolution fails (nothing is signed) or names
other wheels (another environment is built) — and after checking that its files are still those it was built
with (a worker without the file-system sandbox could have changed them: such an environment is set aside and
built again). It is
built as `.building-<key>-<pid>-<random>` beside it and renamed only when complete, so no half-built
environment is ever used; a failed build is removed, and the leftover of a killed one is removed by the
next build. The worker reads it through a plain `sys.path` entry: a `.pth` file a package installs never
runs, and nothing of it runs before the worker's limits are set.

A re-run pins the versions its Result recorded (`provenance.requirements`, `for_result`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from benchmark.errors import XaibenchError

MANIFEST = "environment.json"
PACKAGES = "packages"
BUILDING = ".building-"
PIP_TIMEOUT_S = 900


class EnvironmentBuildError(XaibenchError):
    """A submission's environment cannot be built (unsatisfiable, harness-replacing, source without it)."""


@dataclass(frozen=True)
class Sources:
    """Where packages come from: `find_links` (folders of wheels or pages of links) and an `index_url`; with
    find-links and no index, nothing but the find-links is read (offline)."""

    find_links: tuple[str, ...] = ()
    index_url: str | None = None

    def pip_args(self) -> list[str]:
        """pip's options for these sources."""
        args = [a for link in self.find_links for a in ("--find-links", str(link))]
        if self.index_url:
            args += ["--index-url", self.index_url]
        elif self.find_links:
            args.append("--no-index")
        return args


@dataclass(frozen=True)
class Wheel:
    """One wheel an environment is built from: the distribution, its version, the file and its sha256."""

    name: str
    version: str
    sha256: str
    file: str

    def to_dict(self) -> dict[str, str]:
        """As `environment.json` and a verification record keep it."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256, "file": self.file}


@dataclass(frozen=True)
class Environment:
    """A built environment: its folder, the folder of its packages (what the worker puts on `sys.path`),
    what was installed there (canonical name → version), the wheels it was built from and whether this call
    built it."""

    path: Path
    installed: dict[str, str] = field(default_factory=dict)
    built: bool = False
    wheels: tuple[Wheel, ...] = ()

    @property
    def key(self) -> str:
        """Its key (the folder's name)."""
        return self.path.name

    @property
    def packages(self) -> Path:
        """The folder the worker puts first on its `sys.path`."""
        return self.path / PACKAGES


def root() -> Path:
    """Where environments are kept: `$XAIBENCH_HOME/environments`."""
    from benchmark.resources import data_home

    return data_home() / "environments"


def environment_key(requirements: Sequence[str], wheels: Sequence[Wheel] = ()) -> str:
    """16 hex digits naming the environment of `requirements` built from `wheels` on this Python and these
    harness packages."""
    from benchmark.submission.requirements import harness_packages

    payload = {"python": f"{sys.implementation.cache_tag}-{platform.machine()}-{sys.platform}",
               "harness": sorted(harness_packages().items()), "requirements": sorted(requirements),
               "wheels": sorted((w.name, w.version, w.sha256) for w in wheels)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def ensure(requirements: Sequence[str], sources: Sources = Sources(), home: Path | None = None) -> Environment:
    """The environment of `requirements` (PEP 508 strings): the cached one, or one built now (module
    docstring); `EnvironmentBuildError` with one line when it cannot be, and nothing is left behind."""
    from benchmark.submission.requirements import replaces_harness

    reqs = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise EnvironmentBuildError(f"requirement '{text[:80]}' is not PEP 508 ({exc})") from None
        why = replaces_harness(req)
        if why:
            raise EnvironmentBuildError(f"the environment cannot be built: {why}")
        reqs.append(str(req))
    base = Path(home) if home is not None else root()
    base.mkdir(parents=True, exist_ok=True)
    plan = _resolve(reqs, sources)
    wheels = tuple(plan[name] for name in sorted(plan))
    key = environment_key(reqs, wheels)
    final = base / key
    cached = _load(final)
    if cached is not None:
        return cached
    _sweep(base)
    if final.exists():  # not a complete, unchanged environment (damaged or tampered with): build it again
        _set_aside(final)
    tmp = base / f"{BUILDING}{key}-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        installed = _build(tmp, plan, sources)
        _readable(tmp)
        (tmp / MANIFEST).write_text(json.dumps({"key": key, "requirements": reqs, "installed": installed,
                                                "wheels": [w.to_dict() for w in wheels],
                                                "python": platform.python_version(),
                                                "sha256": folder_digest(tmp / PACKAGES)}, indent=1, sort_keys=True)
                                    + "\n", encoding="utf-8")
        try:
            os.rename(tmp, final)
        except OSError:  # another build of the same key finished first: use it
            other = _load(final)
            if other is None:
                raise
            shutil.rmtree(tmp, ignore_errors=True)
            return other
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Environment(final, installed, built=True, wheels=wheels)


def for_result(requires: Sequence[str], provenance: dict[str, Any], sources: Sources = Sources(),
               home: Path | None = None) -> Environment:
    """The environment a re-run uses: the submission's `requires` and the exact versions its Result recorded
    (`provenance["requirements"]`), which must be a strict name → version table."""
    from benchmark.submission.requirements import parse_pins

    if "requirements" not in provenance:
        raise EnvironmentBuildError("the Result does not record the versions its requirements resolved to "
                                    "(provenance.requirements); evaluate it again with this xaibench")
    try:
        pins = parse_pins(provenance["requirements"])
    except ValueError as exc:
        raise EnvironmentBuildError(f"the Result's provenance.requirements {exc}") from None
    return ensure([*(f"{name}=={version}" for name, version in sorted(pins.items())), *requires], sources, home)


def _load(folder: Path) -> Environment | None:
    """The environment in `folder` when it is complete and unchanged: its manifest names what its packages
    folder holds, and the digest of that folder's files is the one recorded when it was built."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        installed = manifest["installed"]
        if not isinstance(installed, dict) or _installed(folder / PACKAGES) != installed:
            return None
        if manifest["sha256"] != folder_digest(folder / PACKAGES):
            return None
        wheels = tuple(Wheel(str(w["name"]), str(w["version"]), str(w["sha256"]), str(w["file"]))
                       for w in manifest["wheels"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Environment(folder, dict(installed), wheels=wheels)


def folder_digest(folder: Path) -> str:
    """sha256 over every entry of a folder — a packages folder, a track's asset — (its path, and a file's bytes
    or a link's target), in path order; symbolic links are not followed."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(p.relative_to(folder).as_posix().encode() + b"\0")
        if p.is_symlink():
            h.update(b"link:" + os.readlink(p).encode())
        elif p.is_file():
            h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _set_aside(folder: Path) -> None:
    """Move a damaged environment out of the way (then remove what can be removed of it)."""
    aside = folder.with_name(f".damaged-{folder.name}-{secrets.token_hex(4)}")
    try:
        os.rename(folder, aside)
    except OSError as exc:
        raise EnvironmentBuildError(f"{folder} is damaged and cannot be moved aside ({exc.strerror}); remove it "
                                    "by hand") from None
    for top, dirs, _files in os.walk(aside):
        for d in dirs:
            try:
                os.chmod(os.path.join(top, d), 0o755, follow_symlinks=False)
            except (OSError, NotImplementedError):
                pass
    shutil.rmtree(aside, ignore_errors=True)


def _sweep(base: Path) -> None:
    """Remove the leftovers of builds whose process is gone."""
    for p in base.glob(f"{BUILDING}*"):
        m = re.match(rf"{re.escape(BUILDING)}[0-9a-f]{{16}}-(\d+)-", p.name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            shutil.rmtree(p, ignore_errors=True)


def _pip(args: list[str], what: str) -> None:
    """Run `python -m pip <args>` with the harness's interpreter; `EnvironmentBuildError` with pip's reason."""
    cmd = [sys.executable, "-m", "pip", *args, "--only-binary", ":all:", "--no-input", "--disable-pip-version-check",
           "--quiet"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, stdin=subprocess.DEVNULL,
                           env={**os.environ, "PIP_NO_INPUT": "1", "PYTHONNOUSERSITE": "1"})
    except subprocess.TimeoutExpired:
        raise EnvironmentBuildError(f"{what} took longer than {PIP_TIMEOUT_S} s; check the package sources") from None
    except OSError as exc:
        raise EnvironmentBuildError(f"{what}: pip could not start ({exc})") from None
    if r.returncode != 0:
        raise EnvironmentBuildError(f"{what}: {_pip_reason(r.stderr or r.stdout)}")


def _pip_reason(text: str) -> str:
    """pip's first error as one line, naming a harness package that a requirement would replace."""
    from benchmark.submission.requirements import harness_packages

    errors = [line[len("ERROR:"):].strip() for line in text.splitlines() if line.startswith("ERROR:")]
    first = " ".join((errors[0] if errors else text.strip().splitlines()[-1] if text.strip() else "failed").split())
    m = re.search(r"satisfies the requirement (\S+)", first)
    if m:
        try:
            req = Requirement(m.group(1))
        except InvalidRequirement:
            return first[:300]
        installed = harness_packages().get(canonicalize_name(req.name))
        if installed is not None:
            return (f"a requirement needs {req}, which would replace the harness's {req.name} {installed} "
                    "(an environment may not replace the harness's packages)")
        found = re.search(r"\(from versions: ([^)]*)\)", first)
        if found and found.group(1).strip() not in ("", "none"):
            return f"no version of {req.name} satisfies {req} (the sources offer {found.group(1)[:120]})"
        return f"no source offers {req}: add a wheel of it to the --find-links folder or the index"
    return first[:300]


def _resolve(requirements: list[str], sources: Sources) -> dict[str, Wheel]:
    """canonical name → the wheel pip would install for `requirements` beside the harness's packages (a dry
    run: nothing is installed); `EnvironmentBuildError` when one would replace a harness package."""
    import tempfile

    from benchmark.submission.requirements import harness_packages

    if not requirements:
        return {}
    with tempfile.TemporaryDirectory(prefix="xaibench-resolving-") as scratch:
        report = Path(scratch) / "report.json"
        _pip(["install", "--dry-run", "--report", str(report), *sources.pip_args(), *requirements],
             "resolving the requirements")
        plan = _plan(report)
    harness = harness_packages()
    replaced = sorted(name for name in plan if name in harness)
    if replaced:
        name = replaced[0]
        raise EnvironmentBuildError(f"the requirements need {name} {plan[name].version}, which would replace the "
                                    f"harness's {name} {harness[name]} (an environment may not replace the "
                                    "harness's packages)")
    return plan


def _build(folder: Path, plan: dict[str, Wheel], sources: Sources) -> dict[str, str]:
    """Install exactly the planned wheels (their hashes required) and check (module docstring) into `folder`;
    returns what was installed."""
    from benchmark.submission.requirements import harness_modules

    packages = folder / PACKAGES
    packages.mkdir()
    if plan:
        pinned = folder / "wheels.txt"
        pinned.write_text("".join(f"{w.name}=={w.version} --hash=sha256:{w.sha256}\n" for w in plan.values()),
                          encoding="utf-8")
        _pip(["install", "--target", str(packages), "--no-deps", "--no-compile", "--require-hashes",
              *sources.pip_args(), "-r", str(pinned)], "installing the requirements")
        pinned.unlink()
    installed = _installed(packages)
    versions = {name: w.version for name, w in plan.items()}
    if installed != versions:
        raise EnvironmentBuildError(f"pip installed {installed or 'nothing'} where {versions} was planned; nothing "
                                    "was kept")
    shadow = sorted(_top_names(packages) & harness_modules())
    if shadow:
        raise EnvironmentBuildError(f"a requirement installs the module '{shadow[0]}', which is the harness's (an "
                                    "environment may not replace the harness's packages)")
    return installed


def _plan(report: Path) -> dict[str, Wheel]:
    """canonical name → the wheel pip's installation report (format version 1) would install."""
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        plan: dict[str, Wheel] = {}
        for item in data["install"]:
            name = canonicalize_name(str(item["metadata"]["name"]))
            info = item.get("download_info") or {}
            digest = str(((info.get("archive_info") or {}).get("hashes") or {}).get("sha256") or "")
            if not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise EnvironmentBuildError(f"pip names no sha256 for the wheel of {name}; give its sources as "
                                            "--find-links or --index-url (wheels only)")
            plan[name] = Wheel(name, str(item["metadata"]["version"]), digest,
                               str(info.get("url", "")).rsplit("/", 1)[-1][:200])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EnvironmentBuildError(f"pip's installation report cannot be read ({exc})") from None
    return plan


def _installed(packages: Path) -> dict[str, str]:
    """canonical name → version of the distributions in a packages folder."""
    import importlib.metadata as md

    if not packages.is_dir():
        return {}
    return {canonicalize_name(d.metadata["Name"] or ""): d.version for d in md.distributions(path=[str(packages)])}


def _top_names(packages: Path) -> set[str]:
    """The top-level module names a packages folder provides (folders and modules; metadata and scripts
    folders are not modules)."""
    out = set()
    for p in packages.iterdir():
        if p.name.endswith((".dist-info", ".egg-info", ".data")) or p.name in ("bin", "__pycache__"):
            continue
        name = p.name.split(".")[0]
        if name.isidentifier():
            out.add(name)
    return out


def _readable(folder: Path) -> None:
    """Every file readable and every folder searchable by all (a root harness's worker runs as another user)."""
    for top, _dirs, files in os.walk(folder):
        os.chmod(top, 0o755)
        for f in files:
            p = os.path.join(top, f)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode & 0o777 | 0o444)
