"""The `xaibench` command line.

Core commands live here (`list`, `evaluate`, `demo`); packages the harness must not import
(`generators`, `leaderboard`) add theirs through the `xaibench.commands` entry-point group.
Every `XaibenchError` and every usage error (a bad option value, a missing argument, an unknown option)
is printed as one line (`error: ...`) with exit status 2. Options are validated while the command line is
parsed (ranges and choices, `benchmark.options`), before a command runs or writes anything.
"""

from __future__ import annotations

import json
import sys
import time
from enum import Enum, StrEnum
from pathlib import Path
from typing import List, Optional

import typer
from rich.cells import cell_len
from rich.text import Text

from benchmark.errors import XaibenchError
from benchmark.options import SEED_MAX, TIMEOUT_MAX_S, lazy_choice
from benchmark.progress import console
from benchmark.registry import iter_entry_points

try:
    from click.exceptions import Abort as _Abort  # what an older typer raises on Ctrl-D
except ImportError:
    _Abort = typer.Abort

try:  # recent typer carries its own copy of click
    from typer._click.exceptions import ClickException as _ClickException, UsageError as _UsageError
except ImportError:  # older typer runs on click itself
    from click.exceptions import ClickException as _ClickException, UsageError as _UsageError

app = typer.Typer(
    name="xaibench",
    help="Ground-truth benchmarks for explanation methods: generate resources, evaluate explainers, "
    "view leaderboards.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


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


class SandboxMode(str, Enum):
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
    """List tracks (metrics, models), resources found locally or in the mirror, and submissions."""
    from benchmark.listing import resources_listing, submissions_listing, tracks_listing
    from benchmark.metrics import METRICS
    from benchmark.resources.store import list_local_resources
    from benchmark.submission import discover

    console.print(tracks_listing(_tracks(), METRICS))
    console.print(resources_listing(list_local_resources()))
    console.print(submissions_listing(discover()))


Backend = StrEnum("Backend", {b: b for b in ("local", "ray")})  # benchmark.backends.BACKENDS


@app.command("evaluate")
def evaluate_cmd(
    submission: str = typer.Argument(..., help="A submission name (see `xaibench list`), a folder with "
                                     "submission.toml, or 'all' for every built-in explainer (or oracle) of the track."),
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
    param: Optional[List[str]] = typer.Option(None, "--param", "-p",
                                              help="Override a submission parameter: key=value (repeatable)."),
    metric_param: Optional[List[str]] = typer.Option(
        None, "--metric-param", help="Override a metric default: key=value, e.g. attribution=absolute "
        "(aixi: score |S| instead of the signed map)."),
    timeout: float = typer.Option(60.0, min=0, max=TIMEOUT_MAX_S,
                                  help="Per-instance time limit in seconds (0 = none; at most a day)."),
    overwrite: bool = typer.Option(False, help="Recompute cached outputs and replace the result."),
    results: Optional[Path] = typer.Option(None, file_okay=False,
                                           help="Results folder (default $XAIBENCH_HOME/results)."),
    sandbox: SandboxMode = typer.Option(SandboxMode.auto,
                                help="Where submissions run: auto = bubblewrap sandbox when it works here, else "
                                "a plain worker process (with a warning); bwrap = sandbox or refuse; none = plain "
                                "worker process."),
    memory_limit: float = typer.Option(8.0, min=0.25, max=1024.0, help="Address-space limit of the submission's "
                                       "worker, GiB."),
    fit_timeout: float = typer.Option(3600.0, min=0, max=TIMEOUT_MAX_S,
                                      help="Oracles (trust track): time limit of fit() per worker start, "
                                      "seconds (0 = none)."),
    backend: Backend = typer.Option(Backend.local, help="Where batches are explained: local = one worker here; "
                                    "ray = Ray tasks, each with its own worker (pip install 'xaibench[ray]')."),
    address: Optional[str] = typer.Option(None, help="ray: the cluster to join (e.g. auto, host:6379, "
                                          "ray://host:10001); default: a private local Ray instance."),
    workers: Optional[int] = typer.Option(None, min=1, max=4096, help="ray: CPUs of the local Ray instance "
                                          "(default: all)."),
) -> None:
    """Explain every instance of a resource with a submission, score against ground truth, write a Result.

    The submission runs in a fresh, sandboxed worker process that never sees ground truth. Outputs are
    cached per instance: an interrupted run resumes where it stopped."""
    from benchmark.runner import evaluate
    from benchmark.submission import discover, get_submission
    from benchmark.tracks import get_track

    trk = get_track(track)
    resource = resource or [f"{trk.family}/{trk.configs()[0]}"]
    model = model or ["cnn" if "cnn" in trk.models else trk.models[0]]
    params = _parse_params(param)
    if submission == "all":
        subs = [s for s in discover().values() if s.kind == trk.submission_kind and trk.modality in s.modalities]
    else:
        subs = [get_submission(submission)]
    for res in resource:
        for m in model:
            skipped = []
            for sub in subs:
                try:
                    r = evaluate(sub, track=track, resource=res, model=m, split=split, limit=limit,
                                 batch_size=batch_size, seed=seed, params=params if submission != "all" else {},
                                 timeout_s=timeout, overwrite=overwrite, results_dir=results,
                                 metric_params=_parse_params(metric_param), sandbox=sandbox.value,
                                 memory_gb=memory_limit, fit_timeout_s=fit_timeout, backend=backend.value,
                                 address=address, workers=workers)
                except XaibenchError as exc:
                    if submission == "all" and "cannot evaluate" in str(exc):
                        skipped.append(sub.name)
                        continue
                    raise
                p = r.metrics[r.primary_metric]
                mean = "n/a" if p.mean is None else f"{p.mean:.4f}"
                console.print(_result_line(r.submission["name"], f"{res}/{m}", f"{r.primary_metric} = {mean} "
                                           f"(n={p.n}, failed {r.n_failed}/{r.n_instances})", console.width))
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
    memory_limit: float = typer.Option(8.0, min=0.25, max=1024.0, help="Address-space limit of the worker, GiB."),
) -> None:
    """Attack a text explainer live: TEF / RA search its OWN explanations (robustness track).

    The attack runs here; every explanation comes from the submission in the sandboxed worker, all
    candidates of a position in one call. The scored pairs are the original and attacked texts explained
    again under fresh ids (never the draws the search kept). Written to the robustness-live board of the
    resource and model; finished samples are logged, so an interrupted run resumes."""
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


def _result_line(name: str, where: str, figures: str, width: int) -> Text:
    """`name on where: figures` on one line, or, where that is wider than `width`, the figures on an
    indented second line: names and numbers are never cut or broken across lines."""
    text = Text.assemble((name, "bold"), f" on {where}:")
    sep = " " if text.cell_len + 1 + cell_len(figures) <= width else "\n    "
    text.append(sep + figures)
    return text


# The AIXI generator's scales (generators.aixi.build.SCALES; tests/test_cli_options.py keeps them equal).
DemoScale = StrEnum("DemoScale", {s: s for s in ("tiny", "demo", "default", "paper")})


@app.command("demo")
def demo_cmd(
    scale: DemoScale = typer.Option("demo", help="Generator scale of the demo resources (demo = 8,000 train / "
                                    "200 validation images; as `xaibench generate aixi --scale`)."),
    limit: int = typer.Option(40, min=1, help="Validation images explained per (resource, model)."),
    epochs: int = typer.Option(6, min=1, help="CNN training epochs (`xaibench train aixi`'s recipe)."),
    augment_removal: float = typer.Option(0.5, min=0.0, max=1.0,
                                          help="Object-removal augmentation of the CNN's training images (0 = "
                                          "off; see `xaibench train aixi --help`)."),
) -> None:
    """Offline end to end: generate AIXI-Shape and AIXI-Color (SSIN), train the CNN on each (with object-removal
    augmentation: AIXI-Color always has six circles, and a CNN that never saw fewer misreads the
    explainers' object-removed images), evaluate
    every built-in explainer on both models under test (the function itself and the CNN), print the
    leaderboard."""
    resources = ["aixi/shape-ssin", "aixi/color-ssin"]
    steps = [
        ["generate", "aixi", "--dataset", "shape", "--dataset", "color", "--scale", str(scale), "--functions", "ssin"],
        ["train", "aixi", *resources, "--epochs", str(epochs), "--augment-removal", str(augment_removal)],
        ["evaluate", "all", "--track", "aixi", *[a for r in resources for a in ("--resource", r)],
         "--model", "function", "--model", "cnn", "--limit", str(limit)],
        ["leaderboard", "--track", "aixi"],
    ]
    for argv in steps:
        console.rule(f"xaibench {' '.join(argv)}")
        _run(argv)


@app.command("check")
def check_cmd(
    path: Path = typer.Argument(..., help="The submission folder (with submission.toml)."),
    sandbox: SandboxMode = typer.Option(SandboxMode.auto, help="Where it runs (as for `evaluate`)."),
    timeout: float = typer.Option(60.0, min=0.0, max=TIMEOUT_MAX_S,
                                  help="Per-instance time limit in seconds (0 = none)."),
) -> None:
    """Check a submission before you submit it: submission.toml, then — in the sandboxed worker, on tiny
    built-in data of each modality it declares — one finite output of the right shape per instance,
    deterministic under a seed, batch-size invariant (1, 7, 16). Exit status 1 when a check fails."""
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
                  f"{len(failed)} failed, {sum(r.ok is None for r in rows)} skipped in {time.perf_counter() - t0:.1f} s")
    if failed:
        raise typer.Exit(1)


@app.command("verify")
def verify_cmd(
    paths: Optional[List[Path]] = typer.Argument(None, help="Result files or folders (default: every Result "
                                                 "under $XAIBENCH_HOME/results)."),
) -> None:
    """Re-score Results from their cached outputs: signature, instances, outputs digest and every metric.

    Verdicts are recorded; the leaderboard marks Results that failed (the static board leaves them out).
    Exit status 1 when any Result fails."""
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
    code = app(argv, prog_name="xaibench", standalone_mode=False)
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
        _plugins_loaded = True
    return app


def main(argv: list[str] | None = None) -> None:
    """The `xaibench` entry point: every usage error (bad value, missing argument, unknown option or
    command) and every `XaibenchError` is one line `error: ...` on stderr with exit status 2; options are
    validated while parsing, so nothing has run or been written when such an error is printed."""
    from benchmark import allocator

    allocator.tune()
    load_plugins()
    try:
        code = app(argv if argv is not None else sys.argv[1:], prog_name="xaibench", standalone_mode=False)
    except XaibenchError as exc:
        _fail(str(exc))
    except _ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command group: its help is the answer
            if exc.format_message():  # typer's rich help is printed already; plain click's is the message
                print(exc.format_message())
            sys.exit(exc.exit_code)
        _fail(_usage_message(exc), exc.exit_code)
    except (typer.Abort, _Abort):
        _fail("aborted", 1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
