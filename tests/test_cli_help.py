"""`--help` reads at 80 columns (issue #28, item 3): one-line command summaries, full texts wrapped by
the terminal, never at the docstring's source line breaks, nothing cut off."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from benchmark import cli

WIDTH = 80


def _commands() -> list[tuple[str, ...]]:
    cli.load_plugins()
    out: list[tuple[str, ...]] = [()]

    def walk(app, prefix=()):
        for info in app.registered_commands:
            out.append(prefix + (info.name,))
        for group in app.registered_groups:
            out.append(prefix + (group.name,))
            walk(group.typer_instance, prefix + (group.name,))

    walk(cli.app)
    return out


COMMANDS = _commands()


def _help(path: tuple[str, ...]) -> str:
    res = CliRunner().invoke(cli.app, [*path, "--help"], env={"COLUMNS": str(WIDTH), "TERM": "dumb"},
                             prog_name="xaibench")
    assert res.exit_code == 0, res.output
    return res.output


def _premature(lines: list[str]) -> list[str]:
    """Lines of a greedily wrapped paragraph that end although the next line's first word would have fit:
    a break the source text made, not the terminal. Description lines are the unboxed ones (one leading
    space); a list item or a blank line starts anew."""
    bad = []
    for cur, nxt in zip(lines, lines[1:]):
        if not (cur.startswith(" ") and nxt.startswith(" ")) or cur.startswith(("│", "╭", "╰")):
            continue
        if not cur.strip() or not nxt.strip() or nxt.startswith(("│", "╭", "╰")):
            continue
        word = nxt.strip().split()[0]
        if re.match(r"^([*\-•]|\d+[.)])$", word):
            continue
        if cell_len(cur.rstrip()) + 1 + cell_len(word) <= WIDTH - 1:
            bad.append(f"{cur.rstrip()!r} ⏎ {nxt.strip()!r}")
    return bad


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "xaibench")
def test_help_renders_at_80_columns_without_source_line_breaks(path):
    text = _help(path)
    lines = text.splitlines()
    assert max(cell_len(line.rstrip()) for line in lines) <= WIDTH
    assert "…" not in text, [line for line in lines if "…" in line]  # nothing cut off
    assert not _premature(lines), _premature(lines)


def test_every_command_summary_is_one_line():
    cli.load_plugins()
    long = []

    def walk(app, prefix=""):
        for info in app.registered_commands:
            if len(info.short_help or "") > cli.SUMMARY_MAX or "\n" in (info.short_help or ""):
                long.append(f"{prefix}{info.name}: {info.short_help!r}")
        for group in app.registered_groups:
            if len(group.short_help or "") > cli.SUMMARY_MAX:
                long.append(f"{prefix}{group.name}: {group.short_help!r}")
            walk(group.typer_instance, prefix + group.name + " ")

    walk(cli.app)
    assert not long, long
    main = _help(())
    for name in ("evaluate", "demo", "check", "leaderboard", "generate", "reproduce"):
        row = next(line for line in main.splitlines() if re.match(rf"^│ {name}\s", line))
        nxt = main.splitlines()[main.splitlines().index(row) + 1]
        assert not re.match(r"^│\s{3,}\S", nxt), f"{name}'s summary wraps: {row} / {nxt}"


def test_reflow_joins_source_lines_and_keeps_paragraphs_and_items():
    text = "Summary line.\n\n    A paragraph that\n    goes on.\n\n    * item one\n    * item\n      two"
    assert cli.reflow(text) == "Summary line.\n\nA paragraph that goes on.\n\n* item one\n* item two"
    assert cli.summary(text) == "Summary line"


@pytest.mark.parametrize("path", [("leaderboard",), ("evaluate",)], ids=" ".join)
def test_boolean_flags_are_drawn_without_a_value(path):
    """A flag takes no value: its row shows the name(s) alone, never `<bool>` (click's metavar for a flag)."""
    text = _help(path)
    assert "<bool>" not in text and "BOOLEAN" not in text
    flag = "--verified-only" if path == ("leaderboard",) else "--overwrite"
    line = next(line for line in text.splitlines() if flag in line)
    after = line.split(flag, 1)[1].split("│")[0]
    assert len(after) - len(after.lstrip()) > 10 or not after.strip(), line  # no value column beside the name


def test_no_command_draws_bool_as_a_value():
    for path in COMMANDS:
        assert "<bool>" not in _help(path), path
