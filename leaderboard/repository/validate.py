"""`xaibench results validate`: what CI runs on a pull request to a results repository — pure checks over
checked-out trees, one line per finding. A pull request is judged against the *tip* of the default branch
(`pull.open_pull_request` lays the tree that merging it would give: the tip plus the files it adds), never
against the commit it was cut from.

Per pull request (`check_changes`, against the tip): it only adds files, all under one
`results/<submission>/<code-hash>/`, never under `verifications/` (maintainers only), never a path the tip
holds with other content; the files stay within the size caps (`layout`); it carries one contribution
signature over exactly its other files (`contributors.check_signature`); its submission name is not one a
built-in or another held name could pass for (`names.collides`), and a held name stays with its holder — the
key its maintainer-signed binding names (`verifications/<name>/bindings/`, the first written when the name first
lands: trust on first use; believed through `signed_state` under the maintainers' keys), or one that key signed
over, and on the Hub also the account that opened the first pull request (`contributors`). What
`submission.json` says (its authors) claims no name.

Per submission folder (`check_folder`): every entry under it is a plain file (no link, FIFO, device); its
`submission.json` (strict JSON) names the folder and the hash and carries authors and a license; `source/`
holds exactly the files the code hash covers (`layout.source_files` of the submission rebuilt from it —
`Submission.hashed_files()` plus the package `__init__.py` — nothing more, nothing less); the hash recomputed
equals the folder's; what `verify` refuses before any re-run is refused here too (`Submission.precheck`: a
requirement that replaces a harness package, a module that shadows a harness module or a requirement — so
`merge` never lands what can never run); a built-in's name comes with the built-in's code and metadata; every
other file is a Result whose every field `contents.check_result` recomputes or compares.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import (HASH_RE, LAYOUT_VERSION, MARKER, MAX_RESULT_BYTES, MAX_SOURCE_FILE_BYTES,
                                           MAX_TOTAL_BYTES, RESULTS, SOURCE, SUBMISSION_JSON, VERIFICATIONS,
                                           RepositoryError, parse_result_path, source_files)
from leaderboard.repository.contributors import is_signature
from leaderboard.repository.reading import read_bytes, read_json, tree_files

__all__ = ["Change", "check_changes", "check_folder", "diff_trees", "rebuild_source", "validate"]

MAX_JSON_META = 64 << 10  # submission.json


@dataclass(frozen=True)
class Change:
    """One file a pull request changes: `status` is "added", "modified" or "deleted"."""

    status: str
    path: str


def diff_trees(old: Path, new: Path) -> list[Change]:
    """The files that differ between two checked-out trees (plain files only; see `reading.tree_files`)."""
    a, _ = tree_files(old)
    b, _ = tree_files(new)
    out = [Change("added", p) for p in b if p not in a]
    out += [Change("modified", p) for p in b if p in a and a[p].read_bytes() != b[p].read_bytes()]
    out += [Change("deleted", p) for p in a if p not in b]
    return sorted(out, key=lambda c: c.path)


def _folder_of(path: str) -> tuple[str, str] | None:
    parts = path.split("/")
    return (parts[1], parts[2]) if len(parts) >= 4 and parts[0] == RESULTS else None


def _meta(path: Path, where: str) -> dict[str, Any]:
    """A small JSON object read strictly; {} when absent or unreadable (the caller reports that)."""
    try:
        d = read_json(path, where, MAX_JSON_META)
    except RepositoryError:
        return {}
    return d if isinstance(d, dict) else {}


def _held(base: Path, state: Any) -> set[str]:
    """Every submission name the tree holds: a folder under results/, or a name a signed binding holds or that is
    in dispute (`signed_state`) — a binding file nobody signed holds nothing."""
    names = {p.name for p in (base / RESULTS).iterdir() if p.is_dir()} if (base / RESULTS).is_dir() else set()
    return names | (set(state.bindings) | set(state.disputed) if state is not None else set())


def check_changes(changes: list[Change], tree: Path, base: Path, author: str | None = None,
                  state: Any = None) -> list[str]:
    """The pull-request rules of the module docstring (`tree`: the tip plus the pull request's files, `base`:
    the tip; `author`: the identity that opened it, where the store can tell — None on bare git; `state`: the tip's
    signed state, `signed_state.read` under the maintainers' keys — None leaves who holds a name unchecked, for
    `submit`'s local check where no maintainer key is configured)."""
    from leaderboard.repository.contributors import check_signature

    out: list[str] = []
    if not changes:
        return ["the pull request adds nothing the default branch does not hold already"]
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
                       "(the default branch holds it with other content)")
        folders.add(folder)
        if c.status != "deleted":
            total += (tree / c.path).stat().st_size
    if len(folders) > 1:
        out.append("the pull request touches more than one submission folder ("
                   + ", ".join(f"results/{n}/{h}" for n, h in sorted(folders)) + "); send one per pull request")
    if total > MAX_TOTAL_BYTES:
        out.append(f"the pull request adds {total:,} bytes, more than the {MAX_TOTAL_BYTES:,} allowed")
    held = _held(base, state)
    for name, code_hash in sorted(folders):
        if total > MAX_TOTAL_BYTES:
            break  # nothing more is read of a pull request over its cap
        try:
            added = {c.path: read_bytes(tree / c.path, c.path, MAX_TOTAL_BYTES) for c in changes
                     if c.status == "added" and _folder_of(c.path) == (name, code_hash)}
        except RepositoryError as exc:
            out.append(str(exc))
            continue
        sig, found = check_signature(added, (name, code_hash))
        out += found + _name_rules(name, base, held, author, sig, state)
    return out


def _name_rules(name: str, base: Path, held: set[str], author: str | None, sig: Any, state: Any) -> list[str]:
    """A new name may not pass for a built-in or a held one; a held name stays with its holder: the key its signed
    binding names (or one that key signed over), and on the Hub the account (module docstring)."""
    from leaderboard.repository.contributors import holds
    from leaderboard.repository.layout import legacy_owner_path
    from leaderboard.repository.names import collides

    out = []
    like = collides(name, sorted(set(_builtins()) | held))
    if like is not None:
        out.append(f"results/{name}/: the name could pass for '{like}' (case, look-alike or confusable characters); "
                   "choose a distinct name")
    if name not in held or state is None:
        return out
    if not state.keys:
        return out + [f"results/{name}/: the name is held, and no maintainer public key is configured to say whose "
                      "it is (--public-key, $XAIBENCH_VERIFIER_KEYS); a binding is believed only under the "
                      "maintainers' keys"]
    binding = state.binding(name)
    if binding is None:
        why = state.disputed.get(name) or (
            f"{legacy_owner_path(name)} is unsigned: a maintainer signs it with `xaibench results migrate`"
            if (base / legacy_owner_path(name)).is_file() else
            "no binding signed by a maintainer names a key for it (it landed before contributor signatures, or its "
            "binding is not signed under the maintainers' keys)")
        return out + [f"results/{name}/: the name is held but bound to no contributor key ({why}); a maintainer binds "
                      "it to its holder's key (`xaibench results bind`)"]
    if author is not None and binding.hub_user is not None and author != binding.hub_user:
        out.append(f"results/{name}/: the name is held by the Hub account {binding.hub_user}; this pull request was "
                   f"opened by {author}; a submission by another account needs its own name")
    if sig is not None and not holds(binding, sig):
        out.append(f"results/{name}/: the name is bound to the contributor key {binding.holder} (trust on first "
                   f"use); this pull request is signed by {sig.key_id}, which that key never signed over — sign with "
                   f"the key that holds the name ({binding.path}), or ask a maintainer to re-bind it (`xaibench "
                   "results bind`)")
    return out


def folders_in(tree: Path) -> list[tuple[str, str]]:
    """Every `results/<name>/<hash>` folder of a tree."""
    root = tree / RESULTS
    return sorted((p.parent.name, p.name) for p in root.glob("*/*") if p.is_dir()) if root.is_dir() else []


def rebuild_source(folder: Path, scratch: Path) -> Path:
    """The submission folder rebuilt from the plain files of `<folder>/source/` in `scratch` (in a package of
    the recorded name when it sat in one), ready for `load_submission`; `XaibenchError` when it cannot be."""
    meta = _meta(folder / SUBMISSION_JSON, SUBMISSION_JSON)
    sub_folder, package = meta.get("folder"), meta.get("package")
    if not isinstance(sub_folder, str) or not _plain_part(sub_folder):
        raise XaibenchError("submission.json: 'folder' must name the submission folder inside source/")
    if package is not None and (not isinstance(package, str) or not package.isidentifier()):
        raise XaibenchError("submission.json: 'package' must be null or a Python package name")
    files, bad = tree_files(folder / SOURCE)
    if bad:
        raise XaibenchError(bad[0])
    root = scratch / (package or "source")
    write_tree({rel: read_bytes(p, rel, MAX_SOURCE_FILE_BYTES) for rel, p in files.items()}, root)
    if not (root / sub_folder / "submission.toml").is_file():
        raise XaibenchError(f"source/{sub_folder}/submission.toml is missing")
    return root / sub_folder


_PLAIN_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def _plain_part(text: str) -> bool:
    """A path part that is a plain name: letters, digits, '_', '.', '-' (not `.`/`..`, no separator)."""
    return bool(_PLAIN_PART.match(text)) and text not in (".", "..")


def write_tree(files: dict[str, bytes], root: Path) -> None:
    """Write `files` (relative paths of plain parts only) under the new folder `root`."""
    root.mkdir(parents=True)
    for rel, data in sorted(files.items()):
        parts = rel.split("/")
        if not all(_plain_part(p) for p in parts):
            raise XaibenchError(f"{rel}: not a plain relative path")
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def hashed_source(folder: Path) -> dict[str, bytes]:
    """`source/<path>` → bytes of exactly the files the code hash covers, read from the submission rebuilt
    from `folder` (what the re-run's scratch copy is built from); `XaibenchError` when it cannot be rebuilt."""
    from benchmark.submission import load_submission

    with tempfile.TemporaryDirectory(prefix="xaibench-source-") as scratch:
        sub = load_submission(rebuild_source(folder, Path(scratch)))
        return source_files(sub)


def _builtins() -> dict[str, Any]:
    from benchmark.submission import discover, is_builtin

    return {n: s for n, s in discover().items() if is_builtin(s)}


def check_folder(tree: Path, name: str, code_hash: str, context: "_Context") -> list[str]:
    """The rules of one `results/<name>/<code_hash>/` folder (module docstring)."""
    from benchmark.submission import NAME_RE

    rel = f"{RESULTS}/{name}/{code_hash}"
    folder = tree / rel
    if not NAME_RE.match(name) or not HASH_RE.match(code_hash):
        return [f"{rel}: must be results/<submission name>/<16 hex digits of the code hash>/"]
    files, bad = tree_files(folder)
    if bad:
        return [f"{rel}/{b}" for b in bad]
    try:
        meta = read_json(folder / SUBMISSION_JSON, f"{rel}/{SUBMISSION_JSON}", MAX_JSON_META)
    except RepositoryError as exc:
        return [str(exc)]
    if not isinstance(meta, dict):
        return [f"{rel}/{SUBMISSION_JSON}: not a JSON object"]
    out = _check_meta(rel, meta, name, code_hash)
    sub, source_out = _check_source(rel, folder, files, meta, name, code_hash, context)
    out += source_out
    for r, _ in files.items():
        if r.startswith(f"{SOURCE}/") or r == SUBMISSION_JSON:
            continue
        if is_signature(f"{rel}/{r}"):
            out += _check_signature_file(tree, f"{rel}/{r}", files, rel)
            continue
        rp = parse_result_path(f"{rel}/{r}")
        if rp is None:
            out.append(f"{rel}/{r}: not a Result path (results/<submission>/<code-hash>/<track>/<family>__<config>@"
                       "<revision>/<model>.json)")
            continue
        try:
            data = read_json(tree / rp.rel, rp.rel, MAX_RESULT_BYTES)
        except RepositoryError as exc:
            out.append(str(exc))
            continue
        from leaderboard.repository.contents import check_result

        out += check_result(data, rp, sub, context)
    return out


def _check_signature_file(tree: Path, path: str, files: dict[str, Path], rel: str) -> list[str]:
    """A contribution signature of the folder `rel`: it holds under its key, and the files it lists are there
    with the bytes it signed (`contributors`)."""
    from leaderboard.repository.contributors import read_signature
    from leaderboard.repository.layout import tree_digest

    try:
        sig = read_signature(read_bytes(tree / path, path, MAX_JSON_META), path)
    except RepositoryError as exc:
        return [str(exc)]
    inside = [f for f in sig.files if f.startswith(f"{rel}/") and f[len(rel) + 1:] in files]
    if len(inside) != len(sig.files) or (sig.name, sig.code_hash) != tuple(rel.split("/")[1:3]):
        return [f"{path}: it signs files that are not this folder's"]
    try:
        signed = {f: read_bytes(tree / f, f, MAX_RESULT_BYTES) for f in sig.files}
    except RepositoryError as exc:
        return [f"{path}: a file it signs does not read ({exc})"]
    return [] if tree_digest(signed) == sig.digest else [f"{path}: the files it signs changed after it was signed"]


META_KEYS = {"layout", "name", "version", "kind", "role", "reference", "description", "authors", "license", "code",
             "code_hash", "folder", "package"}


def _check_meta(rel: str, meta: dict[str, Any], name: str, code_hash: str) -> list[str]:
    out = [f"{rel}/{SUBMISSION_JSON}: field '{k}' is not one submission.json has; remove it"
           for k in sorted(set(meta) - META_KEYS)]
    for key, ok in (("layout", meta.get("layout") == LAYOUT_VERSION), ("name", meta.get("name") == name),
                    ("code_hash", meta.get("code_hash") == code_hash),
                    ("authors", isinstance(meta.get("authors"), list) and bool(meta["authors"])
                     and all(isinstance(a, str) and a for a in meta["authors"])),
                    ("license", isinstance(meta.get("license"), str) and bool(meta["license"])),
                    ("version", isinstance(meta.get("version"), str))):
        if not ok:
            out.append(f"{rel}/{SUBMISSION_JSON}: field '{key}' is missing or does not match the folder")
    return out


def _check_source(rel: str, folder: Path, files: dict[str, Path], meta: dict[str, Any], name: str, code_hash: str,
                  context: "_Context") -> tuple[Any, list[str]]:
    """(the submission rebuilt from source/ or None, findings): source/ holds exactly what the hash covers."""
    from benchmark.submission import load_submission
    from leaderboard.repository.layout import submission_json

    out = []
    present = {r for r in files if r.startswith(f"{SOURCE}/")}
    for r in sorted(present):
        if files[r].stat().st_size > MAX_SOURCE_FILE_BYTES:
            out.append(f"{rel}/{r}: {files[r].stat().st_size:,} bytes, more than the {MAX_SOURCE_FILE_BYTES:,} a "
                       "source file may have")
    if out:
        return None, out
    with tempfile.TemporaryDirectory(prefix="xaibench-source-") as scratch:
        try:
            loaded = load_submission(rebuild_source(folder, Path(scratch)))
            recomputed, covered = loaded.hash, source_files(loaded)
            expected_meta = submission_json(loaded, builtin=name in context.builtins)
            # what the Result checks need, read while the scratch copy exists (`hash` reads the files)
            sub = SimpleNamespace(name=loaded.name, version=loaded.version, hash=recomputed, kind=loaded.kind,
                                  parameters=loaded.parameters, role=loaded.role, deterministic=loaded.deterministic,
                                  modalities=loaded.modalities, needs_gradients=loaded.needs_gradients,
                                  needs_segments=loaded.needs_segments, needs_assets=list(loaded.needs_assets),
                                  data_prior=loaded.data_prior, requires=list(loaded.requires))
        except (XaibenchError, OSError) as exc:
            return None, [f"{rel}/{SOURCE}: cannot rebuild the submission ({' '.join(str(exc).split())[:200]})"]
        try:  # what `verify` would refuse before any re-run: pure checks, nothing of it runs
            loaded.precheck()
        except (XaibenchError, OSError) as exc:
            out.append(f"{rel}/{SOURCE}: it can never run ({' '.join(str(exc).split())[:240]}); nothing would be "
                       "re-run or merged")
    for r in sorted(present - set(covered)):
        out.append(f"{rel}/{r}: not a file the code hash covers (only the submission's .py / .toml files and the "
                   "package modules they import are); remove it — nothing else may reach the re-run")
    for r in sorted(set(covered) - present):
        out.append(f"{rel}/{r}: missing; the code hash covers it")
    if recomputed != code_hash:
        out.append(f"{rel}/{SOURCE}: the code hash recomputed from source/ is {recomputed}, not {code_hash} "
                   "(a file changed after hashing)")
    if sub.name != name or sub.version != meta.get("version"):
        out.append(f"{rel}/{SOURCE}: submission.toml says {sub.name} {sub.version}, submission.json "
                   f"{meta.get('name')} {meta.get('version')}")
    builtin = context.builtins.get(name)
    if builtin is not None and builtin.hash != recomputed:
        out.append(f"{rel}: '{name}' is a built-in submission and this is not its code (hash {builtin.hash}); "
                   "choose another name")
    elif meta != expected_meta:
        differ = sorted(k for k in set(meta) | set(expected_meta) if meta.get(k) != expected_meta.get(k))
        out.append(f"{rel}/{SUBMISSION_JSON}: field(s) {', '.join(differ)} differ from what `xaibench submit` writes "
                   "from source/'s submission.toml" + (" (a built-in's metadata is the built-in's)" if builtin else ""))
    return (sub if not out else None), out


class _Context:
    """What several checks share: the built-ins, loaded resources, instances and model infos (cached)."""

    def __init__(self) -> None:
        self.builtins = _builtins()
        self._resources: dict[tuple[str, str], Any] = {}
        self._instances: dict[tuple[str, str, str, str], Any] = {}
        self._models: dict[tuple[str, str, str, str], Any] = {}

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

    def instances(self, track: Any, res: Any, split: str) -> Any:
        key = (track.name, res.name, res.revision, split)
        if key not in self._instances:
            self._instances[key] = track.instances(res, split, None)
        return self._instances[key]

    def model_info(self, track: Any, res: Any, model: str, instances: Any) -> dict[str, Any] | None:
        """What the track records of `model` for `res` (JSON round-tripped), or None when it builds no such."""
        import json

        key = (track.name, res.name, res.revision, model)
        if key not in self._models:
            if model not in track.metadata.models:
                self._models[key] = None
            else:
                try:
                    from benchmark.runner import board_assets, model_record

                    spec, info = track.build_model(res, model, instances)
                    self._models[key] = json.loads(json.dumps(model_record(spec, info, instances,
                                                                           board_assets(track, res)), default=str))
                except XaibenchError:
                    self._models[key] = None
        return self._models[key]


def iter_result_files(tree: Path) -> Iterator[str]:
    """Every plain file under `results/` that is not a submission's metadata, source or signature."""
    from leaderboard.repository.contributors import SIGNATURES

    files, _ = tree_files(tree / RESULTS)
    for rel in files:
        parts = rel.split("/")
        if len(parts) > 2 and parts[2] not in (SOURCE, SUBMISSION_JSON, SIGNATURES) and rel.endswith(".json"):
            yield f"{RESULTS}/{rel}"


def validate(tree: Path, base: Path | None = None, changes: list[Change] | None = None,
             author: str | None = None, state: Any = None) -> list[str]:
    """Every finding on `tree`: with `changes` (a pull request, `tree` the tip plus its files, `base` the tip, `state`
    the tip's signed state: `check_changes`), its rules and those of the folder it touches; without, those of every
    submission folder in the tree."""
    if not (tree / MARKER).is_file():
        return [f"{MARKER}: missing; this is not a results repository"]
    context = _Context()
    out: list[str] = []
    if changes is not None and base is not None:
        out += check_changes(changes, tree, base, author, state)
        folders = sorted({f for c in changes if (f := _folder_of(c.path)) and c.status != "deleted"})
    else:
        folders = folders_in(tree)
    for name, code_hash in folders:
        if (tree / RESULTS / name / code_hash).is_dir():
            out += check_folder(tree, name, code_hash, context)
    return out
