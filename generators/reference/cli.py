"""The reference's commands: `xaibench reference build` (`make reference`), `reference status`, `reference docs`,
and the hidden `reference lane` a build runs once per track (`generators.reference.build`)."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import List, Optional

import typer

from benchmark.errors import XaibenchError
from benchmark.progress import console

ReferenceScale = StrEnum("ReferenceScale", ["default", "tiny"])  # generators.reference.plan.SCALES
ReferenceTrack = StrEnum("ReferenceTrack", ["aixi", "idc", "rcnn", "trust", "robustness"])
Backend = StrEnum("Backend", ["local", "ray"])
SHIPPED = Path("leaderboard/reference/shipped")  # relative to the repository's root, where `make reference` runs


def _say(line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def _work(work: Optional[Path], scale: str) -> Path:
    from benchmark.resources.store import data_home

    if work is not None:
        return work
    return data_home() / ("reference-build" if scale == "default" else f"reference-build-{scale}")


def build_cmd(
    scale: ReferenceScale = typer.Option("default", help="default = every generator at its default scale (the "
                                         "reference); tiny = the same flow in minutes (checks the machinery; "
                                         "needs --out)."),
    track: Optional[List[ReferenceTrack]] = typer.Option(None, "--track", "-t", help="Only these tracks "
                                                         "(repeatable; default all five)."),
    work: Optional[Path] = typer.Option(None, file_okay=False, help="The build's folder: repository, keys, "
                                        "results, lanes' records (default $XAIBENCH_HOME/reference-build)."),
    out: Optional[Path] = typer.Option(None, file_okay=False, help=f"Where the reference is shipped (default "
                                       f"{SHIPPED}, from the repository's root; replaced only when complete)."),
    docs: Optional[Path] = typer.Option(None, dir_okay=False, help="The page to generate (default docs/reference.md "
                                        "at scale default; none at scale tiny unless given)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=64, help="Track lanes at once, each on one "
                                       "thread, beside the maintainer's (default: one per core)."),
    board_budget: float = typer.Option(12.0, min=0.0, max=100000.0, help="CPU-minutes per board for all its "
                                       "evaluations (the scale rule, docs/reference.md; 0 = every default)."),
    draws: int = typer.Option(3, min=1, max=100, help="Hidden copies per board in the reference's round."),
    secret_file: Optional[Path] = typer.Option(None, "--secret-file", dir_okay=False, exists=True, help="The "
                                               "round's secret (64 hex digits): the same secret draws the same hidden "
                                               "copies, so a rebuild gives the same boards."),
    backend: Backend = typer.Option("local", help="Where the lanes' evaluations explain their batches (`evaluate "
                                    "--backend`); the maintainer's re-runs run here."),
    address: Optional[str] = typer.Option(None, help="ray: the cluster to join (e.g. auto)."),
    max_mb: float = typer.Option(30.0, min=0.1, max=10000.0, help="Refuse to ship a tree larger than this."),
    replace_partial: bool = typer.Option(False, "--replace-partial", help="Ship even when the new reference lacks "
                                         "a board the shipped one has."),
    reveal_incomplete: bool = typer.Option(False, "--reveal-incomplete", help="Reveal a round even when some "
                                           "board with hidden copies has no verdict from them (listed; without it the "
                                           "build stops before the reveal, while the copies can still be run)."),
    train_epochs: Optional[int] = typer.Option(None, "--train-epochs", min=1, max=1000, help="Cap the epochs of the "
                                               "plan's `train` commands (the AIXI CNNs: their recipe's 10 epochs are "
                                               "~15 CPU-min each on 2 cores); recorded in the plan and on the page."),
    plan: bool = typer.Option(False, "--plan", help="Print the plan and the scale rule's choices; build nothing."),
) -> None:
    """Build the reference leaderboard (hours at scale default).

    Every track's resources, every built-in on every board it can enter, landed in a results repository as a
    maintainer would (submit, verify with the round's hidden copies, reveal, audit), then exported to the package
    and docs/reference.md. Resumable: run it again after an interruption. Each track runs in its own lane; a track
    that fails is recorded and the others go on."""
    from benchmark.cli import _run
    from generators.reference.build import Options, Work, run_build

    s = str(scale)
    if s != "default" and out is None and not plan:
        raise XaibenchError(f"--scale {s} builds no reference to ship: give --out DIR (e.g. a temporary folder)")
    opts = Options(scale=s, budget=board_budget, draws=draws, max_mb=max_mb, tracks=[str(t) for t in track or []],
                   backend=str(backend), address=address,
                   secret_file=str(secret_file.resolve()) if secret_file else None, train_epochs=train_epochs)
    folder = Work(_work(work, s).resolve())
    if plan:
        _print_plan(folder, opts)
        return
    out = out if out is not None else SHIPPED
    page = docs if docs is not None else (Path("docs/reference.md") if s == "default" else None)
    t0 = time.perf_counter()
    readme = Path("README.md") if s == "default" and page is not None and Path("README.md").is_file() else None
    state = run_build(folder, opts, out, page, jobs, _say, _run, max_mb=max_mb, replace_partial=replace_partial,
                      columns=console.width, readme=readme, reveal_incomplete=reveal_incomplete)
    _say(f"reference: {time.perf_counter() - t0:.0f} s; audit {state.get('audit')}; shipped at {out}"
         + (f"; {page} written" if page else ""))


def _print_plan(folder, opts) -> None:
    from dataclasses import asdict

    from rich.table import Table

    from benchmark.resources.store import data_home
    from generators.reference.build import _read_json
    from generators.reference.plan import SOURCE_BYTES, cap_training, choose, plan_for, total_minutes

    measured = _read_json(folder.costs, {}) or {}
    tracks = tuple(t for t in plan_for(opts.scale) if not opts.tracks or t.name in opts.tracks)
    _, choices = choose(cap_training(tracks, opts.train_epochs), opts.budget, opts.draws, measured, opts.max_mb)
    table = Table(title=f"the reference at scale {opts.scale}: budget {opts.budget:g} CPU-min per board, "
                  f"{opts.draws} hidden draws", title_justify="left")
    for col in ("command", "option", "board", "instances", "CPU-min at default", "CPU-min planned", "MB planned",
                "why"):
        table.add_column(col, overflow="fold")
    for c in choices:
        d = asdict(c)
        for k, (slug, v) in enumerate(d["boards"].items()):
            table.add_row(c.command if k == 0 else "", (f"{c.option} {c.default} → {c.value}" if c.reduced
                                                        else (c.option or "—")) if k == 0 else "",
                          slug, f"{v['instances']:,}", f"{v['default']:,.0f}", f"{v['chosen']:,.0f}",
                          f"{v['mb']:.1f}", c.reason if k == 0 else "")
    console.print(table)
    src = f"measured in {folder.costs}" if measured else "the plan's priors (docs/performance.md)"
    mb = sum(v["mb"] for c in choices for v in c.boards.values())
    _say(f"{total_minutes(choices):,.0f} CPU-min of evaluations in all and {mb:.1f} MB of runs (+ about "
         f"{SOURCE_BYTES / 1e6:.0f} MB of sources), from {src}; generation not counted; resources in "
         f"{data_home() / 'resources'}")


def status_cmd(
    work: Optional[Path] = typer.Option(None, file_okay=False, help="The build's folder (default "
                                        "$XAIBENCH_HOME/reference-build)."),
    scale: ReferenceScale = typer.Option("default", help="Which default folder (with no --work)."),
) -> None:
    """Show where a reference build stands.

    Each track's lane (outcome, minutes, boards evaluated, pull requests), the maintainer's landings and refusals,
    and the finish stage; read from the build's folder, nothing computed."""
    from rich.table import Table

    from generators.reference.build import Work, _closed, _pending, _read_json, load_plan

    folder = Work(_work(work, str(scale)).resolve())
    frozen, tracks = load_plan(folder)
    table = Table(title=f"reference build {folder.root} (scale {frozen['options']['scale']}, planned "
                  f"{frozen['planned']})", title_justify="left")
    for col in ("track", "lane", "minutes", "CPU-min", "boards evaluated", "submitted", "why not"):
        table.add_column(col, overflow="fold")
    for t in tracks:
        lane = _read_json(folder.lane(t.name), {}) or {}
        boards = lane.get("boards", {})
        ok = sum(v.get("status") == "evaluated" for v in boards.values())
        sent = sum(v == "proposed" for v in (lane.get("submitted") or {}).values())
        table.add_row(t.name, lane.get("status", "not run"), f"{lane.get('seconds', 0) / 60:.1f}",
                      f"{lane.get('cpu_s', 0) / 60:.1f}", f"{ok} of {len(t.boards)}", str(sent),
                      lane.get("reason", ""))
    console.print(table)
    maint = _read_json(folder.maintainer, {}) or {}
    refused = maint.get("refused", {})
    pending = _pending(folder, _closed(maint)) if (folder.repo / "HEAD").is_file() else []
    _say(f"maintainer: {len(maint.get('landed', {}))} pull request(s) landed, {len(pending)} open, "
         f"{len(refused)} refused, {len(maint.get('superseded', {}))} superseded")
    for branch, why in refused.items():
        _say(f"    refused {branch}: {why}")
    finished = _read_json(folder.finished)
    if finished:
        _say(f"finish: audit {finished.get('audit')}" + (f"; exported {finished['export']['files']} files"
                                                         if finished.get("export") else ""))


def lane_cmd(
    track: str = typer.Argument(..., help="The track."),
    work: Path = typer.Option(..., file_okay=False, help="The build's folder."),
) -> None:
    """One track's lane of a reference build."""
    from benchmark.cli import _run
    from generators.reference.build import Work, lane

    out = lane(Work(work), track, _run, _say)
    _say(f"{out.status} in {out.seconds / 60:.1f} min (CPU {out.cpu_s / 60:.1f} min)"
         + (f": {out.reason}" if out.reason else ""))
    if out.status == "failed":
        raise XaibenchError(out.reason or "every board failed")


def docs_cmd(
    reference: Optional[Path] = typer.Option(None, "--reference", file_okay=False, help="The shipped reference to "
                                             f"describe (default {SHIPPED})."),
    out: Path = typer.Option(Path("docs/reference.md"), "--out", "-o", dir_okay=False, help="The page to write."),
    readme: Optional[Path] = typer.Option(None, dir_okay=False, exists=True, help="Also write the findings between "
                                          "this README's reference-findings markers (the build passes README.md)."),
) -> None:
    """Write docs/reference.md from the shipped reference.

    Every board's table (verdict, hidden and public ranks, intervals), the papers' tables beside ours and which
    orderings hold, what the hidden copies reorder, the build's costs and how to check it; read through `xaibench
    leaderboard --reference`."""
    from generators.reference.docs import write_page

    where = reference if reference is not None else SHIPPED
    if not (where / "manifest.json").is_file():
        if reference is not None:
            raise XaibenchError(f"{reference} holds no reference (no manifest.json); `xaibench reference build` "
                                "ships one")
        _say(f"no reference is shipped at {where}: writing the page of a reference not built yet (TODO-LEAD)")
    written = write_page(where, out, readme=readme)
    _say(f"wrote {written}" + (f" and the findings of {readme}" if readme else ""))


def register() -> None:
    """Add the reference's commands to `xaibench reference` (`benchmark.cli.reference_app`)."""
    from benchmark.cli import add_reference_command

    add_reference_command("build", build_cmd)
    add_reference_command("status", status_cmd)
    add_reference_command("docs", docs_cmd)
    add_reference_command("lane", lane_cmd, hidden=True)
