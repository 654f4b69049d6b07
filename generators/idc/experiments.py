"""The IDC paper's Table 1 (SPECS §5.9): six interpretation methods scored against the three PGTs on
the MR test set, run through the ordinary runner (explanations are computed once and shared by the
three PGT configs), with the paper's κ / P / R printed beside ours; plus RelativeConf per PGT.

Methods → submissions: Saliency → `saliency`, Grad-CAM → `grad-cam`, IG → `integrated-gradients`,
DeepLIFT → `deeplift`, LRP → `lrp` (all on the Kim CNN), Hierarchical Attention → `attention` (on the
HAN). Extra rows (not in the paper): `input-x-gradient`, `occlusion`, `lime-text`, `kernel-shap`, and
the `random` control.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.resources import load_resource
from benchmark.runner import evaluate

# SPECS §5.9, Table 1: (κ, P, R) per (PGT, method)
PAPER = {
    "wga": {"saliency": (0.33, 0.40, 0.53), "grad-cam": (0.58, 0.71, 0.61), "integrated-gradients": (0.58, 0.70, 0.61),
            "deeplift": (0.58, 0.72, 0.62), "lrp": (0.59, 0.72, 0.63), "attention": (0.16, 0.28, 0.29)},
    "milp": {"saliency": (0.17, 0.21, 0.26), "grad-cam": (0.25, 0.29, 0.30), "integrated-gradients": (0.25, 0.29, 0.30),
             "deeplift": (0.25, 0.30, 0.30), "lrp": (0.25, 0.29, 0.31), "attention": (0.09, 0.13, 0.19)},
    "hybrid": {"saliency": (0.27, 0.41, 0.36), "grad-cam": (0.43, 0.57, 0.52),
               "integrated-gradients": (0.42, 0.56, 0.50), "deeplift": (0.43, 0.58, 0.51), "lrp": (0.44, 0.58, 0.53),
               "attention": (0.15, 0.27, 0.28)},
}
PAPER_RELATIVE_CONF = {"none": 0.75, "wga": 0.52, "milp": 0.57, "hybrid": 0.61}
PAPER_METHODS = ("saliency", "grad-cam", "integrated-gradients", "deeplift", "lrp", "attention")
EXTRA_METHODS = ("input-x-gradient", "occlusion", "lime-text", "kernel-shap", "random")
SLOW = {"lime-text", "kernel-shap"}  # perturbation methods: evaluated on `slow_limit` documents


@dataclass
class Row:
    pgt: str
    method: str
    model: str
    kappa: float | None
    precision: float | None
    recall: float | None
    kappa_ci: tuple[float, float] | None
    n: int
    failed: int

    @property
    def paper(self) -> tuple[float, float, float] | None:
        return PAPER.get(self.pgt, {}).get(self.method)


def run(pgts=("wga", "milp", "hybrid"), methods=PAPER_METHODS + EXTRA_METHODS, limit: int | None = None,
        slow_limit: int | None = 300, results_dir=None, batch_size: int = 64) -> list[Row]:
    rows = []
    for pgt in pgts:
        for method in methods:
            model = "han" if method == "attention" else "cnn"
            lim = slow_limit if method in SLOW and slow_limit is not None else limit
            r = evaluate(method, track="idc", resource=f"idc/mr-{pgt}", model=model, limit=lim,
                         batch_size=batch_size, results_dir=results_dir)
            m = r.metrics
            rows.append(Row(pgt, method, model, m["interp-kappa"].mean, m["interp-precision"].mean,
                            m["interp-recall"].mean, m["interp-kappa"].ci95, m["interp-kappa"].n, r.n_failed))
    return rows


def relative_conf_rows(pgts=("wga", "milp", "hybrid")) -> list[tuple[str, dict]]:
    return [(p, load_resource(f"idc/mr-{p}").stats) for p in pgts]


def table(rows: list[Row], pgts=("wga", "milp", "hybrid")):
    from rich.table import Table

    t = Table(title="IDC Table 1 on the MR test set: ours | paper (κ, P, R; pooled over documents)")
    for col in ("PGT", "method", "model", "κ", "κ paper", "P", "P paper", "R", "R paper", "κ 95% CI", "n", "failed"):
        t.add_column(col, justify="left" if col in ("PGT", "method", "model") else "right")

    def f(x):
        return "—" if x is None else f"{x:.3f}"

    for r in rows:
        p = r.paper
        ci = f"[{r.kappa_ci[0]:.3f}, {r.kappa_ci[1]:.3f}]" if r.kappa_ci else "—"
        t.add_row(r.pgt, r.method, r.model, f(r.kappa), f(p[0]) if p else "", f(r.precision),
                  f(p[1]) if p else "", f(r.recall), f(p[2]) if p else "", ci, str(r.n), str(r.failed))
    rc = Table(title="PGT statistics and RelativeConf (Eq. 8; lower = the PGT words matter more): ours | paper")
    for col in ("PGT", "|IF| neg", "|IF| pos", "pool docs", "covered", "solve s", "optimal",
                "RelativeConf", "paper", "avg drop", "mean conf."):
        rc.add_column(col, justify="left" if col == "PGT" else "right")
    for pgt, st in relative_conf_rows(pgts):
        r = st["relative_conf"]
        fp = st["features_per_class"]
        rc.add_row(pgt, str(fp.get("neg")), str(fp.get("pos")), str(st.get("milp_documents", st.get("pool_documents"))),
                   f"{st['pool_covered_fraction']:.1%}", str(st.get("solve_seconds", st.get("wga_seconds", "—"))),
                   str(st.get("optimal", "—")), f(r["relative_conf"]), f(PAPER_RELATIVE_CONF[pgt]),
                   f(r["average_relative_drop"]), f(r["mean_confidence"]))
    return t, rc
