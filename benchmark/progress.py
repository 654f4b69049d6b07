"""Rich progress bars with rate and ETA for every long step (generation, training, explanation,
scoring). Disabled when `XAIBENCH_PROGRESS=0` or when stderr is not a terminal and CI is set."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(stderr=True)


def enabled() -> bool:
    """Whether progress bars are drawn: `XAIBENCH_PROGRESS` when set ("0" = off), else on a terminal
    or outside CI."""
    flag = os.environ.get("XAIBENCH_PROGRESS")
    if flag is not None:
        return flag != "0"
    return sys.stderr.isatty() or not os.environ.get("CI")


class _Bar:
    def __init__(self, progress: Progress | None, task) -> None:
        self._p, self._t = progress, task

    def advance(self, n: float = 1) -> None:
        if self._p is not None:
            self._p.advance(self._t, n)

    def update(self, **kwargs) -> None:
        if self._p is not None:
            self._p.update(self._t, **kwargs)


@contextmanager
def progress_bar(total: float | None, description: str, unit: str = "it") -> Iterator[_Bar]:
    """`with progress_bar(n, "explaining") as bar: ... bar.advance(k)` — shows rate and ETA."""
    if not enabled():
        yield _Bar(None, None)
        return
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        _RateColumn(unit),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    ]
    with FitProgress(*columns, console=console, transient=False) as p:
        yield _Bar(p, p.add_task(description, total=total))


class FitProgress(Progress):
    """A `Progress` whose lines fit the terminal: the first column (the description) is never cut and
    the bar (the second column) narrows to make room, down to `min_bar` cells; where even that does not
    fit, the description goes on a line of its own above the bar and the figures. Rich's own layout
    squeezes every column instead: at 80 columns a long description left a two-cell bar and cut
    figures ("0…", "-:…")."""

    min_bar = 10
    max_bar = 40

    def get_renderables(self) -> Iterator[RenderableType]:
        """The tasks' lines laid out to fit the terminal's width (see the class docstring)."""
        from rich.measure import Measurement
        from rich.table import Column, Table

        tasks = [t for t in self.tasks if t.visible]
        if not tasks or len(self.columns) < 3:
            yield self.make_tasks_table(tasks)
            return
        describe, bar = self.columns[0], self.columns[1]
        rest = [c for c in self.columns[2:] if isinstance(c, ProgressColumn)]
        if isinstance(describe, str) or not isinstance(bar, BarColumn) or len(rest) < len(self.columns) - 2:
            yield self.make_tasks_table(tasks)  # a column given as text: rich's own layout
            return
        width = self.console.width
        options = self.console.options
        heads = [describe(t) for t in tasks]
        figures = [[c(t) for c in rest] for t in tasks]
        n_rest = len(rest)
        col_w = [max(Measurement.get(self.console, options, row[i]).maximum for row in figures)
                 for i in range(n_rest)]
        figures_w = sum(col_w) + n_rest  # one space before each figure column
        head_w = max(Measurement.get(self.console, options, h).maximum for h in heads)

        def grid(with_head: bool) -> Table:
            cols = ([Column(no_wrap=True, width=head_w)] if with_head else []) + [Column(no_wrap=True)]
            cols += [Column(no_wrap=True, width=w) for w in col_w]
            return Table.grid(*cols, padding=(0, 1))

        if head_w + 1 + self.min_bar + figures_w <= width:  # one line per task
            bar.bar_width = min(self.max_bar, width - head_w - 1 - figures_w)
            table = grid(True)
            for t, h, row in zip(tasks, heads, figures):
                table.add_row(h, bar(t), *row)
            yield table
            return
        bar.bar_width = max(1, min(self.max_bar, width - figures_w))  # stacked: description, then the bar
        for t, h, row in zip(tasks, heads, figures):
            yield h
            table = grid(False)
            table.add_row(bar(t), *row)
            yield table


class _RateColumn(TextColumn):
    def __init__(self, unit: str) -> None:
        super().__init__("")
        self.unit = unit

    def render(self, task):  # noqa: D401
        from rich.text import Text

        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f} {self.unit}/s" if speed else f"? {self.unit}/s", style="cyan")
