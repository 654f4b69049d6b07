"""The papers' tables beside the reference's boards (docs/reference.md, "Beside the papers").

Each paper's numbers come from the one place the project keeps them (`generators.<track>` `PAPER` tables, SPECS);
ours from the reference's CSV (`xaibench leaderboard --reference --format csv`, one row per board and submission).
For each table: the paper's figure and ours side by side, and each ordering the paper draws (SPECS "conclusions to
reproduce") checked on our numbers — holds, does not hold (with the numbers), or cannot tell (a board or a row is
missing). Where an ordering does not hold, `WHY` gives the measured reason and the experiment that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Comparison", "Ordering", "WHY", "compare_all"]


@dataclass
class Ordering:
    """One ordering a paper draws, checked on our numbers: `holds` True / False / None (cannot tell)."""

    claim: str
    holds: bool | None
    detail: str = ""
    why: str = ""


@dataclass
class Comparison:
    """One paper table beside ours: a header, rows of (label, the paper's figures, ours), the orderings."""

    title: str
    source: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    orderings: list[Ordering] = field(default_factory=list)


# Why an ordering does not hold, where the project measured it (keyed by (track, claim key)).
WHY = {
    ("aixi", "class-worst"): "LIME correctly gives the Class function's second pattern a negative weight; the paper's "
                             "min–max normalised KL then puts no mass there while the ground truth gives it +0.5 "
                             "(docs/aixi.md, \"Reproducing the paper\": scored on |S|, Class is the worst, as in the "
                             "paper)",
    ("aixi", "cnn-vs-function"): "our exhaustive LIME over the true objects recovers the function's map almost exactly "
                                 "(KL ≈ 0.00–0.03 where the paper has 0.2–1.5), so the CNN can only be worse; "
                                 "docs/aixi.md, \"Reproducing the paper\"",
    ("idc", "gradcam-family"): "Grad-CAM's map of the Kim CNN is the feature maps' positions weighted by pooled "
                               "gradients: it marks windows, not words, and far more words than the PGT under the "
                               "α-threshold (docs/idc.md, Table 1: top-k scoring brings it to 0.459; "
                               "docs/leaderboard.md, \"Hidden copies\")",
    ("idc", "gradient-trio"): "the three compute gradient × input on the Kim CNN's embeddings; docs/idc.md, Table 1",
    ("idc", "saliency-over-attention"): "docs/idc.md, Table 1: saliency and attention both mark many more words than "
                                        "the PGT under the α-threshold; under top-k saliency 0.332 > attention 0.223",
    ("idc", "milp-half"): "our full-pool MILP differs from the paper's 2K-document one; docs/idc.md, \"Measured\" "
                          "(the 2,000-document sample removes about a third of the shortfall)",
    ("rcnn", "lime-shap-over-l2x"): "L2X depends on how well its selector is trained (docs/rcnn.md, Table 1: 3.4 % "
                                    "%first with its default training, 17.9 % trained quickly)",
    ("trust", "toki-over-naive"): "one class judged on HateXplain and the blind controls' floor (docs/trust.md, "
                                  "\"TOKI against –K.I, and the blind controls\")",
    ("trust", "toki-over-ki"): "docs/trust.md, \"TOKI against –K.I, and the blind controls\": the ablation's clusters "
                               "agree with TOKI's on most predictions",
    ("robustness", "tef-over-ra"): "docs/robustness.md, \"ACC per model, explainer and attack\": the transfer board "
                                   "scores texts attacked through saliency, so TEF's edge shrinks for other explainers",
}


def _f(x: Any, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _rows(csv_rows: list[dict[str, str]]) -> dict[tuple[str, str, str], dict[str, dict[str, str]]]:
    """(track, resource, model) → submission → its CSV row."""
    out: dict[tuple[str, str, str], dict[str, dict[str, str]]] = {}
    for r in csv_rows:
        out.setdefault((r["track"], r["resource"], r["model"]), {})[r["submission"]] = r
    return out


def _mean(board: dict[str, dict[str, str]] | None, sub: str, metric: str) -> float | None:
    if not board or sub not in board:
        return None
    cell = board[sub].get(f"{metric}_mean", "")
    try:
        return float(cell) if cell != "" else None
    except ValueError:
        return None


def _order(claim: str, values: list[float | None], key: tuple[str, str], detail: str, strict: bool = True,
           ) -> Ordering:
    """`values` must decrease left to right (each ≥ the next when not `strict`); None anywhere: cannot tell."""
    if any(v is None for v in values):
        return Ordering(claim, None, "a board or a row is missing")
    vs = [float(v) for v in values if v is not None]
    ok = all(a > b if strict else a >= b for a, b in zip(vs, vs[1:]))
    return Ordering(claim, ok, detail, "" if ok else WHY.get(key, ""))


NEAR = 0.05  # "≈" between two of our κ: at most this far apart (the paper's are 0.00–0.02 apart)


def _near(claim: str, values: list[float | None], key: tuple[str, str], detail: str) -> Ordering:
    """`values` all within `NEAR` of one another; None anywhere: cannot tell."""
    if any(v is None for v in values):
        return Ordering(claim, None, "a board or a row is missing")
    vs = [float(v) for v in values if v is not None]
    ok = max(vs) - min(vs) <= NEAR
    return Ordering(claim, ok, f"{detail} (≈: within {NEAR:g})", "" if ok else WHY.get(key, ""))


def aixi(boards: dict) -> list[Comparison]:
    """Miró-Nicolau et al., Tables 2 (the function) and 3 (the CNN): exhaustive LIME's KL and EMD (4×4)."""
    from generators.aixi.experiments import PAPER

    out = []
    for table, model in ((2, "function"), (3, "cnn")):
        c = Comparison(f"AIXI, Table {table}: LIME on the {model} (KL ↓, EMD 4×4 ↓)",
                       "Miró-Nicolau et al. 2023 (SPECS §3.9); ours: `lime-exhaustive`",
                       ["board", "paper KL", "our KL", "paper EMD 4×4", "our EMD 4×4"])
        for (function, dataset), (kl, emd) in PAPER[table].items():
            b = boards.get(("aixi", f"aixi/{dataset}-{function}", model))
            c.rows.append([f"aixi/{dataset}-{function} / {model}", _f(kl), _f(_mean(b, "lime-exhaustive", "kl")),
                           _f(emd), _f(_mean(b, "lime-exhaustive", "emd-paper"))])
        if model == "function":
            for dataset in ("shape", "color"):
                kls = {f: _mean(boards.get(("aixi", f"aixi/{dataset}-{f}", "function")), "lime-exhaustive", "kl")
                       for f in ("class", "ssin", "suum")}
                c_, s_, u_ = kls["class"], kls["ssin"], kls["suum"]
                worst = None if c_ is None or s_ is None or u_ is None else c_ > max(s_, u_)
                c.orderings.append(Ordering(
                    f"AIXI-{dataset.title()}: Class is the worst function (highest KL)", worst,
                    ", ".join(f"{f} {_f(v)}" for f, v in kls.items()),
                    WHY[("aixi", "class-worst")] if worst is False else ""))
        else:
            for dataset in ("shape", "color"):
                for f in ("ssin", "suum", "class"):
                    fn = _mean(boards.get(("aixi", f"aixi/{dataset}-{f}", "function")), "lime-exhaustive", "kl")
                    cnn = _mean(boards.get(("aixi", f"aixi/{dataset}-{f}", "cnn")), "lime-exhaustive", "kl")
                    want = "better" if f == "class" else "worse"
                    holds = None if fn is None or cnn is None else (cnn < fn if f == "class" else cnn > fn)
                    c.orderings.append(Ordering(f"aixi/{dataset}-{f}: LIME on the CNN is {want} than on the function",
                                                holds, f"CNN {_f(cnn)}, function {_f(fn)}",
                                                WHY[("aixi", "cnn-vs-function")] if holds is False else ""))
        out.append(c)
    return out


def idc(boards: dict) -> list[Comparison]:
    """Khaleel et al., Table 1: κ / P / R per PGT for six methods (attention on the HAN)."""
    from generators.idc.experiments import PAPER, PAPER_METHODS

    c = Comparison("IDC, Table 1: interpretation κ / P / R on MR's test set (↑)",
                   "Khaleel et al. 2022 (SPECS §5.9); ours: pooled κ, P, R of the same submissions",
                   ["PGT", "method", "paper κ", "our κ", "paper P", "our P", "paper R", "our R"])
    kappa: dict[str, dict[str, float | None]] = {}
    for pgt, methods in PAPER.items():
        for m in PAPER_METHODS:
            b = boards.get(("idc", f"idc/mr-{pgt}", "han" if m == "attention" else "cnn"))
            ours = [_mean(b, m, k) for k in ("interp-kappa", "interp-precision", "interp-recall")]
            kappa.setdefault(pgt, {})[m] = ours[0]
            p = methods[m]
            c.rows.append([pgt.upper(), m, _f(p[0], 2), _f(ours[0]), _f(p[1], 2), _f(ours[1]), _f(p[2], 2),
                           _f(ours[2])])
    for pgt, k in kappa.items():
        trio = [k.get(m) for m in ("lrp", "integrated-gradients", "deeplift")]
        c.orderings.append(_near(f"{pgt.upper()}: LRP ≈ IG ≈ DeepLIFT (the paper: within 0.02 of κ)", trio,
                                 ("idc", "gradient-trio"), f"LRP {_f(trio[0])}, IG {_f(trio[1])}, DeepLIFT "
                                 f"{_f(trio[2])}"))
        pair = [k.get("grad-cam"), k.get("lrp")]
        c.orderings.append(_near(f"{pgt.upper()}: Grad-CAM ≈ LRP (the paper: within 0.01 of κ)", pair,
                                 ("idc", "gradcam-family"), f"Grad-CAM {_f(pair[0])}, LRP {_f(pair[1])}"))
        grad = [k.get(m) for m in ("lrp", "integrated-gradients", "deeplift", "grad-cam")]
        lowest = None if None in grad else min(v for v in grad if v is not None)
        c.orderings.append(_order(f"{pgt.upper()}: the gradient-by-input family (LRP, IG, DeepLIFT, Grad-CAM) > "
                                  "Saliency", [lowest, k.get("saliency")], ("idc", "gradcam-family"),
                                  f"the family's lowest {_f(lowest)}, saliency {_f(k.get('saliency'))}"))
        c.orderings.append(_order(f"{pgt.upper()}: Saliency > HAN attention", [k.get("saliency"), k.get("attention")],
                                  ("idc", "saliency-over-attention"),
                                  f"saliency {_f(k.get('saliency'))}, attention {_f(k.get('attention'))}"))
    wga, milp = kappa.get("wga", {}), kappa.get("milp", {})
    pairs = [(wga.get(m), milp.get(m)) for m in PAPER_METHODS]
    if all(a is not None and b is not None and a > 0 for a, b in pairs):
        ratio = sum(b / a for a, b in pairs if a and b is not None) / len(pairs)
        c.orderings.append(Ordering("MILP's κ ≈ half of WGA's (the paper: 0.25–0.53 of it)", 0.25 <= ratio <= 0.75,
                                    f"ours: {ratio:.2f} of WGA's on average",
                                    "" if 0.25 <= ratio <= 0.75 else WHY[("idc", "milp-half")]))
    else:
        c.orderings.append(Ordering("MILP's κ ≈ half of WGA's", None, "a board or a row is missing"))
    return [c]


def rcnn(boards: dict) -> list[Comparison]:
    """Camburu et al., Table 1: %first, %misrank, avg-misrank of LIME, SHAP and L2X per aspect (↓)."""
    from generators.rcnn.experiments import PAPER

    c = Comparison("RCNN, Table 1: error rates on the verified reviews (↓)",
                   "Camburu et al. 2019 (SPECS §4.7); ours: the same metrics (optimistic ties)",
                   ["aspect", "method", "paper %first", "our %first", "paper %misrank", "our %misrank",
                    "paper avg-misrank", "our avg-misrank"])
    for aspect, methods in PAPER.items():
        b = boards.get(("rcnn", f"rcnn/beer-{aspect}", "rcnn"))
        for m, p in methods.items():
            ours = [_mean(b, m, k) for k in ("pct-first", "pct-misrank", "avg-misrank")]
            c.rows.append([aspect, m, _f(p[0], 2), _f(ours[0], 2), _f(p[1], 2), _f(ours[1], 2), _f(p[2], 2),
                           _f(ours[2], 2)])
        for metric in ("pct-first", "pct-misrank", "avg-misrank"):
            l2x = _mean(b, "l2x", metric)
            for m in ("lime-text", "kernel-shap"):
                c.orderings.append(_order(f"{aspect}: {m} errs less than L2X on {metric}", [l2x, _mean(b, m, metric)],
                                          ("rcnn", "lime-shap-over-l2x"),
                                          f"L2X {_f(l2x, 2)}, {m} {_f(_mean(b, m, metric), 2)}", strict=False))
    return [c]


def trust(boards: dict) -> list[Comparison]:
    """Nguyen Tung et al. (TOKI), Table 3: G-mean (and Acc, Spec) of TOKI, Naive and the –K.I ablations."""
    from generators.trust.reproduce import ORACLES, PAPER_OF, PAPER_TABLE3

    c = Comparison("Trust, Table 3: TOKI, Naive and –K.I (G-mean ↑; AUC is the board's primary)",
                   "Nguyen Tung et al. 2025 (SPECS §1.11); ERASER movies stands beside Dong's movie reviews (other "
                   "data, other model)", ["board", "oracle", "paper G-mean", "our G-mean", "paper Acc", "our Acc",
                                          "our AUC"])
    for (track, resource, model), b in sorted(boards.items()):
        if track != "trust":
            continue
        dataset = resource.split("/")[1].split("-")[0]
        paper = PAPER_TABLE3.get(PAPER_OF.get(dataset, ""), {})
        for label, sub in ORACLES:
            p = paper.get(label)
            if sub not in b and p is None:
                continue
            c.rows.append([f"{resource} / {model}", label, _f(p[5] if p else None), _f(_mean(b, sub, "trust-gmean")),
                           _f(p[0] if p else None), _f(_mean(b, sub, "trust-acc")), _f(_mean(b, sub, "trust-auc"))])
        naive = _mean(b, "naive-oracle", "trust-gmean")
        for toki in ("toki-lime", "toki-omis", "toki-grad"):
            g = _mean(b, toki, "trust-gmean")
            c.orderings.append(_order(f"{resource}: {toki} > Naive in G-mean", [g, naive], ("trust", "toki-over-naive"),
                                      f"{toki} {_f(g)}, Naive {_f(naive)}"))
            ki = _mean(b, f"{toki}-ki", "trust-gmean")
            c.orderings.append(_order(f"{resource}: {toki} > its –K.I ablation in G-mean", [g, ki],
                                      ("trust", "toki-over-ki"), f"{toki} {_f(g)}, –K.I {_f(ki)}"))
    return [c]


def robustness(boards: dict) -> list[Comparison]:
    """Ivankay et al. (TEF): no numbers survive in the text; the ordering "TEF beats RA" on every explainer."""
    c = Comparison("Robustness (TEF): ACC under TEF against RA (↑ = more robust; the paper gives curves, no numbers)",
                   "Ivankay et al. 2022 (SPECS §2.9)", ["board", "explainer", "ACC TEF", "ACC RA"])
    for (track, resource, model), b in sorted(boards.items()):
        if track != "robustness":
            continue
        for sub, row in sorted(b.items()):
            if row.get("role") not in ("method", "reference"):
                continue
            tef, ra = _mean(b, sub, "rob-acc-tef"), _mean(b, sub, "rob-acc-ra")
            c.rows.append([f"{resource} / {model}", sub, _f(tef), _f(ra)])
            c.orderings.append(_order(f"{resource}: TEF lowers {sub}'s ACC more than RA", [ra, tef],
                                      ("robustness", "tef-over-ra"), f"TEF {_f(tef)}, RA {_f(ra)}"))
    return [c]


def compare_all(csv_rows: list[dict[str, str]]) -> list[Comparison]:
    """Every paper table beside the reference's boards that hold it (a track with no board gives rows of —)."""
    boards = _rows(csv_rows)
    tracks = {k[0] for k in boards}
    out: list[Comparison] = []
    for name, fn in (("aixi", aixi), ("idc", idc), ("rcnn", rcnn), ("trust", trust), ("robustness", robustness)):
        if name in tracks:
            out += fn(boards)
    return out
