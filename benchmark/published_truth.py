"""The published ground truth as a read-only asset, for the built-in `published-truth` alone (issue #58).

Where a board publishes its ground truth with its data — AIXI's maps, IDC's `gt` word flags, the RCNN's N / SDK /
SR labels (`Track.published_truth`) — the strongest data prior a submission can build from public files is that
ground truth itself: on the published model it scores perfectly, on a hidden copy it scores whatever the published
answers still give there. A hidden copy's floor must include it, so it is a built-in control the boards run
themselves (`submissions/published_truth`, `leaderboard.floors`), and the one submission that is handed the answers:

* `asset(track, resource, split)` — the folder `$XAIBENCH_HOME/assets/published-truth/<track>/<resource>/<revision>/
  <split>/` holding `truth.json` (`{"format", "track", "resource", "revision", "split", "ids", "shapes"}`) and
  `values.npy` (every map's float32 values, flat, in the order of `ids`): the track's `truth_maps` of the published
  resource — the hidden copies' runs get the *published* answers, never a copy's; written once, atomically (a
  temporary folder, then renamed);
* `receives(sub)` — whether `sub` is the built-in `published-truth`, recognised by its code hash (the hash of
  `submissions/published_truth` with everything it imports), never by its name: a folder renamed to it has another
  hash, and a results repository reserves a built-in's name for its code. The runner mounts the asset in that
  worker alone (`benchmark.runner.assets_for`); every other submission that asks for it is refused like any asset
  its board does not offer, before anything runs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.errors import XaibenchError

__all__ = ["ASSET", "FORMAT", "TRUTH_FILE", "VALUES_FILE", "asset", "offered", "receives"]

ASSET = "published-truth"  # the asset's name and the built-in's: its worker finds it at $XAIBENCH_ASSET_PUBLISHED_TRUTH
TRUTH_FILE = "truth.json"
VALUES_FILE = "values.npy"
FORMAT = 1


def offered(track: Any) -> bool:
    """Whether boards of `track` publish their ground truth as a map (`Track.published_truth`)."""
    return getattr(track, "published_truth", None) is not None


def receives(sub: Any) -> bool:
    """Whether `sub` is the installed built-in `published-truth`, by its code hash (module docstring)."""
    from benchmark.submission import builtins

    mine = builtins().get(ASSET)
    return mine is not None and getattr(sub, "hash", None) == mine.hash


def _folder(track: Any, resource: Any, split: str) -> Path:
    from benchmark.resources import data_home

    for part in (track.name, str(resource.revision), split):
        if not part or "/" in part or part.startswith("."):
            raise XaibenchError(f"the published ground truth of {resource.name} cannot be kept under {part!r}")
    return (data_home() / "assets" / ASSET / track.name / str(resource.name).replace("/", "__") / str(resource.revision)
            / split)


def asset(track: Any, resource: Any, split: str) -> dict[str, Path]:
    """{ASSET: the folder} of `resource`'s published ground truth of `split` (module docstring), written on first use;
    `XaibenchError` where the track publishes none."""
    if not offered(track):
        raise XaibenchError(f"the {track.name} track publishes no ground truth map for the built-in {ASSET}")
    folder = _folder(track, resource, split)
    if (folder / TRUTH_FILE).is_file() and (folder / VALUES_FILE).is_file():
        return {ASSET: folder}
    ids, maps = track.truth_maps(resource, split)
    arrays = [np.asarray(m, dtype=np.float32) for m in maps]
    if len(ids) != len(arrays) or len(set(ids)) != len(ids):
        raise XaibenchError(f"{resource.name}: the published ground truth of {split} names {len(ids)} instances for "
                            f"{len(arrays)} maps, or an instance twice")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        meta = {"format": FORMAT, "track": track.name, "resource": resource.name, "revision": str(resource.revision),
                "split": split, "ids": [str(i) for i in ids], "shapes": [list(a.shape) for a in arrays]}
        (tmp / TRUTH_FILE).write_text(json.dumps(meta), encoding="utf-8")
        flat = np.concatenate([a.reshape(-1) for a in arrays]) if arrays else np.zeros(0, np.float32)
        np.save(tmp / VALUES_FILE, flat.astype(np.float32), allow_pickle=False)
        tmp.chmod(0o755)
        try:
            os.rename(tmp, folder)
        except OSError:  # another run wrote it first: theirs is the same
            if not (folder / TRUTH_FILE).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {ASSET: folder}
