"""`xaibench reproduce tef`: the PCC-vs-ρ curves of every (model, explainer, attack) the robustness
resources hold, as a PNG, and a table of ACC per explainer / model / attack beside the paper's findings
(SPECS §2.9: no ACC numbers survive in the paper — TEF < RA for every model and explainer, RI ≈ TEF,
RS ≈ RA, similarity > 0.7); the semi-universal attack (SU) on the same samples and grid; the shares of
candidates, positions and applied swaps the model cannot represent (`vocab_rows`); transfer across
models; and Table 4 of TOKI (A2T vs TOKI-guided A2T, `table4`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from benchmark.errors import ResourceError

ATTACKS = ("tef", "ri", "rs", "ra", "su")
COLOURS = {"tef": "tab:red", "ri": "tab:orange", "rs": "tab:cyan", "ra": "tab:blue", "su": "tab:green"}


def collect(models=("cnn", "lstm", "lstm-att", "minilm"), root: Path | None = None) -> dict[str, dict]:
    from benchmark.resources import load_resource

    out = {}
    for m in models:
        try:
            res = load_resource(f"robustness/mr-{m}", root=root)
        except Exception:  # noqa: BLE001 - a model not generated is just left out
            continue
        out[m] = {"curves": res.stats.get("curves", {}), "runs": res.stats.get("runs", {}),
                  "scores": res.stats.get("model_scores", {}), "skipped": res.stats.get("skipped_explainers", {}),
                  "vocabulary": res.stats.get("vocabulary", {}), "params": res.params}
    if not out:
        raise ResourceError("no robustness resource found; build them with `xaibench generate robustness`")
    return out


def table_rows(data: dict[str, dict]) -> list[dict[str, Any]]:
    rows = []
    for m, d in data.items():
        expl = sorted({k.split("/")[0] for k in d["curves"]})
        for e in expl:
            row: dict[str, Any] = {"model": m, "explainer": e, "test_acc": d["scores"].get("test_accuracy")}
            for a in ATTACKS:
                c = d["curves"].get(f"{e}/{a}")
                row[a] = c["acc"] if c else None
                if a == "tef" and c:
                    sims = [(ce, s) for ce, s in zip(c["similarity"]["centre"], c["similarity"]["mean"])
                            if s is not None]
                    row["sim_le_0.2"] = (min(s for ce, s in sims if ce <= 0.2) if sims else None)
                    row["samples"] = c["n_samples"]
                    row["tef_point"] = c.get("acc_point")
                    row["tef_filled"] = (c.get("coverage") or {}).get("filled")
                    row["seconds"] = d["runs"].get(f"{e}/{a}", {}).get("wall_s")
            rows.append(row)
    return rows


def render_table(rows: list[dict]) -> str:
    head = ("| model | test acc | explainer | ACC TEF | ACC RI | ACC RS | ACC RA | ACC SU | TEF < RA | "
            "ACC TEF (one point per (sample, r)) | TEF bins filled | min sim (ρ ≤ 0.2, TEF) | samples | TEF s |")
    lines = [head, "|" + "---|" * 14]
    f = lambda v: "–" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{v:.3f}"  # noqa: E731
    for r in rows:
        ok = None if r["tef"] is None or r["ra"] is None else r["tef"] < r["ra"]
        lines.append(f"| {r['model']} | {f(r['test_acc'])} | {r['explainer']} | {f(r['tef'])} | {f(r['ri'])} | "
                     f"{f(r['rs'])} | {f(r['ra'])} | {f(r['su'])} | "
                     f"{'yes' if ok else ('no' if ok is not None else '–')} | "
                     f"{f(r.get('tef_point'))} | {r.get('tef_filled', '–')}/8 | {f(r.get('sim_le_0.2'))} | "
                     f"{r.get('samples', '–')} | {r.get('seconds', '–')} |")
    lines.append("")
    lines.append("ACC on the fixed grid (8 bins of width 0.05 on [0, 0.4], (0, 1) anchor, trailing empty bins "
                 "carry the last filled value; maximum 0.375), curves pooled over the ρ_max grid (SPECS §2.7) "
                 "unless stated. "
                 "SU = the semi-universal policy learned from TEF on the other half of the test set, on the same "
                 "samples. Paper (SPECS §2.9): TEF below RA on every model and explainer; RI slightly worse than "
                 "TEF; RS slightly better than RA; similarity > 0.7 in most cases.")
    return "\n".join(lines)


def _share(tot: dict[str, int], part: str, whole: str) -> float | None:
    """tot[part] / tot[whole] (None when the whole is 0 or absent)."""
    return tot.get(part, 0) / tot[whole] if tot.get(whole) else None


def vocab_rows(data: dict[str, dict], label: str = "") -> list[dict[str, Any]]:
    """Per model and attack (summed over its explainers): the share of candidates the model cannot
    represent, of visited positions with at least one such candidate, and of applied swaps to one."""
    out = []
    for m, d in data.items():
        for a in ATTACKS:
            tot: dict[str, int] = {}
            keys = [k for k in d["runs"] if k.endswith(f"/{a}") or (a == "su" and k == "policy/su")]
            for k in keys:
                for c, v in (d["runs"][k].get("vocab") or ({"applied": d["runs"][k].get("applied", 0),
                                                              "applied_unrepresentable": d["runs"][k].get(
                                                                  "applied_unrepresentable", 0)}
                                                             if a == "su" else {})).items():
                    tot[c] = tot.get(c, 0) + int(v)
            if not tot:
                continue
            out.append({"label": label or d["params"].get("vocab_rule", "?"), "model": m, "attack": a,
                        "candidates": _share(tot, "unrepresentable", "candidates"),
                        "positions": _share(tot, "positions_unrepresentable", "positions"),
                        "applied": _share(tot, "applied_unrepresentable", "applied"),
                        "n_applied": tot.get("applied", 0),
                        "n_candidates": tot.get("candidates", 0)})
    return out


def render_vocab(rows: list[dict]) -> str:
    f = lambda v: "–" if v is None else f"{100 * v:.1f} %"  # noqa: E731
    lines = ["| vocabulary rule | model | attack | candidates not representable | positions with one | applied swaps "
             "to one | candidates / swaps |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['label']} | {r['model']} | {r['attack']} | {f(r['candidates'])} | {f(r['positions'])} | "
                     f"{f(r['applied'])} | {r['n_candidates']:,} / {r['n_applied']:,} |")
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
            if x[-1] < c["pcc"]["centre"][-1]:  # the value ACC carries forward over the empty upper bins
                ax.plot([x[-1], c["pcc"]["centre"][-1]], [y[-1], y[-1]], ":", color=COLOURS[a], lw=1)
        ax.set_title(f"MR / {m} / {e}", fontsize=9)
        ax.set_xlabel("realised ρ")
        ax.set_ylabel("PCC(a, ã)")
        ax.set_xlim(0, 0.4)
        ax.set_ylim(-0.6, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


WORD_MODELS = ("cnn", "lstm", "lstm-att")


def reproduce(out_dir: Path, models=("cnn", "lstm", "lstm-att", "minilm"), transfer: bool = True,
              transfer_models=WORD_MODELS, variants: dict[str, Path] | None = None) -> tuple[str, Path]:
    """The ACC table of every built model in `models` (TEF, RI, RS, RA and SU on the same samples and
    grid), the curves (PNG), the vocabulary shares (also of the `variants` roots: {label: resource
    root}, e.g. builds under the other vocabulary rules), the semi-universal policy's head, and — with
    `transfer` — transfer among `transfer_models` (default the word models: with MiniLM as a target every
    transferred text is one MiniLM gradient pass, ≈ 15 min more on 2 CPU cores)."""
    data = collect(models)
    text = render_table(table_rows(data))
    vrows = vocab_rows(data)
    for label, root in (variants or {}).items():
        other = collect(models, root=Path(root))
        text += f"\n\nVocabulary rule '{label}' ({root}):\n\n" + render_table(table_rows(other))
        vrows += vocab_rows(other, label)
    text += "\n\nCandidates the model cannot represent (it reads them as <unk>):\n\n" + render_vocab(vrows)
    text += "\n\n" + policy_text(data)
    if transfer:
        text += "\n\n" + transfer_text([m for m in data if m in transfer_models])
    png = plot(data, Path(out_dir) / "tef_pcc_curves.png")
    (Path(out_dir) / "tef_acc.md").write_text(text + "\n")
    return text, png


def policy_text(data: dict[str, dict]) -> str:
    """The semi-universal policy's head and what it did on each model's evaluation samples."""
    lines = ["Semi-universal policy (SU): learned from TEF's substitution events on the policy half of the test set "
             "(every model and explainer of the build), applied query-free to the evaluation samples (paper Fig. 6, "
             "MR: movie→cinematographic, film→cinematographic, story→conte, good→decent, comedy→humorist):", ""]
    for m, d in data.items():
        run = d["runs"].get("policy/su")
        if not run:
            continue
        top = ", ".join(f"{o}→{r} ({c})" for o, r, c in run["policy_top"][:10])
        lines.append(f"* {m}: {run['policy_events']} events; {run['texts']} policy texts on {run['samples']} "
                     f"samples, {run['prediction_changed']} flipped the prediction (not scored), "
                     f"{run['no_substitution']} samples hold none of the policy's words; head: {top}")
    return "\n".join(lines)


def np_mean(x) -> float:
    x = [v for v in x if v is not None and np.isfinite(v)]
    return float(np.mean(x)) if x else float("nan")


def _attack_rows(model_name: str, explainer: str, attack: str) -> dict:
    from benchmark.resources import load_resource

    t = load_resource(f"robustness/mr-{model_name}").table("test").to_pydict()
    keep = [i for i in range(len(t["id"])) if t["explainer"][i] == explainer and t["attack"][i] == attack]
    return {k: [t[k][i] for i in keep] for k in t}


def _pcc_points(model, attribute, originals, adversarials, rho, weights) -> tuple[list, list, list, int]:
    """(rho, pcc, weights) of the pairs whose prediction on `model` is kept, and the number that flip."""
    from benchmark.metrics.robustness import pcc

    po = model.predict(originals).argmax(1)
    pa = model.predict(adversarials).argmax(1)
    keep = [i for i in range(len(originals)) if po[i] == pa[i]]
    ao = attribute([originals[i] for i in keep]) if keep else []
    aa = attribute([adversarials[i] for i in keep]) if keep else []
    return ([rho[i] for i in keep], [pcc(x, y) for x, y in zip(ao, aa)], [weights[i] for i in keep],
            len(originals) - len(keep))


def transfer(src: str, dst: str, explainer: str = "saliency", src_explainer: str = "saliency") -> dict:
    """SPECS §2.6 transfer: TEF texts crafted on (src model, src explainer), scored with `explainer` on
    `dst`; pairs whose dst prediction changes are counted apart, not scored. RA on src, likewise. A
    replacement the target model cannot represent (its vocabulary differs) is counted too."""
    from benchmark.attacks.tef import model_vocabulary
    from benchmark.resources import load_resource
    from benchmark.tracks.robustness import pooled_acc
    from generators.robustness.build import explainer_fn, load_model_under_test

    res = load_resource(f"robustness/mr-{dst}")
    model = load_model_under_test(res.root, dst)
    represents = model_vocabulary(model)
    attribute, why = explainer_fn(explainer, model)
    if why:
        return {"skipped": why}
    out = {}
    for attack in ("tef", "ra"):
        rows = _attack_rows(src, src_explainer, attack)
        sel = [i for i in range(len(rows["id"])) if rows["r"][i] > 0 and not rows["excluded"][i]]
        rho, p, w, flipped = _pcc_points(model, attribute, [rows["tokens"][i] for i in sel],
                                         [rows["adversarial"][i] for i in sel], [rows["rho"][i] for i in sel],
                                         [len(rows["rho_max"][i]) for i in sel])
        ok = [k for k in range(len(p)) if np.isfinite(p[k])]
        unk = sum(not represents(x.split(">", 1)[1]) for i in sel for x in rows["replacements"][i]) if represents else 0
        out[attack] = {"acc": pooled_acc(np.asarray(rho)[ok], np.asarray(p)[ok], np.asarray(w)[ok]) if ok else None,
                       "pairs": len(sel), "prediction_changed": flipped, "pcc_undefined": len(p) - len(ok),
                       "unrepresentable_swaps": unk}
    return out


def transfer_text(models: list[str]) -> str:
    """Transfer across models (saliency → saliency; SPECS §2.6)."""
    f = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
    lines = ["Transfer (texts crafted on the source model with saliency, scored with saliency on the target; "
             "pairs whose target prediction changes are not scored):", "",
             "| source → target | ACC TEF-transfer | ACC RA-transfer | pairs | prediction changed |",
             "|---|---|---|---|---|"]
    for src in models:
        for dst in models:
            if src == dst:
                continue
            t = transfer(src, dst)
            if "skipped" in t:
                continue
            lines.append(f"| {src} → {dst} | {f(t['tef']['acc'])} | {f(t['ra']['acc'])} | {t['tef']['pairs']} | "
                         f"{t['tef']['prediction_changed']} |")
    return "\n".join(lines)


def toki_similar(toki: Any) -> Callable[[str, list[str]], np.ndarray]:
    """TOKI's own word–word relatedness for the "pools" candidate rule (SPECS §1.9 [I]): x is similar to w
    iff cos_m(w, x) ≥ θ_relate^m, voted across the embedding models that know both (τ_vote), as TOKI
    relates words; each candidate list's vectors embedded once."""
    vecs: dict[tuple[str, ...], list] = {}

    def similar(w: str, words: list[str]) -> np.ndarray:
        key = tuple(words)
        if key not in vecs:
            vecs[key] = [st.emb.vectors([toki._norm(x) for x in words]) for st in toki.states]
        votes, voters = np.zeros(len(words)), np.zeros(len(words))
        for st, (v, known) in zip(toki.states, vecs[key]):
            wv, wk = st.emb.vectors([toki._norm(w)])
            if not wk[0] or len(words) == 0:
                continue
            votes += (v @ wv[0] >= st.theta) & known
            voters += known
        return (voters > 0) & (votes / np.maximum(voters, 1) >= toki.tau_vote - 1e-12)

    return similar


def toki_rule(model, train_docs, space, cfg, train: int, explainer: str, seed: int, rule: str = "pools"):
    """TOKI fitted on `model` (pipeline 1) → `toki_candidates` over its keyword / non-keyword pools; `rule`
    "pools" (the paper's reading: similar = TOKI's own relatedness, `toki_similar`) or "a2t-neighbourhood"
    (pool words in A2T's counter-fitted cosine ≥ 0.8 neighbourhood)."""
    from benchmark.attacks.a2t import toki_candidates
    from benchmark.contracts import OracleContext
    from benchmark.toki.core import Toki

    docs = [d for d in train_docs if d.tokens and len(d.tokens) <= (model.max_len or 10**9)]
    preds = model.predict([d.tokens for d in docs]).argmax(1)
    ctx = OracleContext(model=model, seed=seed, class_names=["negative", "positive"],
                        train={"id": [d.id for d in docs], "tokens": [d.tokens for d in docs],
                               "label": [int(d.label) for d in docs], "prediction": [int(p) for p in preds]})
    t0 = time.perf_counter()
    toki = Toki(explainer=explainer, train_limit=train)
    toki.fit(ctx)
    fit_s = time.perf_counter() - t0
    keywords, features = {}, {}
    in_space = (lambda w: w in space) if rule == "a2t-neighbourhood" else (lambda w: True)  # noqa: E731
    for c, words in toki.pool_words.items():
        scores, kw = toki.pool_scores[c], toki.keywords[c]
        keywords[c] = {w: float(s) for w, s, k in zip(words, scores, kw) if k and in_space(w)}
        features[c] = {w: float(s) for w, s, k in zip(words, scores, kw) if not k and in_space(w)}
    cache: dict[tuple[str, int], bool] = {}

    def related(w: str, c: int) -> bool:
        key = (w, c)
        if key not in cache:
            r, _known = toki._vote_words([toki._norm(w)], c, toki._relatedness_model)
            cache[key] = bool(r[0])
        return cache[key]

    info = (f"TOKI fit ({explainer}, {toki.counts['train_explained']} training predictions, {fit_s:.0f} s, "
            f"candidate rule {rule}): "
            + "; ".join(f"class {c}: {len(keywords[c])} keywords, {len(features[c])} non-keywords "
                        f"(e.g. {', '.join(sorted(keywords[c], key=lambda w: -keywords[c][w])[:6])})"
                        for c in sorted(keywords)))
    return toki_candidates(space, related, keywords, features, n=cfg.n_candidates, min_cos=cfg.min_cos, rule=rule,
                           similar=toki_similar(toki) if rule == "pools" else None), info
