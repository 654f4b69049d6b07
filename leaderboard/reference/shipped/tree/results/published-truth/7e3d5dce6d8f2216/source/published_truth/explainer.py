"""Data prior: the ground truth the board publishes with its data, returned as the map — never the model (issue #58).

A board whose ground truth ships with its data (AIXI's maps, IDC's `gt` word flags, the RCNN's N / SDK / SR labels)
can be answered from those files without explaining anything: on the published model such a map scores perfectly
(KL 0, κ 1, %first 0), so there it is a **reference** (a ceiling, never ranked, never a floor); on a hidden copy of
the model, whose reasoning is drawn from a secret, it is the strongest *public* data prior — what knowing the
published answers still gives — and the copies' floor counts it (`leaderboard.floors`).

The harness hands the published ground truth of the evaluated split to this built-in's worker alone, recognised by
its code hash (`benchmark.published_truth`): `$XAIBENCH_ASSET_PUBLISHED_TRUTH/truth.json` (the instance ids and each
map's shape) and `values.npy` (the maps' float32 values, flat, in that order). The map of instance i is its published
map; a text map is cut or padded with 0 to the document's length (a hidden copy's documents are the published ones,
cut to the same model length); an instance the published files do not hold, or whose image map has another shape,
gets the constant map 0 (it knows nothing there). The model is never called: the same map on any model."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model

ENV = "XAIBENCH_ASSET_PUBLISHED_TRUTH"  # `benchmark.isolation.sandbox.asset_env("published-truth")`
TRUTH_FILE, VALUES_FILE = "truth.json", "values.npy"  # `benchmark.published_truth`


def read_truth(folder: Path) -> dict[str, np.ndarray]:
    """{instance id: its published map} from the asset folder (module docstring)."""
    meta = json.loads((folder / TRUTH_FILE).read_text(encoding="utf-8"))
    values = np.load(folder / VALUES_FILE, allow_pickle=False).astype(np.float32, copy=False)
    out: dict[str, np.ndarray] = {}
    offset = 0
    for i, shape in zip(meta["ids"], meta["shapes"]):
        size = int(np.prod(shape, dtype=np.int64))
        if offset + size > values.size:
            raise ValueError(f"{folder / VALUES_FILE} holds {values.size} values, fewer than {TRUTH_FILE} names")
        out[str(i)] = values[offset:offset + size].reshape(shape)
        offset += size
    return out


def fitted(published: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    """`published` as a map of `shape`: itself; a 1-D map cut or padded with 0; else (or none) the constant 0."""
    if published is not None and published.shape == shape:
        return np.ascontiguousarray(published, dtype=np.float32)
    out = np.zeros(shape, dtype=np.float32)
    if published is not None and published.ndim == 1 and len(shape) == 1:
        n = min(shape[0], published.shape[0])
        out[:n] = published[:n]
    return out


class PublishedTruthExplainer:
    """Data prior: the board's published ground truth as the map (module docstring); reads no model.

    A ceiling on the published model and the strongest public data prior on its hidden copies.
    No published method: a reference of this project (issue #58). Image and text; needs the board's
    `published-truth` asset, which the harness hands to this built-in alone.

    Takes no parameters.
    """

    def __init__(self) -> None:
        self._maps: dict[str, np.ndarray] | None = None

    def _truth(self) -> dict[str, np.ndarray]:
        if self._maps is None:
            folder = os.environ.get(ENV)
            if not folder or not (Path(folder) / TRUTH_FILE).is_file():
                raise ValueError("this board offers no published ground truth ($XAIBENCH_ASSET_PUBLISHED_TRUTH): the "
                                 "harness hands it to the built-in published-truth alone, where a track publishes one")
            self._maps = read_truth(Path(folder))
        return self._maps

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One map per instance: its published ground truth, fitted to the instance's shape."""
        maps = self._truth()
        text = getattr(model, "modality", "image") == "text"
        out = []
        for k, i in enumerate(batch.ids):
            x = batch.inputs[k]
            shape = (len(x),) if text else tuple(np.shape(x))
            out.append(fitted(maps.get(str(i)), shape))
        return out
