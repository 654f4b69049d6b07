"""A results repository (issue #37): a third party's submission goes to a local bare git repository with
`xaibench submit`, `results validate` passes, `results verify` re-runs it in the sandbox and signs, and
`site --from` shows it verified; every tampering is caught, bad input writes nothing, and the Hub path goes
through `huggingface_hub`'s own calls (recorded by an injected client, never the network)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.runner import evaluate
from conftest import write_submission
from leaderboard.repository.layout import RepositoryError, parse_result_path
from leaderboard.repository.validate import diff_trees, validate

RUN = dict(track="aixi", resource="aixi/shape-ssin", model="function", sandbox="none", timeout_s=0)
BODY = "return [np.asarray(x, dtype=np.float32) ** 2 for x in np.asarray(batch.inputs)]\n"


def third_party(folder: Path, name: str = "squares") -> Path:
    sub = write_submission(folder, name, BODY, caps="deterministic = true")
    toml = sub / "submission.toml"
    toml.write_text(toml.read_text().replace('entry = "explainer:Explainer"\n', 'entry = "explainer:Explainer"\n'
                                             'authors = ["Ada Lovelace <ada@example.org>"]\nlicense = "MIT"\n'))
    return sub


def contributor():
    """This machine's contributor key (`$XAIBENCH_HOME/keys/contributor.key`, made once): what `submit` signs with."""
    from leaderboard.repository.signing import ROLES, default_key_dir, keygen, load_private_key

    path = default_key_dir() / ROLES["contributor"][0]
    if not path.exists():
        keygen(role="contributor")
    return load_private_key(path, role="contributor")


def sign(files: dict[str, bytes], private=None) -> dict[str, bytes]:
    """`files` (one submission folder) with the contribution signature `submit` adds (this machine's key, or
    `private`); any signature they held is dropped first."""
    from leaderboard.repository.contributors import is_signature, signed

    return signed({p: b for p, b in files.items() if not is_signature(p)}, private or contributor())


def maintainer(folder: Path) -> Path:
    """A maintainer's private key in `folder` (made once, `verifier.pub` beside it): what `merge`, `verify` and `bind`
    sign with, and the public key `validate` and the boards believe bindings, rounds and records under."""
    from leaderboard.repository.signing import keygen

    if not (folder / "verifier.key").exists():
        keygen(folder)
    return folder / "verifier.key"


def resign(base: Path, head: Path, private=None) -> None:
    """Sign what `head` adds to `base` as its contributor would (a hostile one signs whatever they send)."""
    from leaderboard.repository.contributors import is_signature

    added = {c.path: (head / c.path).read_bytes() for c in diff_trees(base, head) if c.status == "added"}
    for p in [p for p in added if is_signature(p)]:
        (head / p).unlink()
    added = {p: b for p, b in added.items() if not is_signature(p)}
    folders = {tuple(p.split("/")[1:3]) for p in added if p.startswith("results/")}
    for name, code_hash in folders:
        mine = {p: b for p, b in added.items() if p.startswith(f"results/{name}/{code_hash}/")}
        for p, b in sign(mine, private).items():
            (head / p).parent.mkdir(parents=True, exist_ok=True)
            (head / p).write_bytes(b)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


def branches(remote: Path) -> list[str]:
    return sorted(line.split("\t")[1] for line in git("ls-remote", str(remote)).splitlines() if "\t" in line)


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.fixture(scope="module")
def world(aixi_home, tmp_path_factory):
    """A third-party submission evaluated on the full (tiny) split, and an empty results repository."""
    import os

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    contributor()
    root = tmp_path_factory.mktemp("repo-world")
    sub = third_party(root / "squares")
    results = root / "res"
    evaluate(sub, results_dir=results, **RUN)
    evaluate(sub, results_dir=results, limit=5, **RUN)  # a --limit run: never sent
    return root, sub, results


@pytest.fixture()
def remote(world, tmp_path, capsys):
    remote = tmp_path / "results.git"
    git("init", "--quiet", "--bare", str(remote))
    code, _, err = cli(["results", "init", str(remote)], capsys)
    assert code == 0, err
    return remote


def test_end_to_end_submit_validate_verify_site(world, remote, tmp_path, capsys):
    _, sub, results = world
    code, out, err = cli(["submit", str(sub), "--to", str(remote), "--results", str(results)], capsys)
    assert code == 0, err
    sent = out.split()
    assert "results/squares/" in sent[0] and any(p.endswith("/source/squares/explainer.py") for p in sent)
    assert [p for p in sent if parse_result_path(p)] == [p for p in sent if p.endswith("/function.json")]
    assert len([p for p in sent if parse_result_path(p)]) == 1  # the --limit run stays home
    (branch,) = [b for b in branches(remote) if b.startswith("refs/heads/xaibench/")]
    ref = branch[len("refs/heads/"):]
    assert "opened a pull request" in err and ref in err

    code, out, err = cli(["submit", str(sub), "--to", str(remote), "--results", str(results)], capsys)
    assert code == 0 and "nothing new: already proposed" in err and len(branches(remote)) == 3  # HEAD, main, PR

    code, out, err = cli(["results", "validate", f"{remote}@{ref}"], capsys)
    assert code == 0 and out == "" and "valid" in err

    keys = tmp_path / "keys"
    code, _, err = cli(["results", "keygen", "--out", str(keys)], capsys)
    assert code == 0 and (keys / "verifier.key").stat().st_mode & 0o077 == 0
    code, out, err = cli(["results", "verify", f"{remote}@{ref}", "--key", str(keys / "verifier.key"), "--jobs", "2"],
                         capsys)
    assert code == 0, out + err
    assert out.startswith("ok results/squares/") and "(equal outputs)" in out and "signed 3 record" in err
    # the board's built-in floors it lacked, run and signed by the maintainer in the same commit (issue #58)
    assert "ok results/centre-prior/" in out and "ok results/foreground/" in out
    assert "(a built-in floor, run by the maintainer)" in out

    # a repository that started no round of hidden copies: the record says so, and carries no hidden run
    rel = next(p for p in sent if parse_result_path(p))
    record = json.loads(git("--git-dir", str(remote), "show", f"main:{parse_result_path(rel).verification}"))
    assert "hidden" not in record and "started no round of hidden copies" in record["hidden_not_run"]

    code, _, err = cli(["results", "merge", f"{remote}@{ref}", "--key", str(keys / "verifier.key")], capsys)
    assert code == 0, err
    code, _, err = cli(["submit", str(sub), "--to", str(remote), "--results", str(results)], capsys)
    assert code == 0 and "nothing new" in err and "holds every file" in err

    site = tmp_path / "site"
    code, _, err = cli(["site", "--from", str(remote), "--out", str(site), "--no-figures",
                        "--public-key", str(keys / "verifier.pub")], capsys)
    assert code == 0, err
    board = (site / "board" / "aixi__aixi__shape-ssin__function.html").read_text()
    assert 'squares</a> <span class="verified">verified</span>' in board
    code, out, _ = cli(["leaderboard", "--from", str(remote), "--format", "csv"], capsys)
    assert code == 0 and ",squares,0.0.1,self-reported" in out  # no public key configured: not verified
    # the randomisation test (issue #45) comes with the maintainer's signed re-run: without it a self-reported row
    # is not ranked; with it, the verified row is judged — x², a fixed function of the input, is model-blind
    import csv
    import io

    (row,) = [r for r in csv.DictReader(io.StringIO(out)) if r["submission"] == "squares"]
    assert row["rank"] == "" and row["randomisation"] == "not run" and row["randomisation_unranked"] == "true"
    assert "self-reported" in row["randomisation_reason"]
    code, out, _ = cli(["leaderboard", "--from", str(remote), "--format", "csv", "--public-key",
                        str(keys / "verifier.pub")], capsys)
    (row,) = [r for r in csv.DictReader(io.StringIO(out)) if r["submission"] == "squares"]
    assert code == 0 and row["status"] == "verified" and row["randomisation"] == "model-blind", row
    assert float(row["rand_rho"]) == 1.0 and row["rank"] == ""


# --------------------------------------------------------------------------------------------------
# tampering: each caught by the validator, the re-run or the boards


@pytest.fixture()
def pr(world, tmp_path):
    """(base tree, head tree = base + the submission's files, the Result's path) — a pull request on disk."""
    from benchmark.submission import load_submission
    from leaderboard.repository.submit import package

    base = tmp_path / "base"
    base.mkdir()
    (base / "xaibench-results.json").write_text('{"layout": 1}\n')
    files = package(load_submission(world[1]), world[2])
    head = tmp_path / "head"
    shutil.copytree(base, head)
    for rel, data in files.items():
        (head / rel).parent.mkdir(parents=True, exist_ok=True)
        (head / rel).write_bytes(data)
    return base, head, next(rel for rel in files if parse_result_path(rel))


def findings(base: Path, head: Path) -> list[str]:
    resign(base, head)
    return validate(head, base, diff_trees(base, head))


def edit(path: Path, change) -> None:
    d = json.loads(path.read_text())
    change(d)
    path.write_text(json.dumps(d))


def test_an_untouched_pull_request_validates(pr):
    assert findings(*pr[:2]) == []


def test_an_edited_metric_is_found(pr):
    base, head, rel = pr
    edit(head / rel, lambda d: d["metrics"]["kl"].update(mean=d["metrics"]["kl"]["mean"] / 2))
    (line,) = findings(base, head)
    assert line.startswith(f"{rel}: metric kl.mean says") and "its per-instance scores give" in line


def test_a_source_file_changed_after_hashing_is_found(pr):
    base, head, rel = pr
    src = next((head / rel).parents[2].glob("source/*/explainer.py"))
    src.write_text(src.read_text() + "# changed\n")
    assert any("the code hash recomputed from source/" in f for f in findings(base, head))


def test_truncated_coverage_is_found(pr, world, tmp_path):
    base, head, rel = pr
    part = next(p for p in world[2].rglob("squares@*.json"))
    (head / rel).write_bytes(part.read_bytes())
    assert findings(base, head) == [f"{rel}: coverage is not the complete validation split (5 of "
                                    f"{json.loads(part.read_text())['coverage']['split_size']} instances, or "
                                    "another set); run `xaibench evaluate` without --limit"]


def test_an_unknown_resource_revision_is_found(pr):
    base, head, rel = pr
    edit(head / rel, lambda d: d["resource"].update(revision="0123456789ab"))
    moved = rel.replace(rel.split("/")[4], rel.split("/")[4].split("@")[0] + "@0123456789ab")
    (head / moved).parent.mkdir(parents=True)
    (head / rel).rename(head / moved)
    assert findings(base, head) == [f"{moved}: resource aixi/shape-ssin at revision 0123456789ab is not one "
                                    "xaibench knows"]


def test_a_pull_request_may_only_add_its_own_submission(pr):
    base, head, rel = pr
    other = "results/other/0123456789abcdef/submission.json"
    for tree in (base, head):
        (tree / other).parent.mkdir(parents=True)
        (tree / other).write_text('{"authors": ["Someone Else"]}\n')
    (head / other).write_text('{"authors": ["Ada Lovelace <ada@example.org>"]}\n')
    (head / "verifications/x.json").parent.mkdir()
    (head / "verifications/x.json").write_text("{}")
    (base / "README.md").write_text("hello\n")
    got = findings(base, head)
    assert f"{other}: a pull request may only add files; this one is modified (the default branch holds it with " \
        "other content)" in got
    assert "verifications/x.json: verifications/ is written only by maintainers (`xaibench results verify`)" in got
    assert "README.md: a pull request may only add files under results/<submission>/<code-hash>/" in got
    assert any(f.startswith("the pull request touches more than one submission folder") for f in got)
    # a name held on the default branch that no key holds (it landed before contributor signatures)
    from leaderboard.repository.signed_state import read
    from leaderboard.repository.signing import load_public_keys

    held = f"results/squares/{'f' * 16}/submission.json"
    (base / held).parent.mkdir(parents=True)
    (base / held).write_text('{"authors": ["Ada Lovelace <ada@example.org>"]}\n')
    state = read(base, load_public_keys([maintainer(base.parent / "maintainer").with_name("verifier.pub")]))
    assert any(f.startswith("results/squares/: the name is held but bound to no contributor key") and
               "`xaibench results bind`" in f for f in validate(head, base, diff_trees(base, head), state=state))


def test_a_built_in_name_with_other_code_is_refused(pr, tmp_path):
    from benchmark.submission import load_submission
    from leaderboard.repository.layout import source_files, submission_dir, submission_json

    base, head, _ = pr
    fake = load_submission(third_party(tmp_path / "occlusion", name="occlusion"))
    folder = submission_dir("occlusion", fake.hash)
    files = {f"{folder}/submission.json": json.dumps(submission_json(fake, builtin=False)).encode(),
             **{f"{folder}/{k}": v for k, v in source_files(fake).items()}}
    for rel, data in files.items():
        (head / rel).parent.mkdir(parents=True, exist_ok=True)
        (head / rel).write_bytes(data)
    assert any("'occlusion' is a built-in submission and this is not its code" in f for f in findings(base, head))


def test_a_record_signed_with_another_key_is_not_verified(pr, tmp_path):
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.layout import sha256
    from leaderboard.repository.reading import folder_digests
    from leaderboard.repository.signing import keygen, load_private_key, load_public_keys, sign_record

    _, head, rel = pr
    mine, theirs = keygen(tmp_path / "mine"), keygen(tmp_path / "theirs")
    rp = parse_result_path(rel)
    source, meta = folder_digests(head, rp.submission, rp.code_hash)
    record = sign_record({"result": rel, "result_sha256": sha256((head / rel).read_bytes()), "source_sha256": source,
                          "submission_json_sha256": meta}, load_private_key(theirs[0]))
    path = head / parse_result_path(rel).verification
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))

    def status(key) -> str:
        (r,), problems = load_repository(head, load_public_keys([key]))
        return r.status

    assert status(mine[1]) == "self-reported" and status(theirs[1]) == "verified"
    edit(head / rel, lambda d: d.update(wall_time_s=0.5))  # the record no longer names exactly this file
    assert status(theirs[1]) == "self-reported"


def test_a_re_run_that_disagrees_signs_nothing(world, remote, tmp_path):
    """A pull request whose Result validates (scores and metrics agree) but came from other code: the
    re-run of the submitted source gives other outputs, and no record is written."""
    from benchmark.submission import load_submission
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.rerun import verify_pull_request
    from leaderboard.repository.signing import keygen, load_private_key
    from leaderboard.repository.submit import package

    _, sub, results = world
    cubes = write_submission(tmp_path / "cubes", "cubes", BODY.replace("** 2 for", "** 2 + np.arange(x.shape[-1]) for"))
    forged = evaluate(cubes, results_dir=tmp_path / "cubes-res", **RUN)
    files = package(load_submission(sub), results)
    rel = next(p for p in files if parse_result_path(p))
    d = json.loads(files[rel])
    d.update(metrics={k: {**v, "ci95": v["ci95"]} for k, v in forged.to_dict()["metrics"].items()},
             instance_scores=forged.instance_scores, integrity={**d["integrity"], **forged.integrity})
    files[rel] = json.dumps(d).encode()
    files = sign(files)
    with GitStore(str(remote)) as store:
        store.propose(files, "forged", "forged")
        assert validate(store.snapshot("xaibench/forged"), store.snapshot()) == []
        private = load_private_key(keygen(tmp_path / "keys")[0])
        runs, commit = verify_pull_request(store, "xaibench/forged", private, sandbox="none")
    assert commit is None and runs[0].problems[0].startswith("the re-run's outputs differ")
    assert any(p.startswith("metric kl.mean says") and "the re-run gives" in p for p in runs[0].problems)
    assert [b for b in branches(remote) if "verifications" in b] == []


# --------------------------------------------------------------------------------------------------
# bad input: one line each, nothing sent


def test_bad_targets_and_results_send_nothing(world, remote, tmp_path):
    from leaderboard.repository.submit import submit

    _, sub, results = world
    before = branches(remote)
    plain = tmp_path / "plain.git"
    git("init", "--quiet", "--bare", str(plain))
    with pytest.raises(RepositoryError, match="is not a results repository"):
        submit(sub, str(plain), results_dir=results, check=False)
    with pytest.raises(RepositoryError, match="is not a git repository"):
        submit(sub, str(tmp_path / "nowhere"), results_dir=results, check=False)
    only_limited = tmp_path / "limited"
    for p in results.rglob("squares@*.json"):
        (only_limited / p.name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, only_limited / p.name)
    with pytest.raises(RepositoryError, match="no complete Result of squares for its current code hash"):
        submit(sub, str(remote), results_dir=only_limited, check=False)
    dirty = tmp_path / "dirty"
    shutil.copytree(results, dirty)
    full = next(dirty.rglob("squares.json"))
    edit(full, lambda d: d["metrics"]["kl"].update(mean=0.0))
    with pytest.raises(RepositoryError, match="changed after it was written"):
        submit(sub, str(remote), results_dir=dirty, check=False)
    full.write_text('{"schema_version": 3, "metr')
    with pytest.raises(RepositoryError, match="half-written or damaged"):
        submit(sub, str(remote), results_dir=dirty, check=False)
    assert branches(remote) == before


def test_a_conflicting_file_in_the_repository_sends_nothing(world, remote):
    from benchmark.submission import load_submission
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.submit import package, submit

    _, sub, results = world
    rel = next(p for p in package(load_submission(sub), results) if p.endswith("submission.json"))
    with GitStore(str(remote)) as store:
        store.commit({rel: b'{"name": "squares", "authors": ["Someone Else"]}\n'}, "someone was first")
    before = branches(remote)
    with pytest.raises(RepositoryError, match=f"already holds {rel} with other content"):
        submit(sub, str(remote), results_dir=results, check=False)
    assert branches(remote) == before


# --------------------------------------------------------------------------------------------------
# the Hub: huggingface_hub's calls, recorded


class RecordingHub:
    """Stands where `HfApi()` would: records every call (name, arguments) and answers as an empty results
    repository on the Hub would; `snapshot_download` writes the marker file."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []
        self.prs: list = []

    def _record(self, name, args, kwargs):
        self.calls.append((name, args, kwargs))

    def file_exists(self, *args, **kwargs):
        self._record("file_exists", args, kwargs)
        return True

    def get_paths_info(self, *args, **kwargs):
        self._record("get_paths_info", args, kwargs)
        return []

    def get_repo_discussions(self, *args, **kwargs):
        self._record("get_repo_discussions", args, kwargs)
        return iter(self.prs)

    def list_repo_files(self, *args, **kwargs):
        self._record("list_repo_files", args, kwargs)
        return ["xaibench-results.json"]

    def snapshot_download(self, *args, **kwargs):
        self._record("snapshot_download", args, kwargs)
        Path(kwargs["local_dir"]).mkdir(parents=True, exist_ok=True)
        (Path(kwargs["local_dir"]) / "xaibench-results.json").write_text('{"layout": 1}\n')
        return kwargs["local_dir"]

    def create_commit(self, *args, **kwargs):
        from types import SimpleNamespace

        self._record("create_commit", args, kwargs)
        self.prs.append(SimpleNamespace(num=1, title=kwargs["commit_message"]))
        return SimpleNamespace(pr_url="https://huggingface.co/datasets/org/board/discussions/1", oid="c0ffee", pr_num=1)


def test_the_hub_path_uses_huggingface_hub(world, monkeypatch):
    from huggingface_hub import CommitOperationAdd

    from leaderboard.repository.submit import submit

    _, sub, results = world
    hub = RecordingHub()
    out = submit(sub, "hf://datasets/org/board", results_dir=results, client=hub, check=False)
    assert out.message == "opened a pull request: hf://datasets/org/board pull request " \
                          "https://huggingface.co/datasets/org/board/discussions/1; validate it with `xaibench " \
                          "results validate hf://datasets/org/board@refs/pr/1`"
    assert out.target == "hf://datasets/org/board@refs/pr/1"
    (name, args, kwargs), = [c for c in hub.calls if c[0] == "create_commit"]
    assert args[0] == "org/board" and kwargs["create_pr"] is True and kwargs["repo_type"] == "dataset"
    assert all(isinstance(op, CommitOperationAdd) for op in args[1])
    assert sorted(op.path_in_repo for op in args[1]) == sorted(out.files)
    assert [c[0] for c in hub.calls] == ["file_exists", "get_paths_info", "get_repo_discussions",
                                         "list_repo_files", "snapshot_download", "create_commit"]
    again = submit(sub, "hf://datasets/org/board", results_dir=results, client=hub, check=False)
    assert again.message.startswith("nothing new: already proposed at hf://datasets/org/board pull request #1")
    assert [c[0] for c in hub.calls].count("create_commit") == 1
    # without an injected client: the real HfApi, which refuses offline (HF_HUB_OFFLINE=1) in one line
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RepositoryError, match=r"^the Hub refused file_exists on hf://datasets/org/board "
                                              r"\(OfflineModeIsEnabled"):
        submit(sub, "hf://datasets/org/board", results_dir=results, check=False)


def test_a_result_main_holds_already_is_left_out_and_the_rest_is_sent(world, remote, capsys):
    """A Result of the same code that main holds at its path with other content (a maintainer's run of a built-in
    floor, landed before the submitter's pull request: the reference build met it) is left out with one line, and
    the rest is proposed; any other file main holds differently still refuses the whole submission."""
    from benchmark.submission import load_submission
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.submit import package, submit

    _, sub, results = world
    files = package(load_submission(sub), results)
    (rel,) = [p for p in files if parse_result_path(p) is not None]
    theirs = json.loads(files[rel])
    theirs["created"] = "2000-01-01T00:00:00+00:00"
    with GitStore(str(remote)) as store:
        store.commit({rel: (json.dumps(theirs) + "\n").encode()}, "a Result of this code, run by someone else")
    out = submit(sub, str(remote), results_dir=results, check=False)
    assert out.left_out == [rel] and rel not in out.sent and out.sent and "1 Result(s) left out" in out.message
    meta = next(p for p in files if p.endswith("submission.json"))
    with GitStore(str(remote)) as store:
        store.commit({meta: b"{}\n"}, "other metadata at the same path")
    with pytest.raises(RepositoryError, match=f"already holds {meta} with other content"):
        submit(sub, str(remote), results_dir=results, check=False)


def test_verify_re_runs_the_boards_of_different_resources_at_once_and_one_resources_in_turn():
    """`results verify --jobs N`: the Results of different resources re-run on N threads at once; those of one
    resource one after the other (a hidden copy they share is built once); the re-runs come back in the pull
    request's order."""
    import threading
    import time

    from leaderboard.repository.rerun import Rerun, rerun_all

    rels = [f"results/s/0123456789abcdef/idc/idc__mr-{r}@abc/{m}.json"
            for r, m in (("wga", "cnn"), ("wga", "han"), ("milp", "cnn"), ("hybrid", "cnn"))]
    active: dict[str, int] = {}
    most, lock, order = [0], threading.Lock(), []

    def one(rel: str) -> Rerun:
        resource = rel.split("/")[4]
        with lock:
            assert not active.get(resource), f"two re-runs of {resource} at once"
            active[resource] = 1
            most[0] = max(most[0], sum(active.values()))
            order.append(rel)
        time.sleep(0.2)
        with lock:
            active[resource] = 0
        return Rerun(rel)

    runs = rerun_all(rels, one, jobs=2)
    assert [r.rel for r in runs] == rels and sorted(order) == sorted(rels)
    assert most[0] == 2  # two resources at once, never more than the jobs
    assert order.index(rels[0]) < order.index(rels[1])  # one resource's Results in their order
    assert [r.rel for r in rerun_all(rels, one, jobs=1)] == rels
