"""The site's static assets and page shell: the one CSS file, the few lines of JavaScript that sort a
table by a clicked header, HTML escaping (`e`) and the frame every page shares (`page`)."""

from __future__ import annotations

import html
from typing import Any

__all__ = ["CSS", "JS", "e", "page"]

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
details.notes{margin:.8em 0}details.notes>summary{cursor:pointer;font-weight:600}
.bad{color:var(--bad)}
.verified{color:#2e7d32;font-size:.85em}
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
    """`str(x)` escaped for HTML text and attribute values (quotes included)."""
    return html.escape(str(x), quote=True)


def page(title: str, body: str, depth: int, built: str, standalone: bool = False) -> str:
    """A whole page: `body` (HTML) in the shared frame — title, the CSS, the header linking the overview,
    the build date and the sorting script. `depth`: folders below the site root (0 for index.html).
    `standalone`: one self-contained file (the CSS and the script inline, no overview to link, no date
    when `built` is empty)."""
    up = "../" * depth
    if standalone:
        style, script = f"<style>{CSS}</style>", f"<script>{JS}</script>"
        home = "<a href=\"#top\">xaibench leaderboard</a>"
    else:
        style = f"<link rel=\"stylesheet\" href=\"{up}style.css\">"
        script, home = f"<script src=\"{up}sort.js\"></script>", f"<a href=\"{up}index.html\">xaibench leaderboard</a>"
    date = f"<span class=\"mute\">built {e(built)}</span>" if built else ""
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{e(title)} · xaibench</title>{style}"
        "<link rel=\"icon\" href=\"data:,\"></head><body>"
        f"<header class=\"top\" id=\"top\">{home}{date}</header>\n<main>{body}</main>"
        f"{script}</body></html>\n"
    )
