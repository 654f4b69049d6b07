"""Performance benchmark: generate the paper-scale AIXI-Shape resource (50,000 train + 2,000
validation images; three configs with masks and GT maps) and compare with the straightforward way.

Run: `.venv/bin/python tests/perf/bench_generate.py` or `pytest -s tests/perf/bench_generate.py`.

Baseline ("the authors' way", measured in the same run): a plain single-process per-image loop that
draws an image with float layers (as `bin/shape.py` + `drawing.polygons` do) and writes two PNG
files per image with `cv2.imwrite` (image and 3-channel mask, default settings), on a 2,000-image
sample, extrapolated to 52,000 images. It writes less than we do (no instance map, no GT maps, no
labels, no Parquet, one dataset instead of three configs).

Target: the 52,000-image generation under 60 s on a 2-core machine (printed, not asserted: an absolute
time depends on the machine; asserted is the speed-up over the baseline; `XAIBENCH_PERF_TARGET_S`
overrides it).
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

import timing

N_TRAIN, N_VAL = 50000, 2000
BASELINE_SAMPLE = 2000
TARGET_S = float(os.environ.get("XAIBENCH_PERF_TARGET_S", 60))


def baseline_authors_way(n: int, out: Path, seed: int = 42) -> float:
    """Seconds for `n` images the plain way: per image draw (float layers), then cv2.imwrite the
    image and the 3-channel mask."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gt").mkdir(exist_ok=True)
    t = time.perf_counter()
    for i in range(n):
        n_per = [rng.randint(0, 2) for _ in range(3)]
        layers = [np.zeros((128, 128)) for _ in range(3)]
        used: set[int] = set()
        for k, count in enumerate(n_per):
            for _ in range(count):
                c = rng.randint(0, 24)
                while c in used:
                    c = rng.randint(0, 25)
                used.add(c)
                gx, gy = (c % 5) * 21, (c // 5) * 21
                dx, dy = rng.randint(5, 8), rng.randint(5, 8)
                m = max(dx, dy)
                if k == 0:
                    r = rng.randint(5, max((21 - m) // 2, 6))
                    layers[0] = cv2.circle(layers[0], (gy + dy + r, gx + dx + r), r, 1, thickness=-1)
                elif k == 1:
                    s = rng.randint(5, max(21 - m, 6))
                    layers[1][gx + dx:gx + dx + s, gy + dy:gy + dy + s] = 1
                else:
                    ls = rng.randint(1, 21 - m)
                    ss = rng.randint(5, max(6, ls // 2))
                    r0, c0 = gx + dx, gy + dy
                    layers[2][r0:r0 + ls, c0 + ls // 2 - ss // 2:c0 + ss // 2 + ls // 2] = 1
                    layers[2][r0 + ls // 2 - ss // 2:r0 + ss // 2 + ls // 2, c0:c0 + ls] = 1
        image = layers[0] + layers[1] + layers[2]
        image[image > 1] = 1
        cv2.imwrite(str(out / f"{i:05d}.png"), image * 255)
        cv2.imwrite(str(out / "gt" / f"{i:05d}.png"), np.dstack(layers))
    return time.perf_counter() - t


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run(workers: int | None = None) -> dict[str, float]:
    from generators.aixi.build import LAST_TIMINGS, build_aixi

    tmp = Path(tempfile.mkdtemp(prefix="xaibench-bench-"))
    try:
        # best of two runs (the machine may be shared; this favours the baseline)
        base_s = min(baseline_authors_way(BASELINE_SAMPLE, tmp / f"baseline{k}") for k in range(2))
        n = N_TRAIN + N_VAL
        base_total = base_s * n / BASELINE_SAMPLE

        root = tmp / "aixi"
        t = time.perf_counter()
        build_aixi("shape", N_TRAIN, N_VAL, root=root, workers=workers)
        ours = time.perf_counter() - t
        size = dir_size(root)
        res = {
            "images": n,
            "seconds": ours,
            "images_per_s": n / ours,
            "size_mb": size / 1e6,
            "baseline_sample_s": base_s,
            "baseline_images_per_s": BASELINE_SAMPLE / base_s,
            "baseline_extrapolated_s": base_total,
            "speedup": base_total / ours,
            **{f"phase_{k}": v for k, v in LAST_TIMINGS.items() if k.endswith("_s")},
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\nAIXI-Shape paper scale: {n:,} images x 3 configs (ssin, suum, class) on {os.cpu_count()} CPUs\n"
        f"  ours:     {res['seconds']:.1f} s  ({res['images_per_s']:,.0f} images/s)  "
        f"[draw {res['phase_draw_s']:.1f} s, render+encode {res['phase_render_s']:.1f} s, "
        f"write {res['phase_write_s']:.1f} s]\n"
        f"  on disk:  {res['size_mb']:.1f} MB (Parquet, three configs, README, provenance)\n"
        f"  baseline: {res['baseline_sample_s']:.2f} s for {BASELINE_SAMPLE:,} images "
        f"(best of 2; {res['baseline_images_per_s']:,.0f} images/s, image + mask PNG files) -> "
        f"{res['baseline_extrapolated_s']:.1f} s extrapolated to {n:,}\n"
        f"  ratio:    {res['speedup']:.2f}x faster than the baseline (target: under {TARGET_S:.0f} s)",
        flush=True,
    )
    return res


def test_generate_paper_scale():
    os.environ.setdefault("XAIBENCH_PROGRESS", "0")
    res = run()
    # the time against the target is printed, not asserted (an absolute time depends on the machine)
    timing.record("bench_generate", "paper-scale AIXI-Shape: authors' loop / ours", res["speedup"],
                  f"< {TARGET_S:.0f} s", "> 1")
    assert res["speedup"] > 1.0


if __name__ == "__main__":
    r = run(int(sys.argv[1]) if len(sys.argv) > 1 else None)
    sys.exit(0 if r["seconds"] < TARGET_S else 1)
