"""`xaibench reference build` (`make reference`): the reference leaderboard, built by the flow an outsider follows.

Stages, each an ordinary `xaibench` command printed before it runs (`generators.demo`'s lanes), each resumable:

1. **prepare** (`prepare`): the plan at the chosen scale, frozen in `<work>/plan.json` (`plan.choose`: the scale
   rule); a results repository (`results init`); a maintainer key and a contributor key (`results keygen`, kept in
   `<work>/keys/`, never shipped: only the public key is); the round of hidden copies (`results round start
   --draws 3`, with `--secret-file` when given: the same secret gives the same copies). Tracks asked for after the
   round was revealed go to a new round (`reference-2`, …) with its own secret, as a maintainer would run one
   (`rounds_of`): the revealed copies are public, so rows verified against them would prove nothing; a revealed
   round's secret is refused for it. The tracks of a revealed round are not run again.
2. **lanes**, side by side (`--jobs`), each track in its own one-thread process (`lane`): build its resources at
   the planned scale; evaluate every built-in on each of its boards (`evaluate all`, complete split, default
   parameters, `--no-randomisation --hidden-draws 0`: those runs would never leave this folder — `verify` makes the
   signed ones); submit each submission's Results as a contributor would (`submit --to`), unless a pull request of
   that submission is open already (another track's: the two would overlap in its metadata and source, and the
   second would no longer match its signature once the first landed). Beside them one **maintainer** process
   (`maintain`) verifies every open pull request in the order it was opened (`results verify`: the re-run, the
   randomisation test, the round's hidden copies, signed, landed): landings are one at a time, as the repository
   takes them (a landing is refused when the default branch moved while it was judged); with nothing to verify it
   sends what a lane deferred (`_resubmit`).
3. **finish** (`finish`): `results reveal` and `results audit --rebuild` of every round (a round audited once is
   not audited again: its records never change), the repository's tip exported as plain files (`export`), and
   docs/reference.md (`xaibench reference docs`).

A track whose data is missing or whose build fails is recorded with its reason and the others go on; a board
whose evaluation fails, or a pull request that does not verify, is recorded the same way. A second run resumes:
built resources are kept, evaluations resume from their caches, `submit` opens nothing it opened before, a
landed pull request is never verified again (its branch is an ancestor of `main`), a round is revealed once.
Nothing here reads a file of the repository but through git and the commands; nothing imports the leaderboard.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource as _rusage
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from benchmark.errors import XaibenchError
from generators.reference.plan import DRAWS, TIMEOUT_S, BoardPlan, TrackPlan, cap_training, choose, plan_for

__all__ = ["ROUND", "Work", "finish", "lane", "maintain", "prepare", "run_build"]

ROUND = "reference"  # the reference's first round of hidden copies; tracks added after it is revealed go to
# `reference-2`, `reference-3`, … (`rounds_of`): one repository per build, a round per batch of tracks
DEFERRED = "deferred: another pull request of it was open"
SUBMIT_SKIP = "no complete Result"  # `submit`'s refusal for a submission without a Result here: not a failure


@dataclass(frozen=True)
class Work:
    """The build's folder (default `$XAIBENCH_HOME/reference-build`): everything but the resources, the caches and
    the hidden copies, which live in `$XAIBENCH_HOME` as for any evaluation."""

    root: Path

    @property
    def repo(self) -> Path:
        """The results repository (bare git)."""
        return self.root / "repository.git"

    @property
    def keys(self) -> Path:
        """The maintainer's and the contributor's keys and the round's secret (never shipped)."""
        return self.root / "keys"

    def results(self, track: str) -> Path:
        """The contributor's results folder of one track (`evaluate --results`, `submit --results`)."""
        return self.root / "results" / track

    @property
    def plan(self) -> Path:
        """The frozen plan and the scale rule's choices."""
        return self.root / "plan.json"

    def lane(self, track: str) -> Path:
        """A track lane's outcome."""
        return self.root / "lanes" / f"{track}.json"

    @property
    def maintainer(self) -> Path:
        """The maintainer lane's record: each pull request landed (seconds) or refused (why)."""
        return self.root / "maintainer.json"

    @property
    def lanes_done(self) -> Path:
        """Written when every track lane has ended: the maintainer stops once nothing is left to verify."""
        return self.root / "lanes.done"

    @property
    def finished(self) -> Path:
        """The finish stage's record (reveal, audit, export, docs)."""
        return self.root / "finish.json"

    @property
    def costs(self) -> Path:
        """Seconds per instance measured per board (`plan.project` reads them in the next plan)."""
        return self.root / "costs.json"


def _write_json(path: Path, data: Any) -> None:
    """Temp file beside `path`, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _git(repo: Path, *args: str) -> str:
    try:
        run = subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:  # e.g. the build was stopped (SIGSTOP) and resumed past the limit
        raise XaibenchError(f"git {args[0]} in {repo}: no answer within 300 s") from None
    if run.returncode != 0:
        raise XaibenchError(f"git {args[0]} in {repo}: {(run.stderr.strip().splitlines() or ['failed'])[-1]}")
    return run.stdout.strip()


def _on_main(repo: Path, path: str) -> bool:
    """Whether `main` of the repository holds `path` (a file or a folder)."""
    return bool(_git(repo, "ls-tree", "main", "--", path))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def rounds_of(frozen: dict) -> list[dict]:
    """The build's rounds, oldest first, each `{"name", "tracks"}`: the tracks whose rows its hidden copies verified.
    A plan written before rounds were listed has one, `frozen["round"]`, holding every track."""
    if "rounds" not in frozen:
        frozen["rounds"] = [{"name": frozen.get("round", ROUND), "tracks": [t["name"] for t in frozen["tracks"]]}]
    return frozen["rounds"]


def _revealed(work: Work, name: str) -> bool:
    """Whether round `name` is revealed on `main` (its secret.json landed; `results reveal` checks it hashes to the
    signed commitment)."""
    return (work.repo / "HEAD").is_file() and _on_main(work.repo, f"rounds/{name}/secret.json")


def _commitment(work: Work, name: str) -> str | None:
    """The commitment round `name` signed on `main`, or None."""
    try:
        return json.loads(_git(work.repo, "show", f"main:rounds/{name}/round.json")).get("commitment")
    except (XaibenchError, ValueError, AttributeError):
        return None


class CpuMeter:
    """CPU seconds of this process and of every process below it, sampled from /proc every `every_s`: a sandboxed
    worker's CPU never reaches this process's rusage (bubblewrap's own init reaps it inside its namespace), so the
    tree is read while it runs. A process that lives less than `every_s` may be missed; off /proc (not Linux), this
    process's rusage and its reaped children's."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s = every_s
        self.seen: dict[tuple[int, int], float] = {}  # (pid, start time) → its last CPU seconds
        self.proc = Path("/proc/self/stat").is_file()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if self.proc:
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._sample()

    def _sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        table: dict[int, tuple[int, int, float]] = {}  # pid → (ppid, start, cpu s)
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
                rest = text[text.rindex(")") + 2:].split()
                table[int(stat.parent.name)] = (int(rest[1]), int(rest[19]), (int(rest[11]) + int(rest[12])) / tick)
            except (OSError, ValueError, IndexError):
                continue  # ended meanwhile
        kids: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            kids.setdefault(ppid, []).append(pid)
        todo, mine = [os.getpid()], []
        while todo:
            pid = todo.pop()
            mine.append(pid)
            todo += kids.get(pid, [])
        with self._lock:
            for pid in mine:
                if pid in table:
                    _, start, cpu = table[pid]
                    self.seen[(pid, start)] = max(cpu, self.seen.get((pid, start), 0.0))

    def total(self) -> float:
        """CPU seconds so far."""
        if not self.proc:
            me, kids = _rusage.getrusage(_rusage.RUSAGE_SELF), _rusage.getrusage(_rusage.RUSAGE_CHILDREN)
            return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        self._sample()
        with self._lock:
            return sum(self.seen.values())

    def stop(self) -> None:
        """Stop sampling."""
        self._stop.set()


# --------------------------------------------------------------------------------------------------------------
# 1. prepare


@dataclass
class Options:
    """What the command line chose (frozen in plan.json with the plan)."""

    scale: str = "default"
    budget: float = 12.0
    draws: int = DRAWS
    max_mb: float = 30.0
    tracks: list[str] = field(default_factory=list)  # empty: all
    backend: str = "local"
    address: str | None = None
    secret_file: str | None = None
    train_epochs: int | None = None  # `--train-epochs`: the plan's `train` commands capped (`plan.cap_training`)


def prepare(work: Work, opts: Options, run: Callable[[list[str]], None], say: Callable[[str], None]) -> dict:
    """Stage 1 (module docstring); returns the frozen plan (plan.json). A build folder started at another scale or
    budget is refused: its resources, Results and round belong to that plan."""
    frozen = _read_json(work.plan)
    if frozen is not None:
        was = frozen["options"]
        if (was["scale"], was["budget"], was["draws"], was.get("max_mb", 30.0), was.get("train_epochs")) \
                != (opts.scale, opts.budget, opts.draws, opts.max_mb, opts.train_epochs):
            raise XaibenchError(f"{work.root} holds a build at scale {was['scale']}, budget {was['budget']:g}, "
                                f"{was['draws']} draws and {was.get('max_mb', 30.0):g} MB"
                                + (f", training capped at {was['train_epochs']} epoch(s)" if was.get("train_epochs")
                                   else "") + "; resume it with those, or give another --work")
        say(f"resuming the build in {work.root} (planned {frozen['planned']})")
    else:
        frozen = {"options": asdict(opts), "planned": _now(), "tracks": [], "choices": [], "round": ROUND}
    have = {t["name"] for t in frozen["tracks"]}
    new = tuple(t for t in plan_for(opts.scale) if (not opts.tracks or t.name in opts.tracks) and t.name not in have)
    rounds = rounds_of(frozen)
    if new and _revealed(work, rounds[-1]["name"]):
        # the round's copies are public now: rows verified against them would prove nothing, so the tracks added
        # go to a new round with a new secret, and the revealed round's rows stay as they are
        name = f"{ROUND}-{len(rounds) + 1}"
        say(f"round {rounds[-1]['name']} is revealed: {', '.join(t.name for t in new)} go to a new round {name} "
            "(its own secret; the boards already built keep theirs)")
        rounds.append({"name": name, "tracks": []})
    if new:  # tracks planned once, when first asked for; a resumed build keeps their plan
        every = sum(len(t.boards) for t in plan_for(opts.scale) if not opts.tracks or t.name in opts.tracks
                    or t.name in have)
        chosen, choices = choose(cap_training(new, opts.train_epochs), opts.budget, opts.draws,
                                 _read_json(work.costs, {}) or {}, opts.max_mb, every)
        frozen["tracks"] += [t.to_dict() for t in chosen]
        frozen["choices"] += [asdict(c) for c in choices]
        rounds[-1]["tracks"] += [t.name for t in chosen]
        _write_json(work.plan, frozen)
        say(f"planned {', '.join(t.name for t in chosen)} at scale {opts.scale}, budget {opts.budget:g} CPU-min per "
            f"board ({work.plan})")
    for c in frozen["choices"]:
        if c["reason"]:
            say(f"scale rule: {c['command']}: {c['reason']}")
    work.root.mkdir(parents=True, exist_ok=True)
    if not (work.repo / "HEAD").is_file():
        run(["results", "init", str(work.repo), "--name", "xaibench reference"])
    if not (work.keys / "verifier.key").is_file():
        run(["results", "keygen", "--out", str(work.keys)])
    if not (work.keys / "contributor.key").is_file():
        run(["results", "keygen", "--contributor", "--out", str(work.keys)])
    current = rounds[-1]["name"]
    if not _on_main(work.repo, f"rounds/{current}/round.json"):
        argv = ["results", "round", "start", str(work.repo), current, "--draws", str(opts.draws),
                "--key", str(work.keys / "verifier.key")]
        if opts.secret_file:
            # the round's commitment is sha256 of the secret's 32 bytes (`results round start` reads and checks the
            # file: 64 hex digits); a file it would refuse matches no commitment here
            text = Path(opts.secret_file).read_text(encoding="utf-8", errors="replace").strip().lower()
            digest = hashlib.sha256(bytes.fromhex(text)).hexdigest() if re.fullmatch(r"[0-9a-f]{64}", text) else ""
            used = [r["name"] for r in rounds[:-1] if _commitment(work, r["name"]) == digest]
            if used:
                raise XaibenchError(f"--secret-file {opts.secret_file} is the secret of round {used[0]}, revealed "
                                    f"already: round {current} needs another (anyone can draw a revealed round's "
                                    "copies)")
            argv += ["--secret-file", str(opts.secret_file)]
        run(argv)
    return frozen


def load_plan(work: Work) -> tuple[dict, tuple[TrackPlan, ...]]:
    """The frozen plan of the build folder and its tracks."""
    frozen = _read_json(work.plan)
    if frozen is None:
        raise XaibenchError(f"{work.plan} is missing or damaged; run `xaibench reference build` to plan the build")
    return frozen, tuple(TrackPlan.from_dict(t) for t in frozen["tracks"])


# --------------------------------------------------------------------------------------------------------------
# 2. lanes: one track (evaluate, submit) and the maintainer (verify)


@dataclass
class LaneOutcome:
    """What a track lane did: per step its command and seconds, per board its status, per submission its pull
    request (or why none), and the lane's CPU seconds."""

    track: str
    status: str = "not run"  # built | partial | failed | skipped
    reason: str = ""
    seconds: float = 0.0  # every run of the lane together (a resumed lane adds its run to the earlier ones')
    cpu_s: float = 0.0
    runs: int = 0  # how many runs `seconds` and `cpu_s` add up (0: a record from before runs were counted)
    steps: list[dict[str, Any]] = field(default_factory=list)
    boards: dict[str, dict[str, Any]] = field(default_factory=dict)
    submitted: dict[str, str] = field(default_factory=dict)  # submission → "proposed" | why not
    submit_s: dict[str, float] = field(default_factory=dict)  # submission → seconds of its `submit` (its `check`)
    submit_cpu_s: float = 0.0


def _built(resource: str) -> bool:
    from generators.demo import _built as built

    return built(resource) is not None


def _evaluate_argv(b: BoardPlan, work: Work, opts: dict) -> list[str]:
    argv = ["evaluate", "all", "--track", b.track, "--resource", b.resource, "--model", b.model,
            "--results", str(work.results(b.track)), "--timeout", TIMEOUT_S, "--no-randomisation",
            "--hidden-draws", "0"]
    if opts.get("backend") == "ray":
        argv += ["--backend", "ray"] + (["--address", opts["address"]] if opts.get("address") else [])
    return argv


def _board_results(work: Work, b: BoardPlan) -> list[dict[str, Any]]:
    """The complete Results of one board in the track's results folder (the published model's only)."""
    folder = work.results(b.track) / b.track / b.resource.replace("/", "__") / b.model
    out = []
    for path in sorted(folder.glob("*.json")):
        d = _read_json(path)
        if isinstance(d, dict) and (d.get("coverage") or {}).get("complete") is True:
            out.append(d)
    return out


def _measure(results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """A board's measured cost from its Results (`wall_time_s`: each submission's own work) and the step's wall
    time (scoring and worker starts on top): seconds per instance per evaluation and fixed seconds."""
    n = max((int(r.get("n_instances") or 0) for r in results), default=0)
    own = sum(float(r.get("wall_time_s") or 0.0) for r in results)
    sizes = [len(json.dumps(r.get("instance_scores") or {})) / n for r in results] if n else []
    return {"instances": n, "submissions": len(results), "explain_s": round(own, 1), "step_s": round(seconds, 1),
            "spi": round(own / n, 4) if n else None, "fixed_s": round(max(0.0, seconds - own), 1),
            "bpi": round(sum(sizes) / len(sizes), 1) if sizes else None, "measured": _now()}


def lane(work: Work, track: str, run: Callable[[list[str]], None], say: Callable[[str], None]) -> LaneOutcome:
    """One track's lane (module docstring, stage 2): its resources, its boards' evaluations and its submissions.
    Every failure is recorded with its reason; the lane goes on with what does not depend on it."""
    from generators.demo import _missing

    frozen, tracks = load_plan(work)
    t = next((x for x in tracks if x.name == track), None)
    if t is None:
        raise XaibenchError(f"track {track} is not in the plan of {work.root}")
    earlier = _read_json(work.lane(track), {}) or {}
    # the lane's cost is every run's: a resumed run adds to what the earlier ones (stopped ones too, up to their last
    # record) spent, and keeps the steps they ran where it only finds their work done
    out = LaneOutcome(track, seconds=float(earlier.get("seconds") or 0.0), cpu_s=float(earlier.get("cpu_s") or 0.0),
                      runs=int(earlier.get("runs") or (1 if earlier.get("seconds") else 0)) + 1)
    meter = CpuMeter()
    t0 = time.perf_counter()
    ran_before = {st["command"]: st for st in earlier.get("steps") or [] if not st.get("skipped")}
    before = earlier.get("boards", {})
    # the boards an earlier run evaluated stay in the record until this run has decided on each: a run stopped before
    # it reached them must not forget them (the next would evaluate them again, writing Results anew)
    _write_json(work.lane(track), {**asdict(out), "boards": before, "steps": earlier.get("steps") or [],
                                   "status": "running"})
    why = _missing(t.needs)
    if why:
        out.status, out.reason = "skipped", why
        say(f"skipped: {why}")
        return _end(work, out, t0, meter)
    failed: dict[str, str] = {}  # resource → why its build failed
    for g in t.generate:
        text = "xaibench " + " ".join(g.command)
        if g.builds and all(_built(r) for r in g.builds):
            say(f"$ {text}  # built already: skipped")
            out.steps.append({**ran_before[text], "earlier_run": True} if text in ran_before
                             else {"command": text, "seconds": 0.0, "skipped": True})
            continue
        say(f"$ {text}" + (f"  # {g.what}" if g.what else ""))
        s0, c0 = time.perf_counter(), meter.total()
        try:
            run(list(g.command))
            out.steps.append({"command": text, "seconds": round(time.perf_counter() - s0, 1),
                              "cpu_s": round(meter.total() - c0, 1)})
        except (XaibenchError, SystemExit) as exc:
            reason = _reason(exc, text)
            out.steps.append({"command": text, "seconds": round(time.perf_counter() - s0, 1),
                              "cpu_s": round(meter.total() - c0, 1), "failed": reason})
            say(f"failed: {reason}")
            for r in g.builds:  # one held already was not built by this step at the plan's scale: never used
                failed[r] = reason
    costs = _read_json(work.costs, {}) or {}
    for b in t.boards:
        if b.resource in failed:
            out.boards[b.slug] = {"status": "failed", "reason": f"its resource was not built: {failed[b.resource]}"}
            continue
        if (before.get(b.slug) or {}).get("status") == "evaluated" and _board_results(work, b):
            # evaluated by an earlier run: its Results may be in pull requests already, and evaluating again would
            # write them anew (a new `created`), which the repository would refuse as other content at their paths
            say(f"{b.slug}: evaluated by an earlier run: kept")
            out.boards[b.slug] = before[b.slug]
            continue
        argv = _evaluate_argv(b, work, frozen["options"])
        say("$ xaibench " + " ".join(argv))
        s0, c0 = time.perf_counter(), meter.total()
        try:
            run(argv)
            seconds = time.perf_counter() - s0
            measured = _measure(_board_results(work, b), seconds)
            out.boards[b.slug] = {"status": "evaluated", "seconds": round(seconds, 1),
                                  "cpu_s": round(meter.total() - c0, 1), **measured}
            if measured["spi"] is not None and seconds > 0.5 * measured["explain_s"]:  # not answered from a cache
                costs[b.slug] = {k: measured[k] for k in ("spi", "fixed_s", "bpi", "instances", "measured")}
        except (XaibenchError, SystemExit) as exc:
            out.boards[b.slug] = {"status": "failed", "reason": _reason(exc, "evaluate"),
                                  "seconds": round(time.perf_counter() - s0, 1)}
            say(f"failed on {b.slug}: {out.boards[b.slug]['reason']}")
        # `reference status` and the progress read it; an earlier run's boards stay until this run decides on them
        _write_json(work.lane(track), {**asdict(out), "boards": {**before, **out.boards}, "status": "running",
                                       **_spent(out, t0, meter)})
    _write_json(work.costs, {**(_read_json(work.costs, {}) or {}), **costs})
    _submit_all(work, t, out, run, say, meter)
    bad = [s for s, v in out.boards.items() if v["status"] == "failed"]
    out.status = "failed" if bad and len(bad) == len(t.boards) else "partial" if bad else "built"
    out.reason = "; ".join(f"{s}: {out.boards[s]['reason']}" for s in bad)[:600]
    return _end(work, out, t0, meter)


def _submit_all(work: Work, t: TrackPlan, out: LaneOutcome, run: Callable[[list[str]], None],
                say: Callable[[str], None], meter: CpuMeter) -> None:
    """`xaibench submit` for every submission with a complete Result in the track's results folder (one pull
    request per submission and track; the maintainer lane verifies it)."""
    c0 = meter.total()
    names: set[str] = set()
    for b in t.boards:
        if out.boards.get(b.slug, {}).get("status") == "evaluated":
            names |= {str(r["submission"]["name"]) for r in _board_results(work, b)}
    closed = _closed(_read_json(work.maintainer, {}) or {})
    for name in sorted(names):
        if _open_of(work, name, closed):
            out.submitted[name] = DEFERRED
            say(f"{name}: another pull request of it is open; submitted once that one has landed (the maintainer "
                "lane sends it)")
            continue
        argv = _submit_argv(work, t.name, name)
        say("$ xaibench " + " ".join(argv))
        s0 = time.perf_counter()
        try:
            run(argv)
            out.submitted[name] = "proposed"
        except (XaibenchError, SystemExit) as exc:
            reason = _reason(exc, "submit")
            out.submitted[name] = reason
            if SUBMIT_SKIP not in reason:
                say(f"failed to submit {name}: {reason}")
        out.submit_s[name] = round(time.perf_counter() - s0, 1)
    out.submit_cpu_s = round(meter.total() - c0, 1)


def _submit_argv(work: Work, track: str, name: str) -> list[str]:
    return ["submit", name, "--to", str(work.repo), "--results", str(work.results(track)),
            "--key", str(work.keys / "contributor.key")]


def _closed(record: dict) -> set[str]:
    """The maintainer record's pull requests that are closed without landing: refused or superseded."""
    return set(record.get("refused") or {}) | set(record.get("superseded") or {})


def _open_of(work: Work, name: str, closed: set[str]) -> bool:
    """Whether a pull request of submission `name` is open (not landed, not `closed`): a second one opened beside it
    would overlap in its metadata and source, and once the first lands it no longer matches its own signature."""
    return any(b.split("/")[1] == name for b in _pending(work, closed))


def _unlanded(work: Work, t: TrackPlan, name: str) -> list[str]:
    """The repository paths of `name`'s complete Results in track `t`'s results folder that `main` does not hold."""
    rels = []
    for b in t.boards:
        for r in _board_results(work, b):
            if str(r["submission"]["name"]) == name:
                rels.append(f"results/{name}/{r['submission']['hash']}/{r['track']}/"
                            f"{str(r['resource']['name']).replace('/', '__')}@{r['resource']['revision']}/"
                            f"{r['model']['name']}.json")
    have = set(_git(work.repo, "ls-tree", "-r", "--name-only", "main", "--", "results/" + name).splitlines()) \
        if rels else set()
    return [rel for rel in rels if rel not in have]


def _resubmit(work: Work, record: dict, run: Callable[[list[str]], None], say: Callable[[str], None]) -> bool:
    """Send what an ended lane could not: a submission deferred while another pull request of it was open, or one
    whose pull request was refused for overlapping another (its Results not all on `main`, none of its pull requests
    open). At most two tries per track and submission. Whether a pull request was opened."""
    _, tracks = load_plan(work)
    tries = record.setdefault("resubmitted", {})
    for t in tracks:
        lane_rec = _read_json(work.lane(t.name), {}) or {}
        if lane_rec.get("status") in (None, "running", "not run", "skipped"):
            continue
        for name in sorted(lane_rec.get("submitted") or {}):
            key = f"{t.name}/{name}"
            if tries.get(key, 0) >= 2 or SUBMIT_SKIP in str(lane_rec["submitted"][name]) \
                    or _open_of(work, name, _closed(record)) or not _unlanded(work, t, name):
                continue
            tries[key] = tries.get(key, 0) + 1
            argv = _submit_argv(work, t.name, name)
            say("$ xaibench " + " ".join(argv))
            try:
                run(argv)
                return True
            except (XaibenchError, SystemExit) as exc:
                say(f"failed to submit {name} again: {_reason(exc, 'submit')}")
    return False


def _reason(exc: BaseException, what: str) -> str:
    if isinstance(exc, SystemExit):
        return f"`{what}` exited with status {exc.code}"
    return " ".join(str(exc).split())[:300]


def _spent(out: LaneOutcome, t0: float, meter: CpuMeter) -> dict[str, float]:
    """The lane's wall and CPU seconds: the earlier runs' (in `out` from its start) and this run's so far."""
    return {"seconds": round(out.seconds + time.perf_counter() - t0, 1), "cpu_s": round(out.cpu_s + meter.total(), 1)}


def _end(work: Work, out: LaneOutcome, t0: float, meter: CpuMeter) -> LaneOutcome:
    spent = _spent(out, t0, meter)
    out.seconds, out.cpu_s = spent["seconds"], spent["cpu_s"]
    meter.stop()
    _write_json(work.lane(out.track), asdict(out))
    return out


def _pending(work: Work, closed: set[str]) -> list[str]:
    """Open pull requests (branches `xaibench/...`) not landed on `main` and not `closed` (refused or superseded:
    `_closed`), oldest first."""
    listing = _git(work.repo, "for-each-ref", "--sort=committerdate", "--format=%(refname:short)",
                   "refs/heads/xaibench/")
    out = []
    for branch in listing.splitlines():
        if branch in closed:
            continue
        landed = subprocess.run(["git", f"--git-dir={work.repo}", "merge-base", "--is-ancestor", branch, "main"],
                                capture_output=True).returncode == 0
        if not landed:
            out.append(branch)
    return out


UNBOUND = re.compile(r"results/([^/\s]+)/: the name is held but bound to no contributor key")
BIND_REASON = ("the reference build's own built-in: its name is held by the built-in floors the maintainer ran (no "
               "contributor binding), and the build's contributor key sends its other rows")


def _bind_held(work: Work, record: dict, run: Callable[[list[str]], None], say: Callable[[str], None]) -> bool:
    """A pull request refused because its name is held by rows the maintainer landed (a built-in's floors: no
    contributor binding names a key for it) is the build's own: the maintainer binds the name to the build's
    contributor key (`results bind`, signed, once per name) and the pull request is verified again. Whether one was
    bound."""
    bound = record.setdefault("bound", {})
    for branch, reason in list(record["refused"].items()):
        m = UNBOUND.search(reason)
        if m is None or m.group(1) in bound:
            continue
        name = m.group(1)
        run(["results", "bind", str(work.repo), name, "--public-key", str(work.keys / "contributor.pub"),
             "--reason", BIND_REASON, "--key", str(work.keys / "verifier.key")])
        bound[name] = _now()
        del record["refused"][branch]
        say(f"bound {name} to the build's contributor key; {branch} is verified again")
        return True
    return False


SUPERSEDED = ("every Result it held is on `main` already, landed signed: as the maintainer's runs of the built-in "
              "floors of the boards other pull requests touched (`results verify` runs a board's missing floors), or "
              "by a later pull request of the same code that sent the rest")


def _supersede(work: Work, record: dict) -> bool:
    """A refused pull request whose submission has no Result left off `main` in any track (a built-in floor: the
    maintainer's verifications of the boards' other rows ran and landed it first, so its own files conflict) is
    recorded as superseded, not refused. Whether one was."""
    _, tracks = load_plan(work)
    moved = False
    for branch in list(record["refused"]):
        name = branch.split("/")[1] if branch.count("/") >= 2 else ""
        held = name and any(str(r["submission"]["name"]) == name for t in tracks for b in t.boards
                            for r in _board_results(work, b))
        if held and not any(_unlanded(work, t, name) for t in tracks):
            record.setdefault("superseded", {})[branch] = SUPERSEDED
            del record["refused"][branch]
            moved = True
    return moved


VERIFY_JOBS = max(1, min(4, os.cpu_count() or 1))  # boards a verification re-runs at once (`results verify --jobs`)


def _verify_argv(work: Work, branch: str) -> list[str]:
    """The maintainer's `results verify` of one pull request: its boards re-run `VERIFY_JOBS` at once (the
    maintainer is the build's bottleneck: one pull request at a time, each landing on the tip it was judged on)."""
    return ["results", "verify", f"{work.repo}@{branch}", "--key", str(work.keys / "verifier.key"),
            "--timeout", TIMEOUT_S, "--jobs", str(VERIFY_JOBS)]


def _idle_state(work: Work, record: dict) -> tuple:
    """What `_bind_held`, `_supersede` and `_resubmit` decide from: `main`'s tip, the closed (refused or superseded)
    pull requests, the resend tries and the lanes' records. While it is unchanged an idle maintainer does not read every
    board's Results again on each poll."""
    try:
        tip = _git(work.repo, "rev-parse", "--verify", "-q", "main")
    except XaibenchError:
        tip = None  # git did not answer: never equal to a state seen, so everything is decided again
    lanes = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in (work.root / "lanes").glob("*.json")))
    return (tip, tuple(sorted(_closed(record))), tuple(sorted((record.get("resubmitted") or {}).items())), lanes) \
        if tip is not None else (object(),)


def maintain(work: Work, run: Callable[[list[str]], None], say: Callable[[str], None], poll_s: float = 5.0) -> dict:
    """The maintainer lane (module docstring, stage 2): `results verify` on each open pull request, oldest first;
    when none is open, the submissions an ended lane could not send (`_resubmit`); until the track lanes have ended
    (`Work.lanes_done`) and nothing is left. Returns its record."""
    record = _read_json(work.maintainer, {}) or {}
    record.setdefault("landed", {})
    record.setdefault("refused", {})
    record.setdefault("resubmitted", {})
    meter = CpuMeter()
    spent = float(record.get("cpu_s", 0.0))  # an earlier run's
    idle_at = None  # the state `_supersede` and `_resubmit` last found nothing to do in
    while True:
        done = work.lanes_done.exists()  # read before listing: a lane's last pull request is listed after it
        state = _idle_state(work, record)
        if state != idle_at and (_bind_held(work, record, run, say) | _supersede(work, record)):
            _write_json(work.maintainer, record)
        try:
            pending = _pending(work, _closed(record))
        except XaibenchError as exc:  # git did not answer (a stopped and resumed build): ask again
            say(f"listing the open pull requests failed ({exc}); trying again")
            time.sleep(poll_s)
            continue
        if not pending:
            if state != idle_at and _resubmit(work, record, run, say):
                _write_json(work.maintainer, record)
                continue
            if done:
                break
            idle_at = state  # a record changed by the checks above differs from it: they run once more, then rest
            time.sleep(poll_s)
            continue
        branch = pending[0]
        argv = _verify_argv(work, branch)
        say("$ xaibench " + " ".join(argv))
        s0, c0 = time.perf_counter(), meter.total()
        try:
            run(argv)
            record["landed"][branch] = {"seconds": round(time.perf_counter() - s0, 1),
                                        "cpu_s": round(meter.total() - c0, 1), "at": _now()}
        except (XaibenchError, SystemExit) as exc:
            record["refused"][branch] = _reason(exc, "results verify")
            say(f"refused {branch}: {record['refused'][branch]}")
        record["cpu_s"] = round(spent + meter.total(), 1)
        _write_json(work.maintainer, record)
    meter.stop()
    _write_json(work.maintainer, record)
    return record


# --------------------------------------------------------------------------------------------------------------
# 3. finish: reveal, audit, export, docs


def hidden_gaps(csv_text: str, round_name: str, tracks: list[str]) -> list[str]:
    """The boards of `tracks` with hidden copies whose leaderboard (`leaderboard --format csv`) has no verdict from
    round `round_name`'s copies, one line each: a board whose rows were not run on that round's copies, or whose
    copies' runs are incomplete or lack their floor (its `public_verdict` is then empty: the verdict is the
    published model's)."""
    import csv
    import io

    from benchmark.tracks import get_track

    boards: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in csv.DictReader(io.StringIO(csv_text)):
        if r.get("track") in tracks:
            boards.setdefault((r["track"], r["resource"], r["model"]), []).append(r)
    gaps = []
    for (track, resource, model), rows in sorted(boards.items()):
        if get_track(track).no_hidden_copy_of(model):
            continue
        rounds = sorted({r.get("hidden_round") or "" for r in rows})
        if rounds != [round_name] or not rows[0].get("public_verdict"):
            why = "; ".join(sorted({r.get("hidden_reason") or "" for r in rows} - {""}))[:200]
            gaps.append(f"{track} {resource}/{model}: hidden round {'/'.join(x or 'none' for x in rounds)}"
                        + (f" ({why})" if why else ""))
    return gaps


def _round_gaps(work: Work, round_name: str, tracks: list[str]) -> list[str]:
    """`hidden_gaps` of the repository's tip (`xaibench leaderboard --from REPO --format csv`, in a subprocess)."""
    argv = [sys.executable, "-m", "benchmark.cli", "leaderboard", "--from", str(work.repo), "--format", "csv",
            "--public-key", str(work.keys / "verifier.pub")]
    r = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=3600,
                       env={**os.environ, "XAIBENCH_PROGRESS": "0"})
    if r.returncode != 0:
        raise XaibenchError(f"the leaderboard of {work.repo} did not build before the reveal (exit {r.returncode}): "
                            + " ".join(r.stderr.strip().splitlines()[-2:])[:300])
    return hidden_gaps(r.stdout, round_name, tracks)


def finish(work: Work, out: Path, docs: Path | None, run: Callable[[list[str]], None], say: Callable[[str], None],
           max_mb: float, replace_partial: bool = False, readme: Path | None = None,
           reveal_incomplete: bool = False) -> dict:
    """Stage 3 (module docstring): reveal the round, audit it (copies rebuilt), export the tip to `out` and write
    `docs`. The export refuses when the audit found a mismatch. A round whose boards with hidden copies lack a
    verdict from them (`hidden_gaps`) is not revealed — once its secret is public no copy of it can be run — unless
    `reveal_incomplete` (`reference build --reveal-incomplete`: the reference then shows those boards' published
    verdicts and says so)."""
    from generators.reference.export import export

    state = _read_json(work.finished, {}) or {}
    frozen, _ = load_plan(work)
    key = str(work.keys / "verifier.key")
    audits = state.setdefault("audits", {})
    if state.get("audit") == "passed" and not audits:  # a finish record of one round, before rounds were listed
        audits[rounds_of(frozen)[0]["name"]] = {k: state[k] for k in ("audit", "audit_s", "audit_cpu_s") if k in state}
    for rnd in rounds_of(frozen):
        name = rnd["name"]
        s0 = time.perf_counter()
        if not _revealed(work, name):
            gaps = _round_gaps(work, name, list(rnd["tracks"]))
            if gaps and not reveal_incomplete:
                raise XaibenchError(
                    f"round {name} is not revealed: {len(gaps)} board(s) with hidden copies have no verdict from "
                    f"them — " + "; ".join(gaps) + f". Once revealed, none of its copies can be run. Run the rows on "
                    f"the copies (`xaibench results rehide {work.repo}`) and build again, or give "
                    f"--reveal-incomplete to reveal it as it is")
            if gaps:
                say(f"revealing round {name} with {len(gaps)} board(s) without a hidden verdict "
                    f"(--reveal-incomplete): " + "; ".join(gaps))
            state.setdefault("unverdicted", {})[name] = gaps
            run(["results", "reveal", str(work.repo), name, "--key", key])
            state.setdefault("reveal_s", 0.0)
            state["reveal_s"] = round(state["reveal_s"] + time.perf_counter() - s0, 1)
        if audits.get(name, {}).get("audit") == "passed":
            continue  # its round records never change once it is revealed (verify draws from the newest round)
        meter = CpuMeter()
        s0, c0 = time.perf_counter(), meter.total()
        argv = ["results", "audit", str(work.repo), name, "--rebuild", "--public-key",
                str(work.keys / "verifier.pub")]
        say("$ xaibench " + " ".join(argv))
        try:
            run(argv)
            verdict = "passed"
        except (XaibenchError, SystemExit) as exc:
            verdict = f"failed: {_reason(exc, 'results audit')}"
        audits[name] = {"audit": verdict, "audit_s": round(time.perf_counter() - s0, 1),
                        "audit_cpu_s": round(meter.total() - c0, 1)}
        meter.stop()
        _write_json(work.finished, state)
    failed = {n: a["audit"] for n, a in audits.items() if a["audit"] != "passed"}
    state["audit"] = "passed" if not failed else f"failed: round {next(iter(failed))}: {next(iter(failed.values()))}"
    state["audit_s"] = round(sum(a.get("audit_s", 0.0) for a in audits.values()), 1)
    state["audit_cpu_s"] = round(sum(a.get("audit_cpu_s", 0.0) for a in audits.values()), 1)
    _write_json(work.finished, state)
    if failed:
        raise XaibenchError(f"the audit did not pass ({state['audit']}); nothing was exported")
    s0 = time.perf_counter()
    report = export(work, out, manifest(work, state), max_mb=max_mb, replace_partial=replace_partial)
    state["export"] = {**report, "seconds": round(time.perf_counter() - s0, 1)}
    say(f"exported {report['files']} files ({report['bytes'] / 1e6:.1f} MB) to {out}")
    if docs is not None:
        s0 = time.perf_counter()
        run(["reference", "docs", "--reference", str(out), "--out", str(docs)]
            + (["--readme", str(readme)] if readme is not None else []))
        state["docs_s"] = round(time.perf_counter() - s0, 1)
    _write_json(work.finished, state)
    return state


def manifest(work: Work, finish_state: dict) -> dict:
    """What the shipped reference says about its build: the plan and the scale rule's choices, each track's
    outcome and costs, the maintainer's landings and refusals, the audit, the machine."""
    import platform

    from benchmark import __version__

    frozen, tracks = load_plan(work)
    lanes = {t.name: _read_json(work.lane(t.name), {"track": t.name, "status": "not run"}) for t in tracks}
    maint = _read_json(work.maintainer, {}) or {}
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=30).stdout.strip() or None
    except OSError:
        commit = None
    return {"format": 1, "kind": "xaibench-reference", "built": _now(), "xaibench": __version__, "git": commit,
            "round": rounds_of(frozen)[0]["name"], "rounds": rounds_of(frozen),
            "tip": _git(work.repo, "rev-parse", "main"), "options": frozen["options"],
            "planned": frozen["planned"], "choices": frozen["choices"],
            "commands": {t.name: [" ".join(("xaibench",) + g.command) for g in t.generate] for t in tracks},
            "tracks": [{**lanes[t.name], "title": t.title, "note": t.note,
                        "boards_planned": [b.slug for b in t.boards]} for t in tracks],
            "maintainer": {"landed": len(maint.get("landed", {})), "refused": maint.get("refused", {}),
                           "superseded": maint.get("superseded", {}),
                           "cpu_s": maint.get("cpu_s"),
                           "seconds": round(sum(v["seconds"] for v in maint.get("landed", {}).values()), 1)},
            "finish": {k: v for k, v in finish_state.items() if k != "export"},
            "machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
                        "platform": platform.platform(terse=True)}}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


# --------------------------------------------------------------------------------------------------------------
# the whole build


def run_build(work: Work, opts: Options, out: Path, docs: Path | None, jobs: int | None, say: Callable[[str], None],
              run: Callable[[list[str]], None], max_mb: float = 30.0, replace_partial: bool = False,
              columns: int = 100, readme: Path | None = None, reveal_incomplete: bool = False) -> dict:
    """Stages 1–3 (module docstring); returns the finish record. Each track's lane is the demo's lane process
    (`demo.run_lanes`) running `xaibench reference lane TRACK`; the maintainer's is `python -m
    generators.reference.build maintain WORK`; each on one thread (`demo.lane_env`)."""
    from generators.demo import Step, Track, lane_env, run_lanes

    frozen = prepare(work, opts, run, say)
    settled = {n for r in rounds_of(frozen) if _revealed(work, r["name"]) for n in r["tracks"]}
    tracks = tuple(TrackPlan.from_dict(t) for t in frozen["tracks"]
                   if (not opts.tracks or t["name"] in opts.tracks) and t["name"] not in settled)
    if settled:
        say(f"not run again: {', '.join(sorted(settled))} (their round is revealed; their rows stay as landed)")
    work.lanes_done.unlink(missing_ok=True)
    maint = subprocess.Popen([sys.executable, "-m", "generators.reference.build", "maintain", str(work.root)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                             errors="replace", env=lane_env(max(60, columns - 14)))

    def relay() -> None:
        assert maint.stdout is not None
        for line in maint.stdout:
            say(f"{'maintainer':<10} │ {line.rstrip()}")

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(work, tracks, stop), daemon=True)
    watcher.start()
    plan = tuple(Track(t.name, t.title, (), (Step(("reference", "lane", t.name, "--work", str(work.root)),
                                                   what="its resources, evaluations and pull requests"),), t.minutes)
                 for t in tracks)
    try:
        outcomes = run_lanes(say, plan=plan, jobs=jobs, columns=columns)
    finally:
        work.lanes_done.write_text(_now() + "\n")
        code = maint.wait()
        reader.join(timeout=10)
        stop.set()
        watcher.join(timeout=10)
    if code != 0:
        raise XaibenchError(f"the maintainer lane exited with status {code}; see its lines above, then run the build "
                            "again to resume")
    for o in outcomes:
        if o.status != "built":
            say(f"{o.name}: {o.status}" + (f" — {o.reason}" if o.reason else ""))
    return finish(work, out, docs, run, say, max_mb, replace_partial, readme, reveal_incomplete)


def _watch(work: Work, tracks: tuple[TrackPlan, ...], stop: threading.Event, every_s: float = 5.0) -> None:
    """Two progress bars while the lanes run (`benchmark.progress`; off where progress is): boards evaluated of
    those planned, pull requests verified of those opened — read from the lanes' and the maintainer's records."""
    from benchmark.progress import FitProgress, console, enabled
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    if not enabled():
        return
    planned = sum(len(t.boards) for t in tracks)
    with FitProgress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                     console=console, transient=True) as p:
        boards = p.add_task("boards evaluated", total=planned)
        pulls = p.add_task("pull requests verified", total=None)
        while not stop.wait(every_s):
            done = sum(len(_read_json(work.lane(t.name), {}).get("boards", {})) for t in tracks)
            maint = _read_json(work.maintainer, {}) or {}
            verified = len(maint.get("landed", {})) + len(maint.get("refused", {}))
            try:
                opened = len(_git(work.repo, "for-each-ref", "--format=%(refname)", "refs/heads/xaibench/").split())
            except XaibenchError:
                opened = verified
            p.update(boards, completed=done)
            p.update(pulls, completed=verified, total=max(opened, verified))


def _main(argv: list[str]) -> int:
    """`python -m generators.reference.build maintain WORK`: the maintainer lane of `run_build`."""
    from benchmark.cli import _run, load_plugins

    if argv[:1] != ["maintain"] or len(argv) != 2:
        raise SystemExit("usage: python -m generators.reference.build maintain WORK")
    load_plugins()
    record = maintain(Work(Path(argv[1])), _run, lambda line: print(line, flush=True))
    print(f"landed {len(record['landed'])} pull request(s), refused {len(record['refused'])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
