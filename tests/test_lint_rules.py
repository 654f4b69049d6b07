"""What `make lint` cannot say by itself (issue #31): every `# type: ignore` in the typed packages names its
error code and gives its reason on the same line, and mypy's configuration ignores no module's errors
wholesale (only third-party packages without type information are let through, by name)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<code>\[[a-z-]+(?:,\s*[a-z-]+)*\])?(?P<rest>.*)$")


def unexplained_ignores(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each `# type: ignore` without an error code or without a reason after it."""
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        m = IGNORE.search(line)
        if m and (not m.group("code") or not re.match(r"\s*#\s*\S", m.group("rest"))):
            bad.append((n, line.strip()))
    return bad


def test_the_rule_itself():
    assert unexplained_ignores("x = 1  # type: ignore\n") == [(1, "x = 1  # type: ignore")]
    assert unexplained_ignores("x = 1  # type: ignore[misc]\n")
    assert not unexplained_ignores("x = 1  # type: ignore[misc]  # a monkeypatch\n")
    assert not unexplained_ignores("x = 1  # types are ignored here, in prose\n")


def test_every_type_ignore_gives_its_code_and_reason():
    bad = {str(p.relative_to(ROOT)): found for pkg in ("benchmark", "leaderboard", "generators", "submissions")
           for p in sorted((ROOT / pkg).rglob("*.py")) if (found := unexplained_ignores(p.read_text()))}
    assert not bad, bad


def test_mypy_ignores_no_project_module_and_checks_every_package():
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert set(mypy["files"]) == {"benchmark", "leaderboard", "generators", "submissions"}  # issue #40
    assert "ignore_errors" not in mypy
    for override in mypy.get("overrides", []):
        assert "ignore_errors" not in override, override
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(m.split(".")[0] in {"benchmark", "leaderboard", "generators", "submissions"}
                       for m in modules), modules
