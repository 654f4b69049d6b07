"""The badge holds against the next class (issue #51), class by class: a verified row's every verdict comes from
what its own record signs (every unsigned look-alike on `main`: a forged companion run in another folder, a
newer self-reported Result of its name, a forged record, another revision, other primary metrics, a better
self-reported control; gates); every code-like data file; every kind of bad entry on `main` (a board and an
honest pull request still go through); every provenance field compared; names that belong to keys (copied
authors, no key, another key, a rotation, a lost key re-bound by a maintainer); pull requests that can never
run; environments keyed by the wheels that built them. Each refusal one line, a non-zero exit, nothing written."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from benchmark.errors import SubmissionError
from leaderboard.repository.layout import parse_result_path
from tests.test_repository_tampering import (code_only, findings, key_id_of, lay, make_rerun, make_world,
                                             new_remote, no_traceback, propose)
from tests.test_results_repository import branches, cli, contributor, maintainer, sign, third_party

HASH2 = "0123456789abcdef"
LATER = "2099-01-01T00:00:00+00:00"


@pytest.fixture(scope="module")
def world(aixi_home, tmp_path_factory):
    """(root, the honest squares submission, its results folder, the files `submit` sends, the Result's path)."""
    return make_world(aixi_home, tmp_path_factory)


@pytest.fixture(scope="module")
def rerun(world, tmp_path_factory):
    """The maintainer's re-run of the honest Result."""
    return make_rerun(world, tmp_path_factory)


# --------------------------------------------------------------------------------------------------
# 1. every per-row verdict comes from the row's own signed runs: unsigned look-alikes elsewhere on main


def _moved(d: dict, code_hash: str = HASH2, name: str | None = None, revision: str | None = None) -> tuple[str, bytes]:
    """The Result dict `d` at its repository path once its code hash / name / revision are changed."""
    from benchmark.store.results import Result
    from leaderboard.repository.layout import result_path_of

    d = copy.deepcopy(d)
    d["submission"]["hash"] = code_hash
    if name is not None:
        d["submission"]["name"] = d["submission"]["base"] = name
    if revision is not None:
        d["resource"]["revision"] = revision
    return result_path_of(Result.from_dict(copy.deepcopy(d))).rel, json.dumps(d).encode()


def _sensitive(rand: dict) -> dict:
    """A forged randomised-model run that would make the row model-sensitive: its maps unlike the trained ones
    (ρ 0) and its KL ten times worse."""
    from benchmark.store.results import MetricSummary, Result, pack_scores

    r = Result.from_dict(copy.deepcopy(rand))
    s = r.scores()
    arrays = {k: (np.zeros_like(v) if k.startswith("sim-") else v * 10 + 1) for k, v in s.arrays.items()}
    r.instance_scores = pack_scores([(seed, {k: a[i] for k, a in arrays.items()}, s.ok[i])
                                     for i, seed in enumerate(s.seeds)])
    m = r.metrics["kl"]
    r.metrics["kl"] = MetricSummary.from_scores(arrays["kl"][0], m.direction, m.label)
    r.created = LATER
    return r.to_dict()


def _look_alikes(files: dict[str, bytes], rel: str, rand: dict, tmp_path: Path) -> dict[str, dict[str, bytes]]:
    """kind → the files a commit on main adds beside the verified squares (none of them signed)."""
    from leaderboard.repository.signing import keygen, load_private_key, sign_record

    trained = json.loads(files[rel])
    forged_rand = _sensitive(rand)
    forged_rand["extra"]["randomisation"]["trained_outputs_sha256"] = trained["integrity"]["outputs_sha256"]
    better = copy.deepcopy(trained)
    better["created"] = LATER
    better["metrics"]["kl"]["mean"] = trained["metrics"]["kl"]["mean"] / 100
    newer_path, newer = _moved(better)
    other = load_private_key(keygen(tmp_path / "other-key")[0])
    record = {"result": newer_path, "randomised": forged_rand}
    out = {
        "a randomised run in another folder under its name": dict([_moved(forged_rand, "fedcba9876543210")]),
        "a randomised run in another name's folder": _renamed(dict([_moved(forged_rand, name="evil")]), "squares"),
        "a newer self-reported Result of its name": {newer_path: newer},
        "a forged record for a look-alike": {newer_path: newer, parse_result_path(newer_path).verification:
                                             json.dumps(sign_record(record, other)).encode()},
        "a self-reported Result on a newer revision": dict([_moved(better, revision="fedcba987654")]),
        "self-reported rows naming another primary metric": dict(
            _moved({**better, "primary_metric": "emd"}, name=f"f{k}") for k in range(3)),
        "a better self-reported control": dict([_moved({**better, "submission": {**better["submission"],
                                                                                 "role": "control"}},
                                                       name="ctrl")]),
    }
    return out


def _renamed(files: dict[str, bytes], name: str) -> dict[str, bytes]:
    """The Results of `files` at their paths, their `submission.name` set to `name` (the path keeps the base)."""
    out = {}
    for p, b in files.items():
        d = json.loads(b)
        d["submission"]["name"] = name
        out[p] = json.dumps(d).encode()
    return out


BOARD_LEVEL = {"board_verdict", "verdict_diff", "verdict_ci_low", "verdict_ci_high", "board_unranked"}


def _shown(results) -> dict[str, object]:
    """What every format shows of the verified squares row: its CSV row (default and --verified-only; its own
    columns), its Markdown table line, its summary rows and its row on the published page."""
    from leaderboard import render
    from leaderboard.boards import boards
    from leaderboard.site.build import one_page

    out: dict[str, object] = {}
    for verified_only in (False, True):
        bs = boards(results, verified_only=verified_only)
        rows = [r for r in csv.DictReader(io.StringIO(render.to_csv(bs))) if r["submission"] == "squares"]
        assert len(rows) == 1 and rows[0]["status"] == "verified", rows
        out[f"csv {verified_only}"] = {k: v for k, v in rows[0].items() if k not in BOARD_LEVEL and v != ""}
        out[f"md {verified_only}"] = [line for line in render.to_markdown(bs).splitlines()
                                      if line.startswith("|") and " squares" in line]
        out[f"summary {verified_only}"] = [r for r in csv.DictReader(io.StringIO(render.to_summary_csv(bs)))
                                           if r["submission"] == "squares"]
    page = one_page(boards(results, verified_only=True))
    out["page"] = re.findall(r"<tr[^>]*>(?:(?!</tr>).)*squares(?:(?!</tr>).)*</tr>", page, flags=re.S)
    return out


@pytest.fixture(scope="module")
def verified_tree(world, rerun, tmp_path_factory):
    """A checkout whose main holds the honest squares, verified (its record signed here), and its public keys."""
    from leaderboard.repository.rerun import record_for
    from leaderboard.repository.signing import keygen, load_private_key, load_public_keys, sign_record

    _, _, _, files, rel = world
    root = tmp_path_factory.mktemp("verified")
    tree = lay(root / "tree", files)
    private, public, _ = keygen(root / "keys")
    record = sign_record(record_for(tree, rerun), load_private_key(private))
    lay(tree, {parse_result_path(rel).verification: json.dumps(record).encode()})
    return tree, load_public_keys([public]), record


def test_the_verified_row_is_model_blind_from_its_record(verified_tree):
    from leaderboard.repository.boards import load_repository

    tree, keys, _ = verified_tree
    results, problems = load_repository(tree, keys)
    assert problems == [] and [r.status for r in results] == ["verified"]
    shown = _shown(results)
    assert shown["csv False"]["randomisation"] == "model-blind" and shown["csv True"]["randomisation"] == "model-blind"


def _kinds():
    return ["a randomised run in another folder under its name", "a randomised run in another name's folder",
            "a newer self-reported Result of its name", "a forged record for a look-alike",
            "a self-reported Result on a newer revision", "self-reported rows naming another primary metric",
            "a better self-reported control"]


@pytest.mark.parametrize("kind", _kinds())
def test_an_unsigned_look_alike_elsewhere_on_main_changes_nothing_a_verified_row_shows(world, rerun, verified_tree,
                                                                                     tmp_path, kind):
    """Every per-row field — randomisation verdict, reason, figures, rank, gate, status, metrics — in CSV (with and
    without --verified-only), Markdown, the summaries and the published page, before and after the look-alike."""
    import shutil

    from leaderboard.repository.boards import load_repository

    _, _, _, files, rel = world
    tree, keys, record = verified_tree
    before = _shown(load_repository(tree, keys)[0])
    forged = tmp_path / "forged"
    shutil.copytree(tree, forged)
    added = _look_alikes(files, rel, record["randomised"], tmp_path)[kind]
    lay(forged, added)
    results, problems = load_repository(forged, keys)
    assert _shown(results) == before, kind
    if "randomised run" in kind:  # never read as a file: listed and left out
        assert any(p.startswith(next(iter(added))) and "never as a file; left out" in p for p in problems), problems
        # and potent: paired with the row by its name (as boards did before), it would make it model-sensitive
        from benchmark.store.results import Result

        (row,) = load_repository(tree, keys)[0]
        run = Result.from_dict(json.loads(next(iter(added.values()))))
        run.submission.update(name="squares", hash=row.submission["hash"])
        run.status = "verified"
        row.companions = {"randomised": [run]}
        assert _shown([row])["csv False"]["randomisation"] == "model-sensitive"


def test_a_companion_run_is_its_own_folders_and_never_paired_by_name():
    """In a results folder: the randomised run beside a Result is its companion; one in another folder with the
    same name (and the maps' digest copied) belongs to nothing."""
    from leaderboard.boards import boards
    from tests.test_randomisation_board import N, noisy, randomised_of, trained

    good = trained("good", noisy(0.3, 1))
    ctrl = trained("random", noisy(2.0, 3), role="control")
    elsewhere = randomised_of(good, noisy(0.3, 11), np.ones(N))  # blind, if it were paired
    elsewhere.path = Path("/elsewhere") / elsewhere.path.relative_to("/")
    (b,) = boards([good, ctrl, elsewhere])
    row = next(r for r in b.rows if r.submission == "good")
    assert row.sanity.status == "not run" and "no randomised-model run" in row.sanity.reason and row.rank == 1
    own = randomised_of(good, noisy(1.5, 4), np.full(N, 0.1))
    (b,) = boards([good, ctrl, elsewhere, own])
    assert next(r for r in b.rows if r.submission == "good").sanity.status == "model-sensitive"


def test_a_trusted_method_is_gated_by_trusted_controls_only(monkeypatch):
    from leaderboard.boards import boards
    from tests.test_leaderboard import make_result, metric
    from tests.test_rank_intervals import gated_track, noisy

    gated_track(monkeypatch, {"metric": "emd", "min": None, "beat_controls": True})

    def result(name, faith, role, status):
        return make_result(name, values={"kl": noisy(0.5, seed=len(name)), "emd": noisy(faith, 0.05, seed=len(name))},
                           metrics={"kl": metric(0, "lower", "KL"), "emd": metric(0, "higher", "faith")}, role=role,
                           status=status)

    honest = [result("good", 0.6, "method", "verified"), result("position", 0.0, "control", "verified")]
    forged = result("forged-floor", 5.0, "control", "self-reported")
    for rows in (honest, honest + [forged]):
        (b,) = boards(rows)
        assert next(r for r in b.rows if r.submission == "good").below_gate == ""
    forged.status = "verified"  # vouched for, it is still not a built-in: floors come from built-ins only (#58)
    (b,) = boards(honest + [forged])
    assert next(r for r in b.rows if r.submission == "good").below_gate == ""


# --------------------------------------------------------------------------------------------------
# real repositories: a verified row on main, look-alikes committed after it, every format


@pytest.fixture()
def remote(tmp_path, capsys):
    return new_remote(tmp_path, capsys)


def test_look_alikes_committed_after_verify_change_no_board_and_are_listed(world, remote, tmp_path, capsys):
    from leaderboard.repository.git import GitStore

    _, _, _, files, rel = world
    keys = tmp_path / "keys"
    assert cli(["results", "keygen", "--out", str(keys)], capsys)[0] == 0
    ref = propose(remote, files, "honest")
    code, out, err = cli(["results", "verify", f"{remote}@{ref}", "--key", str(keys / "verifier.key"), "--sandbox",
                          "none", "--timeout", "0"], capsys)
    assert code == 0, out + err

    def board(*extra: str) -> dict:
        code, out, err = cli(["leaderboard", "--from", str(remote), "--format", "csv", "--public-key",
                              str(keys / "verifier.pub"), *extra], capsys)
        assert code == 0 and no_traceback(out, err), err
        (row,) = [r for r in csv.DictReader(io.StringIO(out)) if r["submission"] == "squares"]
        return {k: v for k, v in row.items() if k not in BOARD_LEVEL and v != ""}, err

    before = [board()[0], board("--verified-only")[0]]
    with GitStore(str(remote)) as store:
        record = json.loads((store.snapshot() / parse_result_path(rel).verification).read_text())
        forged = _look_alikes(files, rel, record["randomised"], tmp_path)
        store.commit({**forged["a randomised run in another folder under its name"],
                      **forged["a forged record for a look-alike"]}, "look-alikes, committed straight to main")
    (now, err), (now_v, _) = board(), board("--verified-only")
    assert [now, now_v] == before and now["randomisation"] == "model-blind"
    assert "never as a file; left out" in err
    code, _, err = cli(["site", "--from", str(remote), "--out", str(tmp_path / "site"), "--no-figures", "--public-key",
                        str(keys / "verifier.pub")], capsys)
    page = (tmp_path / "site" / "board" / "aixi__aixi__shape-ssin__function.html").read_text()
    assert code == 0 and 'squares</a> <span class="verified">verified</span>' in page and "model-blind" in page


# --------------------------------------------------------------------------------------------------
# 2. data files are data


CODE_LIKE = ["my-module.py", "data/helper.py", "__pycache__/explainer.cpython-311.pyc", "data/__pycache__/notes.txt",
             "data/cache.pyc", "data/CACHE.PYC", "data/opt.pyo", "data/fast.so",
             "data/fast.cpython-311-x86_64-linux-gnu.so", "data/win.pyd", "data/evil.pth"]


@pytest.mark.parametrize("rel", CODE_LIKE)
def test_every_code_like_data_file_is_refused_in_one_line(tmp_path, rel):
    from benchmark.submission import load_submission

    sub = third_party(tmp_path / "squares")
    (sub / rel).parent.mkdir(parents=True, exist_ok=True)
    (sub / rel).write_bytes(b"\x00\x01")
    toml = sub / "submission.toml"
    toml.write_text(toml.read_text() + f'\n[files]\nsneaky = "{rel}"\n')
    with pytest.raises(SubmissionError) as exc:
        load_submission(sub)
    line = str(exc.value)
    assert "\n" not in line and f"[files] sneaky: {rel} is " in line and "not data" in line, line


def test_the_loader_compiles_the_source_and_never_reads_bytecode_beside_it(tmp_path):
    """A `.pyc` in `__pycache__` whose header matches the source (mtime and size) — what CPython's own loader
    would run instead of the source — is never read, and nothing is written there."""
    import importlib.util
    from importlib._bootstrap_external import _code_to_timestamp_pyc

    from benchmark.contracts import Batch
    from benchmark.submission import load_submission

    sub = third_party(tmp_path / "bytecode", name="bytecode-beside")  # a package name no other test imported
    source = sub / "explainer.py"
    forged = source.read_text().replace("** 2", "** 3")
    st = source.stat()
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir()
    pyc.write_bytes(bytes(_code_to_timestamp_pyc(compile(forged, str(source), "exec"), int(st.st_mtime),
                                                 st.st_size)))
    before = pyc.read_bytes()
    # Python's own loader runs that bytecode instead of the source (so the test can fail)
    spec = importlib.util.spec_from_file_location("plain_explainer", source)
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    x = np.full((1, 4, 4), 0.5, np.float32)
    assert plain.Explainer().explain(None, Batch(ids=["i"], inputs=x))[0][0, 0] == pytest.approx(0.125)
    explainer = load_submission(sub).instantiate(staged=True)  # imported from this very folder
    assert explainer.explain(None, Batch(ids=["i"], inputs=x))[0][0, 0] == pytest.approx(0.25)  # x², not x³
    assert pyc.read_bytes() == before and sorted(p.name for p in pyc.parent.iterdir()) == [pyc.name]


def test_a_declared_bytecode_file_in_source_is_refused_by_validate(world, tmp_path):
    _, _, _, files, rel = world
    at = "/".join(rel.split("/")[:3])
    toml = f"{at}/source/squares/submission.toml"
    bad = {**files, toml: files[toml] + b'\n[files]\nsneaky = "__pycache__/explainer.cpython-311.pyc"\n',
           f"{at}/source/squares/__pycache__/explainer.cpython-311.pyc": b"\x00"}
    got = findings(lay(tmp_path / "tip", {}), lay(tmp_path / "merged", bad))
    assert any(f.startswith(f"{at}/source: cannot rebuild the submission") and "not data" in f for f in got), got


# --------------------------------------------------------------------------------------------------
# 3. one bad object on main is one skipped entry: boards and honest pull requests still go through


def _commit_on_main(remote: Path, entries: list[tuple[bytes, bytes]]) -> None:
    """A commit on main whose tree is main's plus raw `git mktree` lines (b"<mode> <type> <id>", name) at the top
    level: any entry git's plumbing accepts."""
    env = {**os.environ, "GIT_DIR": str(remote), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def g(*args, data=None) -> bytes:
        return subprocess.run(["git", *args], input=data, capture_output=True, env=env, check=True).stdout.strip()

    listing = g("ls-tree", "-z", "main").split(b"\0")
    listing = [x for x in listing if x] + [meta + b"\t" + name for meta, name in entries]
    tree = g("mktree", "-z", "--missing", data=b"".join(x + b"\0" for x in listing)).decode()
    commit = g("commit-tree", tree, "-p", "main", "-m", "a bad object").decode()
    g("update-ref", "refs/heads/main", commit)


def _blob(remote: Path, data: bytes) -> bytes:
    return subprocess.run(["git", f"--git-dir={remote}", "hash-object", "-w", "--stdin"], input=data,
                          capture_output=True, check=True).stdout.strip()


BAD_ENTRIES = {
    "an absolute symbolic link": lambda r: [(b"120000 blob " + _blob(r, b"/etc/passwd"), b"evil")],
    "a relative symbolic link": lambda r: [(b"120000 blob " + _blob(r, b"README.md"), b"alias")],
    "an oversize blob": lambda r: [(b"100644 blob " + _blob(r, b"x" * 300_000), b"huge.bin")],
    "a '..' entry": lambda r: [(b"100644 blob " + _blob(r, b"x"), b"..")],
    "a submodule": lambda r: [(b"160000 commit " + b"1" * 40, b"module")],
    "a path that is not UTF-8": lambda r: [(b"100644 blob " + _blob(r, b"x"), b"caf\xe9.json")],
    "a name with a newline": lambda r: [(b"100644 blob " + _blob(r, b"x"), b"two\nlines")],
}


@pytest.mark.parametrize("kind", sorted(BAD_ENTRIES))
def test_one_bad_entry_on_main_is_skipped_and_an_honest_pull_request_goes_through(world, remote, monkeypatch, capsys,
                                                                                  kind):
    import leaderboard.repository.git as git_store

    monkeypatch.setattr(git_store, "MAX_BLOB", 200_000)  # the honest files are smaller; the bad blob is not
    from leaderboard.repository.git import GitStore

    _, _, _, files, _ = world
    assert max(len(b) for b in files.values()) < 200_000
    with GitStore(str(remote)) as store:
        store.commit(files, "an honest submission, merged")
    _commit_on_main(remote, BAD_ENTRIES[kind](remote))
    code, out, err = cli(["leaderboard", "--from", str(remote), "--format", "csv"], capsys)
    assert code == 0 and ",squares,0.0.1,self-reported" in out and "skipped" in err and no_traceback(out, err), err
    code, out, err = cli(["results", "validate", str(remote)], capsys)  # main itself, judged: the entry is listed
    assert code == 1 and "skipped" in out and no_traceback(out, err)
    other = sign(code_only(third_party(remote.parent / "cubes", name="cubes")))
    ref = propose(remote, other, "cubes")
    code, out, err = cli(["results", "validate", f"{remote}@{ref}"], capsys)
    assert code == 0 and out == "", out + err
    before = branches(remote)
    code, _, err = cli(["results", "merge", f"{remote}@{ref}", "--key", str(_maintainer(remote))], capsys)
    assert code == 0 and "merged" in err, err
    with GitStore(str(remote)) as store:
        tip = store.snapshot(store.tip())
        assert (tip / next(iter(other))).is_file() and store.skipped_in(tip)  # landed; the bad entry stays, skipped
    assert branches(remote) == before


def test_a_pull_request_is_refused_for_its_own_bad_entry_only(world, remote, capsys):
    _, _, _, files, rel = world
    from tests.test_repository_tampering import push_tree

    folder = "/".join(rel.split("/")[:3])
    push_tree(remote, "evil", [("100644", p, b) for p, b in files.items()] +
              [("120000", f"{folder}/source/squares/link.py", b"/etc/passwd")])
    code, out, err = cli(["results", "validate", f"{remote}@evil"], capsys)
    assert code == 1 and f"{folder}/source/squares/link.py: a symbolic link" in out and no_traceback(out, err)


# --------------------------------------------------------------------------------------------------
# 4. every provenance field a board or a record shows is compared


@pytest.mark.parametrize("field, value, message", [
    ("requirements", {"tinypkg": "1.1"}, "provenance.requirements is recorded, and the submission declares no "
                                         "requires"),
    ("isolation", {"sandbox": "bwrap", "root": True}, "field 'provenance.isolation.root' is not one a Result has"),
    ("backend", {"name": "ray", "nodes": 9}, "field 'provenance.backend.nodes' is not one a Result has"),
    ("libraries", {"numpy": 2}, "provenance.libraries must map"),
    ("this_run_s", -1, "provenance.this_run_s must be"),
])
def test_a_phantom_or_malformed_provenance_field_is_refused(world, tmp_path, field, value, message):
    _, _, _, files, rel = world
    d = json.loads(files[rel])
    d["provenance"][field] = value
    got = findings(lay(tmp_path / "tip", {}), lay(tmp_path / "merged", {**files, rel: json.dumps(d).encode()}))
    assert any(f.startswith(rel) and message in f for f in got), got


def test_the_re_run_compares_the_provenance_it_reproduces(world, rerun):
    from benchmark.store.results import Result
    from leaderboard.repository.rerun import provenance_differences

    _, _, _, files, rel = world
    evaluations = [e.result for e in rerun.evaluations]
    assert provenance_differences(Result.from_dict(json.loads(files[rel])), evaluations) == []
    for key, value in (("requirements", {"tinypkg": "1.1"}), ("batch_size", 3), ("seed", 7)):
        d = json.loads(files[rel])
        d["provenance"][key] = value
        (line,) = provenance_differences(Result.from_dict(d), evaluations)
        assert line.startswith(f"provenance.{key}: the re-run") and "the Result says" in line


# --------------------------------------------------------------------------------------------------
# 5. a name belongs to a key


def _third(tmp_path: Path, version: str, name: str = "squares") -> dict[str, bytes]:
    folder = third_party(tmp_path / f"{name}-{version}", name=name)
    toml = folder / "submission.toml"
    toml.write_text(toml.read_text().replace('version = "0.0.1"', f'version = "{version}"'))
    return code_only(folder)


def _maintainer(remote: Path) -> Path:
    """The private key of the maintainer of `remote` (made once beside it): `merge --key`."""
    return maintainer(remote.parent / "maintainer")


def _merge(remote: Path, ref: str, capsys) -> int:
    return cli(["results", "merge", f"{remote}@{ref}", "--key", str(_maintainer(remote))], capsys)[0]


def _owner(remote: Path, name: str = "squares") -> dict:
    """The binding that holds `name` (`signed_state`, under the maintainer's key), as its signed file says it."""
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.signing import load_public_keys

    with GitStore(str(remote)) as store:
        tip = store.snapshot(store.tip())
        binding = of_snapshot(store, tip, load_public_keys([_maintainer(remote).with_name("verifier.pub")])).binding(
            name)
        return json.loads((tip / binding.path).read_text())


def _validate(remote: Path, files: dict[str, bytes], key: str, capsys) -> tuple[int, str]:
    ref = propose(remote, files, key)
    code, out, err = cli(["results", "validate", f"{remote}@{ref}", "--public-key",
                          str(_maintainer(remote).with_name("verifier.pub"))], capsys)
    assert no_traceback(out, err)
    return code, out, ref


@pytest.mark.slow(reason="six pull requests validated on a git repository")
def test_a_name_is_bound_to_the_key_that_first_landed_it(world, remote, tmp_path, capsys):
    from leaderboard.repository.signing import keygen, load_private_key

    _, _, _, files, _ = world
    ref = propose(remote, files, "first")
    assert _merge(remote, ref, capsys) == 0
    owner = _owner(remote)
    assert owner["holder"] == key_id_of(contributor()) and owner["bound"].startswith("first landing")
    assert owner["key_id"] == key_id_of(load_private_key(_maintainer(remote))) and owner["seq"] == 1
    # copied authors and no key; copied authors and another key: refused, each in one line
    mallory = load_private_key(keygen(tmp_path / "mallory", role="contributor")[0])
    code, out, _ = _validate(remote, _third(tmp_path, "0.0.2"), "nokey", capsys)
    assert code == 1 and "carries no contributor signature" in out
    code, out, _ = _validate(remote, sign(_third(tmp_path, "0.0.3"), mallory), "other", capsys)
    assert code == 1 and f"bound to the contributor key {owner['holder']}" in out and \
        f"signed by {key_id_of(mallory)}" in out
    code, out, _ = _validate(remote, sign(_third(tmp_path, "0.0.4")), "mine", capsys)
    assert code == 0, out
    # a signature over other files, or edited files under a valid signature
    mine = sign(_third(tmp_path, "0.0.5"))
    sig = next(p for p in mine if "/signatures/" in p)
    toml = next(p for p in mine if p.endswith("/submission.json"))
    code, out, _ = _validate(remote, {**mine, toml: mine[toml] + b" "}, "edited", capsys)
    assert code == 1 and f"{sig}: the files it lists are not the bytes it signed" in out
    forged = json.loads(mine[sig])
    theirs = sign(_third(tmp_path, "0.0.6"), mallory)
    forged["key"] = json.loads(next(v for p, v in theirs.items() if "/signatures/" in p))["key"]
    code, out, _ = _validate(remote, {**mine, sig: json.dumps(forged).encode()}, "swapped", capsys)
    assert code == 1 and "its signature does not hold under the key it names" in out


@pytest.mark.slow(reason="five pull requests validated and two merged on a git repository")
def test_the_key_holder_keeps_the_name_after_a_rotation_and_a_lost_key_is_re_bound_by_a_maintainer(
        world, remote, tmp_path, capsys):
    from leaderboard.repository.signing import ROTATIONS, load_private_key, load_rotations

    _, _, _, files, _ = world
    keys = tmp_path / "ada"
    assert cli(["results", "keygen", "--contributor", "--out", str(keys)], capsys)[0] == 0
    ada = lambda: load_private_key(keys / "contributor.key", role="contributor")  # noqa: E731
    first = ada()
    from leaderboard.repository.contributors import signed

    ref = propose(remote, signed({p: b for p, b in files.items() if "/signatures/" not in p}, first), "v1")
    assert _merge(remote, ref, capsys) == 0
    # the holder rotates: the old key signs over the new one, and the new key's pull request holds the name
    code, _, err = cli(["results", "keygen", "--contributor", "--out", str(keys), "--overwrite"], capsys)
    assert code == 0, err
    second, chain = ada(), load_rotations(keys / ROTATIONS)
    assert key_id_of(second) != key_id_of(first) and [c["by"] for c in chain] == [key_id_of(first)]
    code, out, ref = _validate(remote, signed(_third(tmp_path, "0.0.2"), second, chain), "rotated", capsys)
    assert code == 0, out
    assert _merge(remote, ref, capsys) == 0
    owner = _owner(remote)
    assert owner["holder"] == key_id_of(second) and owner["previous"] == [key_id_of(first)] and owner["seq"] == 2
    # a chain link someone else signed claims nothing
    from leaderboard.repository.signing import keygen

    thief = load_private_key(keygen(tmp_path / "thief", role="contributor")[0])
    fake = [{**chain[0], "key": json.loads(next(v for p, v in signed(_third(tmp_path, "0.0.3"), thief).items()
                                                if "/signatures/" in p))["key"]}]
    code, out, _ = _validate(remote, signed(_third(tmp_path, "0.0.4"), thief, fake), "thief", capsys)
    assert code == 1 and "which that key never signed over" in out
    # the holder loses the key: a maintainer re-binds the name, and the record says so
    lost = tmp_path / "ada-new"
    assert cli(["results", "keygen", "--contributor", "--out", str(lost)], capsys)[0] == 0
    mkey = _maintainer(remote)
    code, _, err = cli(["results", "bind", str(remote), "squares", "--public-key", str(lost / "contributor.pub"),
                        "--reason", "lost her laptop; identity checked by e-mail", "--key", str(mkey)], capsys)
    assert code == 0 and "bound squares to the key" in err, err
    owner = _owner(remote)
    new = load_private_key(lost / "contributor.key", role="contributor")
    assert owner["holder"] == key_id_of(new) and owner["bound"] == "re-bound by a maintainer"
    assert owner["reason"] == "lost her laptop; identity checked by e-mail"
    assert owner["previous"] == [key_id_of(first), key_id_of(second)] and owner["seq"] == 3
    assert owner["key_id"] == key_id_of(load_private_key(mkey)) and "signature" in owner
    assert _validate(remote, signed(_third(tmp_path, "0.0.5"), new), "new", capsys)[0] == 0
    assert _validate(remote, signed(_third(tmp_path, "0.0.6"), second, chain), "old", capsys)[0] == 1
    # bad input to bind: one line, nothing written
    before = branches(remote)
    for argv in (["results", "bind", str(remote), "nobody", "--public-key", str(lost / "contributor.pub"),
                  "--reason", "x", "--key", str(mkey)],
                 ["results", "bind", str(remote), "squares", "--public-key", str(lost / "contributor.pub"),
                  "--reason", " ", "--key", str(mkey)]):
        code, out, err = cli(argv, capsys)
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and no_traceback(out, err), err
    assert branches(remote) == before


def test_a_name_held_before_contributor_keys_is_refused_until_a_maintainer_binds_it(world, remote, tmp_path, capsys):
    from leaderboard.repository.git import GitStore

    _, _, _, files, _ = world
    with GitStore(str(remote)) as store:  # landed before contributor signatures: no binding
        store.commit({p: b for p, b in files.items() if "/signatures/" not in p}, "merged long ago")
    code, out, _ = _validate(remote, sign(_third(tmp_path, "0.0.2")), "late", capsys)
    assert code == 1 and "held but bound to no contributor key" in out and "`xaibench results bind`" in out


def test_submit_without_a_contributor_key_sends_nothing(world, remote, tmp_path, capsys):
    _, sub, results, _, _ = world
    before = branches(remote)
    code, out, err = cli(["submit", str(sub), "--to", str(remote), "--results", str(results), "--key",
                          str(tmp_path / "none.key")], capsys)
    assert code == 2 and "make one with `xaibench results keygen --contributor`" in err and err.count("\n") == 1
    assert branches(remote) == before


# --------------------------------------------------------------------------------------------------
# 6. validate refuses what can never run; merge never lands it


def _can_never_run(tmp_path: Path, case: str) -> dict[str, bytes]:
    folder = third_party(tmp_path / case.replace(" ", "-"), name="runs-never")
    toml = folder / "submission.toml"
    if case == "a module named numpy":
        (folder / "numpy").mkdir()
        (folder / "numpy" / "__init__.py").write_text("")
    elif case == "a module named benchmark":
        (folder / "benchmark.py").write_text("X = 1\n")
    elif case == "a requirement that replaces numpy":
        toml.write_text(toml.read_text().replace('license = "MIT"', 'license = "MIT"\nrequires = ["numpy<2"]'))
    elif case == "a module that shadows its requirement":
        toml.write_text(toml.read_text().replace('license = "MIT"', 'license = "MIT"\nrequires = ["tinypkg>=1"]'))
        (folder / "tinypkg.py").write_text("SCALE = 1\n")
    return code_only(folder)


@pytest.mark.parametrize("case", ["a module named numpy", "a module named benchmark",
                                  "a requirement that replaces numpy", "a module that shadows its requirement"])
def test_validate_refuses_a_submission_that_can_never_run_and_merge_never_lands_it(remote, tmp_path, capsys, case):
    files = sign(_can_never_run(tmp_path, case))
    code, out, ref = _validate(remote, files, "never", capsys)
    assert code == 1 and "it can never run (" in out, out
    before = branches(remote)
    code, _, err = cli(["results", "merge", f"{remote}@{ref}", "--key", str(_maintainer(remote))], capsys)
    assert code == 2 and "nothing was merged" in err and err.count("\n") == 1 and branches(remote) == before


@pytest.mark.parametrize("requirement", ["tinypkg===file:///tmp/tinypkg.whl", "tinypkg @ file:///tmp/x.whl",
                                         "tinypkg>=1; sys_platform == 'file://x'"])
def test_a_requirement_that_points_at_a_file_is_refused(tmp_path, requirement):
    from benchmark.submission import load_submission

    folder = third_party(tmp_path / "sub")
    toml = folder / "submission.toml"
    toml.write_text(toml.read_text().replace('license = "MIT"', f'license = "MIT"\nrequires = ["{requirement}"]'))
    with pytest.raises(SubmissionError, match="is a URL|points at a file or URL"):
        load_submission(folder)


# --------------------------------------------------------------------------------------------------
# 7. an environment is keyed by the wheels it was built from


@pytest.mark.slow(reason="two wheels built and three pip resolutions")
def test_an_environment_is_keyed_by_its_wheels_and_never_reused_without_them(tmp_path):
    import hashlib
    import shutil

    from benchmark.submission.environments import EnvironmentBuildError, Sources, ensure
    from tests.test_packages import wheel

    house_a, house_b = tmp_path / "a", tmp_path / "b"
    wheel(house_a, tmp_path / "wa", "tinypkg", "1.0.0", {"tinypkg/__init__.py": "SCALE = 3.0\n"})
    wheel(house_b, tmp_path / "wb", "tinypkg", "1.0.0", {"tinypkg/__init__.py": "SCALE = -3.0\n"})  # same version
    home = tmp_path / "envs"
    env = ensure(["tinypkg==1.0.0"], Sources(find_links=(str(house_a),)), home=home)
    (w,) = env.wheels
    whl = next(house_a.glob("*.whl"))
    assert (w.name, w.version, w.file) == ("tinypkg", "1.0.0", whl.name)
    assert w.sha256 == hashlib.sha256(whl.read_bytes()).hexdigest()
    assert not ensure(["tinypkg==1.0.0"], Sources(find_links=(str(house_a),)), home=home).built  # the same wheels
    other = ensure(["tinypkg==1.0.0"], Sources(find_links=(str(house_b),)), home=home)  # other bytes: another one
    assert other.built and other.key != env.key and (other.packages / "tinypkg/__init__.py").read_text() == \
        "SCALE = -3.0\n"
    shutil.rmtree(house_a)
    house_a.mkdir()
    with pytest.raises(EnvironmentBuildError, match="no source offers tinypkg==1.0.0"):  # cached, not rebuildable
        ensure(["tinypkg==1.0.0"], Sources(find_links=(str(house_a),)), home=home)
