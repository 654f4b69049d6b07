"""`xaibench demo` (`make demo`): every kind of ground truth, end to end, offline, in one command.

For each of the five tracks the demo builds a small resource from the data mirror, trains what the
track needs, evaluates the built-in explainers (or oracles) on it, and finally prints the leaderboard
and builds the static site. Every step is an ordinary `xaibench` command, printed before it runs, so a
reader can re-run any of them at a larger scale (the commands and their scales: `PLAN`).

Resumable and forgiving, by construction:
* a resource that is already built is not built again (`Step.skip_if`), evaluations resume from their
  caches, so a second run — or a run after one killed halfway — redoes only what is missing;
* a track whose data is not in the mirror (`Track.needs`) is skipped with the reason, and a track whose
  step fails is reported with the error, while the other tracks go on; the summary at the end names
  every track's outcome and time. Nothing here prints a traceback for a failed step.

The scale of each track is chosen so the whole demo fits inside 10 minutes on a 2-core machine after
set-up (9 min 26 s idle, 2026-11-29; `docs/demo.md` gives the measured times and what the scale leaves out);
each board says what it ranks and whether it discriminates at that scale.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from benchmark.errors import XaibenchError

__all__ = ["PLAN", "Step", "Track", "TrackOutcome", "lane_env", "run_demo", "run_lanes"]


@dataclass(frozen=True)
class Step:
    """One `xaibench` command of the demo; skipped when `skip_if` (a resource name) is already built."""

    argv: tuple[str, ...]
    skip_if: str | None = None
    what: str = ""

    @property
    def text(self) -> str:
        return "xaibench " + " ".join(self.argv)


@dataclass(frozen=True)
class Track:
    """A track's part of the demo: what it needs from the data mirror and its steps, in order."""

    name: str
    title: str
    needs: tuple[str, ...]  # folders of the data mirror (e.g. "rt_polarity"); empty = nothing
    steps: tuple[Step, ...]
    minutes: float = 1.0  # what it took in the last measured run (docs/demo.md): the longest tracks start first
    # a resource another track of the plan builds (its `Step.skip_if`): this one starts once it is built — or once
    # that track has ended without it, and then fails on its own — so its steps can run beside the builder's rest
    after: str | None = None

    @property
    def kind(self) -> str:
        """The track of the benchmark this part of the demo is of (`rcnn` for `rcnn:l2x`)."""
        return self.name.split(":", 1)[0]


@dataclass
class TrackOutcome:
    name: str
    status: str = "not run"  # built | skipped | failed
    reason: str = ""
    seconds: float = 0.0
    commands: list[str] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)  # per command run (a skipped one: 0)


RCNN_POOL = 400
# the quick L2X of docs/rcnn.md: 2,000 of the model's unlabeled texts, at most 10 epochs (patience 3)
L2X_QUICK = ("-p", "max_texts=2000", "-p", "epochs=10", "-p", "patience=3")


def _evaluate(track: str, resource: str, model: str, limit: int | None = None, *extra: str,
              submission: str = "all", what: str = "") -> Step:
    argv = ["evaluate", submission, "--track", track, "--resource", resource, "--model", model]
    if limit is not None:
        argv += ["--limit", str(limit)]
    what = what or (f"every built-in {'oracle' if track == 'trust' else 'explainer'}" if submission == "all" else "")
    return Step(tuple(argv + list(extra)), what=what)


# The demo, track by track. Scales are the demo's own (small), chosen for time; `docs/demo.md`.
PLAN: tuple[Track, ...] = (
    Track("aixi", "AIXI: images whose labels are known functions of the drawn objects", (), (
        Step(("generate", "aixi", "--dataset", "shape", "--scale", "demo", "--functions", "ssin"),
             skip_if="aixi/shape-ssin", what="AIXI-Shape images and their exact ground-truth maps"),
        # the model under test is the attribution function itself (exact ground truth, nothing to train);
        # `xaibench train aixi aixi/shape-ssin` adds the authors' CNN (docs/aixi.md)
        # every evaluation also runs the randomisation test (docs/leaderboard.md); its verdicts hold on 5 of the
        # 40 images (measured 2026-11-27), so it runs on the first 10
        # and on three hidden copies of the function model (drawn from this home's secret: the board ranks by them),
        # each on the same 40 images (`--limit` bounds the copies too): sized so the board's verdict and its ranks
        # hold on the copies (docs/leaderboard.md, "Copies sized to rank")
        _evaluate("aixi", "aixi/shape-ssin", "function", 40, "--randomisation-limit", "10", "--hidden-draws", "3"),
        # the metric board (docs/metric-board.md): which ground-truth-free metric agrees with the exact maps; its
        # verdicts and τ_b are the same on the first 20 images as on all 40 (2026-11-29), at half the cost
        Step(("metrics-board", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function", "--limit",
              "20"), what="the ground-truth-free metrics (Quantus) on the same maps, scored against the ground truth"),
    ), minutes=2.3),
    Track("idc", "IDC: pseudo interpretation ground truth (WGA) for a Kim CNN on MR", ("rt_polarity",), (
        Step(("generate", "idc", "--pgt", "wga", "--no-han", "--epochs", "4"), skip_if="idc/mr-wga",
             what="the Kim CNN on MR and the WGA pseudo ground truth"),
        # the published model on 30 documents (its scores are shown; the board ranks from the copy), the
        # randomisation test's verdicts hold on 10 of them (2026-11-27): it runs on those; one hidden copy (a
        # Kim CNN trained from the secret on MR with planted words; its WGA recomputed) on the first 150 documents it
        # classifies correctly: the copies barely differ from one another, so one copy with more documents sizes
        # the board to rank (docs/leaderboard.md, "Copies sized to rank"). Kernel SHAP is left out at the demo's
        # scale (65 s of the board's 213, 2026-11-29; not in the paper's Table 1)
        _evaluate("idc", "idc/mr-wga", "cnn", 30, "--randomisation-limit", "10", "--hidden-draws", "1",
                  "--hidden-limit", "150", "--exclude", "kernel-shap"),
    ), minutes=2.8),
    Track("rcnn", "RCNN: tokens Lei's rationale model never selects contribute nothing", ("beer_advocate_lei2016",), (
        # up to 10 epochs, stopping 2 epochs after the best epoch inside Lei's 10–13 % band, never before one
        # is reached (#35): on this project's CPUs (2026-11-29, four runs, the same bits) no epoch of 1–16 lands in
        # the band and the epoch nearest to it, kept, is the 9th (9.9 %): 16 epochs cost 100 s more for the same
        # model (the board says it is below Lei's targets); RCNN_POOL pool
        # reviews, so that the hidden copy keeps enough verified reviews to rank on (150 gave the copy 12 and the
        # verdict's interval reached 0; 400 give the published model 53 and the copy its 30, 2026-11-29)
        Step(("generate", "rcnn", "--aspect", "appearance", "--seed", "1", "--seeds", "1", "--epochs", "10",
              "--patience", "2", "--pool-limit", str(RCNN_POOL), "--accept-below-target"),
             skip_if="rcnn/beer-appearance",
             what="Lei's rationale model on BeerAdvocate appearance, the quick recipe until an epoch selects 10–13 % "
                  f"of the dev tokens (at most 10 epochs; its board says whether it meets Lei's targets), and "
                  f"{RCNN_POOL} pool reviews to verify"),
        # the published model on its first 15 verified reviews; the randomisation test on the first 5 (every
        # method's maps change, signed ρ −0.14 to +0.02, and its %first goes to 100: the verdicts of 15 hold on 3,
        # 2026-11-29); one hidden copy (an RCNN trained from the secret with vetoed words) on its first 30
        _evaluate("rcnn", "rcnn/beer-appearance", "rcnn", 15, "--exclude", "l2x", "--randomisation-limit", "5",
                  "--hidden-draws", "1", "--hidden-limit", "30"),
    ), minutes=6.8),
    Track("rcnn:l2x", "RCNN: L2X beside the other explainers, once Lei's model is trained",
          ("beer_advocate_lei2016",), (
        # L2X (Chen et al. 2018), trained quickly (docs/rcnn.md: 2,000 texts, at most 10 epochs keeps the paper's
        # order, LIME and SHAP above L2X), on each model it explains: the published one, its randomised copy and
        # the hidden copy. Its randomisation test runs on all 15 reviews: on the first 5 its %first was 60 on both
        # models, so it was called model-blind and left unranked; on 15 it is 40 against 86.7 (2026-11-29)
        _evaluate("rcnn", "rcnn/beer-appearance", "rcnn", 15, *L2X_QUICK, "--timeout", "0",
                  "--hidden-draws", "1", "--hidden-limit", "30", submission="l2x",
                  what="L2X, trained quickly on each model it explains (the paper's finding: LIME and SHAP above it)"),
    ), minutes=1.6, after="rcnn/beer-appearance"),
    Track("trust", "Trust: oracles judge explained predictions against people's rationales", ("hatexplain",), (
        # TOKI's ensemble at the demo's scale: the two static stand-ins (MiniLM's word-piece table, GloVe 50-d). The
        # third pre-trained one, MiniLM on the isolated word (float64, so a word's vector never depends on its
        # batch), cost 190 s of the track's 294 — θ_relate on WordNet's pairs, and every oracle run encoding its
        # posts' words again — (2026-11-29); `xaibench generate trust --embeddings` builds all five
        Step(("generate", "trust", "--embeddings", "--embedding-model", "minilm-static", "--embedding-model",
              "glove-50d"), skip_if="trust/embeddings",
             what="two pre-trained embedding models (MiniLM's word pieces, GloVe) and θ_relate of each"),
        Step(("generate", "trust", "--dataset", "hatexplain", "--model", "cnn-sup", "--epochs", "2", "--test-limit",
              "120", "--num-samples", "500", "--validation-limit", "0", "--train-explain-limit", "200"),
             skip_if="trust/hatexplain-cnn-sup",
             what="a rationale-supervised HateXplain CNN, its explained test predictions and their trust labels"),
        *(_evaluate("trust", "trust/hatexplain-cnn-sup", "cnn-sup", None, submission=s)
          for s in ("toki-lime", "toki-lime-ki", "naive-oracle", "random-oracle", "text-length-oracle",
                    "explanation-size-oracle", "rationale-ceiling")),
    ), minutes=1.4),
    Track("robustness", "Robustness: TEF swaps words without changing the prediction", ("rt_polarity",), (
        Step(("generate", "robustness", "--model", "cnn", "--samples", "20", "--explainer", "saliency",
              "--attack", "tef", "--attack", "ra", "--policy-samples", "0"),
             skip_if="robustness/mr-cnn", what="a Kim CNN on frozen GloVe and TEF / RA attacks on 20 sentences"),
        # Kernel SHAP and L2X left out at the demo's scale: 97 s and 70 s of the board's 280 (captum's coalition
        # loop at 2·n + 2048 coalitions per text; L2X trains a selector on each model), 2026-11-29; the same
        # command without --exclude runs them. The randomisation test on the first 35 of the 281 texts (the first
        # samples' originals and TEF texts, `RobustnessTrack.first_instances`): every verdict and rank of the
        # test on all 281 holds on 70 and on 35 (2026-11-29). 20 sentences stay: on 10 no TEF attack of the
        # board's texts counted, rACC TEF had no value and the board no verdict (2026-11-29)
        _evaluate("robustness", "robustness/mr-cnn", "cnn", None, "--randomisation-limit", "35", "--exclude",
                  "kernel-shap", "--exclude", "l2x"),
    ), minutes=3.2),
)


def _built(resource: str) -> str | None:
    """The revision of `resource` when it is built locally (checked), else None."""
    from benchmark.resources import load_resource

    try:
        return load_resource(resource, hub=False).revision
    except Exception:  # noqa: BLE001 - not built, half-built or damaged: the step builds it again
        return None


def _missing(needs: tuple[str, ...]) -> str:
    """Why a track cannot run here ("" when its data is in the mirror)."""
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if not needs:
        return ""
    if root is None:
        return "no data mirror (set XAIBENCH_DATA_MIRROR to the folder holding the corpora)"
    absent = [n for n in needs if not (Path(root) / n).is_dir()]
    return f"the data mirror {root} has no {', '.join(absent)}" if absent else ""


def run_demo(run: Callable[[list[str]], None], say: Callable[[str], None],
             tracks: tuple[str, ...] | None = None, plan: tuple[Track, ...] = PLAN) -> list[TrackOutcome]:
    """Run the demo's tracks (all, or those named in `tracks`) through `run` (an `xaibench` argv
    runner that raises `XaibenchError` on failure); `say` prints a line. Returns each track's outcome."""
    outcomes = []
    for track in plan:
        if tracks and track.kind not in tracks:
            continue
        out = TrackOutcome(track.name)
        outcomes.append(out)
        say(f"[{track.name}] {track.title}")
        why = _missing(track.needs)
        if why:
            out.status, out.reason = "skipped", why
            say(f"[{track.name}] skipped: {why}")
            continue
        t0 = time.perf_counter()
        try:
            for step in track.steps:
                out.commands.append(step.text)
                out.step_seconds.append(0.0)
                revision = _built(step.skip_if) if step.skip_if else None
                if revision:
                    say(f"$ {step.text}  # already built ({step.skip_if} @ {revision[:12]}): skipped")
                    continue
                say(f"$ {step.text}" + (f"  # {step.what}" if step.what else ""))
                t_step = time.perf_counter()
                try:
                    run(list(step.argv))
                finally:
                    out.step_seconds[-1] = round(time.perf_counter() - t_step, 1)
                say(f"[{track.name}] {out.step_seconds[-1]:.0f} s: {step.text}")
            out.status = "built"
        except XaibenchError as exc:
            out.status, out.reason = "failed", str(exc).splitlines()[0][:300]
            say(f"[{track.name}] failed: {out.reason} — the other tracks go on")
        except SystemExit as exc:  # a command that exits (typer) is a failed step, not the end of the demo
            if exc.code in (0, None):
                out.status = "built"
            else:
                out.status, out.reason = "failed", f"`{out.commands[-1]}` exited with status {exc.code}"
                say(f"[{track.name}] failed: {out.reason} — the other tracks go on")
        out.seconds = time.perf_counter() - t0
    return outcomes


# --------------------------------------------------------------------------------------------------
# Tracks side by side. Each track runs in its own process (`python -m generators.demo TRACK-JSON`, which
# runs `run_demo` on that one track), at most `jobs` at once, the longest first; every process and the
# sandboxed workers it starts compute on ONE thread (`lane_env`), so a track's numbers do not depend on
# how many tracks run beside it, on `jobs` or on the machine's core count (the trained weights included).
# Their lines are printed as they come, each after its track's name.

OUTCOME = "xaibench-demo-outcome "  # the last line a track's process prints: its TrackOutcome as JSON
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def lane_env(columns: int) -> dict[str, str]:
    """The environment of a track's process: one thread for torch, OpenMP and BLAS (its sandboxed workers
    inherit it), no progress bars (two tracks' bars would overwrite each other), lines `columns` wide."""
    env = {**os.environ, **{v: "1" for v in THREAD_VARS}, "XAIBENCH_PROGRESS": "0", "COLUMNS": str(columns),
           "PYTHONUNBUFFERED": "1"}
    env.pop("LINES", None)
    return env


def _track_json(track: Track) -> str:
    return json.dumps({"name": track.name, "title": track.title, "needs": list(track.needs),
                       "steps": [{"argv": list(s.argv), "skip_if": s.skip_if, "what": s.what} for s in track.steps]})


def _track_from_json(text: str) -> Track:
    d = json.loads(text)
    return Track(d["name"], d["title"], tuple(d["needs"]),
                 tuple(Step(tuple(s["argv"]), s["skip_if"], s["what"]) for s in d["steps"]))


def run_lanes(say: Callable[[str], None], tracks: tuple[str, ...] | None = None, plan: tuple[Track, ...] = PLAN,
              jobs: int | None = None, columns: int = 100) -> list[TrackOutcome]:
    """Run the demo's tracks (all, or those named in `tracks`), each in its own one-thread process, `jobs`
    at once (default: one per core, at most one per track), the longest (`Track.minutes`) first — but a track that
    waits for another's resource (`Track.after`) as soon as it is built —; `say`
    prints a line. Returns each track's outcome in the plan's order. A process that dies without
    reporting (killed, out of memory) fails its track with the exit status; Ctrl-C stops them all."""
    chosen = [t for t in plan if not tracks or t.kind in tracks]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(chosen) or 1))
    width = max((len(t.name) for t in chosen), default=0)
    todo = sorted(chosen, key=lambda t: -t.minutes)
    builder = {s.skip_if: t.name for t in chosen for s in t.steps if s.skip_if}
    lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
    running: dict[str, subprocess.Popen] = {}
    outcomes: dict[str, TrackOutcome] = {}
    started: dict[str, float] = {}

    def read(name: str, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put((name, line.rstrip("\n")))
        lines.put((name, None))

    def start(track: Track) -> None:
        proc = subprocess.Popen([sys.executable, "-m", "generators.demo", _track_json(track)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, errors="replace", env=lane_env(max(60, columns - width - 3)))
        running[track.name], started[track.name] = proc, time.perf_counter()
        threading.Thread(target=read, args=(track.name, proc), daemon=True).start()

    def ready(track: Track) -> bool:  # `Track.after`: its resource is built, or nothing still running will build it
        if track.after is None:
            return True
        by = builder.get(track.after)
        return by is None or by in outcomes or _built(track.after) is not None

    try:
        while todo or running:
            waiting = False
            while len(running) < jobs:  # the rest of a longer track first, once what it waits for is built
                nxt = next((t for t in todo if t.after and ready(t)), None) or next((t for t in todo if ready(t)),
                                                                                    None)
                if nxt is None:
                    waiting = bool(todo)
                    break
                todo.remove(nxt)
                start(nxt)
            try:  # a track waiting for a resource is looked at again every 2 s
                name, line = lines.get(timeout=2.0 if waiting else None)
            except queue.Empty:
                continue
            if line is not None:
                if line.startswith(OUTCOME):
                    outcomes[name] = TrackOutcome(**json.loads(line[len(OUTCOME):]))
                else:  # the track's own "[name] " prefix is said once, in the margin
                    say(f"{name:<{width}} │ {line.removeprefix(f'[{name}] ')}")
                continue
            code = running.pop(name).wait()
            if name not in outcomes:
                outcomes[name] = TrackOutcome(name, "failed", f"the track's process exited with status {code} "
                                              "before it reported", time.perf_counter() - started[name])
                say(f"{name:<{width}} │ failed: {outcomes[name].reason} — the other tracks go on")
    finally:
        for proc in running.values():
            proc.kill()
            proc.wait()
    return [outcomes[t.name] for t in chosen]


def _lane(track_json: str) -> int:
    """A track's process (`run_lanes`): run its steps in this process, then print its outcome."""
    from benchmark.cli import _run, load_plugins

    load_plugins()
    (out,) = run_demo(_run, lambda line: print(line, flush=True), plan=(_track_from_json(track_json),))
    print(OUTCOME + json.dumps(asdict(out)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_lane(sys.argv[1]))
