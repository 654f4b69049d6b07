"""`xaibench results validate`: what CI runs on a pull request to a results repository — pure checks over a
checked-out tree (and, for a pull request, the tree it is based on), one line per finding.

Per pull request (`check_changes`): it only adds files, all under one `results/<submission>/<code-hash>/`,
never under `verifications/` (maintainers only) and never under a submission name another author holds;
the files it adds stay within the size caps (`layout`).

Per submission folder (`check_folder`): `submission.json` names the folder and the hash and carries authors
and a license; the code hash recomputed from `source/` (rebuilt in a scratch folder, `Submission.hash`)
equals the folder name; a built-in's name comes with the built-in's code; every other file is a Result at a
path its content agrees with (`check_result`): it parses as a Result with per-instance scores, at default
parameters, on a resource revision xaibench knows, covering the complete split (`coverage.ids_sha256` equal
to the split's digest), and its metrics recomputed from the stored per-instance scores (the track's
`summarise`) equal the reported ones (relative 1e-9).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import (HASH_RE, LAYOUT_VERSION, MARKER, MAX_RESULT_BYTES, MAX_SOURCE_FILE_BYTES,
                                           MAX_TOTAL_BYTES, RESULTS, SOURCE, SUBMISSION_JSON, VERIFICATIONS,
                                           ResultPath, parse_result_path)

__all__ = ["Change", "check_changes", "check_folder", "check_result", "diff_trees", "rebuild_source", "validate"]

REL_TOL = 1e-9


@dataclass(frozen=True)
class Change:
    """One file a pull request changes: `status` is "added", "modified" or "deleted"."""

    status: str
    path: str


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


def diff_trees(old: Path, new: Path) -> list[Change]:
    """The files that differ between two checked-out trees."""
    a, b = _files(old), _files(new)
    out = [Change("added", p) for p in b if p not in a]
    out += [Change("modified", p) for p in b if p in a and a[p].read_bytes() != b[p].read_bytes()]
    out += [Change("deleted", p) for p in a if p not in b]
    return sorted(out, key=lambda c: c.path)


def _folder_of(path: str) -> tuple[str, str] | None:
    parts = path.split("/")
    return (parts[1], parts[2]) if len(parts) >= 4 and parts[0] == RESULTS else None


def _authors(tree: Path, name: str, skip: str | None = None) -> list[str]:
    """The authors of every code hash of `name` in `tree` (but `skip`)."""
    out: list[str] = []
    for sj in sorted((tree / RESULTS / name).glob(f"*/{SUBMISSION_JSON}")):
        if sj.parent.name == skip:
            continue
        try:
            out += [a for a in json.loads(sj.read_text(encoding="utf-8")).get("authors", []) if a not in out]
        except (OSError, ValueError, AttributeError):
            continue
    return out


def check_changes(changes: list[Change], tree: Path, base: Path) -> list[str]:
    """The pull-request rules of the module docstring (`tree`: its head, `base`: what it is judged against)."""
    out: list[str] = []
    if not changes:
        return ["the pull request changes nothing"]
    folders: set[tuple[str, str]] = set()
    total = 0
    for c in changes:
        if c.path.startswith(VERIFICATIONS + "/"):
            out.append(f"{c.path}: verifications/ is written only by maintainers (`xaibench results verify`)")
            continue
        folder = _folder_of(c.path)
        if folder is None:
            out.append(f"{c.path}: a pull request may only add files under results/<submission>/<code-hash>/")
            continue
        if c.status != "added":
            out.append(f"{c.path}: a pull request may only add files; this one is {c.status} "
                       f"({'another submission' if not (base / RESULTS / folder[0]).is_dir() else 'already merged'})")
        folders.add(folder)
        if c.status != "deleted":
            total += (tree / c.path).stat().st_size
    if len(folders) > 1:
        out.append("the pull request touches more than one submission folder ("
                   + ", ".join(f"results/{n}/{h}" for n, h in sorted(folders)) + "); send one per pull request")
    if total > MAX_TOTAL_BYTES:
        out.append(f"the pull request adds {total:,} bytes, more than the {MAX_TOTAL_BYTES:,} allowed")
    for name, code_hash in sorted(folders):
        held = _authors(base, name, skip=code_hash)
        mine = _json(tree / RESULTS / name / code_hash / SUBMISSION_JSON).get("authors", [])
        if held and not set(held) & set(mine if isinstance(mine, list) else []):
            out.append(f"results/{name}/: the name belongs to {', '.join(held)}; a submission by other authors "
                       "needs its own name")
    return out


def _json(path: Path) -> dict[str, Any]:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return d if isinstance(d, dict) else {}
    except (OSError, ValueError):
        return {}


def folders_in(tree: Path) -> list[tuple[str, str]]:
    """Every `results/<name>/<hash>` folder of a tree."""
    root = tree / RESULTS
    return sorted((p.parent.name, p.name) for p in root.glob("*/*") if p.is_dir()) if root.is_dir() else []


def rebuild_source(folder: Path, scratch: Path) -> Path:
    """The submission folder rebuilt from `<folder>/source/` in `scratch` (in a package of the recorded name
    when it sat in one), ready for `load_submission`; `XaibenchError` when it cannot be."""
    meta = _json(folder / SUBMISSION_JSON)
    sub_folder, package = meta.get("folder"), meta.get("package")
    if not isinstance(sub_folder, str) or not sub_folder or "/" in sub_folder or sub_folder.startswith("."):
        raise XaibenchError("submission.json: 'folder' must name the submission folder inside source/")
    if package is not None and (not isinstance(package, str) or not package.isidentifier()):
        raise XaibenchError("submission.json: 'package' must be null or a Python package name")
    root = scratch / (package or "source")
    shutil.copytree(folder / SOURCE, root, dirs_exist_ok=False)
    if not (root / sub_folder / "submission.toml").is_file():
        raise XaibenchError(f"source/{sub_folder}/submission.toml is missing")
    return root / sub_folder


def _builtins() -> dict[str, str]:
    from benchmark.submission import discover, is_builtin

    return {n: s.hash for n, s in discover().items() if is_builtin(s)}


def check_folder(tree: Path, name: str, code_hash: str, context: "_Context") -> list[str]:
    """The rules of one `results/<name>/<code_hash>/` folder (module docstring)."""
    from benchmark.submission import NAME_RE, load_submission

    rel = f"{RESULTS}/{name}/{code_hash}"
    folder = tree / rel
    out: list[str] = []
    if not NAME_RE.match(name) or not HASH_RE.match(code_hash):
        return [f"{rel}: must be results/<submission name>/<16 hex digits of the code hash>/"]
    meta = _json(folder / SUBMISSION_JSON)
    if not meta:
        return [f"{rel}/{SUBMISSION_JSON}: missing or not a JSON object"]
    for key, ok in (("layout", meta.get("layout") == LAYOUT_VERSION), ("name", meta.get("name") == name),
                    ("code_hash", meta.get("code_hash") == code_hash),
                    ("authors", isinstance(meta.get("authors"), list) and bool(meta["authors"])
                     and all(isinstance(a, str) and a for a in meta["authors"])),
                    ("license", isinstance(meta.get("license"), str) and bool(meta["license"])),
                    ("version", isinstance(meta.get("version"), str))):
        if not ok:
            out.append(f"{rel}/{SUBMISSION_JSON}: field '{key}' is missing or does not match the folder")
    for path in sorted((folder / SOURCE).rglob("*")) if (folder / SOURCE).is_dir() else []:
        if path.is_file() and path.stat().st_size > MAX_SOURCE_FILE_BYTES:
            out.append(f"{path.relative_to(tree).as_posix()}: {path.stat().st_size:,} bytes, more than the "
                       f"{MAX_SOURCE_FILE_BYTES:,} a source file may have")
    sub = None
    with tempfile.TemporaryDirectory(prefix="xaibench-source-") as scratch:
        try:
            sub = load_submission(rebuild_source(folder, Path(scratch)))
            recomputed = sub.hash
        except (XaibenchError, OSError) as exc:
            out.append(f"{rel}/{SOURCE}: cannot rebuild the submission ({exc})")
        else:
            if recomputed != code_hash:
                out.append(f"{rel}/{SOURCE}: the code hash recomputed from source/ is {recomputed}, not {code_hash} "
                           "(a file changed after hashing)")
            if sub.name != name or sub.version != meta.get("version"):
                out.append(f"{rel}/{SOURCE}: submission.toml says {sub.name} {sub.version}, submission.json "
                           f"{meta.get('name')} {meta.get('version')}")
            builtin = context.builtins.get(name)
            if builtin is not None and builtin != recomputed:
                out.append(f"{rel}: '{name}' is a built-in submission and this is not its code (hash {builtin}); "
                           "choose another name")
    for path in sorted(folder.rglob("*")):
        r = path.relative_to(tree).as_posix()
        if not path.is_file() or r.startswith(f"{rel}/{SOURCE}/") or r == f"{rel}/{SUBMISSION_JSON}":
            continue
        rp = parse_result_path(r)
        if rp is None:
            out.append(f"{r}: not a Result path (results/<submission>/<code-hash>/<track>/<family>__<config>@"
                       "<revision>/<model>.json)")
            continue
        out += check_result(tree, rp, context)
    return out


class _Context:
    """What several checks share: the built-ins' hashes, loaded resources and instance digests (cached)."""

    def __init__(self) -> None:
        self.builtins = _builtins()
        self._resources: dict[tuple[str, str], Any] = {}
        self._ids: dict[tuple[str, str, str, str], tuple[int, str]] = {}

    def resource(self, name: str, revision: str) -> Any:
        from benchmark.resources import load_resource

        key = (name, revision)
        if key not in self._resources:
            try:
                res = load_resource(name, revision=revision)
                self._resources[key] = res if res.revision == revision else None
            except XaibenchError:
                self._resources[key] = None
        return self._resources[key]

    def split_ids(self, track: Any, res: Any, split: str) -> tuple[int, str]:
        from benchmark.results import ids_digest

        key = (track.name, res.name, res.revision, split)
        if key not in self._ids:
            ids = track.instances(res, split, None).ids
            self._ids[key] = (len(ids), ids_digest(ids))
        return self._ids[key]


def check_result(tree: Path, rp: ResultPath, context: _Context) -> list[str]:
    """The rules of one Result file (module docstring)."""
    import numpy as np

    from benchmark.results import Result
    from benchmark.runner import summarise_runs
    from benchmark.tracks import get_track

    rel, path = rp.rel, tree / rp.rel
    if path.stat().st_size > MAX_RESULT_BYTES:
        return [f"{rel}: {path.stat().st_size:,} bytes, more than the {MAX_RESULT_BYTES:,} a Result may have"]
    try:
        r = Result.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, XaibenchError, UnicodeDecodeError) as exc:
        return [f"{rel}: not a Result ({' '.join(str(exc).split())[:200]})"]
    sub = r.submission
    said = ResultPath(str(sub.get("base") or sub["name"]), str(sub["hash"]), r.track, str(r.resource["name"]),
                      str(r.resource["revision"]), str(r.model["name"]))
    if said != rp:
        return [f"{rel}: its path does not match its content (the content says {said.rel})"]
    if sub["name"] != rp.submission:
        return [f"{rel}: it was run with non-default parameters ({sub['name']}); send default-parameter Results"]
    res = context.resource(rp.resource, rp.revision)
    if res is None:
        return [f"{rel}: resource {rp.resource} at revision {rp.revision} is not one xaibench knows"]
    try:
        trk = get_track(r.track)
    except XaibenchError:
        return [f"{rel}: track '{r.track}' is not one xaibench knows"]
    out: list[str] = []
    cov = r.coverage
    n, digest = context.split_ids(trk, res, str(r.resource["split"]))
    if cov.get("complete") is not True or cov.get("n") != n or cov.get("ids_sha256") != digest:
        out.append(f"{rel}: coverage is not the complete {r.resource['split']} split ({cov.get('n')} of {n} "
                   "instances, or another set); run `xaibench evaluate` without --limit")
        return out
    try:
        scores = r.scores()
    except XaibenchError as exc:
        return out + [f"{rel}: {exc}"]
    if scores is None:
        return out + [f"{rel}: no per-instance scores (written by an older xaibench); re-run `xaibench evaluate`"]
    again = summarise_runs(trk, [scores.seed(s) for s in range(len(scores.seeds))])
    for name in sorted(set(r.metrics) | set(again)):
        a = r.metrics[name].mean if name in r.metrics else "absent"
        b = again[name].mean if name in again else "absent"
        same = (a is None and b is None) or (isinstance(a, float) and isinstance(b, float)
                                             and math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12))
        if not same:
            out.append(f"{rel}: metric {name} says {a}, its per-instance scores give {b}")
    failed = int((~scores.ok.all(axis=0)).sum())
    if failed != r.n_failed or not np.isfinite(r.wall_time_s):
        out.append(f"{rel}: n_failed says {r.n_failed}, its per-instance scores {failed}")
    return out


def iter_result_files(tree: Path) -> Iterator[str]:
    """Every file under `results/` that is not a submission's metadata or source."""
    for p in sorted((tree / RESULTS).rglob("*.json")) if (tree / RESULTS).is_dir() else []:
        rel = p.relative_to(tree).as_posix()
        parts = rel.split("/")
        if len(parts) > 3 and parts[3] not in (SOURCE, SUBMISSION_JSON):
            yield rel


def validate(tree: Path, base: Path | None = None, changes: list[Change] | None = None) -> list[str]:
    """Every finding on `tree`: with `changes` (a pull request against `base`), its rules and those of the
    folder it touches; without, those of every submission folder in the tree."""
    if not (tree / MARKER).is_file():
        return [f"{MARKER}: missing; this is not a results repository"]
    context = _Context()
    out: list[str] = []
    if changes is not None and base is not None:
        out += check_changes(changes, tree, base)
        folders = sorted({f for c in changes if (f := _folder_of(c.path)) and c.status != "deleted"})
    else:
        folders = folders_in(tree)
    for name, code_hash in folders:
        if (tree / RESULTS / name / code_hash).is_dir():
            out += check_folder(tree, name, code_hash, context)
    return out
