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

**Which rounds count.** A `round.json` counts only when it reads strictly, its signature holds under the keys
given (the maintainer's own key for `verify`, `rehide` and `reveal`; the configured public keys for the boards and
`audit`), it names its own folder, and its commitment and draws are well formed; any other file under `rounds/`
is listed and left out (`read_rounds`).

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
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import LAYOUT_VERSION, RepositoryError

__all__ = ["ROUNDS", "RoundFile", "load_secret", "make_secret", "newest", "read_rounds", "reveal", "round_path",
           "read_secret_file", "secret_file", "secret_path", "start", "states"]

ROUNDS = "rounds"
ROUND_KIND, SECRET_KIND = "xaibench-round", "xaibench-round-secret"
ROUND_KEYS = {"layout", "kind", "round", "commitment", "draws", "started", "key_id", "signature"}
MAX_ROUND_BYTES = 64 << 10
MAX_DRAWS = 100
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class RoundFile:
    """One round a repository holds signed (module docstring); `secret` once revealed (None before), as read —
    whether it matches `commitment` is `audit`'s finding."""

    name: str
    commitment: str
    draws: int
    started: str
    revealed: bool = False
    secret: bytes | None = None


def round_path(name: str) -> str:
    """`rounds/<name>/round.json`."""
    return f"{ROUNDS}/{name}/round.json"


def secret_path(name: str) -> str:
    """`rounds/<name>/secret.json` (the revealed secret)."""
    return f"{ROUNDS}/{name}/secret.json"


def _name_ok(name: str) -> bool:
    """Whether `name` is a round id (`benchmark.models.variants.hidden.Round`: also a plain folder name)."""
    from benchmark.errors import XaibenchError
    from benchmark.models.variants.hidden import Round

    try:
        Round(name, bytes(32))
    except XaibenchError:
        return False
    return True


def read_rounds(tree: Path, keys: dict[str, Any]) -> tuple[dict[str, RoundFile], list[str]]:
    """(name → round, problem lines) of the checkout `tree`: the rounds that count under `keys` (module
    docstring); every other file under `rounds/` is one listed line."""
    from leaderboard.repository.reading import read_json, tree_files
    from leaderboard.repository.signing import check_record

    files, bad = tree_files(tree / ROUNDS)
    problems = [f"{ROUNDS}/{b}; left out" for b in bad]
    out: dict[str, RoundFile] = {}
    for rel in sorted(files):
        name, _, leaf = rel.partition("/")
        if leaf == "secret.json" and (name + "/round.json") in files:
            continue  # read with its round
        where = f"{ROUNDS}/{rel}"
        if leaf != "round.json" or not _name_ok(name):
            problems.append(f"{where}: not a round file (rounds/<NAME>/round.json or secret.json); left out")
            continue
        try:
            d = read_json(tree / where, where, MAX_ROUND_BYTES)
        except RepositoryError as exc:
            problems.append(f"{exc}; left out")
            continue
        draws = d.get("draws") if isinstance(d, dict) else None
        if not isinstance(d, dict) or set(d) != ROUND_KEYS or d.get("kind") != ROUND_KIND \
                or d.get("layout") != LAYOUT_VERSION or d.get("round") != name \
                or not _HEX64.match(str(d.get("commitment"))) or not isinstance(d.get("started"), str) \
                or isinstance(draws, bool) or not isinstance(draws, int) or not 1 <= draws <= MAX_DRAWS:
            problems.append(f"{where}: not a round record of {name} ({', '.join(sorted(ROUND_KEYS))}); left out")
            continue
        if not check_record(d, keys):
            problems.append(f"{where}: not signed under the given maintainer key(s); a forged or foreign round, "
                            "left out")
            continue
        revealed, secret = (tree / secret_path(name)).exists(), None
        if revealed:
            secret = _revealed_secret(tree, name, problems)
        out[name] = RoundFile(name, d["commitment"], draws, d["started"], revealed, secret)
    return out, problems


def _revealed_secret(tree: Path, name: str, problems: list[str]) -> bytes | None:
    """The secret `secret.json` reveals, or None (and a problem line) when it is not one."""
    from leaderboard.repository.reading import read_json

    where = secret_path(name)
    try:
        d = read_json(tree / where, where, MAX_ROUND_BYTES)
    except RepositoryError as exc:
        problems.append(str(exc))
        return None
    if not isinstance(d, dict) or d.get("kind") != SECRET_KIND or d.get("round") != name \
            or not _HEX64.match(str(d.get("secret"))):
        problems.append(f"{where}: not the revealed secret of round {name} (64 hex digits)")
        return None
    return bytes.fromhex(d["secret"])


def newest(rounds: dict[str, RoundFile]) -> RoundFile | None:
    """The current round: the newest started (`started`, then the name); None when there is none. It is open
    unless `revealed`."""
    return max(rounds.values(), key=lambda r: (r.started, r.name), default=None)


def states(rounds: dict[str, RoundFile]) -> dict[str, str]:
    """name → "open" (the current round, not revealed), "closed" (an older one, not revealed yet) or "revealed"
    (with "(the secret does not match its commitment)" where it does not)."""
    current = newest(rounds)
    out = {}
    for r in rounds.values():
        if r.revealed:
            ok = r.secret is not None and hashlib.sha256(r.secret).hexdigest() == r.commitment
            out[r.name] = "revealed" + ("" if ok else " (the secret does not match its commitment)")
        else:
            out[r.name] = "open" if r is current else "closed, not revealed"
    return out


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


def _own(private: Any) -> dict[str, Any]:
    from leaderboard.repository.signing import key_id

    return {key_id(private.public_key()): private.public_key()}


def start(repo: str, name: str, draws: int, private: Any, key_dir: Path,
          secret: bytes | None = None) -> tuple[str, str, list[str]]:
    """Start round `name` on `repo` (module docstring): a new secret in `key_dir` (`secret` when given: 32 bytes),
    then `rounds/<name>/round.json` signed by `private` in one commit on the default branch. (the commit, the
    commitment, the older rounds still open). The secret is removed again when nothing landed."""
    from leaderboard.repository.signing import sign_record
    from leaderboard.repository.targets import open_store

    if not _name_ok(name):
        raise RepositoryError(f"round name {name!r} must be 1–64 letters, digits, '.', '_' or '-' (starting with a "
                              "letter or digit)")
    if isinstance(draws, bool) or not 1 <= draws <= MAX_DRAWS:
        raise RepositoryError(f"--draws must be 1 to {MAX_DRAWS}, got {draws}")
    if secret is not None and len(secret) != 32:
        raise RepositoryError(f"a round's secret is 32 bytes, got {len(secret)}")
    with open_store(repo) as store:
        tip = store.snapshot(store.tip())
        if (tip / ROUNDS / name).exists():
            raise RepositoryError(f"{store.where} holds a round {name} already; a round name is used once (nothing "
                                  "was written)")
        rounds, _ = read_rounds(tip, _own(private))
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
    revealed already. Returns the commit."""
    from leaderboard.repository.targets import open_store

    with open_store(repo) as store:
        tip = store.snapshot(store.tip())
        rnd = read_rounds(tip, _own(private))[0].get(name)
        if rnd is None:
            raise RepositoryError(f"{store.where} holds no round {name} signed by this key ({round_path(name)}); "
                                  "nothing was revealed")
        if rnd.revealed:
            raise RepositoryError(f"round {name} is revealed already ({secret_path(name)}); nothing was written")
        secret = load_secret(key_dir, rnd, "nothing was revealed").secret
        data = _dump({"layout": LAYOUT_VERSION, "kind": SECRET_KIND, "round": name, "secret": secret.hex(),
                      "revealed": _now()})
        return store.commit({secret_path(name): data}, f"xaibench round {name} revealed")
