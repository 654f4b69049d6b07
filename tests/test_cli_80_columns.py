"""Terminal output at 80 columns (issue #15, item 6): `xaibench list`, the lines `xaibench evaluate`
prints and the progress bars keep full names and whole numbers on lines of at most 80 cells."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from benchmark import cli

WIDTH = 80


def _run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(list(argv))
    out = capsys.readouterr()
    return exc.value.code, out.out + out.err


@pytest.fixture()
def narrow(monkeypatch):
    """The CLI's console (stderr) at 80 columns."""
    monkeypatch.setattr(cli.console, "width", WIDTH)


def _fits(text: str) -> None:
    lines = text.splitlines()
    assert lines
    too_wide = [line for line in lines if cell_len(line.rstrip()) > WIDTH]
    assert not too_wide, too_wide
    assert "…" not in text  # nothing truncated


def test_list_keeps_every_name_whole_at_80_columns(home, capsys, narrow):
    from benchmark.resources.store import list_local_resources
    from benchmark.submission import discover

    code, text = _run(capsys, "list")
    assert code == 0
    _fits(text)
    starts = {line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith(" ")}
    submissions = set(discover())
    resources = {r.name for r in list_local_resources()}
    tracks = set(cli._tracks())
    assert len(submissions) >= 16 and {"aixi/shape-ssin", "aixi/color-class"} <= resources
    missing = (submissions | resources | tracks) - starts
    assert not missing, f"names not shown whole at the start of their line: {missing}"
    for trk in cli._tracks().values():  # every config name whole (comma- or line-separated)
        for config in trk.configs():
            assert re.search(rf"(?<![\w-]){re.escape(config)}(?![\w-])", text), config
    # the entry line of a submission carries its fields, its description follows on its own lines
    line = next(li for li in text.splitlines() if li.startswith("lime-exhaustive "))
    assert line.split() == ["lime-exhaustive", "explainer", "1.0.0", "image", "segments", "yes"]
    assert "Deterministic exhaustive LIME" in text


def test_a_long_path_folds_onto_the_next_line_instead_of_being_cut():
    """A resource folder longer than the 80 columns (a deep $XAIBENCH_HOME; pytest-xdist's worker folders
    made the session home's long enough) is folded, not cut with "…"."""
    from benchmark.listing import Entry, listing

    path = "/tmp/" + "/".join(f"folder-{k:02d}" for k in range(12)) + "/resources/trust"
    console = Console(width=WIDTH, record=True, file=io.StringIO())
    console.print(listing("Resources", ["resource", "version"], [Entry(["trust/hatexplain-cnn", "1"],
                                                                       [("path", path)])]))
    text = console.export_text()
    _fits(text)
    assert path in "".join(line.strip() for line in text.splitlines())  # whole, across the folded lines


def test_evaluate_lines_fit_80_columns(home, capsys, narrow, tmp_path):
    code, text = _run(capsys, "evaluate", "all", "--track", "aixi", "--resource", "aixi/shape-ssin",
                      "--model", "function", "--limit", "2", "--hidden-draws", "0", "--results", str(tmp_path / "r"))
    assert code == 0, text
    _fits(text)
    assert re.search(r"^uniform on aixi/shape-ssin/function: kl = \d\.\d{4} \(n=2, failed 0/2\)$", text, re.M)
    assert "lime-exhaustive on aixi/shape-ssin/function: kl = " in text
    # a hidden copy's line (one submission: the lines are the same for every one)
    code, hidden = _run(capsys, "evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin",
                        "--model", "function", "--limit", "2", "--hidden-draws", "1", "--results", str(tmp_path / "r"))
    assert code == 0, hidden
    _fits(hidden)
    assert re.search(r"^uniform \(hidden copy 0\) on aixi/shape-ssin/function:", hidden, re.M)
    # gradient explainers cannot explain the function model: named whole in the wrapped skip note
    skipped = text[text.index("not applicable"):]
    for name in ("deeplift", "grad-cam", "integrated-gradients", "saliency"):
        assert re.search(rf"(?<![\w-]){name}(?![\w-])", skipped), name


def test_a_long_result_line_puts_its_figures_on_a_second_line():
    short = cli._result_line("uniform", "aixi/shape-ssin/function", "kl = 0.1234 (n=200, failed 0/200)", WIDTH)
    assert short.plain == "uniform on aixi/shape-ssin/function: kl = 0.1234 (n=200, failed 0/200)"
    figures = "first = 0.1234 (n=999, failed 12/999)"
    long = cli._result_line("integrated-gradients", "rcnn/beer-appearance/rcnn", figures, WIDTH)
    head, tail = long.plain.split("\n")
    assert head == "integrated-gradients on rcnn/beer-appearance/rcnn:" and tail == "    " + figures
    assert max(cell_len(head), cell_len(tail)) <= WIDTH


def _render_bars(width: int) -> str:
    """Two tasks of the progress bar `benchmark.progress.progress_bar` draws, rendered at `width`."""
    from rich.progress import (BarColumn, MofNCompleteColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from benchmark.progress import FitProgress, _RateColumn

    console = Console(width=width, record=True, file=io.StringIO(), force_terminal=True)
    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
               _RateColumn("inst"), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn()]
    progress = FitProgress(*columns, console=console, auto_refresh=False)
    progress.update(progress.add_task("integrated-gradients on rcnn/beer-appearance/rcnn", total=2000),
                    completed=500)
    progress.update(progress.add_task("scoring uniform", total=2000), completed=1500)
    console.print(progress.get_renderable())
    return console.export_text()


def test_progress_bars_fit_80_columns_with_their_descriptions_whole():
    text = _render_bars(WIDTH)
    _fits(text)
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    # too long for one line at 80 columns: the description stands above its bar and figures
    assert lines[0] == "integrated-gradients on rcnn/beer-appearance/rcnn"
    assert "━" in lines[1] and re.search(r" 500/2000 +25% .* eta ", lines[1])
    assert lines[2] == "scoring uniform" and re.search(r" 1500/2000 +75% ", lines[3])


def test_progress_bars_use_one_line_where_the_terminal_is_wide():
    text = _render_bars(140)
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    assert len(lines) == 2
    assert lines[0].startswith("integrated-gradients on rcnn/beer-appearance/rcnn ━")
    assert lines[1].startswith("scoring uniform ") and " 1500/2000 " in lines[1]
    assert max(cell_len(line) for line in lines) <= 140
