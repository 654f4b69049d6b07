"""Rounds of hidden copies in a results repository (issue #50, item 4): `results verify` signs each Result's runs on
the open round's hidden copies with the draws' commitments, `results reveal` publishes the round's secret and
`results audit` checks every signed hidden score against it; a lost or changed secret signs nothing, a hidden-copy
Result a contributor sends is never read, and after a new round and `results rehide` the boards rank the new round.

One local bare git repository (module fixture: two rows verified in round r1 on the AIXI function model, two draws)
is copied for each test that changes it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from benchmark.runner import evaluate
from leaderboard.repository.layout import parse_result_path
from tests.test_results_repository import RUN, cli, contributor, git, third_party

# every test on the repository pays for the module's two verifications (about 30 s on 2 cores) or runs the sandboxed
# worker on hidden copies itself
slow = pytest.mark.slow(reason="sandboxed runs on the published model, its randomised copy and hidden copies")
DATA_PRIOR = "foreground"  # a built-in floor of the board, beside the third party's method
FLOORS = ("centre-prior", "foreground", "published-truth")  # every built-in floor of its copies (issue #58)


@pytest.fixture(scope="module")
def rounds_world(aixi_home, tmp_path_factory):
    """(root, bare repository with rows verified in round r1 — the third party's and the board's built-in floors,
    which its verification ran and signed (issue #58) —, the maintainer's key folder, {name: Result path}); the
    third party's local Result is under root/res."""
    import os

    from leaderboard.repository.rerun import verify_pull_request
    from leaderboard.repository.rounds import start
    from leaderboard.repository.signing import keygen, load_private_key
    from leaderboard.repository.submit import submit
    from leaderboard.repository.targets import open_store

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    contributor()
    root = tmp_path_factory.mktemp("rounds-world")
    results = root / "res"
    subs = [third_party(root / "squares")]
    for sub in subs:
        evaluate(sub, results_dir=results, **RUN)
    keys = root / "keys"
    keygen(keys)
    private = load_private_key(keys / "verifier.key")
    remote = root / "results.git"
    git("init", "--quiet", "--bare", str(remote))
    from leaderboard.repository.git import init_bare

    init_bare(remote, {"xaibench-results.json": b'{"layout": 1}\n'})
    start(str(remote), "r1", 2, private, keys)
    rows = {}
    for sub in subs:
        out = submit(sub, str(remote), results_dir=results, check=False)
        ref = out.target.rpartition("@")[2]
        with open_store(str(remote)) as store:
            runs, commit = verify_pull_request(store, ref, private, sandbox="none", timeout_s=0, key_dir=keys)
        assert commit is not None, [r.problems for r in runs]
        rows.update({r.rel.split("/")[1]: r.rel for r in runs})
    assert set(rows) == {"squares", "foreground", "centre-prior", "published-truth"}  # the floors came with it
    return root, remote, keys, rows


@pytest.fixture()
def repo(rounds_world, tmp_path):
    """A copy of the world's repository (bare git) for a test to change, and its key folder."""
    _, remote, keys, _ = rounds_world
    copy = tmp_path / "results.git"
    shutil.copytree(remote, copy)
    return copy, keys


def tree(remote: Path) -> Path:
    """A checkout of main (plain files), in a folder of its own."""
    from leaderboard.repository.git import GitStore

    store = GitStore(str(remote))
    snap = store.snapshot()
    out = remote.parent / f"tree-{len(list(remote.parent.glob('tree-*')))}"
    shutil.copytree(snap, out)
    store.close()
    return out


def board(remote: Path, keys: Path):
    from leaderboard.boards import boards
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.signing import load_public_keys

    found, problems = load_repository(tree(remote), load_public_keys([keys / "verifier.pub"]))
    [b] = [b for b in boards(found) if b.model == "function"]
    return b, {r.submission: r for r in b.rows}, problems


def secret_of(keys: Path, name: str) -> bytes:
    return bytes.fromhex((keys / "rounds" / f"{name}.secret").read_text().strip())


@slow
def test_verify_signs_each_rows_hidden_runs_with_the_draws_commitments(rounds_world):
    from benchmark.models.variants.hidden import Round
    from leaderboard.repository.signing import check_record, load_public_keys

    root, remote, keys, rows = rounds_world
    secret = secret_of(keys, "r1")
    checkout = tree(remote)
    public = load_public_keys([keys / "verifier.pub"])
    for rel in rows.values():
        rp = parse_result_path(rel)
        record = json.loads((checkout / rp.round_record("r1")).read_text())
        assert check_record(record, public) and record["round"] == "r1"
        assert record["round_commitment"] == Round("r1", secret).commitment
        draws = Round("r1", secret).draws(rp.track, rp.resource, rp.revision, 2)
        assert [r["model"]["hidden"]["commitment"] for r in record["hidden"]] == [d.commitment for d in draws]
        assert "hidden" not in json.loads((checkout / rp.verification).read_text())  # the round record carries them
    for path in checkout.rglob("*"):  # the secret is nowhere in the repository while the round is open
        assert not path.is_file() or secret.hex() not in path.read_text(errors="replace")
    b, by_name, problems = board(remote, keys)
    assert not problems and b.hidden is not None and b.hidden.round == "r1" and b.hidden.draws == [0, 1]
    assert all(by_name[n].status == "verified" and by_name[n].hidden.draws == 2 for n in rows)
    assert b.hidden.floor in FLOORS and not b.hidden.lacking


@slow
def test_reveal_then_audit_passes_and_a_wrong_secret_or_commitment_fails(repo, capsys):
    from benchmark.models.variants.hidden import Round
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.signing import load_private_key, sign_record

    remote, keys = repo
    pub = ["--public-key", str(keys / "verifier.pub")]
    code, _, err = cli(["results", "audit", str(remote), "r1", *pub], capsys)
    assert code == 2 and "not revealed yet" in err
    code, _, err = cli(["results", "reveal", str(remote), "r1", "--key", str(keys / "verifier.key")], capsys)
    assert code == 0 and "revealed round r1" in err, err
    code, out, err = cli(["results", "audit", str(remote), "r1", *pub, "--rerun", "--sandbox", "none"], capsys)
    # two draws of each row: the third party's and the three built-in floors its verification landed (issue #58)
    assert code == 0 and out == "" and "8 hidden run(s) checked; every one matches" in err, out + err
    code, _, err = cli(["results", "reveal", str(remote), "r1", "--key", str(keys / "verifier.key")], capsys)
    assert code == 2 and "revealed already" in err

    # a record the maintainer signed for another secret: its draws' commitments are not the revealed secret's
    checkout = tree(remote)
    where = next(p for p in sorted(checkout.rglob("r1.json")) if p.parent.name.endswith(".rounds"))
    record = json.loads(where.read_text())
    other = Round("r1", b"another secret, another round!!!")
    for run in record["hidden"]:
        d = run["model"]["hidden"]["draw"]
        run["model"]["hidden"]["commitment"] = other.draw(run["track"], run["resource"]["name"],
                                                          run["resource"]["revision"], d).commitment
    signed = sign_record({k: v for k, v in record.items() if k not in ("key_id", "signature")},
                         load_private_key(keys / "verifier.key"))
    rel = str(where.relative_to(checkout))
    with GitStore(str(remote)) as store:
        store.commit({rel: json.dumps(signed).encode()}, "a record signed for another secret")
    code, out, _ = cli(["results", "audit", str(remote), "r1", *pub], capsys)
    assert code == 1 and len(out.splitlines()) == 2, out
    assert out.startswith(f"{rel}: hidden copy 0 signs the commitment") and "the revealed secret gives" in out

    # a revealed secret that is not the one the round committed to
    with GitStore(str(remote)) as store:
        store.commit({"rounds/r1/secret.json": json.dumps({"layout": 1, "kind": "xaibench-round-secret", "round": "r1",
                                                           "secret": "ab" * 32, "revealed": "now"}).encode()}, "x")
    code, out, _ = cli(["results", "audit", str(remote), "r1", *pub], capsys)
    assert code == 1 and out.startswith("rounds/r1/secret.json: reveals a secret hashing to") and \
        "the round committed to" in out and len(out.splitlines()) == 1


@slow
def test_a_lost_or_changed_secret_or_no_open_round_signs_nothing(repo, tmp_path, capsys):
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.rounds import reveal
    from leaderboard.repository.signing import load_private_key
    from leaderboard.repository.submit import submit

    remote, keys = repo
    sub = third_party(tmp_path / "cubes", "cubes")
    (sub / "explainer.py").write_text((sub / "explainer.py").read_text().replace("** 2", "** 3"))
    evaluate(sub, results_dir=tmp_path / "res", **RUN)
    ref = submit(sub, str(remote), results_dir=tmp_path / "res", check=False).target.rpartition("@")[2]
    secret = keys / "rounds" / "r1.secret"
    kept = secret.read_bytes()
    with GitStore(str(remote)) as store:
        before = store.tip()

    def verify() -> tuple[int, str]:
        code, out, err = cli(["results", "verify", f"{remote}@{ref}", "--key", str(keys / "verifier.key"),
                              "--sandbox", "none"], capsys)
        with GitStore(str(remote)) as store:
            assert store.tip() == before  # nothing landed
        assert out == "" and len(err.strip().splitlines()) == 1, err
        return code, err

    secret.write_text("00" * 32 + "\n")
    code, err = verify()
    assert code == 2 and "round r1 committed to" in err and "the secret changed" in err and str(secret) in err
    secret.unlink()
    code, err = verify()
    assert code == 2 and f"the secret of round r1 is not at {secret} (lost?)" in err
    secret.write_bytes(kept)
    signed = (tree(remote) / "rounds" / "r1" / "round.json").read_bytes()
    forged = json.loads(signed)
    forged["commitment"] = hashlib.sha256(b"a secret the attacker knows").hexdigest()  # the signature breaks
    with GitStore(str(remote)) as store:
        store.commit({"rounds/r1/round.json": json.dumps(forged).encode()}, "a forged round")
        before = store.tip()
    code, err = verify()  # the rows' round records, signed by this key, name r1: the round cannot vanish
    records = [p for p in (tree(remote) / "verifications").rglob("r1.json") if p.parent.name.endswith(".rounds")]
    assert len(records) >= 2  # the two rows' and their floors' (the built-in data priors verify ran on r1)
    assert code == 2 and f"round r1 is missing: rounds/r1/round.json is absent or not signed, and {len(records)} " \
        "round record(s) signed by a maintainer name it" in err and "nothing was signed" in err
    with GitStore(str(remote)) as store:
        store.commit({"rounds/r1/round.json": signed}, "the round as signed")
    reveal(str(remote), "r1", load_private_key(keys / "verifier.key"), keys)  # the round revealed: no open round
    with GitStore(str(remote)) as store:
        before = store.tip()
    code, err = verify()
    assert code == 2 and "no open round" in err and "r1, is revealed" in err


@slow
def test_a_hidden_copy_result_is_never_sent_never_validated_and_never_read(rounds_world, repo, tmp_path):
    from benchmark.submission import load_submission
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.signing import load_public_keys
    from leaderboard.repository.submit import gather, package
    from leaderboard.repository.validate import validate

    root, _, _, rows = rounds_world
    remote, keys = repo
    results = tmp_path / "res"
    shutil.copytree(root / "res", results)
    sub = load_submission(root / "squares")
    hidden = evaluate(sub, results_dir=results, hidden=0, **RUN)  # this home's round: scores on a hidden copy
    sent = gather(sub, results)
    assert list(sent) == [rows["squares"]] and "hidden" not in json.loads(sent[rows["squares"]])["model"]

    # a contributor who puts the hidden-copy Result at the row's path: one line from the validator
    head = tmp_path / "head"
    shutil.copytree(tree(remote), head)
    shutil.rmtree(head / "results" / "squares")
    shutil.rmtree(head / "verifications" / "squares")
    for p, data in {**package(sub, results), rows["squares"]: Path(hidden.path).read_bytes()}.items():
        (head / p).parent.mkdir(parents=True, exist_ok=True)
        (head / p).write_bytes(data)
    assert [f for f in validate(head) if "hidden" in f] == [
        f"{rows['squares']}: a hidden run, not a Result on the published model; a results repository carries such "
        "runs only inside a maintainer's signed records (`xaibench results verify`): send the published model's"]
    # read as a board all the same: listed and left out, no row
    found, problems = load_repository(head, load_public_keys([keys / "verifier.pub"]))
    assert f"{rows['squares']}: a hidden run; a results repository carries it inside its row's verification " \
        "record, never as a file; left out" in problems and all(r.submission["name"] != "squares" for r in found)

    # landed beside the verified row (pushed past the checks, at a path of its own): listed and left out; the row
    # shows its own signed runs only, and once it is self-reported (its record gone), none
    folder = rows["squares"].rpartition("/")[0]
    with GitStore(str(remote)) as store:
        store.commit({f"{folder}/function/hidden-{hidden.model['hidden']['round']}/d0/squares.json":
                      Path(hidden.path).read_bytes()}, "a hidden-copy Result on main")
    b, by_name, problems = board(remote, keys)
    assert len(problems) == 1 and "a hidden run; a results repository carries it" in problems[0]
    assert by_name["squares"].status == "verified" and b.hidden.round == "r1" and by_name["squares"].hidden.draws == 2
    checkout = tree(remote)
    shutil.rmtree(checkout / "verifications" / "squares")
    found, _ = load_repository(checkout, load_public_keys([keys / "verifier.pub"]))
    row = next(r for r in found if r.submission["name"] == "squares")
    assert row.status == "self-reported" and row.companions == {}


@slow
def test_a_new_round_and_rehide_rank_the_new_round(repo, capsys):
    from benchmark.models.variants.hidden import Round

    remote, keys = repo
    key = ["--key", str(keys / "verifier.key")]
    code, _, err = cli(["results", "round", "start", str(remote), "r1", *key], capsys)
    assert code == 2 and "holds a round r1 already" in err
    code, _, err = cli(["results", "round", "start", str(remote), "r2", "--draws", "2", *key], capsys)
    assert code == 0 and "started round r2" in err and "round(s) r1 stay unrevealed" in err, err
    assert (keys / "rounds" / "r2.secret").stat().st_mode & 0o077 == 0
    code, out, err = cli(["results", "round", "list", str(remote), "--public-key", str(keys / "verifier.pub")],
                         capsys)
    assert [line.split("\t")[:2] for line in out.splitlines()] == [["r1", "closed, not revealed"], ["r2", "open"]]
    only = [x for n in FLOORS for x in ("--submission", n)]
    code, out, err = cli(["results", "rehide", str(remote), *only, "--sandbox", "none", *key], capsys)
    assert code == 0 and "signed 3 round record(s)" in err and f"ok results/{DATA_PRIOR}/" in out, out + err
    assert "round r2: 2 hidden copies" in out
    code, out, err = cli(["results", "rehide", str(remote), *only, "--sandbox", "none", *key], capsys)
    assert code == 0 and out == "" and "nothing to run" in err
    # the floors count for r2, the method for r1 (its records are kept): the newer round is ranked, the method
    # listed until it is run there
    b, by_name, problems = board(remote, keys)
    assert not problems and b.hidden.round == "r2" and b.hidden.floor in FLOORS and not b.hidden.lacking
    assert "1 row(s) were run on hidden copies of another round only" in " ".join(b.hidden.notes)
    assert by_name["squares"].hidden.reason == "no run on the hidden copies of round r2"
    assert by_name["squares"].rank is None and by_name[DATA_PRIOR].hidden.draws == 2
    checkout = tree(remote)
    (path,) = checkout.glob(f"verifications/{DATA_PRIOR}/*/aixi/*/function.rounds/r2.json")
    record = json.loads(path.read_text())
    rp = parse_result_path(record["result"])
    want = Round("r2", secret_of(keys, "r2")).draws(rp.track, rp.resource, rp.revision, 2)
    assert [r["model"]["hidden"]["commitment"] for r in record["hidden"]] == [d.commitment for d in want]


@slow
def test_a_forged_round_file_is_listed_and_left_out(repo, capsys):
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.signing import keygen, load_private_key, sign_record

    remote, keys = repo
    forged = json.loads((tree(remote) / "rounds" / "r1" / "round.json").read_text())
    forged["commitment"] = "0" * 64  # changed after the records were signed: the signature no longer holds
    attacker = keygen(keys.parent / "attacker")
    other = sign_record({**{k: v for k, v in forged.items() if k not in ("key_id", "signature")}, "round": "r9"},
                        load_private_key(attacker[0]))
    with GitStore(str(remote)) as store:
        store.commit({"rounds/r1/round.json": json.dumps(forged).encode(),
                      "rounds/r9/round.json": json.dumps(other).encode()}, "forged rounds")
    code, out, err = cli(["results", "round", "list", str(remote), "--public-key", str(keys / "verifier.pub")],
                         capsys)
    assert out == "" and "rounds/r1/round.json: not signed under the given maintainer key(s)" in err
    assert "rounds/r9/round.json: not signed" in err and "no open round" in err
    code, _, err = cli(["results", "audit", str(remote), "r1", "--public-key", str(keys / "verifier.pub")], capsys)
    assert code == 2 and "no round r1 signed under the given keys" in err
    b, by_name, problems = board(remote, keys)  # the rows' r1 records name a commitment no signed round holds
    assert b.hidden is None and sum("its round is not one this repository holds signed" in p for p in problems) == 4


def test_a_round_secret_is_kept_out_of_git_work_trees_and_never_overwritten(tmp_path):
    from leaderboard.repository.layout import RepositoryError
    from leaderboard.repository.rounds import make_secret

    (tmp_path / "work" / ".git").mkdir(parents=True)
    with pytest.raises(RepositoryError, match="lies in the git work tree"):
        make_secret(tmp_path / "work" / "keys", "r1")
    path = make_secret(tmp_path / "keys", "r1")
    assert path.stat().st_mode & 0o777 == 0o600 and len(path.read_text().strip()) == 64
    with pytest.raises(RepositoryError, match="never overwritten"):
        make_secret(tmp_path / "keys", "r1")
