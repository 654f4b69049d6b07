"""A name belongs to a key: contributors sign their pull requests, and a name is bound to the key that first
landed it (trust on first use, as SSH does) — docs/submitting.md, "Names".

**The contribution signature.** `xaibench submit` signs what it sends with the contributor's Ed25519 key
(`xaibench results keygen --contributor`; `signing`): one more file in the pull request,
`results/<name>/<code-hash>/signatures/<digest16>.json` (`signed`), holding

    {"kind": "xaibench-contribution", "layout": 1, "name", "code_hash", "files": [every other file it adds],
     "digest": layout.tree_digest of those files, "key": the public key (raw, base64), "rotations": the chain of
     keys that signed over it (`signing.rotate`), "key_id", "signature"}

signed like a verification record (`signing.sign_record`: Ed25519 over the canonical JSON of the rest).
`check_signature` holds a pull request to it: exactly one signature file, valid under the key it names, whose
`files` and `digest` are exactly the pull request's other added files.

**The binding.** `verifications/<name>/bindings/<seq>.json` (maintainers' tooling writes it; a pull request never
touches `verifications/`) names the key that holds the name, signed by the maintainer whose tooling writes it — a
chain, one file per change, each naming the one before (`signed_state`, which alone says which binding holds):
the first when the name first lands (`merge` or `verify`: `landing_binding`) with the signer's key — on the Hub also
the account that opened the pull request (`hub_user`) —, the next when the holder's key passes to a key it signed
over (a rotation: `previous` lists the keys before), or by a maintainer's `xaibench results bind` (a contributor who
lost their key: `reason` says why). A later pull request under a bound name must be signed by the bound key or one
it signed over (`holds`); a name that is held (it has folders on the default branch) but bound to no key — it
landed before contributor signatures, or its binding is not signed under the maintainers' keys — is refused until a
maintainer binds it. Copying authors, or anything else a file says, claims nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import LAYOUT_VERSION, RESULTS, RepositoryError, tree_digest

__all__ = ["SIGNATURES", "Signature", "bind", "check_signature", "holds", "is_signature", "landing_binding",
           "next_binding", "read_signature", "signed"]

SIGNATURES = "signatures"  # results/<name>/<code-hash>/signatures/<digest16>.json
KIND = "xaibench-contribution"
SIGNATURE_KEYS = {"kind", "layout", "name", "code_hash", "files", "digest", "key", "rotations", "key_id", "signature"}
MAX_META = 64 << 10


@dataclass(frozen=True)
class Signature:
    """A pull request's contribution signature, read and checked (module docstring)."""

    path: str
    name: str
    code_hash: str
    files: tuple[str, ...]
    digest: str
    key: str  # the signer's public key (`signing.public_text`)
    key_id: str
    rotations: tuple[dict[str, Any], ...]


def is_signature(rel: str) -> bool:
    """Whether `rel` is a contribution signature's path, `results/<name>/<code-hash>/signatures/<x>.json`."""
    parts = rel.split("/")
    return len(parts) == 5 and parts[0] == RESULTS and parts[3] == SIGNATURES and parts[4].endswith(".json")


def signed(files: dict[str, bytes], private: Any, rotations: list[dict[str, Any]] | None = None) -> dict[str, bytes]:
    """`files` (all in one `results/<name>/<code-hash>/` folder) with the contribution signature over them added,
    signed with `private` (module docstring)."""
    from leaderboard.repository.signing import public_text, sign_record

    folders = {tuple(p.split("/")[1:3]) for p in files}
    if len(folders) != 1 or not all(p.startswith(RESULTS + "/") for p in files):
        raise RepositoryError("a contribution signs the files of one results/<name>/<code-hash>/ folder")
    (name, code_hash), = folders
    digest = tree_digest(files)
    body = {"kind": KIND, "layout": LAYOUT_VERSION, "name": name, "code_hash": code_hash, "files": sorted(files),
            "digest": digest, "key": public_text(private.public_key()), "rotations": list(rotations or [])}
    record = sign_record(body, private)
    path = f"{RESULTS}/{name}/{code_hash}/{SIGNATURES}/{digest[:16]}.json"
    return {**files, path: (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8")}


def read_signature(data: bytes, where: str) -> Signature:
    """The contribution signature in `data`, its signature checked under the key it names; `RepositoryError`
    ("<where>: ...") when it is malformed or does not hold."""
    from leaderboard.repository.reading import loads
    from leaderboard.repository.signing import check_record, key_id, public_from_text

    d = loads(data, where, MAX_META)
    if not isinstance(d, dict) or set(d) != SIGNATURE_KEYS or d.get("kind") != KIND \
            or d.get("layout") != LAYOUT_VERSION:
        raise RepositoryError(f"{where}: not a contribution signature (the fields {', '.join(sorted(SIGNATURE_KEYS))}"
                              "); sign with `xaibench submit`")
    files, rotations = d.get("files"), d.get("rotations")
    if not (isinstance(files, list) and all(isinstance(f, str) for f in files) and isinstance(rotations, list)
            and all(isinstance(x, dict) for x in rotations) and all(isinstance(d.get(k), str) for k in
                                                                      ("name", "code_hash", "digest", "key"))):
        raise RepositoryError(f"{where}: a contribution signature's files, rotations, name, code_hash, digest and key "
                              "have the wrong types")
    try:
        key = public_from_text(d["key"])
    except RepositoryError as exc:
        raise RepositoryError(f"{where}: its key is {exc}") from None
    if d.get("key_id") != key_id(key) or not check_record(d, {key_id(key): key}):
        raise RepositoryError(f"{where}: its signature does not hold under the key it names; sign again with "
                              "`xaibench submit`")
    return Signature(where, d["name"], d["code_hash"], tuple(files), d["digest"], d["key"], d["key_id"],
                     tuple(rotations))


def check_signature(added: dict[str, bytes], folder: tuple[str, str]) -> tuple[Signature | None, list[str]]:
    """(the pull request's contribution signature, findings): `added` maps every file it adds to its bytes, all
    in `folder` = (name, code hash); exactly one signature file, valid, over exactly the other added files."""
    name, code_hash = folder
    at = f"{RESULTS}/{name}/{code_hash}/"
    sigs = sorted(p for p in added if is_signature(p))
    fix = ("send it with `xaibench submit`, which signs it with your contributor key (make one once with "
           "`xaibench results keygen --contributor`)")
    if not sigs:
        return None, [f"{at}: the pull request carries no contributor signature ({SIGNATURES}/<digest>.json); {fix}"]
    if len(sigs) > 1:
        return None, [f"{at}: the pull request carries {len(sigs)} contributor signatures; one signs it all ({fix})"]
    try:
        sig = read_signature(added[sigs[0]], sigs[0])
    except RepositoryError as exc:
        return None, [str(exc)]
    others = {p: b for p, b in added.items() if p != sigs[0]}
    out = []
    if (sig.name, sig.code_hash) != folder:
        out.append(f"{sigs[0]}: it signs results/{sig.name}/{sig.code_hash}/, not this folder")
    if sorted(others) != list(sig.files):
        out.append(f"{sigs[0]}: it signs {len(sig.files)} file(s), and the pull request adds {len(others)} others "
                   f"({', '.join(sorted(set(others) ^ set(sig.files)))[:200]} differ); {fix}")
    elif tree_digest(others) != sig.digest or not sigs[0].endswith(f"/{sig.digest[:16]}.json"):
        out.append(f"{sigs[0]}: the files it lists are not the bytes it signed (digest); {fix}")
    return (sig if not out else None), out


def holds(binding: Any, sig: Signature) -> bool:
    """Whether the signer of `sig` holds the name `binding` (`signed_state.Binding`) binds: the bound key, or one
    it signed over."""
    from leaderboard.repository.signing import rotation_holds

    return binding is not None and rotation_holds(binding.key, sig.key, list(sig.rotations))


def now() -> str:
    """The time a binding is written (UTC, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def next_binding(state: Any, name: str, key: str, bound: str, maintainer: Any, hub_user: str | None = None,
                 reason: str | None = None) -> dict[str, bytes]:
    """{path: bytes} of the binding of `name` to the contributor key `key` that follows the one `state` believes
    (`signed_state.SignedState.next_binding`), signed by the maintainer's private key; the Hub account carries over
    from the binding before unless `hub_user` names one."""
    from leaderboard.repository.layout import binding_path
    from leaderboard.repository.signed_state import binding_record

    seq, after, previous, account = state.next_binding(name)
    return {binding_path(name, seq): binding_record(name, seq, after, key, bound, now(), previous, maintainer,
                                                    hub_user=hub_user or account, reason=reason)}


def landing_binding(state: Any, name: str, sig: Signature, author: str | None, maintainer: Any) -> dict[str, bytes]:
    """The binding a pull request under `name`, signed as `sig`, writes when it lands (`merge`, `verify`): the
    signer's key binds a name no binding holds (trust on first use; on the Hub with the account that opened the pull
    request, `author`), and the name passes to a key the bound one signed over (a rotation); {} when the binding
    stands as it is. Signed by the maintainer who lands it."""
    head = state.binding(name)
    if head is None:
        return next_binding(state, name, sig.key, "first landing (trust on first use)", maintainer, hub_user=author)
    if head.key != sig.key and holds(head, sig):
        return next_binding(state, name, sig.key, f"a rotation signed by the key {head.holder}", maintainer)
    return {}


def bind(repo: str, name: str, public_key: Path, reason: str, maintainer: Any,
         public_keys: dict[str, Any] | None = None) -> tuple[str, str]:
    """A maintainer's re-binding of `name` on the results repository `repo` to the contributor key in the PEM file
    `public_key`: the next binding of its chain (believed under `maintainer`'s key and `public_keys`), signed by
    `maintainer`, `reason` in it, in one commit on the default branch: (the commit, the new key id). Refused in one
    line for a name nothing holds or a reason left empty."""
    from benchmark.submission import NAME_RE
    from leaderboard.repository.layout import legacy_owner_path
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.signing import key_id, load_public_keys, public_text
    from leaderboard.repository.targets import open_store

    if not NAME_RE.match(name):
        raise RepositoryError(f"'{name}' is not a submission name (lower-case letters, digits and '-')")
    if not reason.strip():
        raise RepositoryError("--reason is empty; say why the name is re-bound (it stays in the record)")
    (kid, key), = load_public_keys([Path(public_key)]).items()
    trust = {**(public_keys or {}), key_id(maintainer.public_key()): maintainer.public_key()}
    with open_store(repo) as store:
        tip = store.snapshot(store.tip())
        state = of_snapshot(store, tip, trust)
        if not (tip / RESULTS / name).is_dir() and state.binding(name) is None and name not in state.disputed \
                and not (tip / legacy_owner_path(name)).is_file():
            raise RepositoryError(f"{store.where} holds no submission named {name}; a new name is bound by its first "
                                  "pull request (nothing was written)")
        files = next_binding(state, name, public_text(key), "re-bound by a maintainer", maintainer,
                             reason=" ".join(reason.split()))
        commit = store.commit(files, f"xaibench bind {name} to the key {kid}: {reason[:80]}")
    return commit, kid
