"""Rendering boards and summaries as text: rich tables, Markdown and CSV.

HTML is the site's: `leaderboard.site`, whose `one_page` is `xaibench leaderboard --format html`.

Every format shows, per board: the metric label with its direction arrow (↓ lower is better, ↑ higher
is better), the primary metric's column marked with ★, cells as `mean ± half-width of the 95% CI`,
a failures column `n_failed/n_instances`, the revision and the coverage the board ranks ("1,598
instances (full split)"), and the board's warnings under it. Output is deterministic (no timestamps;
boards, rows and columns in a fixed order).

Integrity markers (`Row.status`, see `benchmark.store.integrity`): an "unsigned" result is marked
`unverified` and a "modified" one `MODIFIED` (unranked: rank `✗` in the terminal, `—` elsewhere, and a
warning naming its file) on the terminal, Markdown and CSV (`status` column) boards.

The terminal (rich) board fits the console width: the rank, the full submission name and the primary
metric (`mean ± CI`, or the mean alone when even that does not fit) are always shown, names and numbers
never wrap or get cut; when the full table is too wide, the other metrics show their mean only and are
added, with `failed`, `time (s)` and `version`, in that order while they fit; a dim line names what was
left out. At 80 columns an AIXI board shows rank, name, the primary metric with its CI, failures and
two to four other metrics.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from rich import box
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from benchmark.store.results import MetricSummary
from leaderboard.agreement import AGREEMENT_FLOOR
from leaderboard.boards import Board, Row
from leaderboard.randomisation import MEASURE
from leaderboard.summaries import MIN_SHARE, overall, overall_scopes, track_summary

__all__ = [
    "ARROWS",
    "MARKERS",
    "PRIMARY_MARK",
    "SUMMARY_CSV_COLUMNS",
    "csv_columns",
    "format_cell",
    "format_mean",
    "format_number",
    "print_rich",
    "rich_renderables",
    "to_csv",
    "to_summary_csv",
    "to_markdown",
    "to_text",
]

ARROWS = {"lower": "↓", "higher": "↑"}
PRIMARY_MARK = "★"
MISSING = "—"
UNRANKED = "✗"
# "signed" rows carry no marker; "verified" / "self-reported": rows read from a results repository
MARKERS = {"unsigned": "unverified", "modified": "MODIFIED", "verified": "verified", "self-reported": "self-reported"}
# the rank column of a control / reference row, and of a method the randomisation test found model-blind
ROLE_MARKS = {"control": "ctrl", "submitted control": "ctrl", "reference": "ref", "model-blind": "blind"}
TIED = "="  # after a rank the data cannot separate from another row's
MEASURE_WORDS = "Spearman ρ of the signed maps" if MEASURE == "spearman-signed" else f"{MEASURE} similarity"
_RANKS = (
    "rank: 1 + the methods significantly better (paired bootstrap over instances, 95 %); "
    f"{TIED} tied (the data cannot separate them) · rank 95%: the rank's bootstrap interval · "
    "ctrl: a control (a floor), ref: a reference allowed to read more (a ceiling), never ranked · "
    "blind: a method whose maps do not depend on the model (randomisation test), shown with the controls · "
    "hidden: the primary metric on hidden copies of the model drawn from a secret (where a board has them, its ranks "
    "come from there, and ✗ below a data prior marks a method that does not beat the best data prior there) · "
    "ρ rand.: mean Spearman ρ of each instance's (signed) maps on the trained and on a randomised model · "
    "all-metric: the methods' order by mean normalised rank over every metric"
)
LEGEND = (
    f"↓ lower is better · ↑ higher is better · {PRIMARY_MARK} primary metric (ranked by) · "
    "cells: mean ± half-width of the 95% CI · failed: failed/instances · " + _RANKS + " · "
    "unverified: no signature valid on this machine (older xaibench, or written elsewhere) · "
    "MODIFIED: the file changed after xaibench wrote it (not ranked) · "
    "verified / self-reported (from a results repository): a maintainer's signed re-run holds for it, or not"
)
# --------------------------------------------------------------------------------------------------
# number formatting


def _decimals(magnitude: float) -> int:
    """Decimals that give four significant digits at `magnitude` (0–6)."""
    if magnitude == 0 or not math.isfinite(magnitude):
        return 3
    return min(6, max(0, 3 - math.floor(math.log10(magnitude))))


def format_number(x: float | None) -> str:
    """`x` with as many decimals as its magnitude needs (about three significant digits); MISSING for
    None, NaN and ±∞."""
    if x is None or not math.isfinite(x):
        return MISSING
    return f"{x:.{_decimals(abs(x))}f}"


def format_mean(m: MetricSummary | None) -> str:
    """The mean alone, as `format_cell` writes it (narrow terminals); `—` when undefined."""
    if m is None or m.mean is None:
        return MISSING
    magnitude = abs(m.mean)
    if magnitude != 0 and (magnitude < 1e-4 or magnitude >= 1e6):
        text = f"{m.mean:.3e}"
    else:
        text = f"{m.mean:.{_decimals(magnitude)}f}"
    return text + (f" ({m.excluded} excl.)" if m.excluded else "")


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
    ranked_by = name == board.primary_metric and board.hidden is None  # a board with hidden copies ranks by those
    return f"{text} {PRIMARY_MARK}" if ranked_by else text


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
    return ", ".join(parts) + (f" · ranks {board.coverage_text}" if board.coverage else " · nothing ranked")


def _rank_cell(row: Row, unranked: str = MISSING) -> str:
    """`3`, `3=` (tied), `ctrl` / `ref` (a control / reference), or `unranked` (a modified result)."""
    if row.rank is None:
        return ROLE_MARKS.get(row.marker, unranked)
    return f"{row.rank}{TIED if row.tied else ''}"


def _interval_cell(row: Row) -> str:
    """The rank's 95 % bootstrap interval, `2–5` (`—` when undefined or not ranked)."""
    if row.rank is None or row.interval is None:
        return MISSING
    lo, hi = row.interval
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _all_metric_cell(row: Row) -> str:
    return MISSING if row.all_metric_rank is None else str(row.all_metric_rank)


def _rho_cell(row: Row) -> str:
    """The randomisation test's mean similarity (MEASURE) of the row's maps on the two models, or `—`."""
    value = None if row.sanity is None else row.sanity.value()
    return MISSING if value is None else f"{value:.2f}"


def _rand_score_cell(row: Row) -> str:
    """The row's primary score on the randomised model, or `—`."""
    return format_number(None if row.sanity is None else row.sanity.score)


def _hidden_header(board: Board) -> str:
    """The hidden-copy column's header: the primary metric on the board's copies (the board ranks by it)."""
    label = board.labels.get(board.primary_metric, board.primary_metric)
    return f"{label} hidden {ARROWS.get(board.direction, '')} {PRIMARY_MARK}".replace("  ", " ")


def hidden_cell(row: Row) -> str:
    """A row's primary metric on the hidden copies, mean ± half-width of its 95 % interval (`—` without one)."""
    h = row.hidden
    if h is None or h.mean is None:
        return MISSING
    if h.ci is None:
        return format_number(h.mean)
    half = max(h.mean - h.ci[0], h.ci[1] - h.mean)
    return f"{format_number(h.mean)} ± {format_number(half)}"


def _public_rank_cell(row: Row) -> str:
    return MISSING if row.public_rank is None else str(row.public_rank)


def hidden_notes(board: Board) -> list[str]:
    """The hidden copies' lines under a board (`leaderboard.hidden`): the round, the copies and what they rely on,
    the floor, the verdict on the published model, and why each listed method is not ranked."""
    h = board.hidden
    if h is None:
        return [x for x in (board.no_hidden, f"data priors: the best method {board.prior}" if board.prior else "") if x]
    label = board.labels.get(board.primary_metric, board.primary_metric)
    sizes = sorted(set(h.instances))
    n = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]}"
    lines = [f"hidden copies (round {h.round}): {len(h.draws)} cop{'y' if len(h.draws) == 1 else 'ies'} × {n} "
             f"instances, drawn from a secret after the code was submitted ({h.construction}); ranks and the verdict "
             f"come from the {label} there (paired bootstrap over instances and copies); a method is ranked only if "
             f"it beats the best {h.floor_kind} ({h.floor or 'none run'}) there"]
    if board.public_verdict is not None:
        lines.append(f"on the published model: {board.public_verdict.text}")
    if board.prior:
        lines.append(f"data priors: the best method {board.prior}")
    for r in board.rows:
        if r.role == "method" and r.hidden is not None and r.hidden.reason and not r.blind:
            lines.append(f"not ranked: {r.submission} — {r.hidden.reason}")
    # a missing floor is the verdict's reason already: said once
    return lines + [n for n in h.notes if n.removeprefix("unranked: ") != board.verdict.reason]


def _rand_headers(board: Board) -> list[str]:
    label = board.labels.get(board.primary_metric, board.primary_metric)
    return ["ρ rand.", f"{label} rand. {ARROWS.get(board.direction, '')}".strip()]


def board_notes(board: Board) -> list[str]:
    """The lines every format prints under a board: its verdict, the metrics' agreement with the
    primary metric (Kendall τ-b over the methods; ⚠ where τ < 0.5), the gate, why intervals are missing."""
    lines = [f"verdict: {board.verdict.text}"]
    if board.unranked:
        lines.append(board.unranked)
    if board.submitted_prior:
        lines.append(board.submitted_prior)
    if board.agreement:
        parts = []
        for m, (tau, _why) in board.agreement.items():
            label = board.labels.get(m, m)
            parts.append(f"{label} {'undefined' if tau is None else f'{tau:+.2f}'}"
                         + (" ⚠" if tau is not None and tau < AGREEMENT_FLOOR else ""))
        reasons = sorted({why for tau, why in board.agreement.values() if tau is None and why})
        line = f"agreement with {board.labels.get(board.primary_metric, board.primary_metric)} (Kendall τ): " + \
            ", ".join(parts)
        if reasons:
            line += f" (undefined: {'; '.join(reasons)})"
        if board.disagreeing:
            disagreeing = ", ".join(board.labels.get(m, m) for m in board.disagreeing)
            line += f" — ⚠ the primary metric disagrees with {disagreeing}; read the all-metric ranking beside it"
        lines.append(line)
    if board.gate:
        g = board.gate
        rule = " and ".join(x for x in (f"at least {g['min']:.4g}" if g.get("min") is not None else "",
                                        "better than the best control" if g.get("beat_controls") else "") if x)
        lines.append(f"gate: methods whose {board.labels.get(g['metric'], g['metric'])} is not {rule} rank after "
                     "those whose is")
    if board.intervals:
        lines.append(f"rank intervals: undefined — {board.intervals}")
    if board.model_note:
        lines.append(board.model_note)
    return lines + hidden_notes(board) + randomisation_notes(board)


def randomisation_notes(board: Board) -> list[str]:
    """The randomisation test's lines under a board: the rule and who passed, one line per method found
    model-blind, and one line per reason the test was not run (naming the rows it holds for)."""
    rows = [r for r in board.rows if r.sanity is not None]
    if not rows:
        return []
    not_run: dict[str, list[Row]] = {}
    for r in rows:
        if r.sanity is not None and r.sanity.status == "not run":
            not_run.setdefault(r.sanity.reason, []).append(r)
    if len(not_run) == 1 and len(next(iter(not_run.values()))) == len(rows):  # one reason for every row
        return [f"randomisation test not run: {next(iter(not_run))}"]
    sensitive = [r.submission for r in rows if r.sanity and r.sanity.status == "model-sensitive"]
    blind = [r for r in rows if r.sanity and r.sanity.blind and r.role != "control"]
    controls = [r.submission for r in rows if r.sanity and r.sanity.blind and r.role == "control"]
    lines = [f"randomisation test (Adebayo et al. 2018): each row's maps also on a randomised copy of the model; "
             f"model-blind when the mean {MEASURE_WORDS} ≥ {board.threshold:g}"
             + (" or its score there is not worse beyond the noise" if board.score_rule else
                " (on this track the similarity alone: its score is the maps' stability, which a randomised "
                "model's maps have as well)")
             + f" — model-sensitive: {', '.join(sensitive) or 'none'}"
             + (f"; model-blind controls: {', '.join(controls)}" if controls else "")]
    for r in blind:
        assert r.sanity is not None
        lines.append(f"model-blind: {r.submission} — {r.sanity.reason}; shown with the controls, never ranked and "
                     "never a floor (floors come from built-ins)")
    for reason, held in not_run.items():
        unranked = [r.submission for r in held if _held(r)]
        lines.append(f"randomisation test not run: {', '.join(r.submission for r in held)} — {reason}"
                     + (f"; not ranked: {', '.join(unranked)}" if unranked else ""))
    return lines


def _held(row: Row) -> bool:
    """A method not ranked because its own randomised-model run could not be compared (leaderboard.randomisation)."""
    return row.role == "method" and row.sanity is not None and row.sanity.unranked


def _marked(row: Row) -> str:
    """The submission name with its integrity marker, its role, a gate note and the randomisation test's mark
    in parentheses."""
    test = "randomisation test not run; not ranked" if _held(row) else ""
    notes = [m for m in (MARKERS.get(row.status), row.marker, "below the gate: " + row.below_gate
                         if row.below_gate else "", test) if m]
    return f"{row.submission} ({'; '.join(notes)})" if notes else row.submission


def _board_table(board: Board) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of a board, shared by Markdown and HTML."""
    hidden = board.hidden is not None
    header = ["rank", "rank 95%", "submission", "version", *([_hidden_header(board), "public rank"] if hidden else []),
              *(_header(board, n) for n in board.metric_names)]
    fits = any(r.fit_s is not None for r in board.rows)
    header += ["all-metric", *_rand_headers(board), "failed", "time (s)"] + (["fit (s)"] if fits else [])
    body = []
    for row in board.rows:
        body.append(
            [
                _rank_cell(row),
                _interval_cell(row),
                _marked(row),
                row.version,
                *([hidden_cell(row), _public_rank_cell(row)] if hidden else []),
                *(format_cell(row.metrics.get(n)) for n in board.metric_names),
                _all_metric_cell(row),
                _rho_cell(row),
                _rand_score_cell(row),
                _failures(row.n_failed, row.n_instances),
                _wall(row.wall_time_s),
                *([MISSING if row.fit_s is None else _wall(row.fit_s)] if fits else []),
            ]
        )
    return header, body


_SUMMARY_HEADER = ["rank", "rank 95%", "submission", "BT θ ↑", "wins", "boards"]


def _summary_body(rows) -> list[list[str]]:
    out = []
    for r in rows:
        iv = MISSING if r.interval is None else (str(r.interval[0]) if r.interval[0] == r.interval[1]
                                                 else f"{r.interval[0]}–{r.interval[1]}")
        wins = MISSING if not math.isfinite(r.wins) else f"{100 * r.wins:.0f}%"
        rank = MISSING if r.rank is None else f"{r.rank}{TIED if r.tied else ''}"
        name = r.submission + (f" (listed, not ranked: {r.unranked})" if r.unranked else "")
        out.append([rank, iv, name, f"{r.strength:+.2f}", wins, f"{r.entered}/{r.total}"])
    return out


def _summary_tables(boards: list[Board]) -> list[tuple[str, list[str], list[list[str]], list[str]]]:
    """(title, header, body, notes) of each track summary and of the overall ranking."""
    out = []
    for s in track_summary(boards):
        notes = [f"counted {s.counted} of {s.n_boards} board(s): those that discriminate"]
        notes += [f"left out {w}" for w in s.left_out]
        out.append((f"track {s.track}: Bradley–Terry over its boards that discriminate", _SUMMARY_HEADER,
                    _summary_body(s.rows), notes))
    for kind, modality in overall_scopes(boards):
        rows = overall(boards, kind, modality)
        if rows:
            what = f"{modality} {kind}s" if modality else f"{kind}s"
            out.append((f"overall, {what}: Bradley–Terry over every track's {modality + ' ' if modality else ''}"
                        "boards that discriminate (each track weighs the same)", _SUMMARY_HEADER, _summary_body(rows),
                        [f"{what} only (explainers and oracles never meet on a board"
                         + ("; the boards differ by modality, so each has its own table" if modality else "")
                         + "); submissions are compared only on boards both entered and in the board resamples "
                         "holding both; one that skipped a board it could enter, entered fewer than "
                         f"{MIN_SHARE:.0%} of the boards, or met no other, is listed, not ranked; controls, "
                         "references and model-blind methods are not ranked"]))
    return out


# --------------------------------------------------------------------------------------------------
# rich


@dataclass
class _Col:
    """One terminal column: its header and cells (a cell may hold several lines, never wrapped)."""

    header: str
    cells: list[Text]
    justify: JustifyMethod = "right"
    bold: bool = False
    required: bool = False
    narrow: "_Col | None" = None  # a narrower variant (a metric's mean without its CI)
    name: str = ""  # how the "not shown" note names it

    @property
    def width(self) -> int:
        lines = [len(self.header)] + [len(line) for c in self.cells for line in c.plain.split("\n")]
        return max(lines)


def _table(cols: list[_Col]) -> Table:
    # a rule under the header, no vertical lines; columns two spaces apart (one padding + the separator)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for c in cols:
        table.add_column(Text(c.header), justify=c.justify, style="bold" if c.bold else None,
                         no_wrap=True, min_width=c.width)
    for i in range(len(cols[0].cells) if cols else 0):
        table.add_row(*(c.cells[i] for c in cols))
    return table


def _width(cols: list[_Col]) -> int:
    """Characters the table of `cols` (see `_table`) needs: the widths and two spaces between columns."""
    return sum(c.width for c in cols) + 2 * len(cols) - 2 if cols else 0


def _fit(cols: list[_Col], width: int, priority: list[int]) -> tuple[list[_Col], list[str], bool]:
    """The columns to show at `width`, in their order; the names left out; whether metrics lost their CI.

    Everything when it fits. Otherwise the required columns (their narrow variant if still too wide),
    then the optional ones in `priority` order, each as its narrow variant, when it still fits."""
    if _width(cols) <= width:
        return cols, [], False
    chosen: dict[int, _Col] = {i: c for i, c in enumerate(cols) if c.required}
    narrowed = False
    if _width(list(chosen.values())) > width:
        chosen = {i: (c.narrow or c) for i, c in chosen.items()}
        narrowed = True
    for i in priority:
        if i in chosen:
            continue
        cand = cols[i].narrow or cols[i]
        narrowed = narrowed or cand is not cols[i]
        if _width([*chosen.values(), cand]) <= width:
            chosen[i] = cand
    dropped = [cols[i].name or cols[i].header for i in priority if i not in chosen]
    return [chosen[i] for i in sorted(chosen)], dropped, narrowed


def _fit_note(width: int, dropped: list[str], narrowed: bool) -> Text | None:
    if not dropped and not narrowed:
        return None
    parts = []
    if dropped:
        parts.append("not shown: " + ", ".join(dropped))
    if narrowed:
        parts.append("metrics without a ± show the mean only")
    return Text(f"at {width} columns: " + "; ".join(parts) + " (a wider terminal or --format md/csv shows all)",
                style="dim")


def _name_cell(row: Row) -> Text:
    text = Text(row.submission)
    marker = MARKERS.get(row.status)
    if marker:
        text.append("\n" + marker, style="bold red" if row.status == "modified" else "yellow")
    if row.marker:
        text.append("\n" + row.marker, style="dim")
    if row.below_gate:
        text.append("\nbelow the gate", style="yellow")
    if _held(row):
        text.append("\nrandomisation test not run", style="yellow")
    return text


def _board_columns(board: Board) -> tuple[list[_Col], list[int]]:
    rows = board.rows
    cols = [
        _Col("rank", [Text(_rank_cell(r, UNRANKED)) for r in rows], required=True),
        _Col("95%", [Text(_interval_cell(r)) for r in rows], required=True, name="rank 95%"),
        _Col("submission", [_name_cell(r) for r in rows], justify="left", required=True),
        _Col("version", [Text(r.version) for r in rows], justify="left"),
    ]
    hidden = board.hidden is not None
    if hidden:
        cols.append(_Col(_hidden_header(board), [Text(hidden_cell(r)) for r in rows], bold=True, required=True,
                         name="hidden"))
        cols.append(_Col("public rank", [Text(_public_rank_cell(r)) for r in rows], name="public rank"))
    first = len(cols)
    for n in board.metric_names:
        header = _header(board, n)
        primary = n == board.primary_metric and not hidden
        narrow = _Col(header, [Text(format_mean(r.metrics.get(n))) for r in rows], bold=primary,
                      required=primary, name=board.labels.get(n, n))
        cols.append(_Col(header, [Text(format_cell(r.metrics.get(n))) for r in rows], bold=primary,
                         required=primary, narrow=narrow, name=board.labels.get(n, n)))
    cols.append(_Col("all", [Text(_all_metric_cell(r)) for r in rows], name="all-metric rank"))
    rho_h, score_h = _rand_headers(board)
    cols.append(_Col(rho_h, [Text(_rho_cell(r)) for r in rows], name="ρ rand."))
    cols.append(_Col(score_h, [Text(_rand_score_cell(r)) for r in rows], name=score_h))
    cols.append(_Col("failed", [Text(_failures(r.n_failed, r.n_instances)) for r in rows]))
    cols.append(_Col("time (s)", [Text(_wall(r.wall_time_s)) for r in rows]))
    metric_idx = list(range(first, first + len(board.metric_names)))
    all_metric, failed, time_, version = len(cols) - 5, len(cols) - 2, len(cols) - 1, 3
    rho, rand_score = len(cols) - 4, len(cols) - 3
    priority = [failed, *([5] if hidden else []), *metric_idx[:3], all_metric, *metric_idx[3:], rho, rand_score,
                time_, version]
    if any(r.fit_s is not None for r in rows):  # oracles: the fit (TOKI's keyword identification) beside
        cols.append(_Col("fit (s)", [Text(MISSING if r.fit_s is None else _wall(r.fit_s)) for r in rows]))
        priority.insert(priority.index(time_) + 1, len(cols) - 1)
    return cols, priority


class _BoardView:
    """A board as rich renders it at the console's width: title, table, what it ranks, warnings."""

    def __init__(self, board: Board) -> None:
        self.board = board

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        board = self.board
        width = options.max_width
        yield Text(board.title, style="bold")
        if board.rows:
            cols, priority = _board_columns(board)
            shown, dropped, narrowed = _fit(cols, width, priority)
            yield _table(shown)
            note = _fit_note(width, dropped, narrowed)
            if note is not None:
                yield note
        yield Text(_board_caption(board), style="dim")
        for line in board_notes(board):
            style = "bold" if line.startswith("verdict: discriminates") else \
                "yellow" if line.startswith("verdict") or "⚠" in line else "dim"
            yield Text(line, style=style)
        for w in board.warnings:
            yield Text(f"warning: {w}", style="yellow")
        yield Text("")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


class _SummaryView:
    """A summary table (rank, submission, BT θ required; the rest while it fits)."""

    def __init__(self, title: str, header: list[str], body: list[list[str]], notes: Sequence[str] = ()) -> None:
        self.title, self.header, self.body, self.notes = title, header, body, list(notes)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cols = [
            _Col(h, [Text(row[i]) for row in self.body], justify="left" if i == 2 else "right", required=i < 4)
            for i, h in enumerate(self.header)
        ]
        shown, dropped, narrowed = _fit(cols, options.max_width, list(range(4, len(cols))))
        yield Text(self.title, style="bold")
        if self.body:
            yield _table(shown)
        else:
            yield Text("no board of this track discriminates: nothing to rank", style="yellow")
        note = _fit_note(options.max_width, dropped, narrowed)
        if note is not None:
            yield note
        for line in self.notes:
            yield Text(line, style="dim")
        yield Text("")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


def rich_renderables(boards: Iterable[Board], summaries: bool = True) -> list[RenderableType]:
    """Rich renderables (each board with its warnings, then the summaries) for `Console.print`;
    each lays itself out for the width it is printed at."""
    boards = list(boards)
    out: list[RenderableType] = [_BoardView(b) for b in boards]
    if summaries and boards:
        out += [_SummaryView(title, header, body, notes) for title, header, body, notes in _summary_tables(boards)]
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
    """A Markdown page: each board (rows marked "(unverified)" / "(MODIFIED)", unranked rank `—`),
    its revision and ranked coverage, its warnings, then the summaries."""
    boards = list(boards)
    lines = ["# xaibench leaderboard", "", _md(LEGEND), ""]
    for board in boards:
        header, body = _board_table(board)
        lines += [f"## {_md(board.title)}", "", f"_{_md(_board_caption(board))}_", ""]
        lines += _md_table(header, body, {0, 1} | set(range(4, len(header))))
        lines.append("")
        for line in board_notes(board):
            lines.append(f"_{_md(line)}_")
            lines.append("")
        for w in board.warnings:
            lines.append(f"> **warning:** {_md(w)}")
            lines.append("")
    if summaries and boards:
        for title, header, body, notes in _summary_tables(boards):
            lines += [f"## {_md(title)}", ""]
            lines += _md_table(header, body, set(range(len(header))) - {2}) if body else ["_nothing to rank_"]
            lines.append("")
            for line in notes:
                lines += [f"_{_md(line)}_", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------------------------------
# CSV


def _metric_names_all(boards: list[Board]) -> list[str]:
    return sorted({n for b in boards for n in b.metric_names})


def csv_columns(boards: Iterable[Board]) -> list[str]:
    """The CSV header: board fields with the board's primary metric and its direction ("higher" / "lower"
    is better), the submission's fields, the integrity `status`, four columns per metric, counts, the
    row's coverage (`complete`: true/false/empty when unrecorded; `ids_sha256`), then the board's verdict
    with its paired difference (best method − best control on the primary metric, oriented so + is
    better) and that difference's 95 % interval, and why the board is unranked ("" = ranked).

    Intervals: `rank_ci_*` and `verdict_ci_*` are *paired* (the board's shared bootstrap draws); the
    metrics' `_ci_*` are each Result's own, *unpaired* (two rows' metric intervals may overlap while
    their paired rank difference is clear)."""
    cols = ["track", "resource", "revision", "model", "primary_metric", "primary_direction", "rank", "tied",
            "rank_ci_low", "rank_ci_high", "role", "submission", "version", "status"]
    for n in _metric_names_all(list(boards)):
        cols += [f"{n}_mean", f"{n}_ci_low", f"{n}_ci_high", f"{n}_excluded"]
    return cols + ["all_metric_rank", "below_gate", "n_instances", "n_failed", "wall_time_s", "complete",
                   "ids_sha256", "board_verdict", "verdict_diff", "verdict_ci_low", "verdict_ci_high",
                   "board_unranked", *RANDOMISATION_COLUMNS, *HIDDEN_COLUMNS]


# the hidden copies per row (leaderboard.hidden): the round and copies, the primary metric there with its paired 95 %
# interval, the rank from it (`rank` is that rank on such a board) beside the rank on the published model, the
# difference from the board's floor (oriented, + = better) and its interval, the floor, and why the row is not ranked
HIDDEN_COLUMNS = ["hidden_round", "hidden_draws", "hidden_mean", "hidden_ci_low", "hidden_ci_high", "public_rank",
                  "hidden_floor", "hidden_diff", "hidden_diff_ci_low", "hidden_diff_ci_high", "hidden_reason",
                  "public_verdict"]


def hidden_cells(board: Board, row: Row) -> list[str]:
    h, r = board.hidden, row.hidden
    if h is None or r is None:
        return [""] * len(HIDDEN_COLUMNS)
    ci, dci = r.ci or (None, None), r.diff_ci or (None, None)
    return [h.round, str(r.draws), _num(r.mean), _num(ci[0]), _num(ci[1]),
            "" if row.public_rank is None else str(row.public_rank), h.floor or "", _num(r.diff), _num(dci[0]),
            _num(dci[1]), r.reason, board.public_verdict.status if board.public_verdict else ""]


# the randomisation test per row (leaderboard.randomisation): its verdict and reason, whether it keeps the row
# from being ranked, each similarity's mean and paired 95 % interval, the instances compared, the primary metric
# on the randomised model, the paired difference trained − randomised (oriented, + = trained better) and its
# interval, the randomised copy's seed and the board's threshold
RANDOMISATION_COLUMNS = ["randomisation", "randomisation_reason", "randomisation_unranked",
                         *(f"rand_{m}{part}" for m in ("rho", "rho_abs", "ssim")
                           for part in ("", "_ci_low", "_ci_high")),
                         "rand_compared", "rand_primary_mean", "rand_diff", "rand_diff_ci_low", "rand_diff_ci_high",
                         "rand_seed", "rand_threshold"]
_MEASURE_COLUMNS = {"rho": "spearman-signed", "rho_abs": "spearman", "ssim": "ssim"}


def _randomisation_cells(board: Board, row: Row) -> list[str]:
    t = row.sanity
    if t is None:
        return [""] * len(RANDOMISATION_COLUMNS)
    cells = [t.status, t.reason, str(t.unranked).lower()]
    for measure in _MEASURE_COLUMNS.values():
        got = (t.similarity or {}).get(measure)
        ci = got[1] if got and got[1] else (None, None)
        cells += [_num(got[0] if got else None), _num(ci[0]), _num(ci[1])]
    dci = t.diff_ci or (None, None)
    return cells + [str(t.compared), _num(t.score), _num(t.diff), _num(dci[0]), _num(dci[1]),
                    "" if t.seed is None else str(t.seed), _num(board.threshold)]


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


SUMMARY_CSV_COLUMNS = ["scope", "kind", "rank", "tied", "rank_ci_low", "rank_ci_high", "submission", "strength",
                       "wins", "entered", "total", "boards_counted", "boards", "unranked"]


def to_summary_csv(boards: Iterable[Board]) -> str:
    """The Bradley–Terry summaries as CSV (`xaibench leaderboard --format csv --summary`): one row per
    (scope, submission) — `scope` is `track:<name>` (kind: the track's submissions) or `overall` (one
    ranking per `kind`, explainer or oracle; `overall:<modality>` where that kind's boards differ by
    modality). `rank` / `tied` are empty for a row listed, not ranked
    (`unranked` says why); `rank_ci_*` is the rank's 95 % interval over the board resamples that hold the
    row (paired: the boards' shared draws); `strength` the log Bradley–Terry strength, `wins` the share of
    pairwise comparisons won on shared boards; `entered` / `total` the counted boards (those that
    discriminate) it entered / there are; `boards_counted` / `boards` the scope's counted / all boards."""
    boards = list(boards)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(SUMMARY_CSV_COLUMNS)

    def rows(scope: str, kind: str, summary: list, counted: int, total: int) -> None:
        for r in summary:
            iv = r.interval if r.rank is not None else None
            writer.writerow([scope, kind, "" if r.rank is None else str(r.rank),
                             "" if r.rank is None else str(r.tied).lower(), "" if iv is None else str(iv[0]),
                             "" if iv is None else str(iv[1]), r.submission, _num(r.strength),
                             _num(r.wins) if math.isfinite(r.wins) else "", str(r.entered), str(r.total),
                             str(counted), str(total), r.unranked])

    for s in track_summary(boards):
        kinds = sorted({row.kind for b in boards if b.track == s.track for row in b.rows if row.role == "method"})
        rows(f"track:{s.track}", "/".join(kinds), s.rows, s.counted, s.n_boards)
    for kind, modality in overall_scopes(boards):
        holding = [b for b in boards if any(r.kind == kind and r.role == "method" for r in b.rows)
                   and modality in (None, b.modality)]
        rows("overall" + (f":{modality}" if modality else ""), kind, overall(boards, kind, modality),
             sum(b.verdict.discriminates for b in holding), len(holding))
    return buf.getvalue()


def to_csv(boards: Iterable[Board]) -> str:
    """One row per (board, submission); metrics at full precision; empty cells where undefined.

    `rank` and `tied` are empty for an unranked row (a control, a reference, a modified file, a board
    without a floor); `status` is signed / unsigned / modified. The
    boards' warnings are not part of the CSV (the CLI prints them to stderr)."""
    boards = list(boards)
    names = _metric_names_all(boards)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(csv_columns(boards))
    for b in boards:
        for row in b.rows:
            iv = row.interval if row.rank is not None else None
            cells: list[str] = [b.track, b.resource, b.revision, b.model, b.primary_metric, b.direction,
                                "" if row.rank is None else str(row.rank),
                                "" if row.rank is None else str(row.tied).lower(), "" if iv is None else str(iv[0]),
                                "" if iv is None else str(iv[1]), row.role, row.submission, row.version, row.status]
            for n in names:
                m = row.metrics.get(n)
                if m is None:
                    cells += ["", "", "", ""]
                    continue
                lo, hi = m.ci95 if m.ci95 is not None else (None, None)
                cells += [_num(m.mean), _num(lo), _num(hi), str(m.excluded)]
            cells += ["" if row.all_metric_rank is None else str(row.all_metric_rank), row.below_gate]
            cells += [str(row.n_instances), str(row.n_failed), _num(row.wall_time_s)]
            complete = row.coverage.get("complete")
            ci = b.verdict.ci or (None, None)
            cells += ["" if complete is None else str(bool(complete)).lower(), row.coverage.get("ids_sha256") or "",
                      b.verdict.status, _num(b.verdict.diff), _num(ci[0]), _num(ci[1]), b.unranked]
            writer.writerow(cells + _randomisation_cells(b, row) + hidden_cells(b, row))
    return buf.getvalue()
