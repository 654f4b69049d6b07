"""`xaibench list` as listings that stay readable in an 80-column terminal.

A listing is a title, a header and one line of short, aligned fields per entry (the name first, never
cut), with the long fields of the entry (a description, a path, a list of configs) stacked underneath,
indented and wrapped to the terminal width. Rich tables squeeze long columns instead: at 80 columns
names were cut to "attent…" and descriptions wrapped one word per line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

__all__ = ["Entry", "listing", "resources_listing", "submissions_listing", "tracks_listing"]

GAP = 2  # spaces between fields
INDENT = 4  # of the stacked lines


@dataclass
class Entry:
    """One entry: `fields` on its line (the first is the name), `notes` stacked underneath as
    (label, text); an empty label makes a dim line of text (a description)."""

    fields: Sequence[str]
    notes: Sequence[tuple[str, str]] = field(default_factory=tuple)


def listing(title: str, header: Sequence[str], entries: Sequence[Entry], empty: str = "(none)") -> RenderableType:
    """The renderable of a listing (see the module docstring)."""
    widths = [max([cell_len(h)] + [cell_len(e.fields[i]) for e in entries]) for i, h in enumerate(header)]

    def line(cells: Sequence[str], styles: Sequence[str]) -> Text:
        text = Text(no_wrap=False)
        for i, (cell, style) in enumerate(zip(cells, styles)):
            last = i == len(cells) - 1
            text.append(cell, style=style)
            if not last:
                text.append(" " * (widths[i] - cell_len(cell) + GAP))
        return text

    parts: list[RenderableType] = [Text(title, style="bold"),
                                   line(header, ["bold underline"] * len(header))]
    if not entries:
        parts.append(Text(empty, style="dim"))
    for e in entries:
        parts.append(line(e.fields, ["bold cyan"] + [""] * (len(e.fields) - 1)))
        labelled = [(k, v) for k, v in e.notes if k]
        if labelled:
            grid = Table.grid(padding=(0, 1))
            grid.add_column(style="dim", no_wrap=True)
            grid.add_column(overflow="fold")  # a path longer than the line folds onto the next, never "…"
            for k, v in labelled:
                grid.add_row(k, v)
            parts.append(Padding(grid, (0, 0, 0, INDENT)))
        for k, v in e.notes:
            if not k:
                parts.append(Padding(Text(v, style="dim"), (0, 0, 0, INDENT)))
    parts.append(Text(""))
    return Group(*parts)


def tracks_listing(tracks: dict, metrics) -> RenderableType:
    """Tracks: name, modality, models; metrics (primary first), configs and description stacked."""
    entries = []
    for name, trk in tracks.items():
        mets = ", ".join(f"{metrics.get(m).label} {metrics.get(m).arrow}" for m in trk.metrics)
        entries.append(Entry([name, trk.modality, ", ".join(trk.models)],
                             [("metrics", mets), ("configs", ", ".join(trk.configs())), ("", trk.description)]))
    return listing("Tracks", ["track", "modality", "models"], entries)


def resources_listing(resources: Sequence) -> RenderableType:
    """Resources found locally or in the mirror: name, version, revision, trained model; splits (rows)
    and folder stacked."""
    entries = []
    for res in resources:
        splits = ", ".join(f"{s}={i['rows']}" for s, i in sorted(res.meta["splits"].items()))
        has_model = "yes" if (res.model_dir() / "config.json").exists() else "-"
        entries.append(Entry([res.name, res.version, res.revision, has_model],
                             [("splits", splits), ("path", str(res.root))]))
    return listing("Resources (local and mirror)", ["resource", "version", "revision", "model"], entries,
                   empty="(none yet: run `xaibench generate aixi`)")


def submissions_listing(submissions: dict) -> RenderableType:
    """Submissions: name, kind, version, modalities, what they need, determinism; description stacked."""
    entries = []
    for name, sub in sorted(submissions.items()):
        needs = [n for n, flag in (("gradients", sub.needs_gradients), ("segments", sub.needs_segments)) if flag]
        entries.append(Entry([name, sub.kind, sub.version, ",".join(sub.modalities), ",".join(needs) or "-",
                              "yes" if sub.deterministic else "no"], [("", sub.description)]))
    return listing("Submissions", ["submission", "kind", "version", "modalities", "needs", "deterministic"],
                   entries)
