"""`xaibench results migrate REPO` (maintainers, once per repository made before bindings were signed): sign what
each unsigned `verifications/<name>/owner.json` says, as the first binding of its name's chain
(`verifications/<name>/bindings/1.json`, `signed_state`), in one commit.

Before this layout, the first landing and a rotation wrote `owner.json` unsigned (`bind` nested a maintainer's
signature in it); a commit to `main` could point it at any key. Migration signs nothing it cannot check:

* an `owner.json` that does not read strictly, is not a binding of its folder's name (`kind` "xaibench-name"), or
  whose `key_id` is not its key's, is left as it is (one line why);
* one a maintainer re-bound (`bind`: the nested `maintainer` signature) is signed when that signature holds under
  the maintainer keys given;
* any other (a first landing, a rotation) is signed only when the key it names signed a contribution signature on
  `main` under that name (`results/<name>/<code-hash>/signatures/`) — the pull request that landed it, or the one
  that passed the name to it; a key that never signed anything there was not bound by landing, and the name is
  left for `xaibench results bind` after the maintainer checks who holds it.

A name whose chain is signed already is skipped; `owner.json` stays where it is (files are never removed) and is
never read again. The boards never read bindings, so they are unchanged by it; pull requests under a migrated
name are judged by its signed binding from then on.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import RESULTS, VERIFICATIONS, RepositoryError, binding_path, legacy_owner_path

__all__ = ["LEGACY_KIND", "migrate"]

LEGACY_KIND = "xaibench-name"  # the kind an unsigned owner.json carried
MAX_LEGACY_BYTES = 64 << 10


def _legacy(tree: Path, name: str, keys: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(what `owner.json` of `name` binds, "") when migration may sign it (module docstring), else (None, why)."""
    from leaderboard.repository.reading import read_json
    from leaderboard.repository.signing import canonical, key_id, public_from_text

    where = legacy_owner_path(name)
    try:
        d = read_json(tree / where, where, MAX_LEGACY_BYTES)
        if not isinstance(d, dict) or d.get("kind") != LEGACY_KIND or d.get("name") != name:
            raise RepositoryError(f"{where}: not the binding of {name} (kind {LEGACY_KIND})")
        holder = key_id(public_from_text(d.get("key")))
    except RepositoryError as exc:
        return None, str(exc)
    previous = d.get("previous", [])
    if d.get("key_id") != holder or not all(isinstance(d.get(k, ""), str) for k in ("bound", "when", "hub_user",
                                                                                      "reason")) \
            or not isinstance(previous, list) or not all(isinstance(k, str) for k in previous):
        return None, f"{where}: its key_id, bound, when, previous, hub_user or reason are malformed"
    signed = d.get("maintainer")
    if signed is not None:
        key = keys.get(str(signed.get("key_id"))) if isinstance(signed, dict) else None
        body = {k: v for k, v in d.items() if k != "maintainer"}
        try:
            if key is None:
                raise ValueError("no such key")
            key.verify(base64.b64decode(str(signed.get("signature")), validate=True), canonical(body))
        except Exception:  # InvalidSignature, a bad encoding, no key
            return None, (f"{where}: a maintainer's re-binding whose signature does not hold under the maintainer keys "
                          "given (changed after it was signed, or signed by another key)")
        return d, ""
    if not _signed_here(tree, name, d["key"]):
        return None, (f"{where}: no pull request under {name} on main is signed by the key it names ({holder}); it "
                      "was not bound by a landing — check who holds the name, then `xaibench results bind`")
    return d, ""


def _signed_here(tree: Path, name: str, key: str) -> bool:
    """Whether a contribution signature under `results/<name>/` on the tree holds under `key` (`contributors`)."""
    from leaderboard.repository.contributors import SIGNATURES, read_signature
    from leaderboard.repository.reading import read_bytes, tree_files

    files, _ = tree_files(tree / RESULTS / name)
    for rel, path in files.items():
        parts = rel.split("/")
        if len(parts) == 3 and parts[1] == SIGNATURES:
            where = f"{RESULTS}/{name}/{rel}"
            try:
                if read_signature(read_bytes(path, where, MAX_LEGACY_BYTES), where).key == key:
                    return True
            except RepositoryError:
                continue
    return False


def migrate(repo: str, maintainer: Any, public_keys: dict[str, Any] | None = None,
            dry_run: bool = False) -> tuple[str | None, list[str], list[str]]:
    """Sign the unsigned bindings of `repo` (module docstring) with the maintainer's private key, believing earlier
    maintainers' signatures under its own key and `public_keys`: (the commit, or None when nothing was written or
    `dry_run`; one line per binding signed; one line per `owner.json` left, and why)."""
    from leaderboard.repository.contributors import now
    from leaderboard.repository.rerun import trusted
    from leaderboard.repository.signed_state import binding_record, of_snapshot
    from leaderboard.repository.signing import key_id
    from leaderboard.repository.targets import open_store

    keys = trusted(maintainer, public_keys)
    with open_store(repo) as store:
        tip = store.snapshot(store.tip())
        state = of_snapshot(store, tip, keys)
        root = tip / VERIFICATIONS
        names = sorted(p.parent.name for p in root.glob("*/owner.json")) if root.is_dir() else []
        files: dict[str, bytes] = {}
        done, left = [], []
        for name in names:
            if state.chains.get(name):
                continue  # signed already: owner.json is never read again
            d, why = _legacy(tip, name, keys)
            if d is None:
                left.append(why)
                continue
            path = binding_path(name, 1)
            bound = f"migrated from {legacy_owner_path(name)}: {d.get('bound') or 'bound'}"
            files[path] = binding_record(name, 1, None, d["key"], bound, d.get("when") or now(),
                                         [str(k) for k in d.get("previous", [])], maintainer,
                                         hub_user=d.get("hub_user") or None, reason=d.get("reason") or None)
            done.append(f"{name}: bound to the key {d['key_id']} ({d.get('bound')}, {d.get('when')}) — signed as {path}"
                        f" by {key_id(maintainer.public_key())}")
        if not files or dry_run:
            return None, done, left
        commit = store.commit(files, f"xaibench migrate: {len(files)} binding(s) signed")
    return commit, done, left
