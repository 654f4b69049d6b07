"""Submissions as researchers write them (issue #46): a package of several modules with a sub-package,
relative and sibling imports and a declared data file — hashed, checked, run the same in-process and in the
sandbox, submitted and re-run from `source/` alone — and every bad input one line with nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from benchmark.cli import main
from benchmark.errors import SubmissionError
from benchmark.submission import MAX_FILE_BYTES, load_submission
from tests.test_isolation import CONFINED

TOML = """\
[submission]
name = "{name}"
version = "1.0.0"
kind = "explainer"
entry = "{entry}"
authors = ["Ada Lovelace <ada@example.org>"]
license = "MIT"
{requires}

[capabilities]
modalities = ["image"]
deterministic = true

[parameters]
gain = 1.0
{files}
"""

FILES = '[files]\nweights = "data/weights.txt"\n'


def write(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(textwrap.dedent(text))
    return folder


def packaged(folder: Path, name: str = "lexicon-maps", declare: bool = True, weights: str = "0.5 2.0") -> Path:
    """A two-module explainer as a researcher writes it: `explainer.py` imports its sibling `lexicon` by name
    (as a script would) and the sub-package `scoring`, whose module imports `lexicon` relatively and reads the
    declared data file through `data_file`; `lexicon` reads it by `Path(__file__).parent`."""
    return write(folder, {
        "submission.toml": TOML.format(name=name, entry="explainer:LexiconMaps", requires="",
                                       files=FILES if declare else ""),
        "data/weights.txt": weights,
        "README.md": "notes that are neither hashed nor shipped\n",
        "lexicon.py": """\
            from pathlib import Path

            SCALE, OFFSET = (float(v) for v in (Path(__file__).parent / "data" / "weights.txt").read_text().split())
            """,
        "scoring/__init__.py": "from .maps import score\n",
        "scoring/maps.py": """\
            import numpy as np

            from benchmark.contracts import data_file

            from ..lexicon import SCALE


            def score(x, gain):
                offset = float(data_file(__name__, "weights").read_text().split()[1])
                return (np.asarray(x, dtype=np.float64) * SCALE * gain + offset).astype(np.float32)
            """,
        "explainer.py": """\
            from lexicon import OFFSET
            from scoring import score


            class LexiconMaps:
                def __init__(self, gain=1.0):
                    self.gain = gain

                def explain(self, model, batch):
                    assert OFFSET == 2.0
                    return [score(x, self.gain) for x in batch.inputs]
            """,
    })


def one_line(argv: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    lines = [line for line in (out + err).splitlines() if line.strip()]
    return int(exc.value.code or 0), " ".join(lines) if len(lines) == 1 else "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# the package: imports, hash, data files


def test_the_hash_covers_the_modules_subpackages_and_declared_files_and_nothing_else(tmp_path):
    from leaderboard.repository.layout import source_files

    folder = packaged(tmp_path / "lexicon-maps")
    sub = load_submission(folder)
    assert sorted(source_files(sub)) == [f"source/lexicon-maps/{p}" for p in (
        "data/weights.txt", "explainer.py", "lexicon.py", "scoring/__init__.py", "scoring/maps.py", "submission.toml")]
    h0 = sub.hash
    (folder / "README.md").write_text("changed\n")
    (folder / "notes.txt").write_text("an undeclared file\n")
    (folder / "scoring" / "__pycache__").mkdir()
    (folder / "scoring" / "__pycache__" / "maps.cpython-311.pyc").write_bytes(b"\0")
    (folder / "my-scripts").mkdir()
    (folder / "my-scripts" / "run.py").write_text("print(1)\n")  # not a module: its folder is no identifier
    assert load_submission(folder).hash == h0
    (folder / "data" / "weights.txt").write_text("0.5 2.5")
    assert load_submission(folder).hash != h0
    (folder / "data" / "weights.txt").write_text("0.5 2.0")
    (folder / "scoring" / "maps.py").write_text((folder / "scoring" / "maps.py").read_text() + "\n# changed\n")
    assert load_submission(folder).hash != h0


def test_siblings_subpackages_and_relative_imports_work_and_stay_in_their_package(tmp_path):
    """Two submissions with a `lexicon.py` each, in one process: each sees its own, no bare `lexicon` is
    importable afterwards, and the data file comes from the copy of exactly the hashed files."""
    from benchmark.contracts import Batch

    a = load_submission(packaged(tmp_path / "a", "pkg-a", weights="0.5 2.0")).instantiate()
    b = load_submission(packaged(tmp_path / "b", "pkg-b", weights="3.0 2.0")).instantiate()
    x = np.ones((1, 4, 4), np.float32)
    batch = Batch(ids=["i"], inputs=x)
    assert a.explain(None, batch)[0][0, 0] == pytest.approx(2.5) and b.explain(None, batch)[0][0, 0] == 5.0
    assert "lexicon" not in sys.modules and "scoring" not in sys.modules
    module = sys.modules[type(a).__module__]
    assert not Path(module.__file__).is_relative_to(tmp_path)  # a staged copy, not the author's folder
    assert not (Path(module.__file__).parent / "README.md").exists()


def test_imports_outside_the_folder_are_refused_with_the_fix(tmp_path):
    """Only the standard library, the harness's public packages, its packages and the declared requirements:
    an installed package nobody declared (pytest) and the ground-truth builders (generators) are refused."""
    for module in ("pytest", "generators.aixi", "leaderboard"):
        folder = packaged(tmp_path / module.replace(".", "-"), module.replace(".", "-"))
        (folder / "lexicon.py").write_text(f"import {module}\nSCALE, OFFSET = 1.0, 2.0\n")
        with pytest.raises(SubmissionError, match=rf"No module named '{module.split('.')[0]}' for this submission"
                                                  r".*add it to requires"):
            load_submission(folder).instantiate()


@pytest.mark.parametrize("case, message", [
    ("missing entry", r"entry 'nowhere:LexiconMaps' .* \(nowhere.py is not there\)"),
    ("malformed entry", r"entry 'explainer' must be '<module>:<Class>'"),
    ("cycle", r"its modules import each other in a cycle \((explainer → lexicon → explainer|lexicon → explainer → "
              r"lexicon)\)"),
    ("clash", r"module 'json' has the name of a module the harness uses"),
    ("numpy clash", r"module 'numpy' has the name of a module the harness uses"),
    ("requirement clash", r"module 'pytest' has the name of a module its requirements install"),
    ("outside", r"\[files\] weights must be a relative path inside the folder"),
    ("missing file", r"\[files\] weights: data/nothing.txt is not a file in the folder"),
    ("symlink file", r"\[files\] weights: data is a symbolic link"),
    ("symlink module", r"extra.py: is a symbolic link; copy the module into the folder"),
    ("fifo module", r"extra.py: is not a regular file"),
    ("oversized", rf"weights.txt: is {MAX_FILE_BYTES + 1:,} bytes; a module or data file may have at most"),
    ("module as data", r"\[files\] weights: lexicon.py is a Python module, not data"),
    ("bad requirement", r"requirement 'shap>>0.46' is not PEP 508"),
    ("url requirement", r"requirement 'shap @ https://example.org/shap.whl' is a URL"),
    ("twice", r"requirement 'SHAP' is listed twice"),
])
def test_bad_packages_are_one_line_before_anything_runs(tmp_path, case, message):
    folder = packaged(tmp_path / "bad", "bad")
    toml = folder / "submission.toml"
    def edit(old: str, new: str) -> None:
        toml.write_text(toml.read_text().replace(old, new))

    requires = 'license = "MIT"\nrequires = '
    edits = {
        "missing entry": lambda: edit("explainer:LexiconMaps", "nowhere:LexiconMaps"),
        "malformed entry": lambda: edit("explainer:LexiconMaps", "explainer"),
        "cycle": lambda: (folder / "lexicon.py").write_text("from explainer import LexiconMaps\nSCALE = OFFSET = 1\n"),
        "clash": lambda: (folder / "json.py").write_text("X = 1\n"),
        "numpy clash": lambda: (folder / "numpy").mkdir() or (folder / "numpy" / "__init__.py").write_text(""),
        "requirement clash": lambda: edit('license = "MIT"', requires + '["pytest"]') or
        (folder / "pytest.py").write_text("X = 1\n"),
        "outside": lambda: edit('"data/weights.txt"', '"../secret.txt"'),
        "missing file": lambda: edit("data/weights.txt", "data/nothing.txt"),
        "symlink file": lambda: (shutil.move(folder / "data", tmp_path / "elsewhere"),
                                 (folder / "data").symlink_to(tmp_path / "elsewhere")),
        "symlink module": lambda: (folder / "extra.py").symlink_to(folder / "lexicon.py"),
        "fifo module": lambda: os.mkfifo(folder / "extra.py"),
        "oversized": lambda: open(folder / "data" / "weights.txt", "r+b").truncate(MAX_FILE_BYTES + 1),
        "module as data": lambda: edit("data/weights.txt", "lexicon.py"),
        "bad requirement": lambda: edit('license = "MIT"', requires + '["shap>>0.46"]'),
        "url requirement": lambda: edit('license = "MIT"', requires + '["shap @ https://example.org/shap.whl"]'),
        "twice": lambda: edit('license = "MIT"', requires + '["shap>=0.46", "SHAP<1"]'),
    }
    edits[case]()
    with pytest.raises(SubmissionError, match=message):
        sub = load_submission(folder)
        sub.precheck()
        sub.instantiate()


@pytest.mark.parametrize("requirement, message", [
    ("numpy<2", r"requires 'numpy<2' would replace the harness's numpy \S+ .* accept numpy"),
    ("tinypkg>=1", r"requires 'tinypkg>=1', and tinypkg is not installed; install it with: pip install 'tinypkg>=1'"),
    ("pytest>=999", r"requires 'pytest>=999', and pytest \S+ is installed; install it with: pip install 'pytest>=999'"),
])
def test_check_and_evaluate_name_a_missing_or_wrong_requirement_in_one_line(tmp_path, home, capsys, requirement,
                                                                            message):
    folder = packaged(tmp_path / "needs", "needs")
    toml = folder / "submission.toml"
    toml.write_text(toml.read_text().replace('license = "MIT"', f'license = "MIT"\nrequires = ["{requirement}"]'))
    code, line = one_line(["check", str(folder)], capsys)
    assert code == 2 and "\n" not in line and line.startswith("error: needs ")
    import re

    assert re.search(message, line), line
    code, line = one_line(["evaluate", str(folder), "--track", "aixi", "--limit", "1"], capsys)
    assert code == 2 and re.search(message, line), line


# --------------------------------------------------------------------------------------------------
# the sandbox: the same outputs as in-process; undeclared files absent


def test_a_package_explains_identically_in_process_and_in_the_sandbox(tmp_path, home):
    """In either worker (the plain one confined by Landlock where the kernel has it), a white-box model
    loaded from its folder."""
    from benchmark.check import image_models, draw_images
    from benchmark.contracts import Batch
    from benchmark.isolation import Worker, WorkerConfig
    from benchmark.isolation.sandbox import file_system_problem

    sub = load_submission(packaged(tmp_path / "lexicon-maps"))
    images, objects, patterns = draw_images(n=4)
    ids = [f"i{k}" for k in range(4)]
    spec = image_models(tmp_path, images, objects, patterns, ids)[0]  # the white-box CNN
    here = sub.instantiate().explain(spec.load(), Batch(ids=ids, inputs=images))
    for sandbox in ("auto", "none"):
        with Worker(sub, {}, spec, WorkerConfig(sandbox=sandbox)) as worker:
            assert worker.start() is None and worker.confined is (file_system_problem(sandbox) is None)
            there = worker.explain_all(ids, images, None, [(32, 32)] * 4, 4)
        assert all(e.ok for e in there)
        assert all(np.array_equal(a, e.array) for a, e in zip(here, there))


def test_an_undeclared_data_file_fails_check_and_evaluate_with_one_line(tmp_path, home, capsys):
    """The author's folder holds the file, but only declared files are present when the code runs."""
    folder = packaged(tmp_path / "undeclared", "undeclared", declare=False)
    (folder / "scoring" / "maps.py").write_text("def score(x, gain):\n    return x\n")  # reads it by path only
    fix = ('undeclared reads data/weights.txt, which submission.toml does not declare: add weights = '
           '"data/weights.txt" under [files]')
    code, line = one_line(["check", str(folder)], capsys)
    assert code == 2 and line.startswith(f"error: {fix}"), line
    code, line = one_line(["evaluate", str(folder), "--track", "aixi", "--model", "function", "--limit", "1"], capsys)
    assert code == 2 and line.startswith(f"error: {fix}"), line


# --------------------------------------------------------------------------------------------------
# `xaibench new`


@pytest.mark.parametrize("args", [
    ["explainer", "occluder"],
    ["explainer", "deleter", "--modality", "text"],
    ["oracle", "confident", "--modality", "text"],
    ["explainer", "saliency-copy", "--from", "captum.attr.Saliency"],
    ["explainer", "ixg-copy", "--modality", "text", "--from", "captum.attr.InputXGradient"],
])
def test_new_writes_a_folder_that_passes_check(tmp_path, home, monkeypatch, capsys, args):
    from benchmark.check import check_submission

    monkeypatch.chdir(tmp_path)
    code, line = one_line(["new", *args], capsys)
    folder = tmp_path / args[1]
    assert code == 0 and f"wrote {folder}/" in line
    module = "oracle.py" if args[0] == "oracle" else "explainer.py"
    assert sorted(p.name for p in folder.iterdir()) == sorted(["README.md", "submission.toml", module])
    assert "xaibench submit" in (folder / "README.md").read_text()
    sub, rows = check_submission(folder)
    assert sub.kind == args[0] and [r for r in rows if r.ok is False] == []
    assert sum(r.ok is True for r in rows) >= 4


@pytest.mark.parametrize("args, message", [
    (["explainer", "Bad_Name"], "name 'Bad_Name' must be lower-case letters"),
    (["oracle", "o", "--modality", "image"], "oracles judge explained text predictions"),
    (["oracle", "o", "--modality", "text", "--from", "captum.attr.Saliency"], "--from wraps a captum attribution"),
    (["explainer", "e", "--from", "captum.attr.Lime"], "--from captum.attr.Lime: not a captum method"),
    (["explainer", "taken"], "exists already"),
])
def test_new_refuses_bad_input_with_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("kept")
    code, line = one_line(["new", *args], capsys)
    assert code == 2 and line.startswith("error: ") and message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"] and (tmp_path / "taken" / "mine.txt").read_text() \
        == "kept"


# --------------------------------------------------------------------------------------------------
# requirements: a wheelhouse built here, an environment per requirement set, `results verify`


def wheel(wheelhouse: Path, work: Path, name: str, version: str, modules: dict[str, str],
          depends: tuple[str, ...] = ()) -> None:
    """A pure-Python wheel of `modules` (paths → text, relative to the package root) into `wheelhouse`."""
    src = work / f"{name}-{version}"
    write(src, {"pyproject.toml": f"""\
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name}"
        version = "{version}"
        dependencies = {json.dumps(list(depends))}
        [tool.setuptools]
        packages = {json.dumps(sorted({Path(p).parts[0] for p in modules if p.endswith(".py")}))}
        """, **modules})
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--disable-pip-version-check", "-w", str(wheelhouse), str(src)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory) -> Path:
    """tinypkg 1.0.0 (SCALE = 3.0), a package that needs numpy<2 (the harness's is newer), one that ships a
    top-level `numpy` of its own, and one whose `.pth` file and import try to act outside the worker."""
    work = tmp_path_factory.mktemp("wheels")
    house = work / "wheelhouse"
    wheel(house, work, "tinypkg", "1.0.0", {"tinypkg/__init__.py": "SCALE = 3.0\n"})
    wheel(house, work, "oldnumpy", "1.0.0", {"oldnumpy/__init__.py": ""}, depends=("numpy<2",))
    wheel(house, work, "shadow", "1.0.0", {"shadow/__init__.py": "", "numpy/__init__.py": "FAKE = True\n"})
    return house


def test_environments_are_built_offline_cached_and_refuse_what_would_replace_the_harness(wheelhouse, tmp_path):
    from benchmark.submission.environments import EnvironmentBuildError, Sources, ensure

    sources = Sources(find_links=(str(wheelhouse),))
    env = ensure(["tinypkg>=1,<2"], sources, home=tmp_path)
    assert env.built and env.installed == {"tinypkg": "1.0.0"}
    assert (env.packages / "tinypkg" / "__init__.py").read_text() == "SCALE = 3.0\n"
    again = ensure(["tinypkg>=1,<2"], sources, home=tmp_path)
    assert not again.built and again.path == env.path
    changed = env.packages / "tinypkg" / "__init__.py"  # e.g. by a worker without the file-system sandbox
    changed.chmod(0o644)
    changed.write_text("SCALE = -1.0\n")
    (tmp_path / f".building-{env.path.name}-999999999-0a0b0c0d").mkdir()  # a killed build's leftover
    rebuilt = ensure(["tinypkg>=1,<2"], sources, home=tmp_path)
    assert rebuilt.built and changed.read_text() == "SCALE = 3.0\n"
    for requirements, message in [
        (["numpy<2"], r"'numpy<2' would replace the harness's numpy"),
        (["oldnumpy"], r"a requirement needs numpy<2, which would replace the harness's numpy"),
        (["shadow"], r"a requirement installs the module 'numpy', which is the harness's"),
        (["tinypkg>=2"], r"no version of tinypkg satisfies tinypkg>=2 \(the sources offer 1.0.0\)"),
        (["absent==1.0"], r"no source offers absent==1.0: add a wheel of it to the --find-links folder"),
    ]:
        with pytest.raises(EnvironmentBuildError, match=message):
            ensure(requirements, sources, home=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [env.path.name]  # nothing half-built is left


SCALED = """\
import numpy as np
import tinypkg


class Scaled:
    def __init__(self, gain=1.0):
        self.gain = gain

    def explain(self, model, batch):
        return [np.asarray(x, dtype=np.float32) * np.float32(tinypkg.SCALE * self.gain) for x in batch.inputs]
"""


def test_a_package_and_a_requirement_are_submitted_and_re_run_by_results_verify(world, wheelhouse, tmp_path, capsys):
    """The package is submitted with `xaibench submit` (which runs `check`) and re-run by `results verify`
    from `source/` alone (the author's folder is gone); the submission that requires tinypkg is evaluated in an
    environment from the wheelhouse, its Result records tinypkg 1.0.0, and `verify --find-links` re-runs it in
    its own environment built from those versions. Without the package in the wheelhouse nothing is signed."""
    from benchmark.submission.environments import Sources, ensure
    from benchmark.runner import evaluate

    results, remote = world
    package = packaged(tmp_path / "lexicon-maps")
    evaluate(package, results_dir=results, **RUN)
    code, out = one_line(["submit", str(package), "--to", str(remote), "--results", str(results)], capsys)
    assert code == 0, out
    assert "source/lexicon-maps/data/weights.txt" in out and "README.md" not in out
    shutil.rmtree(package)
    keys = tmp_path / "keys"
    assert one_line(["results", "keygen", "--out", str(keys)], capsys)[0] == 0
    code, out = one_line(["results", "verify", f"{remote}@{branch(remote, 'lexicon-maps')}", "--key",
                          str(keys / "verifier.key")], capsys)
    # with the board's built-in floors, run and signed by the verification too (issue #58)
    assert code == 0 and "ok results/lexicon-maps/" in out and "signed 3 record" in out, out
    assert "(a built-in floor, run by the maintainer)" in out

    scaled = write(tmp_path / "scaled", {"explainer.py": SCALED, "submission.toml": TOML.format(
        name="scaled", entry="explainer:Scaled", requires='requires = ["tinypkg>=1,<2"]', files="")})
    env = ensure(["tinypkg>=1,<2"], Sources(find_links=(str(wheelhouse),)))
    result = evaluate(scaled, results_dir=results, environment=env.packages, **RUN)
    assert result.provenance["requirements"] == {"tinypkg": "1.0.0"}
    assert result.metrics["kl"].n > 0 and result.n_failed == 0
    rel = propose(scaled, results, remote, "scaled")
    empty = tmp_path / "empty-wheelhouse"
    empty.mkdir()
    code, out = one_line(["results", "verify", f"{remote}@xaibench/scaled", "--key", str(keys / "verifier.key"),
                          "--find-links", str(empty)], capsys)
    assert code == 1 and "no source offers tinypkg==1.0.0" in out and "nothing was signed" in out, out
    code, out = one_line(["results", "verify", f"{remote}@xaibench/scaled", "--key", str(keys / "verifier.key"),
                          "--find-links", str(wheelhouse)], capsys)
    assert code == 0 and f"ok {rel}" in out, out
    record = verification(remote, rel)
    # the re-run as submitted, and the randomisation test's run on the randomised model (#45), in one environment
    assert [(f["label"], f["requirements"]) for f in record["rerun"]] == [
        ("as submitted", {"tinypkg": "1.0.0"}), ("randomised model", {"tinypkg": "1.0.0"})]
    from benchmark.resources import data_home

    built = [p for p in (data_home() / "environments").iterdir()]
    assert len(built) == 2 and not any(p.name.startswith(".building") for p in built)  # evaluate's and verify's


RUN = dict(track="aixi", resource="aixi/shape-ssin", model="function", sandbox="auto", timeout_s=0)


@pytest.fixture(scope="module")
def world(aixi_home, tmp_path_factory):
    """A results folder and an empty bare git results repository."""
    from tests.test_results_repository import contributor

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    contributor()  # the key `submit` signs with
    root = tmp_path_factory.mktemp("package-world")
    remote = root / "results.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    with pytest.raises(SystemExit):
        main(["results", "init", str(remote)])
    return root / "res", remote


def branch(remote: Path, name: str) -> str:
    heads = subprocess.run(["git", "ls-remote", str(remote)], capture_output=True, text=True, check=True).stdout
    return next(line.split("\t")[1][len("refs/heads/"):] for line in heads.splitlines()
                if f"refs/heads/xaibench/{name}/" in line)


def propose(folder: Path, results: Path, remote: Path, name: str) -> str:
    """A pull request of the submission's Results (as `submit` lays them out) on branch xaibench/<name>; the
    Result's path."""
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.layout import parse_result_path
    from leaderboard.repository.submit import package

    from tests.test_results_repository import sign

    files = sign(package(load_submission(folder), results))
    with GitStore(str(remote)) as store:
        store.propose(files, name, name)
    return next(rel for rel in files if parse_result_path(rel))


def verification(remote: Path, rel: str) -> dict:
    from leaderboard.repository.git import GitStore
    from leaderboard.repository.layout import parse_result_path

    rp = parse_result_path(rel)
    with GitStore(str(remote)) as store:
        return json.loads((store.snapshot() / rp.verification).read_text())


# --------------------------------------------------------------------------------------------------
# the sandbox's guarantees for packages and their environments (the hostile suite's classes)


PROBE = """\
import glob
import os
from pathlib import Path


def probe(extra=()):
    home, author = {home!r}, {author!r}
    found = [p for p in glob.glob(home + "/**/*", recursive=True) if os.path.isfile(p)]
    results = []
    for target in (Path(__file__).parent / "planted.py", Path(home) / "resources" / "planted.txt",
                   Path(author) / "planted.txt", *extra):
        try:
            Path(target).write_text("x")
            results.append("wrote " + str(target))
        except OSError:
            pass
    try:
        Path(author, "README.md").read_text()
        results.append("read the author's folder")
    except OSError:
        pass
    with open(os.path.join(os.environ["XAIBENCH_SCRATCH"], "report.txt"), "w") as fh:
        fh.write(f"files={{len(found)}} " + "; ".join(results))
"""


def wheel_by_hand(house: Path, name: str, version: str, files: dict[str, str]) -> None:
    """A wheel written file by file (zip + RECORD with sha256), for contents setuptools will not place at the
    top of site-packages (a `.pth` file)."""
    import base64
    import hashlib
    import zipfile

    info = f"{name}-{version}.dist-info"
    files = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{info}/top_level.txt": name + "\n"}
    record = [f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(t.encode())}" for p, t in files.items()] + [f"{info}/RECORD,,"]
    house.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(house / f"{name}-{version}-py3-none-any.whl", "w") as z:
        for p, t in {**files, f"{info}/RECORD": "\n".join(record) + "\n"}.items():
            z.writestr(p, t)


@pytest.mark.parametrize("sandbox", CONFINED)
def test_a_hostile_package_and_its_environment_reach_nothing(world, tmp_path, sandbox):
    """A packaged submission whose sub-package, and a package of its environment, try to read ground truth,
    write beside their code, into the data home and into the author's folder, and (the environment's
    `.pth` file) run before the worker's limits: none of it happens, and the run's numbers stand."""
    from benchmark.submission.environments import Sources, ensure
    from benchmark.resources import data_home
    from benchmark.runner import evaluate

    results, _ = world
    home = str(data_home())
    house = tmp_path / "house"
    wheel_by_hand(house, "sneaky", "1.0.0", {
        "sneaky.pth": "import os; open(os.environ.get('XAIBENCH_SCRATCH', '/tmp') + '/pth-ran', 'w').close()\n",
        "sneaky/__init__.py": PROBE.format(home=home, author=str(tmp_path / "hostile")),
    })
    folder = write(tmp_path / "hostile", {
        "submission.toml": TOML.format(name="hostile-package", entry="method.run:Hostile",
                                       requires='requires = ["sneaky"]', files=""),
        "README.md": "the author's notes\n",
        "method/__init__.py": "",
        "method/run.py": """\
            import numpy as np

            import sneaky


            class Hostile:
                def __init__(self, gain=1.0):
                    pass

                def explain(self, model, batch):
                    sneaky.probe(extra=[sneaky.__file__ + ".planted"])
                    return [np.ones(x.shape, np.float32) for x in batch.inputs]
            """,
    })
    env = ensure(["sneaky"], Sources(find_links=(str(house),)))
    before = {p: p.read_bytes() for p in env.path.rglob("*") if p.is_file()}
    scratch = data_home() / "scratch" / "hostile-package"
    (scratch / "report.txt").unlink(missing_ok=True)
    r = evaluate(folder, results_dir=results, environment=env.packages, limit=2, batch_size=2, overwrite=True,
                 **{**RUN, "sandbox": sandbox})
    assert r.n_failed == 0 and r.provenance["requirements"] == {"sneaky": "1.0.0"}
    assert (scratch / "report.txt").read_text() == "files=0 "  # nothing found, nothing written, nothing read
    assert not (scratch / "pth-ran").exists()
    assert {p: p.read_bytes() for p in env.path.rglob("*") if p.is_file()} == before
    assert not (data_home() / "resources" / "planted.txt").exists() and not (folder / "planted.txt").exists()
