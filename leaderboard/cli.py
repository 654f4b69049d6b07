"""CLI commands contributed by the leaderboard package (registered via `xaibench.commands`).

`xaibench leaderboard [--track T] [--resource R] [--format rich|md|csv|html] [--results DIR]
[--output FILE] [--verified-only] [--summary]` — ranked tables per (track, resource, model), per-track and
overall Bradley–Terry summaries (`--format csv --summary`: the summaries as their own CSV).

Every result file's signature is checked on load (`Result.status`). The rich, md and csv boards show
every readable result, marking unverified ones and showing modified ones unranked with a warning; the
html (static) board — and any format with `--verified-only` — ranks only signed results and names the
rest. For csv, the boards' warnings go to stderr (the CSV itself stays machine-readable).

`--from REPO[@REF]` (both `leaderboard` and `site`) builds from a results repository instead (a folder, a git
URL or hf://datasets/ORG/NAME; `leaderboard.repository`): every row is marked verified (a maintainer's signed
re-run record holds for it under a `--public-key`) or self-reported; `--verified-only` keeps the verified ones.
The repository commands themselves (`submit`, `results ...`) are registered here too
(`leaderboard.repository.cli`).

`--reference` (both) reads the reference leaderboard shipped with the package (`leaderboard.reference`; built by
`xaibench reference build`): a results repository's tip as plain files, under its shipped public key, offline, a
row whose file changed after it was signed shown MODIFIED; `xaibench reference audit` checks it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from benchmark.errors import XaibenchError

if TYPE_CHECKING:
    from benchmark.store.results import Result
    from leaderboard.boards import Board
    from leaderboard.repository.store import Store

__all__ = ["Format", "leaderboard", "register"]


class Format(str, Enum):
    """`xaibench leaderboard --format`: terminal tables, Markdown, CSV or one static HTML page."""

    rich = "rich"
    md = "md"
    csv = "csv"
    html = "html"


def _warn(message: str) -> None:
    from benchmark.progress import console  # stderr

    console.print(f"warning: {message}", style="yellow", markup=False, highlight=False, soft_wrap=True)


def _atomic_write(path: Path, text: str) -> None:
    """Temp file beside `path`, then rename: an interrupted write never leaves half a file."""
    if path.is_dir():
        raise XaibenchError(f"--output {path} is a directory; give a file name such as {path / 'leaderboard.html'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _matches_resource(name: str, wanted: str) -> bool:
    """`aixi/shape-ssin` matches itself; `aixi` matches every config of the family."""
    return name == wanted or name.startswith(wanted.rstrip("/") + "/")


TrackOption = Annotated[
    Optional[str],
    typer.Option("--track", metavar="TRACK", help="Show only this track (e.g. aixi, rcnn, idc, trust, robustness)."),
]
ResourceOption = Annotated[
    Optional[str],
    typer.Option("--resource", metavar="RESOURCE",
                 help="Show only this resource: a config such as aixi/shape-ssin, or a family such as aixi."),
]
FormatOption = Annotated[
    Format,
    typer.Option("--format", help="Output format: rich (terminal tables), md (Markdown), csv (one row per board and "
                 "submission), html (the site's boards on one self-contained page).", case_sensitive=False),
]
ResultsOption = Annotated[
    Optional[Path],
    typer.Option("--results", help="Directory of result JSON files, searched recursively.",
                 show_default="$XAIBENCH_HOME/results", metavar="DIR", file_okay=False),
]
OutputOption = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", metavar="FILE", dir_okay=False,
                 help="Write to this file (atomically) instead of stdout; rich output is written as plain text."),
]
VerifiedOnlyOption = Annotated[
    bool,
    typer.Option("--verified-only", help="Rank only results whose signature holds on this machine (with --from: "
                 "only verified ones; always on for --format html); the others are named in each board's warnings."),
]
FromOption = Annotated[
    Optional[str],
    typer.Option("--from", metavar="REPO[@REF]", help="Build from a results repository: a folder, a git URL or "
                 "hf://datasets/ORG/NAME, at a branch, refs/pr/N or commit (docs/submitting.md)."),
]
PublicKeyOption = Annotated[
    Optional[list[Path]],
    typer.Option("--public-key", metavar="FILE", dir_okay=False, help="With --from: a verifier's public key "
                 "(repeatable); default $XAIBENCH_VERIFIER_KEYS, else $XAIBENCH_HOME/keys/verifier.pub."),
]
ReferenceOption = Annotated[
    bool,
    typer.Option("--reference", help="The reference leaderboard shipped with the package (docs/reference.md): read "
                 "offline, nothing computed; a file edited since it was signed shows MODIFIED."),
]


def _from_reference(source: str | None, results: Path | None, public_key: list[Path] | None
                    ) -> tuple[list[Result], list[str]]:
    """(Results, problems) of the shipped reference (`leaderboard.reference.load`); refused beside --from, --results
    or --public-key (the reference carries its own key)."""
    from leaderboard.reference import load

    if source is not None or results is not None or public_key:
        raise XaibenchError("--reference reads the shipped reference under its own key: give it without --from, "
                            "--results or --public-key")
    found, problems, _ = load()
    return found, problems


def _from_repository(source: str, public_key: list[Path] | None) -> tuple[list[Result], list[str], Store]:
    """(Results, problems, the open store: close it when done) of a results repository at its ref."""
    from leaderboard.repository.boards import load_repository
    from leaderboard.repository.signing import load_public_keys
    from leaderboard.repository.targets import open_store, split_ref

    from leaderboard.repository.layout import RepositoryError

    keys = load_public_keys(public_key)
    repo, ref = split_ref(source)
    store = open_store(repo)
    try:
        tree = store.snapshot(ref)
        found, problems = load_repository(tree, keys, store.earlier_in(tree))
        problems = [f"{path}: {why}" for path, why in store.skipped_in(tree).items()] + problems
    except (OSError, ValueError, RecursionError, MemoryError) as exc:  # one line, never a traceback
        store.close()
        raise RepositoryError(f"{source} could not be read ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
                              ) from None
    except BaseException:
        store.close()
        raise
    if not keys:
        problems.append("no verifier public key configured (--public-key, $XAIBENCH_VERIFIER_KEYS): every row is "
                        "self-reported")
    return found, problems, store


ThresholdOption = Annotated[
    Optional[float],
    typer.Option("--randomisation-threshold", min=-1.0, max=1.0,
                 help="The randomisation test's threshold: a method whose maps on a randomised copy of the model have "
                 "a mean Spearman ρ with its maps on the trained model at or above it is model-blind, shown with "
                 "the controls (default: leaderboard/randomisation.py's THRESHOLD; docs/leaderboard.md)."),
]
RunFloorsOption = Annotated[
    bool,
    typer.Option("--run-floors/--no-run-floors", help="Run the built-in floors a board misses (its data priors, on the "
                 "published model and on its hidden copies) where the board comes from a local results folder and its "
                 "resource is built here at the board's revision; a board whose floors still miss is unranked, saying "
                 "which and why (docs/leaderboard.md)."),
]
SummaryOption = Annotated[
    bool,
    typer.Option("--summary", help="With --format csv: the per-track and overall Bradley–Terry summaries (one row "
                 "per scope and submission) instead of the boards' rows."),
]


def leaderboard(track: TrackOption = None, resource: ResourceOption = None, fmt: FormatOption = Format.rich,
                results: ResultsOption = None, output: OutputOption = None,
                verified_only: VerifiedOnlyOption = False, source: FromOption = None,
                public_key: PublicKeyOption = None, summary: SummaryOption = False,
                randomisation_threshold: ThresholdOption = None, run_floors: RunFloorsOption = True,
                reference: ReferenceOption = False) -> None:
    """Print the ranked boards, per track and overall.

    One board per (track, resource, model): methods ranked by the primary metric with paired-bootstrap
    rank intervals (rows the data cannot separate share a rank), controls and references as marked
    rows, a verdict on whether the board discriminates and the metrics' agreement (Kendall τ). Per
    track and overall, a Bradley–Terry model compares submissions on the discriminating boards both
    entered (docs/leaderboard.md). Results on different resource revisions or instances are never
    mixed silently, and results whose file changed after it was written are marked and not ranked."""
    from benchmark.resources.store import data_home
    from leaderboard.boards import boards as make_boards

    if summary and fmt is not Format.csv:
        raise XaibenchError("--summary is a CSV of the summaries: use it with --format csv (the other formats "
                            "show the summaries below the boards)")
    if reference:
        found, problems = _from_reference(source, results, public_key)
        selected = _filter(found, problems, "the shipped reference", track, resource)
        tables = make_boards(selected, verified_only=verified_only or fmt is Format.html,
                             **_threshold(randomisation_threshold))
    elif source is not None:
        found, problems, store = _from_repository(source, public_key)
        with store:  # its snapshot is removed once the boards are made
            selected = _filter(found, problems, source, track, resource)
            tables = make_boards(selected, verified_only=verified_only or fmt is Format.html,
                                 **_threshold(randomisation_threshold))
    else:
        directory = results if results is not None else data_home() / "results"
        selected = _select(directory, track, resource)
        tables = make_boards(selected, verified_only=verified_only or fmt is Format.html,
                             **_threshold(randomisation_threshold))
        if run_floors and _run_floors(tables, directory):  # the boards again, with the floors they ran
            selected = _select(directory, track, resource)
            tables = make_boards(selected, verified_only=verified_only or fmt is Format.html,
                                 **_threshold(randomisation_threshold))
    if summary:
        from leaderboard.render import to_summary_csv

        text: str | None = to_summary_csv(tables)
    else:
        text = _render(tables, fmt, to_file=output is not None)
    if text is None:  # rich tables, printed to the terminal
        return
    if output is not None:
        _atomic_write(output, text)
        from benchmark.progress import console as err

        err.print(f"wrote {len(tables)} board(s) to {output}", markup=False, highlight=False, soft_wrap=True)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _run_floors(tables: list[Board], directory: Path) -> bool:
    """Run the built-in floors each board misses into `directory` (`leaderboard.floor_runs`), each one that cannot run
    said in one line (the board stays unranked, saying why); whether any Result was written."""
    from benchmark.progress import console as err
    from leaderboard.floor_runs import run_missing

    wrote = False
    for b in tables:
        got = run_missing(b, directory, say=lambda line: err.print(line, markup=False, highlight=False,
                                                                   soft_wrap=True))
        for line in got.problems:
            _warn(line)
        wrote = wrote or bool(got.results)
    return wrote


def _threshold(value: float | None) -> dict[str, float]:
    """The boards' `threshold` keyword when --randomisation-threshold was given (else the rule's default)."""
    return {} if value is None else {"threshold": float(value)}


def _select(directory: Path, track: str | None, resource: str | None) -> list[Result]:
    """The readable results under `directory` that pass the --track / --resource filters (every unreadable
    file is warned about); an error that names what is there when nothing is, or nothing matches."""
    from leaderboard.loading import load_results_dir

    found, problems = load_results_dir(directory)
    return _filter(found, problems, str(directory), track, resource)


def _filter(found: list[Result], problems: list[str], directory: str, track: str | None,
            resource: str | None) -> list[Result]:
    """`_select` on results already read (from a folder or a results repository)."""
    for problem in problems:
        _warn(problem)
    if not found:
        raise XaibenchError(
            f"no results in {directory}; run `xaibench evaluate path/to/submission --track <track>` first "
            f"(or point --results at a directory of result files)"
        )
    selected = found
    if track is not None:
        selected = [r for r in selected if r.track == track]
    if resource is not None:
        selected = [r for r in selected if _matches_resource(str(r.resource["name"]), resource)]
    if not selected:
        tracks = ", ".join(sorted({r.track for r in found}))
        resources = ", ".join(sorted({str(r.resource["name"]) for r in found}))
        raise XaibenchError(
            f"no results in {directory} match the filters (--track {track or '*'}, --resource "
            f"{resource or '*'}); tracks there: {tracks}; resources there: {resources}"
        )
    return selected


def _render(tables: list[Board], fmt: Format, *, to_file: bool) -> str | None:
    """The boards as text in `fmt`; None once rich tables went straight to the terminal (`to_file` False).
    For csv the boards' warnings go to stderr, so the CSV itself stays machine-readable."""
    from leaderboard import render

    if fmt is Format.rich:
        if to_file:
            return render.to_text(tables)
        from rich.console import Console

        console = Console()
        if not console.is_terminal and "COLUMNS" not in os.environ:
            console.width = 160
        render.print_rich(tables, console)
        return None
    if fmt is Format.md:
        return render.to_markdown(tables)
    if fmt is Format.csv:
        text = render.to_csv(tables)
        for b in tables:
            for w in b.warnings:
                _warn(f"{b.title}: {w}")
        return text
    from leaderboard.site import one_page

    return one_page(tables)


def site(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", file_okay=False,
                                      help="Folder to write the site into (replaced atomically).")],
    results: ResultsOption = None,
    sample: Annotated[int, typer.Option(min=1, max=32, help="Instances drawn per picture.")] = 4,
    no_figures: Annotated[bool, typer.Option("--no-figures", help="Skip the pictures (tables only).")] = False,
    source: FromOption = None,
    public_key: PublicKeyOption = None,
    verified_only: Annotated[bool, typer.Option("--verified-only", help="With --from: only verified rows (without "
                                                "--from the site always ranks only results signed here).")] = False,
    randomisation_threshold: ThresholdOption = None,
    reference: ReferenceOption = False,
) -> None:
    """Build the leaderboard as a static site.

    An overview, one page per board (verdict, sortable table with rank intervals, model quality,
    warnings, metric notes, pictures) and one page per submission. Opens from the file system."""
    from leaderboard.site import build_site

    if reference:
        found, problems = _from_reference(source, results, public_key)
        report = build_site(out, results=found, problems=problems, sample=sample, figures=not no_figures,
                            verified_only=verified_only, threshold=randomisation_threshold)
    elif source is not None:
        found, problems, store = _from_repository(source, public_key)
        with store:  # its snapshot is removed once the site is built
            report = build_site(out, results=found, problems=problems, sample=sample, figures=not no_figures,
                                verified_only=verified_only, threshold=randomisation_threshold)
    else:
        report = build_site(out, results, sample=sample, figures=not no_figures, threshold=randomisation_threshold)
    for problem in report.problems:
        _warn(problem)
    from benchmark.progress import console as err

    err.print(f"wrote {len(report.pages)} page(s) and {len(report.images)} picture(s) to {out} in "
              f"{report.seconds:.1f} s; open {out / 'index.html'}", markup=False, highlight=False, soft_wrap=True)


class BoardFormat(str, Enum):
    """`xaibench metrics-board --format`: terminal tables, CSV or JSON."""

    rich = "rich"
    csv = "csv"
    json = "json"


def metrics_board(
    track: TrackOption = None,
    resource: ResourceOption = None,
    model: Annotated[Optional[str], typer.Option("--model", metavar="MODEL", help="Only boards on this model "
                                                 "(e.g. function, cnn).")] = None,
    metrics: Annotated[Optional[str], typer.Option("--metrics", metavar="M1,M2", help="Only these GT-free metrics "
                                                   "(default: every metric of the board's modality).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=5, help="Score only each board's first N instances.")]
    = None,
    no_compute: Annotated[bool, typer.Option("--no-compute", help="Show what was computed; compute nothing.")] = False,
    no_control: Annotated[bool, typer.Option("--no-control", help="Skip the randomised-model control (halves the "
                                                                  "time; the board then cannot call a metric "
                                                                  "model-blind).")] = False,
    metaquantus: Annotated[bool, typer.Option("--metaquantus", help="Also run MetaQuantus (noise resilience, "
                                              "adversarial reactivity) for the image metrics on white-box image "
                                              "boards (e.g. aixi's cnn): minutes per metric.")] = False,
    meta_images: Annotated[int, typer.Option("--meta-images", min=2, help="Images MetaQuantus uses per board.")] = 8,
    fmt: Annotated[BoardFormat, typer.Option("--format", case_sensitive=False, help="rich, csv or json.")]
    = BoardFormat.rich,
    results: ResultsOption = None,
    output: OutputOption = None,
) -> None:
    """Score ground-truth-free metrics against the ground truth.

    The reference is docs/metric-board.md.

    For every ground-truth board (aixi, rcnn, idc) it computes each GT-free metric — Quantus 0.6.0 for images,
    ERASER comprehensiveness / sufficiency and deletion / insertion curves for text — on the maps the board's
    Results were scored from, on the board's model and on a randomised copy (cached under
    $XAIBENCH_HOME/metric-board, resumable), then reports per metric its agreement with the ground-truth
    ranking: Kendall τ-b with a paired bootstrap interval, the mean per-instance Spearman ρ, controls and a
    verdict (agrees / disagrees / cannot tell)."""
    import json as _json

    from benchmark.gtfree.compute import GT_TRACKS, compute_board
    from benchmark.resources.store import data_home
    from leaderboard import companions
    from benchmark.store.results import load_results
    from leaderboard.metric_board import metric_board, print_rich, summaries, to_csv

    if track is not None and track not in GT_TRACKS:
        raise XaibenchError(f"the metric board judges metrics on ground-truth boards only: {', '.join(GT_TRACKS)}")
    home = data_home()
    found, problems = load_results(results if results is not None else home / "results")
    for p in problems:
        _warn(p)
    chosen = [r for r in found if r.track in GT_TRACKS and (track is None or r.track == track)
              and (resource is None or _matches_resource(r.resource["name"], resource))
              and (model is None or r.model.get("name") == model)
              and companions.kind_of(r) is None]  # a randomised-model or hidden-copy run is a row's, not a board's
    for r in [r for r in chosen if getattr(r, "status", "unsigned") == "modified"]:
        _warn(f"{getattr(r, 'path', r.submission['name'])}: changed after it was written (its signature fails); "
              "left out of the metric board")
        chosen.remove(r)
    if not chosen:
        raise XaibenchError("no results on a ground-truth board (aixi, rcnn, idc) match; run `xaibench evaluate` first")
    names = [m.strip() for m in metrics.split(",")] if metrics else None
    if not no_compute:
        groups: dict[tuple[str, str, str], list[Result]] = {}
        for r in chosen:
            groups.setdefault((r.track, r.resource["name"], r.model["name"]), []).append(r)
        for rs in groups.values():
            _folder, warnings = compute_board(rs, home, names, limit=limit, control=not no_control)
            for w in warnings:
                _warn(w)
            if metaquantus:
                _meta(rs[0], home, names, meta_images)
    rows = metric_board(chosen, home)
    if names:
        rows = [r for r in rows if r.metric.split("@")[0] in names or r.role == "control" and "@" not in r.metric]
    overall = summaries(rows)
    if fmt is BoardFormat.rich and output is None:
        print_rich(rows, overall)
        return
    if fmt is BoardFormat.csv:
        text = to_csv(rows)
    elif fmt is BoardFormat.json:
        text = _json.dumps({"boards": [r.to_dict() for r in rows], "summaries": [o.to_dict() for o in overall]},
                           indent=1)
    else:  # rich, written to a file as plain text
        import io

        from rich.console import Console

        buf = io.StringIO()
        print_rich(rows, overall, Console(file=buf, width=160, no_color=True))
        text = buf.getvalue()
    if output is None:
        sys.stdout.write(text)
    else:
        _atomic_write(output, text)


def _meta(r: Result, home: Path, names: list[str] | None, n_images: int) -> None:
    """MetaQuantus on one board when its model is a white-box image model; says why not otherwise."""
    from benchmark.gtfree.meta import METRICS, meta_evaluate
    from benchmark.tracks import get_track

    board = f"{r.resource['name']}/{r.model['name']}"
    if get_track(r.track).modality != "image":
        _warn(f"{board}: MetaQuantus runs on image boards only; skipped")
        return
    try:
        meta_evaluate(r.track, r.resource["name"], r.model["name"], home,
                      [m for m in METRICS if names is None or m in names], n_images=n_images,
                      split=r.resource.get("split") or "validation")
    except ValueError as exc:  # e.g. the AIXI function model: no weights for its model test
        _warn(f"{board}: MetaQuantus skipped ({exc})")


def reference_audit(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Also rebuild the copies of --sample round records from "
                                          "the revealed secret (needs each row's resource at its revision).")]
    = False,
    rerun: Annotated[bool, typer.Option("--rerun", help="Also evaluate those rows again on the rebuilt copies "
                                        "(implies --rebuild).")] = False,
    sample: Annotated[int, typer.Option(min=0, help="Round records rebuilt or re-run, drawn with --seed (0 = all)."
                                        )] = 3,
    seed: Annotated[int, typer.Option(min=0, help="The draw of the sample.")] = 0,
    track: TrackOption = None,
    sandbox: Annotated[str, typer.Option(help="Where a re-run runs: auto, bwrap or none.")] = "auto",
) -> None:
    """Check the shipped reference.

    Every shipped file is what the build shipped and every Result verifies against its record under the shipped
    key (a file edited by hand is named); the reference's round is audited as `xaibench results audit` audits a
    repository; --rebuild / --rerun rebuild the hidden copies of a sample of rows and re-run them. One line per
    mismatch; exit status 1 on any."""
    from benchmark.progress import console as err
    from leaderboard.reference.audit import audit_reference

    if sandbox not in ("auto", "bwrap", "none"):
        raise typer.BadParameter("must be auto, bwrap or none", param_hint="--sandbox")
    lines, counts = audit_reference(rebuild=rebuild or rerun, rerun=rerun, sample=sample, seed=seed, track=track,
                                    sandbox=sandbox)
    for line in lines:
        print(line)
    err.print(f"the reference: {counts['results']} Result(s), {counts['runs']} hidden run(s) checked"
              + (f", {counts['rebuilt']} rebuilt" if rebuild or rerun else "") + f"; {len(lines)} mismatch(es)",
              markup=False, highlight=False, soft_wrap=True)
    if lines:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the `leaderboard` and `site` commands, the results repository's `submit` and `results`, and `reference
    audit` to the xaibench CLI."""
    from benchmark.cli import add_reference_command
    from leaderboard.repository.cli import register as register_repository

    app.command("leaderboard")(leaderboard)
    app.command("site")(site)
    app.command("metrics-board")(metrics_board)
    register_repository(app)
    add_reference_command("audit", reference_audit)
