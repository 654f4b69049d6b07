"""The site's pages as HTML strings: one per board (`board_page`), one per submission (`submission_page`),
the overview (`index_page`) and the boards on one self-contained page (`single_page`, what `xaibench
leaderboard --format html` prints), with the sortable table and the cell, link and citation helpers they
share. Pure functions of the boards, results and facts handed to them: nothing here reads or writes a
file (`leaderboard.site.build` does)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from leaderboard.site.assets import e, page
from leaderboard.site.facts import (SubmissionInfo, control_warning, metric_doc, model_quality, other_tracks,
                                    quality_floor, track_reference)
from leaderboard.site.figures import FIGURES, Figure

if TYPE_CHECKING:
    from benchmark.store.results import MetricSummary, Result
    from leaderboard.boards import Board, Row
    from leaderboard.summaries import SummaryRow, TrackSummary

__all__ = ["ARROWS", "BoardEntry", "board_file", "board_page", "cite", "index_page", "single_page", "slug",
           "submission_file", "submission_page"]

ARROWS = {"lower": "↓", "higher": "↑"}
NA_NOTE = ("† n/a: undefined for every instance of that submission ({}: e.g. a constant map has no "
           "correlation), so it has no mean there and is not ranked on it.")

# a table cell: (html, sort value or None, td class); a row: (tr class, cells)
Cell = tuple[str, str | None, str]
TableRow = tuple[str, list[Cell]]
# resource name -> (local copy of its card relative to the site or None, Hub address)
Cards = dict[str, tuple[str | None, str]]


@dataclass
class BoardEntry:
    """A submission's row on one board, as its submission page lists it."""

    board: Board
    row: Row
    result: Result | None  # the Result behind the row (None when it could not be matched)
    figures: list[Figure]  # the board's pictures of this submission


# --------------------------------------------------------------------------------------------------
# addresses, cells, tables


def slug(*parts: str) -> str:
    """A file-name-safe name: the parts joined by "__", every character but letters, digits and -_. → "_"."""
    return "__".join("".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in p) for p in parts)


def board_file(b: Board) -> str:
    """The board's page, relative to the site root: `board/<track>__<family>__<config>__<model>.html`."""
    return f"board/{slug(b.track, b.resource.replace('/', '__'), b.model)}.html"


def submission_file(name: str) -> str:
    """The submission's page, relative to the site root: `submission/<name>.html`."""
    return f"submission/{slug(name)}.html"


def _submission_link(name: str, up: str | None) -> str:
    """The submission's name linking its page (`up`: the way to the site root), or the name alone (None:
    a page without submission pages, `single_page`)."""
    return e(name) if up is None else f"<a href=\"{up}{submission_file(name)}\">{e(name)}</a>"


def cite(reference: str) -> str:
    """A reference as HTML: escaped, its links made clickable."""
    return re.sub(r"https?://[^\s,;()]+", lambda m: f'<a href="{m.group(0)}">{m.group(0)}</a>', e(reference))


def _fmt_range(r: tuple[float, float] | None) -> str:
    if not r:
        return "not recorded"

    def one(x: float) -> str:
        return "∞" if x == math.inf else "−∞" if x == -math.inf else f"{x:g}"

    return f"[{one(r[0])}, {one(r[1])}]"


def _cell(m: MetricSummary | None) -> tuple[str, str]:
    """(text, sort value) of a metric cell; undefined → "n/a" and sorts last."""
    from leaderboard.render import format_cell

    if m is None:
        return "not scored", ""
    if m.mean is None:
        return "n/a", ""
    # exclusions have their own column (and the cell's title): not repeated in the cell
    return format_cell(dataclasses.replace(m, excluded=0)), repr(float(m.mean))


def _table(headers: list[tuple[str, str]], rows: list[TableRow], sortable: bool = True, cls: str = "") -> str:
    """headers: (text, title); rows: (tr class, cells (html, sort value or None, td class))."""
    th = "".join(f"<th title=\"{e(t)}\" class=\"{'l' if h in ('submission', 'board') else ''}\">{h}</th>"
                 for h, t in headers)
    body = []
    for trc, cells in rows:
        tds = "".join(
            f"<td class=\"{c}\"" + ("" if v is None else f" data-v=\"{e(v)}\"") + f">{h}</td>" for h, v, c in cells
        )
        body.append(f"<tr class=\"{trc}\">{tds}</tr>")
    klass = " ".join(x for x in ("sortable" if sortable else "", cls) if x)
    return (f"<div class=\"scroll\"><table class=\"{klass}\"><thead><tr>{th}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _figure_html(f: Figure, up: str) -> str:
    if f.path:
        return (f"<figure><img src=\"{up}{e(f.path)}\" alt=\"{e(f.title)}\" loading=\"lazy\">"
                f"<figcaption>{e(f.title)} — {e(f.note)}</figcaption></figure>")
    return f"<figure><div class=\"missing\">{e(f.title)}: {e(f.note)}</div></figure>"


# --------------------------------------------------------------------------------------------------
# a board's page, section by section


def board_page(b: Board, results: dict[str, Result], figs: list[Figure], cards: Cards, built: str) -> str:
    """The board's page: first one line that says who wins and how sure (`_headline`), then the sortable
    ranking, then the verdict, notes and warnings folded into one section, the model under test, the
    resource, one paragraph per metric (with its reference) and the pictures. `results`: submission ->
    the Result behind its row."""
    any_result = next(iter(results.values()), None)
    model = dict(any_result.model) if any_result is not None else {"name": b.model}
    warnings = _warnings(b)
    parts = [f"<h1>{e(b.track)} · {e(b.resource)} · model <code>{e(b.model)}</code></h1>"]
    parts += _headline(b, warnings)
    parts += _ranking_section(b)
    parts += _verdict_section(b, warnings)
    parts += _model_section(b, model)
    parts += _resource_section(b, cards)
    parts += _metrics_section(b)
    parts += _pictures_section(b, figs)
    return page(b.title, "".join(parts), 1, built)


def _headline(b: Board, warnings: list[tuple[str, bool]], anchor: str = "") -> list[str]:
    """One line before anything else: the winner, its primary score with its 95 % interval, and the
    verdict (does it beat the best control beyond the noise); a pointer to the notes when there are
    warnings. A board without ranks says so, with the reason. `anchor`: appended to the element ids
    (a page holding several boards)."""
    label = f"{b.labels.get(b.primary_metric, b.primary_metric)} {ARROWS.get(b.direction, '')}".strip()
    first = [r for r in b.rows if r.rank == 1]
    ok = b.verdict.discriminates
    if b.unranked or not first:
        lead = f"<b>No winner:</b> {e(b.unranked or 'nothing on this board is ranked')}"
    else:
        best = next((r for r in first if r.submission == b.verdict.best), first[0])
        m = best.metrics.get(b.primary_metric)
        score = ("" if m is None or m.mean is None else f" — {e(label)} {m.mean:.4g}"
                 + ("" if m.ci95 is None else f" [{m.ci95[0]:.4g}, {m.ci95[1]:.4g}]"))
        h = best.hidden
        if b.hidden is not None and h is not None and h.mean is not None:  # ranked by the hidden copies
            score = (f" — {e(label)} on the hidden copies {h.mean:.4g}"
                     + ("" if h.ci is None else f" [{h.ci[0]:.4g}, {h.ci[1]:.4g}]")
                     + ("" if m is None or m.mean is None else f", on the published model {m.mean:.4g}"))
        ties = [r.submission for r in first if r is not best]
        tied = f" (tied with {e(', '.join(ties))})" if ties else ""
        lead = f"<b>Winner: {e(best.submission)}</b>{tied}{score}"
    v = b.verdict
    if b.hidden is not None:
        how = e(v.text)
    elif v.diff is not None and v.ci is not None and v.control:
        how = (f"{e(v.status)}: {e(v.best or '')} vs the control {e(v.control)}, Δ {v.diff:+.4g} "
               f"[{v.ci[0]:+.4g}, {v.ci[1]:+.4g}] (paired)")
    else:
        how = e(v.status)
    n_warn = len(warnings)
    more = (f" · <a href=\"#notes{anchor}\">⚠ {n_warn} warning{'s' if n_warn != 1 else ''} below the table</a>"
            if n_warn else "")
    return [f"<p class=\"verdict {'ok' if ok else 'no'}\" id=\"headline{anchor}\">{lead} · {how}{more}</p>"]


def _verdict_section(b: Board, warnings: list[tuple[str, bool]], anchor: str = "") -> list[str]:
    """Below the table, folded into one section: the verdict with its reason, why the board is unranked,
    the metrics' agreement, the gate, and the warnings (each once). `anchor`: as for `_headline`."""
    from leaderboard.render import board_notes

    parts = [f"<details id=\"notes{anchor}\" class=\"notes\"" + (" open" if any(strong for _, strong in warnings)
                                                                  else "") + ">",
             f"<summary>Verdict and notes{f' (⚠ {len(warnings)})' if warnings else ''}</summary>",
             f"<p id=\"verdict{anchor}\"><b>{e(b.verdict.status.capitalize())}.</b> {e(b.verdict.reason)}</p>"]
    if b.unranked:
        parts.append(f"<p id=\"unranked{anchor}\"><b>Not ranked.</b> {e(b.unranked)}</p>")
    for line in (x for x in board_notes(b)[1:] if x != b.unranked):
        ident = f' id="agreement{anchor}"' if line.startswith("agreement") else ""
        parts.append(f"<p class=\"mute\"{ident}>{e(line)}</p>")
    parts += [f"<p class=\"warn{' strong' if strong else ''}\" role=\"alert\">⚠ {e(text)}</p>"
              for text, strong in warnings]
    return parts + ["</details>"]


def _warnings(b: Board) -> list[tuple[str, bool]]:
    """What the reader must know before trusting a number, as (text, strong). A model below its track's
    quality floor: the ranking's own warning (leaderboard.selection, from the Result's `model.quality`) says
    it, once; the site adds none of its own."""
    ranked_rows = [r for r in b.rows if r.rank is not None]
    warns: list[tuple[str, bool]] = []  # (text, strong)
    cw = control_warning(b)
    if cw:
        warns.append((cw, True))
    if len(ranked_rows) == 1:
        warns.append(("Only one submission is ranked on this board: its rank says nothing about how it compares.",
                      False))
    if not ranked_rows and not b.unranked:
        warns.append(("No result on this board can be ranked (see the notes).", True))
    hidden = [b.labels.get(n, n) for n in b.metric_names if n not in _shown_metrics(b)]
    if hidden:
        warns.append((f"Not drawn: {', '.join(hidden)} — undefined for every instance of every submission here; "
                      "it ranks nothing.", False))
    warns += [(w, False) for w in b.warnings]
    return warns


def _shown_metrics(b: Board) -> list[str]:
    """The metric columns drawn: the primary, and every other metric with a value on at least one row (a
    column undefined for every row is named once in the notes instead)."""
    def defined(name: str) -> bool:
        return any((m := r.metrics.get(name)) is not None and m.mean is not None for r in b.rows)

    return [n for n in b.metric_names if n == b.primary_metric or defined(n)]


def _ranking_headers(b: Board) -> list[tuple[str, str]]:
    """The ranking table's columns: rank, its interval, submission, one per metric (primary ★), the
    all-metric order, exclusions, failures and time."""
    headers = [("#", "1 + the methods significantly better (paired bootstrap, 95 %); = tied: the data cannot "
                     "separate them; ctrl / ref: a control / a reference, never ranked"),
               ("rank 95%", "the 95 % bootstrap interval of the rank"), ("submission", "")]
    if b.hidden is not None:
        primary = e(b.labels.get(b.primary_metric, b.primary_metric))
        headers += [(f"{primary} hidden {ARROWS.get(b.direction, '')} ★", "the primary metric on the board's hidden "
                     "copies (models drawn from a secret after the code was submitted): the board ranks by it; mean ± "
                     "95% CI half-width (paired bootstrap over instances and copies)"),
                    ("public rank", "the rank on the published model, which a submission can recognise")]
    for name in _shown_metrics(b):
        d = b.directions.get(name, "")
        ranked_by = name == b.primary_metric and b.hidden is None
        label = f"{e(b.labels.get(name, name))} {ARROWS.get(d, '')}" + (" ★" if ranked_by else "")
        headers.append((label, f"{name}: {d} is better; mean ± 95% CI half-width"
                        + ("; the primary metric" if name == b.primary_metric else "")))
    label = e(b.labels.get(b.primary_metric, b.primary_metric))
    headers += [("all-metric", "the methods' order by mean normalised rank over every metric (LATEC-style)"),
                ("randomisation", "the randomisation test (Adebayo et al. 2018): model-sensitive, model-blind (shown "
                 "with the controls) or not run, with the reason"),
                ("ρ rand.", "mean Spearman ρ of each instance's signed maps on the trained and on a randomised model "
                 "(hover the verdict for ρ of |map| and SSIM with their 95 % intervals)"),
                (f"{label} rand. {ARROWS.get(b.direction, '')}", "the primary metric on the randomised model, "
                 "against the same ground truth"),
                ("excl.", "instances where a metric is undefined (most on any metric)"),
                ("failed", "failed / total instances"), ("time s", "explanation wall time, seconds")]
    return headers


def _ranking_row(b: Board, row: Row, notes: dict[str, set[str]], up: str | None = "../") -> TableRow:
    """One row of the ranking table; the label of a metric with an undefined (n/a) cell is added to
    `notes` (footnote text → labels), so the table has one footnote per distinct note."""
    cls = " ".join(x for x in (row.role if row.role != "method" else "control" if row.blind else "",
                               "" if row.rank is not None else "unranked", "gated" if row.below_gate else "") if x)
    if row.rank is not None:
        rank_html, rank_v = e(f"{row.rank}{'=' if row.tied else ''}"), str(row.rank)
    else:
        from leaderboard.render import ROLE_MARKS

        rank_html, rank_v = e(ROLE_MARKS.get(row.marker, "—")), ""
    iv = row.interval if row.rank is not None else None
    iv_text = "—" if iv is None else (str(iv[0]) if iv[0] == iv[1] else f"{iv[0]}–{iv[1]}")
    name_html = (_submission_link(row.submission, up)
                 + ("" if row.status == "signed" else " <span class=\"verified\">verified</span>"
                    if row.status == "verified" else f" <span class=\"bad\">({e(row.status)})</span>")
                 + (f" <span class=\"role\">{e(row.marker)}</span>" if row.marker else "")
                 + (f" <span class=\"warn-inline\" title=\"{e(row.below_gate)}\">below the gate</span>"
                    if row.below_gate else ""))
    cells: list[Cell] = [
        (rank_html, rank_v, ""), (e(iv_text), "" if iv is None else str(iv[0]), ""), (name_html, None, "name l")]
    if b.hidden is not None:
        from leaderboard.render import hidden_cell

        h = row.hidden
        cells += [(f"<span title=\"{e(h.reason if h else '')}\">{e(hidden_cell(row))}</span>",
                   "" if h is None or h.mean is None else repr(h.mean), ""),
                  (e("—" if row.public_rank is None else str(row.public_rank)),
                   "" if row.public_rank is None else str(row.public_rank), "")]
    for name in _shown_metrics(b):
        m = row.metrics.get(name)
        text, v = _cell(m)
        if m is not None and m.mean is None:  # say why where the number would be
            why = f"undefined for all {m.excluded} instances" if m.excluded else "no value"
            text_html = f"<span title=\"{e(why)}\">n/a<sup>†</sup></span>"
            notes.setdefault(NA_NOTE, set()).add(b.labels.get(name, name))
            cells.append((text_html, v, ""))
        elif m is not None and m.excluded:
            cells.append((f"<span title=\"{m.excluded} instance(s) excluded: the metric is undefined there\">"
                          f"{e(text)}</span>", v, ""))
        else:
            cells.append((e(text), v, ""))
    excl = max((m.excluded for m in row.metrics.values()), default=0)
    allm = "—" if row.all_metric_rank is None else str(row.all_metric_rank)
    t = row.sanity
    rho = None if t is None else t.value()
    test = "—" if t is None else t.status
    detail = "" if t is None else t.reason + "".join(
        f"; {label} {v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        for label, key in (("ρ signed", "spearman-signed"), ("ρ |map|", "spearman"), ("SSIM", "ssim"))
        for v, ci in [(t.similarity or {}).get(key, (None, None))] if v is not None)
    cells += [(e(allm), "" if row.all_metric is None else repr(row.all_metric), ""),
              (f"<span title=\"{e(detail)}\">{e(test)}</span>", test, ""),
              (e("—" if rho is None else f"{rho:.2f}"), "" if rho is None else repr(rho), ""),
              (e("—" if t is None or t.score is None else f"{t.score:.4g}"),
               "" if t is None or t.score is None else repr(t.score), ""),
              (e(excl), str(excl), ""), (f"{row.n_failed}/{row.n_instances}", str(row.n_failed), ""),
              (f"{row.wall_time_s:.1f}", repr(row.wall_time_s), "")]
    return cls, cells


def _ranking_section(b: Board, up: str | None = "../", heading: str = "h2") -> list[str]:
    """The sortable ranking table, what it is ranked by and how, and its footnotes (`up`: see
    `_submission_link`; `heading`: the title's element)."""
    notes: dict[str, set[str]] = {}
    rows = [_ranking_row(b, row, notes, up) for row in b.rows]
    boot = (f"Ranks and their 95 % intervals come from a paired bootstrap ({b.n_boot:,} draws of the instances, "
            "the same draws for every row): a method's rank is 1 + the methods significantly better than it, so "
            "rows the data cannot separate share a rank (marked =)." if b.n_boot else
            f"No rank intervals: {b.intervals}." if b.intervals else "")
    parts = [f"<{heading}>Ranking</{heading}>"]
    where = (f"on the board's {len(b.hidden.draws)} hidden cop{'y' if len(b.hidden.draws) == 1 else 'ies'} (models "
             "drawn from a secret after the code was submitted; the score on the published model beside it), a method "
             f"ranked only if it beats the best {b.hidden.floor_kind} there" if b.hidden is not None
             else f"over {b.coverage_text}")
    parts.append(f"<p class=\"mute\">Ranked by {e(b.labels.get(b.primary_metric, b.primary_metric))} "
                 f"({e(b.direction)} is better) {e(where)}. {e(boot)} Controls (floors) and "
                 "references (ceilings) stand where their score puts them and are never ranked; so do methods whose "
                 "maps do not depend on the model (model-blind: the randomisation test, in the notes). Click a "
                 "column header to sort.</p>")
    parts.append(_table(_ranking_headers(b), rows, cls="board"))
    parts += [f"<p class=\"mute footnote\">{e(n.format(', '.join(sorted(labels))))}</p>"
              for n, labels in sorted(notes.items())]
    return parts


def _model_section(b: Board, model: dict[str, Any]) -> list[str]:
    """The model under test: architecture, task, weights hash and its quality against the track's floor."""
    parts = ["<h2>Model under test</h2><dl class=\"facts\">"]
    parts.append(f"<dt>model</dt><dd><code>{e(b.model)}</code>" +
                 (f" ({e(model.get('architecture'))})" if model.get("architecture") else "") + "</dd>")
    parts.append(f"<dt>task</dt><dd>{e(model.get('task', 'not recorded'))}</dd>")
    parts.append(f"<dt>weights hash</dt><dd><code>{e(model.get('hash', 'not recorded'))}</code></dd>")
    quality = model_quality(model)
    if quality:
        low = quality_floor(model).get("meets_floor") is False
        for name, value, threshold in quality:
            floor = "" if threshold is None else f" (the track's floor {threshold:g})"
            flag = " <span class=\"bad\">below its floor</span>" if threshold is not None and low else ""
            parts.append(f"<dt>{e(name)}</dt><dd>{value:.4f}{floor}{flag}</dd>")
    elif b.model == "function":
        parts.append("<dt>quality</dt><dd>exact: the model is the function that defines the ground truth</dd>")
    else:
        parts.append("<dt>quality</dt><dd>not recorded by the results</dd>")
    parts.append("</dl>")
    return parts


def _resource_section(b: Board, cards: Cards) -> list[str]:
    """The resource: name, revision, version, split, instances and its card (a local copy and the Hub)."""
    local, hub = cards.get(b.resource, (None, ""))
    parts = ["<h2>Resource</h2><dl class=\"facts\">"]
    parts.append(f"<dt>resource</dt><dd>{e(b.resource)}</dd><dt>revision</dt><dd><code>{e(b.revision)}</code></dd>")
    parts.append(f"<dt>version</dt><dd>{e(b.resource_version or 'not recorded')}</dd>"
                 f"<dt>split</dt><dd>{e(b.split)}</dd>")
    parts.append(f"<dt>instances</dt><dd>{e(b.coverage_text)}</dd>")
    card = (f"<a href=\"../{e(local)}\">card (README, this revision)</a> · " if local else
            "<span class=\"mute\">card not available here at this revision</span> · ")
    parts.append(f"<dt>card</dt><dd>{card}<a href=\"{e(hub)}\">on the Hub</a></dd></dl>")
    return parts


def _metrics_section(b: Board) -> list[str]:
    """One paragraph per metric, from the registry: label, description, range, direction and reference."""
    parts = ["<h2>Metrics</h2>"]
    for name in b.metric_names:
        doc = metric_doc(name)
        d = b.directions.get(name) or doc.direction or "?"
        text = doc.description or "No description recorded."
        ref = f" Reference: {cite(doc.reference)}." if doc.reference else ""
        parts.append(f"<p><b>{e(doc.label or name)}</b> <code>{e(name)}</code>"
                     f"{' (primary)' if name == b.primary_metric else ''} — {e(text)}. Range "
                     f"{e(_fmt_range(doc.range))}; {e(d)} is better {ARROWS.get(d, '')}.{ref}</p>")
    return parts


def _pictures_section(b: Board, figs: list[Figure]) -> list[str]:
    """The board's gallery, or why it has none."""
    if not figs:
        why = ("nothing is drawn for this track yet" if b.track not in FIGURES else "no ranked result to draw")
        return ["<h2>Pictures</h2>", f"<p class=\"mute\">No pictures: {e(why)}.</p>"]
    return ["<h2>Pictures</h2>", "<div class=\"gallery\">" + "".join(_figure_html(f, "../") for f in figs) + "</div>"]


# --------------------------------------------------------------------------------------------------
# a submission's page


def submission_page(name: str, entries: list[BoardEntry], info: SubmissionInfo | None, role: str,
                    built: str) -> str:
    """The submission's page: description and reference, version, hash, parameters and capabilities,
    its results on every board, the reasons of its failures and its pictures. `info`: its installed copy
    (None: not installed here); `role`: "control" / "reference" or ""."""
    first = next((x.result for x in entries if x.result is not None), None)
    sub = first.submission if first is not None else {"name": name}
    parts = [f"<h1>{e(name)}{f' <span class=mute>({e(role)})</span>' if role else ''}</h1>"]
    if info and info.description:
        parts.append(f"<p>{e(info.description)}</p>")
    if info and info.reference:
        parts.append(f"<p class=\"mute\">Reference: {cite(info.reference)}</p>")
    changed = first is not None and info is not None and bool(info.hash) and info.hash != sub.get("hash")
    parts += _submission_facts(sub, info, changed)
    parts.append("<h2>Results</h2>")
    parts.append(_submission_results(entries))
    parts += _submission_failures(entries)
    figs = [f for x in entries for f in x.figures]
    if figs:
        parts.append("<h2>Pictures</h2><div class=\"gallery\">" + "".join(_figure_html(f, "../") for f in figs)
                     + "</div>")
    return page(name, "".join(parts), 1, built)


def _submission_facts(sub: dict[str, Any], info: SubmissionInfo | None, changed: bool) -> list[str]:
    """Version, code hash, kind, parameters (as the Result records them) and capabilities (as the installed
    copy declares them); `changed`: the installed code is not the code the results were computed with."""
    parts = ["<dl class=\"facts\">"]
    parts.append(f"<dt>version</dt><dd>{e(sub.get('version', '?'))}</dd>")
    parts.append(f"<dt>code hash</dt><dd><code>{e(sub.get('hash', '?'))}</code></dd>")
    parts.append(f"<dt>kind</dt><dd>{e(sub.get('kind', '?'))}</dd>")
    params = sub.get("parameters") or {}
    ptext = ", ".join(f"{k} = {json.dumps(v, default=str)}" for k, v in sorted(params.items())) or "none"
    parts.append(f"<dt>parameters</dt><dd><code>{e(ptext)}</code></dd>")
    if info:
        caps = (f"modalities: {', '.join(info.modalities)}; "
                f"gradients: {'needed' if info.needs_gradients else 'not needed'}; "
                f"segments: {'needed' if info.needs_segments else 'not needed'}; "
                f"{'deterministic' if info.deterministic else 'stochastic (seeded)'}")
        parts.append(f"<dt>capabilities</dt><dd>{e(caps)}</dd>")
        if changed:
            parts.append("<dt>note</dt><dd class=\"bad\">the installed code differs from the code these results "
                         "were computed with (hash)</dd>")
    else:
        parts.append("<dt>capabilities</dt><dd class=\"mute\">not known: the submission is not installed where "
                     "this site was built</dd>")
    parts.append("</dl>")
    return parts


def _submission_results(entries: list[BoardEntry]) -> str:
    """The submission's rank, primary value, failures and time on every board it entered."""
    headers = [("board", ""), ("rank", ""), ("primary metric", "mean ± 95% CI half-width"),
               ("randomisation test", "model-sensitive, model-blind or not run (Adebayo et al. 2018), with the reason"),
               ("failed", ""), ("time s", "")]
    rows: list[TableRow] = []
    for x in entries:
        b, row = x.board, x.row
        text, v = _cell(row.metrics.get(b.primary_metric))
        n_ranked = sum(1 for r in b.rows if r.rank is not None)
        rank = (f"{row.rank}{'=' if row.tied else ''} of {n_ranked}" if row.rank is not None
                else f"{row.marker}, not ranked" if row.marker else "not ranked")
        label = f"{b.labels.get(b.primary_metric, b.primary_metric)} {ARROWS.get(b.direction, '')}"
        rows.append(("", [(f"<a href=\"../{board_file(b)}\">{e(b.title)}</a>", b.title, "l"),
                          (e(rank), str(row.rank) if row.rank is not None else "", ""),
                          (f"{e(label)} {e(text)}", v, ""),
                          (e("—" if row.sanity is None else f"{row.sanity.status}: {row.sanity.reason}"),
                           "" if row.sanity is None else row.sanity.status, "l"),
                          (f"{row.n_failed}/{row.n_instances}", str(row.n_failed), ""),
                          (f"{row.wall_time_s:.1f}", repr(row.wall_time_s), "")]))
    return _table(headers, rows)


def _submission_failures(entries: list[BoardEntry]) -> list[str]:
    """Per board, the ten commonest reasons its instances failed (or that none did)."""
    parts = ["<h2>Failures</h2>"]
    for x in entries:
        r = x.result
        if r is None or not r.failures:
            continue
        reasons: dict[str, int] = defaultdict(int)
        for f in r.failures:
            reasons[f.reason] += 1
        items = "".join(f"<li>{n} × {e(reason)}</li>"
                        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:10])
        parts.append(f"<h3>{e(x.board.title)}: {r.n_failed} of {r.n_instances}</h3><ul>{items}</ul>")
    if len(parts) == 1:
        parts.append("<p class=\"mute\">No failed instance.</p>")
    return parts


# --------------------------------------------------------------------------------------------------
# the overview


def _summary_table(rows: list[SummaryRow], up: str | None = "") -> str:
    """A Bradley–Terry summary (a track's or the overall one) as a sortable table (`up`: see
    `_submission_link`)."""
    headers = [("#", "1 + the submissions stronger in ≥ 97.5 % of the board resamples; = tied"),
               ("rank 95%", "95 % interval of the rank over the resamples of the boards that hold it "
                "(none with fewer than 2 boards)"), ("submission", ""),
               ("BT θ ↑", "log Bradley–Terry strength fitted to the pairwise results on shared boards"),
               ("wins", "share of its pairwise comparisons on shared boards it won (a tie counts half)"),
               ("boards", "counted boards entered / counted boards")]
    out: list[TableRow] = []
    for r in rows:
        iv = "—" if r.interval is None else (str(r.interval[0]) if r.interval[0] == r.interval[1]
                                             else f"{r.interval[0]}–{r.interval[1]}")
        wins = "—" if not math.isfinite(r.wins) else f"{100 * r.wins:.0f}%"
        rank = "—" if r.rank is None else f"{r.rank}{'=' if r.tied else ''}"
        listed = f" <span class=\"mute\">(listed, not ranked: {e(r.unranked)})</span>" if r.unranked else ""
        out.append(("", [(e(rank), str(r.rank if r.rank is not None else 10**6), ""), (e(iv), None, ""),
                         (f"{_submission_link(r.submission, up)}{listed}", None, "name l"),
                         (f"{r.strength:+.2f}", repr(r.strength), ""), (e(wins), repr(r.wins), ""),
                         (f"{r.entered}/{r.total}", str(r.entered), "")]))
    return _table(headers, out)


_INTRO = ("<h1>xaibench leaderboard</h1>"
          "<p>Explainers and oracles scored against ground truth that holds by construction, from people, or "
          "against an adversary. One board per track, resource and model under test. Each board ranks its "
          "methods with paired-bootstrap rank intervals (rows the data cannot separate share a rank), shows its "
          "controls (floors) and references (ceilings) as marked rows, and says whether it "
          "<em>discriminates</em>: whether its best method beats its best control beyond the noise. Per track "
          "and overall, submissions are compared only on the boards both entered, and only on boards that "
          "discriminate, by a Bradley–Terry model of their pairwise results.</p>")


@dataclass
class _Links:
    """Where an overview points: each board (`board`: its page, or its section on a single page) and the
    submissions (`up`, see `_submission_link`)."""

    board: Callable[[Board], str]
    up: str | None


def index_page(tables: list[Board], summaries: list[TrackSummary],
               overall_rows: list[tuple[str | None, list[SummaryRow]]],
               problems: list[str], built: str, git: str, metric_page: str | None = None) -> str:
    """The overview: what the boards are, the build, unreadable files, the overall ranking, one section per
    track (its reference, its boards with their verdicts and its Bradley–Terry summary), the registered
    tracks without results and every resource revision the boards were built from."""
    build = (f"<p class=\"mute\">Built {e(built)} from xaibench revision <code>{e(git)}</code>; {_counts(tables)} "
             "Only results whose signature holds on the building machine are ranked.</p>")
    parts = _overview(tables, summaries, overall_rows, problems, build, _Links(board_file, ""))
    if metric_page:
        parts.insert(2, f"<p>Which ground-truth-free metric (deletion curves, faithfulness correlation, ERASER's "
                        f"comprehensiveness…) agrees with the ground truth? See the <a href=\"{e(metric_page)}\">"
                        "metric board</a>.</p>")
    for track, description, ref in other_tracks({b.track for b in tables}):
        parts.append(f"<h2>Track {e(track)}</h2><p class=\"mute\">{e(description)} — no results yet: "
                     f"<code>xaibench evaluate &lt;submission&gt; --track {e(track)}</code>."
                     + (f" Reference: {cite(ref)}" if ref else "") + "</p>")
    return page("leaderboard", "".join(parts + _revisions(tables)), 0, built)


def single_page(tables: list[Board], summaries: list[TrackSummary],
                overall_rows: list[tuple[str | None, list[SummaryRow]]]) -> str:
    """The site on one self-contained page (`xaibench leaderboard --format html`): the overview, then per
    board its headline, ranking and verdict with notes — the board pages' own sections, linked in the page
    (the site adds the submission pages, the model, the resource, the metric notes and the pictures). No
    build date, so the same boards give the same bytes. It publishes only results this machine verified:
    a row whose status is not "signed" or "verified" raises `ValueError` (build the boards with
    `boards(results, verified_only=True)`, which names every left-out result in the board's warnings)."""
    bad = [f"{b.title}: {r.submission} ({r.status})" for b in tables for r in b.rows
           if r.status not in ("signed", "verified")]
    if bad:
        raise ValueError("the static board publishes signed results only, but got " + "; ".join(bad)
                         + "; build the boards with leaderboard.boards.boards(results, verified_only=True)")
    anchor = {b.key: "-" + slug(b.track, b.resource.replace("/", "__"), b.model) for b in tables}
    note = (f"<p class=\"mute\">{_counts(tables)} Only results whose signature holds on this machine are ranked; "
            "<code>xaibench site</code> builds the same boards as a site with a page per board and per submission, "
            "the model under test, the resource and pictures.</p>")
    parts = _overview(tables, summaries, overall_rows, [], note, _Links(lambda b: f"#board{anchor[b.key]}", None))
    for b in tables:
        warnings = _warnings(b)
        parts += [f"<section id=\"board{anchor[b.key]}\"><h2>Board {e(b.title)}</h2>",
                  *_headline(b, warnings, anchor[b.key]), *_ranking_section(b, None, "h3"),
                  *_verdict_section(b, warnings, anchor[b.key]), "</section>"]
    return page("leaderboard", "".join(parts + _revisions(tables)), 0, "", standalone=True)


def _counts(tables: list[Board]) -> str:
    return f"{len(tables)} board(s), {sum(1 for b in tables if b.verdict.discriminates)} of them discriminate."


def _overview(tables: list[Board], summaries: list[TrackSummary],
              overall_rows: list[tuple[str | None, list[SummaryRow]]], problems: list[str], note: str,
              links: _Links) -> list[str]:
    """What the boards are, `note` (the build), unreadable files, the overall ranking of the explainers (one
    table per modality where the boards differ by modality: `overall_rows` holds (modality or None, rows)) and
    one section per track with results."""
    parts = [_INTRO, note]
    if problems:
        items = "".join(f"<li>{e(p)}</li>" for p in problems)
        parts.append(f"<div class=\"warn\">⚠ {len(problems)} result file(s) could not be read and are not shown:"
                     f"<ul>{items}</ul></div>")
    if not tables:
        parts.append("<p class=\"warn strong\">No results yet: run <code>xaibench evaluate</code> (or "
                     "<code>make demo</code>) first.</p>")
    shown = [(m, rows) for m, rows in overall_rows if rows]
    for modality, rows in shown:
        what = f"{modality} explainers" if modality else "explainers"
        parts.append(f"<h2>Overall: {e(what)}</h2><p class=\"mute\">Bradley–Terry over every track's "
                     f"{e(modality + ' ') if modality else ''}boards that discriminate and hold explainers; each track "
                     "weighs the same. Oracles (trust) never meet an explainer on a board and are ranked in their "
                     "track" + ("; the boards differ by modality, so each modality has its own table" if modality
                                else "") + ". A submission that skipped a board it could enter (by its declared "
                     "capabilities), entered fewer than half the boards, or met no other, is listed, not ranked; "
                     "the boards column says how many counted boards it entered. Methods found model-blind by the "
                     "randomisation test are not ranked.</p>")
        parts.append(_summary_table(rows, links.up))
    if not shown and tables:
        parts.append("<h2>Overall</h2><p class=\"warn\">⚠ No board discriminates yet, so nothing is ranked "
                     "across boards.</p>")
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in tables:
        per_track[b.track].append(b)
    summary_of = {s.track: s for s in summaries}
    for track in sorted(per_track):
        parts += _track_section(track, per_track[track], summary_of.get(track), links)
    return parts


def _revisions(tables: list[Board]) -> list[str]:
    """Every resource revision the boards were built from."""
    revs = sorted({(b.resource, b.revision, b.resource_version) for b in tables})
    if not revs:
        return []
    return ["<h2>Resource revisions</h2><ul>" + "".join(
        f"<li>{e(n)} <code>{e(r)}</code>{(' (' + e(v) + ')') if v else ''}</li>" for n, r, v in revs) + "</ul>"]


def _track_section(track: str, boards: list[Board], summary: TrackSummary | None, links: _Links) -> list[str]:
    """A track on the overview: its reference (the paper it follows), its boards (verdict, revision, how many
    ranked, who is first, ⚠ where a board warns) and its Bradley–Terry summary with the boards left out."""
    parts = [f"<h2>Track {e(track)}</h2>"]
    ref = track_reference(track)
    if ref:
        parts.append(f"<p class=\"mute\">Reference: {cite(ref)}</p>")
    parts.append("<ul class=\"boards\">")
    for b in boards:
        ranked = [r for r in b.rows if r.rank is not None]
        best = ", ".join(r.submission for r in ranked if r.rank == 1) if ranked else "nothing ranked"
        flags = " ⚠" if (b.warnings or control_warning(b) or b.disagreeing) else ""
        verdict = ("discriminates" if b.verdict.discriminates else b.verdict.status)
        parts.append(f"<li><a href=\"{links.board(b)}\">{e(b.resource)} · {e(b.model)}</a>{flags} "
                     f"<span class=\"verdict-tag {'ok' if b.verdict.discriminates else 'no'}\">{e(verdict)}</span> "
                     f"<span class=\"mute\">revision <code>{e(b.revision[:12])}</code>, {len(ranked)} ranked, "
                     f"first: {e(best)}</span></li>")
    parts.append("</ul>")
    if summary and summary.rows:
        parts.append(f"<p class=\"mute\">Bradley–Terry over the {summary.counted} of {summary.n_boards} board(s) "
                     "that discriminate.</p>")
        parts.append(_summary_table(summary.rows, links.up))
    if summary and summary.left_out:
        items = "".join(f"<li>{e(w)}</li>" for w in summary.left_out)
        parts.append(f"<details><summary>{len(summary.left_out)} board(s) not counted</summary>"
                     f"<ul>{items}</ul></details>")
    return parts


def metric_board_page(rows: list[Any], overall: list[Any], picture: str | None, built: str) -> str:
    """The metric board (`leaderboard.metric_board`): its picture, then one table per board and the
    per-track and overall summary; every number with its interval and the cells it rests on."""
    from leaderboard.metric_board import RANDOM_METRIC, interval, meta_text

    parts = ["<h1>Metric board: which ground-truth-free metric agrees with the ground truth?</h1>",
             "<p>For each ground-truth board, every ground-truth-free metric ranks the board's explainers; "
             "τ<sub>b</sub> is Kendall's τ-b between that ranking and the ground truth's, with a 95 % paired "
             "bootstrap interval over instances; ρ̄ is the mean per-instance Spearman correlation across explainers. "
             f"Controls: <code>{RANDOM_METRIC}</code> (chance) and each metric on the randomised model (Adebayo et "
             "al. 2018). <em>Agrees</em>: τ<sub>b</sub>'s interval lies above 0; <em>model-blind</em>: it agrees as "
             "well on the randomised model, or reads no model. MetaQuantus (Hedström et al. 2023), where it was run "
             "on the board's model: its MC score, noise resilience and adversarial reactivity, each in [0, 1], "
             "higher better. See <code>docs/metric-board.md</code>.</p>"]
    if picture:
        parts.append(f"<figure><img src=\"{e(picture)}\" alt=\"metrics × boards, coloured by Kendall τ-b\" "
                     "style=\"max-width:100%\"></figure>")
    headers = [("metric", "str"), ("better", "str"), ("τ_b [95 %]", "num"), ("ρ̄ [95 %]", "num"),
               ("Δτ vs randomised", "num"), ("verdict", "str"), ("explainers × instances", "str"),
               ("failed cells", "str"), ("MetaQuantus MC (NR / AR)", "num")]
    for board in dict.fromkeys(r.board for r in rows):
        body = []
        for r in (x for x in rows if x.board == board):
            cells = [r.metric + ("" if r.role == "metric" else " (control)"), r.direction,
                     interval(r.tau, r.tau_ci), interval(r.rho, r.rho_ci),
                     interval(r.vs_randomised, r.vs_randomised_ci),
                     r.verdict + (" (model-blind)" if r.model_blind else "") + (f" — {r.why}" if r.why else ""),
                     f"{len(r.explainers)} × {r.n_instances}",
                     ", ".join(f"{k} {v}" for k, v in sorted(r.failures.items())) or "0", meta_text(r.meta)]
            body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
        head = "".join(f"<th>{e(h)}</th>" for h, _t in headers)
        parts.append(f"<h2>{e(board)}</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    if overall:
        summary = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in (
            o.scope, o.metric, interval(o.tau, o.tau_ci), o.verdict, f"{o.agrees_on} / {o.boards}",
            f"{o.disagrees_on} / {o.boards}")) + "</tr>" for o in overall)
        parts.append("<h2>Per track and overall</h2><p class=\"mute\">Mean τ<sub>b</sub> over the boards of the "
                     "scope; its interval is the mean of the boards' bootstrap draws.</p><table><thead><tr>"
                     "<th>scope</th><th>metric</th><th>mean τ_b [95 %]</th><th>verdict</th><th>agrees on</th>"
                     "<th>disagrees on</th></tr></thead><tbody>" + summary + "</tbody></table>")
    return page("metric board", "".join(parts), 0, built)
