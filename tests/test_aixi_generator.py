"""AIXI generator (SPECS §3.2–3.4): invariants on the "tiny" scale and hand-checked facts."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pyarrow.parquet as pq
import pytest

from benchmark.errors import ResourceError
from benchmark.models.aixi_function import FUNCTIONS, IOTA_MAX, get_function, ground_truth_map
from benchmark.resources import aixi_schema, load_resource
from benchmark.resources.aixi_schema import FEATURES, GT_SCALE, decode_split, encode_png
from generators.aixi import draw
from generators.aixi.build import SCALES, build_aixi

N_TRAIN, N_VAL = SCALES["tiny"]
CONFIGS = [f"{d}-{f}" for d in ("shape", "color") for f in ("ssin", "suum", "class")]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("xaibench-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XAIBENCH_HOME", str(home))
        mp.setenv("XAIBENCH_PROGRESS", "0")
        for dataset in ("shape", "color"):
            build_aixi(dataset, N_TRAIN, N_VAL, workers=1)  # default root: $XAIBENCH_HOME/resources/aixi
    return home / "resources" / "aixi"


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XAIBENCH_PROGRESS", "0")


def _decoded(root: Path, config: str, split: str) -> dict:
    return decode_split(pq.read_table(root / config / f"{split}-00000-of-00001.parquet"))


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- independent reference of the release's generator (plain per-image loops, float layers) --


def _reference_shape(sizes, seed=42, off_by_one=True):
    rng = random.Random(seed)
    out = []
    for n in sizes:
        for _ in range(n):
            n_per = [rng.randint(0, 2) for _ in range(3)]
            layers = np.zeros((3, 128, 128))
            used: set[int] = set()
            for k, count in enumerate(n_per):
                for _ in range(count):
                    i = rng.randint(0, 24)
                    while i in used:
                        i = rng.randint(0, 25 if off_by_one else 24)
                    used.add(i)
                    gx, gy = (i % 5) * 21, (i // 5) * 21
                    dx, dy = rng.randint(5, 8), rng.randint(5, 8)
                    m = max(dx, dy)
                    if k == 0:
                        r = rng.randint(5, max((21 - m) // 2, 6))
                        cv2.circle(layers[0], (gy + dy + r, gx + dx + r), r, 1, thickness=-1)
                    elif k == 1:
                        side = rng.randint(5, max(21 - m, 6))
                        layers[1][gx + dx:gx + dx + side, gy + dy:gy + dy + side] = 1
                    else:
                        ls = rng.randint(1, 21 - m)
                        ss = rng.randint(5, max(6, ls // 2))
                        r0, c0 = gx + dx, gy + dy
                        layers[2][r0:r0 + ls, c0 + ls // 2 - ss // 2:c0 + ss // 2 + ls // 2] = 1
                        layers[2][r0 + ls // 2 - ss // 2:r0 + ss // 2 + ls // 2, c0:c0 + ls] = 1
            out.append((np.clip(layers.sum(0), 0, 1), layers, n_per))
    return out


def _reference_color(sizes, seed=42):
    rng = random.Random(seed)
    out = []
    for n in sizes:
        for _ in range(n):
            image = np.zeros((128, 128))
            counts = [0, 0, 0]
            while sum(counts) < 6:
                v = rng.choice([1, 2, 3])
                r = rng.randint(10, 128 // 4)
                cx, cy = rng.randint(0, 128), rng.randint(0, 128)
                if image[max(cy - r, 0):cy + r, max(cx - r, 0):cx + r].max() == 0:
                    cv2.circle(image, (cx, cy), r, v, thickness=-1)
                    counts[v - 1] += 1
            out.append((image, counts))
    return out


def test_shape_matches_reference_generator(root):
    ref = _reference_shape([N_TRAIN, N_VAL])
    rows = [("train", i) for i in range(N_TRAIN)] + [("validation", i) for i in range(N_VAL)]
    data = {s: _decoded(root, "shape-ssin", s) for s in ("train", "validation")}
    for n, (image, layers, n_per) in enumerate(ref):
        split, i = rows[n]
        d = data[split]
        np.testing.assert_array_equal(d["images"][i], image)
        np.testing.assert_array_equal(d["masks"][i], np.moveaxis(layers, 0, -1).astype(np.uint8))
        assert d["counts"][i].tolist() == n_per


def test_color_matches_reference_generator(root):
    ref = _reference_color([N_TRAIN, N_VAL])
    data = [_decoded(root, "color-ssin", s) for s in ("train", "validation")]
    images = np.concatenate([d["images"] for d in data])
    masks = np.concatenate([d["masks"] for d in data])
    counts = np.concatenate([d["counts"] for d in data])
    for n, (image, c) in enumerate(ref):
        np.testing.assert_array_equal(np.rint(images[n] * 3), image)
        for k in range(3):
            np.testing.assert_array_equal(masks[n][..., k], image == k + 1)
        assert counts[n].tolist() == c


# -- invariants --------------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", ["shape", "color"])
@pytest.mark.parametrize("split", ["train", "validation"])
def test_objects_masks_counts(root, dataset, split):
    d = _decoded(root, f"{dataset}-ssin", split)
    n = N_TRAIN if split == "train" else N_VAL
    assert len(d["ids"]) == n and d["ids"][0] == f"{split}-000000" and d["ids"][-1] == f"{split}-{n - 1:06d}"
    assert d["images"].shape == (n, 128, 128) and d["images"].dtype == np.float32
    for i in range(n):
        inst, pats, masks, img = d["instances"][i], d["patterns"][i], d["masks"][i], d["images"][i]
        k = len(pats)
        # every object has pixels, one id per pixel, ids 1..K only
        assert set(np.unique(inst).tolist()) <= set(range(k + 1))
        assert all((inst == j).any() for j in range(1, k + 1))
        # each object's pixels only in its own mask channel; masks = union of objects per pattern
        assert masks.sum(-1).max() <= 1
        for c in range(3):
            np.testing.assert_array_equal(masks[..., c], np.isin(inst, np.flatnonzero(pats == c) + 1))
        # the image is exactly the objects: value 1 (Shape) or intensity/3 (Color)
        values = np.ones(3) if dataset == "shape" else np.array([1, 2, 3]) / 3
        expect = np.zeros(k + 1, dtype=np.float32)
        expect[1:] = values[pats.astype(int)]
        np.testing.assert_allclose(img, expect[inst], atol=1e-7)
        # counts = objects per pattern
        assert d["counts"][i].tolist() == np.bincount(pats, minlength=3).tolist()
    if dataset == "shape":
        assert d["counts"].min() >= 0 and d["counts"].max() <= 2
        assert (d["counts"].sum(1) == [len(p) for p in d["patterns"]]).all()
    else:
        assert (d["counts"].sum(1) == 6).all() and all(len(p) == 6 for p in d["patterns"])
        assert set(np.unique(np.rint(d["images"] * 255)).tolist()) <= {0, 85, 170, 255}


@pytest.mark.parametrize("config", CONFIGS)
def test_labels_and_gt(root, config):
    dataset, fname = config.split("-")
    fn = FUNCTIONS[fname]
    w = np.asarray(fn.weights, dtype=np.float32)
    for split in ("train", "validation"):
        d = _decoded(root, config, split)
        np.testing.assert_array_equal(d["labels"], get_function(fname)(d["counts"], IOTA_MAX[dataset]))
        for i in range(len(d["ids"])):
            inst, pats, gt = d["instances"][i], d["patterns"][i], d["gt"][i]
            np.testing.assert_array_equal(gt, ground_truth_map(inst, pats, fn.weights))
            assert (gt[inst == 0] == 0).all()
            for j, p in enumerate(pats, start=1):  # exactly w_k on the object's pixels
                assert (gt[inst == j] == w[p]).all()
            if fname == "class":  # crosses / intensity-3 circles carry no mass (w3 = 0)
                assert (gt[np.isin(inst, np.flatnonzero(pats == 2) + 1)] == 0).all()
        # the GT PNG codes are exact integers: 1/2, 1/4, 1/6, 1, 0.5 × 60000
        assert set(np.unique(np.rint(d["gt"] * GT_SCALE)).tolist()) <= {0, 10000, 15000, 30000, 60000}


def test_function_values_hand_checked():
    ssin, suum, cls = (get_function(f) for f in ("ssin", "suum", "class"))
    assert ssin(np.array([[2, 2, 2]]), 2)[0] == pytest.approx(11 / 12)
    assert ssin(np.array([[1, 0, 0]]), 2)[0] == pytest.approx(0.5 * np.sin(np.pi / 4))
    assert suum(np.array([[2, 1, 0]]), 2)[0] == pytest.approx(0.5 + 0.125)
    assert cls(np.array([[2, 1, 2], [1, 1, 0]]), 2).tolist() == [1.0, 0.0]


def test_ssin_label_of_full_image(root):
    d = _decoded(root, "shape-ssin", "validation")
    full = (d["counts"] == 2).all(1)
    assert full.tolist().index(True) == 10  # validation-000010 has two objects of every pattern
    np.testing.assert_allclose(d["labels"][full], 11 / 12, rtol=1e-6)
    assert len(d["patterns"][10]) == 6 and len(np.unique(d["instances"][10])) == 7


def test_size_ranges_and_off_by_one():
    shape = draw.draw_splits("shape", [("train", 2000)])["train"]
    obj = shape.objects
    r = obj[obj[:, 1] == draw.DISK, 4]
    assert r.min() == 5 and r.max() == 8
    side = obj[obj[:, 1] == draw.SQUARE, 4]
    assert side.min() == 5 and side.max() == 16
    cross = obj[obj[:, 1] == draw.CROSS]
    assert cross[:, 4].min() == 1 and cross[:, 4].max() == 16 and cross[:, 5].min() == 5
    assert (obj[:, 3] >= 105).any()  # the release's redraw range {0..25} reaches a sixth column
    fixed = draw.draw_splits("shape", [("train", 2000)], redraw_off_by_one=False)["train"]
    assert (fixed.objects[:, 3] < 105).all()
    color = draw.draw_splits("color", [("train", 300)])["train"]
    assert color.objects[:, 4].min() == 10 and color.objects[:, 4].max() == 32
    assert (color.n_objects() == 6).all() and color.attempts > 6 * 300
    # a circle's rendered extent is 2r + 1 pixels
    lay = draw.Layout("shape", np.array([[0, draw.DISK, 40, 50, 7, 0]], dtype=np.int16), np.array([0, 1]))
    ys, xs = np.nonzero(draw.rasterise(lay.objects))
    assert ys.max() - ys.min() + 1 == 15 and xs.max() - xs.min() + 1 == 15


def test_stats_recorded(root):
    res = load_resource("aixi/shape-class", root=root)
    st = res.stats
    for split, n in (("train", N_TRAIN), ("validation", N_VAL)):
        assert st[f"{split}_n_images"] == n
        assert 0 < st[f"{split}_object_pixel_share_mean"] < 0.1
        assert 0 <= st[f"{split}_empty_gt_images"] <= n
        assert sum(st[f"{split}_counts_histogram"]["circle"]) == n
    d = _decoded(root, "shape-class", "validation")
    assert st["validation_empty_gt_images"] == int((d["gt"].reshape(N_VAL, -1).sum(1) == 0).sum())
    assert res.params["seed"] == 42 and res.params["gt_scale"] == GT_SCALE
    assert res.params["redraw_off_by_one"] is True
    color = load_resource("aixi/color-ssin", root=root).stats
    assert 0.25 < color["validation_object_pixel_share_mean"] < 0.55


# -- storage -------------------------------------------------------------------------------


def test_load_dataset_decodes_pil(root):
    import datasets
    from PIL import Image

    ds = datasets.load_dataset(str(root), "shape-ssin")
    assert set(ds) == {"train", "validation"} and len(ds["validation"]) == N_VAL
    row = ds["validation"][3]
    assert isinstance(row["image"], Image.Image) and row["image"].size == (128, 128)
    d = _decoded(root, "shape-ssin", "validation")
    np.testing.assert_array_equal(np.asarray(row["image"]) / 255, d["images"][3])
    masks = np.asarray(row["masks"].convert("RGB")) // 255  # R = circles, G = squares, B = crosses
    np.testing.assert_array_equal(masks, d["masks"][3])
    np.testing.assert_array_equal(np.asarray(row["gt"]).astype(np.float32) / GT_SCALE, d["gt"][3])
    assert row["id"] == "validation-000003" and row["counts"] == d["counts"][3].tolist()


def test_encode_png_round_trip():
    from io import BytesIO

    from PIL import Image

    rng = np.random.default_rng(0)
    gray = rng.integers(0, 256, (20, 30), dtype=np.uint8)
    rgb = rng.integers(0, 256, (20, 30, 3), dtype=np.uint8)
    g16 = rng.integers(0, 65536, (20, 30), dtype=np.uint16)
    for a in (gray, rgb, g16):
        back = aixi_schema.decode_png(encode_png(a))
        assert back.dtype == a.dtype
        np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(np.asarray(Image.open(BytesIO(encode_png(rgb)))), rgb)  # channel order
    np.testing.assert_array_equal(np.asarray(Image.open(BytesIO(encode_png(g16)))).astype(np.uint16), g16)


def test_decode_split_columns_and_slices(root):
    table = pq.read_table(root / "color-suum" / "validation-00000-of-00001.parquet")
    full = decode_split(table)
    part = decode_split(table.slice(5, 7), columns=("id", "patterns", "counts", "gt"))
    assert set(part) == {"ids", "patterns", "counts", "gt"}
    assert part["ids"] == full["ids"][5:12]
    assert all((a == b).all() for a, b in zip(part["patterns"], full["patterns"][5:12]))
    np.testing.assert_array_equal(part["counts"], full["counts"][5:12])
    np.testing.assert_array_equal(part["gt"], full["gt"][5:12])
    assert full["instances"].dtype == np.int32 and full["masks"].dtype == np.uint8
    assert full["counts"].dtype == np.int64
    assert FEATURES.arrow_schema.names == table.column_names
    with pytest.raises(KeyError):
        decode_split(table, columns=("nope",))


def test_determinism_and_workers(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    build_aixi("shape", N_TRAIN, N_VAL, root=a, workers=1)
    build_aixi("shape", N_TRAIN, N_VAL, root=b, workers=2)
    assert _files(a) == _files(b)
    build_aixi("shape", N_TRAIN, N_VAL, root=c, workers=2, seed=7, functions=("ssin",))
    f = "shape-ssin/train-00000-of-00001.parquet"
    assert (c / f).read_bytes() != (a / f).read_bytes()


def test_color_workers_identical(tmp_path):
    build_aixi("color", 40, 24, root=tmp_path / "a", workers=1, functions=("class",))
    build_aixi("color", 40, 24, root=tmp_path / "b", workers=2, functions=("class",))
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_refuses_to_overwrite(tmp_path):
    build_aixi("shape", 16, 8, root=tmp_path, functions=("ssin",))
    with pytest.raises(ResourceError, match="--overwrite"):
        build_aixi("shape", 16, 8, root=tmp_path, functions=("suum", "ssin"))
    assert not (tmp_path / "shape-suum").exists()  # checked before any work
    build_aixi("shape", 16, 8, root=tmp_path, functions=("ssin",), overwrite=True, seed=3)
    assert load_resource("aixi/shape-ssin", root=tmp_path).params["seed"] == 3


def test_failure_midway_leaves_previous_configs_intact(tmp_path, monkeypatch):
    build_aixi("shape", N_TRAIN, N_VAL, root=tmp_path, workers=1)
    before = _files(tmp_path)

    # 1. the encoder dies after some images
    real, calls = aixi_schema.encode_png, {"n": 0}

    def flaky(arr):
        calls["n"] += 1
        if calls["n"] > 150:
            raise RuntimeError("disk on fire")
        return real(arr)

    monkeypatch.setattr(aixi_schema, "encode_png", flaky)
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_aixi("shape", N_TRAIN, N_VAL, root=tmp_path, workers=1, overwrite=True, seed=5)
    assert _files(tmp_path) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    monkeypatch.setattr(aixi_schema, "encode_png", real)

    # 2. the Parquet writer dies while writing the second config
    import benchmark.resources.store as store

    real_write, writes = store.pq.write_table, {"n": 0}

    def dying_write(*args, **kwargs):
        writes["n"] += 1
        if writes["n"] == 3:  # configs are written one after the other, two splits each
            raise OSError("no space left on device")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(store.pq, "write_table", dying_write)
    with pytest.raises(OSError, match="no space"):
        build_aixi("shape", N_TRAIN, N_VAL, root=tmp_path, workers=1, overwrite=True, seed=5)
    after = _files(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    for cfg in ("shape-suum", "shape-class"):  # untouched: still the previous generation
        for split in ("train", "validation"):
            f = f"{cfg}/{split}-00000-of-00001.parquet"
            assert after[f] == before[f]
    for cfg in ("shape-ssin", "shape-suum", "shape-class"):
        load_resource(f"aixi/{cfg}", root=tmp_path).verify(full=True)
    assert load_resource("aixi/shape-ssin", root=tmp_path).params["seed"] == 5
    assert load_resource("aixi/shape-suum", root=tmp_path).params["seed"] == 42


def test_provenance_records_generator_software(tmp_path, monkeypatch):
    import json

    import benchmark
    from generators.aixi.build import build_aixi

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    build_aixi("shape", 8, 4, functions=("ssin",), workers=1)
    prov = json.loads((tmp_path / "resources" / "aixi" / "provenance.json").read_text())
    gen = prov["configs"]["shape-ssin"]["generator"]
    assert gen["xaibench"] == benchmark.__version__ and gen["git"] and "numpy" in gen["libraries"]
    assert prov["configs"]["shape-ssin"]["params"]["seed"] == 42
