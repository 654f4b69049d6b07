"""Verification records signed with Ed25519 (`cryptography`): a signature anyone can check with the public
key, unlike the machine-local HMAC of `benchmark.store.integrity`, which says only "unchanged here".

Keys (`xaibench results keygen`): `verifier.key` (PKCS#8 PEM, mode 0600; the private key, kept on the
maintainer's machine and refused inside a git work tree) and `verifier.pub` (SubjectPublicKeyInfo PEM), by
default under `$XAIBENCH_HOME/keys/`. A contributor's pair (`keygen --contributor`: `contributor.key`,
`contributor.pub`) is made the same way; it signs the contributor's pull requests (`contributors`). Making a new
contributor pair over an old one (`--overwrite`) has the old key sign over the new one first (`rotate`: one
more entry of `contributor.rotations.json`, the chain from the first key to the newest), so a name bound to
the old key passes to the new one. Boards trust the public keys given with `--public-key`, else those
listed in `$XAIBENCH_VERIFIER_KEYS` (paths separated by `os.pathsep`), else `$XAIBENCH_HOME/keys/verifier.pub`.

A record is a JSON object; its `signature` is base64 Ed25519 over the canonical JSON of the object without
`signature` (sorted keys, compact separators, UTF-8), and `key_id` (part of the signed object) is the first 16
hex digits of sha256 of the raw 32-byte public key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import RepositoryError

__all__ = ["canonical", "check_record", "default_key_dir", "keygen", "load_private_key", "load_public_keys",
           "load_rotations", "public_from_text", "public_text", "rotation_holds", "sign_record"]

PRIVATE, PUBLIC = "verifier.key", "verifier.pub"
ROLES = {"verifier": (PRIVATE, PUBLIC), "contributor": ("contributor.key", "contributor.pub")}
ROTATIONS = "contributor.rotations.json"  # beside a contributor key: the chain of keys that signed over it


def default_key_dir() -> Path:
    """`$XAIBENCH_HOME/keys`."""
    from benchmark.resources.store import data_home

    return data_home() / "keys"


def _inside_git_work_tree(path: Path) -> Path | None:
    for p in [path, *path.parents]:
        if (p / ".git").exists():
            return p
    return None


def key_id(public: Any) -> str:
    """16 hex digits of sha256 of the raw public key."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def keygen(out: Path | None = None, overwrite: bool = False, role: str = "verifier") -> tuple[Path, Path, str]:
    """Make a key pair of `role` ("verifier" or "contributor", `ROLES`) in `out` (default `default_key_dir()`):
    (private file, public file, key id). A contributor pair made over an old one is signed over by it first
    (`rotate`)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    out = Path(out) if out is not None else default_key_dir()
    repo = _inside_git_work_tree(out.resolve())
    if repo is not None:
        raise RepositoryError(f"{out} lies in the git work tree {repo}; keep the private key out of every "
                              "repository (default: $XAIBENCH_HOME/keys)")
    names = ROLES[role]
    private, public = out / names[0], out / names[1]
    if private.exists() and not overwrite:
        raise RepositoryError(f"{private} exists; give another --out or --overwrite (records signed with the old "
                              "key then need the old public key to check)")
    key = Ed25519PrivateKey.generate()
    if role == "contributor" and private.exists():
        rotate(load_private_key(private), key, out / ROTATIONS)
    out.mkdir(parents=True, exist_ok=True)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    tmp = private.with_name(f".{private.name}.new")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    os.replace(tmp, private)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public, key_id(key.public_key())


def public_text(public: Any) -> str:
    """A public key as its raw 32 bytes in base64 (how records and contributions carry it)."""
    from cryptography.hazmat.primitives import serialization

    return base64.b64encode(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)) \
        .decode("ascii")


def public_from_text(text: Any) -> Any:
    """The Ed25519 public key written by `public_text`; `RepositoryError` when `text` is none."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        raw = base64.b64decode(str(text), validate=True)
        if len(raw) != 32:
            raise ValueError("not 32 bytes")
        return Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, TypeError) as exc:
        raise RepositoryError(f"not an Ed25519 public key in base64 ({exc})") from None


def _rotation_body(new_key: str) -> bytes:
    return canonical({"kind": "xaibench-key-rotation", "key": new_key})


def rotate(old: Any, new: Any, chain_file: Path) -> None:
    """Append to `chain_file` the old key's signature over the new public key (atomically)."""
    chain = load_rotations(chain_file)
    new_key = public_text(new.public_key())
    chain.append({"key": new_key, "by": key_id(old.public_key()),
                  "signature": base64.b64encode(old.sign(_rotation_body(new_key))).decode("ascii")})
    chain_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = chain_file.with_name(f".{chain_file.name}.new")
    tmp.write_text(json.dumps(chain, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, chain_file)


def load_rotations(chain_file: Path) -> list[dict[str, str]]:
    """The rotation chain kept beside a contributor key ([] when there is none)."""
    try:
        chain = json.loads(Path(chain_file).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise RepositoryError(f"{chain_file} does not read ({exc}); it is the chain of your contributor keys") \
            from None
    if not isinstance(chain, list) or not all(isinstance(x, dict) for x in chain):
        raise RepositoryError(f"{chain_file} is not a list of key rotations")
    return chain


def rotation_holds(bound: str, signer: str, chain: Any) -> bool:
    """Whether the key `signer` (`public_text`) is the key `bound` or one it signed over, through the rotations
    of `chain` in order (each signed by the key before it)."""
    from cryptography.exceptions import InvalidSignature

    if signer == bound:
        return True
    current = bound
    for link in chain if isinstance(chain, list) else []:
        if not isinstance(link, dict) or not isinstance(link.get("key"), str):
            return False
        try:
            old = public_from_text(current)
            if link.get("by") != key_id(old):
                continue  # a link of an older part of the chain, signed before `bound` held the name
            old.verify(base64.b64decode(str(link.get("signature")), validate=True), _rotation_body(link["key"]))
        except (RepositoryError, InvalidSignature, ValueError):
            return False
        current = link["key"]
        if current == signer:
            return True
    return False


def load_private_key(path: Path | None = None, role: str = "verifier") -> Any:
    """The Ed25519 private key at `path` (default `default_key_dir()/verifier.key`, or `contributor.key` for
    `role` "contributor")."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path) if path is not None else default_key_dir() / ROLES[role][0]
    make = "`xaibench results keygen" + (" --contributor`" if role == "contributor" else "`")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except FileNotFoundError:
        raise RepositoryError(f"no signing key at {path}; make one with {make}") from None
    except (ValueError, TypeError) as exc:
        raise RepositoryError(f"{path} is not a PEM private key ({exc}); make one with {make}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise RepositoryError(f"{path} is not an Ed25519 key; make one with {make}")
    return key


def load_public_keys(paths: list[Path] | None = None) -> dict[str, Any]:
    """key id → Ed25519 public key, from `paths`, else `$XAIBENCH_VERIFIER_KEYS`, else the default public key
    when it exists ({} when none is configured: every row is then self-reported)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not paths:
        env = os.environ.get("XAIBENCH_VERIFIER_KEYS", "")
        paths = [Path(p) for p in env.split(os.pathsep) if p] or [p for p in [default_key_dir() / PUBLIC]
                                                                  if p.is_file()]
    keys = {}
    for p in paths:
        try:
            key = serialization.load_pem_public_key(Path(p).read_bytes())
        except (OSError, ValueError) as exc:
            raise RepositoryError(f"public key {p} does not read ({exc}); give the verifier.pub of "
                                  "`xaibench results keygen`") from None
        if not isinstance(key, Ed25519PublicKey):
            raise RepositoryError(f"public key {p} is not an Ed25519 key")
        keys[key_id(key)] = key
    return keys


def canonical(record: dict[str, Any]) -> bytes:
    """The signed bytes: `record` without `signature`, sorted compact JSON, UTF-8."""
    body = {k: v for k, v in record.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign_record(record: dict[str, Any], private: Any) -> dict[str, Any]:
    """`record` with `key_id` and `signature` set."""
    signed = {**record, "key_id": key_id(private.public_key())}
    signed["signature"] = base64.b64encode(private.sign(canonical(signed))).decode("ascii")
    return signed


def check_record(record: Any, keys: dict[str, Any]) -> bool:
    """Whether `record` carries a valid signature under one of `keys` (by its `key_id`)."""
    from cryptography.exceptions import InvalidSignature

    if not isinstance(record, dict) or not isinstance(record.get("signature"), str):
        return False
    key = keys.get(str(record.get("key_id")))
    if key is None:
        return False
    try:
        key.verify(base64.b64decode(record["signature"], validate=True), canonical(record))
    except (InvalidSignature, ValueError):
        return False
    return True
