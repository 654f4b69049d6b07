"""`xaibench site --out DIR`: the leaderboard as a static, self-contained site.

Pages (plain HTML + one CSS file + a few lines of JavaScript for sorting; opens from the file system):
* `index.html` — every track and its boards, per-track and overall mean ranks, the build date, the
  xaibench revision and every resource revision the boards were built from, and any file that could
  not be read;
* `board/<track>__<family>__<config>__<model>.html` — a sortable table (direction arrows, mean ± 95 % CI
  half-width, failures, exclusions, time), the model under test and its quality, warnings (a control
  that ranks above the median explainer, a model below its track's quality floor, every warning of the
  ranking: mixed revisions, coverage, unverifiable files, one submission only), the resource's
  revision and card, one paragraph per metric and the board's pictures (`leaderboard.site.figures`);
* `submission/<name>.html` — parameters, version, hash, capabilities, per-board results and the
  reasons of its failures.

Only results whose signature holds on this machine and whose last `xaibench verify` did not fail are
ranked (as for `xaibench leaderboard --format html`); every other file is named on its board. Nothing
in the input makes the build fail: an unreadable file, a missing resource or cache, a metric without
a value is said on the page where it matters.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import os
import re
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from leaderboard.site.figures import FIGURES, Figure, FigureContext, figures_for, register_figures

__all__ = ["SiteReport", "build_site", "is_control", "model_quality", "register_figures", "FIGURES"]

ARROWS = {"lower": "↓", "higher": "↑"}
HUB_CARD = "https://huggingface.co/datasets/{org}/xaibench-{family}"


@dataclass
class SiteReport:
    out: Path
    pages: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable result files
    seconds: float = 0.0


# --------------------------------------------------------------------------------------------------
# facts shown on the pages


def _installed() -> dict[str, Any]:
    try:
        from benchmark.submission import discover

        return discover()
    except Exception:  # a broken plugin must not stop the site
        return {}


def _submission_info(base: str, installed: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The installed submission `base` (capabilities, description, toml flags), or None."""
    try:
        import tomllib

        sub = (installed if installed is not None else _installed()).get(base)
        if sub is None:
            return None
        try:
            raw = tomllib.loads((Path(sub.path) / "submission.toml").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raw = {}
        del raw
        return {"description": sub.description, "modalities": list(sub.modalities),
                "needs_gradients": sub.needs_gradients, "needs_segments": sub.needs_segments,
                "deterministic": sub.deterministic, "default_parameters": dict(sub.parameters),
                "role": sub.role, "hash": sub.hash, "version": sub.version, "reference": sub.reference}
    except Exception:  # a broken plugin must not stop the site
        return None


def is_control(base: str, info: dict[str, Any] | None = None) -> bool:
    """A control: its `submission.toml` says `role = "control"` (`info`: `_submission_info`; looked up
    among the installed submissions when not given)."""
    info = info if info is not None else _submission_info(base)
    return bool(info and info.get("role") == "control")


def _floor(model: dict[str, Any]) -> dict[str, Any]:
    """The track's quality floor a Result's model info carries (`quality`: metric, value, floor,
    meets_floor — benchmark.tracks.aixi / rcnn), or {} when it carries none."""
    q = model.get("quality")
    return q if isinstance(q, dict) and isinstance(q.get("floor"), (int, float)) and q.get("metric") else {}


def model_quality(model: dict[str, Any]) -> list[tuple[str, float, float | None]]:
    """(name, value, floor or None) of every quality figure a Result's model info records: R² and
    accuracy from `validation` / `scores` (nested dicts searched one level deep), and the track's floor
    metric (`quality`) when it is neither. The floor is only ever the track's own, as the Result carries
    it; a figure without one has None (the site keeps no thresholds of its own)."""
    found: list[tuple[str, float, float | None]] = []
    floor = _floor(model)
    thresholds = {floor["metric"]: float(floor["floor"])} if floor else {}

    def visit(d: dict, where: str) -> None:
        for k, v in d.items():
            if isinstance(v, dict) and where == "":
                visit(v, f"{k} ")
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                continue
            low = k.lower()
            kind = "r2" if low in ("r2", "r²", "r_squared") else "accuracy" if low in ("accuracy", "acc") else None
            if kind:
                found.append((f"{where}{'R²' if kind == 'r2' else 'accuracy'}".strip(), float(v),
                              thresholds.get(kind)))

    for key in ("validation", "scores"):
        if isinstance(model.get(key), dict):
            visit(model[key], "")
    if floor and floor["metric"] not in ("r2", "accuracy") and isinstance(floor.get("value"), (int, float)):
        found.append((str(floor["metric"]), float(floor["value"]), float(floor["floor"])))
    return found


def _metric_doc(name: str) -> dict[str, Any]:
    try:
        from benchmark.metrics import METRICS

        m = METRICS.get(name)
    except Exception:
        return {"label": name, "description": "", "range": None, "direction": None, "family": "",
                "reference": ""}
    return {"label": m.label, "description": m.description, "range": m.range, "direction": m.direction,
            "family": m.family, "reference": m.reference}


def _track_reference(name: str) -> str:
    """The registered track's `reference` (the paper it follows), or '' for a track this install lacks."""
    try:
        from benchmark.tracks import get_track

        return get_track(name).reference
    except Exception:  # noqa: BLE001 - a board of a track this install does not know
        return ""


def _cite(reference: str) -> str:
    """A reference as HTML: escaped, its links made clickable."""
    return re.sub(r"https?://[^\s,;()]+", lambda m: f'<a href="{m.group(0)}">{m.group(0)}</a>', e(reference))


def _fmt_range(r: tuple[float, float] | None) -> str:
    if not r:
        return "not recorded"

    def one(x: float) -> str:
        return "∞" if x == math.inf else "−∞" if x == -math.inf else f"{x:g}"

    return f"[{one(r[0])}, {one(r[1])}]"


def _num(x: float | None) -> str:
    from leaderboard.render import format_number

    return format_number(x)


def _cell(m) -> tuple[str, str]:
    """(text, sort value) of a metric cell; undefined → "n/a" and sorts last."""
    from leaderboard.render import format_cell

    if m is None:
        return "not scored", ""
    if m.mean is None:
        return "n/a", ""
    # exclusions have their own column (and the cell's title): not repeated in the cell
    return format_cell(dataclasses.replace(m, excluded=0)), repr(float(m.mean))


# --------------------------------------------------------------------------------------------------
# HTML helpers

CSS = """
:root{--fg:#1b1f24;--mute:#5b6470;--line:#d6dae0;--bg:#fff;--warn:#8a4b00;--warnbg:#fff4e0;--bad:#a40000}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;max-width:1240px;padding:12px 16px 40px}
header.top{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:baseline;border-bottom:1px solid var(--line);
margin-bottom:12px;padding-bottom:6px}
header.top a{font-weight:600;text-decoration:none}
h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.2em;margin:1.2em 0 .4em}h3{font-size:1.05em;margin:1em 0 .3em}
.mute{color:var(--mute)}code{font-size:.9em;overflow-wrap:anywhere}h1 code{overflow-wrap:normal}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;margin:.3em 0 1em;font-variant-numeric:tabular-nums;font-size:14px}
th,td{border-bottom:1px solid var(--line);padding:4px 7px;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#f3f5f8;position:sticky;top:0}
th:first-child,td:first-child,th.l,td.l{text-align:left}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" ▲"}
table.sortable th[aria-sort=descending]::after{content:" ▼"}
.role{font-size:.75em;color:var(--mute);margin-left:4px}
.warn-inline{font-size:.75em;color:var(--warn);margin-left:4px}
tr.unranked{color:var(--mute)}tr.control,tr.reference{background:#f7f8fa}
.verdict{padding:6px 10px;margin:.5em 0;border-left:4px solid}
.verdict.ok{border-color:#2e7d32;background:#eef7ee}.verdict.no{border-color:#e08a00;background:var(--warnbg)}
.verdict-tag{font-size:.8em;padding:0 5px;border-radius:3px}.verdict-tag.ok{background:#eef7ee;color:#2e7d32}
.verdict-tag.no{background:var(--warnbg);color:var(--warn)}
.warn{background:var(--warnbg);border-left:4px solid #e08a00;padding:6px 10px;margin:.5em 0;color:var(--warn)}
.warn.strong{font-weight:600}
.bad{color:var(--bad)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.3em 0 1em}
dl.facts dt{color:var(--mute)}dl.facts dd{margin:0;word-break:break-word}
.gallery{display:flex;flex-wrap:wrap;gap:12px}
.gallery figure{margin:0;max-width:100%}.gallery img{max-width:100%;height:auto;border:1px solid var(--line)}
figcaption{font-size:.85em;color:var(--mute);max-width:420px}
.missing{border:1px dashed var(--line);padding:12px;color:var(--mute);max-width:420px}
ul.boards{padding-left:1.2em}
@media (max-width:600px){body{font-size:14px;padding:8px}th,td{padding:3px 5px}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:4px}}
"""

# Sorting only: click a header to sort by it (numbers by data-v, text otherwise; empty values last).
JS = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
        if (x === null) { x = a.cells[col].textContent; y = b.cells[col].textContent; }
        if (x === "" && y === "") return 0; if (x === "") return 1; if (y === "") return -1;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _page(title: str, body: str, depth: int, built: str) -> str:
    up = "../" * depth
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{e(title)} · xaibench</title><link rel=\"stylesheet\" href=\"{up}style.css\">"
        "<link rel=\"icon\" href=\"data:,\"></head><body>"
        f"<header class=\"top\"><a href=\"{up}index.html\">xaibench leaderboard</a>"
        f"<span class=\"mute\">built {e(built)}</span></header>\n<main>{body}</main>"
        f"<script src=\"{up}sort.js\"></script></body></html>\n"
    )


def _slug(*parts: str) -> str:
    return "__".join("".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in p) for p in parts)


def board_file(b) -> str:
    return f"board/{_slug(b.track, b.resource.replace('/', '__'), b.model)}.html"


def submission_file(name: str) -> str:
    return f"submission/{_slug(name)}.html"


def _table(headers: list[tuple[str, str]], rows: list[tuple[str, list[tuple[str, str | None, str]]]],
           sortable: bool = True, cls: str = "") -> str:
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


# --------------------------------------------------------------------------------------------------
# board analysis


def control_warning(board) -> str | None:
    """A warning when a control's primary value beats the median of the ranked methods' values (the
    rows say what they are: `Row.role`)."""
    def value(row) -> float | None:
        m = row.metrics.get(board.primary_metric)
        if m is None or m.mean is None:
            return None
        return -m.mean if board.direction == "lower" else m.mean

    methods = [v for r in board.rows if r.rank is not None and r.role == "method" and (v := value(r)) is not None]
    if not methods:
        return None
    median = statistics.median(methods)
    above = [r for r in board.rows if r.role == "control" and (v := value(r)) is not None and v > median]
    if not above:
        return None
    label = board.labels.get(board.primary_metric, board.primary_metric)
    who = ", ".join(f"{r.submission} ({label} {r.metrics[board.primary_metric].mean:.4g})" for r in above)
    head = (f"A control scores better than the median of the {len(methods)} ranked method(s) on {label}: {who}. ")
    try:
        from benchmark.tracks import get_track

        note = get_track(board.track).control_note
    except Exception:  # noqa: BLE001 - a board of a track this install does not know: the generic reason
        note = None
    return head + (note or "A control never looks at the model, so on this board the metric does not separate "
                   "explainers from chance — often because the model under test has not learnt the function the "
                   "ground truth describes (see its quality below).")


# --------------------------------------------------------------------------------------------------
# the build


def build_site(out: Path, results_dir: Path | None = None, *, sample: int = 4, figures: bool = True,
               results: Iterable | None = None, problems: Iterable[str] = ()) -> SiteReport:
    """Build the site into `out` (replaced atomically: built in a temp folder beside it, then renamed).

    `results_dir` (default `$XAIBENCH_HOME/results`) is read like `xaibench leaderboard` reads it; or
    give `results` (Result objects) directly. `sample`: instances per picture."""
    from benchmark.provenance import git_hash
    from benchmark.resources.store import data_home, swap_in_folder
    from leaderboard.rank import boards as make_boards
    from leaderboard.rank import overall, track_summary

    t0 = time.perf_counter()
    out = Path(out)
    problems = list(problems)
    if results is None:
        from leaderboard.cli import _load

        directory = Path(results_dir) if results_dir is not None else data_home() / "results"
        found, more = _load(directory)
        problems += more
        results = found
    results = list(results)
    tables = make_boards(results, verified_only=True)
    by_path = {str(r.path): r for r in results if getattr(r, "path", None)}
    built = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    report = SiteReport(out=out, problems=problems)
    try:
        for d in ("board", "submission", "img", "cards"):
            (tmp / d).mkdir()
        (tmp / "style.css").write_text(CSS, encoding="utf-8")
        (tmp / "sort.js").write_text(JS, encoding="utf-8")

        infos: dict[str, dict | None] = {}
        installed = _installed()
        roles: dict[str, str] = {}  # submission -> "control" / "reference" (the Result says so)
        chosen: dict[tuple, dict[str, Any]] = {}  # board key -> submission -> Result
        for b in tables:
            got = {}
            for row in b.rows:
                r = by_path.get(row.path) or next(
                    (x for x in results if str(x.submission["name"]) == row.submission and x.track == b.track
                     and str(x.resource["name"]) == b.resource and str(x.model["name"]) == b.model
                     and x.created == row.created), None)
                if r is not None:
                    got[row.submission] = r
                    base = str(r.submission.get("base") or row.submission)
                    if base not in infos:
                        infos[base] = _submission_info(base, installed)
                if row.role != "method":
                    roles[row.submission] = row.role
            chosen[b.key] = got

        cards = _copy_cards(tables, tmp)
        board_pages: dict[tuple, str] = {}
        sub_boards: dict[str, list[tuple[Any, Any, list[Figure]]]] = defaultdict(list)
        for b in tables:
            ranked = {n: r for n, r in chosen[b.key].items()
                      if any(row.submission == n and (row.rank is not None or row.marker) for row in b.rows)}
            figs: list[Figure] = []
            if figures and ranked:
                ctx = FigureContext(b, ranked, tmp, "img/" + _slug(b.track, b.resource.replace("/", "__"), b.model),
                                    sample=sample)
                figs = figures_for(ctx)
            report.images += [f.path for f in figs if f.path]
            rel = board_file(b)
            (tmp / rel).write_text(_board_page(b, chosen[b.key], figs, cards, built), encoding="utf-8")
            board_pages[b.key] = rel
            report.pages.append(rel)
            for row in b.rows:
                r = chosen[b.key].get(row.submission)
                sub_boards[row.submission].append((b, row, r, [f for f in figs if f.submission == row.submission]))

        for name, entries in sorted(sub_boards.items()):
            rel = submission_file(name)
            first = next((r for _, _, r, _ in entries if r is not None), None)
            base = str(first.submission.get("base") or name) if first is not None else name
            page = _submission_page(name, entries, infos.get(base), roles.get(name, ""), built)
            (tmp / rel).write_text(page, encoding="utf-8")
            report.pages.append(rel)

        index = _index_page(tables, track_summary(tables), overall(tables), problems, built, git_hash())
        (tmp / "index.html").write_text(index, encoding="utf-8")
        report.pages.insert(0, "index.html")
        (tmp / "site.json").write_text(json.dumps(
            {"built": built, "xaibench_git": git_hash(), "pages": report.pages, "images": report.images,
             "boards": [{"track": b.track, "resource": b.resource, "model": b.model, "revision": b.revision,
                         "page": board_pages[b.key]} for b in tables]}, indent=1), encoding="utf-8")

        swap_in_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    report.seconds = time.perf_counter() - t0
    return report


def _copy_cards(tables, site: Path) -> dict[str, tuple[str | None, str]]:
    """resource name -> (local copy of its card relative to the site or None, Hub address)."""
    from benchmark.resources.store import HUB_ORG_DEFAULT

    out: dict[str, tuple[str | None, str]] = {}
    org = os.environ.get("XAIBENCH_HUB_ORG", HUB_ORG_DEFAULT)
    for b in tables:
        if b.resource in out:
            continue
        family = b.resource.split("/")[0]
        hub = HUB_CARD.format(org=org, family=family)
        local = None
        try:
            from benchmark.resources import load_resource

            res = load_resource(b.resource, hub=False, revision=b.revision)
            card = Path(res.root) / "README.md"
            if card.is_file():
                local = f"cards/{_slug(family, b.resource.split('/')[-1])}.md.txt"
                shutil.copyfile(card, site / local)
        except Exception:
            local = None
        out[b.resource] = (local, hub)
    return out


def _board_page(b, results: dict[str, Any], figs: list[Figure], cards: dict[str, tuple[str | None, str]],
                built: str) -> str:
    from leaderboard.render import board_notes

    parts = [f"<h1>{e(b.track)} · {e(b.resource)} · model <code>{e(b.model)}</code></h1>"]
    ranked_rows = [r for r in b.rows if r.rank is not None]
    # the conclusion first: does this board discriminate at all, and do its metrics agree
    verdict_cls = "verdict ok" if b.verdict.discriminates else "verdict no"
    parts.append(f"<p class=\"{verdict_cls}\" id=\"verdict\"><b>{e(b.verdict.status.capitalize())}.</b> "
                 f"{e(b.verdict.reason)}</p>")
    for line in board_notes(b)[1:]:
        klass = "warn" if "⚠" in line else "mute"
        ident = ' id="agreement"' if line.startswith("agreement") else ""
        parts.append(f"<p class=\"{klass}\"{ident}>{e(line)}</p>")
    # warnings: what the reader must know before reading a number
    warns: list[tuple[str, bool]] = []
    cw = control_warning(b)
    if cw:
        warns.append((cw, True))
    any_result = next(iter(results.values()), None)
    model = dict(any_result.model) if any_result is not None else {"name": b.model}
    # a model below its track's quality floor: the ranking's own warning (leaderboard.rank, from the
    # Result's `model.quality`) says it, once; the site adds none of its own
    if len(ranked_rows) == 1:
        warns.append(("Only one submission is ranked on this board: its rank says nothing about how it compares.",
                      False))
    if not ranked_rows:
        warns.append(("No result on this board can be ranked (see the notes below).", True))
    for name in b.metric_names:
        vals = [r.metrics.get(name) for r in ranked_rows]
        if ranked_rows and all(m is None or m.mean is None for m in vals):
            warns.append((f"{b.labels.get(name, name)} is undefined for every instance of every submission here "
                          f"(shown n/a); it ranks nothing.", False))
    warns += [(w, False) for w in b.warnings]
    for text, strong in warns:
        parts.append(f"<p class=\"warn{' strong' if strong else ''}\" role=\"alert\">⚠ {e(text)}</p>")

    # the table
    headers = [("#", "1 + the methods significantly better (paired bootstrap, 95 %); = tied: the data cannot "
                     "separate them; ctrl / ref: a control / a reference, never ranked"),
               ("rank 95%", "the 95 % bootstrap interval of the rank"), ("submission", "")]
    for name in b.metric_names:
        d = b.directions.get(name, "")
        label = f"{e(b.labels.get(name, name))} {ARROWS.get(d, '')}" + (" ★" if name == b.primary_metric else "")
        headers.append((label, f"{name}: {d} is better; mean ± 95% CI half-width"
                        + ("; the primary metric" if name == b.primary_metric else "")))
    headers += [("all-metric", "the methods' order by mean normalised rank over every metric (LATEC-style)"),
                ("excl.", "instances where a metric is undefined (most on any metric)"),
                ("failed", "failed / total instances"), ("time s", "explanation wall time, seconds")]
    rows = []
    notes: set[str] = set()
    for row in b.rows:
        cls = " ".join(x for x in (row.role if row.role != "method" else "",
                                   "" if row.rank is not None else "unranked", "gated" if row.below_gate else "") if x)
        if row.rank is not None:
            rank_html, rank_v = e(f"{row.rank}{'=' if row.tied else ''}"), str(row.rank)
        else:
            rank_html, rank_v = e({"control": "ctrl", "reference": "ref"}.get(row.marker, "—")), ""
        iv = row.interval if row.rank is not None else None
        iv_text = "—" if iv is None else (str(iv[0]) if iv[0] == iv[1] else f"{iv[0]}–{iv[1]}")
        name_html = (f"<a href=\"../{submission_file(row.submission)}\">{e(row.submission)}</a>"
                     + ("" if row.status == "signed" else f" <span class=\"bad\">({e(row.status)})</span>")
                     + (f" <span class=\"role\">{e(row.marker)}</span>" if row.marker else "")
                     + (f" <span class=\"warn-inline\" title=\"{e(row.below_gate)}\">below the gate</span>"
                        if row.below_gate else ""))
        cells: list[tuple[str, str | None, str]] = [
            (rank_html, rank_v, ""), (e(iv_text), "" if iv is None else str(iv[0]), ""), (name_html, None, "name l")]
        for name in b.metric_names:
            m = row.metrics.get(name)
            text, v = _cell(m)
            if m is not None and m.mean is None:  # say why where the number would be
                why = f"undefined for all {m.excluded} instances" if m.excluded else "no value"
                text_html = f"<span title=\"{e(why)}\">n/a<sup>†</sup></span>"
                notes.add(f"† n/a: {b.labels.get(name, name)} is undefined for every instance of that submission "
                          f"(e.g. a constant map has no correlation), so it has no mean and is not ranked on it.")
                cells.append((text_html, v, ""))
            elif m is not None and m.excluded:
                cells.append((f"<span title=\"{m.excluded} instance(s) excluded: the metric is undefined there\">"
                              f"{e(text)}</span>", v, ""))
            else:
                cells.append((e(text), v, ""))
        excl = max((m.excluded for m in row.metrics.values()), default=0)
        allm = "—" if row.all_metric_rank is None else str(row.all_metric_rank)
        cells += [(e(allm), "" if row.all_metric is None else repr(row.all_metric), ""),
                  (e(excl), str(excl), ""), (f"{row.n_failed}/{row.n_instances}", str(row.n_failed), ""),
                  (f"{row.wall_time_s:.1f}", repr(row.wall_time_s), "")]
        rows.append((cls, cells))
    parts.append("<h2>Ranking</h2>")
    boot = (f"Ranks and their 95 % intervals come from a paired bootstrap ({b.n_boot:,} draws of the instances, "
            "the same draws for every row): a method's rank is 1 + the methods significantly better than it, so "
            "rows the data cannot separate share a rank (marked =)." if b.n_boot else
            f"No rank intervals: {b.intervals}." if b.intervals else "")
    parts.append(f"<p class=\"mute\">Ranked by {e(b.labels.get(b.primary_metric, b.primary_metric))} "
                 f"({e(b.direction)} is better) over {e(b.coverage_text)}. {e(boot)} Controls (floors) and "
                 "references (ceilings) stand where their score puts them and are never ranked. Click a column "
                 "header to sort.</p>")
    parts.append(_table(headers, rows, cls="board"))
    parts += [f"<p class=\"mute\">{e(n)}</p>" for n in sorted(notes)]

    # model under test
    parts.append("<h2>Model under test</h2><dl class=\"facts\">")
    parts.append(f"<dt>model</dt><dd><code>{e(b.model)}</code>" +
                 (f" ({e(model.get('architecture'))})" if model.get("architecture") else "") + "</dd>")
    parts.append(f"<dt>task</dt><dd>{e(model.get('task', 'not recorded'))}</dd>")
    parts.append(f"<dt>weights hash</dt><dd><code>{e(model.get('hash', 'not recorded'))}</code></dd>")
    quality = model_quality(model)
    if quality:
        low = _floor(model).get("meets_floor") is False
        for name, value, threshold in quality:
            floor = "" if threshold is None else f" (the track's floor {threshold:g})"
            flag = " <span class=\"bad\">below its floor</span>" if threshold is not None and low else ""
            parts.append(f"<dt>{e(name)}</dt><dd>{value:.4f}{floor}{flag}</dd>")
    elif b.model == "function":
        parts.append("<dt>quality</dt><dd>exact: the model is the function that defines the ground truth</dd>")
    else:
        parts.append("<dt>quality</dt><dd>not recorded by the results</dd>")
    parts.append("</dl>")

    # resource
    local, hub = cards.get(b.resource, (None, ""))
    parts.append("<h2>Resource</h2><dl class=\"facts\">")
    parts.append(f"<dt>resource</dt><dd>{e(b.resource)}</dd><dt>revision</dt><dd><code>{e(b.revision)}</code></dd>")
    parts.append(f"<dt>version</dt><dd>{e(b.resource_version or 'not recorded')}</dd><dt>split</dt><dd>{e(b.split)}</dd>")
    parts.append(f"<dt>instances</dt><dd>{e(b.coverage_text)}</dd>")
    card = (f"<a href=\"../{e(local)}\">card (README, this revision)</a> · " if local else
            "<span class=\"mute\">card not available here at this revision</span> · ")
    parts.append(f"<dt>card</dt><dd>{card}<a href=\"{e(hub)}\">on the Hub</a></dd></dl>")

    # metrics
    parts.append("<h2>Metrics</h2>")
    for name in b.metric_names:
        doc = _metric_doc(name)
        d = b.directions.get(name) or doc["direction"] or "?"
        text = doc["description"] or "No description recorded."
        paper = f" Reference: {_cite(doc['reference'])}." if doc["reference"] else ""
        parts.append(f"<p><b>{e(doc['label'] or name)}</b> <code>{e(name)}</code>"
                     f"{' (primary)' if name == b.primary_metric else ''} — {e(text)}. Range "
                     f"{e(_fmt_range(doc['range']))}; {e(d)} is better {ARROWS.get(d, '')}.{paper}</p>")

    # pictures
    parts.append("<h2>Pictures</h2>")
    if not figs:
        why = ("nothing is drawn for this track yet" if b.track not in FIGURES else "no ranked result to draw")
        parts.append(f"<p class=\"mute\">No pictures: {e(why)}.</p>")
    else:
        parts.append("<div class=\"gallery\">" + "".join(_figure_html(f, "../") for f in figs) + "</div>")
    return _page(b.title, "".join(parts), 1, built)


def _figure_html(f: Figure, up: str) -> str:
    if f.path:
        return (f"<figure><img src=\"{up}{e(f.path)}\" alt=\"{e(f.title)}\" loading=\"lazy\">"
                f"<figcaption>{e(f.title)} — {e(f.note)}</figcaption></figure>")
    return f"<figure><div class=\"missing\">{e(f.title)}: {e(f.note)}</div></figure>"


def _submission_page(name: str, entries, info: dict | None, role: str, built: str) -> str:
    first = next((r for _, _, r, _ in entries if r is not None), None)
    sub = first.submission if first is not None else {"name": name}
    parts = [f"<h1>{e(name)}{f' <span class=mute>({e(role)})</span>' if role else ''}</h1>"]
    if info and info.get("description"):
        parts.append(f"<p>{e(info['description'])}</p>")
    if info and info.get("reference"):
        parts.append(f"<p class=\"mute\">Reference: {_cite(info['reference'])}</p>")
    parts.append("<dl class=\"facts\">")
    parts.append(f"<dt>version</dt><dd>{e(sub.get('version', '?'))}</dd>")
    parts.append(f"<dt>code hash</dt><dd><code>{e(sub.get('hash', '?'))}</code></dd>")
    parts.append(f"<dt>kind</dt><dd>{e(sub.get('kind', '?'))}</dd>")
    params = sub.get("parameters") or {}
    ptext = ", ".join(f"{k} = {json.dumps(v, default=str)}" for k, v in sorted(params.items())) or "none"
    parts.append(f"<dt>parameters</dt><dd><code>{e(ptext)}</code></dd>")
    if info:
        caps = (f"modalities: {', '.join(info['modalities'])}; gradients: {'needed' if info['needs_gradients'] else 'not needed'}; "
                f"segments: {'needed' if info['needs_segments'] else 'not needed'}; "
                f"{'deterministic' if info['deterministic'] else 'stochastic (seeded)'}")
        parts.append(f"<dt>capabilities</dt><dd>{e(caps)}</dd>")
        if first is not None and info.get("hash") and info["hash"] != sub.get("hash"):
            parts.append("<dt>note</dt><dd class=\"bad\">the installed code differs from the code these results "
                         "were computed with (hash)</dd>")
    else:
        parts.append("<dt>capabilities</dt><dd class=\"mute\">not known: the submission is not installed where "
                     "this site was built</dd>")
    parts.append("</dl><h2>Results</h2>")
    headers = [("board", ""), ("rank", ""), ("primary metric", "mean ± 95% CI half-width"), ("failed", ""),
               ("time s", "")]
    rows = []
    for b, row, _r, _ in entries:
        text, v = _cell(row.metrics.get(b.primary_metric))
        n_ranked = sum(1 for x in b.rows if x.rank is not None)
        rank = (f"{row.rank}{'=' if row.tied else ''} of {n_ranked}" if row.rank is not None
                else f"{row.marker}, not ranked" if row.marker else "not ranked")
        label = f"{b.labels.get(b.primary_metric, b.primary_metric)} {ARROWS.get(b.direction, '')}"
        rows.append(("", [(f"<a href=\"../{board_file(b)}\">{e(b.title)}</a>", b.title, "l"),
                          (e(rank), str(row.rank) if row.rank is not None else "", ""),
                          (f"{e(label)} {e(text)}", v, ""),
                          (f"{row.n_failed}/{row.n_instances}", str(row.n_failed), ""),
                          (f"{row.wall_time_s:.1f}", repr(row.wall_time_s), "")]))
    parts.append(_table(headers, rows))
    parts.append("<h2>Failures</h2>")
    any_fail = False
    for b, _row, r, _ in entries:
        if r is None or not r.failures:
            continue
        any_fail = True
        reasons: dict[str, int] = defaultdict(int)
        for f in r.failures:
            reasons[f.reason] += 1
        items = "".join(f"<li>{n} × {e(reason)}</li>" for reason, n in sorted(reasons.items(), key=lambda x: -x[1])[:10])
        parts.append(f"<h3>{e(b.title)}: {r.n_failed} of {r.n_instances}</h3><ul>{items}</ul>")
    if not any_fail:
        parts.append("<p class=\"mute\">No failed instance.</p>")
    figs = [f for _, _, _, fs in entries for f in fs]
    if figs:
        parts.append("<h2>Pictures</h2><div class=\"gallery\">" + "".join(_figure_html(f, "../") for f in figs) + "</div>")
    return _page(name, "".join(parts), 1, built)


def _other_tracks(shown: set[str]) -> list[tuple[str, str, str]]:
    """Registered tracks without a board (name, description, reference)."""
    try:
        from benchmark.tracks.base import TRACKS, _ensure_builtin

        _ensure_builtin()
        return [(n, t.description, t.reference) for n, t in TRACKS.items() if n not in shown]
    except Exception:
        return []


def _summary_table(rows) -> str:
    headers = [("#", "1 + the submissions stronger in ≥ 97.5 % of the board resamples; = tied"),
               ("rank 95%", "95 % interval of the rank over 200 resamples of the boards"), ("submission", ""),
               ("BT θ ↑", "log Bradley–Terry strength fitted to the pairwise results on shared boards"),
               ("wins", "share of its pairwise comparisons on shared boards it won (a tie counts half)"),
               ("boards", "counted boards entered / counted boards")]
    out = []
    for r in rows:
        iv = "—" if r.interval is None else (str(r.interval[0]) if r.interval[0] == r.interval[1]
                                             else f"{r.interval[0]}–{r.interval[1]}")
        wins = "—" if not math.isfinite(r.wins) else f"{100 * r.wins:.0f}%"
        out.append(("", [(e(f"{r.rank}{'=' if r.tied else ''}"), str(r.rank), ""), (e(iv), None, ""),
                         (f"<a href=\"{submission_file(r.submission)}\">{e(r.submission)}</a>", None, "name l"),
                         (f"{r.strength:+.2f}", repr(r.strength), ""), (e(wins), repr(r.wins), ""),
                         (f"{r.entered}/{r.total}", str(r.entered), "")]))
    return _table(headers, out)


def _index_page(tables, summaries, overall_rows, problems: list[str], built: str, git: str) -> str:
    parts = ["<h1>xaibench leaderboard</h1>",
             "<p>Explainers and oracles scored against ground truth that holds by construction, from people, or "
             "against an adversary. One board per track, resource and model under test. Each board ranks its "
             "methods with paired-bootstrap rank intervals (rows the data cannot separate share a rank), shows its "
             "controls (floors) and references (ceilings) as marked rows, and says whether it "
             "<em>discriminates</em>: whether its best method beats its best control beyond the noise. Per track "
             "and overall, submissions are compared only on the boards both entered, and only on boards that "
             "discriminate, by a Bradley–Terry model of their pairwise results.</p>"]
    parts.append(f"<p class=\"mute\">Built {e(built)} from xaibench revision <code>{e(git)}</code>; "
                 f"{len(tables)} board(s), {sum(1 for b in tables if b.verdict.discriminates)} of them discriminate. "
                 "Only results whose signature holds on the building machine are ranked.</p>")
    if problems:
        items = "".join(f"<li>{e(p)}</li>" for p in problems)
        parts.append(f"<div class=\"warn\">⚠ {len(problems)} result file(s) could not be read and are not shown:"
                     f"<ul>{items}</ul></div>")
    if not tables:
        parts.append("<p class=\"warn strong\">No results yet: run <code>xaibench evaluate</code> (or "
                     "<code>make demo</code>) first.</p>")
    if overall_rows:
        parts.append("<h2>Overall</h2><p class=\"mute\">Bradley–Terry over every track's boards that "
                     "discriminate; each track weighs the same.</p>")
        parts.append(_summary_table(overall_rows))
    elif tables:
        parts.append("<h2>Overall</h2><p class=\"warn\">⚠ No board discriminates yet, so nothing is ranked "
                     "across boards.</p>")
    per_track: dict[str, list] = defaultdict(list)
    for b in tables:
        per_track[b.track].append(b)
    summary_of = {s.track: s for s in summaries}
    for track in sorted(per_track):
        parts.append(f"<h2>Track {e(track)}</h2>")
        ref = _track_reference(track)
        if ref:
            parts.append(f"<p class=\"mute\">Reference: {_cite(ref)}</p>")
        parts.append("<ul class=\"boards\">")
        for b in per_track[track]:
            ranked = [r for r in b.rows if r.rank is not None]
            best = ", ".join(r.submission for r in ranked if r.rank == 1) if ranked else "nothing ranked"
            flags = " ⚠" if (b.warnings or control_warning(b) or b.disagreeing) else ""
            verdict = ("discriminates" if b.verdict.discriminates else b.verdict.status)
            parts.append(f"<li><a href=\"{board_file(b)}\">{e(b.resource)} · {e(b.model)}</a>{flags} "
                         f"<span class=\"verdict-tag {'ok' if b.verdict.discriminates else 'no'}\">{e(verdict)}</span> "
                         f"<span class=\"mute\">revision <code>{e(b.revision[:12])}</code>, {len(ranked)} ranked, "
                         f"first: {e(best)}</span></li>")
        parts.append("</ul>")
        s = summary_of.get(track)
        if s and s.rows:
            parts.append(f"<p class=\"mute\">Bradley–Terry over the {s.counted} of {s.n_boards} board(s) that "
                         "discriminate.</p>")
            parts.append(_summary_table(s.rows))
        if s and s.left_out:
            items = "".join(f"<li>{e(w)}</li>" for w in s.left_out)
            parts.append(f"<details><summary>{len(s.left_out)} board(s) not counted</summary><ul>{items}</ul></details>")
    for track, description, ref in _other_tracks(set(per_track)):
        parts.append(f"<h2>Track {e(track)}</h2><p class=\"mute\">{e(description)} — no results yet: "
                     f"<code>xaibench evaluate &lt;submission&gt; --track {e(track)}</code>."
                     + (f" Reference: {_cite(ref)}" if ref else "") + "</p>")
    revs = sorted({(b.resource, b.revision, b.resource_version) for b in tables})
    if revs:
        parts.append("<h2>Resource revisions</h2><ul>" + "".join(
            f"<li>{e(n)} <code>{e(r)}</code>{(' (' + e(v) + ')') if v else ''}</li>" for n, r, v in revs) + "</ul>")
    return _page("leaderboard", "".join(parts), 0, built)
