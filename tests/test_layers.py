"""The import contracts (DESIGN §3, issues #31 and #40), checked by import-linter (`make lint`, `make test`):
benchmark, leaderboard and generators never import `submissions`; benchmark imports neither generators
nor leaderboard; generators, submissions and leaderboard sit above benchmark, independent of each other; the
track generators never import each other; the leaderboard's rules and the isolation package stay below what
uses them; no import cycles inside benchmark, leaderboard and generators (acyclic siblings). The contracts
are listed in docs/contributing.md (tests/test_package_map.py). They hold on this tree, and the same
configuration fails on a tree that breaks one."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.test_package_map import contract_modules

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"


def lint(cwd: Path, config: Path | None = None) -> subprocess.CompletedProcess:
    """`lint-imports` in `cwd` (its packages first on the path), without the cache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = [str(LINT), "--no-cache"] + (["--config", str(config)] if config else [])
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_contracts_hold_on_this_tree():
    names = [c["name"] for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
             ["contracts"]]
    assert any("never import submissions" in n for n in names)
    run = lint(ROOT)
    out = " ".join((run.stdout + run.stderr).split())  # its report wraps long names
    assert run.returncode == 0, out
    assert f"{len(names)} kept, 0 broken" in out


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _skeleton() -> dict[str, str]:
    """Empty packages for every module the contracts name (import-linter refuses a contract on a module
    that does not exist), under the real names."""
    names = {"benchmark", "generators", "leaderboard", "submissions"} | contract_modules()
    return {f"{n.replace('.', '/')}/__init__.py": "" for n in names}


def test_the_same_contracts_fail_on_a_tree_that_breaks_them(tmp_path):
    """Tiny packages under the real names, with this project's configuration: a harness module that
    imports `submissions` (the issue's case) breaks the contracts, naming the import; so does the
    isolation package reaching up to the runner."""
    packages = _skeleton()
    good = _tree(tmp_path / "good", {**packages, "submissions/s.py": "import benchmark\n",
                                     "leaderboard/boards.py": "from benchmark import x\n", "benchmark/x.py": "",
                                     "benchmark/runner/__init__.py": "from benchmark.isolation import worker\n",
                                     "benchmark/isolation/worker.py": ""})
    (good / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    assert lint(good).returncode == 0, lint(good).stdout
    bad = _tree(tmp_path / "bad", {**packages, "benchmark/isolation/worker.py": "def f():\n    import submissions\n",
                                   "benchmark/isolation/harness.py": "import benchmark.runner\n"})
    (bad / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    run = lint(bad)
    out = " ".join(run.stdout.split())
    assert run.returncode == 1, out
    assert "benchmark.isolation.worker -> submissions" in out and "BROKEN" in out
    assert "benchmark.isolation.harness -> benchmark.runner" in out


def test_a_config_given_by_path_is_used(tmp_path):
    """`--config` (what `make lint` does not need but a reviewer may use): a forbidden contract of a
    small package pair, one importing the other."""
    tree = _tree(tmp_path, {"low/__init__.py": "", "low/a.py": "import high.b\n", "high/__init__.py": "",
                            "high/b.py": ""})
    cfg = tmp_path / "lint.toml"
    cfg.write_text('[tool.importlinter]\nroot_packages = ["low", "high"]\n\n[[tool.importlinter.contracts]]\n'
                   'name = "low never imports high"\ntype = "forbidden"\nsource_modules = ["low"]\n'
                   'forbidden_modules = ["high"]\n')
    run = lint(tree, cfg)
    assert run.returncode == 1 and "low.a -> high.b" in run.stdout, run.stdout
    (tree / "low" / "a.py").write_text("")
    assert lint(tree, cfg).returncode == 0


def test_an_import_cycle_inside_a_package_breaks_the_contracts(tmp_path):
    """The acyclic-siblings contract: two sibling modules of `benchmark` (or of one of its sub-packages) that
    import each other, even through a function-level import, fail `lint-imports`, naming the package."""
    tree = _tree(tmp_path / "cycle", {**_skeleton(), "benchmark/tracks/__init__.py": "",
                                      "benchmark/tracks/base.py": "def f():\n    from benchmark.tracks import aixi\n",
                                      "benchmark/tracks/aixi.py": "from benchmark.tracks import base\n"})
    (tree / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    run = lint(tree)
    out = " ".join(run.stdout.split())
    assert run.returncode == 1, out
    assert "No cycles are allowed in benchmark.tracks" in out and "BROKEN" in out
    (tree / "benchmark" / "tracks" / "base.py").write_text("")
    assert lint(tree).returncode == 0, lint(tree).stdout
