"""The one reader of a results repository's signed state: every file on `main` that changes a verdict, a name's
owner or a round's state is believed here, under the maintainers' keys, and nowhere else (DESIGN §8, "Every file
that can change a verdict is signed"; docs/submitting.md, "What a committer to main can and cannot do").

`read(tree, keys, earlier)` reads a checkout once and says what is believed (`SignedState`); every consumer —
`validate` (who holds a name), `verify`, `merge` and `bind` (a binding to write next), `round start`, `reveal`,
`rehide`, `round list`, `audit` and the boards — asks it, never a file. The kinds it reads are the layout's
*signed* kinds and the *bound* ones that hang on them (`layout.FILE_KINDS`):

* **Bindings** (`verifications/<name>/bindings/<seq>.json`): who holds a name. Each binding is signed by a
  maintainer (`sign_record`) and names its place in one chain — `seq` (1, 2, …, the file name) and `after`, the
  digest (`binding_digest`) of the binding before it (none for the first). The name is held by the newest binding
  of the chain that runs from the first under the maintainers' signatures, link by link; a binding that is not
  signed under them, names another name or place, does not chain, or does not read is one listed line and is
  ignored. A binding restored over a newer one is a file at a place its content does not name: ignored, and the
  newer one still holds (from the history, below). The unsigned `owner.json` of repositories made before bindings
  were signed is never believed (`xaibench results migrate` signs what it says).
* **Rounds** (`rounds/<round>/round.json`, signed at `round start`): a round counts when its signature holds, it
  names its folder and its commitment and draws are well formed. It is **revealed** only when
  `rounds/<round>/secret.json` holds a secret whose sha256 is that signed commitment — the reveal proves itself; a
  secret that does not hash to it is listed and ignored (the round stays as it was).
* **Records** (`verified`, `round_records`): a verification record counts when its signature holds and it binds
  its row's files (the Result's path and sha256, the digest of `source/`, the sha256 of `submission.json`,
  recomputed here: `binds`); a round record, when it is signed, binds its row the same way, and names a round
  this state holds signed with the commitment it names.
* **A round cannot vanish** (`missing_rounds`): a round that signed round records name, or that main's history
  held signed, but that the tree holds no signed `round.json` of, is missing — `verify` and `rehide` refuse while
  one is, and the boards say which instead of dropping its scores silently.

**History** (`earlier`: path → earlier versions of the file on main's history, `Store.earlier_in`): a commit can
remove or overwrite a signed file, so the versions main's history held count as if they were on the tip — the
newest binding stays the newest when a commit deletes it or restores an older one over it, and a deleted
`round.json` is missing, not forgotten. Where the history is unknown (`earlier` None: the Hub, a checkout handed in
alone) a file at the place of the next binding that is not believed may be that binding, damaged: the name is then
held by no key (`disputed`), refused until a maintainer re-binds it, rather than rolled back.

Every line says which file and why, once; nothing here signs anything.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import (BINDINGS, HIDDEN_RECORD, LAYOUT_VERSION, MAX_RESULT_BYTES, RESULTS,
                                           ROUNDS, VERIFICATIONS, RepositoryError, binding_path, legacy_owner_path,
                                           parse_result_path, printable, round_path, secret_path, sha256)

__all__ = ["BINDING_KIND", "Binding", "RoundFile", "SignedState", "binding_digest", "binding_record", "binds",
           "of_snapshot", "read", "round_name_ok", "verified"]

BINDING_KIND = "xaibench-binding"
BINDING_REQUIRED = {"layout", "kind", "name", "seq", "after", "key", "holder", "bound", "when", "previous", "key_id",
                    "signature"}
BINDING_OPTIONAL = {"hub_user", "reason"}
MAX_BINDING_BYTES = 64 << 10
MAX_ROUND_BYTES = 64 << 10
MAX_RECORD_BYTES = 1 << 20
ROUND_KEYS = {"layout", "kind", "round", "commitment", "draws", "started", "key_id", "signature"}
ROUND_KIND, SECRET_KIND = "xaibench-round", "xaibench-round-secret"
MAX_DRAWS = 100
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_SEQ = re.compile(r"^[1-9][0-9]{0,8}\.json$")
_BINDING_PATH = re.compile(rf"^{VERIFICATIONS}/([^/]+)/{BINDINGS}/([^/]+)$")
_ROUND_PATH = re.compile(rf"^{ROUNDS}/([^/]+)/round\.json$")


@dataclass(frozen=True)
class RoundFile:
    """One round a repository holds signed (module docstring); `revealed` (with its `secret`) only when the revealed
    secret hashes to `commitment`; `unrevealed` says why a `secret.json` beside it is no reveal ("" when none is)."""

    name: str
    commitment: str
    draws: int
    started: str
    revealed: bool = False
    secret: bytes | None = None
    unrevealed: str = ""
    signer: str = ""  # the key id of the maintainer who signed it


def round_name_ok(name: str) -> bool:
    """Whether `name` is a round id (`benchmark.models.variants.hidden.Round`: also a plain folder name)."""
    from benchmark.errors import XaibenchError
    from benchmark.models.variants.hidden import Round

    try:
        Round(name, bytes(32))
    except XaibenchError:
        return False
    return True


@dataclass(frozen=True)
class Binding:
    """One signed binding of a name to a contributor key (module docstring): `key` the contributor's public key
    (`signing.public_text`), `holder` its key id, `previous` the key ids that held the name before, `signer` the
    maintainer key id that signed it, `digest` what the next binding names as `after`."""

    name: str
    seq: int
    after: str | None
    key: str
    holder: str
    bound: str
    when: str
    previous: tuple[str, ...]
    hub_user: str | None
    path: str
    digest: str
    signer: str
    at_tip: bool = True  # False: read from main's history only (a commit removed or overwrote it)


def binding_digest(record: dict[str, Any]) -> str:
    """sha256 of a signed binding's canonical JSON, signature included (sorted keys, compact, UTF-8): what the next
    binding names as `after` (a copy re-indented or re-ordered keeps it)."""
    return sha256(json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def binding_record(name: str, seq: int, after: str | None, key: str, bound: str, when: str, previous: list[str],
                   maintainer: Any, hub_user: str | None = None, reason: str | None = None) -> bytes:
    """The bytes of binding `seq` of `name` (`layout.binding_path`), signed by the maintainer's private key:
    `name` bound to the contributor key `key`, `bound` saying how, `after` the digest of the binding before."""
    from leaderboard.repository.signing import key_id, public_from_text, sign_record

    body: dict[str, Any] = {"layout": LAYOUT_VERSION, "kind": BINDING_KIND, "name": name, "seq": seq, "after": after,
                            "key": key, "holder": key_id(public_from_text(key)), "bound": bound, "when": when,
                            "previous": list(previous), **({"hub_user": hub_user} if hub_user else {}),
                            **({"reason": reason} if reason else {})}
    return (json.dumps(sign_record(body, maintainer), indent=1, sort_keys=True) + "\n").encode("utf-8")


@dataclass
class SignedState:
    """What a checkout's signed files say, under `keys` (module docstring). `problems`: one line per file read and
    not believed; `missing_rounds` and `missing_lines` are read on first use (they walk the round records)."""

    tree: Path
    keys: dict[str, Any]
    bindings: dict[str, Binding] = field(default_factory=dict)
    chains: dict[str, list[Binding]] = field(default_factory=dict)  # each name's signed chain, oldest first
    disputed: dict[str, str] = field(default_factory=dict)  # name → why no binding is believed for it
    rounds: dict[str, RoundFile] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    vanished: dict[str, str] = field(default_factory=dict)  # round → a signed round.json main's history held

    def binding(self, name: str) -> Binding | None:
        """The binding that holds `name`, or None (never bound, disputed, or not signed under the keys)."""
        return self.bindings.get(name)

    def next_binding(self, name: str) -> tuple[int, str | None, list[str], str | None]:
        """(seq, after, previous key ids, Hub account) of the binding that would follow the newest signed one of
        `name`'s chain — believed, or, for a disputed name, the last before the place in dispute (a maintainer's
        binding there takes that place)."""
        chain = self.chains.get(name)
        if not chain:
            return 1, None, [], None
        head = chain[-1]
        return head.seq + 1, head.digest, [*head.previous, head.holder], head.hub_user

    @cached_property
    def missing_rounds(self) -> dict[str, list[str]]:
        """round → why it is missing: the round records signed under the keys that name it (or main's history that
        held it signed), where the tree holds no signed `round.json` of it."""
        from leaderboard.repository.reading import read_json, tree_files
        from leaderboard.repository.signing import check_record

        out: dict[str, list[str]] = {name: [why] for name, why in self.vanished.items()}
        if not self.keys:
            return out
        files, _ = tree_files(self.tree / VERIFICATIONS)
        for rel in files:
            folder, _, leaf = rel.rpartition("/")
            name = leaf.removesuffix(".json")
            if not folder.endswith(".rounds") or leaf == name or name in self.rounds:
                continue
            where = f"{VERIFICATIONS}/{rel}"
            try:
                record = read_json(self.tree / where, where, MAX_RECORD_BYTES)
            except RepositoryError:
                continue  # the row that reads it lists it
            if isinstance(record, dict) and record.get("kind") == HIDDEN_RECORD and record.get("round") == name \
                    and check_record(record, self.keys):
                out.setdefault(name, []).append(where)
        return out

    def missing_lines(self, then: str = "its hidden scores are not shown until it is restored from main's "
                                             "history") -> list[str]:
        """One line per missing round (`missing_rounds`), naming it, what names it, and `then`."""
        out = []
        for name, whys in sorted(self.missing_rounds.items()):
            records = [w for w in whys if w.startswith(VERIFICATIONS + "/")]
            said = (f"{len(records)} round record(s) signed by a maintainer name it ({records[0]}"
                    f"{', …' if len(records) > 1 else ''})" if records else whys[0])
            out.append(printable(f"round {name} is missing: {round_path(name)} is absent or not signed, and {said}; "
                                 f"{then}"))
        return out

    def verified(self, rel: str, problems: list[str] | None = None) -> dict[str, Any] | None:
        """The verification record of the Result at `rel` when it is signed under the keys and binds the row's
        files (`binds`), else None — and, when a file lies at the record's path all the same, one line in
        `problems` (the row is self-reported)."""
        record = verified(self.tree, rel, self.keys)
        rp = parse_result_path(rel)
        if record is None and problems is not None and self.keys and rp is not None \
                and (self.tree / rp.verification).exists():
            problems.append(printable(f"{rp.verification}: not signed under the given keys, or it does not name this "
                                      "row's files (the Result, its source/, its submission.json) as they are; "
                                      "ignored: the row is self-reported"))
        return record

    def round_records(self, rel: str, problems: list[str]) -> list[tuple[str, dict[str, Any], RoundFile]]:
        """(path, record, its round) of every round record of the Result at `rel` that is believed: signed under
        the keys, binding the row (`binds`), of kind `HIDDEN_RECORD`, naming the round of its file name, which this
        state holds signed with the commitment the record names. Every other file there is a line in
        `problems`, and left out."""
        from leaderboard.repository.reading import read_json, tree_files
        from leaderboard.repository.signing import check_record

        rp = parse_result_path(rel)
        if rp is None:
            return []
        folder = rp.round_record("x").rpartition("/")[0]
        files, bad = tree_files(self.tree / folder)
        problems += [printable(f"{folder}/{b}; left out") for b in bad]
        out = []
        for name in sorted(files):
            where = f"{folder}/{name}"
            try:
                record = read_json(self.tree / where, where, MAX_RECORD_BYTES)
            except RepositoryError as exc:
                problems.append(printable(f"{exc}; left out"))
                continue
            rnd = self.rounds.get(name.removesuffix(".json"))
            if not check_record(record, self.keys) or not binds(record, self.tree, rel) \
                    or record.get("kind") != HIDDEN_RECORD:
                problems.append(printable(f"{where}: not a round record signed under the given keys for {rel}; "
                                          "left out"))
            elif rnd is None or record.get("round") != rnd.name or record.get("round_commitment") != rnd.commitment:
                problems.append(printable(f"{where}: its round is not one this repository holds signed, with the "
                                          "commitment it names (rounds/<round>/round.json); left out"))
            else:
                out.append((where, record, rnd))
        return out


def read(tree: Path, keys: dict[str, Any], earlier: dict[str, list[bytes]] | None = None) -> SignedState:
    """The signed state of the checkout `tree` under the maintainers' public `keys` (key id → key), with `earlier`
    the versions main's history held of the files it names (None: unknown) — the module docstring's rules. No key:
    nothing signed is believed, and no file is listed for it (the caller says once that no key is configured)."""
    state = SignedState(Path(tree), dict(keys))
    if not keys:
        return state
    _read_bindings(state, earlier)
    _read_rounds(state, earlier)
    return state


def of_snapshot(store: Any, tree: Path, keys: dict[str, Any]) -> SignedState:
    """`read` of a store's snapshot `tree`, with the history the store keeps of it (`Store.earlier_in`)."""
    return read(tree, keys, store.earlier_in(tree) if keys else None)


# --------------------------------------------------------------------------------------------------
# bindings


def _binding(data: bytes, where: str, name: str, seq: int, keys: dict[str, Any], at_tip: bool) -> Binding:
    """The binding in `data` at `where` (binding `seq` of `name` by its path), its signature checked under `keys`;
    `RepositoryError` ("<where>: why") when it is none of those."""
    from leaderboard.repository.reading import loads
    from leaderboard.repository.signing import check_record, key_id, public_from_text

    d = loads(data, where, MAX_BINDING_BYTES)
    if not isinstance(d, dict) or not BINDING_REQUIRED <= set(d) <= BINDING_REQUIRED | BINDING_OPTIONAL \
            or d.get("kind") != BINDING_KIND or d.get("layout") != LAYOUT_VERSION:
        raise RepositoryError(f"{where}: not a binding ({', '.join(sorted(BINDING_REQUIRED))})")
    if d.get("name") != name or d.get("seq") != seq:
        raise RepositoryError(f"{where}: says it is binding {d.get('seq')!r} of {d.get('name')!r}, not the binding "
                              f"{seq} of {name} its path names (a binding copied from another place)")
    after, previous = d.get("after"), d.get("previous")
    if not ((after is None) == (seq == 1) and (after is None or _HEX64.match(str(after)))
            and isinstance(previous, list) and all(isinstance(k, str) for k in previous)
            and all(isinstance(d.get(k), str) for k in ("key", "holder", "bound", "when"))
            and all(d.get(k) is None or isinstance(d.get(k), str) for k in BINDING_OPTIONAL)):
        raise RepositoryError(f"{where}: its after, previous, key, holder, bound, when, hub_user or reason are "
                              "malformed")
    try:
        holder = key_id(public_from_text(d["key"]))
    except RepositoryError as exc:
        raise RepositoryError(f"{where}: its key is {exc}") from None
    if holder != d["holder"]:
        raise RepositoryError(f"{where}: names the holder {d['holder']}, and its key is {holder}")
    if not check_record(d, keys):
        raise RepositoryError(f"{where}: not signed under the maintainers' keys (unsigned, signed by another key, or "
                              "changed after it was signed)")
    return Binding(name, seq, after, d["key"], holder, d["bound"], d["when"], tuple(previous), d.get("hub_user"), where,
                   binding_digest(d), str(d["key_id"]), at_tip)


def _read_bindings(state: SignedState, earlier: dict[str, list[bytes]] | None) -> None:
    """`state.bindings`, `chains` and `disputed` from the tree and `earlier` (module docstring)."""
    from leaderboard.repository.reading import read_bytes, tree_files

    root = state.tree / VERIFICATIONS
    names = {p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink()} if root.is_dir() else set()
    old: dict[str, list[tuple[str, bytes]]] = {}
    for path, versions in (earlier or {}).items():
        m = _BINDING_PATH.match(path)
        if m:
            old.setdefault(m.group(1), []).extend((path, v) for v in versions)
    for name in sorted(names | set(old)):
        found: list[Binding] = []
        refused: dict[int, str] = {}  # seq → why the tip's file there is not believed
        files, bad = tree_files(root / name / BINDINGS)
        state.problems += [printable(f"{VERIFICATIONS}/{name}/{BINDINGS}/{b}; ignored") for b in bad]
        for rel, p in files.items():
            where = f"{VERIFICATIONS}/{name}/{BINDINGS}/{rel}"
            if not _SEQ.match(rel):
                state.problems.append(printable(f"{where}: not a binding's place ({BINDINGS}/<1, 2, …>.json); ignored"))
                continue
            try:
                found.append(_binding(read_bytes(p, where, MAX_BINDING_BYTES), where, name, int(rel[:-5]), state.keys,
                                      True))
            except RepositoryError as exc:
                refused[int(rel[:-5])] = str(exc)
        for path, data in old.get(name, []):
            seq = path.rpartition("/")[2]
            try:
                if _SEQ.match(seq):
                    found.append(_binding(data, path, name, int(seq[:-5]), state.keys, False))
            except RepositoryError:
                continue  # an earlier version that was never a binding: nothing to believe, nothing to list
        chain = _chain(found, state.problems)
        in_chain = {b.digest for b in chain}
        for b in found:
            if b.at_tip and b.digest not in in_chain:
                state.problems.append(printable(f"{b.path}: a signed binding that does not chain to the binding before "
                                                f"it (its `after` names none of the chain's); ignored"))
        state.problems += [printable(f"{why}; ignored") for _, why in sorted(refused.items())]
        head = chain[-1] if chain else None
        if chain:
            state.chains[name] = chain
        nxt = (head.seq if head else 0) + 1
        if earlier is None and nxt in refused and (head is not None or (state.tree / RESULTS / name).is_dir()):
            state.disputed[name] = printable(
                f"{binding_path(name, nxt)} holds the place of {name}'s next binding and is not one the maintainers "
                "signed: it may be that binding, damaged, and main's history is not at hand to tell; the name is bound "
                "to no key until a maintainer restores it or re-binds the name (`xaibench results bind`)")
            continue
        if head is not None:
            state.bindings[name] = head
        legacy = state.tree / legacy_owner_path(name)
        if head is None and legacy.exists():
            state.problems.append(f"{legacy_owner_path(name)}: an unsigned binding (written before bindings were "
                                  "signed); ignored — a maintainer signs it with `xaibench results migrate`")


def _chain(found: list[Binding], problems: list[str]) -> list[Binding]:
    """The chain from binding 1, each next binding one whose `after` is the digest of the one before; where two
    signed bindings could follow, the one at the tip wins, then the newest `when`, then the digest (and it is
    listed: only two maintainers binding at once make that)."""
    by_seq: dict[int, dict[str, Binding]] = {}
    for b in found:
        here = by_seq.setdefault(b.seq, {})
        if b.digest not in here or (b.at_tip and not here[b.digest].at_tip):
            here[b.digest] = b
    chain: list[Binding] = []
    while True:
        after = chain[-1].digest if chain else None
        seq = len(chain) + 1
        options = [b for b in by_seq.get(seq, {}).values()
                   if b.after == after]
        if not options:
            return chain
        pick = max(options, key=lambda b: (b.at_tip, b.when, b.digest))
        if len(options) > 1:
            problems.append(printable(f"{pick.path}: {len(options)} signed bindings follow binding {seq - 1} of "
                                      f"{pick.name}; the one at the tip (else the newest) is believed"))
        chain.append(pick)


# --------------------------------------------------------------------------------------------------
# rounds


def _read_rounds(state: SignedState, earlier: dict[str, list[bytes]] | None) -> None:
    """`state.rounds` and `vanished` (module docstring): every other file under `rounds/` is one listed line."""
    from leaderboard.repository.reading import loads, read_json, tree_files

    files, bad = tree_files(state.tree / ROUNDS)
    state.problems += [printable(f"{ROUNDS}/{b}; left out") for b in bad]
    for rel in sorted(files):
        name, _, leaf = rel.partition("/")
        if leaf == "secret.json" and (name + "/round.json") in files:
            continue  # read with its round
        where = f"{ROUNDS}/{rel}"
        if leaf != "round.json" or not round_name_ok(name):
            state.problems.append(printable(f"{where}: not a round file (rounds/<NAME>/round.json or secret.json); "
                                            "left out"))
            continue
        try:
            rnd = _round(read_json(state.tree / where, where, MAX_ROUND_BYTES), where, name, state.keys)
        except RepositoryError as exc:
            state.problems.append(printable(f"{exc}; left out"))
            continue
        if (state.tree / secret_path(name)).exists():
            rnd = _revealed(state.tree, rnd, state.problems)
        state.rounds[name] = rnd
    for path, versions in (earlier or {}).items():
        m = _ROUND_PATH.match(path)
        if not m or m.group(1) in state.rounds:
            continue
        for data in versions:
            try:
                _round(loads(data, path, MAX_ROUND_BYTES), path, m.group(1), state.keys)
            except RepositoryError:
                continue
            state.vanished[m.group(1)] = (f"main's history held {path} signed, and a later commit removed or changed "
                                          "it")
            break


def _round(d: Any, where: str, name: str, keys: dict[str, Any]) -> RoundFile:
    """The round `round.json` at `where` starts (not revealed), its signature checked under `keys`;
    `RepositoryError` when it is none."""
    from leaderboard.repository.signing import check_record

    draws = d.get("draws") if isinstance(d, dict) else None
    if not isinstance(d, dict) or not ROUND_KEYS - {"key_id", "signature"} <= set(d) <= ROUND_KEYS \
            or d.get("kind") != ROUND_KIND \
            or d.get("layout") != LAYOUT_VERSION or d.get("round") != name \
            or not _HEX64.match(str(d.get("commitment"))) or not isinstance(d.get("started"), str) \
            or isinstance(draws, bool) or not isinstance(draws, int) or not 1 <= draws <= MAX_DRAWS:
        raise RepositoryError(f"{where}: not a round record of {name} ({', '.join(sorted(ROUND_KEYS))})")
    if not check_record(d, keys):
        raise RepositoryError(f"{where}: not signed under the given maintainer key(s) (unsigned, signed by another "
                              "key, or changed after it was signed); a forged or foreign round")
    return RoundFile(name, d["commitment"], draws, d["started"], signer=str(d["key_id"]))


def _revealed(tree: Path, rnd: RoundFile, problems: list[str]) -> RoundFile:
    """`rnd`, revealed when `secret.json` beside it holds a secret whose sha256 is its commitment; else as it was,
    with `unrevealed` saying why the file there is not a reveal (and one line in `problems`)."""
    from dataclasses import replace

    from leaderboard.repository.reading import read_json

    where = secret_path(rnd.name)
    try:
        d = read_json(tree / where, where, MAX_ROUND_BYTES)
        if not isinstance(d, dict) or d.get("kind") != SECRET_KIND or d.get("round") != rnd.name \
                or not _HEX64.match(str(d.get("secret"))):
            raise RepositoryError(f"{where}: not the revealed secret of round {rnd.name} (64 hex digits)")
    except RepositoryError as exc:
        why = str(exc)
    else:
        secret = bytes.fromhex(d["secret"])
        got = hashlib.sha256(secret).hexdigest()
        if got == rnd.commitment:
            return replace(rnd, revealed=True, secret=secret)
        why = (f"{where}: reveals a secret hashing to {got}; the round committed to {rnd.commitment} — not its "
               "secret")
    problems.append(printable(f"{why}; ignored (round {rnd.name} is not revealed)"))
    return replace(rnd, unrevealed=why)


# --------------------------------------------------------------------------------------------------
# records


def verified(tree: Path, rel: str, keys: dict[str, Any]) -> dict[str, Any] | None:
    """The verification record of the Result at `rel` when it holds under one of `keys`: signed, and naming exactly
    this row's files (`binds`) — else None."""
    from leaderboard.repository.reading import read_json
    from leaderboard.repository.signing import check_record

    rp = parse_result_path(rel)
    if rp is None or not keys:
        return None
    try:
        record = read_json(tree / rp.verification, rp.verification, MAX_RECORD_BYTES)
    except RepositoryError:
        return None
    return record if check_record(record, keys) and binds(record, tree, rel) else None


def binds(record: Any, tree: Path, rel: str) -> bool:
    """Whether a (signed) record names exactly the Result at `rel`: its path and sha256, the digest of its
    folder's `source/` and the sha256 of its `submission.json`, all recomputed from `tree`."""
    from leaderboard.repository.reading import folder_digests, read_bytes

    rp = parse_result_path(rel)
    try:
        data = read_bytes(tree / rel, rel, MAX_RESULT_BYTES)
    except RepositoryError:
        return False
    source, meta = folder_digests(tree, rp.submission, rp.code_hash) if rp is not None else (None, None)
    return (isinstance(record, dict) and record.get("result") == rel and record.get("result_sha256") == sha256(data)
            and source is not None and record.get("source_sha256") == source
            and meta is not None and record.get("submission_json_sha256") == meta)
