"""Rounds of hidden copies in a results repository (issue #50): one secret per round, committed to when the round
starts, revealed when it ends, so that anyone can rebuild the copies and re-check the signed hidden scores.

Files (docs/submitting.md, "Rounds"):

    rounds/<NAME>/round.json    {layout, kind "xaibench-round", round, commitment, draws, started, key_id, signature}
                                the maintainer's signed start (`start`): commitment = sha256 of the secret (hex)
    rounds/<NAME>/secret.json   {layout, kind "xaibench-round-secret", round, secret (64 hex), revealed}
                                the revealed secret (`reveal`); it proves itself: its sha256 is the commitment
    <key folder>/rounds/<NAME>.secret   the secret (64 hex, mode 0600) beside the maintainer's verifier.key —
                                never in a repository (refused inside a git work tree), never overwritten

Neither file is ever replaced, and a pull request cannot add either (`validate`: results/ only).

**Which rounds count** is `signed_state`'s to say, as for every signed file: a `round.json` counts only when it
reads strictly, its signature holds under the keys given (the maintainer's own key for `verify`, `rehide` and
`reveal`; the configured public keys for the boards, `round list` and `audit`), it names its own folder, and its
commitment and draws are well formed; a round is revealed only when `secret.json` holds a secret that hashes to
that signed commitment (the reveal proves itself); any other file under `rounds/` is listed and left out.

**The current round** is the newest started (`started`, then the name); it is *open* until it is revealed. A
repository whose newest round is revealed has no open round: `verify` and `rehide` refuse (one line, nothing
signed) until `round start` makes a new one. Starting a round while an older one is open closes nothing: the
older one stays unrevealed (its secret kept) until `reveal`, and verification draws from the new one. A repository
that has never started a round does not use hidden copies: `verify` signs its records without hidden runs and
says so in them (`hidden_not_run`).

**A lost or changed secret.** Before anything is signed, the secret file's sha256 must equal the round's
commitment (`load_secret`): a missing file, or one whose hash differs, is one line naming the file and the
round, and nothing is signed or revealed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets as _secrets
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import LAYOUT_VERSION, ROUNDS, RepositoryError, round_path, secret_path
from leaderboard.repository.signed_state import MAX_DRAWS, ROUND_KIND, SECRET_KIND, RoundFile, round_name_ok

# RoundFile, round_name_ok: `signed_state`; ROUNDS, round_path, secret_path: `layout`
__all__ = ["ROUNDS", "RoundFile", "load_secret", "make_secret", "newest", "read_secret_file", "reveal",
           "round_name_ok", "round_path", "secret_file", "secret_path", "start", "states"]

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _own(private: Any) -> dict[str, Any]:
    from leaderboard.repository.signing import key_id

    return {key_id(private.public_key()): private.public_key()}


def newest(rounds: dict[str, RoundFile]) -> RoundFile | None:
    """The current round: the newest started (`started`, then the name); None when there is none. It is open
    unless `revealed`."""
    return max(rounds.values(), key=lambda r: (r.started, r.name), default=None)


def states(rounds: dict[str, RoundFile]) -> dict[str, str]:
    """name → "open" (the current round, not revealed), "closed, not revealed" (an older one) or "revealed" (its
    secret hashes to its commitment: nothing else reveals a round)."""
    current = newest(rounds)
    return {r.name: "revealed" if r.revealed else "open" if r is current else "closed, not revealed"
            for r in rounds.values()}


def secret_file(key_dir: Path, name: str) -> Path:
    """Where the maintainer keeps round `name`'s secret: `<key folder>/rounds/<name>.secret`."""
    return Path(key_dir) / ROUNDS / f"{name}.secret"


def make_secret(key_dir: Path, name: str, secret: bytes | None = None) -> Path:
    """A new secret for round `name` (32 random bytes as hex, or `secret` when given — a rebuild that must draw the
    same copies; mode 0600, written atomically); refused inside a git work tree (like the signing key) and when the
    file exists (a secret is never overwritten)."""
    from leaderboard.repository.signing import _inside_git_work_tree

    path = secret_file(key_dir, name)
    repo = _inside_git_work_tree(path.parent.resolve())
    if repo is not None:
        raise RepositoryError(f"{path.parent} lies in the git work tree {repo}; keep round secrets with the private "
                              "key, out of every repository (default: $XAIBENCH_HOME/keys/rounds)")
    if path.exists():
        raise RepositoryError(f"{path} exists (round {name} was started with this key before); a secret is never "
                              "overwritten: choose another round name")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write((secret.hex() if secret is not None else _secrets.token_hex(32)) + "\n")
        os.chmod(tmp, 0o600)
        os.link(tmp, path)  # never replaces a file another process made meanwhile
    except FileExistsError:
        raise RepositoryError(f"{path} appeared meanwhile; a secret is never overwritten") from None
    finally:
        os.unlink(tmp)
    return path


def read_secret_file(path: Path) -> bytes:
    """A round secret given on the command line (`round start --secret-file`): 64 hex digits (a round's own
    `<key folder>/rounds/<name>.secret`, or `secrets.token_hex(32)`); `RepositoryError` naming the file otherwise."""
    try:
        text = Path(path).read_text().strip()
    except OSError as exc:
        raise RepositoryError(f"--secret-file {path} does not read ({exc.strerror}); nothing was written") from None
    if not _HEX64.match(text):
        raise RepositoryError(f"--secret-file {path} is not 64 hex digits (32 bytes, e.g. `python -c 'import secrets; "
                              "print(secrets.token_hex(32))'`); nothing was written")
    return bytes.fromhex(text)


def load_secret(key_dir: Path, rnd: RoundFile, then: str) -> Any:
    """Round `rnd`'s `benchmark.models.variants.hidden.Round`, its secret read from `secret_file` and checked against
    the round's commitment; `RepositoryError` ("... ; <then>") naming the file when it is lost or changed."""
    from benchmark.models.variants.hidden import Round

    path = secret_file(key_dir, rnd.name)
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        raise RepositoryError(f"the secret of round {rnd.name} is not at {path} (lost?): restore it from a backup, "
                              f"or start a new round (`xaibench results round start`); {then}") from None
    except OSError as exc:
        raise RepositoryError(f"{path} does not read ({exc.strerror}); {then}") from None
    got = hashlib.sha256(bytes.fromhex(text)).hexdigest() if _HEX64.match(text) else None
    if got != rnd.commitment:
        said = "is not 64 hex digits" if got is None else f"hashes to {got[:16]}…"
        raise RepositoryError(f"{path} {said}, and round {rnd.name} committed to {rnd.commitment[:16]}…: the secret "
                              f"changed; restore it from a backup, or start a new round; {then}")
    return Round(rnd.name, bytes.fromhex(text))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _dump(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8")


def start(repo: str, name: str, draws: int, private: Any, key_dir: Path,
          secret: bytes | None = None) -> tuple[str, str, list[str]]:
    """Start round `name` on `repo` (module docstring): a new secret in `key_dir` (`secret` when given: 32 bytes),
    then `rounds/<name>/round.json` signed by `private` in one commit on the default branch. (the commit, the
    commitment, the older rounds still open). The secret is removed again when nothing landed."""
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.signing import sign_record
    from leaderboard.repository.targets import open_store

    if not round_name_ok(name):
        raise RepositoryError(f"round name {name!r} must be 1–64 letters, digits, '.', '_' or '-' (starting with a "
                              "letter or digit)")
    if isinstance(draws, bool) or not 1 <= draws <= MAX_DRAWS:
        raise RepositoryError(f"--draws must be 1 to {MAX_DRAWS}, got {draws}")
    if secret is not None and len(secret) != 32:
        raise RepositoryError(f"a round's secret is 32 bytes, got {len(secret)}")
    with open_store(repo) as store:
        tip = store.snapshot(store.tip())
        state = of_snapshot(store, tip, _own(private))
        if (tip / ROUNDS / name).exists() or name in state.missing_rounds:
            raise RepositoryError(f"{store.where} holds a round {name} already (or held it: its records name it); a "
                                  "round name is used once (nothing was written)")
        rounds = state.rounds
        path = make_secret(key_dir, name, secret)
        try:
            secret = bytes.fromhex(path.read_text().strip())
            commitment = hashlib.sha256(secret).hexdigest()
            record = sign_record({"layout": LAYOUT_VERSION, "kind": ROUND_KIND, "round": name,
                                  "commitment": commitment, "draws": draws, "started": _now()}, private)
            commit = store.commit({round_path(name): _dump(record)}, f"xaibench round {name} starts ({draws} "
                                                                     f"draws; commitment {commitment[:16]})")
        except BaseException:
            path.unlink()  # nothing committed to it
            raise
    return commit, commitment, sorted(r.name for r in rounds.values() if not r.revealed)


def reveal(repo: str, name: str, private: Any, key_dir: Path) -> str:
    """Reveal round `name` of `repo`: `rounds/<name>/secret.json` in one commit, after the kept secret is checked
    against the commitment the round signed (`load_secret`); refused when the round is not this key's or is
    revealed already — a `secret.json` there that does not hash to the commitment reveals nothing, and is replaced.
    Returns the commit."""
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.targets import open_store

    with open_store(repo) as store:
        tip = store.snapshot(store.tip())
        rnd = of_snapshot(store, tip, _own(private)).rounds.get(name)
        if rnd is None:
            raise RepositoryError(f"{store.where} holds no round {name} signed by this key ({round_path(name)}); "
                                  "nothing was revealed")
        if rnd.revealed:
            raise RepositoryError(f"round {name} is revealed already ({secret_path(name)}); nothing was written")
        secret = load_secret(key_dir, rnd, "nothing was revealed").secret
        data = _dump({"layout": LAYOUT_VERSION, "kind": SECRET_KIND, "round": name, "secret": secret.hex(),
                      "revealed": _now()})
        return store.commit({secret_path(name): data}, f"xaibench round {name} revealed")
