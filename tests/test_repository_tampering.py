"""A verified badge that cannot lie (issue #44): the results repository against a contributor who tampers,
class by class — every kind of entry in `source/` the code hash does not cover, every Result field a board reads
edited in turn (and a property test over every field path of a real Result), permuted per-instance scores,
strict parsing (duplicate keys, nesting, non-UTF-8, oversize), hostile tree entries, old branches judged
against the tip, records that bind the code, look-alike names, Hub identities, the stochastic tolerance and
every refusal on the command line: one line, a non-zero exit, nothing written, no board down."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmark.runner import evaluate
from leaderboard.repository.layout import RepositoryError, parse_result_path
from tests.test_results_repository import RUN, branches, cli, contributor, maintainer, resign, sign, third_party

# --------------------------------------------------------------------------------------------------
# a world: one honest submission evaluated once, its files, and its maintainer's re-run


@pytest.fixture(scope="module")
def world(aixi_home, tmp_path_factory):
    """(root, submission folder, results folder, the files `submit` would send, the Result's path)."""
    return make_world(aixi_home, tmp_path_factory)


def make_world(aixi_home, tmp_path_factory):
    """`world` (a module fixture of every module that uses it)."""
    from benchmark.submission import load_submission
    from leaderboard.repository.submit import package

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    root = tmp_path_factory.mktemp("tamper-world")
    sub = third_party(root / "squares")
    results = root / "res"
    evaluate(sub, results_dir=results, **RUN)
    files = sign(package(load_submission(sub), results))  # as `submit` sends them: signed by this machine's key
    rel = next(p for p in files if parse_result_path(p))
    return root, sub, results, files, rel


@pytest.fixture(scope="module")
def rerun(world, tmp_path_factory):
    """The maintainer's re-run of the honest Result (one deterministic evaluation)."""
    return make_rerun(world, tmp_path_factory)


def make_rerun(world, tmp_path_factory):
    """`rerun` (a module fixture of every module that uses it)."""
    from leaderboard.repository.rerun import rerun_result

    tree = lay(tmp_path_factory.mktemp("rerun") / "tree", world[3])
    run = rerun_result(tree, world[4], sandbox="none", timeout_s=0)
    assert run.problems == [] and run.rule == "equal outputs"
    return run


def lay(tree: Path, files: dict[str, bytes], marker: bool = True) -> Path:
    """A checked-out tree holding `files` (and the layout marker)."""
    tree.mkdir(parents=True, exist_ok=True)
    if marker:
        (tree / "xaibench-results.json").write_text('{"layout": 1}\n')
    for rel, data in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data)
    return tree


@pytest.fixture()
def pr(world, tmp_path):
    """(tip, merged = tip + the submission's files, the Result's path): a pull request on disk."""
    tip = lay(tmp_path / "tip", {})
    return tip, lay(tmp_path / "merged", world[3]), world[4]


def code_only(folder: Path) -> dict[str, bytes]:
    """A submission's `submission.json` and `source/` as `submit` lays them out (no Result)."""
    from benchmark.submission import load_submission
    from leaderboard.repository.layout import source_files, submission_dir, submission_json

    sub = load_submission(folder)
    at = submission_dir(sub.name, sub.hash)
    meta = json.dumps(submission_json(sub, False), indent=1, sort_keys=True) + "\n"
    return {f"{at}/submission.json": meta.encode(),
            **{f"{at}/{k}": v for k, v in source_files(sub).items()}}


def findings(tip: Path, merged: Path) -> list[str]:
    """The validator's findings on `merged` as a pull request on `tip`, signed by its (hostile) contributor, who
    signs whatever they send."""
    from leaderboard.repository.validate import diff_trees, validate

    resign(tip, merged)
    return validate(merged, tip, diff_trees(tip, merged))


def test_the_honest_pull_request_validates(pr):
    assert findings(*pr[:2]) == []


# --------------------------------------------------------------------------------------------------
# 1. exactly the hashed code runs: every kind of entry in source/ the code hash does not cover


def _src(merged: Path) -> Path:
    return next(merged.glob("results/squares/*/source/squares"))


def _put(path: Path, data: bytes = b"x = 1\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


NOT_HASHED = {
    "bytecode in __pycache__": lambda s: _put(s / "__pycache__" / "explainer.cpython-311.pyc", b"\x00\x01"),
    "bytecode beside the module": lambda s: _put(s / "explainer.pyc", b"\x00\x01"),
    "a data file": lambda s: _put(s / "weights.npy", b"\x93NUMPY"),
    "a .py outside the submission folder": lambda s: _put(s.parent / "helper.py"),
    "a sitecustomize": lambda s: _put(s.parent / "sitecustomize.py"),
    "a .pth file": lambda s: _put(s.parent / "evil.pth", b"import os\n"),
    "a file at a path the hash does not cover": lambda s: _put(s.parent / "other" / "explainer.py"),
    "a shared library": lambda s: _put(s / "numpy.cpython-311-x86_64-linux-gnu.so", b"\x7fELF"),
    "a symbolic link to a module": lambda s: os.symlink("explainer.py", s / "link.py"),
    "a symbolic link out of the tree": lambda s: os.symlink("/etc", s / "etc"),
    "a dangling symbolic link": lambda s: os.symlink("nowhere", s / "gone.py"),
    "a hard link": lambda s: os.link(s / "explainer.py", s.parent / "copy.py"),
    "a FIFO": lambda s: os.mkfifo(s / "pipe"),
}


@pytest.mark.parametrize("kind", sorted(NOT_HASHED))
def test_source_holds_only_what_the_hash_covers(pr, kind):
    tip, merged, _ = pr
    NOT_HASHED[kind](_src(merged))
    got = findings(tip, merged)
    assert got and all("/source/" in f or f.startswith("results/squares/") for f in got), got
    assert all("\n" not in f for f in got)


def test_the_re_run_is_built_from_the_hashed_files_alone(pr):
    """An extra module beside the submission is neither in the scratch copy nor importable from it."""
    from benchmark.submission import load_submission
    from leaderboard.repository.layout import source_files
    from leaderboard.repository.validate import hashed_source

    _, merged, rel = pr
    src = _src(merged)
    (src.parent / "numpy.py").write_text("raise SystemExit('shadowed')\n")
    folder = merged / "results/squares" / rel.split("/")[2]
    got = hashed_source(folder)
    assert got == source_files(load_submission(src)) and not any(k.endswith("numpy.py") for k in got)


# --------------------------------------------------------------------------------------------------
# 2. every Result field a board reads, edited in turn: the validator recomputes or compares it


def _set(d: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for p in parents:
        d = d[p]
    if value is DELETE:
        del d[last]
    else:
        d[last] = value


DELETE = object()
EDITS = {
    "submission.role": "control",
    "submission.kind": "oracle",
    "submission.version": "9.9.9",
    "submission.parameters": {"n": 1},
    "submission.owner": "me",
    "resource.split": "train",
    "resource.version": "v9",
    "model.task": "classification",
    "model.visible_fraction": 0.25,
    "model.quality": {"meets_floor": False, "message": "broken"},
    "model.note": "a note",
    "primary_metric": "emd",
    "coverage.split_size": 999,
    "metrics.kl.mean": 0.001,
    "metrics.kl.std": 0.5,
    "metrics.kl.ci95": [0.0, 10.0],
    "metrics.kl.n": 3,
    "metrics.kl.excluded": 2,
    "metrics.kl.direction": "higher",
    "metrics.kl.label": "KL!",
    "metrics.kl": DELETE,
    "metrics.new": {"mean": 1.0, "std": 0.0, "ci95": [1.0, 1.0], "n": 24, "excluded": 0, "direction": "higher",
                    "label": "N"},
    "failures": [{"instance": "0", "reason": "x"}],
    "extra.rank_gate": {"metric": "kl", "min": 0.0, "beat_controls": True},
    "extra.cache": "../../../etc/passwd",
    "extra.confusion": [1, 2, 3, 4],
    "extra.seconds_per_instance": -1.0,
    "provenance.batch_size": 0,
    "provenance.seed": 7,
    "provenance.extra": "x",
    "created": "2999-01-01T00:00:00+00:00",
    "wall_time_s": -5.0,
    "instance_scores.seeds": [3],
    "schema_version": 2,
    "surprise": 1,
}


@pytest.mark.parametrize("path", sorted(EDITS))
def test_every_field_edited_is_refused(world, pr, path):
    tip, merged, rel = pr
    d = json.loads((merged / rel).read_bytes())
    _set(d, path, EDITS[path] if EDITS[path] is DELETE else copy.deepcopy(EDITS[path]))
    (merged / rel).write_text(json.dumps(d))
    got = findings(tip, merged)
    assert got and all(f.startswith(rel) for f in got), got


def test_permuted_per_instance_scores_validate_but_are_refused_by_the_re_run(pr, rerun):
    """The means agree (the validator's recomputation cannot tell), the paired bootstrap would read other pairs:
    the re-run compares every per-instance score in instance order."""
    import numpy as np

    from benchmark.store.results import Result, _pack_array
    from leaderboard.repository.rerun import compare

    tip, merged, rel = pr
    d = json.loads((merged / rel).read_bytes())
    scores = Result.from_dict(copy.deepcopy(d)).scores()
    for key in d["instance_scores"]["arrays"]:
        d["instance_scores"]["arrays"][key] = _pack_array(np.roll(scores.arrays[key], 1, axis=1))
    (merged / rel).write_text(json.dumps(d))
    assert findings(tip, merged) == []
    _, problems = compare(Result.from_dict(d), [e.result for e in rerun.evaluations], deterministic=True)
    assert any(p.startswith("instance_scores:") for p in problems)


# --------------------------------------------------------------------------------------------------
# the property: every field path either fails validation, is refused by the re-run, or changes no board


def _paths(value, prefix=""):
    if isinstance(value, dict):
        yield prefix, value
        for k, v in value.items():
            yield from _paths(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        yield prefix, value
        for i, v in enumerate(value):
            yield from _paths(v, f"{prefix}[{i}]")
    else:
        yield prefix, value


def _edit(value):
    """A different value of the same kind (a container grows a member)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 1.5 + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1:] != "0" else "1") if value else "x"
    if isinstance(value, list):
        return value + [value[-1] if value else 1]
    if isinstance(value, dict):
        return {**value, "zz": 1}
    return 1


def _assign(d, path: str, value):
    import re

    keys = [k for k in re.split(r"\.|\[(\d+)\]", path) if k]
    *parents, last = keys
    for k in parents:
        d = d[int(k)] if isinstance(d, list) else d[k]
    if isinstance(d, list):
        d[int(last)] = value
    else:
        d[last] = value


def test_every_field_path_fails_validation_or_the_re_run_or_changes_no_board(world, rerun, tmp_path):
    """For every field path of a real Result file: the edited file fails `validate` (`check_result`), or the
    re-run refuses it (`compare` against the maintainer's re-run), or — signed as verify would sign it — every
    board built from the repository reads exactly as before (text, Markdown, CSV and the site's page)."""
    from benchmark.store.results import Result
    from leaderboard import render
    from leaderboard.boards import boards
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.contents import check_result
    from leaderboard.repository.rerun import compare, record_for
    from leaderboard.repository.signing import keygen, load_private_key, load_public_keys, sign_record
    from leaderboard.repository.validate import _check_source, _Context
    from leaderboard.site.build import one_page

    _, _, _, files, rel = world
    rp = parse_result_path(rel)
    original = json.loads(files[rel])
    tree = lay(tmp_path / "tree", files)
    folder = tree / f"results/squares/{rp.code_hash}"
    from leaderboard.repository.reading import tree_files

    context = _Context()
    sub, bad = _check_source(f"results/squares/{rp.code_hash}", folder, tree_files(folder)[0],
                             json.loads(files[f"results/squares/{rp.code_hash}/submission.json"]), "squares",
                             rp.code_hash, context)
    assert bad == [] and check_result(original, rp, sub, context) == []
    private, public, _ = keygen(tmp_path / "keys")
    key, keys = load_private_key(private), load_public_keys([public])

    def shown(data: bytes) -> str:
        (tree / rel).write_bytes(data)
        record = sign_record(record_for(tree, rerun), key)
        (tree / rp.verification).parent.mkdir(parents=True, exist_ok=True)
        (tree / rp.verification).write_text(json.dumps(record))
        results, problems = load_repository(tree, keys)
        # the record also carries the randomised-model run (issue #45): the row's companion, verified too
        assert problems == [] and [r.status for r in results] == ["verified"]
        assert [x.status for x in results[0].companions["randomised"]] == ["verified"]
        bs = boards(results)
        return "\n".join([render.to_text(bs, width=200), render.to_markdown(bs), render.to_csv(bs), one_page(bs)])

    before = shown(files[rel])
    outcome: dict[str, list[str]] = {"validate": [], "re-run": [], "no board changes": []}
    for path, value in list(_paths(original)):
        if not path:
            continue
        d = copy.deepcopy(original)
        _assign(d, path, _edit(value))
        if check_result(d, rp, sub, context):
            outcome["validate"].append(path)
            continue
        _, problems = compare(Result.from_dict(copy.deepcopy(d)), [e.result for e in rerun.evaluations], True)
        if problems:
            outcome["re-run"].append(path)
            continue
        assert shown(json.dumps(d).encode()) == before, f"editing {path} passes validate and the re-run, and a " \
                                                        "board shows it"
        outcome["no board changes"].append(path)
    assert len(sum(outcome.values(), [])) > 80
    # what a board reads is among the first two; only bookkeeping and timings reach the third
    assert {"metrics.kl.mean", "submission.role", "primary_metric", "model.task"} <= set(outcome["validate"])
    assert "integrity.outputs_sha256" in outcome["re-run"]
    assert set(outcome["no board changes"]) <= {
        "created", "wall_time_s",  # a valid earlier time changes no order with one Result per board
        # another base64 of the same compressed numbers (zlib ignores bytes after its stream's end)
        *[p for p, _ in _paths(original) if p.startswith("instance_scores.") and p.endswith(".data")],
        "extra.seconds_per_instance", "integrity.key_id", "integrity.signature", "provenance",
        "provenance.batch_size", "provenance.device", "provenance.git", "provenance.isolation",
        "provenance.libraries", "provenance.this_run_s", "provenance.xaibench",
        *[p for p, _ in _paths(original) if p.startswith(("provenance.isolation.", "provenance.libraries."))]}
    shutil.rmtree(tree)


# --------------------------------------------------------------------------------------------------
# 7. strict, bounded parsing: one reader everywhere; one bad file listed and skipped, the board still built

DEEP = b'{"a": ' * 40 + b"1" + b"}" * 40
BAD_JSON = {
    "a duplicate key": lambda good: good.replace(b'"metrics":', b'"metrics": {}, "metrics":', 1),
    "deep nesting": lambda good: DEEP,
    "a recursion bomb": lambda good: b"[" * 200_000 + b"]" * 200_000,
    "not UTF-8": lambda good: good.replace(b'"track"', b'"tr\xffck"', 1),
    "a byte-order mark": lambda good: b"\xef\xbb\xbf" + good,
    "oversize": lambda good: b'{"x": "' + b"a" * (16 << 20) + b'"}',
    "a huge integer": lambda good: b'{"n": ' + b"9" * 5000 + b"}",
    "not JSON": lambda good: good[: len(good) // 2],
}


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_strict_parsing_refuses_in_one_line_and_the_board_still_builds(world, tmp_path, kind):
    from leaderboard.boards import boards
    from leaderboard.repository.boards import load_repository

    _, _, _, files, rel = world
    bad = rel.replace("/function.json", "/cnn.json")
    tree = lay(tmp_path / "t", {**files, bad: BAD_JSON[kind](files[rel])})
    tip = lay(tmp_path / "tip", {})
    got = [f for f in findings(tip, tree) if f.startswith(bad)]
    assert len(got) == 1 and "\n" not in got[0], got
    results, problems = load_repository(tree, {})
    assert [r.model["name"] for r in results] == ["function"] and len(problems) == 1
    assert problems[0].startswith(bad) and problems[0].endswith("left out")
    assert len(boards(results)) == 1


def test_a_duplicate_key_is_never_read_two_ways(world):
    from leaderboard.repository.reading import loads

    with pytest.raises(RepositoryError, match="the key 'metrics' appears twice"):
        loads(world[3][world[4]].replace(b'"metrics":', b'"metrics": {}, "metrics":', 1), "x.json")


# --------------------------------------------------------------------------------------------------
# real pull requests on a local bare git repository, judged by what the CLI does


@pytest.fixture()
def remote(tmp_path, capsys):
    return new_remote(tmp_path, capsys)


def new_remote(tmp_path: Path, capsys) -> Path:
    """An empty results repository (bare git, made by `xaibench results init`)."""
    remote = tmp_path / "results.git"
    code, _, err = cli(["results", "init", str(remote)], capsys)
    assert code == 0, err
    return remote


def push_tree(remote: Path, branch: str, entries: list[tuple[str, str, bytes]], base: str = "main") -> str:
    """Push a commit whose tree is `base`'s plus `entries` (mode, path, bytes) — any mode and any name git's
    plumbing accepts (links, `..`) — to `branch`; returns the commit."""
    env = {**os.environ, "GIT_DIR": str(remote), "GIT_INDEX_FILE": str(remote / "tmp-index"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def g(*args, data=None):
        return subprocess.run(["git", *args], input=data, capture_output=True, env=env, check=True).stdout.strip()

    g("read-tree", base)
    for mode, path, data in entries:
        blob = g("hash-object", "-w", "--stdin", data=data).decode()
        if "/" in path and ".." not in path.split("/"):
            g("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}")
    tree = g("write-tree").decode()
    for mode, path, data in entries:  # names the index refuses: graft them with mktree at the top level
        if "/" not in path or ".." in path.split("/"):
            blob = g("hash-object", "-w", "--stdin", data=data).decode()
            listing = g("ls-tree", tree).decode() + f"\n{mode} blob {blob}\t{path}\n"
            tree = g("mktree", data=listing.strip().encode() + b"\n").decode()
    commit = g("commit-tree", tree, "-p", g("rev-parse", base).decode(), "-m", "pr").decode()
    g("update-ref", f"refs/heads/{branch}", commit)
    (remote / "tmp-index").unlink(missing_ok=True)
    return commit


def propose(remote: Path, files: dict[str, bytes], key: str) -> str:
    from leaderboard.repository.git import GitStore

    with GitStore(str(remote)) as store:
        return store.propose(files, "test", key)[1]


def key_id_of(private) -> str:
    from leaderboard.repository.signing import key_id

    return key_id(private.public_key())


def no_traceback(*texts: str) -> bool:
    return all("Traceback" not in t for t in texts)


HOSTILE_TREES = {
    "a symbolic link in source/": ("120000", "source/squares/link.py", b"explainer.py"),
    "a symbolic link out of the repository": ("120000", "evil", b"../../../../etc/passwd"),
    "a '..' tree entry": ("100644", "..", b"x"),
    "an executable Result": ("100755", "aixi/aixi__shape-ssin@c46b1d2e4eef/cnn.json", b"{}"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_TREES))
def test_hostile_tree_entries_are_one_line_on_every_command(world, remote, tmp_path, capsys, kind):
    _, _, _, files, rel = world
    folder = "/".join(rel.split("/")[:3])
    mode, path, data = HOSTILE_TREES[kind]
    path = f"{folder}/{path}" if "/" in path else path
    entries = [("100644", p, b) for p, b in files.items()] + [(mode, path, data)]
    push_tree(remote, "evil", entries)
    before = branches(remote)
    keys = tmp_path / "keys"
    cli(["results", "keygen", "--out", str(keys)], capsys)
    for argv in (["results", "validate", f"{remote}@evil"],
                 ["results", "verify", f"{remote}@evil", "--key", str(keys / "verifier.key"), "--sandbox", "none"],
                 ["results", "merge", f"{remote}@evil", "--key", str(keys / "verifier.key")]):
        code, out, err = cli(argv, capsys)
        assert code != 0 and no_traceback(out, err), (argv, out, err)
        if argv[1] != "validate":
            assert err.startswith("error: ") and err.count("\n") == 1 and "does not validate" in err, err
    assert branches(remote) == before
    code, out, err = cli(["leaderboard", "--from", f"{remote}@evil", "--format", "csv"], capsys)
    assert no_traceback(out, err)


def test_a_deep_file_on_main_does_not_take_the_boards_down(world, remote, tmp_path, capsys):
    _, _, _, files, rel = world
    from leaderboard.repository.git import GitStore

    bad = rel.replace("/function.json", "/cnn.json")
    with GitStore(str(remote)) as store:
        store.commit({**files, bad: b"[" * 100_000 + b"]" * 100_000}, "merged long ago")
    code, out, err = cli(["leaderboard", "--from", str(remote), "--format", "csv"], capsys)
    assert code == 0 and ",squares,0.0.1,self-reported" in out and bad in err and no_traceback(out, err)
    code, out, err = cli(["site", "--from", str(remote), "--out", str(tmp_path / "site"), "--no-figures"], capsys)
    assert code == 0 and (tmp_path / "site" / "index.html").is_file() and no_traceback(out, err), err
    code, out, err = cli(["results", "validate", str(remote)], capsys)
    assert code == 1 and bad in out and no_traceback(out, err)


# --------------------------------------------------------------------------------------------------
# 4. judged against the tip; 5. records bind code and Result; a record is never replaced


def _keys(tmp_path: Path, capsys) -> Path:
    keys = tmp_path / "keys"
    code, _, err = cli(["results", "keygen", "--out", str(keys)], capsys)
    assert code == 0, err
    return keys


def _verify(remote, ref, keys, capsys):
    return cli(["results", "verify", f"{remote}@{ref}", "--key", str(keys / "verifier.key"), "--sandbox", "none",
                "--timeout", "0"], capsys)


def _board(remote, keys, capsys) -> str:
    code, out, err = cli(["leaderboard", "--from", str(remote), "--format", "csv", "--public-key",
                          str(keys / "verifier.pub")], capsys)
    assert code == 0, err
    return out


def test_verify_lands_once_and_later_changes_turn_the_row_self_reported(world, remote, tmp_path, capsys):
    from leaderboard.repository.git import GitStore

    _, _, _, files, rel = world
    rp = parse_result_path(rel)
    ref = propose(remote, files, "honest")
    stale = push_tree(remote, "stale", [("100644", p, b) for p, b in files.items()
                                         if not p.endswith("function.json")])  # cut before the Result landed
    keys = _keys(tmp_path, capsys)
    code, out, err = _verify(remote, ref, keys, capsys)
    assert code == 0 and "landed" in err, out + err
    assert ",squares,0.0.1,verified" in _board(remote, keys, capsys)
    with GitStore(str(remote)) as store:
        record = (store.snapshot() / rp.verification).read_bytes()
    # verified twice: nothing new, no record replaced
    code, out, err = _verify(remote, ref, keys, capsys)
    assert code == 2 and "adds nothing" in err
    # an old branch re-adding the merged Result with other bytes, or claiming the held name with other authors
    edited = json.loads(files[rel])
    edited["wall_time_s"] = 1.0
    push_tree(remote, "readd", [("100644", rel, json.dumps(edited).encode())], base=stale)
    code, out, _ = cli(["results", "validate", f"{remote}@readd"], capsys)
    assert code == 1 and f"{rel}: the default branch already holds it with other content" in out
    code, _, err = _verify(remote, "readd", keys, capsys)
    assert code == 2 and err.count("\n") == 1
    with GitStore(str(remote)) as store:
        assert (store.snapshot() / rp.verification).read_bytes() == record
    # after the merge, anything changed on main — the code, the metadata, the Result — unverifies the row
    for path, change in ((f"results/squares/{rp.code_hash}/source/squares/explainer.py", b"# swapped\n"),
                         (f"results/squares/{rp.code_hash}/submission.json", b" "), (rel, b" ")):
        with GitStore(str(remote)) as store:
            now = (store.snapshot() / path).read_bytes()
            store.commit({path: now + change}, "a change on main")
        assert ",squares,0.0.1,self-reported" in _board(remote, keys, capsys), path
        with GitStore(str(remote)) as store:
            store.commit({path: now}, "undone")
        assert ",squares,0.0.1,verified" in _board(remote, keys, capsys)


def test_a_name_held_on_the_tip_is_refused_to_a_branch_cut_before(world, remote, tmp_path, capsys):
    """Bound to the key that first landed it: another key (authors copied, a branch cut before the name was held)
    and an unsigned pull request are refused; nothing `submission.json` says claims the name."""
    from leaderboard.repository.signing import keygen, load_private_key

    _, _, _, files, _ = world
    early = push_tree(remote, "early", [])  # a branch cut before anyone held the name
    ref = propose(remote, files, "first")
    key = maintainer(tmp_path / "maintainer")
    code, _, err = cli(["results", "merge", f"{remote}@{ref}", "--key", str(key)], capsys)
    assert code == 0 and "self-reported" in err
    other = third_party(tmp_path / "squares2", name="squares")  # the same authors, copied
    toml = other / "submission.toml"
    toml.write_text(toml.read_text().replace('version = "0.0.1"', 'version = "0.0.2"'))
    mallory = load_private_key(keygen(tmp_path / "mallory", role="contributor")[0])
    for branch, theirs in (("late", sign(code_only(other), mallory)), ("unsigned", code_only(other))):
        push_tree(remote, branch, [("100644", p, b) for p, b in theirs.items()], base=early)
        code, out, err = cli(["results", "validate", f"{remote}@{branch}", "--public-key",
                              str(key.with_name("verifier.pub"))], capsys)
        assert code == 1 and no_traceback(out, err), out + err
        if branch == "late":
            assert f"results/squares/: the name is bound to the contributor key {key_id_of(contributor())} (trust " \
                   "on first use); this pull request is signed by" in out
        else:
            assert "the pull request carries no contributor signature" in out


# --------------------------------------------------------------------------------------------------
# 6. names


@pytest.mark.parametrize("name,like", [("occ1usion", "occlusion"), ("0cclusion", "occlusion"),
                                       ("occ-lusion", "occlusion"), ("occiusion", "occlusion"),
                                       ("lirne-text", "lime-text"), ("gradcam", "grad-cam"), ("rand0m", "random"),
                                       ("5quares", "squares")])
def test_look_alike_names_are_refused(world, tmp_path, name, like):
    files = world[3]
    tip = lay(tmp_path / "tip", files)  # squares is held
    merged = lay(tmp_path / "merged", {**files, **code_only(third_party(tmp_path / name, name=name))})
    got = findings(tip, merged)
    assert f"results/{name}/: the name could pass for '{like}' (case, look-alike or confusable characters); " \
           "choose a distinct name" in got


def test_the_skeleton_folds_case_unicode_confusables_and_ascii_look_alikes():
    from leaderboard.repository.names import collides, skeleton

    for look_alike in ("OCCLUSION", "оcclusion", "ｏｃｃｌｕｓｉｏｎ", "occ1usion", "occ|usion", "0cc_lusion"):
        assert skeleton(look_alike) == skeleton("occlusion"), look_alike
    assert skeleton("rn") == skeleton("m") and skeleton("vv") == skeleton("w")
    assert collides("lime", ["lime", "occlusion"]) is None and collides("random", ["uniform"]) is None


def test_a_built_in_name_keeps_the_built_ins_metadata(pr, tmp_path):
    from benchmark.submission import get_submission
    from leaderboard.repository.layout import source_files, submission_dir, submission_json

    tip, merged, _ = pr
    occ = get_submission("occlusion")
    folder = submission_dir("occlusion", occ.hash)
    meta = submission_json(occ, builtin=True)
    lay(merged, {f"{folder}/{k}": v for k, v in source_files(occ).items()})
    lay(merged, {f"{folder}/submission.json": json.dumps({**meta, "authors": ["Mallory"]}).encode()})
    assert any("'occlusion' is a built-in submission; " in f or "(a built-in's metadata is the built-in's)" in f
               for f in findings(tip, merged))
    lay(merged, {f"{folder}/submission.json": json.dumps(meta).encode()})
    assert not any(f.startswith(f"{folder}/submission.json") for f in findings(tip, merged))


# --------------------------------------------------------------------------------------------------
# the Hub: the same flow through an injected client that keeps a repository in memory


class LocalHub:
    """Stands where `HfApi()` would: one dataset repository held in memory (commit → files), answering the
    calls `HubStore` makes as the Hub does — pull requests as `refs/pr/N`, authors, `parent_commit` refused
    when main moved — and recording every call."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.trees: dict[str, dict[str, bytes]] = {"c0": dict(files)}
        self.history: dict[str, list[str]] = {"main": ["c0"]}
        self.prs: dict[int, dict] = {}
        self.calls: list[str] = []
        self.user = "ada"

    def _rev(self, revision: str) -> str:
        if revision in self.history:
            return self.history[revision][-1]
        if revision.startswith("refs/pr/"):
            return self.prs[int(revision[8:])]["history"][-1]
        return revision

    def _new(self, parent: str, operations) -> str:
        cid = f"c{len(self.trees)}"
        self.trees[cid] = {**self.trees[parent], **{op.path_in_repo: op.path_or_fileobj for op in operations}}
        return cid

    def file_exists(self, repo_id, path, repo_type=None, revision="main"):
        self.calls.append("file_exists")
        return path in self.trees[self._rev(revision)]

    def list_repo_commits(self, repo_id, repo_type=None, revision="main"):
        from types import SimpleNamespace

        self.calls.append("list_repo_commits")
        hist = self.history["main"] if revision == "main" else self.prs[int(revision[8:])]["history"]
        return [SimpleNamespace(commit_id=c) for c in reversed(hist)]

    def list_repo_files(self, repo_id, repo_type=None, revision="main"):
        self.calls.append("list_repo_files")
        return sorted(self.trees[self._rev(revision)])

    def snapshot_download(self, repo_id, repo_type=None, revision="main", local_dir=None, ignore_patterns=None):
        import fnmatch

        self.calls.append("snapshot_download")
        tree = self.trees[self._rev(revision)]
        lay(Path(local_dir), {p: b for p, b in tree.items()
                              if not any(fnmatch.fnmatch(p, pat) for pat in ignore_patterns or [])}, marker=False)
        return local_dir

    def get_paths_info(self, repo_id, paths, repo_type=None, revision="main"):
        from types import SimpleNamespace

        from leaderboard.repository.layout import blob_id

        tree = self.trees[self._rev(revision)]
        return [SimpleNamespace(path=p, blob_id=blob_id(tree[p])) for p in paths if p in tree]

    def get_repo_discussions(self, repo_id, repo_type=None, discussion_type=None, discussion_status=None):
        from types import SimpleNamespace

        return [SimpleNamespace(num=n, title=p["title"]) for n, p in self.prs.items() if p["status"] == "open"]

    def get_discussion_details(self, repo_id, num, repo_type=None):
        from types import SimpleNamespace

        self.calls.append("get_discussion_details")
        return SimpleNamespace(author=self.prs[num]["author"])

    def create_commit(self, repo_id, operations, commit_message="", repo_type=None, revision="main",
                      create_pr=False, parent_commit=None):
        from types import SimpleNamespace

        self.calls.append("create_commit")
        head = self.history["main"][-1]
        if create_pr:
            num = len(self.prs) + 1
            cid = self._new(head, operations)
            self.prs[num] = {"history": [*self.history["main"], cid], "author": self.user, "status": "open",
                             "title": commit_message}
            return SimpleNamespace(pr_num=num, pr_url=f"https://hub/discussions/{num}", oid=cid)
        if parent_commit is not None and parent_commit != head:
            raise RuntimeError("412 Precondition Failed: parent_commit is not the head of main")
        cid = self._new(head, operations)
        self.history["main"].append(cid)
        return SimpleNamespace(oid=cid, pr_num=None, pr_url=None)

    def change_discussion_status(self, repo_id, num, new_status, repo_type=None, comment=None):
        self.calls.append("change_discussion_status")
        self.prs[num]["status"] = new_status


def test_the_hub_flow_end_to_end_and_its_identities(world, tmp_path):
    from huggingface_hub import CommitOperationAdd

    from benchmark.submission import load_submission
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.hub import HubStore
    from leaderboard.repository.pull import judge, open_pull_request
    from leaderboard.repository.rerun import verify_pull_request
    from leaderboard.repository.signing import keygen, load_private_key, load_public_keys
    from leaderboard.repository.submit import package, submit

    _, sub, results, _, _ = world
    hub = LocalHub({"xaibench-results.json": b'{"layout": 1}\n'})
    out = submit(sub, "hf://datasets/org/board", results_dir=results, client=hub, check=False)
    assert out.target == "hf://datasets/org/board@refs/pr/1"
    private, public, _ = keygen(tmp_path / "keys")
    with HubStore("org/board", hub) as store:
        assert judge(open_pull_request(store, "refs/pr/1")) == []
        runs, commit = verify_pull_request(store, "refs/pr/1", load_private_key(private), sandbox="none",
                                           timeout_s=0)
        assert commit is not None and hub.prs[1]["status"] == "closed"
        found, problems = load_repository(store.snapshot(store.tip()), load_public_keys([public]))
    rows = [r for r in found if "randomisation" not in r.model]  # the row and the built-in floors verify ran (#58)
    assert [r.status for r in rows if r.submission["name"] == "squares"] == ["verified"] and problems == []
    assert all(r.status == "verified" for r in rows)
    owner = json.loads(hub.trees[commit]["verifications/squares/bindings/1.json"])
    assert owner["hub_user"] == "ada" and owner["holder"] == key_id_of(contributor())
    # another account claims the name with copied authors: the Hub says who opened the pull request
    mallory = third_party(tmp_path / "m" / "squares")
    toml = mallory / "submission.toml"
    toml.write_text(toml.read_text().replace('version = "0.0.1"', 'version = "0.0.2"'))
    (mallory / "explainer.py").write_text((mallory / "explainer.py").read_text() + "# mine\n")
    hub.user = "mallory"
    evaluate(mallory, results_dir=tmp_path / "mres", **RUN)
    files = sign(package(load_submission(mallory), tmp_path / "mres"))  # even signed by the key that holds it
    hub.create_commit("org/board", [CommitOperationAdd(path_in_repo=p, path_or_fileobj=b) for p, b in files.items()],
                      commit_message="x", create_pr=True)
    with HubStore("org/board", hub) as store:
        got = judge(open_pull_request(store, "refs/pr/2", load_public_keys([public])))
        assert any("held by the Hub account ada; this pull request was opened by mallory" in f for f in got)
        # main moved while a pull request was judged: landing is refused, nothing is written
        pr = open_pull_request(store, "refs/pr/2")
        hub.create_commit("org/board", [], commit_message="someone else")
        tip = hub.history["main"][-1]
        with pytest.raises(RepositoryError, match="refused create_commit"):
            store.land("refs/pr/2", pr.added, "late", pr.tip_commit)
        assert hub.history["main"][-1] == tip


# --------------------------------------------------------------------------------------------------
# 3. re-run tolerance from the re-runs only (stochastic submissions)


def _variant(r, **means):
    from dataclasses import replace

    from benchmark.store.results import Result

    out = Result.from_dict(copy.deepcopy(r.to_dict()))
    for k, v in means.items():
        out.metrics[k] = replace(out.metrics[k], mean=v)
    return out


def test_stochastic_tolerance_comes_from_the_re_runs_not_from_the_file(rerun):
    from dataclasses import replace

    from leaderboard.repository.rerun import compare

    r1 = rerun.evaluations[0].result
    kl, half = r1.metrics["kl"].mean, (r1.metrics["kl"].ci95[1] - r1.metrics["kl"].ci95[0]) / 2
    r2 = _variant(r1, kl=kl + half / 4)
    r2.integrity["outputs_sha256"] = "0" * 64
    honest = _variant(r1, kl=kl + half / 2)
    honest.integrity["outputs_sha256"] = "1" * 64
    assert compare(honest, [r1, r2], deterministic=False)[1] == []
    # far off, with an interval inflated to cover it: the file's interval is never the tolerance
    far = _variant(r1, kl=kl + 10 * half)
    far.metrics["kl"] = replace(far.metrics["kl"], ci95=(kl - 100.0, kl + 100.0))
    far.integrity["outputs_sha256"] = "1" * 64
    assert any(p.startswith("kl: the Result says") and "from the re-runs' own intervals" in p
               for p in compare(far, [r1, r2], deterministic=False)[1])
    # the same outputs as a re-run, other numbers
    same = _variant(r1, kl=kl + half / 2)
    assert any(p.startswith("equal outputs, other numbers") for p in compare(same, [r1, r2], deterministic=False)[1])
    assert compare(honest, [r1], deterministic=False)[1]  # one re-run sets no tolerance


# --------------------------------------------------------------------------------------------------
# gates come from the track; papercuts


def test_a_rank_gate_in_a_contributors_file_gates_nothing():
    from leaderboard.boards import boards
    from tests.test_leaderboard import make_result

    rs = [make_result(n, role=role) for n, role in (("a", "method"), ("b", "method"), ("random", "control"))]
    for r in rs:
        r.extra["rank_gate"] = {"metric": "kl", "min": -1e9, "beat_controls": True}
    (b,) = boards(rs)
    assert b.gate is None and not any(row.below_gate for row in b.rows)


def test_another_split_never_replaces_the_evaluation_splits_result(tmp_path):
    from benchmark.runner import result_path

    full = result_path(tmp_path, "aixi", "aixi/shape-ssin", "cnn", "squares", split="validation")
    train = result_path(tmp_path, "aixi", "aixi/shape-ssin", "cnn", "squares", split="train")
    assert full.name == "squares.json" and train.name == "squares@train.json"


def test_a_stochastic_submission_verifies_on_the_re_runs_tolerance(world, remote, tmp_path, capsys):
    """Honest and stochastic (fresh randomness every run): re-run twice, within the re-runs' own tolerance."""
    from benchmark.submission import load_submission
    from leaderboard.repository.submit import package
    from tests.conftest import write_submission

    body = ("rng = np.random.default_rng()\n"
            "return [np.asarray(x, dtype=np.float32) ** 2 + rng.normal(0, 1e-3, np.shape(x)).astype(np.float32) "
            "for x in np.asarray(batch.inputs)]\n")
    sub = write_submission(tmp_path / "noisy", "noisy", body, caps="deterministic = false")
    toml = sub / "submission.toml"
    toml.write_text(toml.read_text().replace('entry = "explainer:Explainer"\n', 'entry = "explainer:Explainer"\n'
                                             'authors = ["Ada Lovelace <ada@example.org>"]\nlicense = "MIT"\n'))
    evaluate(sub, results_dir=tmp_path / "res", **RUN)
    ref = propose(remote, sign(package(load_submission(sub), tmp_path / "res")), "noisy")
    code, out, err = _verify(remote, ref, _keys(tmp_path, capsys), capsys)
    assert code == 0 and "(within the re-runs' tolerance)" in out, out + err


@pytest.mark.parametrize("cache", ["../../../etc/passwd", "/etc/passwd", "cache/aixi/x/../../../../secret.sqlite",
                                   "cache/aixi/aixi__shape-ssin/function/other-0000-1111-2222-s0-validation.sqlite"])
def test_site_pictures_come_only_from_the_harness_cache(world, tmp_path, cache):
    from leaderboard.repository.boards import load_repository

    _, _, _, files, rel = world
    honest = json.loads(files[rel])
    (r,), _ = load_repository(lay(tmp_path / "ok", files), {})
    assert r.extra["cache"] == honest["extra"]["cache"]
    honest["extra"]["cache"] = cache
    (r,), _ = load_repository(lay(tmp_path / "bad", {**files, rel: json.dumps(honest).encode()}), {})
    assert "cache" not in r.extra


def test_oversize_blobs_and_pull_requests_are_refused_before_they_are_read(world, remote, monkeypatch, capsys):
    """A blob over the cap is skipped by the snapshot, unread (its size read with `git ls-tree -l` first), and is a
    finding of the pull request that adds it; a pull request over its byte budget is read no further. The caps are
    lowered here so the files stay tiny."""
    import leaderboard.repository.git as git_store
    import leaderboard.repository.pull as pull

    _, _, _, files, rel = world
    push_tree(remote, "big", [("100644", p, b) for p, b in files.items()])
    monkeypatch.setattr(git_store, "MAX_BLOB", 1000)
    code, out, err = cli(["results", "validate", f"{remote}@big"], capsys)
    assert code == 1 and f"{rel}: " in out and "bytes, more than the 1,000 any file may have; skipped, nothing read " \
        "from it (a pull request adds plain files only)" in out and no_traceback(out, err)
    monkeypatch.setattr(git_store, "MAX_BLOB", 64 << 20)
    monkeypatch.setattr(pull, "MAX_TOTAL_BYTES", 2_000)
    code, out, err = cli(["results", "validate", f"{remote}@big"], capsys)
    assert code == 1 and "(a pull request adds at most 2,000 bytes)" in out and no_traceback(out, err)
