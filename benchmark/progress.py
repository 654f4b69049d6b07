"""Rich progress bars with rate and ETA for every long step (generation, training, explanation,
scoring). Disabled when `XAIBENCH_PROGRESS=0` or when stderr is not a terminal and CI is set."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(stderr=True)


def enabled() -> bool:
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
    with Progress(*columns, console=console, transient=False) as p:
        yield _Bar(p, p.add_task(description, total=total))


class _RateColumn(TextColumn):
    def __init__(self, unit: str) -> None:
        super().__init__("")
        self.unit = unit

    def render(self, task):  # noqa: D401
        from rich.text import Text

        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f} {self.unit}/s" if speed else f"? {self.unit}/s", style="cyan")
