"""EMD speed: our exact `emd` (grid 32) on 2,000 realistic AIXI-like map pairs vs plain `ot.emd2`.

Run as a script (``python tests/perf/bench_emd.py [--n 2000] [--plain 100] [--workers K]``) or as a
pytest test (``pytest -s tests/perf/bench_emd.py -p no:cacheprovider --override-ini addopts=``).

Pairs are 128×128: a sparse ground truth (1-4 disks/squares weighted 1/2, 1/4 or 1/6, ≈2-5 % of the
pixels) and a dense explanation (the ground truth with multiplicative noise, smoothed, plus uniform
background noise). Both are normalised and pooled onto the 32×32 grid exactly as `emd` does; the
baseline is plain `ot.emd2` on the full 1024×1024 problem, timed on a sample and extrapolated.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import timing
from scipy.ndimage import gaussian_filter

BUDGET_S = float(os.environ.get("XAIBENCH_EMD_BUDGET_S", "10"))


def make_pairs(n: int, size: int = 128, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(explanations, truths), each (n, size, size) float64."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    truths = np.zeros((n, size, size))
    expl = np.zeros((n, size, size))
    for i in range(n):
        g = truths[i]
        for _ in range(rng.integers(1, 5)):
            w = (1 / 2, 1 / 4, 1 / 6)[rng.integers(3)]
            r = int(rng.integers(5, 11))
            cy, cx = rng.integers(r, size - r, 2)
            if rng.random() < 0.5:
                m = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
            else:
                m = (np.abs(yy - cy) <= r) & (np.abs(xx - cx) <= r)
            g[m] = w
        noisy = g * (1 + 0.5 * rng.standard_normal(g.shape))
        expl[i] = gaussian_filter(noisy, 2.0) + 0.05 * g.max() * rng.random(g.shape)
    return expl, truths


def plain_emd2(explanations: np.ndarray, truths: np.ndarray, grid: int = 32, unit_px: float = 32.0):
    """Reference: plain `ot.emd2` on the full grid×grid problem (same normalisation and pooling)."""
    import ot
    from scipy.spatial.distance import cdist

    from benchmark.metrics.saliency import downsample_mass, to_distribution

    n, h, _ = truths.shape
    pg = downsample_mass(truths / truths.sum((1, 2), keepdims=True), grid).reshape(n, -1)
    ps = downsample_mass(to_distribution(explanations), grid).reshape(n, -1)
    c = (np.arange(grid) + 0.5) * (h / grid)
    xy = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 2)
    d = cdist(xy, xy) / unit_px
    out = np.empty(n)
    for i in range(n):
        out[i], log = ot.emd2(pg[i], ps[i], d, numItermax=10_000_000, log=True)
        assert log["result_code"] == 1, log["warning"]
    return out


def run(n: int = 2000, n_plain: int = 100, workers: int | None = None, seed: int = 0) -> dict:
    from benchmark.metrics.saliency import emd

    t0 = time.perf_counter()
    expl, truths = make_pairs(n, seed=seed)
    t_gen = time.perf_counter() - t0
    cover = float((truths > 0).mean())
    emd(expl[:8], truths[:8], workers=1)  # import POT, build the distance table (not timed)

    t0 = time.perf_counter()
    ours = emd(expl, truths, workers=workers)
    t_ours = time.perf_counter() - t0

    k = min(n_plain, n)
    t0 = time.perf_counter()
    ref = plain_emd2(expl[:k], truths[:k])
    t_plain_k = time.perf_counter() - t0
    t_plain = t_plain_k * n / k

    r = {
        "n": n, "gt_cover": cover, "gen_s": t_gen,
        "ours_s": t_ours, "ours_maps_per_s": n / t_ours,
        "plain_sample": k, "plain_sample_s": t_plain_k, "plain_extrapolated_s": t_plain,
        "plain_maps_per_s": k / t_plain_k, "speedup": t_plain / t_ours,
        "max_abs_diff": float(np.max(np.abs(ours[:k] - ref))),
        "workers": workers, "cpus": os.cpu_count(), "mean_emd": float(ours.mean()),
    }
    print(f"\nEMD benchmark: {n} pairs of 128×128 maps (GT covers {100 * cover:.1f}% of pixels), "
          f"grid 32×32, {os.cpu_count()} CPUs, workers={workers or 'auto'}")
    print(f"  ours  (exact, P−Q supports)   : {t_ours:7.2f} s for {n} maps   "
          f"{n / t_ours:8.1f} maps/s")
    print(f"  plain ot.emd2 (1024×1024)     : {t_plain_k:7.2f} s for a sample of {k} maps, "
          f"extrapolated to {n}: {t_plain:7.2f} s   {k / t_plain_k:8.1f} maps/s")
    print(f"  speed-up                      : {t_plain / t_ours:7.1f}×")
    print(f"  max |ours − plain| on the {k}  : {r['max_abs_diff']:.2e}   (mean EMD {r['mean_emd']:.4f})")
    print(f"  budget                        : {t_ours:.2f} s {'<' if t_ours < BUDGET_S else '≥'} "
          f"{BUDGET_S:g} s")
    return r


def test_emd_2000_maps():
    """Prints the figures; asserts exactness and the speed-up measured in this run (DESIGN §6: the
    absolute time depends on the machine, so the 10 s target is reported, not asserted)."""
    r = run(2000, 100)
    timing.record("bench_emd", "exact EMD, 2,000 maps: plain ot.emd2 / ours", r["speedup"], "", "> 1.5")
    assert r["max_abs_diff"] < 1e-9
    assert r["speedup"] > 1.5


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--plain", type=int, default=100, help="sample size for plain ot.emd2")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    run(a.n, a.plain, a.workers, a.seed)
