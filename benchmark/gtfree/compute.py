"""Compute the GT-free metrics of every explainer on a ground-truth board, from the maps its Results
were scored from (the output cache), with the board's own model — and with that model randomised.

One file per (board, submission): `$XAIBENCH_HOME/metric-board/<track>/<resource>/<model>/<name>.json`,
written atomically, holding per-instance scores and failure codes of each metric on the model and on its
randomised copy (`benchmark.models.variants.randomise`: the one randomisation the boards' randomisation test uses
too). Its key (the Result's outputs digest, the model hash, the metrics and their parameters) is checked
on the next run: a matching file is reused, so an interrupted run resumes submission by
submission and a second run computes nothing.

Only data reaches the metrics: the maps a submission produced (checked against the Result's
`outputs_sha256`) and the model under test, in the harness; no submission code runs here.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from benchmark.errors import XaibenchError
from benchmark.gtfree import metrics_for
from benchmark.gtfree.base import GtFreeMetric, Scored
from benchmark.models.variants.randomise import RANDOM_SEED, randomised
from benchmark.progress import console, progress_bar
from benchmark.variant_runs.randomisation import result_outputs
from benchmark.store.results import Result, ids_digest

GT_TRACKS = ("aixi", "rcnn", "idc")  # the boards with ground truth a metric can be judged against
FORMAT = "xaibench-metric-board-v1"
VERSION = 3  # of the metric code: a change that can move a score bumps it, and stored files are recomputed
CHUNK = 16  # instances per metric call (Quantus builds every perturbation of a chunk at once)


def board_dir(home: Path, track: str, resource: str, model: str) -> Path:
    """The folder holding one board's per-submission metric files."""
    return Path(home) / "metric-board" / track / resource.replace("/", "__") / model


def _read_maps(home: Path, r: Result, ids: list[str]) -> tuple[list[np.ndarray | None], str | None]:
    """The maps a Result was scored from (None where the explainer failed), or a reason they can't be used."""
    try:
        first = result_outputs(r, ids, home)[0]
    except XaibenchError as exc:
        return [], str(exc)
    return [first[i].array if first[i].ok else None for i in ids], None


@dataclass
class BoardInputs:
    """What every submission's metrics on one board share: instances, model, targets."""

    track: str
    resource: str
    model_name: str
    ids: list[str]
    inputs: list[Any]
    model: Any
    per_instance: bool
    targets: np.ndarray
    model_hash: str


def load_board(track: str, resource: str, model_name: str, split: str, limit: int | None) -> BoardInputs:
    """The board's instances (the first `limit` of the split, as its Results were run), model and the
    output each explanation explains (the spec's per-instance targets, else the prediction)."""
    from benchmark.resources import load_resource
    from benchmark.tracks import get_track

    trk = get_track(track)
    res = load_resource(resource)
    inst = trk.instances(res, split, limit)
    spec, info = trk.build_model(res, model_name, inst)
    model = spec.load()
    ids = list(inst.ids)
    inputs = list(inst.inputs)
    if spec.targets:
        targets = np.array([spec.targets.get(i, 0) for i in ids], dtype=np.int64)
    elif model.n_outputs == 1:
        targets = np.zeros(len(ids), dtype=np.int64)
    elif spec.per_instance:
        targets = np.array([_focused(model, i).target([x])[0] for i, x in zip(ids, inputs)], dtype=np.int64)
    else:
        targets = np.asarray(model.target(inputs), dtype=np.int64)
    return BoardInputs(track, resource, model_name, ids, inputs, model, spec.per_instance, targets, str(info["hash"]))


def _focused(model: Any, instance: str) -> Any:
    model.focus(instance)
    return model


def score_maps(metric: GtFreeMetric, model: Any, board: BoardInputs, maps: Sequence[np.ndarray | None],
               chunk: int = CHUNK) -> Scored:
    """One metric over every instance, in chunks; an instance without a map is coded "missing"."""
    n = len(board.ids)
    values, codes = np.full(n, np.nan), ["missing"] * n
    for i in range(n):
        if maps[i] is not None and not _fits(np.asarray(maps[i]), board.inputs[i]):
            codes[i] = "shape"
    have = [i for i in range(n) if maps[i] is not None and codes[i] != "shape"]
    for start in range(0, len(have), chunk):
        pos = have[start : start + chunk]
        got = metric(model, [board.inputs[i] for i in pos], [np.asarray(maps[i]) for i in pos],
                     board.targets[pos], ids=[board.ids[i] for i in pos], per_instance=board.per_instance)
        values[pos] = got.values
        for j, i in enumerate(pos):
            codes[i] = got.codes[j]
    return Scored(values, codes)


def _fits(m: np.ndarray, x: Any) -> bool:
    """A map fits its input: one value per token of a text, one per pixel of an image."""
    if isinstance(x, (list, tuple)):
        return m.ndim == 1 and len(m) == len(x)
    return m.shape == np.shape(x)


def _key(r: Result, board: BoardInputs, metrics: list[GtFreeMetric], control: bool) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "outputs_sha256": r.integrity.get("outputs_sha256"),
            "model": board.model_hash, "ids_sha256": ids_digest(board.ids), "randomised": bool(control),
            "seed": RANDOM_SEED, "metrics": {m.name: json.loads(json.dumps(m.params, default=list)) for m in metrics}}


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _pack(s: Scored) -> dict[str, list]:
    return {"values": [None if not np.isfinite(v) else float(v) for v in s.values], "codes": list(s.codes)}


def compute_board(results: Iterable[Result], home: Path, metric_names: Sequence[str] | None = None,
                  limit: int | None = None, control: bool = True) -> tuple[Path, list[str]]:
    """Compute (or reuse) every metric for every Result of one board; returns the board's folder and
    warnings (Results whose maps can't be used are named and skipped)."""
    results = list(results)
    first = results[0]
    track, resource, model_name = first.track, first.resource["name"], first.model["name"]
    split = first.resource.get("split") or "test"
    run_limit = first.coverage.get("limit") if first.coverage else None
    board = load_board(track, resource, model_name, split, run_limit)
    warnings: list[str] = []
    all_ids = list(board.ids)  # what the Results were scored on (their outputs digest covers all of them)
    if limit is not None:
        board.ids, board.inputs, board.targets = board.ids[:limit], board.inputs[:limit], board.targets[:limit]
    from benchmark.tracks import get_track

    metrics = [m for m in metrics_for(get_track(track).modality) if metric_names is None or m.name in metric_names]
    folder = board_dir(home, track, resource, model_name)
    shuffled: Any = None
    for r in results:
        out = folder / f"{r.submission['name'].replace('/', '_')}.json"
        key = _key(r, board, metrics, control)
        if out.exists():
            try:
                if json.loads(out.read_text()).get("key") == key:
                    continue
            except ValueError:
                pass  # a damaged file is recomputed
        if str(r.model.get("hash")) != board.model_hash:
            warnings.append(f"{r.submission['name']}: made on another model ({r.model.get('hash')}); skipped")
            continue
        if (r.coverage or {}).get("ids_sha256") not in (None, ids_digest(all_ids)):
            warnings.append(f"{r.submission['name']}: scored on other instances than the board's; skipped")
            continue
        maps, why = _read_maps(home, r, all_ids)
        if why:
            warnings.append(f"{r.submission['name']}: {why}; skipped")
            continue
        maps = maps[: len(board.ids)]
        t0 = time.perf_counter()
        data: dict[str, Any] = {"key": key, "submission": r.submission["name"],
                                "role": r.submission.get("role", "method"), "ids": board.ids,
                                "metrics": {}, "randomised": {}}
        with progress_bar(len(metrics), f"GT-free metrics: {r.submission['name']} on {resource}/{model_name}",
                          unit="metric") as bar:
            for m in metrics:
                data["metrics"][m.name] = _pack(score_maps(m, board.model, board, maps))
                if control and m.needs_model:
                    if shuffled is None:
                        shuffled = randomised(board.model)
                    data["randomised"][m.name] = _pack(score_maps(m, shuffled, board, maps))
                bar.advance(1)
        data["seconds"] = round(time.perf_counter() - t0, 3)
        _write(out, data)
    return folder, warnings


def load_board_scores(folder: Path) -> list[dict[str, Any]]:
    """Every submission file of a board's folder (damaged files are named on stderr and skipped)."""
    out = []
    for p in sorted(Path(folder).glob("*.json")):
        try:
            d = json.loads(p.read_text())
            if d.get("key", {}).get("format") == FORMAT:
                out.append(d)
        except (OSError, ValueError) as exc:
            console.print(f"warning: {p} is not readable ({exc}); skipped", style="yellow", markup=False)
    return out
