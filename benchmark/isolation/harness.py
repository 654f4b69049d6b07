"""The harness side of submission isolation: one fresh worker process per evaluation run.

`Worker` starts `benchmark.isolation.worker` in the sandbox (`benchmark.isolation.sandbox`), hands it the submission and
the model spec, then explains batches (`explain`). Every instance comes back as a cache `Entry`: a
validated output, or a recorded failure with its reason. Nothing the worker does can stop the
harness:

* an exception, a wrong output count or a non-numeric output → failures with the reason (the
  worker itself retries a failed batch instance by instance);
* a hang (in Python or native code) past `timeout_s × batch size` → the worker is SIGKILLed, the
  batch's instances time out, the next batch gets a fresh worker;
* a crash, segfault, `os._exit`, or a kill by the memory / CPU limit → the batch is retried one
  instance at a time, each in a fresh worker, so the instance that kills it is named; after
  `MAX_CRASHES` crashes in a row without one good instance the rest of the run is recorded as not
  run (the same reason) instead of restarting the worker thousands of times;
* garbage on the channel, a message over the size limit, an object that cannot be serialised → a
  failure with the reason (the worker is replaced);
* output floods on stdout / stderr are drained and dropped (the last few KB are kept for the
  failure reason);
* a scratch folder (or, for the plain worker, its working folder) over its size bound → the worker
  is SIGKILLed by the harness's guard (`benchmark.isolation.scratch`) and the batch's instances fail with the
  limit named; the folder is emptied before the next worker starts.

Served models (`ModelSpec.served`) answer the worker's `predict` requests here, batched: the
worker never holds the model or anything it was built from.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.store.cache import Entry
from benchmark.errors import ParameterError, ResourceError, SubmissionError, SubmissionImportError
from benchmark.isolation import landlock
from benchmark.isolation.sandbox import (INSIDE_ENVIRONMENT, INSIDE_MODEL, INSIDE_SCRATCH, INSIDE_SUBMISSION, UID_BASE,
                                         WORKER_GID, Limits, SandboxError, asset_paths, bwrap_argv, landlock_rules,
                                         own_uid, resolve_mode, warn_process_limit, worker_command, worker_env)
from benchmark.isolation.scratch import Guard, clean, descendants, measure
from benchmark.isolation.wire import MAX_BYTES, Channel, Deadline, PeerClosed, WireError
from benchmark.models.spec import ModelSpec
from benchmark.store.storage import fmt_bytes
from benchmark.submission import Submission

START_TIMEOUT_S = 300.0  # import + model load + constructor
MAX_CRASHES = 8
TAIL_BYTES = 4096


def _clean(text: object, limit: int = 500) -> str:
    """Printable, one-line, bounded text from an untrusted source."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return " ".join(text.split())[:limit]


def _scratch_note(path: Path, over: str, limit: int | None, done: str) -> str:
    """The note on a scratch folder found over its bound (`over`, from `measure`) and what `clean` did
    with it; the bound is named when there is one (a folder too deep or unreadable is over without one)."""
    bound = f" ({fmt_bytes(limit)}, --scratch-limit)" if limit is not None else ""
    return f"scratch folder {path} {over}{bound}: {done}"


def validate_output(out: Any, shape: tuple[int, ...]) -> tuple[np.ndarray | None, str]:
    """(array, "") if `out` is a finite array of `shape`, else (None, reason)."""
    try:
        arr = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        return None, f"output is not a numeric array ({exc})"
    if arr.shape != tuple(shape):
        return None, f"output shape {arr.shape} != expected {tuple(shape)}"
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        return None, f"output has {bad} non-finite values (NaN/inf)"
    return arr, ""


class WorkerCrash(Exception):
    """The worker died or broke the protocol; `reason` says how."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal  # retrying in a fresh worker cannot help (an oracle's fit failed)


@dataclass
class WorkerConfig:
    """How workers are started (from `RunOptions`)."""

    sandbox: str = "auto"  # auto | bwrap | none
    limits: Limits = field(default_factory=Limits)
    hidden: list[Path] = field(default_factory=list)  # folders that must stay out of reach
    scratch_root: Path | None = None  # per-submission writable folders live under it
    max_bytes: int = MAX_BYTES
    torch_threads: int | None = None
    assets: dict[str, Path] = field(default_factory=dict)  # read-only folders the track hands the worker
    fit_timeout_s: float = 0.0  # an oracle's fit (0 = no limit)
    environment: Path | None = None  # the submission's own packages, layered first (benchmark.submission.environments)


class FitError(SubmissionError):
    """An oracle's `fit` raised, hung past its limit or killed its worker (the reason says which)."""


def _subreaper() -> None:
    """Orphans of a worker become our children (so a plain worker's forks can be found and ended)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _children() -> list[int]:
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry))
    return out


def _check_readable(folder: Path, name: str, max_entries: int = 20_000) -> None:
    """A root harness's worker reads the submission and the track's assets as an unprivileged user:
    refuse (with the fix) a folder it could not read (an entry without read / search for others)."""
    import stat as st_

    todo, seen = [folder], 0
    while todo and seen < max_entries:
        p = todo.pop()
        try:
            info = os.lstat(p)
        except OSError:
            continue
        seen += 1
        if st_.S_ISLNK(info.st_mode):
            continue
        need = 0o005 if st_.S_ISDIR(info.st_mode) else 0o004
        if info.st_mode & need != need:
            raise SubmissionError(
                f"the sandbox runs {name} as an unprivileged user, who cannot read {p} (mode "
                f"{info.st_mode & 0o777:03o}); make the folder readable by all users (chmod -R a+rX "
                f"{folder}) or run with --process-limit 0 (no process limit: the worker then runs as root)")
        if st_.S_ISDIR(info.st_mode):
            try:
                todo.extend(p / c for c in os.listdir(p))
            except OSError:
                pass


class Worker:
    """One submission × model run in a worker process (start lazily, `close()` always)."""

    def __init__(self, sub: Submission, overrides: dict[str, Any], spec: ModelSpec, config: WorkerConfig,
                 fit: dict[str, Any] | None = None) -> None:
        """`fit`: for an oracle, the `fit` message (train columns, class names, explainer, seed) sent
        to every fresh worker before its first batch; `fit_seconds` records each fit's duration."""
        self.sub, self.overrides, self.spec, self.config = sub, dict(overrides), spec, config
        self.fit = fit
        self.fit_seconds: list[float] = []
        self.mode = resolve_mode(config.sandbox)
        # the task limit binds per worker (a user namespace, or a root harness's worker under its own uid)
        self.nproc = bool(config.limits.processes) and warn_process_limit(self.mode, config.limits)
        self.as_uid = self.nproc and self.mode == "bwrap" and own_uid()
        if self.as_uid:  # the submission runs from a copy made readable (`Submission.stage`)
            for folder in [*config.assets.values(), *([config.environment] if config.environment else [])]:
                _check_readable(Path(folder), sub.name)
        from benchmark.submission.importing import package_name
        from benchmark.submission.requirements import allowed_modules

        self.package = package_name(sub.name, sub.hash)
        self.allowed = sorted(allowed_modules(sub.requires, config.environment))
        self._stage: tempfile.TemporaryDirectory | None = None
        self._staged: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.guard: Guard | None = None
        self._scratch_path: Path | None = None
        self.scratch_notes: list[str] = []  # what the harness did to over-limit scratch folders
        self.channel: Channel | None = None
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self._home: tempfile.TemporaryDirectory | None = None
        self.starts = 0
        self._token = ""
        self.unsupported: str | None = None
        self.landlock = self.mode == "none" and landlock.problem() is None  # the plain worker confines itself
        # set by start(): whether the started worker can read no file outside its allow-list (bubblewrap, or
        # Landlock launched and reported by the worker); what hidden-copy runs (#50) require
        self.confined = False

    # -- life cycle -----------------------------------------------------------------------------
    def _scratch(self) -> Path:
        """The submission's scratch folder, brought back under its bound (emptied) when it is over;
        for workers under their own uid, every entry given to their shared group."""
        from benchmark.resources import data_home

        root = self.config.scratch_root or data_home() / "scratch"
        path = root / self.sub.name
        path.mkdir(parents=True, exist_ok=True)
        self._settle(path)
        return path

    def _settle(self, path: Path) -> None:
        limit = self.config.limits.scratch_bytes
        group = WORKER_GID if self.as_uid else None
        if limit is None and group is None:
            return
        use = measure(path, limit, group=group)
        if use.over:
            done = clean(path)
            note = _scratch_note(path, use.over, limit, done)
            self.scratch_notes.append(note)
            from benchmark.progress import console

            console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
            if group is not None:
                measure(path, None, group=group)

    def start(self) -> str | None:
        """Start a fresh worker; returns the submission's reason to refuse the model (or None).
        Raises SubmissionError / ResourceError when the submission or the model cannot load."""
        self.close()
        self.starts += 1
        self._stage = tempfile.TemporaryDirectory(prefix="xaibench-submission-")
        self._staged = staged = self.sub.stage(Path(self._stage.name))  # exactly the hashed files, read-only
        parent, child = socket.socketpair()
        scratch = self._scratch()
        worker_argv = worker_command("benchmark.isolation.worker", "--fd", str(child.fileno()))
        environment = self.config.environment
        if self.mode == "bwrap":
            model_dir = Path(self.spec.directory) if self.spec.directory is not None else None
            argv = bwrap_argv(worker_argv, model_dir=model_dir, submission_dir=staged,
                              scratch_dir=scratch, hidden=self.config.hidden, limits=self.config.limits,
                              assets=self.config.assets, as_uid=self.as_uid, environment=environment)
            env, cwd = {**worker_env(INSIDE_SCRATCH, "/tmp"), **asset_paths(self.config.assets, True)}, None
            sub_path, model_path = INSIDE_SUBMISSION, INSIDE_MODEL
            env_path = INSIDE_ENVIRONMENT if environment is not None else None
        else:
            _subreaper()
            self._home = tempfile.TemporaryDirectory(prefix="xaibench-worker-")
            argv, cwd = worker_argv, self._home.name
            if self.landlock:  # confined before any import (benchmark.isolation.landlock says why)
                rules = landlock_rules(model_dir=self.spec.directory, submission_dir=staged, scratch_dir=scratch,
                                       home=Path(self._home.name), hidden=self.config.hidden,
                                       assets=self.config.assets, environment=environment)
                argv = worker_command("benchmark.isolation.landlock", json.dumps(rules), "benchmark.isolation.worker",
                                      "--fd", str(child.fileno()))
            env = {**worker_env(str(scratch), self._home.name), **asset_paths(self.config.assets, False)}
            self._token = env["XAIBENCH_WORKER"] = os.urandom(8).hex()
            sub_path, model_path = str(staged), None
            env_path = str(environment) if environment is not None else None
        try:
            self.proc = subprocess.Popen(argv, pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                         start_new_session=True)
        finally:
            child.close()
        self._scratch_path = scratch
        self.guard = self._guard(scratch)
        self.channel = Channel(parent, self.config.max_bytes)
        self._tail.clear()
        self._tail_len = 0
        threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True).start()
        drop = {"uid": UID_BASE + self.proc.pid, "gid": WORKER_GID} if self.as_uid else None
        start = {"type": "start", "limits": self.config.limits.as_dict(processes=self.nproc), "drop": drop,
                 "torch_threads": self.config.torch_threads,
                 "model": self.spec.wire(model_path), "environment": env_path,
                 "submission": {"name": self.sub.name, "version": self.sub.version, "kind": self.sub.kind,
                                "entry": self.sub.entry, "path": sub_path, "parameters": self.sub.parameters,
                                "overrides": self.overrides, "files": self.sub.files,
                                "requires": self.sub.requires, "package": self.package,
                                "allowed": self.allowed}}
        try:
            self.channel.send(start)
            reply = self.channel.recv(time.monotonic() + START_TIMEOUT_S)
        except Deadline:
            self.close()
            raise SubmissionError(f"{self.sub.name} did not start within {START_TIMEOUT_S:g} s (import, model "
                                  "load and constructor); fix its start-up") from None
        except WireError as exc:
            why = self._death(str(exc))
            self.close()
            raise SubmissionError(f"{self.sub.name}'s worker failed during start-up: {why}") from None
        if not isinstance(reply, dict) or reply.get("type") not in ("ready", "error"):
            self.close()
            raise SubmissionError(f"{self.sub.name}'s worker answered the start with a malformed message")
        if reply["type"] == "error":
            self.close()
            msg = self.author_view(_clean(reply.get("message", "")))
            if reply.get("stage") == "sandbox":
                raise SandboxError(f"the worker could not switch to a user of its own ({msg}); run with "
                                   "--process-limit 0 to run it without the process limit")
            if reply.get("stage") == "model":
                raise ResourceError(f"the model under test could not be loaded: {msg}")
            if reply.get("stage") == "parameters":
                raise ParameterError(msg)
            if reply.get("stage") == "import":
                raise SubmissionImportError(msg or f"{self.sub.name} failed to import")
            raise SubmissionError(msg or f"{self.sub.name} failed to start")
        self.unsupported = None if reply.get("unsupported") is None else _clean(reply["unsupported"])
        self.confined = self.mode == "bwrap" or (self.landlock and reply.get("landlock") == landlock.version())
        if self.unsupported is None and self.fit is not None:
            self._fit()
        return self.unsupported

    def author_view(self, text: str) -> str:
        """A message from the worker with the submission's paths as its author knows them (the worker sees a
        copy: `/xaibench/submission` or the staged folder) and the fix for a file `[files]` does not declare."""
        for inside in (INSIDE_SUBMISSION, str(self._staged) if self._staged is not None else None):
            if inside:
                text = text.replace(inside, str(self.sub.path))
        return self.sub.undeclared(text)

    def _fit(self) -> None:
        """Send the oracle's `fit` and wait for it (FitError on an exception, a hang or a crash)."""
        limit = self.config.fit_timeout_s
        channel, fit = self.channel, self.fit
        assert channel is not None and fit is not None  # called by start(), for an oracle, once the worker is up
        try:
            deadline = time.monotonic() + limit if limit > 0 else None
            channel.send({"type": "fit", **fit})
            reply = channel.recv(deadline)
            while isinstance(reply, dict) and reply.get("type") == "predict":  # a served model, while fitting
                self._serve_predict(reply, [])
                reply = channel.recv(deadline)
        except Deadline:
            self.close()
            raise FitError(f"fit timed out (limit {limit:g} s; raise --fit-timeout or fix the oracle)") from None
        except WireError as exc:
            why = self._death(str(exc))
            self.close()
            raise FitError(f"fit crashed: {why}") from None
        if isinstance(reply, dict) and reply.get("type") == "fitted" and isinstance(reply.get("seconds"), (int, float)):
            self.fit_seconds.append(float(reply["seconds"]))
            return
        self.close()
        if isinstance(reply, dict) and reply.get("type") == "fit-error":
            raise FitError(f"fit {self.author_view(_clean(reply.get('message', 'failed')))}")
        raise FitError("fit answered with a malformed message")

    def _drain(self, stream) -> None:
        try:
            for chunk in iter(lambda: stream.read1(65536), b""):
                self._tail.append(chunk)
                self._tail_len += len(chunk)
                while self._tail_len > TAIL_BYTES and len(self._tail) > 1:
                    self._tail_len -= len(self._tail.popleft())
        except (OSError, ValueError):
            pass

    def _death(self, what: str) -> str:
        """Why the worker is gone: its exit status or signal and the end of its output."""
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        if self.guard is not None and self.guard.reason:
            how = f"killed by the harness: {self.guard.reason}"
        elif code is None:
            how = what
        elif code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with status {code}"
        tail = _clean(b"".join(self._tail)[-300:].decode("utf-8", "replace"), 300)
        return f"worker {how}" + (f"; last output: {tail}" if tail else "")

    def _guard(self, scratch: Path) -> Guard | None:
        """The harness's watch over this worker: the folders it can fill on disk, and the memory of
        all its processes together (see benchmark.isolation.scratch)."""
        limits = self.config.limits
        folders = []
        if limits.scratch_bytes:
            folders.append((scratch, limits.scratch_bytes, "its scratch folder", "--scratch-limit"))
        if self.mode == "none" and self._home is not None and limits.tmp_bytes:
            folders.append((Path(self._home.name), limits.tmp_bytes, "its working folder", "the private /tmp's size"))
        if not folders and not limits.memory_bytes:
            return None
        proc = self.proc
        assert proc is not None  # called by start() once the worker process runs

        def kill() -> None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

        return Guard(folders, lambda: descendants(proc.pid), kill, memory=limits.memory_bytes).start()

    def close(self) -> None:
        """End the worker and everything it started; bring its scratch folder back under its bound."""
        if self.guard is not None:
            self.guard.stop()
        if self.channel is not None:
            try:
                if self.proc is not None and self.proc.poll() is None:
                    self.channel.send({"type": "stop"})
            except WireError:
                pass
            self.channel.close()
            self.channel = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            if self.mode == "none":
                self._end_orphans(self._token)
            self.proc = None
            if self.config.limits.scratch_bytes and self._scratch_path is not None:
                self._settle(self._scratch_path)
        self.guard = None
        if self._home is not None:
            self._home.cleanup()
            self._home = None
        if self._stage is not None:
            self._stage.cleanup()
            self._stage = self._staged = None

    @staticmethod
    def _end_orphans(token: str) -> None:
        """Without a PID namespace, forks that outlived the worker were re-parented to us (we are
        their subreaper): end every child that carries this worker's token in its environment (or
        cleared its environment), except the harness's own process pools. Round after round until one ends
        none: a child killed after it forked leaves its own child to us only when it dies, which `waitpid` has
        seen by the next round (a single round let such a grandchild live on)."""
        import multiprocessing

        keep = {p.pid for p in multiprocessing.active_children()}
        for _ in range(1000):  # each round ends a generation; a process tree is never this deep
            ended = 0
            for pid in _children():
                if pid in keep:
                    continue
                try:
                    environ = Path(f"/proc/{pid}/environ").read_bytes()
                except OSError:
                    continue
                if environ and f"XAIBENCH_WORKER={token}".encode() not in environ.split(b"\0"):
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    ended += 1
                except (ProcessLookupError, ChildProcessError, PermissionError):
                    pass
            if not ended:
                return

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- explaining -----------------------------------------------------------------------------
    def _serve_predict(self, msg: dict, ids: Sequence[str]) -> None:
        model = self.spec.served
        try:
            if model is None:
                raise ValueError("this model is not served by the harness")
            focus = msg.get("focus")
            if self.spec.one_at_a_time:
                if not isinstance(focus, str) or focus not in ids:
                    raise ValueError("predict() must be called while explaining an instance of the batch")
                if self.spec.per_instance:
                    model.focus(focus)
            inputs = msg.get("inputs")
            predict_visible = getattr(model, "predict_visible", None)
            if "visible" in msg and callable(predict_visible):
                # the worker ran the model's ground-truth-free part (`worker_part`): objects shown per image
                visible = msg["visible"]
                if not isinstance(visible, np.ndarray) or visible.dtype != np.bool_ or visible.ndim != 2:
                    raise ValueError("visible objects must be an (N, K) bool array")
                out = np.asarray(predict_visible(visible), dtype=np.float32)
            else:
                if self.spec.modality == "image":
                    if (not isinstance(inputs, np.ndarray) or inputs.ndim not in (3, 4)
                            or inputs.dtype.kind not in "fiub"):
                        raise ValueError("inputs must be an (N, H, W) numeric array")
                    inputs = inputs.astype(np.float32, copy=False)
                elif not (isinstance(inputs, list) and all(isinstance(d, list) and all(isinstance(w, str) for w in d)
                                                           for d in inputs)):
                    raise ValueError("inputs must be lists of word tokens")
                out = np.asarray(model.predict(inputs), dtype=np.float32)
            reply = {"type": "predicted", "outputs": out}
        except Exception as exc:  # a bad request is the submission's failure, never the harness's
            reply = {"type": "predict-error", "message": _clean(f"{type(exc).__name__}: {exc}", 300)}
        assert self.channel is not None  # a predict request came in on it
        self.channel.send(reply)

    def explain_all(self, ids: Sequence[str], inputs: Any, segments: np.ndarray | None, shapes: Sequence[tuple],
                    batch_size: int, seed: int = 0, timeout_s: float = 0) -> list[Entry]:
        """`explain` over consecutive batches of `batch_size` instances (no crash retry: a crash raises)."""
        out: list[Entry] = []
        for s in range(0, len(ids), batch_size):
            sl = slice(s, s + batch_size)
            out += self.explain(ids[sl], inputs[sl], None if segments is None else segments[sl], seed, shapes[sl],
                                timeout_s)
        return out

    def explain(self, ids: Sequence[str], inputs: Any, segments: np.ndarray | None, seed: int,
                shapes: Sequence[tuple[int, ...]], timeout_s: float) -> list[Entry]:
        """Explain one batch; raises WorkerCrash when the worker died (the caller retries)."""
        if self.proc is None or self.proc.poll() is not None:  # a fresh worker after a crash or time-out
            try:
                why_not = self.start()
            except FitError as exc:
                raise WorkerCrash(f"the restarted worker's {_clean(exc, 300)}", fatal=True) from None
            except (SubmissionError, ResourceError) as exc:
                raise WorkerCrash(f"the worker could not be restarted ({_clean(exc, 300)})") from None
            if why_not:
                raise WorkerCrash(f"the restarted worker refused the model ({why_not})")
        ids = list(ids)
        channel = self.channel
        assert channel is not None  # start() opened it
        t0 = time.perf_counter()
        deadline = time.monotonic() + timeout_s * len(ids) if timeout_s > 0 else None
        try:
            channel.send({"type": "batch", "ids": ids, "inputs": inputs, "segments": segments, "seed": int(seed)})
            while True:
                msg = channel.recv(deadline)
                if not isinstance(msg, dict):
                    raise WireError("a message that is not an object")
                if msg.get("type") == "predict":
                    self._serve_predict(msg, ids)
                    continue
                if msg.get("type") != "outputs" or not isinstance(msg.get("outputs"), list):
                    raise WireError(f"an unexpected message {str(msg.get('type'))[:40]!r}")
                outputs = msg["outputs"]
                break
        except Deadline:
            self.close()
            per = (time.perf_counter() - t0) / len(ids)
            reason = f"timed out (limit {timeout_s:g}s per instance; raise --timeout or fix the explainer)"
            return [Entry(i, False, None, reason, per) for i in ids]
        except PeerClosed:
            raise WorkerCrash(self._death("closed its channel")) from None
        except WireError as exc:
            self.close()
            raise WorkerCrash(f"worker broke the protocol ({_clean(exc, 200)})") from None
        per = (time.perf_counter() - t0) / len(ids)
        over = self.guard.check() if self.guard is not None else ""
        if over:  # the batch wrote past a bound: its outputs are not taken; the next batch gets a fresh worker
            self.close()
            return [Entry(i, False, None, _clean(f"killed by the harness: {over}"), per) for i in ids]
        if len(outputs) != len(ids):
            reason = f"returned {len(outputs)} outputs for a batch of {len(ids)}"
            return [Entry(i, False, None, reason, per) for i in ids]
        entries = []
        for i, out, shape in zip(ids, outputs, shapes):
            if isinstance(out, dict):
                entries.append(Entry(i, False, None, self.author_view(_clean(out.get("error", "failed"))), per))
                continue
            if not isinstance(out, np.ndarray) or out.dtype != np.float32:
                entries.append(Entry(i, False, None, "output is not a float32 array", per))
                continue
            arr, reason = validate_output(out, shape)
            entries.append(Entry(i, arr is not None, arr, reason, per))
        return entries
