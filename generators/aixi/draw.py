"""AIXI-Shape and AIXI-Color drawing (SPECS §3.2), bit-compatible with the random stream of the
authors' release (miquelmn/aixi@1.0.0, `uib_xsds/drawing.py`, `bin/shape.py`, `bin/color.py`).

Two phases:

1. `draw_splits` — the *sequential* part: one `random.Random(seed)` stream, train split first, then
   validation, every draw in the release's order. It only records object parameters (a `Layout`:
   one row per object) and is cheap (≈10 µs per Shape image).
2. `render` — rasterise every image and encode its PNGs (image, instances, masks, GT maps). Each
   image depends only on its own row of the layout, so chunks are rendered by a
   `ProcessPoolExecutor` and the output bytes are identical for any number of workers.

Shape, per image: counts of circles, squares, crosses, each `randint(0, 2)`; then all circles, all
squares, all crosses; per object: a cell index `randint(0, 24)`, redrawn while used with
`randint(0, 25)` (the release's off-by-one, which can put an object in a sixth column at column
offset 105; `redraw_off_by_one=False` redraws from {0..24}) [R]; then `dx, dy = randint(5, 8)`
twice; then the size: circle radius `randint(5, max((21 - max(dx, dy)) // 2, 6))`, square side
`randint(5, max(21 - max(dx, dy), 6))`, cross long side `L = randint(1, 21 - max(dx, dy))` and short
side `S = randint(5, max(6, L // 2))`. Cell i has its top-left corner at (row 21·(i mod 5),
col 21·(i div 5)); objects start at (row + dx, col + dy).

Color, per image: attempts until 6 circles are placed; per attempt `v = randint(1, 3)` (same stream
use as the release's `random.choice([1, 2, 3])`), `r = randint(10, 32)`, centre column
`randint(0, 128)`, centre row `randint(0, 128)`; accepted when the canvas is background on
rows [cy - r, cy + r) × cols [cx - r, cx + r) clipped to the canvas (the release's half-open slice).

Overlaps. Shape objects never overlap: every object stays within offsets 2..21 of its cell and the
next object of a neighbouring cell starts at offset ≥ 2 of that cell (the off-by-one sixth column
at col 105 is only adjacent to cell 20, whose objects end at col ≤ 105 while cell 25's start at
col ≥ 107). In Color the half-open acceptance square leaves a new circle's bottom-most pixel
(cy + r, cx) and right-most pixel (cy, cx + r) unchecked, so they can land on an earlier circle. As
in the release (cv2 overwrites), the *later* object wins such pixels — in the image, in
`instances` and in the masks alike — so every pixel belongs to exactly one object and each
object's pixels lie only in its own mask channel.
"""

from __future__ import annotations

import os
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

import cv2
import numpy as np

from benchmark.resources import aixi_schema as schema

SIZE = 128
GRID = 5
CELL = SIZE // (GRID + 1)  # 21
MAX_PER_PATTERN = 2  # Shape: at most two objects of one pattern
N_COLOR_CIRCLES = 6
MAX_OBJECTS = 6  # both datasets
SHAPE_VALUE = 255
COLOR_VALUES = (85, 170, 255)  # intensities 1/2/3 → png = 85·v, model input v/3

# object kinds (column 1 of Layout.objects)
DISK, SQUARE, CROSS = 0, 1, 2
# Layout.objects columns
COLUMNS = ("pattern", "kind", "y", "x", "a", "b")


@dataclass
class Layout:
    """Drawn parameters of a run of images: `objects[offsets[i]:offsets[i+1]]` are image i's
    objects in drawing order (object j = row j-1). Columns: pattern (0..2), kind (DISK / SQUARE /
    CROSS), y, x (disk: centre row/col; square/cross: top-left row/col), a (disk radius, square
    side, cross long side L), b (cross short side S, else 0)."""

    dataset: str
    objects: np.ndarray  # (n_objects, 6) int16
    offsets: np.ndarray  # (n_images + 1,) int64
    attempts: int = 0  # Color: placement attempts (accepted + rejected)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def image_objects(self, i: int) -> np.ndarray:
        return self.objects[self.offsets[i]:self.offsets[i + 1]]

    def patterns(self, i: int) -> np.ndarray:
        return self.image_objects(i)[:, 0].astype(np.int8)

    def n_objects(self) -> np.ndarray:
        return np.diff(self.offsets)

    def counts(self) -> np.ndarray:
        """(n_images, 3) int64: objects per pattern."""
        img = np.repeat(np.arange(len(self)), self.n_objects())
        out = np.zeros((len(self), 3), dtype=np.int64)
        np.add.at(out, (img, self.objects[:, 0].astype(np.int64)), 1)
        return out

    def slice(self, lo: int, hi: int) -> "Layout":
        a, b = int(self.offsets[lo]), int(self.offsets[hi])
        return Layout(self.dataset, self.objects[a:b], self.offsets[lo:hi + 1] - a)


# -- phase 1: sequential parameter drawing --------------------------------------------------


def draw_shape(rng: random.Random, n: int, *, redraw_off_by_one: bool = True) -> Layout:
    """`n` AIXI-Shape images from `rng` (SPECS §3.2, the release's exact call order)."""
    randint = rng.randint
    redraw_hi = GRID * GRID if redraw_off_by_one else GRID * GRID - 1
    rows: list[tuple[int, int, int, int, int, int]] = []
    offsets = [0]
    for _ in range(n):
        n_per = (randint(0, MAX_PER_PATTERN), randint(0, MAX_PER_PATTERN), randint(0, MAX_PER_PATTERN))
        used: set[int] = set()
        for pattern, count in enumerate(n_per):
            for _ in range(count):
                i = randint(0, GRID * GRID - 1)
                while i in used:
                    i = randint(0, redraw_hi)
                used.add(i)
                row, col = CELL * (i % GRID), CELL * (i // GRID)
                dx = randint(5, (CELL - 5) // 2)
                dy = randint(5, (CELL - 5) // 2)
                m = max(dx, dy)
                top, left = row + dx, col + dy
                if pattern == DISK:
                    r = randint(5, max((CELL - m) // 2, 6))
                    rows.append((pattern, DISK, top + r, left + r, r, 0))
                elif pattern == SQUARE:
                    side = randint(5, max(CELL - m, 6))
                    rows.append((pattern, SQUARE, top, left, side, 0))
                else:
                    long_side = randint(1, CELL - m)
                    short_side = randint(5, max(6, long_side // 2))
                    rows.append((pattern, CROSS, top, left, long_side, short_side))
        offsets.append(len(rows))
    return _layout("shape", rows, offsets)


def draw_color(rng: random.Random, n: int, *, max_attempts: int = 1_000_000) -> Layout:
    """`n` AIXI-Color images from `rng`: six non-intersecting circles each (SPECS §3.2)."""
    randint = rng.randint
    rows: list[tuple[int, int, int, int, int, int]] = []
    offsets = [0]
    attempts = 0
    occ = np.zeros((SIZE, SIZE), dtype=np.uint8)
    for _ in range(n):
        occ[:] = 0
        item = cv2.integral(occ).item  # summed-area table (129 × 129)
        placed = tries = 0
        while placed < N_COLOR_CIRCLES:
            tries += 1
            if tries > max_attempts:
                raise RuntimeError(f"AIXI-Color: could not place {N_COLOR_CIRCLES} circles "
                                   f"in {max_attempts} attempts")
            v = randint(1, 3)
            r = randint(10, SIZE // 4)
            cx = randint(0, SIZE)
            cy = randint(0, SIZE)
            y0, y1 = max(cy - r, 0), min(cy + r, SIZE)
            x0, x1 = max(cx - r, 0), min(cx + r, SIZE)
            if item(y1, x1) - item(y0, x1) - item(y1, x0) + item(y0, x0) == 0:
                cv2.circle(occ, (cx, cy), r, 1, thickness=-1)
                item = cv2.integral(occ).item
                rows.append((v - 1, DISK, cy, cx, r, 0))
                placed += 1
        attempts += tries
        offsets.append(len(rows))
    layout = _layout("color", rows, offsets)
    layout.attempts = attempts
    return layout


def _layout(dataset: str, rows: list, offsets: list[int]) -> Layout:
    objects = np.asarray(rows, dtype=np.int16).reshape(-1, len(COLUMNS))
    return Layout(dataset, objects, np.asarray(offsets, dtype=np.int64))


def draw_splits(
    dataset: str,
    sizes: Sequence[tuple[str, int]],
    *,
    seed: int = 42,
    redraw_off_by_one: bool = True,
) -> dict[str, Layout]:
    """Draw the splits in the given order (train first, then validation — the release's order)
    from one `random.Random(seed)` stream."""
    rng = random.Random(seed)
    out: dict[str, Layout] = {}
    for split, n in sizes:
        if dataset == "shape":
            out[split] = draw_shape(rng, int(n), redraw_off_by_one=redraw_off_by_one)
        elif dataset == "color":
            out[split] = draw_color(rng, int(n))
        else:
            raise ValueError(f"unknown AIXI dataset '{dataset}'; one of shape, color")
    return out


# -- phase 2: rendering and encoding ---------------------------------------------------------


def draw_object(arrays: Sequence[np.ndarray], values: Sequence, kind: int,
                y: int, x: int, a: int, b: int) -> None:
    """Draw one object into every array of `arrays` with the matching value of `values` (a scalar,
    or a tuple for a 3-channel array). Disks by `cv2.circle` (filled, LINE_8 — the release's
    rasteriser), squares and crosses by array slicing exactly as in the release."""
    if kind == DISK:
        for arr, v in zip(arrays, values):
            cv2.circle(arr, (x, y), a, v, thickness=-1)
    elif kind == SQUARE:
        for arr, v in zip(arrays, values):
            arr[y:y + a, x:x + a] = v
    else:  # cross: vertical bar L × ≈S and horizontal bar ≈S × L, centred at offset L//2
        h, s = a // 2, b // 2
        for arr, v in zip(arrays, values):
            arr[y:y + a, x + h - s:x + s + h] = v
            arr[y + h - s:y + s + h, x:x + a] = v


def bbox(kind: int, y: int, x: int, a: int, b: int) -> tuple[int, int, int, int]:
    """Half-open bounding box (y0, y1, x0, x1) of an object, clipped to the canvas."""
    if kind == DISK:
        y0, y1, x0, x1 = y - a, y + a + 1, x - a, x + a + 1
    elif kind == SQUARE:
        y0, y1, x0, x1 = y, y + a, x, x + a
    else:
        h, s = a // 2, b // 2
        y0, y1 = min(y, y + h - s), max(y + a, y + s + h)
        x0, x1 = min(x, x + h - s), max(x + a, x + s + h)
    return max(y0, 0), min(y1, SIZE), max(x0, 0), min(x1, SIZE)


def rasterise(objects: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The instance map (SIZE, SIZE) uint8 of one image: 0 background, j = object j (a later
    object wins a pixel; see the module docstring)."""
    inst = np.zeros((SIZE, SIZE), dtype=np.uint8) if out is None else out
    for j, (_, kind, y, x, a, b) in enumerate(objects.tolist(), start=1):
        draw_object((inst,), (j,), kind, y, x, a, b)
    return inst


def render_image(layout: Layout, i: int) -> dict[str, np.ndarray]:
    """One image as arrays: `image` uint8 (png values), `instances` uint8, `masks` uint8 (H, W, 3)
    with channel k = 255·M_k."""
    objs = layout.image_objects(i)
    inst = rasterise(objs)
    pat = np.full(MAX_OBJECTS + 1, 255, dtype=np.uint8)
    pat[1:len(objs) + 1] = objs[:, 0]
    pmap = pat[inst]
    values = _value_lut(layout.dataset)
    return {
        "image": values[pmap],
        "instances": inst,
        "masks": np.stack([(pmap == k) for k in range(3)], axis=-1).astype(np.uint8) * 255,
    }


def _value_lut(dataset: str) -> np.ndarray:
    lut = np.zeros(256, dtype=np.uint8)  # index: pattern, 255 = background
    lut[:3] = COLOR_VALUES if dataset == "color" else (SHAPE_VALUE,) * 3
    return lut


def gt_code(weights: Sequence[float]) -> np.ndarray:
    """uint16 PNG values of the pattern weights: round(w · GT_SCALE)."""
    codes = np.rint(np.asarray(weights, dtype=np.float64) * schema.GT_SCALE)
    if (codes < 0).any() or (codes > 65535).any():
        raise ValueError(f"GT weights {weights} do not fit a 16-bit PNG at scale {schema.GT_SCALE}")
    return codes.astype(np.uint16)


@dataclass
class Rendered:
    """PNG bytes per image (`gt[w]` for each weight set, in the order given to `render`) and the
    number of visible pixels of each object (`visible[offsets[i] + j - 1]` for object j)."""

    image: list[bytes]
    instances: list[bytes]
    masks: list[bytes]
    gt: list[list[bytes]]
    visible: np.ndarray  # (n_objects,) int32


def render_chunk(layout: Layout, gt_weights: Sequence[Sequence[float]] = ()) -> Rendered:
    """Render and encode every image of `layout` (one worker's chunk).

    Objects are small (Shape: ~1.5 % of the pixels), so every output (image, instances, masks,
    one GT map per weight set) is drawn directly object by object — no full-image look-ups — in
    the same order, so a later object wins a contested pixel in all of them alike."""
    n = len(layout)
    pvalue = [int(v) for v in _value_lut(layout.dataset)[:3]]
    pmask = [tuple(255 if c == k else 0 for c in range(3)) for k in range(3)]
    pcodes = [[int(c) for c in gt_code(w)] for w in gt_weights]
    enc = schema.encode_png  # looked up at call time (tests patch it)
    out = Rendered([], [], [], [[] for _ in pcodes], np.zeros(len(layout.objects), dtype=np.int32))
    inst = np.zeros((SIZE, SIZE), dtype=np.uint8)
    image = np.zeros((SIZE, SIZE), dtype=np.uint8)
    masks = np.zeros((SIZE, SIZE, 3), dtype=np.uint8)
    gts = [np.zeros((SIZE, SIZE), dtype=np.uint16) for _ in pcodes]
    arrays: tuple[np.ndarray, ...] = (inst, image, masks, *gts)
    objects = layout.objects.tolist()
    offsets = layout.offsets.tolist()
    for i in range(n):
        objs = objects[offsets[i]:offsets[i + 1]]
        for arr in arrays:
            arr.fill(0)
        for j, (p, kind, y, x, a, b) in enumerate(objs, start=1):
            draw_object(arrays, (j, pvalue[p], pmask[p], *(c[p] for c in pcodes)), kind, y, x, a, b)
        for j, (_, kind, y, x, a, b) in enumerate(objs, start=1):  # visible pixels of object j
            y0, y1, x0, x1 = bbox(kind, y, x, a, b)
            out.visible[offsets[i] + j - 1] = np.count_nonzero(inst[y0:y1, x0:x1] == j)
        out.image.append(enc(image))
        out.instances.append(enc(inst))
        out.masks.append(enc(masks))
        for g, lst in zip(gts, out.gt):
            lst.append(enc(g))
    return out


def _render_task(args) -> Rendered:
    layout, gt_weights = args
    return render_chunk(layout, gt_weights)


def _noop() -> None:
    return None


def start_pool(workers: int | None = None) -> ProcessPoolExecutor | None:
    """A process pool with its workers already started (None for 1 worker). Start it before any
    thread (e.g. a progress bar's refresh thread) exists: forked workers then inherit no lock
    held by another thread."""
    workers = (os.cpu_count() or 1) if workers is None else max(1, int(workers))
    if workers == 1:
        return None
    pool = ProcessPoolExecutor(max_workers=workers)
    pool.submit(_noop).result()  # the first submit launches every worker
    return pool


def render(
    layout: Layout,
    gt_weights: Sequence[Sequence[float]] = (),
    *,
    workers: int | None = None,
    chunk_size: int | None = None,
    progress: Callable[[int], None] | None = None,
    pool: ProcessPoolExecutor | None = None,
) -> Rendered:
    """Render + encode every image, in chunks of `chunk_size` (default: about four chunks per
    worker, at most 500 images), on `workers` processes (default `os.cpu_count()`; 1 = in this
    process) or on `pool` (see `start_pool`). Output is identical for any `workers`, `pool` and
    `chunk_size`."""
    workers = (os.cpu_count() or 1) if workers is None else max(1, int(workers))
    if pool is not None:
        workers = max(workers, 2)
    gt_weights = [tuple(float(x) for x in w) for w in gt_weights]
    n = len(layout)
    if chunk_size is None:  # a few chunks per worker for load balance, at most 500 images each
        chunk_size = max(16, min(500, -(-n // (4 * workers))))
    bounds = [(lo, min(lo + chunk_size, n)) for lo in range(0, n, chunk_size)]
    tasks = [(layout.slice(lo, hi), gt_weights) for lo, hi in bounds]
    parts: list[Rendered] = []
    if workers == 1 or len(tasks) <= 1:
        for t, (lo, hi) in zip(tasks, bounds):
            parts.append(_render_task(t))
            if progress:
                progress(hi - lo)
    else:
        own = pool is None
        ex = pool if pool is not None else start_pool(min(workers, len(tasks)))
        assert ex is not None  # two workers or more, and more than one task: a pool
        try:
            futures = [ex.submit(_render_task, t) for t in tasks]
            for f, (lo, hi) in zip(futures, bounds):
                parts.append(f.result())
                if progress:
                    progress(hi - lo)
        finally:
            if own:
                ex.shutdown(cancel_futures=True)
    return Rendered(
        image=[b for p in parts for b in p.image],
        instances=[b for p in parts for b in p.instances],
        masks=[b for p in parts for b in p.masks],
        gt=[[b for p in parts for b in p.gt[g]] for g in range(len(gt_weights))],
        visible=np.concatenate([p.visible for p in parts]) if parts else np.zeros(0, dtype=np.int32),
    )
