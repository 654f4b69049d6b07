"""Build the AIXI resources (SPECS §3): draw every image once, render + encode it once, and write
one resource config per attribution function (`shape-ssin`, `shape-suum`, `shape-class`, …) with
`benchmark.resources.write_config` (each config is written atomically).

The image, instances and masks PNG bytes are shared by every config of a dataset; SSIN and SUUM
have the same weights, so they share the GT bytes too.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from benchmark.errors import ResourceError
from benchmark.models.aixi_function import IOTA_MAX, PATTERNS, AixiFunction, get_function
from benchmark.progress import progress_bar
from benchmark.resources import resource_root, write_config
from benchmark.resources.aixi_schema import FEATURES, GT_SCALE, PNG_PARAMS
from benchmark.resources.store import read_provenance
from generators.aixi import draw

FAMILY = "aixi"
VERSION = "v1"
SCALES: dict[str, tuple[int, int]] = {"paper": (50000, 2000), "default": (10000, 500), "demo": (8000, 200),
                                      "tiny": (64, 32)}
SPLIT_ORDER = ("train", "validation")  # the release draws train first, then validation
SMALL_OBJECT_PIXELS = 20
LAST_TIMINGS: dict[str, float] = {}  # seconds per phase of the latest build_aixi call (benchmarks)

CITATION = """@article{miro2023novel,
  title   = {A Novel Approach for Assessing the Fidelity of Explainable {AI} Methods
             Using Synthetic Ground Truth Saliency Maps},
  author  = {Mir{\\'o}-Nicolau, Miquel and Jaume-i-Cap{\\'o}, Antoni and Moy{\\`a}-Alcover, Gabriel},
  journal = {arXiv preprint arXiv:2302.05624},
  year    = {2023},
  url     = {https://arxiv.org/abs/2302.05624}
}"""

DESCRIPTION = (
    "AIXI-Shape and AIXI-Color (Miró-Nicolau et al. 2023): 128×128 synthetic grayscale images whose "
    "label is a known function of the number of objects of each pattern, so the correct saliency map "
    "is known per pixel: G = Σ_k w_k M_k. AIXI-Shape: 0–2 circles, squares and crosses on a 5×5 grid "
    "(all intensity 1); AIXI-Color: six non-intersecting circles of intensity 1/3, 2/3 or 1. Functions: "
    "SSIN = Σ w_k sin(π/2 ι̂_k) and SUUM = Σ w_k ι̂_k with w = (1/2, 1/4, 1/6), "
    "Class = [ι_1 > ι_2] with GT weights (1, 0.5, 0). Columns: id, image (PNG, model input = "
    "png/255), instances (object segmentation, 0 = background, j = object j), patterns (pattern of "
    "object j), masks (RGB PNG, "
    "channel k = per-pattern mask), counts, label, gt (16-bit PNG, G = png / 60000). Explainers may "
    "see id, image and instances only. Re-generated with xaibench's generator, which follows the "
    "random stream of the authors' release (miquelmn/aixi@1.0.0, seed 42)."
)


def _struct_binary(blobs: list[bytes]) -> pa.StructArray:
    """An Image column in `datasets`' storage: struct<bytes: binary, path: string>."""
    n = len(blobs)
    return pa.StructArray.from_arrays([pa.array(blobs, type=pa.binary()), pa.nulls(n, type=pa.string())],
                                      names=["bytes", "path"])


def _split_stats(split: str, layout: draw.Layout, visible: np.ndarray, labels: np.ndarray,
                 weights: Sequence[float], dataset: str) -> dict[str, Any]:
    n = len(layout)
    n_obj = layout.n_objects()
    counts = layout.counts()
    img_of = np.repeat(np.arange(n), n_obj)
    w = np.asarray(weights, dtype=np.float64)[layout.objects[:, 0].astype(np.int64)]
    pixels = np.bincount(img_of, weights=visible, minlength=n) if n else np.zeros(0)
    gt_mass = np.bincount(img_of, weights=(w > 0) & (visible > 0), minlength=n) if n else np.zeros(0)
    iota_max = IOTA_MAX[dataset]
    hist = {name: np.bincount(counts[:, k], minlength=iota_max + 1)[: iota_max + 1].tolist()
            for k, name in enumerate(PATTERNS[dataset])}
    p = f"{split}_"
    out = {
        p + "n_images": int(n),
        p + "n_objects": int(n_obj.sum()),
        p + "objects_per_image_mean": round(float(n_obj.mean()), 4) if n else 0.0,
        p + "object_pixel_share_mean": round(float((pixels / draw.SIZE**2).mean()), 5) if n else 0.0,
        p + f"objects_under_{SMALL_OBJECT_PIXELS}px_share":
            round(float((visible < SMALL_OBJECT_PIXELS).mean()), 5) if len(visible) else 0.0,
        p + "empty_gt_images": int((gt_mass == 0).sum()),
        p + "label_mean": round(float(labels.mean()), 5) if n else 0.0,
        p + "label_std": round(float(labels.std()), 5) if n else 0.0,
        p + "counts_histogram": hist,
    }
    if dataset == "color":
        out[p + "placement_attempts_per_image"] = round(layout.attempts / max(n, 1), 3)
    return out


@dataclass
class _Build:
    """What the stages of one `build_aixi` call share: the request, the drawn layouts, their renderings and
    the columns every config of the dataset shares."""

    dataset: str
    root: Path
    seed: int
    sizes: dict[str, int]  # split -> number of images
    redraw_off_by_one: bool
    weight_sets: list[tuple[float, ...]]  # distinct GT weights of the requested functions
    layouts: dict[str, draw.Layout] = field(default_factory=dict)
    rendered: dict[str, draw.Rendered] = field(default_factory=dict)
    shared: dict[str, dict[str, Any]] = field(default_factory=dict)  # split -> column -> arrow array(s)

    @property
    def iota_max(self) -> int:
        return IOTA_MAX[self.dataset]


def _check_request(dataset: str, functions: Sequence[str], class_rule: str, root: Path | None,
                   overwrite: bool) -> tuple[list[AixiFunction], Path, list[str]]:
    """(the functions, the root, the config names); refuses an unknown dataset, no function, or configs that
    exist unless `overwrite`."""
    if dataset not in IOTA_MAX:
        raise ValueError(f"unknown AIXI dataset '{dataset}'; one of {', '.join(IOTA_MAX)}")
    fns = [get_function(f, class_rule) for f in dict.fromkeys(functions)]
    if not fns:
        raise ValueError("functions must name at least one of ssin, suum, class")
    root = Path(root) if root is not None else resource_root(FAMILY)
    names = [f"{dataset}-{f.name}" for f in fns]
    existing = set(read_provenance(root, set_aside_damaged=True).get("configs", {})) if root.exists() else set()
    clash = [c for c in names if c in existing or (root / c).exists()]
    if clash and not overwrite:
        raise ResourceError(
            f"resource {FAMILY}/{clash[0]} already exists in {root}; "
            "pass --overwrite (overwrite=True) to replace it"
        )
    return fns, root, names


def _render_splits(b: _Build, workers: int) -> None:
    """Render + encode every split's images once (PNG bytes shared by all configs), in `workers` processes."""
    pool = draw.start_pool(workers)  # None for 1 worker; started before the progress bar's thread
    try:
        with progress_bar(sum(b.sizes.values()), f"AIXI-{b.dataset}: render + encode", unit="img") as bar:
            for split in SPLIT_ORDER:
                b.rendered[split] = draw.render(b.layouts[split], b.weight_sets, workers=workers, pool=pool,
                                                progress=bar.advance)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _shared_columns(b: _Build) -> None:
    """The columns every config of the dataset shares, built once per split (gt: one per weight set)."""
    for split in SPLIT_ORDER:
        lay, r = b.layouts[split], b.rendered[split]
        n = len(lay)
        b.shared[split] = {
            "id": pa.array([f"{split}-{i:06d}" for i in range(n)], type=pa.string()),
            "image": _struct_binary(r.image),
            "instances": _struct_binary(r.instances),
            "patterns": pa.ListArray.from_arrays(pa.array(lay.offsets.astype(np.int32)),
                                                 pa.array(lay.objects[:, 0].astype(np.int8), type=pa.int8())),
            "masks": _struct_binary(r.masks),
            "counts": pa.FixedSizeListArray.from_arrays(
                pa.array(lay.counts().astype(np.int8).ravel(), type=pa.int8()), 3),
            "gt": [_struct_binary(g) for g in r.gt],
        }


def _params(b: _Build, fn: AixiFunction) -> dict[str, Any]:
    """The config's generation parameters (its card and provenance)."""
    dataset = b.dataset
    return {
        "dataset": dataset,
        "function": fn.name,
        "task": fn.task,
        "weights": list(fn.weights),
        "iota_max": b.iota_max,
        "class_rule": fn.class_rule,
        "patterns": list(PATTERNS[dataset]),
        "seed": b.seed,
        "n_train": b.sizes["train"],
        "n_val": b.sizes["validation"],
        "split_order": list(SPLIT_ORDER),
        "image_size": draw.SIZE,
        "grid": draw.GRID,
        "cell": draw.CELL,
        "redraw_off_by_one": b.redraw_off_by_one if dataset == "shape" else None,
        "color_circles": draw.N_COLOR_CIRCLES if dataset == "color" else None,
        "image_values": list(draw.COLOR_VALUES) if dataset == "color" else [draw.SHAPE_VALUE],
        "gt_scale": GT_SCALE,
        "png_params": list(PNG_PARAMS),
        "source": "miquelmn/aixi@1.0.0 (uib_xsds/drawing.py, bin/shape.py, bin/color.py), "
                  "SPECS §3.2",
    }


def _write_function_config(b: _Build, fn: AixiFunction, name: str) -> dict:
    """Write config `name`: the shared columns + the function's labels and GT; returns its provenance entry."""
    g = b.weight_sets.index(tuple(fn.weights))
    tables, stats = {}, {}
    for split in SPLIT_ORDER:
        lay, cols = b.layouts[split], b.shared[split]
        labels = fn(lay.counts(), b.iota_max).astype(np.float32)
        tables[split] = pa.Table.from_arrays(
            [cols["id"], cols["image"], cols["instances"], cols["patterns"], cols["masks"],
             cols["counts"], pa.array(labels, type=pa.float32()), cols["gt"][g]],
            schema=FEATURES.arrow_schema,
        )
        stats.update(_split_stats(split, lay, b.rendered[split].visible, labels, fn.weights, b.dataset))
    return write_config(
        b.root, FAMILY, name, tables, FEATURES, version=VERSION, params=_params(b, fn), stats=stats,
        card_info={"pretty_name": "xaibench AIXI", "description": DESCRIPTION, "license": "mit",
                   "citation": CITATION},
    )


def build_aixi(
    dataset: str,
    n_train: int,
    n_val: int,
    *,
    root: Path | None = None,
    seed: int = 42,
    functions: Sequence[str] = ("ssin", "suum", "class"),
    class_rule: str = "count",
    workers: int | None = None,
    overwrite: bool = False,
    redraw_off_by_one: bool = True,
) -> dict[str, dict]:
    """Generate AIXI-`dataset` ("shape" | "color") with `n_train` + `n_val` images and write the
    configs `f"{dataset}-{function}"` under `root` (default `resource_root("aixi")`). Returns each
    config's provenance entry. Raises `ResourceError` if a config exists and not `overwrite`."""
    fns, root, names = _check_request(dataset, functions, class_rule, root, overwrite)
    workers = (os.cpu_count() or 1) if workers is None else max(1, int(workers))
    b = _Build(dataset=dataset, root=root, seed=seed, sizes={"train": int(n_train), "validation": int(n_val)},
               redraw_off_by_one=redraw_off_by_one,
               weight_sets=list(dict.fromkeys(tuple(f.weights) for f in fns)))

    t0 = time.perf_counter()
    b.layouts = draw.draw_splits(dataset, [(s, b.sizes[s]) for s in SPLIT_ORDER], seed=seed,
                                 redraw_off_by_one=redraw_off_by_one)
    t_draw = time.perf_counter() - t0

    t1 = time.perf_counter()
    _render_splits(b, workers)
    t_render = time.perf_counter() - t1
    _shared_columns(b)

    metas: dict[str, dict] = {}
    t2 = time.perf_counter()
    with progress_bar(len(fns), f"AIXI-{dataset}: write configs", unit="config") as bar:
        for fn, name in zip(fns, names):
            metas[name] = _write_function_config(b, fn, name)
            bar.advance(1)
    t_write = time.perf_counter() - t2
    LAST_TIMINGS.clear()
    LAST_TIMINGS.update(draw_s=t_draw, render_s=t_render, write_s=t_write,
                        total_s=time.perf_counter() - t0, images=sum(b.sizes.values()))
    return metas
