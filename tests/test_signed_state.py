"""The repository's own state is signed too (issue #56): who holds a name, which round is open and whether it was
revealed are believed only under the maintainers' keys, through one reader (`signed_state`), and no tree on main
takes the repository down. The five escape classes, each built as a hostile committer to main would build it
(plain commits on a local bare git repository, the maintainer's and the contributors' steps through the CLI):

1. a name rebound by one commit;             2. a rebinding rolled back;        3. a forged reveal;
4. a round deleted;                          5. a deep (and wide, long, escaping) tree;

then bad input of every kind (a binding, round or reveal unsigned, signed by another key, stale, malformed or
oversized: one line naming the file, the file ignored), every file kind of the layout (signed, bound by signed
files, or changing no verdict), and the migration of a repository made before bindings were signed (its boards
unchanged).

One module fixture verifies one submission in round r1 (one draw) on a repository that each test copies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmark.runner import evaluate
from leaderboard.repository.layout import parse_result_path
from tests.test_badge_binds import _third
from tests.test_repository_tampering import key_id_of, no_traceback, propose
from tests.test_results_repository import RUN, branches, cli, contributor, maintainer, sign, third_party

SQUARES_BINDINGS = "verifications/squares/bindings"


@pytest.fixture(scope="module")
def world(aixi_home, tmp_path_factory):
    """A results repository (bare git) where round r1 (one draw) was started and squares — signed by this machine's
    contributor key — was verified in it (record, round record, first binding), all by one maintainer; and cubes,
    another honest submission evaluated and signed, ready to be proposed."""
    from benchmark.submission import load_submission
    from leaderboard.repository.git import init_bare
    from leaderboard.repository.rerun import verify_pull_request
    from leaderboard.repository.rounds import start
    from leaderboard.repository.signing import load_private_key
    from leaderboard.repository.submit import package, submit
    from leaderboard.repository.targets import open_store

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    contributor()
    root = tmp_path_factory.mktemp("signed-world")
    key = maintainer(root / "maintainer")
    private = load_private_key(key)
    remote = root / "results.git"
    init_bare(remote, {"xaibench-results.json": b'{"layout": 1, "name": "signed"}\n', "README.md": b"# signed\n"})
    start(str(remote), "r1", 1, private, key.parent)
    squares, cubes = third_party(root / "squares"), third_party(root / "cubes", "cubes")
    (cubes / "explainer.py").write_text((cubes / "explainer.py").read_text().replace("** 2", "** 3"))
    for sub in (squares, cubes):
        evaluate(sub, results_dir=root / "res", **RUN)
    ref = submit(squares, str(remote), results_dir=root / "res", check=False).target.rpartition("@")[2]
    with open_store(str(remote)) as store:
        runs, commit = verify_pull_request(store, ref, private, sandbox="none", timeout_s=0, key_dir=key.parent)
    assert commit is not None, [r.problems for r in runs]
    return SimpleNamespace(root=root, remote=remote, key=key, pub=key.with_name("verifier.pub"), rel=runs[0].rel,
                           cubes=sign(package(load_submission(cubes), root / "res")))


@pytest.fixture()
def repo(world, tmp_path):
    """A copy of the world's repository for a test to attack."""
    copy = tmp_path / "results.git"
    shutil.copytree(world.remote, copy)
    return copy


def hostile_commit(remote: Path, put: dict[str, bytes] | None = None, remove: tuple[str, ...] = ()) -> str:
    """One commit on main, as anyone who may commit there makes it (git's plumbing, no xaibench): `put` files at any
    path git takes (deep, long, escaping), `remove` others. Returns the commit."""
    env = {**os.environ, "GIT_DIR": str(remote), "GIT_INDEX_FILE": str(remote / "hostile-index"),
           "GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@m", "GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@m"}

    def g(*args, data=None):
        return subprocess.run(["git", *args], input=data, capture_output=True, env=env, check=True).stdout.strip()

    g("read-tree", "main")
    for path, data in (put or {}).items():
        blob = g("hash-object", "-w", "--stdin", data=data).decode()
        g("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    if remove:  # mode 0 removes an entry (no work tree needed)
        g("update-index", "--index-info", data="".join(f"0 {'0' * 40}\t{p}\n" for p in remove).encode())
    commit = g("commit-tree", g("write-tree").decode(), "-p", "main", "-m", "a commit on main").decode()
    g("update-ref", "refs/heads/main", commit)
    (remote / "hostile-index").unlink(missing_ok=True)
    return commit


def tip_of(remote: Path) -> str:
    from leaderboard.repository.git import GitStore

    with GitStore(str(remote)) as store:
        return store.tip()


def checkout(remote: Path, where: Path) -> Path:
    """Main's files (a snapshot), copied to `where`."""
    from leaderboard.repository.git import GitStore

    with GitStore(str(remote)) as store:
        shutil.copytree(store.snapshot(), where)
    return where


def keys_of(pub: Path) -> dict:
    from leaderboard.repository.signing import load_public_keys

    return load_public_keys([pub])


def new_contributor(folder: Path):
    from leaderboard.repository.signing import keygen, load_private_key

    return load_private_key(keygen(folder, role="contributor")[0], role="contributor")


def pub_text(private) -> str:
    from leaderboard.repository.signing import public_text

    return public_text(private.public_key())


def validate(remote: Path, ref: str, pub: Path, capsys) -> tuple[int, str]:
    code, out, err = cli(["results", "validate", f"{remote}@{ref}", "--public-key", str(pub)], capsys)
    assert no_traceback(out, err)
    return code, out


def refused_in_one_line(argv: list[str], remote: Path, capsys) -> str:
    """`argv` exits 2 with one line `error: ...` on stderr, and main does not move."""
    before = tip_of(remote)
    code, out, err = cli(argv, capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and no_traceback(out, err), (argv, out,
                                                                                                       err)
    assert tip_of(remote) == before
    return err


def verify_argv(world, remote: Path, ref: str) -> list[str]:
    return ["results", "verify", f"{remote}@{ref}", "--key", str(world.key), "--sandbox", "none", "--timeout", "0"]


def legacy_owner(name: str, key: str, bound: str, when: str, previous: list[str] | None = None,
                 hub_user: str | None = None, reason: str | None = None, maintainer_key=None) -> bytes:
    """The bytes of `verifications/<name>/owner.json` as xaibench wrote them before bindings were signed (360ecac's
    `contributors.owner_record`, its clock given as `when`): unsigned, except for the signature a maintainer's
    `bind` nested in it."""
    import base64

    from leaderboard.repository.signing import canonical, key_id, public_from_text

    record = {"layout": 1, "kind": "xaibench-name", "name": name, "key": key, "key_id": key_id(public_from_text(key)),
              "bound": bound, "when": when, "previous": list(previous or []), **({"hub_user": hub_user} if hub_user
                                                                                else {}),
              **({"reason": reason} if reason else {})}
    if maintainer_key is not None:
        record["maintainer"] = {"key_id": key_id(maintainer_key.public_key()),
                                "signature": base64.b64encode(maintainer_key.sign(canonical(record))).decode("ascii")}
    return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------------
# 1. a name rebound by one commit


@pytest.mark.slow(reason="the module's verification, and pull requests validated on a git repository")
def test_a_name_rebound_by_one_commit_stays_with_its_holder(world, repo, tmp_path, capsys):
    """A commit points squares' binding at another key (its key and holder edited), adds a newer binding signed by a
    key no maintainer holds and an unsigned owner.json: the attacker's next version is refused by `validate` and
    `verify` in one line, each hostile file is listed, and the holder's next version still lands."""
    from leaderboard.repository.contributors import now
    from leaderboard.repository.signed_state import binding_digest, binding_record
    from leaderboard.repository.signing import keygen, load_private_key

    first = f"{SQUARES_BINDINGS}/1.json"
    signed = json.loads((checkout(repo, tmp_path / "before") / first).read_text())
    mallory = new_contributor(tmp_path / "mallory")
    edited = {**signed, "key": pub_text(mallory), "holder": key_id_of(mallory)}
    rogue = load_private_key(keygen(tmp_path / "rogue")[0])  # a "maintainer" key nobody configured
    second = binding_record("squares", 2, binding_digest(signed), pub_text(mallory), "re-bound by a maintainer", now(),
                            [signed["holder"]], rogue)
    hostile_commit(repo, {first: json.dumps(edited).encode(), f"{SQUARES_BINDINGS}/2.json": second,
                          "verifications/squares/owner.json": legacy_owner("squares", pub_text(mallory), "x", "y")})
    theirs = propose(repo, sign(_third(tmp_path, "0.0.2"), mallory), "theirs")
    code, out = validate(repo, theirs, world.pub, capsys)
    assert code == 1 and f"the name is bound to the contributor key {key_id_of(contributor())}" in out and \
        f"this pull request is signed by {key_id_of(mallory)}" in out, out
    err = refused_in_one_line(verify_argv(world, repo, theirs), repo, capsys)
    assert "does not validate" in err and "bound to the contributor key" in err
    code, out, err = cli(["results", "validate", str(repo), "--public-key", str(world.pub)], capsys)
    lines = out.splitlines()
    assert code == 1 and any(x.startswith(f"{first}: not signed under the maintainers' keys") for x in lines), out
    assert any(x.startswith(f"{SQUARES_BINDINGS}/2.json: not signed under the maintainers' keys") for x in lines)
    assert not any("owner.json" in x for x in lines)  # never read: squares' chain is signed
    mine = propose(repo, sign(_third(tmp_path, "0.0.3")), "mine")
    assert validate(repo, mine, world.pub, capsys) == (0, "")
    code, _, err = cli(["results", "merge", f"{repo}@{mine}", "--key", str(world.key)], capsys)
    assert code == 0 and "merged" in err, err


# --------------------------------------------------------------------------------------------------
# 2. a rebinding rolled back


@pytest.mark.slow(reason="a re-binding and pull requests validated on a git repository")
@pytest.mark.parametrize("how", ["the old binding restored over the newer", "the newer binding deleted",
                                 "the old unsigned owner.json restored"])
def test_a_rebinding_rolled_back_is_refused(world, repo, tmp_path, capsys, how):
    """squares' key leaked; a maintainer re-bound the name to a new key (`bind`); one commit then brings the old
    binding back (byte for byte over the newer one, by deleting the newer one, or as the owner.json of old). The
    newest signed binding still holds: the leaked key is refused, the new one validates. Read without main's history
    (the Hub), the first rollback leaves the name bound to no key rather than to the leaked one."""
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.signed_state import read

    new = tmp_path / "new"
    assert cli(["results", "keygen", "--contributor", "--out", str(new)], capsys)[0] == 0
    code, _, err = cli(["results", "bind", str(repo), "squares", "--public-key", str(new / "contributor.pub"),
                        "--reason", "the old key leaked", "--key", str(world.key)], capsys)
    assert code == 0, err
    old = checkout(repo, tmp_path / "bound") / SQUARES_BINDINGS
    if how.startswith("the old binding"):
        hostile_commit(repo, {f"{SQUARES_BINDINGS}/2.json": (old / "1.json").read_bytes()})
    elif how.startswith("the newer"):
        hostile_commit(repo, remove=(f"{SQUARES_BINDINGS}/2.json",))
    else:
        hostile_commit(repo, {"verifications/squares/owner.json": legacy_owner(
            "squares", pub_text(contributor()), "first landing (trust on first use)", "2026-11-01T00:00:00+00:00")})
    leaked = propose(repo, sign(_third(tmp_path, "0.0.2")), "leaked")
    code, out = validate(repo, leaked, world.pub, capsys)
    holder = key_id_of(new_contributor_of(new))
    assert code == 1 and f"the name is bound to the contributor key {holder}" in out, out
    refused_in_one_line(verify_argv(world, repo, leaked), repo, capsys)
    assert validate(repo, propose(repo, sign(_third(tmp_path, "0.0.3"), new_contributor_of(new)), "new"), world.pub,
                    capsys) == (0, "")
    if how.startswith("the old binding"):
        with GitStore(str(repo)) as store:
            tip = store.snapshot(store.tip())
            assert read(tip, keys_of(world.pub), store.earlier_in(tip)).binding("squares").holder == holder
            blind = read(tip, keys_of(world.pub), None)  # no history at hand
        assert blind.binding("squares") is None and "holds the place of squares's next binding" in \
            blind.disputed["squares"]


def new_contributor_of(folder: Path):
    from leaderboard.repository.signing import load_private_key

    return load_private_key(folder / "contributor.key", role="contributor")


def round_records(repo: Path, name: str) -> list[str]:
    """The round records of round `name` on main: every row's signed hidden runs of it."""
    paths = subprocess.run(["git", f"--git-dir={repo}", "ls-tree", "-r", "--name-only", "main"], check=True,
                           capture_output=True, text=True).stdout.split()
    return [p for p in paths if p.endswith(f".rounds/{name}.json")]


# --------------------------------------------------------------------------------------------------
# 3. a forged reveal


@pytest.mark.slow(reason="one verification with a hidden copy in the sandbox-less worker")
def test_a_forged_reveal_ends_nothing(world, repo, capsys):
    """An unsigned secret.json holding a random secret: the round stays open — `round list` says so and lists the
    file, `verify` draws from it and lands, the boards rank on it — and the maintainer's real `reveal` lands the true
    secret over it, which `audit` then checks."""
    forged = {"layout": 1, "kind": "xaibench-round-secret", "round": "r1", "secret": os.urandom(32).hex(),
              "revealed": "2026-11-29T00:00:00+00:00"}
    hostile_commit(repo, {"rounds/r1/secret.json": json.dumps(forged).encode()})
    pub = ["--public-key", str(world.pub)]
    code, out, err = cli(["results", "round", "list", str(repo), *pub], capsys)
    assert code == 0 and out.split("\t")[:2] == ["r1", "open"] and "the open round is r1" in err, out + err
    assert "rounds/r1/secret.json: reveals a secret hashing to" in err and "ignored (round r1 is not revealed)" in err
    code, out, err = cli(["leaderboard", "--from", str(repo), *pub, "--format", "md"], capsys)
    assert code == 0 and "hidden copies (round r1)" in out and "rounds/r1/secret.json: reveals" in err
    ref = propose(repo, world.cubes, "cubes")
    code, out, err = cli(verify_argv(world, repo, ref), capsys)
    assert code == 0 and "round r1: 1 hidden copy" in out, out + err
    code, _, err = cli(["results", "reveal", str(repo), "r1", "--key", str(world.key)], capsys)
    assert code == 0 and "revealed round r1" in err, err
    code, out, err = cli(["results", "round", "list", str(repo), *pub], capsys)
    assert out.split("\t")[:2] == ["r1", "revealed"] and "secret.json" not in err
    code, out, err = cli(["results", "audit", str(repo), "r1", *pub], capsys)
    runs = sum(len(json.loads(subprocess.run(["git", f"--git-dir={repo}", "show", f"main:{p}"], check=True,
                                             capture_output=True, text=True).stdout)["hidden"])
               for p in round_records(repo, "r1"))
    assert runs >= 2  # the submission's copy and its floors' (the built-in data priors verify ran on the copy)
    assert code == 0 and f"{runs} hidden run(s) checked; every one matches" in err, out + err


# --------------------------------------------------------------------------------------------------
# 4. a round deleted


@pytest.mark.slow(reason="refusals of verify, rehide and round start, and the boards, on a git repository")
@pytest.mark.parametrize("what", ["round.json", "round.json and every round record"])
def test_a_deleted_round_cannot_vanish(world, repo, tmp_path, capsys, what):
    """One commit removes rounds/r1/round.json (and, the second time, every round record naming r1): `verify` and
    `rehide` refuse in one line before anything runs, `round list` and the boards say which round is missing, and
    the name cannot be used for a new round."""
    records = round_records(repo, "r1")  # the row's and its floors' (verify ran the built-in data priors on r1)
    assert parse_result_path(world.rel).round_record("r1") in records
    hostile_commit(repo, remove=("rounds/r1/round.json",) + (tuple(records) if "record" in what else ()))
    ref = propose(repo, world.cubes, "cubes")
    err = refused_in_one_line(verify_argv(world, repo, ref), repo, capsys)
    said = f"{len(records)} round record(s) signed by a maintainer name it" if what == "round.json" else \
        "main's history held rounds/r1/round.json signed, and a later commit removed or changed it"
    assert "round r1 is missing: rounds/r1/round.json is absent or not signed" in err and said in err, err
    err = refused_in_one_line(["results", "rehide", str(repo), "--key", str(world.key), "--sandbox", "none"], repo,
                              capsys)
    assert "round r1 is missing" in err
    code, out, err = cli(["results", "round", "list", str(repo), "--public-key", str(world.pub)], capsys)
    assert code == 0 and "round r1 is missing" in err and "no open round" in err
    code, out, err = cli(["leaderboard", "--from", str(repo), "--public-key", str(world.pub), "--format", "csv"],
                         capsys)
    assert code == 0 and ",squares,0.0.1,verified" in out and "round r1 is missing: rounds/r1/round.json" in err
    err = refused_in_one_line(["results", "round", "start", str(repo), "r1", "--key", str(world.key)], repo, capsys)
    assert "holds a round r1 already (or held it" in err


# --------------------------------------------------------------------------------------------------
# 5. trees of any shape


DEEP = "/".join(["d"] * 1200) + "/x.json"
LONG = "/".join(["p" * 200] * 8) + "/x.json"
ESCAPE = "evil\x1b[31mred\x1b[0m.json"


@pytest.mark.slow(reason="the boards, validate and a merge on a git repository")
def test_a_deep_long_or_escaping_tree_on_main_takes_nothing_down(world, repo, tmp_path, capsys):
    """A folder 1,200 levels deep, a path of 1,600 bytes, a name of 300 bytes and a name holding a terminal escape,
    all on main: each is one skipped line (the escape shown escaped), the boards are built, `validate` of main lists
    them, and an honest pull request validates and lands."""
    hostile_commit(repo, {DEEP: b"{}", LONG: b"{}", "n" * 300 + ".json": b"{}", ESCAPE: b"{}"})
    code, out, err = cli(["leaderboard", "--from", str(repo), "--public-key", str(world.pub), "--format", "csv"],
                         capsys)
    assert code == 0 and ",squares,0.0.1,verified" in out and no_traceback(out, err), err
    assert "1,201 levels deep, more than the 32 a results repository uses; skipped" in err
    assert "a path of 1,614 bytes, more than the 1,024 allowed; skipped" in err
    assert "a name longer than the 255 bytes a file system allows; skipped" in err
    assert "\x1b" not in err and "evil\\x1b[31mred\\x1b[0m.json: not a plain relative path" in err
    code, out, err = cli(["results", "validate", str(repo), "--public-key", str(world.pub)], capsys)
    assert code == 1 and len([x for x in out.splitlines() if "skipped" in x]) == 4 and "\x1b" not in out + err
    ref = propose(repo, world.cubes, "cubes")
    assert validate(repo, ref, world.pub, capsys) == (0, "")
    code, _, err = cli(["results", "merge", f"{repo}@{ref}", "--key", str(world.key)], capsys)
    assert code == 0 and "merged" in err and no_traceback(err)


@pytest.mark.slow(reason="the boards built from a git repository")
def test_a_tree_wider_than_the_bound_is_read_up_to_it(world, repo, capsys, monkeypatch):
    """Entries past `MAX_TREE_ENTRIES` (lowered here so the tree stays small) are one line, never read: the files
    before them still make the boards."""
    import leaderboard.repository.layout as layout

    hostile_commit(repo, {f"zz/{k:03d}.json": b"{}" for k in range(60)})
    monkeypatch.setattr(layout, "MAX_TREE_ENTRIES", 40)
    code, out, err = cli(["leaderboard", "--from", str(repo), "--public-key", str(world.pub), "--format", "csv"],
                         capsys)
    assert code == 0 and ",squares,0.0.1,verified" in out and no_traceback(out, err)
    assert "and every entry after it: the tree holds more than the 40 entries" in err


def test_the_hub_snapshot_never_downloads_what_is_out_of_bounds():
    """On the Hub the listing is read first: a path out of the tree bounds is listed and kept out of the download
    (`ignore_patterns`), so huggingface_hub never makes a folder 1,200 levels deep."""
    from leaderboard.repository.hub import HubStore
    from tests.test_repository_tampering import LocalHub

    hub = LocalHub({"xaibench-results.json": b'{"layout": 1}\n', DEEP: b"{}", ESCAPE: b"{}", "ok.json": b"{}"})
    with HubStore("org/board", hub) as store:
        tree = store.snapshot()
        assert sorted(p.name for p in tree.iterdir()) == ["ok.json", "xaibench-results.json"]
        skipped = store.skipped_in(tree)
    assert skipped[DEEP].startswith("1,201 levels deep") and "evil\\x1b[31mred\\x1b[0m.json" in skipped


# --------------------------------------------------------------------------------------------------
# bad input: a binding, round or reveal that is unsigned, signed by another key, stale, malformed or oversized


def _binding_defect(tree: Path, defect: str, rogue) -> str:
    from leaderboard.repository.signed_state import binding_digest
    from leaderboard.repository.signing import sign_record

    first = json.loads((tree / SQUARES_BINDINGS / "1.json").read_text())
    body = {**{k: v for k, v in first.items() if k not in ("key_id", "signature")}, "seq": 2,
            "after": binding_digest(first), "bound": "re-bound by a maintainer"}  # the next binding, in its place
    data = {"unsigned": json.dumps(body).encode(),
            "signed by another key": json.dumps(sign_record(body, rogue)).encode(),
            "stale": (tree / SQUARES_BINDINGS / "1.json").read_bytes(),  # binding 1 again, at the place of 2
            "malformed": b'{"kind": "xaibench-binding", "seq": 2',
            "oversized": b'{"x": "' + b"a" * (64 << 10) + b'"}'}[defect]
    (tree / SQUARES_BINDINGS / "2.json").write_bytes(data)
    return f"{SQUARES_BINDINGS}/2.json"


def _round_defect(tree: Path, defect: str, rogue) -> str:
    from leaderboard.repository.signing import sign_record

    r1 = json.loads((tree / "rounds/r1/round.json").read_text())
    body = {**{k: v for k, v in r1.items() if k not in ("key_id", "signature")}, "round": "r2",
            "started": "2099-01-01T00:00:00+00:00"}
    data = {"unsigned": json.dumps(body).encode(),
            "signed by another key": json.dumps(sign_record(body, rogue)).encode(),
            "stale": (tree / "rounds/r1/round.json").read_bytes(),  # r1's round again, in r2's folder
            "malformed": b'{"kind": "xaibench-round", "round": "r2", "draws": true}',
            "oversized": b'{"x": "' + b"a" * (64 << 10) + b'"}'}[defect]
    (tree / "rounds/r2").mkdir()
    (tree / "rounds/r2/round.json").write_bytes(data)
    return "rounds/r2/round.json"


def _reveal_defect(tree: Path, defect: str, rogue) -> str:
    from leaderboard.repository.signing import sign_record

    secret = {"layout": 1, "kind": "xaibench-round-secret", "round": "r1", "revealed": "2026-11-29T00:00:00+00:00"}
    data = {"unsigned": json.dumps({**secret, "secret": os.urandom(32).hex()}).encode(),  # a secret nobody committed to
            # a reveal proves itself by its hash: a signature, by any key, proves nothing
            "signed by another key": json.dumps(sign_record({**secret, "secret": os.urandom(32).hex()}, rogue))
            .encode(),
            "stale": json.dumps({**secret, "round": "r0", "secret": "00" * 32}).encode(),  # another round's
            "malformed": b'{"kind": "xaibench-round-secret", "round": "r1", "secret": "zz"}',
            "oversized": b'{"x": "' + b"a" * (64 << 10) + b'"}'}[defect]
    (tree / "rounds/r1/secret.json").write_bytes(data)
    return "rounds/r1/secret.json"


DEFECTS = ["unsigned", "signed by another key", "stale", "malformed", "oversized"]
KINDS = {"binding": _binding_defect, "round": _round_defect, "reveal": _reveal_defect}


def believed(tree: Path, keys: dict, earlier=None) -> set:
    """Every fact the signed state and the boards believe of `tree`: bindings, rounds, reveals, verified rows and
    their hidden runs."""
    from benchmark.variant_runs.hidden import hidden_of
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.signed_state import read

    state = read(tree, keys, earlier)
    out = {("binding", n, b.holder, b.seq) for n, b in state.bindings.items()}
    out |= {("round", n, r.commitment, r.draws) for n, r in state.rounds.items()}
    out |= {("revealed", n) for n, r in state.rounds.items() if r.revealed}
    results, _ = load_repository(tree, keys, earlier)
    for r in results:
        if r.status == "verified":
            out.add(("verified", str(r.path.relative_to(tree))))
            out |= {("hidden", str(r.path.relative_to(tree)), (hidden_of(h) or {}).get("round"),
                     (hidden_of(h) or {}).get("draw")) for h in r.companions.get("hidden", [])}
    return out


@pytest.fixture(scope="module")
def main_tree(world, tmp_path_factory):
    return checkout(world.remote, tmp_path_factory.mktemp("main") / "tree")


@pytest.mark.slow(reason="the module's verification (its boards read per case)")
@pytest.mark.parametrize("defect", DEFECTS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bad_binding_round_or_reveal_is_one_line_and_ignored(world, main_tree, tmp_path, kind, defect):
    from leaderboard.repository.signed_state import read
    from leaderboard.repository.signing import keygen, load_private_key

    keys = keys_of(world.pub)
    tree = tmp_path / "tree"
    shutil.copytree(main_tree, tree)
    before, lines = believed(tree, keys, {}), read(tree, keys, {}).problems
    path = KINDS[kind](tree, defect, load_private_key(keygen(tmp_path / "rogue")[0]))
    state = read(tree, keys, {})
    new = [x for x in state.problems if x not in lines]
    assert len(new) == 1 and new[0].startswith(f"{path}: ") and "\n" not in new[0], new
    assert believed(tree, keys, {}) == before  # ignored: nothing believed changes
    assert state.missing_lines() == []


@pytest.mark.slow(reason="validate, the boards and a merge on a git repository")
def test_bad_state_on_main_leaves_the_repository_and_honest_pull_requests_working(world, repo, tmp_path, capsys):
    """One of each kind committed to main at once: `validate` of main names each file once, the boards and `round
    list` go on, an honest pull request validates and lands — and nothing was signed that the maintainer did not
    sign: the only binding written is the one `merge` signs for the new name."""
    from leaderboard.repository.signing import keygen, load_private_key

    rogue = load_private_key(keygen(tmp_path / "rogue")[0])
    tree = checkout(repo, tmp_path / "tree")
    paths = [KINDS[kind](tree, defect, rogue) for kind, defect in (("binding", "signed by another key"),
                                                                   ("round", "unsigned"), ("reveal", "unsigned"))]
    hostile_commit(repo, {p: (tree / p).read_bytes() for p in paths})
    before = branches(repo)
    code, out, err = cli(["results", "validate", str(repo), "--public-key", str(world.pub)], capsys)
    assert code == 1 and all(sum(x.startswith(f"{p}: ") for x in out.splitlines()) == 1 for p in paths), out
    for argv in (["leaderboard", "--from", str(repo), "--public-key", str(world.pub), "--format", "csv"],
                 ["results", "round", "list", str(repo), "--public-key", str(world.pub)]):
        code, out, err = cli(argv, capsys)
        assert code == 0 and no_traceback(out, err) and all(p in err for p in paths), (argv, err)
    assert branches(repo) == before  # reading signs and writes nothing
    ref = propose(repo, world.cubes, "cubes")
    assert validate(repo, ref, world.pub, capsys) == (0, "")
    code, _, err = cli(["results", "merge", f"{repo}@{ref}", "--key", str(world.key)], capsys)
    assert code == 0, err
    landed = checkout(repo, tmp_path / "landed")
    binding = json.loads((landed / "verifications/cubes/bindings/1.json").read_text())
    assert binding["key_id"] == key_id_of(maintainer_key(world)) and binding["holder"] == key_id_of(contributor())
    assert not (landed / f"{SQUARES_BINDINGS}/3.json").exists()


def maintainer_key(world):
    from leaderboard.repository.signing import load_private_key

    return load_private_key(world.key)


# --------------------------------------------------------------------------------------------------
# one principle, one place: every file kind of the layout is signed, bound by signed files, or changes no verdict


def _tamper(path: Path, rogue) -> None:
    """What a committer to main may do to a file: change a value (the first text field, in key order) and sign it
    again with a key of their own where it carries a signature; a file that is not a JSON object gets a line more."""
    from leaderboard.repository.signing import sign_record

    try:
        d = json.loads(path.read_bytes())
    except ValueError:
        d = None
    if not isinstance(d, dict):
        path.write_bytes(path.read_bytes() + b"\n# changed\n")
        return
    field = next(k for k in sorted(d) if isinstance(d[k], str) and k not in ("key_id", "signature"))
    d[field] = d[field][:-1] + ("0" if d[field][-1:] != "0" else "1")
    if "signature" in d:
        d = sign_record({k: v for k, v in d.items() if k not in ("key_id", "signature")}, rogue)
    path.write_text(json.dumps(d))


@pytest.mark.slow(reason="a reveal and the boards built once per file kind")
def test_every_file_kind_is_signed_bound_by_signed_files_or_changes_no_verdict(world, tmp_path):
    """Walk `layout.FILE_KINDS` over a repository holding one of each (a verified row with its round record, a
    binding, a revealed round, the marker, a README, a contribution signature and an old unsigned owner.json):
    every file has a kind; tampering with a file of a signed kind or one bound by signed files only takes away what
    it carried (and a signed file is listed); tampering with an inert one changes nothing any board shows."""
    from leaderboard import render
    from leaderboard.boards import boards
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.layout import BOUND, FILE_KINDS, INERT, SIGNED, file_kind
    from leaderboard.repository.reading import tree_files
    from leaderboard.repository.rounds import reveal
    from leaderboard.repository.signing import keygen, load_private_key

    remote = tmp_path / "results.git"
    shutil.copytree(world.remote, remote)
    reveal(str(remote), "r1", maintainer_key(world), world.key.parent)
    hostile_commit(remote, {"verifications/squares/owner.json": legacy_owner(
        "squares", pub_text(contributor()), "first landing (trust on first use)", "2026-11-01T00:00:00+00:00")})
    main = checkout(remote, tmp_path / "main")
    keys = keys_of(world.pub)
    rogue = load_private_key(keygen(tmp_path / "rogue")[0])

    def shown(tree: Path) -> str:
        results, _ = load_repository(tree, keys)
        bs = boards(results)
        return render.to_text(bs, width=200) + render.to_csv(bs)

    files, _ = tree_files(main)
    kinds = {rel: file_kind(rel) for rel in files}
    assert [rel for rel, k in kinds.items() if k is None] == []
    assert {k.name for k in kinds.values()} == {k.name for k in FILE_KINDS}
    facts, board = believed(main, keys), shown(main)
    assert ("revealed", "r1") in facts and ("hidden", world.rel, "r1", 0) in facts
    for kind in FILE_KINDS:
        rel = next(r for r, k in kinds.items() if k is kind)
        tree = tmp_path / f"t-{kind.name.replace(' ', '-')}"
        shutil.copytree(main, tree)
        _tamper(tree / rel, rogue)
        after = believed(tree, keys)
        if kind.trust == INERT:
            assert after == facts and shown(tree) == board, (kind.name, rel)
        else:
            assert kind.trust in (SIGNED, BOUND) and after < facts, (kind.name, rel, facts - after)
        if kind.trust == SIGNED:
            from leaderboard.repository.signed_state import read

            _, problems = load_repository(tree, keys)
            assert any(p.startswith(f"{rel}: ") for p in problems + read(tree, keys).problems), (kind.name, rel)


# --------------------------------------------------------------------------------------------------
# the migration of a repository made before bindings were signed


@pytest.mark.slow(reason="boards built four times and pull requests validated on a git repository")
def test_a_repository_made_before_signed_bindings_migrates_and_its_boards_are_unchanged(world, tmp_path, capsys):
    """A repository as the code before this change left it — a row verified in round r1, its name bound by an
    unsigned owner.json, another name re-bound by a maintainer (the signature nested in owner.json) and one whose
    owner.json was pointed at a key that never signed there — is migrated by one command: the checkable bindings
    are signed, the other is left with one line, the boards read exactly as before, and the holder's next version
    validates again."""
    from leaderboard.repository.git import GitStore, init_bare

    old = tmp_path / "old.git"
    init_bare(old, {"xaibench-results.json": b'{"layout": 1, "name": "old"}\n'})
    main = checkout(world.remote, tmp_path / "main")
    from leaderboard.repository.reading import tree_files

    files = {rel: p.read_bytes() for rel, p in tree_files(main)[0].items() if "/bindings/" not in rel}
    ada, mallory = contributor(), new_contributor(tmp_path / "mallory")
    cubes = {p: b for p, b in world.cubes.items() if not parse_result_path(p)}  # its code only, signed by ada
    files.update(cubes)
    files["verifications/squares/owner.json"] = legacy_owner(
        "squares", pub_text(ada), "first landing (trust on first use)", "2026-11-01T00:00:00+00:00")
    files["verifications/cubes/owner.json"] = legacy_owner(
        "cubes", pub_text(mallory), "first landing (trust on first use)", "2026-11-02T00:00:00+00:00")
    files["verifications/relabel/owner.json"] = legacy_owner(
        "relabel", pub_text(mallory), "re-bound by a maintainer", "2026-11-03T00:00:00+00:00",
        previous=[key_id_of(ada)], reason="lost her key", maintainer_key=maintainer_key(world))
    with GitStore(str(old)) as store:
        store.commit(files, "a repository of the layout before bindings were signed")
    pub = ["--public-key", str(world.pub)]
    boards_before = [cli(["leaderboard", "--from", str(old), *pub, "--format", fmt], capsys)[1]
                     for fmt in ("csv", "md")]
    assert ",squares,0.0.1,verified" in boards_before[0] and "hidden copies (round r1)" in boards_before[1]
    next_version = propose(old, sign(_third(tmp_path, "0.0.2")), "next")
    code, out = validate(old, next_version, world.pub, capsys)
    assert code == 1 and "verifications/squares/owner.json is unsigned: a maintainer signs it with `xaibench results " \
                         "migrate`" in out, out

    tip = tip_of(old)
    code, out, err = cli(["results", "migrate", str(old), "--key", str(world.key), "--dry-run"], capsys)
    assert code == 1 and "dry run: would sign 2 binding(s)" in err and tip_of(old) == tip
    code, out, err = cli(["results", "migrate", str(old), "--key", str(world.key)], capsys)
    assert code == 1 and "signed 2 binding(s)" in err, out + err
    assert sorted(x.split(":")[0] for x in out.splitlines()) == ["relabel", "squares"]
    (left,) = [x for x in err.splitlines() if "owner.json" in x]
    assert left.startswith("verifications/cubes/owner.json: no pull request under cubes on main is signed by the key")
    boards_after = [cli(["leaderboard", "--from", str(old), *pub, "--format", fmt], capsys)[1]
                    for fmt in ("csv", "md")]
    assert boards_after == boards_before
    assert validate(old, next_version, world.pub, capsys) == (0, "")
    theirs = propose(old, sign(_third(tmp_path, "0.0.3"), mallory), "theirs")
    code, out = validate(old, theirs, world.pub, capsys)
    assert code == 1 and f"bound to the contributor key {key_id_of(ada)}" in out
    code, out, err = cli(["results", "migrate", str(old), "--key", str(world.key)], capsys)
    assert out == "" and "nothing to sign: 0 binding(s)" in err  # squares and relabel are signed; cubes is left


# --------------------------------------------------------------------------------------------------
# the chain rule itself, on plain trees (no repository, no evaluation)


def test_the_newest_signed_binding_of_one_chain_holds(tmp_path):
    """Bindings 1 → 2 → 3 signed by the maintainer: 3 holds. Restored over by 1 or deleted, with main's history at
    hand 3 still holds (read from it); without, a place held by what is not a binding leaves the name disputed. Two
    signed bindings after one another's predecessor: the one at the tip is believed, and the fork is listed."""
    from leaderboard.repository.contributors import now
    from leaderboard.repository.layout import binding_path
    from leaderboard.repository.signed_state import binding_digest, binding_record, read
    from leaderboard.repository.signing import key_id, keygen, load_private_key, load_public_keys

    key = load_private_key(keygen(tmp_path / "m")[0])
    keys = load_public_keys([tmp_path / "m" / "verifier.pub"])
    holders = [new_contributor(tmp_path / f"c{k}") for k in range(4)]
    tree = tmp_path / "tree"
    (tree / "results" / "sq").mkdir(parents=True)
    chain, after = {}, None
    for seq in (1, 2, 3):
        data = binding_record("sq", seq, after, pub_text(holders[seq]), "bound", now(), [], key)
        chain[binding_path("sq", seq)] = data
        after = binding_digest(json.loads(data))
        (tree / binding_path("sq", seq)).parent.mkdir(parents=True, exist_ok=True)
        (tree / binding_path("sq", seq)).write_bytes(data)
    assert read(tree, keys, {}).binding("sq").holder == key_id_of(holders[3])
    history = {binding_path("sq", 3): [chain[binding_path("sq", 3)]]}
    (tree / binding_path("sq", 3)).write_bytes(chain[binding_path("sq", 1)])  # the oldest restored over the newest
    state = read(tree, keys, history)
    assert state.binding("sq").holder == key_id_of(holders[3]) and not state.binding("sq").at_tip
    assert any(p.startswith("verifications/sq/bindings/3.json: says it is binding 1") for p in state.problems)
    blind = read(tree, keys, None)
    assert blind.binding("sq") is None and "sq" in blind.disputed
    assert blind.next_binding("sq")[:2] == (3, binding_digest(json.loads(chain[binding_path("sq", 2)])))
    (tree / binding_path("sq", 3)).unlink()  # the newest deleted
    assert read(tree, keys, history).binding("sq").holder == key_id_of(holders[3])
    fork = binding_record("sq", 3, binding_digest(json.loads(chain[binding_path("sq", 2)])), pub_text(holders[0]),
                          "bound", now(), [], key)
    (tree / binding_path("sq", 3)).write_bytes(fork)
    state = read(tree, keys, history)
    assert state.binding("sq").holder == key_id_of(holders[0]) and state.binding("sq").at_tip
    assert any("2 signed bindings follow binding 2 of sq" in p for p in state.problems)
    assert key_id(key.public_key()) == state.binding("sq").signer
