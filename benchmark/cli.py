"""The `xaibench` command line.

Core commands live here (`list`, `evaluate`, `demo`); packages the harness must not import
(`generators`, `leaderboard`) add theirs through the `xaibench.commands` entry-point group.
Every `XaibenchError` and every usage error (a bad option value, a missing argument, an unknown option)
is printed as one line (`error: ...`) with exit status 2. Options are validated while the command line is
parsed (ranges and choices, `benchmark.options`), before a command runs or writes anything.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import time
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.cells import cell_len
from rich.text import Text
from typer._click.exceptions import ClickException as _ClickException, UsageError as _UsageError  # typer ≥ 0.29

from benchmark.errors import XaibenchError
from benchmark.options import HIDDEN_DRAWS, SEED_MAX, TIMEOUT_MAX_S, lazy_choice
from benchmark.progress import console
from benchmark.registry import iter_entry_points
from benchmark.isolation import SCRATCH_GB, default_memory_gb, default_processes, machine_memory_bytes
from benchmark.store.storage import storage_error

app = typer.Typer(
    name="xaibench",
    help="Ground-truth benchmarks for explanation methods: generate resources, evaluate explainers, "
    "view leaderboards.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


# `xaibench reference ...`: the shipped reference leaderboard. Its commands come from two packages the harness does
# not import — building it (`generators.reference`) and checking it (`leaderboard.reference`) — so the group lives
# here and each adds its commands (`add_reference_command`).
reference_app = typer.Typer(help="The shipped reference leaderboard: build it, check it.",
                            no_args_is_help=True)
app.add_typer(reference_app, name="reference")


def add_reference_command(name: str, fn: Any, hidden: bool = False) -> None:
    """Add `xaibench reference NAME` (once: `register` may run for more than one app)."""
    if not any(c.name == name for c in reference_app.registered_commands):
        reference_app.command(name, hidden=hidden)(fn)


def _parse_params(items: list[str] | None) -> dict:
    """`key=value` pairs; values parsed as JSON when possible (numbers, booleans, lists)."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise XaibenchError(f"--param '{item}' must look like key=value (e.g. --param n_samples=16)")
        k, v = item.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _parse_seeds(text: str | None) -> list[int] | None:
    """`--seeds 0,1,2` → [0, 1, 2]; None when not given. Refuses anything but distinct integers ≥ 0."""
    if text is None:
        return None
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise XaibenchError(f"--seeds '{text}' must be distinct integers ≥ 0 separated by commas, e.g. 0,1,2") from None
    if not seeds or any(s < 0 or s > SEED_MAX for s in seeds) or len(set(seeds)) != len(seeds):
        raise XaibenchError(f"--seeds '{text}' must be distinct integers between 0 and {SEED_MAX}, e.g. 0,1,2")
    return seeds


class SandboxMode(str, Enum):
    """`--sandbox`: where submissions run (`benchmark.isolation.sandbox.MODES`)."""

    auto = "auto"
    bwrap = "bwrap"
    none = "none"


def _tracks() -> dict:
    """Every registered track (built-in and from plugins), by name."""
    from benchmark.tracks.base import TRACKS, _ensure_builtin

    _ensure_builtin()
    return dict(TRACKS.items())


def _track_models(ctx) -> tuple[str, ...]:
    """The models of the track chosen on the command line (`--track` is eager: parsed first)."""
    return _tracks()[(ctx.params.get("track") if ctx is not None else None) or "aixi"].models


@app.command("list")
def list_cmd() -> None:
    """List tracks, resources and submissions.

    Tracks with their metrics and models, the resources found locally or in the mirror, and every
    installed submission."""
    from benchmark.listing import resources_listing, submissions_listing, tracks_listing
    from benchmark.metrics import METRICS
    from benchmark.resources.store import list_local_resources
    from benchmark.submission import discover

    console.print(tracks_listing(_tracks(), METRICS))
    console.print(resources_listing(list_local_resources()))
    console.print(submissions_listing(discover()))


class Backend(StrEnum):
    """`--backend`: where batches are explained (`benchmark.backends.BACKENDS`)."""

    local = "local"
    ray = "ray"


# The sandbox's limits (docs/isolation.md), with this machine's defaults worked out for --help.
_MEMORY_HELP = (f"Address-space limit of each submission worker, GiB. Default: half this machine's memory "
                f"({machine_memory_bytes() / (1 << 30):.1f} GiB) over the workers running at once: "
                f"{default_memory_gb(1):g} for a local run, {default_memory_gb(os.cpu_count() or 1):g} for --backend "
                f"ray on all {os.cpu_count()} CPUs (on a Ray cluster: each node's own share).")
_PROCESS_HELP = (f"Most processes + threads of a submission's worker (default {default_processes()}; 0 = no limit; "
                 "enforced in the bubblewrap sandbox).")
_SCRATCH_HELP = ("Size bound of the submission's scratch folder (kept between runs), GiB (0 = none): a worker "
                 "over it is stopped, its instances fail, the folder is emptied.")


@app.command("evaluate")
def evaluate_cmd(
    submission: str = typer.Argument(..., help="A submission name (see `xaibench list`), a folder with "
                                     "submission.toml, or 'all' for every built-in explainer (or oracle) of the "
                                     "track."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", "-x", help="With 'all': leave out this "
                                                "submission (repeatable), e.g. a slow one at a small scale."),
    track: str = typer.Option("aixi", "--track", "-t", help="The track to evaluate on (see `xaibench list`).",
                              is_eager=True, callback=lazy_choice(lambda ctx: _tracks(), "track")),
    resource: Optional[List[str]] = typer.Option(None, "--resource", "-r",
                                                 help="Resource config(s), repeatable (default: the track's "
                                                 "first config, e.g. aixi/shape-ssin, idc/mr-wga)."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m",
                                              help="Model(s) under test, repeatable (default: cnn); one of the "
                                              "track's models (see `xaibench list`).",
                                              callback=lazy_choice(_track_models, "model of this track")),
    split: Optional[str] = typer.Option(None, help="Split to evaluate (default: the track's, 'validation')."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N instances."),
    batch_size: int = typer.Option(16, min=1, help="Instances per explain() call."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX,
                             help="Run seed (stochastic explainers derive per-instance seeds)."),
    seeds: Optional[str] = typer.Option(None, help="Several seed runs in one Result, e.g. 0,1,2: the "
                                        "board's intervals then include the seed variance (overrides --seed)."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p",
                                              help="Override a submission parameter: key=value (repeatable)."),
    metric_param: Optional[List[str]] = typer.Option(
        None, "--metric-param", help="Override a metric default: key=value, e.g. normalisation=minmax "
        "(aixi: how a signed map becomes a distribution: positive, minmax or absolute)."),
    timeout: float = typer.Option(60.0, min=0, max=TIMEOUT_MAX_S,
                                  help="Per-instance time limit in seconds (0 = none; at most a day)."),
    overwrite: bool = typer.Option(False, help="Recompute cached outputs and replace the result."),
    results: Optional[Path] = typer.Option(None, file_okay=False,
                                           help="Results folder (default $XAIBENCH_HOME/results)."),
    sandbox: SandboxMode = typer.Option(SandboxMode.auto,
                                help="Where submissions run: auto = bubblewrap sandbox when it works here, else "
                                "a plain worker process (with a warning); bwrap = sandbox or refuse; none = plain "
                                "worker process."),
    memory_limit: Optional[float] = typer.Option(None, min=0.25, max=1024.0, help=_MEMORY_HELP),
    process_limit: Optional[int] = typer.Option(None, min=0, max=1 << 20, help=_PROCESS_HELP),
    scratch_limit: float = typer.Option(SCRATCH_GB, min=0.0, max=1 << 20, help=_SCRATCH_HELP),
    fit_timeout: float = typer.Option(3600.0, min=0, max=TIMEOUT_MAX_S,
                                      help="Oracles (trust track): time limit of fit() per worker start, "
                                      "seconds (0 = none)."),
    backend: Backend = typer.Option(Backend.local, help="Where batches are explained: local = one worker here; "
                                    "ray = Ray tasks, each with its own worker (pip install 'xaibench[ray]')."),
    address: Optional[str] = typer.Option(None, help="ray: the cluster to join (e.g. auto, host:6379, "
                                          "ray://host:10001); default: a private local Ray instance."),
    workers: Optional[int] = typer.Option(None, min=1, max=4096, help="ray: CPUs of the local Ray instance "
                                          "(default: all)."),
    randomisation: bool = typer.Option(True, "--randomisation/--no-randomisation",
                                       help="Also run the randomisation test: the same evaluation on a randomised "
                                       "copy of the model (Adebayo et al. 2018), written beside the Result; a "
                                       "method whose maps do not depend on the model ranks with the controls."),
    randomisation_limit: Optional[int] = typer.Option(None, min=1, help="The randomisation test on the first N "
                                                      "instances only (default: all those of the trained run); its "
                                                      "verdicts need fewer instances than a ranking."),
    randomisation_top: Optional[int] = typer.Option(None, min=1, max=1000, help="The cascading variant instead: "
                                                    "re-draw only the last K layers (its Result beside the full "
                                                    "one's; the boards judge the full randomisation)."),
    randomisation_seed: Optional[int] = typer.Option(None, min=1, max=2**31 - 1,
                                                     help="Seed of the randomised copy's weights (default: the "
                                                     "project's, RANDOM_SEED in "
                                                     "benchmark/models/variants/randomise.py; not 0, the seed models "
                                                     "are commonly initialised under)."),
    hidden_draws: int = typer.Option(HIDDEN_DRAWS, min=0, max=100, help="Hidden copies of the model to evaluate on "
                                     "after the published one (drawn from this home's secret; the boards rank by "
                                     "them; 0 = none)."),
    hidden_limit: Optional[int] = typer.Option(None, min=1, help="The hidden copies' first N instances only (default: "
                                               "--limit's N, else all of each copy's)."),
) -> None:
    """Evaluate a submission on a resource and write a Result.

    Explains every instance with the submission, scores it against ground truth and writes a Result.
    The submission runs in a fresh, sandboxed worker process that never sees ground truth. Outputs are
    cached per instance: an interrupted run resumes where it stopped. Then, unless --no-randomisation,
    the randomisation test: the same run on a randomised copy of the model, with the similarity of the
    two runs' maps (docs/leaderboard.md). Then, unless --hidden-draws 0, the same run on each hidden copy of the
    model (drawn from this home's secret, ground truth recomputed on the copy): boards rank by those scores."""
    from benchmark.runner import evaluate
    from benchmark.submission import discover, get_submission
    from benchmark.tracks import get_track

    trk = get_track(track)
    resource = resource or [f"{trk.family}/{trk.configs()[0]}"]
    model = model or ["cnn" if "cnn" in trk.models else trk.models[0]]
    params = _parse_params(param)
    seed_list = _parse_seeds(seeds)
    if exclude and submission != "all":
        raise typer.BadParameter("--exclude goes with the submission 'all'", param_hint="--exclude")
    if submission == "all":
        known, excluded = discover(), set(exclude or ())
        unknown = sorted(excluded - set(known))
        if unknown:
            raise typer.BadParameter(f"no submission named {', '.join(unknown)} (see `xaibench list`)",
                                     param_hint="--exclude")
        subs = [s for s in known.values() if s.kind == trk.submission_kind and trk.modality in s.modalities
                and s.name not in excluded]
    else:
        subs = [get_submission(submission)]
    for res in resource:
        for m in model:
            skipped = []
            no_copy: list[str] = []  # why the board has no hidden copy, once said
            for sub in subs:
                options: dict[str, Any] = dict(
                    track=track, resource=res, model=m, split=split, limit=limit, batch_size=batch_size,
                    seed=seed_list[0] if seed_list else seed, seeds=seed_list,
                    params=params if submission != "all" else {}, timeout_s=timeout, overwrite=overwrite,
                    results_dir=results, metric_params=_parse_params(metric_param), sandbox=sandbox.value,
                    memory_gb=memory_limit, processes=process_limit, scratch_gb=scratch_limit,
                    fit_timeout_s=fit_timeout, backend=backend.value, address=address, workers=workers)
                try:
                    r = evaluate(sub, **options)
                except XaibenchError as exc:
                    if submission == "all" and "cannot evaluate" in str(exc):
                        skipped.append(sub.name)
                        continue
                    raise
                p = r.metrics[r.primary_metric]
                mean = "n/a" if p.mean is None else f"{p.mean:.4f}"
                console.print(_result_line(r.submission["name"], f"{res}/{m}", f"{r.primary_metric} = {mean} "
                                           f"(n={p.n}, failed {r.n_failed}/{r.n_instances})", console.width))
                if randomisation and trk.randomisation_test:
                    _randomised_run(sub, {**options, "randomisation_limit": randomisation_limit,
                                          "randomisation_top": randomisation_top}, randomisation_seed, f"{res}/{m}")
                if hidden_draws and not no_copy:
                    _hidden_runs(sub, options, hidden_draws, hidden_limit, f"{res}/{m}", no_copy)
            if skipped:
                console.print(Text(f"not applicable to {res}/{m} (capabilities): {', '.join(skipped)}",
                                   style="dim"))


@app.command("attack")
def attack_cmd(
    submission: str = typer.Argument(..., help="A text explainer (name or folder with submission.toml)."),
    resource: str = typer.Option("robustness/mr-cnn", "--resource", "-r",
                                 help="A robustness resource: its original samples, model and synonym space."),
    model: str = typer.Option("cnn", "--model", "-m", help="The model under test the resource was attacked on."),
    samples: int = typer.Option(20, min=1, help="Attack the first N original samples of the resource."),
    attack: Optional[List[str]] = typer.Option(None, "--attack", "-a",
                                               help="tef and/or ra (repeatable; default both)."),
    n_candidates: int = typer.Option(15, min=1, max=200, help="Nearest neighbours per word (SPECS §2.4: N = 15)."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Seed of RA's random choices and of the explainer."),
    param: Optional[List[str]] = typer.Option(None, "--param", "-p",
                                              help="Override a submission parameter: key=value (repeatable)."),
    timeout: float = typer.Option(60.0, min=0, max=TIMEOUT_MAX_S, help="Time limit per explained text, seconds."),
    vectors: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                           help="The counter-fitted vector file the resource was built with (only "
                                           "when it was not the offline space)."),
    pos_check: str = typer.Option("before", help="before: tag candidates, then explain the POS-valid ones; after: "
                                  "explain first, tag lazily (same attacks; faster for cheap explainers)."),
    draws: Optional[int] = typer.Option(None, min=1, max=100, help="Re-explanations of every scored text under fresh "
                                        "ids (default: 1, or 3 when the explainer's output depends on the id)."),
    overwrite: bool = typer.Option(False, help="Attack again from scratch (the log of finished samples is dropped)."),
    results: Optional[Path] = typer.Option(None, file_okay=False,
                                           help="Results folder (default $XAIBENCH_HOME/results)."),
    sandbox: SandboxMode = typer.Option(SandboxMode.auto, help="Where the submission runs (as for evaluate)."),
    memory_limit: Optional[float] = typer.Option(None, min=0.25, max=1024.0,
                                                 help=f"Address-space limit of the worker, GiB (default here: "
                                                 f"{default_memory_gb(1):g}; see `evaluate --help`)."),
) -> None:
    """Attack a text explainer live with TEF / RA.

    TEF / RA search the explainer's OWN explanations (robustness track). The attack runs here; every
    explanation comes from the submission in the sandboxed worker, all candidates of a position in one
    call. The scored pairs are the original and attacked texts explained again under fresh ids (never
    the draws the search kept). Written to the robustness-live board of the resource and model;
    finished samples are logged, so an interrupted run resumes."""
    from benchmark.attacks.live import LIVE_ATTACKS, attack_submission

    r = attack_submission(submission, resource, model=model, samples=samples,
                          attacks=tuple(attack or LIVE_ATTACKS), n_candidates=n_candidates, seed=seed,
                          params=_parse_params(param), timeout_s=timeout, vectors=vectors, pos_check=pos_check,
                          draws=draws, overwrite=overwrite,
                          results_dir=results, sandbox=sandbox.value, memory_gb=memory_limit)
    p = r.metrics[r.primary_metric]
    ra = r.metrics.get("rob-acc-ra")
    figures = (f"{r.primary_metric} = {'n/a' if p.mean is None else f'{p.mean:.4f}'}"
               + (f", rob-acc-ra = {ra.mean:.4f}" if ra is not None and ra.mean is not None else "")
               + f" (samples {r.extra['live']['samples']}, failed {r.n_failed})")
    console.print(_result_line(r.submission["name"], f"{resource}/{model}", figures, console.width))


def _randomised_run(sub, options: dict, seed: int | None, where: str) -> None:
    """The randomisation test's run after a Result on the trained model, and one line on what it found (a
    model that cannot be randomised, or an explainer that fails on it, is said; the command goes on)."""
    from benchmark.errors import NotRandomisable
    from benchmark.models.variants.randomise import RANDOM_SEED
    from benchmark.runner import evaluate

    try:
        r = evaluate(sub, **options, randomised=True, randomisation_seed=RANDOM_SEED if seed is None else seed)
    except NotRandomisable as exc:
        console.print(Text(f"{sub.name} on {where}: {exc}", style="dim"))
        return
    sims = (r.extra.get("randomisation") or {}).get("similarity", {})
    p = r.metrics[r.primary_metric]
    parts = [f"{m} {s['mean']:.3f} (n={s['n']})" for m, s in sims.items() if s.get("mean") is not None]
    figures = (f"similarity to the trained model's maps: {', '.join(parts) or 'undefined'}; {r.primary_metric} = "
               + ("n/a" if p.mean is None else f"{p.mean:.4f}") + f" (failed {r.n_failed}/{r.n_instances})")
    console.print(_result_line(f"{r.submission['name']} (randomised model)", where, figures, console.width))


def _hidden_runs(sub, options: dict, draws: int, limit: int | None, where: str, no_copy: list[str]) -> None:
    """The hidden-copy runs after a Result on the published model (`benchmark.variant_runs.hidden`), one line each. A
    board without hidden copies is said once (`no_copy` keeps the reason) and a draw that cannot be built is said and
    skipped; an explainer that fails on a copy is recorded in that copy's Result, like any failure."""
    from benchmark.models.variants.hidden import NoHiddenCopy
    from benchmark.runner import evaluate

    for k in range(draws):
        try:
            r = evaluate(sub, **{**options, "hidden": k, "hidden_limit": limit})
        except NoHiddenCopy as exc:
            console.print(Text(str(exc), style="dim"))
            if k == 0 and "no hidden copy" in str(exc):
                no_copy.append(str(exc))
                return
            continue
        p = r.metrics[r.primary_metric]
        figures = (f"{r.primary_metric} = " + ("n/a" if p.mean is None else f"{p.mean:.4f}")
                   + f" (n={p.n}, failed {r.n_failed}/{r.n_instances})")
        console.print(_result_line(f"{r.submission['name']} (hidden copy {k})", where, figures, console.width))


def _result_line(name: str, where: str, figures: str, width: int) -> Text:
    """`name on where: figures` on one line, or, where that is wider than `width`, the figures on an
    indented second line: names and numbers are never cut or broken across lines."""
    text = Text.assemble((name, "bold"), f" on {where}:")
    sep = " " if text.cell_len + 1 + cell_len(figures) <= width else "\n    "
    text.append(sep + figures)
    return text


# The AIXI generator's scales (generators.aixi.build.SCALES; tests/test_cli_options.py keeps them equal).


@app.command("check")
def check_cmd(
    path: Path = typer.Argument(..., help="The submission folder (with submission.toml)."),
    sandbox: SandboxMode = typer.Option(SandboxMode.auto, help="Where it runs (as for `evaluate`)."),
    timeout: float = typer.Option(60.0, min=0.0, max=TIMEOUT_MAX_S,
                                  help="Per-instance time limit in seconds (0 = none)."),
) -> None:
    """Check a submission before you submit it.

    Reads submission.toml, then — in the sandboxed worker, on tiny built-in data of each modality it
    declares — checks one finite output of the right shape per instance, determinism under a seed and
    batch-size invariance (1, 7, 16). Exit status 1 when a check fails."""
    from rich.table import Table

    from benchmark.check import check_submission

    t0 = time.perf_counter()
    sub, rows = check_submission(path, sandbox=sandbox.value, timeout=timeout)
    table = Table(title=f"xaibench check {sub.name}", show_lines=False)
    for col in ("check", "model", "result"):
        table.add_column(col, no_wrap=col != "result")
    marks = {True: "[green]pass[/]", False: "[red]FAIL[/]", None: "[dim]skip[/]"}
    for r in rows:
        table.add_row(r.check, r.model, f"{marks[r.ok]} {r.detail}")
    console.print(table)
    failed = [r for r in rows if r.ok is False]
    console.print(f"{'FAILED' if failed else 'passed'}: {sum(r.ok is True for r in rows)} passed, "
                  f"{len(failed)} failed, {sum(r.ok is None for r in rows)} skipped in "
                  f"{time.perf_counter() - t0:.1f} s")
    if failed:
        raise typer.Exit(1)


class Kind(StrEnum):
    """`xaibench new`'s kinds of submission."""

    explainer = "explainer"
    oracle = "oracle"


class Modality(StrEnum):
    """`--modality`: the inputs a new submission handles."""

    image = "image"
    text = "text"


@app.command("new")
def new_cmd(
    kind: Kind = typer.Argument(..., help="explainer (one map per instance) or oracle (fit, then judge)."),
    name: str = typer.Argument(..., help="The submission's name: lower-case letters, digits and '-'; the folder "
                               "./NAME is written."),
    modality: Modality = typer.Option(Modality.image, help="The inputs it handles (oracles: text)."),
    source: Optional[str] = typer.Option(None, "--from", metavar="captum.attr.X",
                                         help="Wrap captum's attribution method X (e.g. captum.attr.Saliency)."),
) -> None:
    """Start a submission: a ready folder ./NAME.

    Writes submission.toml (every field explained), a typed module whose explain (or fit and judge) keeps
    the contract — `xaibench check NAME/` passes as generated — and a README with the five commands from
    check to submit. An existing folder is never touched."""
    from benchmark.submission.scaffold import new_submission

    folder = new_submission(kind.value, name, modality.value, source)
    console.print(f"wrote {folder}/ (submission.toml, {'oracle' if kind == Kind.oracle else 'explainer'}.py, "
                  f"README.md); next: xaibench check {name}/", highlight=False, soft_wrap=True)


@app.command("verify")
def verify_cmd(
    paths: Optional[List[Path]] = typer.Argument(None, help="Result files or folders (default: every Result "
                                                 "under $XAIBENCH_HOME/results)."),
) -> None:
    """Re-score Results from their cached outputs.

    Checks the signature, the instances, the outputs digest and every metric. Verdicts are recorded;
    the leaderboard marks Results that failed (the static board leaves them out). Exit status 1 when
    any Result fails."""
    from benchmark.resources import data_home
    from benchmark.verify import record, verify_result

    files: list[Path] = []
    for p in paths or [data_home() / "results"]:
        if p.is_dir():
            files += sorted(p.rglob("*.json"))
        elif p.exists():
            files.append(p)
        else:
            raise XaibenchError(f"{p} does not exist; give Result files or folders")
    verdicts = []
    for f in files:
        v = verify_result(f)
        verdicts.append(v)
        mark = "[green]ok[/]" if v.ok else "[red]FAILED[/]"
        console.print(f"{mark} {f}", highlight=False, soft_wrap=True)
        for problem in v.problems:
            console.print(f"    {problem}", highlight=False, soft_wrap=True)
    if verdicts:
        record(verdicts)
    bad = sum(not v.ok for v in verdicts)
    console.print(f"{len(verdicts) - bad} of {len(verdicts)} Results verified")
    if bad:
        raise typer.Exit(1)


def _load_plugins() -> None:
    for ep in iter_entry_points("xaibench.commands"):
        ep.load()(app)


def _run(argv: list[str]) -> None:
    """Run one `xaibench` command in this process; a usage error or a failed command raises
    `XaibenchError` with one line (what the demo reports for a failed step)."""
    try:
        code = app(argv, prog_name="xaibench", standalone_mode=False)
    except _ClickException as exc:
        raise XaibenchError(f"`xaibench {' '.join(argv)}`: {_usage_message(exc)}") from None
    if code not in (0, None):
        raise XaibenchError(f"`xaibench {' '.join(argv)}` failed (exit {code})")


def _usage_message(exc: _ClickException) -> str:
    """A click error as one line: its message with whitespace collapsed (click and typer put choices on
    separate lines), pydantic's 'Value error, ' prefix dropped, and where to read the command's help."""
    message = " ".join(exc.format_message().split()).replace("Value error, ", "")
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and isinstance(exc, _UsageError):
        message += f" (see `{ctx.command_path} --help`)"
    return message


def _fail(message: str, code: int = 2) -> None:
    console.print(Text.assemble(("error:", "red"), " ", message), highlight=False, soft_wrap=True)
    sys.exit(code)


_plugins_loaded = False


def load_plugins() -> typer.Typer:
    """Add the commands of the `xaibench.commands` entry points to `app` (once); returns `app`."""
    global _plugins_loaded
    if not _plugins_loaded:
        _load_plugins()
        tidy_help(app)
        _fold_option_help()
        _plugins_loaded = True
    return app


_ITEM = re.compile(r"^\s*([*\-•]|\d+[.)])\s")
SUMMARY_MAX = 60  # characters of a command's one-line summary in `xaibench --help` at 80 columns


def reflow(text: str) -> str:
    """A docstring as help text: dedented, the source line breaks inside a paragraph joined (the
    terminal wraps it to its width), paragraphs and list items (`* `, `- `, `1. `) kept on their own."""
    out = []
    for para in inspect.cleandoc(text or "").split("\n\n"):
        lines: list[str] = []
        for line in para.split("\n"):
            if lines and line.strip() and not _ITEM.match(line):
                lines[-1] = lines[-1].rstrip() + " " + line.strip()
            else:
                lines.append(line.rstrip())
        out.append("\n".join(lines))
    return "\n\n".join(out)


def summary(text: str) -> str:
    """One line for a command list: the help's first paragraph (PEP 257's summary line), without its
    final period. Commands keep it under SUMMARY_MAX characters (tested), so it never wraps."""
    return reflow(text).split("\n\n")[0].strip().rstrip(".")


FLAG_METAVARS = ("bool", "boolean")  # the value column click draws for a boolean flag (`<bool>`): left blank


def _fold_option_help() -> None:
    """Typer lays an option's help, default and range side by side (`rich.columns.Columns`), which cuts
    a token longer than the narrow help column at 80 columns with "…" (a path, a resource name). Stack
    them instead (`rich.console.Group`), each text folding such a token onto the next line: nothing is
    lost. Left as typer has it when its internals differ (the --help tests then say so)."""
    try:
        from rich.columns import Columns
        from rich.console import Group
        from typer import rich_utils
    except ImportError:
        return
    original = getattr(rich_utils, "_get_parameter_help", None)
    if original is None or getattr(original, "_xaibench_folds", False):
        return

    def stacked(*args, **kwargs):
        got = original(*args, **kwargs)
        if not isinstance(got, Columns):
            return got
        for item in got.renderables:
            if isinstance(item, Text):
                item.overflow = "fold"
        return Group(*got.renderables)

    stacked._xaibench_folds = True  # type: ignore[attr-defined]  # a marker on the function: patched once
    rich_utils._get_parameter_help = stacked

    from rich.table import Table

    class _Table(Table):
        """Typer's options / arguments tables, laid out for narrow terminals: an option's names (long,
        short, negative) stacked in one column kept whole, the type column at most 18 cells, the help
        folded in what is left — nothing cut with "…", nothing hidden; a boolean flag's value column
        (`<bool>`) is left blank, as a flag takes no value. Other tables are untouched."""

        def add_row(self, *renderables, **kwargs):
            cells = list(renderables)
            if len(cells) in (6, 7) and all(isinstance(c, Text) for c in cells[-6:-1]):
                *required, long, short, neg_long, neg_short, kind, help_ = cells
                if kind.plain.strip().strip("<>[]").lower() in FLAG_METAVARS:
                    kind = Text("")  # a flag takes no value: drawn as its name alone
                names = [t for t in (long, short, neg_long, neg_short) if t.plain]
                stacked = Text("\n").join(names) if names else Text("")
                cells = [*required, stacked, kind, help_]
                while len(self.columns) < len(cells):
                    k = len(self.columns)
                    last = k == len(cells) - 1
                    kind_col = k == len(cells) - 2
                    self.add_column(no_wrap=not (last or kind_col), overflow="fold",
                                    max_width=18 if kind_col else None, ratio=1 if last else None)
            return super().add_row(*cells, **kwargs)

    if getattr(rich_utils, "Table", None) is Table:
        rich_utils.Table = _Table  # type: ignore[misc]  # a monkeypatch: typer's help renders through this name


def tidy_help(typer_app: typer.Typer) -> None:
    """Every command's help reflowed (`reflow`) and given a one-line `summary` for command lists,
    sub-command groups included."""
    for info in typer_app.registered_commands:
        text = info.help or inspect.getdoc(info.callback) or ""
        info.help = reflow(text)
        info.short_help = summary(info.short_help or text)
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        if sub is not None:
            text = group.help or (sub.info.help if sub.info else None) or ""
            if isinstance(text, str) and text:
                group.help = reflow(text)
                group.short_help = summary(group.short_help or text)
            tidy_help(sub)


def main(argv: list[str] | None = None) -> None:
    """The `xaibench` entry point: every usage error (bad value, missing argument, unknown option or
    command) and every `XaibenchError` is one line `error: ...` on stderr with exit status 2; options are
    validated while parsing, so nothing has run or been written when such an error is printed."""
    from benchmark.isolation import allocator

    allocator.tune()
    load_plugins()
    try:
        code = app(argv if argv is not None else sys.argv[1:], prog_name="xaibench", standalone_mode=False)
    except XaibenchError as exc:
        _fail(str(exc))
    except OSError as exc:  # a full disk or a folder this user may not write: say what would help
        from benchmark.resources import data_home

        err = storage_error(exc, data_home())  # without a file name: most writes go to the data home
        if err is None:
            raise
        _fail(str(err))
    except _ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command group: its help is the answer
            if exc.format_message():  # typer's rich help is printed already; plain click's is the message
                print(exc.format_message())
            sys.exit(exc.exit_code)
        _fail(_usage_message(exc), exc.exit_code)
    except typer.Abort:  # Ctrl-D at a prompt
        _fail("aborted", 1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
