"""Verification records signed with Ed25519 (`cryptography`): a signature anyone can check with the public
key, unlike the machine-local HMAC of `benchmark.integrity`, which says only "unchanged here".

Keys (`xaibench results keygen`): `verifier.key` (PKCS#8 PEM, mode 0600; the private key, kept on the
maintainer's machine and refused inside a git work tree) and `verifier.pub` (SubjectPublicKeyInfo PEM), by
default under `$XAIBENCH_HOME/keys/`. Boards trust the public keys given with `--public-key`, else those
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
           "sign_record"]

PRIVATE, PUBLIC = "verifier.key", "verifier.pub"


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


def keygen(out: Path | None = None, overwrite: bool = False) -> tuple[Path, Path, str]:
    """Make a key pair in `out` (default `default_key_dir()`): (private file, public file, key id)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    out = Path(out) if out is not None else default_key_dir()
    repo = _inside_git_work_tree(out.resolve())
    if repo is not None:
        raise RepositoryError(f"{out} lies in the git work tree {repo}; keep the private key out of every "
                              "repository (default: $XAIBENCH_HOME/keys)")
    private, public = out / PRIVATE, out / PUBLIC
    if private.exists() and not overwrite:
        raise RepositoryError(f"{private} exists; give another --out or --overwrite (records signed with the old "
                              "key then need the old public key to check)")
    key = Ed25519PrivateKey.generate()
    out.mkdir(parents=True, exist_ok=True)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public, key_id(key.public_key())


def load_private_key(path: Path | None = None) -> Any:
    """The Ed25519 private key at `path` (default `default_key_dir()/verifier.key`)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path) if path is not None else default_key_dir() / PRIVATE
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except FileNotFoundError:
        raise RepositoryError(f"no signing key at {path}; make one with `xaibench results keygen`") from None
    except (ValueError, TypeError) as exc:
        raise RepositoryError(f"{path} is not a PEM private key ({exc}); make one with `xaibench results keygen`") \
            from None
    if not isinstance(key, Ed25519PrivateKey):
        raise RepositoryError(f"{path} is not an Ed25519 key; make one with `xaibench results keygen`")
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
