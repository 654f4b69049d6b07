"""Result signatures: a Result file the harness wrote can be told apart from one changed afterwards.

Only the harness signs. `Result.save` signs every file it writes with a per-machine secret key, kept at
`data_home()/keys/results.key` (32 random bytes, mode 0600, created on first use; submissions never
see it once they run in their own worker). The signature is HMAC-SHA256 over the *canonical JSON* of
the result dict without `integrity.signature`: `json.dumps(d, sort_keys=True, separators=(",", ":"))`,
UTF-8 encoded. `integrity.key_id` — a fingerprint of the key (`sha256(b"xaibench-result-key\\0" +
key)`, first 16 hex digits; it does not reveal the key) — is part of the signed dict and says which
machine's key signed the file.

`check(d)` (on the dict exactly as read from the file) answers one of three words:

* ``"signed"``   — a signature is present, its `key_id` is this machine's key and the HMAC matches:
  the file is byte-for-byte (canonically) what the harness wrote here.
* ``"modified"`` — a signature is present and claims this machine's key (or names no key), but the
  HMAC does not match: the file was changed after it was written, or forged.
* ``"unsigned"`` — no signature (a schema-1 file, a hand-made file), or a signature made under
  another key (a result copied from another machine, or no key exists here yet): it cannot be
  checked here. Boards show such results marked "unverified"; the static (HTML) board leaves them
  out. Note that whoever edits a file can always strip its signature or change its `key_id`, which
  turns "modified" into "unsigned" — never into "signed"; that is why only "signed" results are
  published.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from benchmark.errors import ResultError

__all__ = ["KEY_BYTES", "canonical", "check", "key_id", "key_path", "result_key", "sign"]

KEY_BYTES = 32
_ID_PREFIX = b"xaibench-result-key\0"


def key_path() -> Path:
    """`data_home()/keys/results.key` (follows `$XAIBENCH_HOME`)."""
    from benchmark.resources.store import data_home

    return data_home() / "keys" / "results.key"


def _read_key(path: Path) -> bytes:
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise ResultError(
            f"result key {path} holds {len(key)} bytes, not {KEY_BYTES}; it is damaged. Delete it (results "
            f"signed with it will then show as unverified) and re-run `xaibench evaluate` to sign new ones"
        )
    return key


def result_key(create: bool = True) -> bytes | None:
    """This machine's result-signing key; created (atomically, mode 0600) when missing and `create`.

    Creation is race-free: the key is written to a private temp file in the keys folder and hard-linked
    to its final name, which fails if another process got there first — then that process's key is
    used. Returns None when there is no key and `create` is False.
    """
    path = key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(path.parent, 0o700)
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results.key.")  # mode 0600 by mkstemp
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(KEY_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # atomic, never replaces an existing key
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: rename (last writer wins, still atomic)
            if not path.exists():
                os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return _read_key(path)


def key_id(key: bytes) -> str:
    """A public fingerprint of `key`: 16 hex digits of sha256(prefix + key)."""
    return hashlib.sha256(_ID_PREFIX + key).hexdigest()[:16]


def canonical(d: dict[str, Any]) -> bytes:
    """The signed bytes: `d` without `integrity.signature`, as sorted, compact JSON (UTF-8)."""
    d = copy.deepcopy(d)
    integrity = d.get("integrity")
    if isinstance(integrity, dict):
        integrity.pop("signature", None)
    return json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _mac(key: bytes, d: dict[str, Any]) -> str:
    return hmac.new(key, canonical(d), hashlib.sha256).hexdigest()


def sign(d: dict[str, Any]) -> str:
    """Set `d["integrity"]["key_id"]` to this machine's key and return the signature of `d`.

    The caller stores the returned value as `d["integrity"]["signature"]` (`Result.save` does)."""
    key = result_key(create=True)
    assert key is not None
    integrity = d.setdefault("integrity", {})
    if not isinstance(integrity, dict):
        raise ResultError("result field 'integrity' must be an object")
    integrity["key_id"] = key_id(key)
    return _mac(key, d)


def check(d: dict[str, Any]) -> str:
    """"signed", "modified" or "unsigned" for the result dict `d` as read from its file (see above)."""
    integrity = d.get("integrity") if isinstance(d, dict) else None
    if not isinstance(integrity, dict):
        return "unsigned"
    signature = integrity.get("signature")
    if not isinstance(signature, str) or not signature:
        return "unsigned"
    key = result_key(create=False)
    if key is None:
        return "unsigned"
    claimed = integrity.get("key_id")
    if claimed is not None and claimed != key_id(key):
        return "unsigned"
    return "signed" if hmac.compare_digest(signature, _mac(key, d)) else "modified"
