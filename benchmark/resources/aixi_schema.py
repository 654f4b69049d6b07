"""Column schema of the AIXI resources (SPECS §3), shared by the generator and the harness.

One row per image (128×128):

| column      | type              | content                                                              |
|-------------|-------------------|----------------------------------------------------------------------|
| `id`        | string            | `"<split>-<index:06d>"`, e.g. `"validation-000017"`                  |
| `image`     | Image (PNG uint8) | grayscale, pixel = round(255 · model input): Shape objects 255;     |
|             |                   | Color intensities 1/2/3 stored as 85/170/255 (input 1/3, 2/3, 1)    |
| `instances` | Image (PNG uint8) | 0 background, j = object j (objects numbered 1..K in drawing order) |
| `patterns`  | list<int8>        | pattern index (0..2) of object j at position j-1                    |
| `masks`     | Image (PNG RGB)   | channel k = 255 · M_k, the authors' per-pattern mask (R = pattern 0) |
| `counts`    | int8[3]           | objects per pattern (ι_1, ι_2, ι_3)                                  |
| `label`     | float32           | the attribution function's value                                   |
| `gt`        | Image (PNG uint16)| G = png / GT_SCALE (exact for the weights 1/2, 1/4, 1/6, 1, 0.5)     |

`INPUT_COLUMNS` are what explainers may see (`instances` is an object segmentation, it says where
objects are, not how important they are); `GROUND_TRUTH_COLUMNS` are for scoring only.

`decode_split` turns a split (an Arrow table as read from the Parquet file, Image columns stored as
`struct<bytes, path>`) into numpy arrays with `cv2.imdecode`; `encode_png` is the matching writer.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

import cv2
import datasets
import numpy as np
import pyarrow as pa

GT_SCALE = 60000
IMAGE_SIZE = 128

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "image": datasets.Image(),
        "instances": datasets.Image(),
        "patterns": datasets.Sequence(datasets.Value("int8")),
        "masks": datasets.Image(),
        "counts": datasets.Sequence(datasets.Value("int8"), length=3),
        "label": datasets.Value("float32"),
        "gt": datasets.Image(),
    }
)

INPUT_COLUMNS = ("id", "image", "instances")
GROUND_TRUTH_COLUMNS = ("patterns", "masks", "counts", "label", "gt")

# Output key of each column in `decode_split`'s result.
_KEYS = {
    "id": "ids",
    "image": "images",
    "instances": "instances",
    "patterns": "patterns",
    "masks": "masks",
    "counts": "counts",
    "label": "labels",
    "gt": "gt",
}
_ALIASES = {v: k for k, v in _KEYS.items()}

# Fast PNG for these small, mostly-empty images: zlib level 1, run-length strategy (as fast as
# the default and ~40 % smaller: the images are long runs of one value) and no per-row filter
# search (the filter heuristics cost 4-5x the deflate time and gain nothing here). OpenCV builds
# without IMWRITE_PNG_FILTER just skip that flag (their bytes differ; the pixels do not).
PNG_PARAMS: list[int] = [cv2.IMWRITE_PNG_COMPRESSION, 1,
                         cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_RLE]
if hasattr(cv2, "IMWRITE_PNG_FILTER") and hasattr(cv2, "IMWRITE_PNG_FILTER_NONE"):
    PNG_PARAMS += [cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_NONE]


def encode_png(arr: np.ndarray) -> bytes:
    """PNG bytes of a uint8 or uint16 array: (H, W) grayscale or (H, W, 3) in RGB order (channel k
    of the array is channel k of the PNG as PIL / `datasets` read it)."""
    a = np.asarray(arr)
    if a.dtype not in (np.uint8, np.uint16):
        raise TypeError(f"encode_png needs uint8 or uint16, got {a.dtype}")
    if a.ndim == 3 and a.shape[2] == 3:
        a = cv2.cvtColor(a, cv2.COLOR_RGB2BGR)  # OpenCV writes BGR arrays as RGB PNGs
    elif a.ndim != 2:
        raise ValueError(f"encode_png needs (H, W) or (H, W, 3), got shape {a.shape}")
    ok, buf = cv2.imencode(".png", a, PNG_PARAMS)
    if not ok:
        raise RuntimeError("cv2.imencode failed to encode a PNG")
    return buf.tobytes()


def decode_png(data: bytes) -> np.ndarray:
    """Inverse of `encode_png` (dtype and channel order preserved)."""
    a = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_UNCHANGED)
    if a is None:
        raise ValueError("not a decodable PNG")
    if a.ndim == 3 and a.shape[2] == 3:
        a = cv2.cvtColor(a, cv2.COLOR_BGR2RGB)
    return a


def _image_bytes(column: pa.ChunkedArray | pa.Array) -> list[bytes]:
    """The PNG bytes of an Image column: `struct<bytes, path>` (datasets' storage), or plain
    binary; entries without bytes are read from their path."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out: list[bytes] = []
    for chunk in chunks:
        if pa.types.is_struct(chunk.type):
            data = chunk.field("bytes").to_pylist()
            has_path = chunk.type.get_field_index("path") >= 0
            paths = chunk.field("path").to_pylist() if has_path else [None] * len(chunk)
            for b, p in zip(data, paths):
                if b is None:
                    if p is None:
                        raise ValueError("an Image entry has neither bytes nor a path")
                    with open(p, "rb") as fh:
                        b = fh.read()
                out.append(b)
        else:
            out.extend(chunk.to_pylist())
    return out


def _decode_stack(blobs: Sequence[bytes], dtype, threads: int) -> np.ndarray:
    if not blobs:
        return np.zeros((0, IMAGE_SIZE, IMAGE_SIZE), dtype=dtype)
    first = decode_png(blobs[0])
    out = np.empty((len(blobs), *first.shape), dtype=dtype)
    out[0] = first

    def work(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            out[i] = decode_png(blobs[i])

    n = len(blobs)
    if threads <= 1 or n < 256:
        work(1, n)
    else:  # cv2.imdecode releases the GIL
        step = -(-(n - 1) // threads)
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(lambda lo: work(lo, min(lo + step, n)), range(1, n, step)))
    return out


def _lists(col: pa.ChunkedArray | pa.Array) -> list[np.ndarray]:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count:
        return [np.asarray(p if p is not None else [], dtype=np.int8) for p in arr.to_pylist()]
    offs = arr.offsets.to_numpy()  # index into the (unsliced) values
    vals = arr.values.to_numpy(zero_copy_only=False).astype(np.int8)
    return [vals[offs[i]:offs[i + 1]].copy() for i in range(len(arr))]


def decode_split(
    table: pa.Table, columns: Iterable[str] | None = None, threads: int = 2
) -> dict[str, np.ndarray | list]:
    """Decode a split into numpy. `columns`: table column names (or the output keys) to decode,
    default every column of the table. Returns (only what was asked):

    `ids` list[str]; `images` float32 (N, H, W) in [0, 1]; `instances` int32 (N, H, W);
    `patterns` list of int8 arrays; `masks` uint8 (N, H, W, 3) in {0, 1}; `counts` int64 (N, 3);
    `labels` float32 (N,); `gt` float32 (N, H, W).
    """
    names = list(table.column_names) if columns is None else [_ALIASES.get(c, c) for c in columns]
    out: dict[str, np.ndarray | list] = {}
    for name in names:
        if name not in _KEYS:
            raise KeyError(f"unknown AIXI column '{name}'; one of {', '.join(_KEYS)}")
        if name not in table.column_names:
            raise KeyError(f"the table has no column '{name}' (has: {', '.join(table.column_names)})")
        col = table.column(name)
        key = _KEYS[name]
        if name == "id":
            out[key] = [str(x) for x in col.to_pylist()]
        elif name == "image":  # decoded straight into float32, then scaled in place
            a = _decode_stack(_image_bytes(col), np.float32, threads)
            out[key] = np.divide(a, np.float32(255), out=a)
        elif name == "instances":
            out[key] = _decode_stack(_image_bytes(col), np.int32, threads)
        elif name == "masks":
            m = _decode_stack(_image_bytes(col), np.uint8, threads)
            out[key] = np.minimum(m, 1, out=m)  # 0/255 → 0/1
        elif name == "gt":
            a = _decode_stack(_image_bytes(col), np.float32, threads)
            out[key] = np.divide(a, np.float32(GT_SCALE), out=a)
        elif name == "patterns":
            out[key] = _lists(col)
        elif name == "counts":
            arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            if arr.null_count:
                out[key] = np.asarray(arr.to_pylist(), dtype=np.int64).reshape(-1, 3)
            else:
                out[key] = arr.flatten().to_numpy().astype(np.int64).reshape(-1, 3)
        elif name == "label":
            out[key] = col.to_numpy().astype(np.float32)
    return out


__all__ = [
    "FEATURES",
    "GT_SCALE",
    "GROUND_TRUTH_COLUMNS",
    "INPUT_COLUMNS",
    "IMAGE_SIZE",
    "PNG_PARAMS",
    "decode_png",
    "decode_split",
    "encode_png",
]
