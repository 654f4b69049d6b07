"""The AIXI paper's experiments (SPECS §3.8), run through the ordinary runner, with the paper's
numbers (SPECS §3.9; columns: KL, EMD on the 4×4 paper grid) printed beside ours.

1. LIME fidelity vs sample size, predictor = the function (n ∈ {1, 2, 4, 8, 16, 32, 64}, capped at 2^K);
   n = 1 is the baseline of Table 1.
2. predictor = the function, exhaustive LIME (all 2^K samples);
3. predictor = the trained CNN, exhaustive LIME.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.runner import evaluate

# SPECS §3.9 (paper Tables 1-3): (KL, EMD) per (function, dataset)
PAPER = {
    1: {("ssin", "shape"): (3.8873, 0.8722), ("ssin", "color"): (1.2284, 0.5631),
        ("suum", "shape"): (3.8926, 0.8722), ("suum", "color"): (1.2286, 0.5631),
        ("class", "shape"): (4.4907, 0.3579), ("class", "color"): (2.2768, 0.2880)},
    2: {("ssin", "shape"): (1.4895, 0.0618), ("ssin", "color"): (0.1993, 0.0414),
        ("suum", "shape"): (1.2537, 0.0469), ("suum", "color"): (0.1954, 0.0375),
        ("class", "shape"): (2.3396, 0.0394), ("class", "color"): (1.4000, 0.0878)},
    3: {("ssin", "shape"): (1.6722, 0.0728), ("ssin", "color"): (0.3029, 0.0784),
        ("suum", "shape"): (1.6708, 0.0734), ("suum", "color"): (0.3175, 0.0854),
        ("class", "shape"): (1.5751, 0.0679), ("class", "color"): (1.2971, 0.0856)},
}
SAMPLE_SIZES = (1, 2, 4, 8, 16, 32, 64)


@dataclass
class Row:
    experiment: int
    function: str
    dataset: str
    n_samples: int  # 0 = all 2^K
    kl: float | None
    emd_paper_grid: float | None
    emd: float | None
    n: int
    excluded: int
    failed: int

    @property
    def paper(self) -> tuple[float, float] | None:
        if self.experiment == 1 and self.n_samples != 1:
            return None
        return PAPER[self.experiment].get((self.function, self.dataset))


def run(experiments=(1, 2, 3), datasets=("shape", "color"), functions=("ssin", "suum", "class"),
        limit: int | None = None, batch_size: int = 32, results_dir=None,
        attribution: str = "signed") -> list[Row]:
    rows: list[Row] = []
    for d in datasets:
        for f in functions:
            resource = f"aixi/{d}-{f}"
            plan = []
            if 1 in experiments:
                plan += [(1, "function", n) for n in SAMPLE_SIZES]
            if 2 in experiments:
                plan.append((2, "function", 0))
            if 3 in experiments:
                plan.append((3, "cnn", 0))
            for exp, model, n in plan:
                params = {} if n == 0 else {"n_samples": n}
                r = evaluate("lime-exhaustive", track="aixi", resource=resource, model=model, limit=limit,
                             batch_size=batch_size, params=params, results_dir=results_dir,
                             metric_params={} if attribution == "signed" else {"attribution": attribution})
                m = r.metrics
                rows.append(Row(exp, f, d, n, m["kl"].mean, m["emd-paper"].mean, m["emd"].mean,
                                m["kl"].n, m["kl"].excluded, r.n_failed))
    return rows


def table(rows: list[Row]):
    from rich.table import Table

    t = Table(title="AIXI: exhaustive LIME vs ground truth (ours | paper)")
    for col in ("exp", "function", "dataset", "samples", "KL ↓", "KL paper", "EMD 4×4 ↓", "EMD paper",
                "EMD 32×32 ↓", "n", "excl.", "failed"):
        t.add_column(col, justify="right" if col not in ("function", "dataset") else "left")

    def f(x):
        return "—" if x is None else f"{x:.4f}"

    for r in rows:
        p = r.paper
        t.add_row(str(r.experiment), r.function, r.dataset, "all" if r.n_samples == 0 else str(r.n_samples),
                  f(r.kl), f(p[0]) if p else "", f(r.emd_paper_grid), f(p[1]) if p else "", f(r.emd),
                  str(r.n), str(r.excluded), str(r.failed))
    return t
