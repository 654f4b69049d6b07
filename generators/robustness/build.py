"""Build the robustness resources `robustness/mr-<model>` (SPECS §2): TEF / RA / RI / RS attacks on MR
test sentences against the CPU text models, and the semi-universal policy attack (SU), the attacked sets
published for re-scoring.

Pipeline:
1. MR from `generators.corpora` (the project's 60/20/20 split, seed 0 — SPECS §2.8 proposes 90/10; the
   shared split keeps the models comparable with the IDC track [I]).
2. The synonym space: a user's counter-fitted vectors (`vectors=PATH`, the paper's file) or the offline
   counter-fitted GloVe-50d + WordNet space (`generators.robustness.counterfit`, cached).
3. Models trained by `generators.robustness.train` (Kim CNN, BiLSTM, BiLSTM + attention) under the
   vocabulary rule `vocab_rule` [I]: "extend" (default) gives every word of the synonym space its own
   frozen GloVe row beside the training words, and the attacks drop any candidate a model still cannot
   represent; "drop" keeps the training vocabulary and drops the candidates outside it; "off" lets
   them through (earlier builds: the model reads them as <unk>, a deletion). A2T follows the same rule.
   The shares of candidates, positions and applied swaps that the model cannot represent are recorded
   per run (`stats.runs[…].vocab`).
4. Samples: the MR test split is halved with a fixed seed (`policies.split_halves`): `n_samples`
   correctly classified sentences of the *evaluation half* per model (a seeded random choice) are
   attacked by every (explainer, attack); TEF runs on `policy_samples` sentences of the *policy half*
   give the substitution events of the semi-universal policy.
5. For every (explainer, attack): one sweep per sample at ρ_max = 0.40 with the pre budget check; the
   runs at ρ_max ∈ {0.05 … 0.40} are its prefixes (`benchmark.attacks.tef.sweep`). Per (sample, r) a row:
   original and adversarial tokens, substituted positions, replacements, realised ρ, the ρ_max values
   that stop there, the prediction before and after, the attack's explainer and PCC under it, and the
   sentence similarity (MiniLM). Rows with r = 0 record why nothing was substituted.
6. SU (attack "su", SPECS §2.6): one policy from the TEF events of every model and explainer of the
   build (and of the configs already built, when appending), applied query-free to the same evaluation
   samples on the same ρ_max grid (`policies.policy_rows`) — so SU, TEF and RA are scored on the same
   samples and grid.
7. The summary (curves binned by realised ρ, ACC per explainer / attack) goes to the config's stats.
8. The lexicon (`lexicon/mr/log_odds.json`, `generators.lexicon.write_lexicon`): every word type's smoothed class
   log-odds over the MR training split the models were trained on (α = `lexicon_alpha`) — a read-only asset for
   the data-prior controls (issue #50), no ground truth.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection

import numpy as np
import pyarrow as pa

from benchmark.attacks.synonyms import SynonymSpace
from benchmark.attacks.tef import METHODS, RHO_GRID, AttackConfig, Attacker, model_vocabulary, sweep
from benchmark.contracts import Batch
from benchmark.errors import ResourceError
from benchmark.metrics import robustness as rm
from benchmark.progress import console
from benchmark.resources import resource_root, write_config
from generators.lexicon import LEXICON_ALPHA, write_lexicon
from generators.robustness import policies

if TYPE_CHECKING:
    from generators.corpora.mr import MrSource

FAMILY = "robustness"
VERSION = "v1"
SPACE_FILE = "space/cf-glove50-wordnet.npz"
DEFAULT_EXPLAINERS = ("saliency", "attention", "integrated-gradients")
FAST_EXPLAINERS = ("saliency", "attention")  # the others attack only the first `slow_samples` samples
VOCAB_RULES = ("extend", "drop", "off")  # [I] module docstring, step 3
LEXICON = "mr"  # the lexicon's folder under lexicon/ (one for every model: one training split)
ATTACKS = METHODS + ("su",)  # "su": the semi-universal policy (step 6)
CITATION = """@inproceedings{ivankay2022tef,
  title     = {Fooling Explanations in Text Classifiers},
  author    = {Ivankay, Adam and Girardi, Ivan and Marchiori, Chiara and Frossard, Pascal},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2022}
}"""


@dataclass
class RobustnessConfig:
    models: tuple[str, ...] = ("cnn", "lstm", "lstm-att")
    attacks: tuple[str, ...] = ATTACKS
    explainers: tuple[str, ...] = DEFAULT_EXPLAINERS  # those that cannot explain a model are recorded, skipped
    reference_explainer: str = "saliency"  # the attacks the robustness track re-scores every explainer on
    n_samples: int = 100  # reduced scale [I]; SPECS §2.8 proposes up to 1,000
    policy_samples: int | None = None  # TEF runs on the policy half for SU (None: n_samples; 0: no SU)
    policy_pos: bool = True  # SU replaces a word only when its part of speech stays [X: submission]
    vocab_rule: str = "extend"  # [I] "extend" | "drop" | "off" (module docstring, step 3)
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
    source: MrSource = "mirror"
    path: str | None = None
    lexicon_alpha: float = LEXICON_ALPHA  # [I] the smoothing of the training split's class log-odds (step 8)
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
    rows: list[dict] = []
    excluded: dict[str, int] = {}
    seconds, calls = 0.0, {"predict": 0, "attribute": 0, "texts_attributed": 0}
    vocab: dict[str, int] = {}
    for k, d in enumerate(docs):
        res, rs = sweep(attacker, d.tokens, rho_grid, sample_seed=k)
        seconds += res.seconds
        for c, v in res.vocab.items():
            vocab[c] = vocab.get(c, 0) + v
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
    return rows, {"excluded": excluded, "seconds": round(seconds, 2), "calls": calls, "samples": len(docs),
                  **({"vocab": vocab} if vocab else {})}


def _why_none(res, rhos) -> str:
    if res.r == 0:
        reasons = {k: v for k, v in res.skipped.items() if k in ("no_candidate", "all_candidates_flip",
                                                                 "no_improving_candidate")}
        return "no_substitution: " + ", ".join(f"{k}={v}" for k, v in sorted(reasons.items()))
    return "budget: ρ_max below 1/n"


def curves(rows: list[dict], rho_grid=RHO_GRID) -> dict[str, Any]:
    """Per (explainer, attack): the rows with r ≥ 1 binned by realised ρ, each weighted by the ρ_max grid
    values that stop at it (SPECS §2.7 pooling), and ACC on the fixed grid (`rm.acc`: the cumulative,
    mass-weighted curve); also the ACC with one point per (sample, r) (`acc_point`) and the bins'
    coverage."""
    out: dict[str, Any] = {}
    keys = sorted({(r["explainer"], r["attack"]) for r in rows})
    for e, a in keys:
        sel = [r for r in rows if r["explainer"] == e and r["attack"] == a]
        used = [r for r in sel if r["r"] > 0 and not r["excluded"]]
        rho = [r["rho"] for r in used]
        w = [len(r["rho_max"]) for r in used]
        entry: dict[str, Any] = {
            "n_points": int(sum(w)), "n_texts": len(used), "n_samples": len({r["sample"] for r in sel}),
            "excluded_samples": len({r["sample"] for r in sel if r["excluded"] and not
                                     r["excluded"].startswith(("budget", "no_substitution"))})}
        for m in ("pcc", "kendall", "spearman", "top10", "top30", "top50", "similarity"):
            b = rm.bin_by_rho(rho, [r.get(m, float("nan")) for r in used], weights=w)
            entry[m] = {"centre": b["centre"].tolist(), "mean": _nan_list(b["mean"]), "std": _nan_list(b["std"]),
                        "count": b["count"].tolist(), "mass": b["mass"].tolist()}
        pcc = [r.get("pcc", float("nan")) for r in used]
        entry["acc"] = rm.acc(entry["pcc"]["centre"], np.asarray(entry["pcc"]["mean"], dtype=float),
                              entry["pcc"]["mass"])
        entry["acc_point"] = rm.acc_of(rho, pcc) if used else float("nan")
        entry["coverage"] = rm.bin_coverage(entry["pcc"]["count"])
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
    uniq: dict[tuple[str, str], None] = {}
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


def _check_config(cfg: RobustnessConfig, models: Collection[str]) -> None:
    """Refuse, naming the choices, a config `build_robustness` cannot build (`models`: the known ones)."""
    from generators.text_trainer import EMBEDDINGS

    unknown = set(cfg.models) - set(models)
    if unknown:
        raise ResourceError(f"unknown model(s) {sorted(unknown)}; choose from {', '.join(models)}")
    if cfg.embeddings not in EMBEDDINGS:
        raise ResourceError(f"embeddings must be one of {', '.join(EMBEDDINGS)}, got {cfg.embeddings!r}")
    if cfg.vocab_rule not in VOCAB_RULES:
        raise ResourceError(f"vocab_rule must be one of {', '.join(VOCAB_RULES)}, got {cfg.vocab_rule!r}")
    if cfg.vocab_rule == "extend" and cfg.embeddings == "random":
        raise ResourceError("vocab_rule 'extend' gives the synonym space pre-trained rows: it needs "
                            "embeddings glove-50d (use vocab_rule 'drop' with random embeddings)")
    bad = set(cfg.attacks) - set(ATTACKS)
    if bad:
        raise ResourceError(f"unknown attack(s) {sorted(bad)}; choose from {', '.join(ATTACKS)}")
    if cfg.reference_explainer not in cfg.explainers and not cfg.append:
        raise ResourceError(f"reference explainer {cfg.reference_explainer} must be one of the explainers")


def build_robustness(config: RobustnessConfig | None = None, *, root: Path | None = None,
                     overwrite: bool = False) -> dict[str, Any]:
    import torch

    from benchmark.attacks.filters import PosTagger
    from generators.corpora import load_mr
    from generators.robustness.train import MODELS, train_models

    cfg = config or RobustnessConfig()
    _check_config(cfg, MODELS)
    torch.set_num_threads(1)
    root = Path(root) if root else resource_root(FAMILY)
    corpus = load_mr(source=cfg.source, path=cfg.path, seed=0)
    splits = {s: corpus[s][: cfg.limit] if cfg.limit else corpus[s] for s in ("train", "validation", "test")}
    xy = {s: ([d.tokens for d in docs], [d.label for d in docs]) for s, docs in splits.items()}
    # the space first: under vocab_rule "extend" its words join the word models' vocabulary
    space = load_space(cfg, root, {w for d in corpus.documents() for w in d.tokens})
    t0 = time.perf_counter()
    trained = train_models(xy, root, cfg.models, epochs=cfg.epochs, seed=cfg.seed, overwrite=overwrite,
                           embeddings=cfg.embeddings, freeze_embeddings=cfg.freeze_embeddings,
                           extra_vocab=space.words if cfg.vocab_rule == "extend" else None)
    train_s = time.perf_counter() - t0
    write_lexicon(root, LEXICON, *xy["train"], classes=corpus.classes, target="label", alpha=cfg.lexicon_alpha)
    tagger = PosTagger()
    policy_half, eval_half = policies.split_halves(len(splits["test"]), cfg.seed)
    policy_docs, eval_docs = [splits["test"][i] for i in policy_half], [splits["test"][i] for i in eval_half]
    su = "su" in cfg.attacks and cfg.policy_samples != 0
    n_policy = cfg.n_samples if cfg.policy_samples is None else cfg.policy_samples
    out: dict[str, Any] = {}
    state: dict[str, tuple] = {}  # model -> (model, represents, docs, rows, runs, skipped)
    events: dict[tuple[str, str], list] = {}  # (model, explainer) -> its policy's substitution events
    for name in cfg.models:
        model = load_model_under_test(root, name)
        represents = model_vocabulary(model)  # under "off" it only counts (the attack keeps every candidate)
        docs = choose_samples(model, eval_docs, cfg.n_samples, cfg.seed)
        pdocs = choose_samples(model, policy_docs, n_policy, cfg.seed) if su else []
        rows, runs, skipped = _existing(root, name, cfg, trained[name]) if cfg.append else ([], {}, {})
        if su:  # SU rows are rebuilt below from the policy of this build
            rows = [r for r in rows if r["attack"] != "su"]
        for e in cfg.explainers:
            attribute, why = explainer_fn(e, model, cfg.explainer_params.get(e))
            if why:
                skipped[e] = why
                out.pop(name, None)  # written again below, with the reason
                continue
            slow = e not in FAST_EXPLAINERS and cfg.slow_samples is not None
            edocs = docs[: cfg.slow_samples] if slow else docs
            jobs = [(a, edocs, a) for a in cfg.attacks if a != "su"]
            if su:
                jobs.append(("tef", pdocs[: cfg.slow_samples] if slow else pdocs, "policy"))
            for a, adocs, what in jobs:
                acfg = AttackConfig(method=a, n_candidates=cfg.n_candidates, rho_max=max(cfg.rho_grid),
                                    pcc_undefined=cfg.pcc_undefined, seed=cfg.seed,
                                    pos_check="after" if e in FAST_EXPLAINERS else "before",  # same texts
                                    unrepresentable="keep" if cfg.vocab_rule == "off" else "drop")
                attacker = Attacker(model.predict, attribute, space, acfg, tagger=tagger, represents=represents)
                t = time.perf_counter()
                if what == "policy":
                    ev, info = policy_events(attacker, adocs)
                    events[(name, e)] = ev
                    runs[f"{e}/policy"] = {**info, "wall_s": round(time.perf_counter() - t, 1)}
                else:
                    r, info = attack_rows(attacker, adocs, cfg.rho_grid, a, e, cfg.seed)
                    rows += r
                    runs[f"{e}/{a}"] = {**info, "wall_s": round(time.perf_counter() - t, 1)}
                console.print(f"  mr-{name} {e}/{what}: {len(adocs)} samples in {runs[f'{e}/{what}']['wall_s']} s")
            # written after every explainer: a long run leaves a usable resource behind
            out[name] = _write_model(root, name, cfg, rows, runs, skipped, trained[name], space, tagger, docs, train_s)
        if name not in out:
            out[name] = _write_model(root, name, cfg, rows, runs, skipped, trained[name], space, tagger, docs, train_s)
        state[name] = (model, represents, docs, rows, runs, skipped)
    if su:
        events = {**_stored_events(root, cfg, events), **events}
        keeps = policies.pos_keeper(tagger) if cfg.policy_pos else None
        for name, (model, represents, docs, rows, runs, skipped) in state.items():
            pol = policies.model_policy(events, None if cfg.vocab_rule == "off" else represents)
            names = dict.fromkeys([*cfg.explainers, *sorted({r["explainer"] for r in rows})])
            fns = {e: explainer_fn(e, model, cfg.explainer_params.get(e)) for e in names}
            fns = {e: f for e, (f, why) in fns.items() if not why}
            t = time.perf_counter()
            su_rows, counts = policies.policy_rows(docs, pol, model, fns, cfg.rho_grid, keeps, represents)
            rows += su_rows
            runs["policy/su"] = {**counts, "policy_events": sum(len(v) for v in events.values()),
                                 "policy_top": pol[:20], "wall_s": round(time.perf_counter() - t, 1)}
            out[name] = _write_model(root, name, cfg, rows, runs, skipped, trained[name], space, tagger, docs,
                                     train_s, events={f"{m}/{e}": v for (m, e), v in events.items() if m == name})
    return out


def policy_events(attacker: Attacker, docs) -> tuple[list[tuple[str, str]], dict]:
    """TEF at the largest ρ_max on the policy half: every substitution event (original, replacement)."""
    events: list[tuple[str, str]] = []
    excluded: dict[str, int] = {}
    vocab: dict[str, int] = {}
    for k, d in enumerate(docs):
        res = attacker.attack(d.tokens, sample_seed=k)
        if res.excluded:
            excluded[res.excluded.split(":")[0]] = excluded.get(res.excluded.split(":")[0], 0) + 1
        events += policies.events_of(res)
        for c, v in res.vocab.items():
            vocab[c] = vocab.get(c, 0) + v
    return events, {"samples": len(docs), "events": len(events), "excluded": excluded, "vocab": vocab}


def _stored_events(root: Path, cfg: RobustnessConfig, fresh: dict) -> dict[tuple[str, str], list]:
    """Policy events kept in the stats of the configs already built, for the (model, explainer) pairs
    this build did not run (other models; other explainers under --append), so one policy covers every
    model and explainer built so far."""
    from benchmark.resources import load_resource
    from generators.robustness.train import MODELS

    out: dict[tuple[str, str], list] = {}
    for m in MODELS:
        if m in cfg.models and not cfg.append:
            continue
        try:
            stored = load_resource(f"{FAMILY}/mr-{m}", root=root, hub=False).stats.get("policy_events", {})
        except Exception:  # noqa: BLE001 - a model not built yet
            continue
        for k, v in stored.items():
            key = tuple(k.split("/", 1))
            if key not in fresh:
                out[key] = [tuple(x) for x in v]
    return out


def _write_model(root, name, cfg, rows, runs, skipped, mcfg, space, tagger, docs, train_s, events=None):
    from generators.robustness.train import MODELS

    sim_name = "not computed"
    if cfg.similarity:
        sim_name = add_similarity(rows)
    summary = curves(rows, cfg.rho_grid)
    for k, v in summary.items():
        console.print(f"  mr-{name} {k}: ACC {v['acc']:.4f} ({v['n_points']} points)")
    params = {"dataset": "mr", "model": name, "architecture": MODELS[name], "models": {name: f"mr-{name}"},
              "lexicon": LEXICON,
              "model_sha256": mcfg["sha256"], "space": space.name, "space_info": space.info,
              "pos_tagger": tagger.name, "stop_words": "spaCy English STOP_WORDS",
              "similarity": sim_name, "perplexity": rm.PERPLEXITY_UNAVAILABLE,
              **{k: v for k, v in asdict(cfg).items() if k not in ("models", "extra")},
              "source": "Ivankay et al. 2022, SPECS §2"}
    if events is None and cfg.append:  # keep the policy events of the config appended to
        from benchmark.resources import load_resource

        try:
            events = load_resource(f"{FAMILY}/mr-{name}", root=root, hub=False).stats.get("policy_events")
        except Exception:  # noqa: BLE001 - nothing written yet
            events = None
    stats = {"model_scores": mcfg["scores"], "curves": summary, "runs": runs, "skipped_explainers": skipped,
             "samples": len(docs), "train_seconds": round(train_s, 1),
             "vocabulary": {"rule": cfg.vocab_rule, **(mcfg.get("vocab_extension") or {}),
                            "model_vocabulary": len(mcfg.get("vocab", [])) - 2},
             **({"policy_events": events} if events else {})}
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
    """Rows, runs and skips of the config already written under `root`, minus the (explainer, attack)
    pairs being re-run (and SU's rows, rebuilt whenever "su" is among the attacks)."""
    from benchmark.resources import load_resource

    try:
        res = load_resource(f"{FAMILY}/mr-{name}", root=root, hub=False)
    except Exception:  # noqa: BLE001 - nothing to append to
        return [], {}, {}
    if res.params.get("model_sha256") != mcfg["sha256"]:
        raise ResourceError(f"{res.name} was built on other model weights; rebuild it without --append")
    rerun = {(e, a) for e in cfg.explainers for a in cfg.attacks} | {(e, "policy") for e in cfg.explainers
                                                                       if "su" in cfg.attacks}
    rerun |= {("policy", "su")} if "su" in cfg.attacks else set()
    t = res.table("test").to_pydict()
    rows = [{k: t[k][i] for k in t} for i in range(len(t["id"])) if (t["explainer"][i], t["attack"][i]) not in rerun]
    runs = {k: v for k, v in res.stats.get("runs", {}).items() if tuple(k.split("/", 1)) not in rerun}
    skipped = {k: v for k, v in res.stats.get("skipped_explainers", {}).items() if k not in cfg.explainers}
    return rows, runs, skipped


def load_model_under_test(root: Path, name: str):
    """The model `mr-<name>` of the robustness resource folder `root` as submissions see it (word models
    and the MiniLM transformer)."""
    from benchmark.models.text import load_word_model

    if name == "minilm":
        from benchmark.models.transformer import load_minilm

        return load_minilm(root / "model" / "mr-minilm", name)
    return load_word_model(root / "model" / f"mr-{name}", name)
