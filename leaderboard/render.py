"""Rendering boards and summaries: rich tables, Markdown, CSV and a static HTML page.

Every format shows, per board: the metric label with its direction arrow (↓ lower is better, ↑ higher
is better), the primary metric's column marked with ★, cells as `mean ± half-width of the 95% CI`,
a failures column `n_failed/n_instances`, and the board's warnings under it. Output is deterministic
(no timestamps; boards, rows and columns in a fixed order).
"""

from __future__ import annotations

import csv
import html
import io
import math
from typing import Iterable

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from benchmark.results import MetricSummary
from leaderboard.rank import Board, overall, track_summary

__all__ = [
    "ARROWS",
    "PRIMARY_MARK",
    "csv_columns",
    "format_cell",
    "format_number",
    "print_rich",
    "rich_renderables",
    "to_csv",
    "to_html",
    "to_markdown",
    "to_text",
]

ARROWS = {"lower": "↓", "higher": "↑"}
PRIMARY_MARK = "★"
MISSING = "—"
LEGEND = (
    f"↓ lower is better · ↑ higher is better · {PRIMARY_MARK} primary metric (ranked by) · "
    "cells: mean ± half-width of the 95% CI · failed: failed/instances"
)


# --------------------------------------------------------------------------------------------------
# number formatting


def _decimals(magnitude: float) -> int:
    """Decimals that give four significant digits at `magnitude` (0–6)."""
    if magnitude == 0 or not math.isfinite(magnitude):
        return 3
    return min(6, max(0, 3 - math.floor(math.log10(magnitude))))


def format_number(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return MISSING
    return f"{x:.{_decimals(abs(x))}f}"


def _half_width(m: MetricSummary) -> float | None:
    if m.ci95 is None:
        return None
    lo, hi = m.ci95
    return (float(hi) - float(lo)) / 2


def format_cell(m: MetricSummary | None) -> str:
    """`mean ± half-width` with four significant digits of the larger of the two; `—` when undefined."""
    if m is None or m.mean is None:
        text = MISSING
    else:
        half = _half_width(m)
        magnitude = max(abs(m.mean), abs(half) if half is not None else 0.0)
        if magnitude != 0 and (magnitude < 1e-4 or magnitude >= 1e6):
            text = f"{m.mean:.3e}" + (f" ± {half:.2e}" if half is not None else "")
        else:
            d = _decimals(magnitude)
            text = f"{m.mean:.{d}f}" + (f" ± {half:.{d}f}" if half is not None else "")
    if m is not None and m.excluded:
        text += f" ({m.excluded} excl.)"
    return text


def _header(board: Board, name: str) -> str:
    text = f"{board.labels.get(name, name)} {ARROWS.get(board.directions.get(name, ''), '')}".strip()
    return f"{text} {PRIMARY_MARK}" if name == board.primary_metric else text


def _failures(n_failed: int, n_instances: int) -> str:
    return f"{n_failed}/{n_instances}"


def _wall(seconds: float) -> str:
    return f"{seconds:.1f}"


def _board_caption(board: Board) -> str:
    parts = [f"revision {board.revision[:12]}"]
    if board.resource_version:
        parts.append(f"version {board.resource_version}")
    if board.split:
        parts.append(f"split {board.split}")
    return ", ".join(parts)


def _board_table(board: Board) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of a board, shared by every text format."""
    header = ["rank", "submission", "version", *(_header(board, n) for n in board.metric_names)]
    header += ["failed", "time (s)"]
    body = []
    for row in board.rows:
        body.append(
            [
                str(row.rank),
                row.submission,
                row.version,
                *(format_cell(row.metrics.get(n)) for n in board.metric_names),
                _failures(row.n_failed, row.n_instances),
                _wall(row.wall_time_s),
            ]
        )
    return header, body


def _summary_tables(boards: list[Board]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, body) of each track summary and of the overall ranking."""
    out = []
    for s in track_summary(boards):
        body = [
            [str(r.rank), r.submission, f"{r.mean_rank:.2f}", f"{r.entered}/{r.total}"] for r in s.rows
        ]
        out.append((f"track {s.track}: mean rank over its boards", ["rank", "submission", "mean rank ↓", "boards"], body))
    rows = overall(boards)
    tracks = sorted({b.track for b in boards})
    if rows:
        body = [
            [
                str(r.rank),
                r.submission,
                f"{r.mean_rank:.2f}",
                f"{r.entered}/{r.total}",
                *(f"{r.parts[t]:.2f}" if t in r.parts else MISSING for t in tracks),
            ]
            for r in rows
        ]
        header = ["rank", "submission", "mean rank ↓", "tracks", *tracks]
        out.append(("overall: mean of per-track mean ranks", header, body))
    return out


# --------------------------------------------------------------------------------------------------
# rich


def rich_renderables(boards: Iterable[Board], summaries: bool = True) -> list[RenderableType]:
    """Rich tables (each board, its warnings, then the summaries) ready for `Console.print`."""
    boards = list(boards)
    out: list[RenderableType] = []
    for board in boards:
        header, body = _board_table(board)
        table = Table(
            title=Text(board.title, style="bold"),
            caption=Text(_board_caption(board)),
            title_justify="left",
            caption_justify="left",
        )
        n_metrics = len(board.metric_names)
        name_width = max([len(h) for h in header[1:2]] + [len(row[1]) for row in body])
        for i, h in enumerate(header):
            is_metric = 3 <= i < 3 + n_metrics
            # names never shrink (a truncated name is useless); metric cells wrap at "±" when narrow
            table.add_column(
                Text(h),
                justify="right" if i == 0 or i >= 3 else "left",
                style="bold" if h.endswith(PRIMARY_MARK) else None,
                no_wrap=not is_metric,
                min_width=name_width if i == 1 else (len(h) if not is_metric else None),
            )
        for cells in body:
            table.add_row(*(Text(c) for c in cells))
        parts: list[RenderableType] = [table]
        for w in board.warnings:
            parts.append(Text(f"warning: {w}", style="yellow"))
        parts.append(Text(""))
        out.append(Group(*parts))
    if summaries and boards:
        for title, header, body in _summary_tables(boards):
            table = Table(title=Text(title, style="bold"), title_justify="left")
            for i, h in enumerate(header):
                table.add_column(Text(h), justify="left" if i == 1 else "right")
            for cells in body:
                table.add_row(*(Text(c) for c in cells))
            out.append(Group(table, Text("")))
        out.append(Text(LEGEND, style="dim"))
    return out


def print_rich(boards: Iterable[Board], console: Console | None = None, summaries: bool = True) -> None:
    """Print the boards (and summaries) as rich tables to `console` (default: stdout)."""
    console = console or Console()
    for renderable in rich_renderables(boards, summaries):
        console.print(renderable)


def to_text(boards: Iterable[Board], width: int = 160, summaries: bool = True) -> str:
    """The rich tables as plain text (no colour codes), e.g. to write to a file."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False)
    print_rich(boards, console, summaries)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------------
# Markdown

_MD_SPECIAL = set("\\`*[]<>|")


def _md(text: str) -> str:
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text).replace("\n", " ")


def _md_table(header: list[str], body: list[list[str]], right: set[int]) -> list[str]:
    lines = ["| " + " | ".join(_md(h) for h in header) + " |"]
    lines.append("|" + "|".join("---:" if i in right else ":---" for i in range(len(header))) + "|")
    for cells in body:
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return lines


def to_markdown(boards: Iterable[Board], summaries: bool = True) -> str:
    boards = list(boards)
    lines = ["# xaibench leaderboard", "", _md(LEGEND), ""]
    for board in boards:
        header, body = _board_table(board)
        lines += [f"## {_md(board.title)}", "", f"_{_md(_board_caption(board))}_", ""]
        lines += _md_table(header, body, {0} | set(range(3, len(header))))
        lines.append("")
        for w in board.warnings:
            lines.append(f"> **warning:** {_md(w)}")
            lines.append("")
    if summaries and boards:
        for title, header, body in _summary_tables(boards):
            lines += [f"## {_md(title)}", ""]
            lines += _md_table(header, body, set(range(len(header))) - {1})
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------------------------------
# CSV


def _metric_names_all(boards: list[Board]) -> list[str]:
    return sorted({n for b in boards for n in b.metric_names})


def csv_columns(boards: Iterable[Board]) -> list[str]:
    """The CSV header: board and submission fields, four columns per metric, then counts."""
    cols = ["track", "resource", "revision", "model", "rank", "submission", "version"]
    for n in _metric_names_all(list(boards)):
        cols += [f"{n}_mean", f"{n}_ci_low", f"{n}_ci_high", f"{n}_excluded"]
    return cols + ["n_instances", "n_failed", "wall_time_s"]


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def to_csv(boards: Iterable[Board]) -> str:
    """One row per (board, submission); metrics at full precision; empty cells where undefined."""
    boards = list(boards)
    names = _metric_names_all(boards)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(csv_columns(boards))
    for b in boards:
        for row in b.rows:
            cells: list[str] = [b.track, b.resource, b.revision, b.model, str(row.rank), row.submission, row.version]
            for n in names:
                m = row.metrics.get(n)
                if m is None:
                    cells += ["", "", "", ""]
                    continue
                lo, hi = m.ci95 if m.ci95 is not None else (None, None)
                cells += [_num(m.mean), _num(lo), _num(hi), str(m.excluded)]
            cells += [str(row.n_instances), str(row.n_failed), _num(row.wall_time_s)]
            writer.writerow(cells)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------------
# HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.primary { font-weight: bold; }
caption { caption-side: bottom; text-align: left; color: #666; font-size: 0.9em; padding-top: 0.3em; }
.warning { background: #fff6d5; border-left: 4px solid #e0b000; padding: 0.4em 0.8em; margin: 0.3em 0; }
.legend { color: #666; font-size: 0.9em; }
""".strip()


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _html_table(header: list[str], body: list[list[str]], left: set[int], primary_col: int | None,
                caption: str | None = None) -> list[str]:
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{_e(caption)}</caption>")
    ths = []
    for i, h in enumerate(header):
        cls = ' class="primary"' if i == primary_col else ""
        ths.append(f'<th scope="col"{cls}>{_e(h)}</th>')
    out.append("<thead><tr>" + "".join(ths) + "</tr></thead>")
    out.append("<tbody>")
    for cells in body:
        tds = []
        for i, c in enumerate(cells):
            classes = [] if i in left else ["num"]
            if i == primary_col:
                classes.append("primary")
            cls = f' class="{" ".join(classes)}"' if classes else ""
            tds.append(f"<td{cls}>{_e(c)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody>")
    out.append("</table>")
    return out


def to_html(boards: Iterable[Board], summaries: bool = True, title: str = "xaibench leaderboard") -> str:
    """A self-contained static page (inline CSS, no scripts); every text is HTML-escaped."""
    boards = list(boards)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="legend">{_e(LEGEND)}</p>',
    ]
    for board in boards:
        header, body = _board_table(board)
        out.append("<section>")
        out.append(f"<h2>{_e(board.title)}</h2>")
        out += _html_table(header, body, {1, 2}, 3, _board_caption(board))
        for w in board.warnings:
            out.append(f'<p class="warning"><strong>warning:</strong> {_e(w)}</p>')
        out.append("</section>")
    if summaries and boards:
        for title_, header, body in _summary_tables(boards):
            out.append("<section>")
            out.append(f"<h2>{_e(title_)}</h2>")
            out += _html_table(header, body, {1}, None)
            out.append("</section>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"
