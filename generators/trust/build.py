"""Trust sets from people's rationales (SPECS §1.8): `trust/<dataset>-<model>` resources.

Pipeline (per data set; `xaibench generate trust --dataset hatexplain|cams|movies`):
1. load the data set from the mirror (`generators.trust.data`, exclusions counted); documents longer than
   `max_len` tokens are truncated (counted) — the stored tokens are exactly what the model saw;
2. train the CPU-default model under test — the project's Kim CNN (`generators.text_trainer`, Adam 1e-3,
   batch 32, best validation epoch kept) — and predict train and test (prediction = argmax,
   confidence = max class probability);
3. for every *correctly predicted* test instance with a non-empty rationale G, explain the predicted
   class with the project's batched LIME (`submissions/lime_text`, `features="type"`: lime's
   bag-of-words defaults, 5,000 samples [P]), take E = the top-k (10) positive word types (punctuation
   left out when `words_only` [I]; ties by first occurrence), and label the prediction trustworthy iff
   explanation precision |E ∩ G| / |E| ≥ 0.5 [P]; |E| = 0 → precision 0 → untrustworthy (counted) [I];
4. write config `<dataset>-cnn` with splits `train` (id, text, tokens, label, prediction, confidence:
   what an oracle may fit on; plus the training rationale, ground truth handed to a reference oracle
   only) and `test` (the same + explanation_words / explanation_scores, and the
   ground truth: `trust`, `precision`, `rationale`), the model in `model/<dataset>-cnn/`, and a card
   with trust / untrust counts beside the paper's Table 2, the model accuracy beside the paper's, and
   every exclusion.

The transformer model under test (MiniLM fine-tuned) is not built here yet (see the README note).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pyarrow as pa

from benchmark.contracts import Batch
from benchmark.errors import ResourceError
from benchmark.models.text import WordModel, load_word_model
from benchmark.progress import console, progress_bar
from benchmark.resources import resource_root, write_config
from benchmark.tokenize import is_word
from generators.text_trainer import TextTrainConfig, train_text_classifier
from generators.trust.data import DATASETS, TrustCorpus, TrustDoc, load_trust_corpus
from benchmark.toki.core import builtin_explainer
from benchmark.toki.explanations import DedupModel

if TYPE_CHECKING:
    from benchmark.models.transformer import MiniLMModel
    from generators.corpora.transformer import MiniLMTrainConfig

FAMILY = "trust"
VERSION = "v1"

# paper Table 2 (SPECS §1.8): trust / untrust counts and the model under test's accuracy
PAPER: dict[str, dict[str, Any]] = {
    "hatexplain": {"trust": 3002, "untrust": 304, "model": "bert-base-uncased", "accuracy": 0.797},
    "cams": {"trust": 1206, "untrust": 739, "model": "mentalbert-base-uncased", "accuracy": 0.397},
    "movies": {"trust": None, "untrust": None, "model": "(not in the paper: Dong's movie set used an MLP, acc. 0.832)",
               "accuracy": None},
}

CITATION = """@inproceedings{nguyen2025toki,
  title     = {Automated Trustworthiness Oracle Generation for Machine Learning Text Classifiers},
  author    = {Nguyen Tung, Lam and Cho, Steven and Du, Xiaoning and Neelofar and Terragni, Valerio and
               Ruberto, Stefano and Aleti, Aldeida},
  booktitle = {FSE},
  year      = {2025}
}"""

DESCRIPTION = (
    "Trust sets for trustworthiness oracles (TOKI, Nguyen Tung et al.; SPECS §1.8). Configs "
    "`<dataset>-<model>`: `train` = the model's training split with its predictions and confidences (what an "
    "oracle may fit on); `test` = correctly predicted test instances with the LIME explanation (top-10 positive "
    "word types) and confidence, and the ground truth `trust` = explanation precision |E ∩ G|/|E| ≥ 0.5 against "
    "the people's rationale words G (`precision`, `rationale`; never given to submissions). Only classes whose "
    "posts carry a rationale are judged (`judged_classes`, `classes_not_judged` in the stats): HateXplain's "
    "normal posts have none, so its sets judge the toxic class only; movies judges both, CAMS its causes. "
    "`embeddings`: TOKI's "
    "offline embedding ensemble with θ_relate per model. Models under test in model/<config>/."
)


# [I] the Kim CNN pads every input to max_len, so LIME's cost grows with it: HateXplain's test posts have at
# most 80 tokens (a few training posts are longer and are truncated, counted); CAMS / movies are capped
MAX_LEN = {"hatexplain": 80, "cams": 256, "movies": 500}
# CPU default Kim CNN trained on labels alone; the same CNN with rationale supervision (as the paper's BERT-HX);
# MiniLM (transformer) at the reduced CPU scale of generators.corpora.transformer
MODELS = ("cnn", "cnn-sup", "minilm")
MINILM_MAX_WORDS = 48  # MiniLMTrainConfig.cpu(): documents cut to 48 words (training, prediction and LIME)


@dataclass
class TrustBuildConfig:
    dataset: str = "hatexplain"
    model: str = "cnn"  # the CPU default: the project's Kim CNN; "minilm": all-MiniLM-L6-v2 fine-tuned (reduced scale)
    minilm_max_train: int | None = 2000  # MiniLM: training documents used (the reduced CPU scale; None = all)
    top_k: int = 10  # [P]
    num_samples: int = 5000  # [P] LIME samples
    precision_threshold: float = 0.5  # [P]
    words_only: bool = True  # [I] E and G are word types (punctuation tokens left out)
    max_len: int | None = None  # [I] documents truncated to this many tokens (counted); None = MAX_LEN[dataset]
    epochs: int = 10
    seed: int = 0  # corpus split seed (CAMS, movies)
    train_seed: int = 0
    explain_batch: int = 8  # instances per LIME batch (all their perturbations in one predict call)
    test_limit: int | None = None  # explain a seeded random sample of N eligible test instances (reduced scale)
    validation_limit: int | None = None  # the same on validation (0 = no validation trust set; None = all)
    train_explain_limit: int | None = None  # LIME-explain N correct training predictions (pipeline 1; None = all [P])
    # [I, issue #24] the rationale-supervised CNN ("cnn-sup"): generators/text_trainer.py TextTrainConfig
    rationale_loss: str = "erasure"
    rationale_weight: float = 1.0
    rationale_tau: float = 1.0
    limit: int | None = None  # first N documents of every split (tests)
    lime_seed: int = 0


def explanation_precision(explained: Sequence[str], rationale: set[str] | frozenset[str]) -> float:
    """|E ∩ G| / |E| over word types (SPECS §1.8); |E| = 0 → 0.0."""
    e = set(explained)
    if not e:
        return 0.0
    return len(e & set(rationale)) / len(e)


def top_words(tokens: Sequence[str], scores: Sequence[float], top_k: int, words_only: bool = True
              ) -> tuple[list[str], list[float]]:
    """Top-k positive word types from per-position LIME scores (bag-of-words mode: every occurrence
    carries its type's weight, the first is taken); stable ranking, ties by first occurrence."""
    seen: dict[str, float] = {}
    for t, s in zip(tokens, scores):
        if t not in seen and (not words_only or is_word(t)):
            seen[t] = float(s)
    items = sorted(((w, s) for w, s in seen.items() if s > 0), key=lambda x: -x[1])[:top_k]
    return [w for w, _ in items], [s for _, s in items]


def _truncate(corpus: TrustCorpus, max_len: int) -> tuple[int, int, int]:
    """Cut every document to `max_len` tokens. The rationale G keeps only word types that remain in the
    truncated text — a rationale word the model never saw cannot be part of a plausible explanation [I]
    (before this, a word seen only past the cut still counted in |E ∩ G|). Returns (documents truncated,
    rationale word types dropped by the cut, documents whose whole rationale fell past the cut)."""
    n = dropped = emptied = 0
    for docs in corpus.splits.values():
        for d in docs:
            if len(d.tokens) > max_len:
                d.tokens = d.tokens[:max_len]
                n += 1
                if d.rationale:
                    kept = frozenset(d.rationale & set(d.tokens))
                    dropped += len(d.rationale) - len(kept)
                    emptied += int(not kept)
                    d.rationale = kept
    return n, dropped, emptied


def _train_model(cfg: TrustBuildConfig, corpus: TrustCorpus, xy: dict[str, tuple[list, list]], root: Path,
                 name: str, max_len: int, overwrite: bool
                 ) -> tuple[WordModel | MiniLMModel, dict[str, Any], TextTrainConfig | MiniLMTrainConfig]:
    """Train (or reuse) the model under test in `root/model/<name>`: (loaded model, its config, the recipe)."""
    if cfg.model == "minilm":  # all-MiniLM-L6-v2 fine-tuned as a sequence classifier, reduced CPU scale [I]
        from benchmark.models.transformer import load_minilm
        from generators.corpora.transformer import MiniLMTrainConfig, train_minilm

        mini = MiniLMTrainConfig.cpu(epochs=cfg.epochs, max_words=max_len, max_train=cfg.minilm_max_train,
                                     seed=cfg.train_seed)
        mcfg = train_minilm(xy["train"], xy["validation"], root / "model" / name, mini,
                            n_classes=len(corpus.classes), test=xy["test"], overwrite=overwrite, name=name)
        return load_minilm(root / "model" / name, name), mcfg, mini
    # the Kim CNN, trained on labels alone ("cnn") or with rationale supervision ("cnn-sup") [I]
    supervised = cfg.model == "cnn-sup"
    tcfg = TextTrainConfig(epochs=cfg.epochs, seed=cfg.train_seed, max_len_cap=max_len)
    if supervised:
        tcfg.rationale_loss, tcfg.rationale_weight = cfg.rationale_loss, cfg.rationale_weight
        tcfg.rationale_tau = cfg.rationale_tau
    mcfg = train_text_classifier(xy["train"], xy["validation"], root / "model" / name, tcfg,
                                 n_classes=len(corpus.classes), test=xy["test"], overwrite=overwrite, name=name,
                                 rationales=[d.rationale for d in corpus.splits["train"]] if supervised else None)
    return load_word_model(root / "model" / name, name), mcfg, tcfg


@dataclass
class _Labeller:
    """The model under test, the length its documents are cut to, and LIME over it (SPECS §1.8)."""

    model: WordModel | MiniLMModel
    cap: int  # documents cut to this many tokens before prediction
    n_classes: int
    lime: Any
    lime_model: DedupModel  # each distinct perturbed document predicted once

    def predict(self, docs: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """(predicted class, its probability) per document, in chunks of 512."""
        return _predict(self.model, self.cap, self.n_classes, docs)


def _predict(model: WordModel | MiniLMModel, cap: int, n_classes: int, docs: Sequence[Sequence[str]]
             ) -> tuple[np.ndarray, np.ndarray]:
    p = np.concatenate([model.predict([d[:cap] for d in docs[s:s + 512]])
                        for s in range(0, len(docs), 512)]) if docs else np.zeros((0, n_classes))
    return p.argmax(1), p.max(1)


def _label_splits(corpus: TrustCorpus, cfg: TrustBuildConfig, name: str, lab: _Labeller,
                  counts: dict[str, Any]) -> tuple[dict[str, list[dict]], int, int]:
    """`_label_split` on the test split and (unless `validation_limit` is 0) the validation split, their
    counts added to `counts`: (rows per split, test rationale words cut, test rationales emptied)."""
    labelled: dict[str, list[dict]] = {}
    rationale_cut = rationale_emptied = 0
    for split, limit in (("test", cfg.test_limit), ("validation", cfg.validation_limit)):
        if split == "validation" and cfg.validation_limit == 0:
            continue
        docs = corpus.splits[split]
        pred, conf = lab.predict([d.tokens for d in docs])
        cut = _cap_rationales(docs, lab.cap)
        if split == "test":
            rationale_cut += cut[0]
            rationale_emptied += cut[1]
        rows, c = _label_split(docs, pred, conf, lab.lime, lab.lime_model, cfg, limit, f"LIME {name} {split}")
        labelled[split] = rows
        if split == "test":  # the names the test split's counts always had
            c = {"test_documents": c.pop("documents"), "test_incorrect": c.pop("incorrect"),
                 "excluded_by_test_limit": c.pop("excluded_by_limit"), **c}
        else:
            c = {f"validation_{k}": v for k, v in c.items()}
        counts.update(c)
    return labelled, rationale_cut, rationale_emptied


def _supervision(cfg: TrustBuildConfig, tcfg: TextTrainConfig | MiniLMTrainConfig) -> dict[str, Any] | str:
    """The card's description of the rationale supervision of a "cnn-sup" model ("none" otherwise)."""
    if cfg.model != "cnn-sup" or not isinstance(tcfg, TextTrainConfig):  # cnn-sup is always a TextTrainConfig
        return "none"
    return {"rationale_loss": tcfg.rationale_loss, "rationale_weight": tcfg.rationale_weight,
            **({"rationale_tau": tcfg.rationale_tau} if tcfg.rationale_loss == "attribution" else {}),
            "acts_on": ("the output on erased posts" if tcfg.rationale_loss == "erasure" else tcfg.rationale_on)}


def build_trust(cfg: TrustBuildConfig | None = None, *, root: Path | None = None,
                overwrite: bool = False) -> dict[str, Any]:
    """Build `trust/<dataset>-<model>` (module docstring, SPECS §1.8); returns {"meta", "stats"}."""
    cfg = cfg or TrustBuildConfig()
    if cfg.dataset not in DATASETS:
        raise ResourceError(f"unknown trust data set {cfg.dataset!r}; choose from {', '.join(DATASETS)}")
    if cfg.model not in MODELS:
        raise ResourceError(f"model {cfg.model!r} is not available; choose from {', '.join(MODELS)}")
    root = Path(root) if root else resource_root(FAMILY)
    t0 = time.perf_counter()
    corpus = load_trust_corpus(cfg.dataset, seed=cfg.seed, limit=cfg.limit)
    max_len = cfg.max_len or (MINILM_MAX_WORDS if cfg.model == "minilm" else MAX_LEN[cfg.dataset])
    truncated, rationale_cut, rationale_emptied = _truncate(corpus, max_len)
    xy = {s: ([d.tokens for d in v], [d.label for d in v]) for s, v in corpus.splits.items()}
    name = f"{cfg.dataset}-{cfg.model}"
    model, mcfg, tcfg = _train_model(cfg, corpus, xy, root, name, max_len, overwrite)
    cap = model.max_len or max_len  # MiniLM has no fixed length: the documents are cut where training cut them
    train_s = time.perf_counter() - t0

    tr_pred, tr_conf = _predict(model, cap, len(corpus.classes), xy["train"][0])
    counts: dict[str, Any] = {"truncated_documents": truncated}
    lime = builtin_explainer("lime-text", num_samples=cfg.num_samples, features="type")
    # each distinct perturbed document predicted once (exact; bag-of-words samples repeat)
    lime_model = DedupModel(model)
    lab = _Labeller(model, cap, len(corpus.classes), lime, lime_model)
    t1 = time.perf_counter()
    labelled, cut, emptied = _label_splits(corpus, cfg, name, lab, counts)
    rationale_cut += cut
    rationale_emptied += emptied
    counts.update(rationale_words_past_max_len=rationale_cut, rationale_entirely_past_max_len=rationale_emptied)
    lime_s = time.perf_counter() - t1
    # TOKI's pipeline 1 input (SPECS §1.2): the LIME explanation of every correct training prediction, computed
    # once here with the same settings (not ground truth: what the model's explainer says), so that oracles
    # reading it (`train_explanations="given"`) need not re-explain the training split in every worker
    t2 = time.perf_counter()
    train_exp = _explain_train(corpus.splits["train"], tr_pred, lime, lime_model, cfg, f"LIME {name} train")
    train_lime_s = time.perf_counter() - t2
    counts["train_explained"] = len(train_exp)
    rows = labelled["test"]
    n_trust = sum(r["trust"] for r in rows)
    if rows and n_trust in (0, len(rows)):
        counts["one_class_only"] = 1  # Sen or Spec (and G-mean) undefined on this set: reported, never averaged
    acc = float(mcfg["scores"].get("test_accuracy", float("nan")))
    paper = PAPER[cfg.dataset]
    val = labelled.get("validation", [])
    n_explained = len(rows) + len(val)
    stats = {
        "trust": n_trust, "untrust": len(rows) - n_trust, "total": len(rows),
        "trust_share": round(n_trust / len(rows), 4) if rows else None,
        "paper_trust": paper["trust"], "paper_untrust": paper["untrust"],
        "model_accuracy": acc, "paper_model": paper["model"], "paper_accuracy": paper["accuracy"],
        "validation_accuracy": mcfg["scores"].get("validation_accuracy"),
        "validation_trust": sum(r["trust"] for r in val), "validation_untrust": sum(not r["trust"] for r in val),
        "supervision": _supervision(cfg, tcfg),
        "train_documents": len(xy["train"][0]), "train_correct": int((tr_pred == np.array(xy["train"][1])).sum()),
        "exclusions": counts, "corpus": corpus.stats,
        "lime_distinct_documents": [lime_model.distinct, lime_model.documents],
        "seconds": {"train": round(train_s, 1), "lime": round(lime_s, 1),
                    "lime_per_instance": round(lime_s / max(1, n_explained), 3),
                    "lime_train": round(train_lime_s, 1),
                    "lime_train_per_instance": round(train_lime_s / max(1, len(train_exp)), 3)},
    }
    # every class whose posts carry a rationale is judged (issue #38); name the ones that are not, on the card
    judged = {n: [sum(1 for r in rows if int(r["prediction"]) == c and r["trust"]),
                  sum(1 for r in rows if int(r["prediction"]) == c and not r["trust"])]
              for c, n in enumerate(corpus.classes)}
    stats["judged_classes"] = "; ".join(f"{n}: {a} trustworthy / {b} not" for n, (a, b) in judged.items() if a + b)
    stats["classes_not_judged"] = ", ".join(n for n, (a, b) in judged.items() if not a + b) or "none"
    stats.update({f"exclusion_{k}": v for k, v in counts.items()})  # flat, so the card's table shows them
    meta = _write(root, name, cfg, corpus, xy, tr_pred, tr_conf, labelled, stats, mcfg, train_exp)
    console.print(f"[green]trust/{name}[/]: trust {n_trust} / untrust {len(rows) - n_trust} "
                  f"(paper {paper['trust']} / {paper['untrust']}); model accuracy {acc:.3f} "
                  f"(paper {paper['accuracy']})")
    return {"meta": meta, "stats": stats}


def _cap_rationales(docs: Sequence[TrustDoc], cap: int) -> tuple[int, int]:
    """Cut documents longer than the model's fixed length (only when the training documents were all
    shorter); a rationale keeps the words left in the text. (rationale words dropped, rationales emptied)."""
    dropped = emptied = 0
    for d in docs:
        if len(d.tokens) > cap:
            d.tokens = d.tokens[:cap]
            if d.rationale:
                kept = frozenset(d.rationale & set(d.tokens))
                dropped += len(d.rationale) - len(kept)
                emptied += int(not kept)
                d.rationale = kept
    return dropped, emptied


def _explain_train(docs: Sequence[TrustDoc], pred: np.ndarray, lime: Any, lime_model: Any, cfg: TrustBuildConfig,
                   title: str) -> dict[str, tuple[list[str], list[float]]]:
    """Top-k positive LIME words of every correctly predicted, non-empty training document (or a seeded
    sample of `cfg.train_explain_limit`; 0 = none), by document id."""
    idx = [i for i, d in enumerate(docs) if pred[i] == d.label and d.tokens]
    if cfg.train_explain_limit is not None and len(idx) > cfg.train_explain_limit:
        keep = np.random.default_rng(cfg.seed).choice(len(idx), cfg.train_explain_limit, replace=False)
        idx = [idx[k] for k in sorted(keep)]
    out: dict[str, tuple[list[str], list[float]]] = {}
    with progress_bar(len(idx), title, unit="inst") as bar:
        for s in range(0, len(idx), cfg.explain_batch):
            part = idx[s : s + cfg.explain_batch]
            batch = Batch(ids=[docs[i].id for i in part], inputs=[docs[i].tokens for i in part], seed=cfg.lime_seed)
            for i, sc in zip(part, lime.explain(lime_model, batch)):
                out[docs[i].id] = top_words(docs[i].tokens, sc, cfg.top_k, cfg.words_only)
                bar.advance()
    return out


def _label_split(docs: Sequence[TrustDoc], pred: np.ndarray, conf: np.ndarray, lime: Any, lime_model: Any,
                 cfg: TrustBuildConfig, limit: int | None, title: str) -> tuple[list[dict], dict[str, int]]:
    """SPECS §1.8 on one split: every correctly predicted document with a rationale (or a seeded sample of
    `limit` of them) explained with LIME; trust = explanation precision of the top-k positive words ≥ ½."""
    correct = pred == np.array([d.label for d in docs])
    counts = {"documents": len(docs), "incorrect": int((~correct).sum()), "excluded_no_rationale": 0,
              "excluded_by_limit": 0, "empty_explanations": 0}
    eligible = []
    for i, d in enumerate(docs):
        if not correct[i]:
            continue
        if not d.rationale:
            counts["excluded_no_rationale"] += 1
            continue
        eligible.append(i)
    if limit is not None and len(eligible) > limit:
        counts["excluded_by_limit"] = len(eligible) - limit
        keep = np.random.default_rng(cfg.seed).choice(len(eligible), limit, replace=False)
        eligible = [eligible[k] for k in sorted(keep)]  # a seeded random sample, in split order
    rows = []
    with progress_bar(len(eligible), title, unit="inst") as bar:
        for s in range(0, len(eligible), cfg.explain_batch):
            idx = eligible[s : s + cfg.explain_batch]
            batch = Batch(ids=[docs[i].id for i in idx], inputs=[docs[i].tokens for i in idx], seed=cfg.lime_seed)
            for i, sc in zip(idx, lime.explain(lime_model, batch)):
                d = docs[i]
                words, scores = top_words(d.tokens, sc, cfg.top_k, cfg.words_only)
                g = d.rationale if not cfg.words_only else frozenset(w for w in d.rationale if is_word(w))
                prec = explanation_precision(words, g)
                counts["empty_explanations"] += int(not words)
                rows.append({"id": d.id, "text": d.text, "tokens": d.tokens, "label": d.label,
                             "prediction": int(pred[i]), "confidence": float(conf[i]),
                             "explanation_words": words, "explanation_scores": scores,
                             "trust": bool(prec >= cfg.precision_threshold), "precision": float(prec),
                             "rationale": sorted(g)})
                bar.advance()
    return rows, counts


def schemas(classes: Sequence[str]):
    import datasets

    base = {"id": datasets.Value("string"), "text": datasets.Value("string"),
            "tokens": datasets.Sequence(datasets.Value("string")), "label": datasets.ClassLabel(names=list(classes)),
            "prediction": datasets.ClassLabel(names=list(classes)), "confidence": datasets.Value("float64"),
            "class_name": datasets.Value("string")}
    train = datasets.Features(base)
    test = datasets.Features({**base, "explanation_words": datasets.Sequence(datasets.Value("string")),
                              "explanation_scores": datasets.Sequence(datasets.Value("float64")),
                              "trust": datasets.Value("bool"), "precision": datasets.Value("float64"),
                              "rationale": datasets.Sequence(datasets.Value("string"))})
    return train, test


GROUND_TRUTH_COLUMNS = ("trust", "precision", "rationale")


def write_trust_config(root: Path, name: str, classes: Sequence[str], train_rows: list[dict], test_rows: list[dict],
                       params: dict, stats: dict, validation_rows: list[dict] | None = None) -> dict[str, Any]:
    """Write one `trust/<name>` config: splits `train` and `test` with one schema (HF needs one per config);
    train rows carry no explanation (empty lists) and null ground truth. Every row gets `class_name`, the name
    of its *predicted* class as TOKI embeds it (the per-dataset class-name map `params["class_words"]`, e.g.
    HateXplain "hateful offensive" for the class `toxic`; SPECS §1.2 [I]) unless the row has one."""
    _, schema = schemas(classes)
    names = list(params.get("class_words") or classes)
    train_rows = [{"class_name": names[int(r["prediction"])], **r} for r in train_rows]
    test_rows = [{"class_name": names[int(r["prediction"])], **r} for r in test_rows]
    fill: dict[str, Any] = {"explanation_words": [], "explanation_scores": [], "trust": None, "precision": None,
                            "rationale": []}
    train = pa.Table.from_pylist([{**fill, **r} for r in train_rows], schema=schema.arrow_schema)
    test = pa.Table.from_pylist(test_rows, schema=schema.arrow_schema)
    splits = {"train": train, "test": test}
    if validation_rows:  # explained + labelled like test: what θ_dist / θ_conf are tuned on (never test)
        splits["validation"] = pa.Table.from_pylist(
            [{"class_name": names[int(r["prediction"])], **r} for r in validation_rows], schema=schema.arrow_schema)
    card = {"pretty_name": "xaibench trust", "description": DESCRIPTION, "license": "other", "citation": CITATION}
    return write_config(root, FAMILY, name, splits, schema, version=VERSION,
                        params=params, stats=stats, card_info=card)


def _write(root, name, cfg, corpus, xy, tr_pred, tr_conf, labelled, stats, mcfg, train_exp) -> dict[str, Any]:
    # the training rationales are ground truth too: the track hands them to a reference oracle only
    train_rows = [{"id": d.id, "text": d.text, "tokens": d.tokens, "label": d.label, "prediction": int(p),
                   "confidence": float(c),
                   "rationale": sorted(w for w in d.rationale if not cfg.words_only or is_word(w)),
                   **dict(zip(("explanation_words", "explanation_scores"), train_exp.get(d.id, ([], []))))}
                  for d, p, c in zip(corpus.splits["train"], tr_pred, tr_conf)]
    params = {**asdict(cfg), "classes": list(corpus.classes), "class_words": list(corpus.class_words),
              "model_dir": f"model/{name}", "model_sha256": mcfg.get("sha256"),
              "ground_truth_columns": list(GROUND_TRUTH_COLUMNS), "source": "Nguyen Tung et al., SPECS §1.8"}
    return write_trust_config(root, name, corpus.classes, train_rows, labelled["test"], params, stats,
                              validation_rows=labelled.get("validation"))
