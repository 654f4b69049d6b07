"""`xaibench reproduce tef`: the PCC-vs-ρ curves of every (model, explainer, attack) the robustness
resources hold (live attacks: each explainer attacked through itself), as a PNG, and a table of ACC
per explainer / model / attack beside the paper's findings (SPECS §2.9: no ACC numbers survive in the
paper — TEF < RA for every model and explainer, RI ≈ TEF, RS ≈ RA, similarity > 0.7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from benchmark.errors import ResourceError

ATTACKS = ("tef", "ri", "rs", "ra")
COLOURS = {"tef": "tab:red", "ri": "tab:orange", "rs": "tab:cyan", "ra": "tab:blue"}


def collect(models=("cnn", "lstm", "lstm-att", "minilm")) -> dict[str, dict]:
    from benchmark.resources import load_resource

    out = {}
    for m in models:
        try:
            res = load_resource(f"robustness/mr-{m}")
        except Exception:  # noqa: BLE001 - a model not generated is just left out
            continue
        out[m] = {"curves": res.stats.get("curves", {}), "runs": res.stats.get("runs", {}),
                  "scores": res.stats.get("model_scores", {}), "skipped": res.stats.get("skipped_explainers", {})}
    if not out:
        raise ResourceError("no robustness resource found; build them with `xaibench generate robustness`")
    return out


def table_rows(data: dict[str, dict]) -> list[dict[str, Any]]:
    rows = []
    for m, d in data.items():
        expl = sorted({k.split("/")[0] for k in d["curves"]})
        for e in expl:
            row: dict[str, Any] = {"model": m, "explainer": e,
                                   "test_acc": d["scores"].get("test_accuracy")}
            for a in ATTACKS:
                c = d["curves"].get(f"{e}/{a}")
                row[a] = c["acc"] if c else None
                if a == "tef" and c:
                    sims = [(ce, s) for ce, s in zip(c["similarity"]["centre"], c["similarity"]["mean"]) if s is not None]
                    row["sim_le_0.2"] = (min(s for ce, s in sims if ce <= 0.2) if sims else None)
                    row["samples"] = c["n_samples"]
                    row["seconds"] = d["runs"].get(f"{e}/{a}", {}).get("wall_s")
            rows.append(row)
    return rows


def render_table(rows: list[dict]) -> str:
    head = "| model | test acc | explainer | ACC TEF | ACC RI | ACC RS | ACC RA | TEF < RA | min sim (ρ ≤ 0.2, TEF) | samples | TEF s |"
    lines = [head, "|" + "---|" * 11]
    f = lambda v: "–" if v is None else f"{v:.4f}"  # noqa: E731
    for r in rows:
        ok = None if r["tef"] is None or r["ra"] is None else r["tef"] < r["ra"]
        lines.append(f"| {r['model']} | {f(r['test_acc'])} | {r['explainer']} | {f(r['tef'])} | {f(r['ri'])} | "
                     f"{f(r['rs'])} | {f(r['ra'])} | {'yes' if ok else ('no' if ok is not None else '–')} | "
                     f"{f(r.get('sim_le_0.2'))} | {r.get('samples', '–')} | {r.get('seconds', '–')} |")
    lines.append("")
    lines.append("Paper (SPECS §2.9): TEF below RA on every model and explainer; RI slightly worse than TEF; "
                 "RS slightly better than RA; similarity > 0.7 in most cases. Maximum ACC = 0.375 (PCC 1 everywhere).")
    return "\n".join(lines)


def plot(data: dict[str, dict], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(m, e) for m, d in data.items() for e in sorted({k.split("/")[0] for k in d["curves"]})]
    cols = min(3, max(1, len(panels)))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax, (m, e) in zip(axes.flat, panels):
        for a in ATTACKS:
            c = data[m]["curves"].get(f"{e}/{a}")
            if not c:
                continue
            x = [0.0] + [ce for ce, v in zip(c["pcc"]["centre"], c["pcc"]["mean"]) if v is not None]
            y = [1.0] + [v for v in c["pcc"]["mean"] if v is not None]
            ax.plot(x, y, marker="o", ms=3, color=COLOURS[a], label=f"{a.upper()} (ACC {c['acc']:.3f})")
        ax.set_title(f"MR / {m} / {e}", fontsize=9)
        ax.set_xlabel("realised ρ")
        ax.set_ylabel("PCC(a, ã)")
        ax.set_xlim(0, 0.4)
        ax.set_ylim(-0.2, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def reproduce(out_dir: Path, models=("cnn", "lstm", "lstm-att", "minilm")) -> tuple[str, Path]:
    data = collect(models)
    text = render_table(table_rows(data))
    png = plot(data, Path(out_dir) / "tef_pcc_curves.png")
    (Path(out_dir) / "tef_acc.md").write_text(text + "\n")
    return text, png


def policy(events: list[tuple[str, str]], top: int | None = None) -> list[tuple[str, str, int]]:
    """Semi-universal policy (SPECS §2.6) from substitution events (original, replacement), lower-cased:
    original tokens by count (descending, ties alphabetical), each with its most frequent replacement
    (ties alphabetical)."""
    from collections import Counter

    per: dict[str, Counter] = {}
    for o, r in events:
        per.setdefault(o.lower(), Counter())[r.lower()] += 1
    rows = [(o, min(c, key=lambda w: (-c[w], w)), sum(c.values())) for o, c in per.items()]
    rows.sort(key=lambda t: (-t[2], t[0]))
    return rows[:top] if top else rows


def apply_policy(tokens: list[str], pol: list[tuple[str, str, int]], rho_max: float) -> tuple[list[str], int]:
    """Query-free attack: the policy top to bottom, each occurrence left to right, stop when (r+1)/n > ρ_max."""
    out, r, n = list(tokens), 0, len(tokens)
    for o, rep, _ in pol:
        for i, w in enumerate(out):
            if (r + 1) / max(n, 1) > rho_max + 1e-12:
                return out, r
            if w == o and tokens[i] == o:
                out[i] = rep
                r += 1
    return out, r


def np_mean(x) -> float:
    x = [v for v in x if v is not None and np.isfinite(v)]
    return float(np.mean(x)) if x else float("nan")
