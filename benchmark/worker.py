"""The worker: the only process that runs a submission's code (`python -m benchmark.worker --fd N`).

It never holds ground truth. The harness (`benchmark.isolation`) starts one per evaluation run,
inside the sandbox (`benchmark.sandbox`), and talks to it over one socket (`benchmark.wire`):

1. harness → `start`: the resource limits, the submission (folder, entry, parameters) and the model
   spec (a loader + the read-only model folder, or a served black box);
   the worker lowers its limits, loads the model (harness code, before any submission code runs),
   imports and constructs the submission, and answers `ready` (with the submission's
   `unsupported(model)` reason, if any) or `error` (stage "model" or "submission").
2. harness → `batch` (ids, inputs, segmentation, seed): the worker answers `outputs` — one item per
   instance, a float32 array or `{"error": reason}` — after calling `explain` on the whole batch (on
   an exception, again instance by instance to isolate the bad ones). For a `per_instance` model
   it calls `explain` once per instance (see `benchmark.models.spec`).
   A served model's `predict` sends `predict` (inputs, the instance in focus) and waits for
   `predicted` or `predict-error`.
3. harness → `stop`, or the harness kills the worker.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

import numpy as np

MAX_REASON = 500


def reason_of(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {exc}"[:MAX_REASON]


def to_output(out: Any) -> Any:
    """A float32 array for the wire, or {"error": why} when `out` is not numeric."""
    try:
        arr = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError, OverflowError) as exc:
        return {"error": f"output is not a numeric array ({exc})"[:MAX_REASON]}
    except BaseException as exc:  # noqa: BLE001 - a hostile __array__ / __float__
        return {"error": f"output could not be converted ({reason_of(exc)})"[:MAX_REASON]}
    return arr


def _call(explainer: Any, model: Any, batch: Any) -> list[Any]:
    outputs = explainer.explain(model, batch)
    try:
        outputs = list(outputs)
    except TypeError:
        outputs = []
    if len(outputs) != len(batch):
        raise _CountError(f"returned {len(outputs)} outputs for a batch of {len(batch)}")
    return [to_output(o) for o in outputs]


class _CountError(Exception):
    pass


def run_explainer(explainer: Any, model: Any, batch: Any, per_instance: bool = False) -> list[Any]:
    """One item per instance of `batch`: a float32 array, or {"error": reason}.

    `per_instance`: call `explain` on one instance at a time, focusing the model on it (models whose
    output depends on the explained instance). Otherwise the whole batch in one call; if that
    raises, instance by instance so one bad instance does not fail its companions. A wrong number
    of outputs fails the whole call (every instance gets the reason)."""
    from benchmark.contracts import Batch

    def single(i: int) -> Batch:
        seg = None if batch.segments is None else batch.segments[i : i + 1]
        inp = batch.inputs[i : i + 1]
        return Batch(ids=[batch.ids[i]], inputs=inp, segments=seg, seed=batch.seed)

    def guarded(b: Batch) -> list[Any]:
        try:
            return _call(explainer, model, b)
        except _CountError as exc:
            return [{"error": str(exc)}] * len(b)
        except BaseException as exc:  # noqa: BLE001 - SystemExit / KeyboardInterrupt from a submission too
            return [{"error": reason_of(exc)}] * len(b)

    if per_instance:
        out = []
        for i in range(len(batch)):
            model.focus(batch.ids[i])
            out += guarded(single(i))
        return out
    try:
        return _call(explainer, model, batch)
    except _CountError as exc:
        return [{"error": str(exc)}] * len(batch)
    except BaseException as exc:  # noqa: BLE001
        if len(batch) == 1:
            return [{"error": reason_of(exc)}]
        return [item for i in range(len(batch)) for item in guarded(single(i))]


class ServedModel:
    """The worker's proxy of a harness-held black box: `predict` round-trips over the channel."""

    white_box = False
    module = None

    def __init__(self, channel: Any, name: str, task: str, n_outputs: int, modality: str,
                 batch_size: int = 1024) -> None:
        self._channel = channel
        self._focus: str | None = None
        self.name, self.task, self.n_outputs, self.modality = name, task, int(n_outputs), modality
        self.batch_size = int(batch_size)

    def focus(self, instance: str) -> None:
        self._focus = str(instance)

    def predict(self, inputs: Any) -> np.ndarray:
        if self.modality == "image":
            x = np.asarray(inputs, dtype=np.float32)
            if len(x) == 0:
                return np.zeros((0, self.n_outputs), dtype=np.float32)
        else:
            x = [[str(w) for w in doc] for doc in inputs]
        self._channel.send({"type": "predict", "focus": self._focus, "inputs": x})
        reply = self._channel.recv()
        if reply.get("type") == "predicted":
            return np.asarray(reply["outputs"], dtype=np.float32)
        raise ValueError(f"model {self.name} refused the input: {reply.get('message', 'unknown reason')}")

    def target(self, inputs: Any) -> np.ndarray:
        if self.n_outputs == 1:
            return np.zeros(len(inputs), dtype=np.int64)
        return self.predict(inputs).argmax(axis=1)


class FixedTargets:
    """The model with the explained output fixed per instance (`ModelSpec.targets`)."""

    def __init__(self, model: Any, targets: dict) -> None:
        self._model, self._targets, self._focus = model, {str(k): int(v) for k, v in targets.items()}, None

    def focus(self, instance: str) -> None:
        self._focus = str(instance)
        if hasattr(self._model, "focus"):
            self._model.focus(instance)

    def target(self, inputs: Any) -> np.ndarray:
        return np.full(len(inputs), self._targets[self._focus], dtype=np.int64)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def _model(start: dict, channel: Any) -> Any:
    model = _base_model(start, channel)
    targets = start["model"].get("targets")
    return FixedTargets(model, targets) if targets else model


def _base_model(start: dict, channel: Any) -> Any:
    spec = start["model"]
    if "served" in spec:
        s = spec["served"]
        return ServedModel(channel, s["name"], s["task"], s["n_outputs"], s["modality"], s.get("batch_size", 1024))
    from benchmark.models.spec import LOADERS

    return LOADERS[spec["loader"]](Path(spec["directory"]), spec["name"], **spec["options"])


def serve(channel: Any) -> int:
    from benchmark import allocator
    from benchmark.sandbox import apply_limits
    from benchmark.submission import Submission

    start = channel.recv()
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
    per_instance = bool(start["model"].get("per_instance"))
    s = start["submission"]
    try:
        sub = Submission(name=s["name"], version=s["version"], kind=s["kind"], entry=s["entry"],
                         path=Path(s["path"]), parameters=s["parameters"])
        explainer = sub.instantiate(s["overrides"])
        unsupported = getattr(explainer, "unsupported", None)
        why_not = unsupported(model) if callable(unsupported) else None
    except BaseException as exc:  # noqa: BLE001
        channel.send({"type": "error", "stage": "submission", "message": str(exc)[:MAX_REASON],
                      "trace": traceback.format_exc()[-2000:]})
        return 1
    channel.send({"type": "ready", "unsupported": None if why_not is None else str(why_not)[:MAX_REASON]})
    from benchmark.contracts import Batch

    while True:
        msg = channel.recv()
        kind = msg.get("type")
        if kind == "stop":
            return 0
        if kind != "batch":
            continue
        inputs = msg["inputs"]
        batch = Batch(ids=list(msg["ids"]), inputs=inputs, segments=msg.get("segments"), seed=int(msg["seed"]))
        channel.send({"type": "outputs", "outputs": run_explainer(explainer, model, batch, per_instance)})


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
    parser = argparse.ArgumentParser(prog="python -m benchmark.worker")
    parser.add_argument("--fd", type=int, required=True)
    args = parser.parse_args(argv)
    _die_with_parent()
    from benchmark.wire import PeerClosed, channel_from_fd

    channel = channel_from_fd(args.fd)
    try:
        code = serve(channel)
    except PeerClosed:
        code = 0
    sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
