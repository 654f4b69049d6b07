"""`build_site`: read the results, rank them into boards, draw each board's pictures and write every page,
the CSS, the script and `site.json` into a temp folder beside the target, then swap it in (a reader never
sees a half-built site)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from leaderboard.site.assets import CSS, JS
from leaderboard.site.facts import SubmissionInfo, installed_submissions, submission_info
from leaderboard.site.figures import Figure, FigureContext, figures_for
from leaderboard.site.pages import (BoardEntry, Cards, board_file, board_page, index_page, single_page, slug,
                                    submission_file, submission_page)

if TYPE_CHECKING:
    from benchmark.store.results import Result
    from leaderboard.boards import Board

__all__ = ["HUB_CARD", "SiteReport", "build_site", "one_page"]

HUB_CARD = "https://huggingface.co/datasets/{org}/xaibench-{family}"

BoardKey = tuple[str, str, str]  # (track, resource, model): `Board.key`


@dataclass
class SiteReport:
    """What `build_site` wrote: the site folder, its pages and pictures (relative to it), the result files
    that could not be read, and how long the build took."""

    out: Path
    pages: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable result files
    seconds: float = 0.0


@dataclass
class _Build:
    """One build in progress: the temp folder being filled, the boards, the build date and the report."""

    tmp: Path
    tables: list[Board]
    built: str
    report: SiteReport
    # board key -> submission -> the Result behind its row
    chosen: dict[BoardKey, dict[str, Result]] = field(default_factory=dict)
    infos: dict[str, SubmissionInfo | None] = field(default_factory=dict)  # base submission -> installed copy
    roles: dict[str, str] = field(default_factory=dict)  # submission -> "control" / "reference"
    board_pages: dict[BoardKey, str] = field(default_factory=dict)  # board key -> its page
    entries: dict[str, list[BoardEntry]] = field(default_factory=lambda: defaultdict(list))  # per submission


def build_site(out: Path, results_dir: Path | None = None, *, sample: int = 4, figures: bool = True,
               results: Iterable[Result] | None = None, problems: Iterable[str] = (),
               verified_only: bool = True, threshold: float | None = None) -> SiteReport:
    """Build the site into `out` (replaced atomically: built in a temp folder beside it, then renamed).

    `results_dir` (default `$XAIBENCH_HOME/results`) is read like `xaibench leaderboard` reads it; or
    give `results` (Result objects) directly. `sample`: instances per picture; `figures=False` skips the
    pictures; `problems`: lines about unreadable input the overview should name as well; `verified_only=False`
    (a results repository's site, `xaibench site --from`) ranks self-reported rows too, marked; `threshold`: the
    randomisation test's (`leaderboard.randomisation.THRESHOLD` when None)."""
    from benchmark.resources.store import swap_in_folder
    from leaderboard.boards import boards as make_boards

    t0 = time.perf_counter()
    out = Path(out)
    found, problems = _read(results_dir, results, list(problems))
    tables = make_boards(found, verified_only=verified_only,
                         **({} if threshold is None else {"threshold": threshold}))
    built = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    build = _Build(tmp, tables, built, SiteReport(out=out, problems=problems))
    try:
        for d in ("board", "submission", "img", "cards"):
            (tmp / d).mkdir()
        (tmp / "style.css").write_text(CSS, encoding="utf-8")
        (tmp / "sort.js").write_text(JS, encoding="utf-8")
        _match_results(build, found)
        _write_boards(build, _copy_cards(tables, tmp), figures=figures, sample=sample)
        _write_submissions(build)
        _write_index(build)
        swap_in_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    build.report.seconds = time.perf_counter() - t0
    return build.report


def one_page(tables: list[Board]) -> str:
    """The boards and their summaries on one self-contained page (`pages.single_page`): what `xaibench
    leaderboard --format html` prints. The boards must hold only verified rows (`ValueError` otherwise)."""
    from leaderboard.summaries import overall_explainers, track_summary

    return single_page(tables, track_summary(tables), overall_explainers(tables))


def _read(results_dir: Path | None, results: Iterable[Result] | None,
          problems: list[str]) -> tuple[list[Result], list[str]]:
    """The results to rank (`results`, or those read from `results_dir`) and every problem line."""
    if results is not None:
        return list(results), problems
    from benchmark.resources.store import data_home
    from leaderboard.loading import load_results_dir

    directory = Path(results_dir) if results_dir is not None else data_home() / "results"
    found, more = load_results_dir(directory)
    return found, problems + more


def _match_results(build: _Build, results: list[Result]) -> None:
    """Find the Result behind every row (by its file, else by name, board and creation time), the installed
    copy of every submission met and the role of every control and reference."""
    by_path = {str(r.path): r for r in results if r.path}
    installed = installed_submissions()
    for b in build.tables:
        got: dict[str, Result] = {}
        for row in b.rows:
            r = by_path.get(row.path) or next(
                (x for x in results if str(x.submission["name"]) == row.submission and x.track == b.track
                 and str(x.resource["name"]) == b.resource and str(x.model["name"]) == b.model
                 and x.created == row.created), None)
            if r is not None:
                got[row.submission] = r
                base = str(r.submission.get("base") or row.submission)
                if base not in build.infos:
                    build.infos[base] = submission_info(base, installed)
            if row.role != "method":
                build.roles[row.submission] = row.role
        build.chosen[b.key] = got


def _write_boards(build: _Build, cards: Cards, *, figures: bool, sample: int) -> None:
    """Draw each board's pictures (of its ranked and marked rows) and write its page; note every row for
    its submission's page."""
    for b in build.tables:
        chosen = build.chosen[b.key]
        ranked = {n: r for n, r in chosen.items()  # a board without a floor still draws its (unranked) methods
                  if any(row.submission == n and (row.rank is not None or row.marker or
                                                  (b.unranked and row.role == "method" and row.status != "modified"))
                         for row in b.rows)}
        figs: list[Figure] = []
        if figures and ranked:
            ctx = FigureContext(b, ranked, build.tmp, "img/" + slug(b.track, b.resource.replace("/", "__"), b.model),
                                sample=sample)
            figs = figures_for(ctx)
        build.report.images += [f.path for f in figs if f.path]
        rel = board_file(b)
        (build.tmp / rel).write_text(board_page(b, chosen, figs, cards, build.built), encoding="utf-8")
        build.board_pages[b.key] = rel
        build.report.pages.append(rel)
        for row in b.rows:
            build.entries[row.submission].append(
                BoardEntry(b, row, chosen.get(row.submission), [f for f in figs if f.submission == row.submission]))


def _write_submissions(build: _Build) -> None:
    """One page per submission met on any board, with its installed copy's facts when it is installed."""
    for name, entries in sorted(build.entries.items()):
        rel = submission_file(name)
        first = next((x.result for x in entries if x.result is not None), None)
        base = str(first.submission.get("base") or name) if first is not None else name
        text = submission_page(name, entries, build.infos.get(base), build.roles.get(name, ""), build.built)
        (build.tmp / rel).write_text(text, encoding="utf-8")
        build.report.pages.append(rel)


def _write_index(build: _Build) -> None:
    """The overview (`index.html`, first in the report's pages) and `site.json`: the build date, the
    xaibench revision, every page and picture and where each board's page is."""
    from benchmark.provenance import git_hash
    from leaderboard.summaries import overall_explainers, track_summary

    tables, report = build.tables, build.report
    metric_page = _write_metric_board(build)
    index = index_page(tables, track_summary(tables), overall_explainers(tables), report.problems, build.built,
                       git_hash(),
                       metric_page=metric_page)
    (build.tmp / "index.html").write_text(index, encoding="utf-8")
    report.pages.insert(0, "index.html")
    (build.tmp / "site.json").write_text(json.dumps(
        {"built": build.built, "xaibench_git": git_hash(), "pages": report.pages, "images": report.images,
         "boards": [{"track": b.track, "resource": b.resource, "model": b.model, "revision": b.revision,
                     "page": build.board_pages[b.key]} for b in tables]}, indent=1), encoding="utf-8")


def _write_metric_board(build: _Build) -> str | None:
    """`metrics.html` and its picture when GT-free metrics were computed for these boards
    (`xaibench metrics-board`, under `$XAIBENCH_HOME/metric-board`); None otherwise."""
    from benchmark.resources.store import data_home
    from leaderboard.metric_board import heatmap, metric_board, summaries
    from leaderboard.site.pages import metric_board_page

    results = [r for chosen in build.chosen.values() for r in chosen.values()]
    if not (data_home() / "metric-board").is_dir() or not results:
        return None
    rows = metric_board(results, data_home())
    if not rows:
        return None
    heatmap(rows, build.tmp / "img" / "metric-board.png")
    build.report.images.append("img/metric-board.png")
    (build.tmp / "metrics.html").write_text(metric_board_page(rows, summaries(rows), "img/metric-board.png",
                                                              build.built), encoding="utf-8")
    build.report.pages.append("metrics.html")
    return "metrics.html"


def _copy_cards(tables: list[Board], site: Path) -> Cards:
    """resource name -> (local copy of its card relative to the site or None, Hub address)."""
    from benchmark.resources.store import HUB_ORG_DEFAULT

    out: Cards = {}
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
                local = f"cards/{slug(family, b.resource.split('/')[-1])}.md.txt"
                shutil.copyfile(card, site / local)
        except Exception:  # a resource not here: the page links the Hub's card only
            local = None
        out[b.resource] = (local, hub)
    return out
