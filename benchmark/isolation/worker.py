"""The worker: the only process that runs a submission's code (`python -m benchmark.isolation.worker --fd N`).

It never holds ground truth. The harness (`benchmark.isolation`) starts one per evaluation run,
inside the sandbox (`benchmark.isolation.sandbox`), and talks to it over one socket (`benchmark.isolation.wire`):

1. harness → `start`: the resource limits, the submission (its staged folder, entry, parameters,
   declared files, the package name it is imported under and the top-level modules it may import),
   the model spec (a loader + the read-only model folder, or a served black box), the submission's
   environment (a folder of its own packages, or none) and, for a root harness, the uid and group
   to switch to (`drop`);
   the worker lowers its limits, loads the model (harness code, before any submission code runs),
   switches to that uid for good (`benchmark.isolation.sandbox.drop_privileges`: the task limit binds from
   here on), puts the environment first on `sys.path` (a plain entry: no `.pth` file of it runs),
   imports and constructs the submission (`benchmark.submission.importing`), and answers `ready` (with the
   submission's `unsupported(model)` reason, if any, and the Landlock ABI it confined itself under, 0
   for none: `benchmark.isolation.landlock`, which a plain worker runs before this module is imported)
   or `error` (stage "model", "import", "parameters" or "submission").
2. harness → `batch` (ids, inputs, segmentation, seed): the worker answers `outputs` — one item per
   instance, a float32 array or `{"error": reason}` — after calling `explain` on the whole batch (on
   an exception, again instance by instance to isolate the bad ones). For a `per_instance` model
   it calls `explain` once per instance (see `benchmark.models.spec`).
   A served model's `predict` sends `predict` (inputs — or, for the AIXI function model, which of
   the focused instance's objects each image shows — and the instance in focus) and waits for
   `predicted` or `predict-error`.
3. harness → `stop`, or the harness kills the worker.

Oracles (`kind = "oracle"`, the trust track) take the same path with two differences: after `ready`
the harness sends `fit` (the resource's training split, the class names, the explainer that produced
the explanations, the seed) and the worker answers `fitted` (seconds) or `fit-error`; each `batch`
is then judged (`judge`), one bool per instance and optionally a score, sent as a two-element float32
array [1 = trustworthy, score or score-failure code] so the harness validates and caches verdicts like
explanations (`benchmark.contracts.judgement_parts`).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.isolation.wire import Channel, PeerClosed, channel_from_fd

MAX_REASON = 500
_LIMITS: dict = {}  # the limits this worker runs under (from `start`), for naming them in reasons


def limit_hint(exc: BaseException) -> str:
    """Which of the worker's limits an exception most likely hit, as " (…: option)", or ""."""
    import errno

    from benchmark.store.storage import fmt_bytes

    mem, procs, size = _LIMITS.get("memory_bytes"), _LIMITS.get("processes"), _LIMITS.get("file_bytes")
    if isinstance(exc, MemoryError) and mem:
        return f" (the worker's address-space limit is {fmt_bytes(mem)}: --memory-limit)"
    thread = isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)
    if procs and (thread or isinstance(exc, OSError) and exc.errno == errno.EAGAIN):
        return f" (the worker's process limit is {procs} processes and threads: --process-limit)"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG and size:
        return f" (the worker's file-size limit is {fmt_bytes(size)})"
    return ""


def reason_of(exc: BaseException) -> str:
    """An instance's failure reason for `exc`: "raised <Type>: <message>" with the limit it most likely
    hit (`limit_hint`), at most `MAX_REASON` characters."""
    hint = limit_hint(exc)
    return f"raised {type(exc).__name__}: {exc}"[: MAX_REASON - len(hint)] + hint


def to_output(out: Any) -> Any:
    """A float32 array for the wire, or {"error": why} when `out` is not numeric."""
    try:
        arr = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError, OverflowError) as exc:
        return {"error": f"output is not a numeric array ({exc})"[:MAX_REASON]}
    except BaseException as exc:  # noqa: BLE001 - a hostile __array__ / __float__
        return {"error": f"output could not be converted ({reason_of(exc)})"[:MAX_REASON]}
    return arr


def _one_each(items: Any, batch: Any, verb: str, noun: str) -> list[Any]:
    """`items` as a list of exactly one per instance of `batch` (else `_CountError`)."""
    try:
        items = list(items)
    except TypeError:
        items = []
    if len(items) != len(batch):
        raise _CountError(f"{verb} {len(items)} {noun} for a batch of {len(batch)}")
    return items


def _call(explainer: Any, model: Any, batch: Any) -> list[Any]:
    return [to_output(o) for o in _one_each(explainer.explain(model, batch), batch, "returned", "outputs")]


class _CountError(Exception):
    pass


def to_verdict(value: Any, score: float = -1.0) -> Any:
    """A judged bool and its score (or score code, `benchmark.contracts.SCORE_REASONS`) as a two-element
    float32 array [1 = trustworthy, score], or {"error": why}. The exact type is checked (not
    isinstance, which a hostile object can fake) and nothing of it is called."""
    if type(value) is bool or type(value) is np.bool_:
        return np.array([1.0 if bool(value) else 0.0, score], dtype=np.float32)
    return {"error": f"judge returned a {type(value).__name__[:60]} for an instance, not a bool"}


def _judge(oracle: Any, batch: Any) -> list[Any]:
    from benchmark.contracts import judgement_parts

    verdicts, scores = judgement_parts(oracle.judge(batch), len(batch))
    return [to_verdict(v, s) for v, s in zip(_one_each(verdicts, batch, "judged", "instances"), scores)]


def run_oracle(oracle: Any, batch: Any) -> list[Any]:
    """One verdict per instance of `batch` (see `to_verdict`); the whole batch in one `judge` call,
    again instance by instance if that raises."""
    return _guarded_batch(lambda b: _judge(oracle, b), batch)


def _single(batch: Any, i: int) -> Any:
    from benchmark.contracts import Batch

    seg = None if batch.segments is None else batch.segments[i : i + 1]
    return Batch(ids=[batch.ids[i]], inputs=batch.inputs[i : i + 1], segments=seg, seed=batch.seed)


def _guarded(call: Any, b: Any) -> list[Any]:
    try:
        return call(b)
    except _CountError as exc:
        return [{"error": str(exc)}] * len(b)
    except BaseException as exc:  # noqa: BLE001 - SystemExit / KeyboardInterrupt from a submission too
        return [{"error": reason_of(exc)}] * len(b)


def _guarded_batch(call: Any, batch: Any) -> list[Any]:
    """`call(batch)`; if it raises, `call` on each instance alone so one bad instance does not fail
    its companions. A wrong number of outputs fails the whole call (every instance gets the reason)."""
    try:
        return call(batch)
    except _CountError as exc:
        return [{"error": str(exc)}] * len(batch)
    except BaseException as exc:  # noqa: BLE001
        if len(batch) == 1:
            return [{"error": reason_of(exc)}]
        return [item for i in range(len(batch)) for item in _guarded(call, _single(batch, i))]


def run_explainer(explainer: Any, model: Any, batch: Any, per_instance: bool = False) -> list[Any]:
    """One item per instance of `batch`: a float32 array, or {"error": reason}.

    `per_instance`: call `explain` on one instance at a time, focusing the model on it (models whose
    output depends on the explained instance). Otherwise the whole batch in one call; if that
    raises, instance by instance so one bad instance does not fail its companions. A wrong number
    of outputs fails the whole call (every instance gets the reason)."""
    call = lambda b: _call(explainer, model, b)  # noqa: E731
    if per_instance:
        out = []
        for i in range(len(batch)):
            model.focus(batch.ids[i])
            out += _guarded(call, _single(batch, i))
        return out
    return _guarded_batch(call, batch)


class ServedModel:
    """The worker's proxy of a harness-held black box: `predict` round-trips over the channel. For a model
    whose `worker_part` is "visible-objects" (the AIXI function model) the proxy computes which objects of
    the instance in focus each image shows (`ObjectView`, from the batch's image and object map: no
    ground truth) and sends those K booleans per image instead of the image."""

    white_box = False
    module = None

    def __init__(self, channel: Channel, name: str, task: str, n_outputs: int, modality: str,
                 batch_size: int = 1024, reads: str | None = None, visible_fraction: float = 0.5) -> None:
        self._channel = channel
        self._focus: str | None = None
        self.name, self.task, self.n_outputs, self.modality = name, task, int(n_outputs), modality
        self.batch_size = int(batch_size)
        self._reads, self._fraction = reads, float(visible_fraction)
        self._shown: dict[str, Any] = {}  # instance id → (image, object map), then its ObjectView

    def attach(self, batch: Any) -> None:
        """Keep copies of the batch's images and object maps (before any explainer code sees the batch), for
        the "visible-objects" part; a batch without object maps leaves the proxy sending images."""
        self._shown.clear()
        if self._reads == "visible-objects" and batch.segments is not None:
            for i, image, objects in zip(batch.ids, batch.inputs, batch.segments):
                self._shown[str(i)] = (np.array(image, dtype=np.float32), np.array(objects))

    def focus(self, instance: str) -> None:
        """Explain `instance` next: the harness answers `predict` for it (per-instance models)."""
        self._focus = str(instance)

    def _visible(self, x: np.ndarray) -> np.ndarray | None:
        """The objects of the instance in focus each image shows, or None when the proxy cannot tell."""
        from benchmark.models.aixi_function import ObjectView

        focus = self._focus
        shown = self._shown.get(focus) if focus is not None else None
        if focus is None or shown is None:
            return None
        if isinstance(shown, tuple):
            shown = self._shown[focus] = ObjectView(*shown)
        return shown.visible(x, self._fraction)

    def predict(self, inputs: Any) -> np.ndarray:
        """The harness model's outputs (N, n_outputs) for `inputs` (images (N, H, W), or token lists);
        ValueError with the harness's reason when it refuses them."""
        x: np.ndarray | list[list[str]]
        msg: dict[str, Any] = {"type": "predict", "focus": self._focus}
        if self.modality == "image":
            x = np.asarray(inputs, dtype=np.float32)
            if len(x) == 0:
                return np.zeros((0, self.n_outputs), dtype=np.float32)
            visible = self._visible(x)
            msg.update({"visible": visible} if visible is not None else {"inputs": x})
        else:
            msg["inputs"] = [[str(w) for w in doc] for doc in inputs]
        self._channel.send(msg)
        reply = self._channel.recv()
        if reply.get("type") == "predicted":
            return np.asarray(reply["outputs"], dtype=np.float32)
        raise ValueError(f"model {self.name} refused the input: {reply.get('message', 'unknown reason')}")

    def target(self, inputs: Any) -> np.ndarray:
        """The explained output per input: the top class (0 for a one-output model)."""
        if self.n_outputs == 1:
            return np.zeros(len(inputs), dtype=np.int64)
        return self.predict(inputs).argmax(axis=1)
class FixedTargets:
    """The model with the explained output fixed per instance (`ModelSpec.targets`)."""

    def __init__(self, model: Any, targets: dict[str, int]) -> None:
        self._model, self._targets = model, {str(k): int(v) for k, v in targets.items()}
        self._focus: str | None = None

    def focus(self, instance: str) -> None:
        """Explain `instance` next (passed on to the wrapped model when it has `focus`)."""
        self._focus = str(instance)
        if hasattr(self._model, "focus"):
            self._model.focus(instance)

    def target(self, inputs: Any) -> np.ndarray:
        """The instance in focus's fixed output, for every input (KeyError before any `focus`)."""
        if self._focus is None:
            raise KeyError("no instance in focus: target() answers while an instance is explained")
        return np.full(len(inputs), self._targets[self._focus], dtype=np.int64)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def _model(start: dict, channel: Channel) -> Any:
    model = _base_model(start, channel)
    targets = start["model"].get("targets")
    return FixedTargets(model, targets) if targets else model


def _base_model(start: dict, channel: Channel) -> Any:
    spec = start["model"]
    if "served" in spec:
        s = spec["served"]
        return ServedModel(channel, s["name"], s["task"], s["n_outputs"], s["modality"], s.get("batch_size", 1024),
                           s.get("reads"), s.get("visible_fraction", 0.5))
    from benchmark.models.variants.randomise import apply
    from benchmark.models.spec import LOADERS

    return apply(LOADERS[spec["loader"]](Path(spec["directory"]), spec["name"], **spec["options"]),
                 spec.get("randomisation"))


def serve(channel: Channel) -> int:
    """The worker's side of the protocol (module docstring, steps 1–3): `start`, then `fit` / `batch`
    until `stop`; returns the process's exit status (0 after `stop`, 1 when the start failed)."""
    from benchmark.isolation import allocator
    from benchmark.isolation.sandbox import apply_limits, drop_privileges
    from benchmark.submission import Submission

    start = channel.recv()
    _LIMITS.update(start.get("limits") or {})
    apply_limits(start.get("limits", {}))
    allocator.tune()
    if start.get("torch_threads"):
        import torch

        torch.set_num_threads(int(start["torch_threads"]))
    try:
        model = _model(start, channel)
    except BaseException as exc:  # noqa: BLE001
        channel.send({"type": "error", "stage": "model", "message": f"{type(exc).__name__}: {exc}"[:MAX_REASON]})
        return 1
    drop = start.get("drop")
    if drop:
        try:
            drop_privileges(int(drop["uid"]), int(drop["gid"]))
        except (OSError, KeyError, TypeError, ValueError) as exc:
            channel.send({"type": "error", "stage": "sandbox", "message": f"{type(exc).__name__}: {exc}"[:MAX_REASON]})
            return 1
        _die_with_parent()  # a change of uid clears the parent-death signal: set it again
    per_instance = bool(start["model"].get("per_instance"))
    s = start["submission"]
    if start.get("environment"):  # the submission's own packages, first; their .pth files are not run
        import importlib

        sys.path.insert(0, str(start["environment"]))
        importlib.invalidate_caches()
    stage = "import"
    try:
        sub = Submission(name=s["name"], version=s["version"], kind=s["kind"], entry=s["entry"],
                         path=Path(s["path"]), parameters=s["parameters"], files=dict(s.get("files") or {}),
                         requires=list(s.get("requires") or []))
        allowed = s.get("allowed")
        explainer = sub.instantiate(s["overrides"], staged=True, package=s.get("package"),
                                    allowed=None if allowed is None else frozenset(allowed))
        stage = "submission"
        unsupported = getattr(explainer, "unsupported", None)
        why_not = unsupported(model) if callable(unsupported) else None
    except BaseException as exc:  # noqa: BLE001
        from benchmark.errors import ParameterError

        stage = "parameters" if isinstance(exc, ParameterError) else stage
        channel.send({"type": "error", "stage": stage, "message": str(exc)[:MAX_REASON],
                      "trace": traceback.format_exc()[-2000:]})
        return 1
    from benchmark.isolation import landlock

    channel.send({"type": "ready", "unsupported": None if why_not is None else str(why_not)[:MAX_REASON],
                  "landlock": landlock.enforced})
    from benchmark.contracts import Batch

    oracle = s["kind"] == "oracle"
    while True:
        msg = channel.recv()
        kind = msg.get("type")
        if kind == "stop":
            return 0
        if kind == "fit" and oracle:
            channel.send(fit_oracle(explainer, model, msg))
            continue
        if kind != "batch":
            continue
        inputs = msg["inputs"]
        batch = Batch(ids=list(msg["ids"]), inputs=inputs, segments=msg.get("segments"), seed=int(msg["seed"]))
        attach = getattr(model, "attach", None)  # a served model's proxy keeps what it needs of the batch
        if callable(attach):
            attach(batch)
        outputs = run_oracle(explainer, batch) if oracle else run_explainer(explainer, model, batch, per_instance)
        channel.send({"type": "outputs", "outputs": outputs})


def fit_oracle(oracle: Any, model: Any, msg: dict) -> dict:
    """`oracle.fit(OracleContext(...))` from a `fit` message → `fitted` (seconds) or `fit-error`."""
    import time

    from benchmark.contracts import OracleContext

    class_names = [str(c) for c in msg.get("class_names") or []]
    if class_names:
        try:
            model.class_names = class_names
        except AttributeError:
            pass
    context = OracleContext(model=model, train=msg.get("train"), explainer=_context_explainer(msg.get("explainer")),
                            seed=int(msg.get("seed", 0)), class_names=class_names,
                            explainer_name=str((msg.get("explainer") or {}).get("name", "")))
    t0 = time.perf_counter()
    try:
        oracle.fit(context)
    except BaseException as exc:  # noqa: BLE001
        return {"type": "fit-error", "message": reason_of(exc), "trace": traceback.format_exc()[-2000:]}
    return {"type": "fitted", "seconds": time.perf_counter() - t0}


def _context_explainer(spec: Any) -> Any:
    """The built-in explainer that produced the resource's explanations (None if it cannot be built)."""
    if not isinstance(spec, dict) or not spec.get("name"):
        return None
    try:
        from benchmark.submission import get_submission, is_builtin

        sub = get_submission(str(spec["name"]))
        if sub.kind != "explainer" or not is_builtin(sub):
            return None
        return sub.instantiate(dict(spec.get("parameters") or {}))
    except Exception:  # noqa: BLE001 - a context without an explainer; the oracle may bring its own
        return None


def _die_with_parent() -> None:
    """SIGKILL this worker when the harness dies (Linux PR_SET_PDEATHSIG), even outside bubblewrap."""
    try:
        import ctypes
        import signal

        parent = os.getppid()
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the harness died before the call
            os._exit(1)
    except (OSError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m benchmark.isolation.worker --fd N`: serve the harness on the socket N, then exit (never returns)."""
    parser = argparse.ArgumentParser(prog="python -m benchmark.isolation.worker")
    parser.add_argument("--fd", type=int, required=True)
    args = parser.parse_args(argv)
    _die_with_parent()
    channel = channel_from_fd(args.fd)
    try:
        code = serve(channel)
    except PeerClosed:
        code = 0
    sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
