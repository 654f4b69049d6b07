"""Build the robustness resources `robustness/mr-<model>` (SPECS §2): TEF / RA / RI / RS attacks on MR
test sentences against the CPU text models, the attacked sets published for re-scoring.

Pipeline:
1. MR from `generators.corpora` (the project's 60/20/20 split, seed 0 — SPECS §2.8 proposes 90/10; the
   shared split keeps the models comparable with the IDC track [I]); models trained by
   `generators.robustness.train` (Kim CNN, BiLSTM, BiLSTM + attention).
2. The synonym space: a user's counter-fitted vectors (`vectors=PATH`, the paper's file) or the offline
   counter-fitted GloVe-50d + WordNet space (`generators.robustness.counterfit`, cached).
3. Samples: `n_samples` correctly classified test sentences per model, a seeded random choice.
4. For every (explainer, attack): one sweep per sample at ρ_max = 0.40 with the pre budget check; the
   runs at ρ_max ∈ {0.05 … 0.40} are its prefixes (`benchmark.attacks.tef.sweep`). Per (sample, r) a row:
   original and adversarial tokens, substituted positions, replacements, realised ρ, the ρ_max values
   that stop there, the prediction before and after, the attack's explainer and PCC under it, and the
   sentence similarity (MiniLM). Rows with r = 0 record why nothing was substituted.
5. The summary (curves binned by realised ρ, ACC per explainer / attack) goes to the config's stats.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from benchmark.attacks.synonyms import SynonymSpace
from benchmark.attacks.tef import METHODS, RHO_GRID, AttackConfig, Attacker, sweep
from benchmark.contracts import Batch
from benchmark.errors import ResourceError
from benchmark.metrics import robustness as rm
from benchmark.progress import console
from benchmark.resources import resource_root, write_config

FAMILY = "robustness"
VERSION = "v1"
SPACE_FILE = "space/cf-glove50-wordnet.npz"
DEFAULT_EXPLAINERS = ("saliency", "attention", "integrated-gradients")
FAST_EXPLAINERS = ("saliency", "attention")  # the others attack only the first `slow_samples` samples
CITATION = """@inproceedings{ivankay2022tef,
  title     = {Fooling Explanations in Text Classifiers},
  author    = {Ivankay, Adam and Girardi, Ivan and Marchiori, Chiara and Frossard, Pascal},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2022}
}"""


@dataclass
class RobustnessConfig:
    models: tuple[str, ...] = ("cnn", "lstm", "lstm-att")
    attacks: tuple[str, ...] = METHODS
    explainers: tuple[str, ...] = DEFAULT_EXPLAINERS  # those that cannot explain a model are recorded, skipped
    reference_explainer: str = "saliency"  # the attacks the robustness track re-scores every explainer on
    n_samples: int = 100  # reduced scale [I]; SPECS §2.8 proposes up to 1,000
    slow_samples: int | None = None  # cap for explainers outside FAST_EXPLAINERS (IG: 50 steps per text)
    n_candidates: int = 15
    rho_grid: tuple[float, ...] = RHO_GRID
    pcc_undefined: str = "zero"
    seed: int = 0
    epochs: int = 6
    # [I] the word models' embeddings: SPECS §2.8's frozen GloVe, at 50-d (GloVe 300-d does not install
    # offline); "random" = trainable 128-d random embeddings (the models of earlier builds)
    embeddings: str = "glove-50d"
    freeze_embeddings: bool | None = None  # None: frozen when pre-trained, trained when random
    vectors: str | None = None  # a counter-fitted vector text file (the paper's); default: offline space
    space_top: int = 40000
    space_epochs: int = 200
    similarity: bool = True
    explainer_params: dict = field(default_factory=dict)  # {explainer: {parameter: value}} overrides
    append: bool = False  # keep the rows of other explainers already in the config (same model weights)
    limit: int | None = None  # first N documents of each split for training (tests)
    source: str = "mirror"
    path: str | None = None
    extra: dict = field(default_factory=dict)


def load_space(cfg: RobustnessConfig, root: Path, vocab_words) -> SynonymSpace:
    if cfg.vectors:
        return SynonymSpace.from_text(Path(cfg.vectors))
    file = root / SPACE_FILE
    if file.is_file():
        return SynonymSpace.load(file)
    from generators.robustness.counterfit import build_space

    space = build_space(vocab_words, top=cfg.space_top, epochs=cfg.space_epochs, log=console.print)
    space.save(file)
    return space


def explainer_fn(name: str, model, params: dict | None = None):
    """(attribute(texts) -> list of arrays, reason it cannot explain `model` or None) — in process."""
    from benchmark.submission import get_submission

    sub = get_submission(name)
    obj = sub.instantiate(params or {})
    why = obj.unsupported(model) if callable(getattr(obj, "unsupported", None)) else None

    def attribute(texts):
        return obj.explain(model, Batch(ids=[f"t{i}" for i in range(len(texts))], inputs=[list(t) for t in texts],
                                        segments=None, seed=0))
    return attribute, why


def choose_samples(model, docs, n: int, seed: int) -> list:
    toks = [d.tokens for d in docs]
    fits = [i for i, t in enumerate(toks) if t and (model.max_len is None or len(t) <= model.max_len)]
    pred = model.predict([toks[i] for i in fits]).argmax(1)
    ok = [i for i, p in zip(fits, pred) if int(p) == docs[i].label]
    pick = sorted(np.random.default_rng(seed).permutation(len(ok))[:n].tolist())
    return [docs[ok[k]] for k in pick]


def attack_rows(attacker: Attacker, docs, rho_grid, attack: str, explainer: str, seed: int) -> tuple[list[dict], dict]:
    rows, excluded, seconds, calls = [], {}, 0.0, {"predict": 0, "attribute": 0, "texts_attributed": 0}
    for k, d in enumerate(docs):
        res, rs = sweep(attacker, d.tokens, rho_grid, sample_seed=k)
        seconds += res.seconds
        for c in calls:
            calls[c] += res.calls[c]
        if res.excluded:
            excluded[res.excluded.split(":")[0]] = excluded.get(res.excluded.split(":")[0], 0) + 1
        by_r: dict[int, list[float]] = {}
        for rho, r in rs.items():
            by_r.setdefault(r, []).append(rho)
        for r, rhos in sorted(by_r.items()):
            a = res.attribution_after(r) if res.excluded is None else np.zeros(0)
            m = rm.pair_metrics(res.attribution, a) if (r > 0 and res.excluded is None) else {}
            why = res.excluded or ("" if r > 0 else _why_none(res, rhos))
            rows.append({"id": f"{d.id}~{attack}~{explainer}~r{r}", "sample": d.id, "attack": attack,
                         "explainer": explainer, "tokens": list(d.tokens), "adversarial": res.adversarial(r),
                         "positions": [s.position for s in res.steps[:r]],
                         "replacements": [f"{s.original}>{s.replacement}" for s in res.steps[:r]],
                         "n": res.n, "r": r, "rho": r / res.n if res.n else 0.0, "rho_max": sorted(rhos),
                         "label": int(d.label), "pred_before": int(res.label),
                         "pred_after": int(res.prediction_after(r)) if res.label >= 0 else -1,
                         "prob_before": float(res.probs[res.label]) if res.label >= 0 else float("nan"),
                         "prob_after": float(res.steps[r - 1].probs[res.label]) if r > 0 else
                         (float(res.probs[res.label]) if res.label >= 0 else float("nan")),
                         "pcc": m.get("pcc", float("nan")), "kendall": m.get("kendall", float("nan")),
                         "spearman": m.get("spearman", float("nan")), "top10": m.get("top10", float("nan")),
                         "top30": m.get("top30", float("nan")), "top50": m.get("top50", float("nan")),
                         "excluded": why})
    return rows, {"excluded": excluded, "seconds": round(seconds, 2), "calls": calls, "samples": len(docs)}


def _why_none(res, rhos) -> str:
    if res.r == 0:
        reasons = {k: v for k, v in res.skipped.items() if k in ("no_candidate", "all_candidates_flip",
                                                                 "no_improving_candidate")}
        return "no_substitution: " + ", ".join(f"{k}={v}" for k, v in sorted(reasons.items()))
    return "budget: ρ_max below 1/n"


def curves(rows: list[dict], rho_grid=RHO_GRID) -> dict[str, Any]:
    """Per (explainer, attack): the pooled ρ_max grid results with r ≥ 1, binned by realised ρ, and ACC."""
    out: dict[str, Any] = {}
    keys = sorted({(r["explainer"], r["attack"]) for r in rows})
    for e, a in keys:
        sel = [r for r in rows if r["explainer"] == e and r["attack"] == a]
        rho, vals = [], {m: [] for m in ("pcc", "kendall", "spearman", "top10", "top30", "top50", "similarity")}
        for r in sel:
            if r["r"] == 0 or r["excluded"]:
                continue
            for _ in r["rho_max"]:  # pooled over the ρ_max grid (SPECS §2.7)
                rho.append(r["rho"])
                for m in vals:
                    vals[m].append(r.get(m, float("nan")))
        entry = {"n_points": len(rho), "n_samples": len({r["sample"] for r in sel}),
                 "excluded_samples": len({r["sample"] for r in sel if r["excluded"] and not
                                          r["excluded"].startswith(("budget", "no_substitution"))})}
        for m, v in vals.items():
            b = rm.bin_by_rho(rho, v)
            entry[m] = {"centre": b["centre"].tolist(), "mean": _nan_list(b["mean"]), "std": _nan_list(b["std"]),
                        "count": b["count"].tolist()}
        entry["acc"] = rm.acc(entry["pcc"]["centre"], np.asarray(entry["pcc"]["mean"], dtype=float))
        out[f"{e}/{a}"] = entry
    return out


def _nan_list(x) -> list:
    return [None if not np.isfinite(v) else float(v) for v in np.asarray(x, dtype=float)]


_SIM: list = []


def add_similarity(rows: list[dict]) -> str:
    """MiniLM cosine of original vs adversarial text for every row that has none yet."""
    if not _SIM:
        _SIM.append(rm.SentenceSimilarity())
    sim = _SIM[0]
    rows = [r for r in rows if "similarity" not in r]
    todo = [r for r in rows if r["r"] > 0]
    uniq = {}
    for r in todo:
        uniq.setdefault((" ".join(r["tokens"]), " ".join(r["adversarial"])), None)
    pairs = list(uniq)
    vals = sim([p[0] for p in pairs], [p[1] for p in pairs]) if pairs else []
    look = dict(zip(pairs, vals))
    for r in rows:
        r["similarity"] = float(look[(" ".join(r["tokens"]), " ".join(r["adversarial"]))]) if r["r"] > 0 else 1.0
    return sim.name


def _schema():
    import datasets

    f = datasets.Value
    return datasets.Features({
        "id": f("string"), "sample": f("string"), "attack": f("string"), "explainer": f("string"),
        "tokens": datasets.Sequence(f("string")), "adversarial": datasets.Sequence(f("string")),
        "positions": datasets.Sequence(f("int64")), "replacements": datasets.Sequence(f("string")),
        "n": f("int64"), "r": f("int64"), "rho": f("float64"), "rho_max": datasets.Sequence(f("float64")),
        "label": f("int64"), "pred_before": f("int64"), "pred_after": f("int64"), "prob_before": f("float64"),
        "prob_after": f("float64"), "pcc": f("float64"), "kendall": f("float64"), "spearman": f("float64"),
        "top10": f("float64"), "top30": f("float64"), "top50": f("float64"), "similarity": f("float64"),
        "excluded": f("string"),
    })


def _table(rows: list[dict]) -> pa.Table:
    schema = _schema()
    cols = {k: [r.get(k, 1.0 if k == "similarity" else None) for r in rows] for k in schema}
    return pa.table({k: pa.array(v, schema.arrow_schema.field(k).type) for k, v in cols.items()})


def build_robustness(config: RobustnessConfig | None = None, *, root: Path | None = None,
                     overwrite: bool = False) -> dict[str, Any]:
    import torch

    from benchmark.attacks.filters import PosTagger
    from generators.corpora import load_mr
    from generators.robustness.train import MODELS, train_models

    cfg = config or RobustnessConfig()
    unknown = set(cfg.models) - set(MODELS)
    if unknown:
        raise ResourceError(f"unknown model(s) {sorted(unknown)}; choose from {', '.join(MODELS)}")
    from generators.idc.train import EMBEDDINGS

    if cfg.embeddings not in EMBEDDINGS:
        raise ResourceError(f"embeddings must be one of {', '.join(EMBEDDINGS)}, got {cfg.embeddings!r}")
    if cfg.reference_explainer not in cfg.explainers and not cfg.append:
        raise ResourceError(f"reference explainer {cfg.reference_explainer} must be one of the explainers")
    torch.set_num_threads(1)
    root = Path(root) if root else resource_root(FAMILY)
    corpus = load_mr(source=cfg.source, path=cfg.path, seed=0)
    splits = {s: corpus[s][: cfg.limit] if cfg.limit else corpus[s] for s in ("train", "validation", "test")}
    xy = {s: ([d.tokens for d in docs], [d.label for d in docs]) for s, docs in splits.items()}
    t0 = time.perf_counter()
    trained = train_models(xy, root, cfg.models, epochs=cfg.epochs, seed=cfg.seed, overwrite=overwrite,
                           embeddings=cfg.embeddings, freeze_embeddings=cfg.freeze_embeddings)
    train_s = time.perf_counter() - t0
    space = load_space(cfg, root, {w for d in corpus.documents() for w in d.tokens})
    tagger = PosTagger()
    out = {}
    for name in cfg.models:
        model = load_model_under_test(root, name)
        docs = choose_samples(model, splits["test"], cfg.n_samples, cfg.seed)
        rows, runs, skipped = _existing(root, name, cfg, trained[name]) if cfg.append else ([], {}, {})
        for e in cfg.explainers:
            attribute, why = explainer_fn(e, model, cfg.explainer_params.get(e))
            if why:
                skipped[e] = why
                out.pop(name, None)  # written again below, with the reason
                continue
            edocs = docs if e in FAST_EXPLAINERS or cfg.slow_samples is None else docs[: cfg.slow_samples]
            for a in cfg.attacks:
                acfg = AttackConfig(method=a, n_candidates=cfg.n_candidates, rho_max=max(cfg.rho_grid),
                                    pcc_undefined=cfg.pcc_undefined, seed=cfg.seed,
                                    pos_check="after" if e in FAST_EXPLAINERS else "before")  # same texts
                attacker = Attacker(model.predict, attribute, space, acfg, tagger=tagger)
                t = time.perf_counter()
                r, info = attack_rows(attacker, edocs, cfg.rho_grid, a, e, cfg.seed)
                rows += r
                runs[f"{e}/{a}"] = {**info, "wall_s": round(time.perf_counter() - t, 1)}
                console.print(f"  mr-{name} {e}/{a}: {len(edocs)} samples in {runs[f'{e}/{a}']['wall_s']} s")
            # written after every explainer: a long run leaves a usable resource behind
            out[name] = _write_model(root, name, cfg, rows, runs, skipped, trained[name], space, tagger, docs, train_s)
        if name not in out:
            out[name] = _write_model(root, name, cfg, rows, runs, skipped, trained[name], space, tagger, docs, train_s)
    return out


def _write_model(root, name, cfg, rows, runs, skipped, mcfg, space, tagger, docs, train_s):
    from generators.robustness.train import MODELS

    sim_name = "not computed"
    if cfg.similarity:
        sim_name = add_similarity(rows)
    summary = curves(rows, cfg.rho_grid)
    for k, v in summary.items():
        console.print(f"  mr-{name} {k}: ACC {v['acc']:.4f} ({v['n_points']} points)")
    params = {"dataset": "mr", "model": name, "architecture": MODELS[name], "models": {name: f"mr-{name}"},
              "model_sha256": mcfg["sha256"], "space": space.name, "space_info": space.info,
              "pos_tagger": tagger.name, "stop_words": "spaCy English STOP_WORDS",
              "similarity": sim_name, "perplexity": rm.PERPLEXITY_UNAVAILABLE,
              **{k: v for k, v in asdict(cfg).items() if k not in ("models", "extra")},
              "source": "Ivankay et al. 2022, SPECS §2"}
    stats = {"model_scores": mcfg["scores"], "curves": summary, "runs": runs, "skipped_explainers": skipped,
             "samples": len(docs), "train_seconds": round(train_s, 1)}
    return write_config(root, FAMILY, f"mr-{name}", {"test": _table(rows)}, _schema(), version=VERSION,
                        params=params, stats=stats, card_info=card_info())


def card_info() -> dict:
    """The family card (one for every config: each config's own model, embeddings and space are in its
    params)."""
    return {"pretty_name": "xaibench robustness (TEF on MR)", "license": "other", "citation": CITATION,
            "description": "TEF / RA / RI / RS word-substitution attacks (Ivankay et al. 2022) on MR test "
                           "sentences, one config per model under test (mr-<model>), re-generated by xaibench. "
                           "Stand-ins for what the paper used, recorded in each config's params: the word models "
                           "(Kim CNN, BiLSTM, BiLSTM + attention) read frozen GloVe 6B 50-d embeddings by default "
                           "(`embeddings`; the paper: GloVe 300-d); the transformer is all-MiniLM-L6-v2 fine-tuned "
                           "on MR (the paper: BERT / RoBERTa / XLNet); the synonym space is GloVe-50d "
                           "counter-fitted with WordNet (`space`; the paper: counter-fitted GloVe 300-d); sentence "
                           "similarity is MiniLM cosine (the paper: USE); perplexity is not computed."}


def _existing(root: Path, name: str, cfg: RobustnessConfig, mcfg: dict) -> tuple[list[dict], dict, dict]:
    """Rows, runs and skips of the config already written, minus the explainers being re-run."""
    import json

    from benchmark.resources import load_resource

    try:
        res = load_resource(f"{FAMILY}/mr-{name}")
    except Exception:  # noqa: BLE001 - nothing to append to
        return [], {}, {}
    if res.params.get("model_sha256") != mcfg["sha256"]:
        raise ResourceError(f"{res.name} was built on other model weights; rebuild it without --append")
    t = res.table("test").to_pydict()
    rows = [{k: t[k][i] for k in t} for i in range(len(t["id"])) if t["explainer"][i] not in cfg.explainers]
    runs = {k: v for k, v in res.stats.get("runs", {}).items() if k.split("/")[0] not in cfg.explainers}
    skipped = {k: v for k, v in res.stats.get("skipped_explainers", {}).items() if k not in cfg.explainers}
    json.dumps(runs)
    return rows, runs, skipped


def load_model_under_test(root: Path, name: str):
    """The model `mr-<name>` of the robustness resource folder `root` as submissions see it (word models
    and the MiniLM transformer)."""
    from benchmark.models.text import load_word_model

    if name == "minilm":
        from benchmark.models.transformer import load_minilm

        return load_minilm(root / "model" / "mr-minilm", name)
    return load_word_model(root / "model" / f"mr-{name}", name)
