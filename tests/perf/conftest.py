"""`make perf`: the machine and its load average before and after the run, and every ratio the
benchmarks recorded, side by side in one table at the end (`timing.py`). A run on a loaded machine
says so: its absolute times are not the idle machine's, its ratios still compare like with like."""

from __future__ import annotations

import pytest
import timing

_BEFORE: dict[str, str] = {}


def pytest_collection_modifyitems(items) -> None:
    """Benchmarks are not timed tests (DESIGN §6): an hour each before pytest-timeout's guard stops one
    (the project's 600 s is for tests; a benchmark on a loaded 2-core machine can take longer)."""
    for item in items:
        item.add_marker(pytest.mark.timeout(3600))


def pytest_report_header(config) -> list[str]:
    """The CPU the figures below were measured on, and the load average before the run."""
    _BEFORE["load"] = timing.load()
    return [f"perf machine: {timing.machine()}", f"load average before the run: {_BEFORE['load']}"]


def pytest_terminal_summary(terminalreporter) -> None:
    """Every recorded ratio, the machine and the load average before and after."""
    if not timing.RECORDS:
        return
    terminalreporter.write_sep("=", "benchmark ratios (one run, each side best of alternating runs)")
    terminalreporter.write_line(f"machine: {timing.machine()}")
    terminalreporter.write_line(f"load average before: {_BEFORE.get('load', 'n/a')}; after: {timing.load()}")
    for line in timing.summary().splitlines():
        terminalreporter.write_line(line)
