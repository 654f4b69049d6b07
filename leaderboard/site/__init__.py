"""`xaibench site --out DIR`: the leaderboard as a static, self-contained site.

Pages (plain HTML + one CSS file + a few lines of JavaScript for sorting; opens from the file system):
* `index.html` — every track (with its reference, the paper it follows) and its boards, per-track and
  overall Bradley–Terry summaries, the build date, the xaibench revision and every resource revision the boards were
  built from, and any file that could not be read;
* `board/<track>__<family>__<config>__<model>.html` — a sortable table (direction arrows, mean ± 95 % CI
  half-width, failures, exclusions, time), the model under test and its quality, warnings (a control
  that ranks above the median explainer, a model below its track's quality floor, every warning of the
  ranking: mixed revisions, coverage, unverifiable files, one submission only), the resource's
  revision and card, one paragraph per metric (with its reference) and the board's pictures
  (`leaderboard.site.figures`);
* `submission/<name>.html` — parameters, version, hash, capabilities, per-board results and the
  reasons of its failures.

`one_page(boards)` puts the overview and every board's headline, ranking and notes on one
self-contained page (inline CSS and script, no build date): `xaibench leaderboard --format html`. It is
the leaderboard's one HTML path; `leaderboard.render` keeps the terminal, Markdown and CSV formats.

Only results whose signature holds on this machine and whose last `xaibench verify` did not fail are
ranked (as on `one_page`); every other file is named on its board. Nothing
in the input makes the build fail: an unreadable file, a missing resource or cache, a metric without
a value is said on the page where it matters.

Where things are: `build` (build_site: reading the results, writing the folder atomically, the pictures),
`pages` (the board, submission and overview pages and their tables), `facts` (what the pages say beside
the numbers: submission info, model quality, metric and track references, the control warning), `assets`
(CSS, the sorting script, the page shell), `figures` (the per-track picture registry) and `browser`
(headless Chromium for the tests and the screenshots).
"""

from __future__ import annotations

from leaderboard.site.build import SiteReport, build_site, one_page
from leaderboard.site.facts import control_warning, is_control, model_quality
from leaderboard.site.figures import FIGURES, register_figures

__all__ = ["SiteReport", "build_site", "control_warning", "is_control", "model_quality", "one_page",
           "register_figures", "FIGURES"]
