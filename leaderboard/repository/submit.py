"""`xaibench submit SUBMISSION --to REPO`: carry a submission's Results to a results repository as a pull
request (docs/submitting.md).

1. `xaibench check` on the submission (sandboxed); a failed check sends nothing;
2. gather its complete Results for its current code hash (default parameters) from the results folder:
   a Result whose signature does not hold here (changed after it was written, or not written here) or a
   half-written file of the submission stops the submission;
3. lay them out (`layout`: `submission.json`, `source/`, the Result files), sign the files the base branch
   lacks with the contributor's key (`contributors.signed`: the name is bound to that key when it first lands)
   and validate them locally with the validator CI runs, on the base branch plus these files;
4. open a pull request of one commit with those files and their signature — unless the base holds them all,
   or a pull request of exactly these files is open already (resubmitting opens nothing new); files the base
   holds with other content are a conflict, and nothing is sent. Without a contributor key nothing is sent.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import (SUBMISSION_JSON, RepositoryError, blob_id, parse_result_path,
                                           result_path_of, sha256, source_files, submission_dir, submission_json)

__all__ = ["Outcome", "gather", "package", "submit"]


@dataclass
class Outcome:
    """What `submit` did: `files` (path → bytes, all that make up the submission), `sent` (the paths in the
    pull request; [] when nothing was sent), where it went (or already is) and one line saying so."""

    files: dict[str, bytes]
    sent: list[str] = field(default_factory=list)
    where: str = ""
    message: str = ""
    target: str = ""  # REPO@REF of the pull request it opened, ready to paste into `xaibench results ...`
    # Results left out: the default branch holds a Result of the same code at their paths (a maintainer's run of a
    # built-in floor, or an earlier landing); a repository's files are never replaced, so they are not sent
    left_out: list[str] = field(default_factory=list)


def gather(sub: Any, results_dir: Path) -> dict[str, bytes]:
    """Repository path → bytes of every complete, default-parameter Result of `sub` at its current hash under
    `results_dir` (the newest per board; a companion run — on a randomised or hidden copy of the model — is never
    sent); `RepositoryError` for a dirty or half-written one, or none."""
    from benchmark.store.results import Result
    from leaderboard.companions import kind_of

    code_hash = sub.hash
    chosen: dict[str, tuple[str, bytes]] = {}
    for path in sorted(Path(results_dir).rglob("*.json")):
        mine = path.stem == sub.name or path.stem.startswith(sub.name + "@")
        try:
            r = Result.load(path)
        except XaibenchError as exc:
            if mine:
                raise RepositoryError(f"{path} is half-written or damaged ({' '.join(str(exc).split())[:120]}); "
                                      f"re-run `xaibench evaluate` for it (nothing was sent)") from None
            continue
        if (r.submission.get("base") or r.submission["name"]) != sub.name or r.submission["hash"] != code_hash:
            continue
        if r.resource.get("split") != _evaluation_split(r.track):
            continue  # another split (`evaluate --split train`): a repository holds the evaluation split only
        if r.status != "signed":
            why = "changed after it was written" if r.status == "modified" else "not written by xaibench here"
            raise RepositoryError(f"{path} is {why}; re-run `xaibench evaluate` for it (nothing was sent)")
        if r.submission["name"] != sub.name or r.coverage.get("complete") is not True:
            continue  # non-default parameters, or a --limit run: not sent
        if kind_of(r) is not None:
            continue  # a companion run (randomised model, hidden copy): the maintainer's re-run makes and signs its own
        rel = result_path_of(r).rel
        if rel not in chosen or r.created > chosen[rel][0]:
            chosen[rel] = (r.created, path.read_bytes())
    if not chosen:
        raise RepositoryError(f"no complete Result of {sub.name} for its current code hash {code_hash} under "
                              f"{results_dir}; run `xaibench evaluate {sub.path} --track <track>` without --limit")
    return {rel: data for rel, (_, data) in sorted(chosen.items())}


def _evaluation_split(track: str) -> str | None:
    from benchmark.tracks import get_track

    try:
        return get_track(track).default_split
    except XaibenchError:
        return None


def package(sub: Any, results_dir: Path) -> dict[str, bytes]:
    """Every file the submission adds to the repository (`layout`)."""
    import json

    from benchmark.submission import is_builtin

    folder = submission_dir(sub.name, sub.hash)
    meta = submission_json(sub, builtin=is_builtin(sub))
    files = {f"{folder}/{SUBMISSION_JSON}": (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode("utf-8")}
    files.update({f"{folder}/{rel}": data for rel, data in source_files(sub).items()})
    files.update(gather(sub, results_dir))
    return files


def _validate_locally(store: Any, files: dict[str, bytes]) -> None:
    """The validator CI runs, on the base branch with `files` added; `RepositoryError` on any finding. Who holds a
    name is judged where the maintainers' public keys are configured here (`signing.load_public_keys`); without
    them it is left to CI and the maintainer, who judge it by the bindings the maintainers signed."""
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.signing import load_public_keys
    from leaderboard.repository.validate import diff_trees, validate

    base = store.snapshot()
    keys = load_public_keys()
    staged = store.tmp / "staged"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(base, staged)
    for rel, data in files.items():
        (staged / rel).parent.mkdir(parents=True, exist_ok=True)
        (staged / rel).write_bytes(data)
    findings = validate(staged, base, diff_trees(base, staged), state=of_snapshot(store, base, keys) if keys else None)
    if findings:
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise RepositoryError(f"local validation fails: {findings[0]}{more}; nothing was sent")


def submit(submission: str | Path, to: str, *, results_dir: Path | None = None, dry_run: bool = False,
           client: Any = None, check: bool = True, sandbox: str = "auto", key: Path | None = None) -> Outcome:
    """The steps of the module docstring; `client` replaces `HfApi()` for a Hub target; `key` is the
    contributor's private key (default `$XAIBENCH_HOME/keys/contributor.key`, with the rotations beside it)."""
    from benchmark.resources.store import data_home
    from benchmark.submission import get_submission
    from leaderboard.repository.contributors import signed
    from leaderboard.repository.signing import ROLES, ROTATIONS, default_key_dir, load_private_key, load_rotations
    from leaderboard.repository.targets import open_store, split_ref

    key_file = Path(key) if key is not None else default_key_dir() / ROLES["contributor"][0]
    private = load_private_key(key_file, role="contributor")
    rotations = load_rotations(key_file.parent / ROTATIONS)
    sub = get_submission(submission)
    if check:
        from benchmark.check import check_submission

        _, rows = check_submission(sub.path, sandbox=sandbox)
        failed = [r for r in rows if r.ok is False]
        if failed:
            raise RepositoryError(f"`xaibench check {sub.path}` fails ({failed[0].check} on {failed[0].model}: "
                                  f"{failed[0].detail}); fix it first (nothing was sent)")
    files = package(sub, Path(results_dir) if results_dir else data_home() / "results")
    repo, ref = split_ref(to)
    if ref is not None:
        raise RepositoryError(f"--to {to}: submit to the repository itself; the pull request is based on its "
                              "default branch")
    with open_store(repo, client) as store:
        absent, other = store.differing(files)
        held = [p for p in other if parse_result_path(p) is not None]  # a Result of this code there already
        if len(held) < len(other):
            first = next(p for p in other if p not in held)
            raise RepositoryError(f"{store.where} already holds {first} with other content on {store.base}; "
                                  "the repository's files are never replaced — bump the version or ask a "
                                  "maintainer (nothing was sent)")
        out = Outcome({p: b for p, b in files.items() if p not in held}, left_out=held)
        kept = (f"; {len(held)} Result(s) left out: {store.base} holds a Result of this code at their paths "
                f"already ({held[0]}{', …' if len(held) > 1 else ''})") if held else ""
        if not absent:
            out.where, out.message = store.where, (f"nothing new: {store.where} ({store.base}) holds every file "
                                                   f"already{kept}")
            return out
        proposal = f"{sub.name}/{sub.hash}/" + sha256("".join(f"{p}\0{blob_id(files[p])}\n" for p in absent)
                                                    .encode())[:12]
        found = store.find_proposal(proposal)
        if found:
            out.where, out.message = found, f"nothing new: already proposed at {found}"
            return out
        sending = signed({p: files[p] for p in absent}, private, rotations)
        out.files = {**files, **sending}
        _validate_locally(store, sending)
        results = sum(1 for p in sending if parse_result_path(p))
        title = f"xaibench submit {sub.name} {sub.version} ({sub.hash}): {results} Result(s)"
        if dry_run:
            out.where, out.message = store.where, f"dry run: would open a pull request on {store.where} ({title})"
            out.sent = sorted(sending)
            return out
        out.where, ref = store.propose(sending, title, proposal)
        out.target = f"{repo}@{ref}"
        out.sent, out.message = sorted(sending), f"opened a pull request: {out.where}; validate it with `xaibench " \
                                                 f"results validate {out.target}`{kept}"
        return out
