"""The `trust/embeddings` resource: TOKI's offline embedding ensemble (SPECS §1.5) with θ_relate per
model estimated by the binary search of SPECS §1.3 on WordNet synonym pairs vs random pairs — under two
named rules for the random pairs: "wordnet" (uniform over WordNet lemmas, SPECS §1.3) and "corpus"
(issue #24: drawn by frequency from the local-corpus words every model knows, so that θ_relate is set
on the words TOKI meets). Both are stored (`thresholds.json` "rules"); `theta_rule` picks the default.

Models (`benchmark/toki/embeddings.py` states which of the paper's six each stands in for):
MiniLM on isolated words, MiniLM's static word-piece embeddings, GloVe 6B 50-d, and word2vec and
fastText trained here with gensim on the local corpora: the texts of HateXplain, CAMS, ERASER movies
(from the data mirror) and WordNet's own glosses and usage examples (a general-English corpus that
installs offline; it shares no pair list with the θ_relate pairs, but it is WordNet text — noted in
the card). Pairs with an OOV word are dropped per model (SPECS §1.3 [I]); the pair counts actually
used, TPR / TNR and both precisions at the solution go to the card and provenance.

Files: `<home>/resources/trust/embeddings/` (Parquet: one row per model) and
`<home>/resources/trust/model/embeddings/{word2vec,fasttext}.kv` + `thresholds.json` (what
`benchmark.toki.embeddings.load_ensemble` reads).
"""

from __future__ import annotations

import gzip
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from benchmark.progress import console
from benchmark.resources import resource_root, write_config
from benchmark.resources.store import mirror_root
from benchmark.tokenize import is_word, tokenize
from benchmark.toki.keywords import theta_relate_search
from benchmark.toki.embeddings import DEFAULT_MODELS, STANDS_IN_FOR, THETA_RULES, make_embedding

FAMILY = "trust"
CONFIG = "embeddings"
VERSION = "v1"


@dataclass
class EmbeddingsConfig:
    models: tuple[str, ...] = DEFAULT_MODELS
    n_heads: int = 1000  # [P] the 1,000 most common words
    n_unrelated: int | None = None  # None: as many as the related pairs
    seed: int = 0
    dim: int = 100  # gensim models
    window: int = 5
    min_count: int = 2
    epochs: int = 5
    tol: float = 1e-4  # [I] |TPR − TNR| stopping tolerance
    max_iter: int = 60
    wordnet_corpus: bool = True  # also train gensim on WordNet glosses + examples
    corpus_limit: int | None = None  # sentences (tests)
    retrain: bool = False  # retrain the gensim models even when trained with the same recipe
    # [I, issue #24] unrelated pairs of the θ_relate search: both rules are run and stored; `theta_rule` is the
    # one TOKI reads by default ("wordnet": uniform WordNet lemmas, SPECS §1.3; "corpus": drawn by corpus
    # frequency, p ∝ count^frequency_power, from the local-corpus words every model knows)
    theta_rule: str = "corpus"
    frequency_power: float = 1.0


def local_sentences(wn=None, limit: int | None = None) -> Iterator[list[str]]:
    """Token lists of the local corpora: HateXplain, CAMS, ERASER movies texts, WordNet glosses."""
    import csv
    import io

    root = mirror_root()
    n = 0

    def emit(text: str):
        toks = [t for t in tokenize(text) if is_word(t)]
        return toks if len(toks) > 1 else None

    sources: list[Iterator[str]] = []
    if root is not None:
        for sub in ("hatexplain", "eraser_movies"):
            f = Path(root) / sub / "docs.jsonl.gz"
            if f.is_file():
                sources.append(json.loads(line)["text"] for line in gzip.open(f, "rt", encoding="utf-8"))
        cams = Path(root) / "cams"
        for name, col in (("added_CAMS_data.csv", "selftext"), ("IntentSDCNL_Training.csv", "selftext"),
                          ("IntentSDCNL_Testing.csv", "selftext")):
            f = cams / name
            if f.is_file():
                text = f.read_bytes().decode("utf-8", errors="replace")
                sources.append(r.get(col) or "" for r in csv.DictReader(io.StringIO(text)))
    if wn is not None:
        sources.append(s for syn in wn.all_synsets() for s in [syn.definition(), *syn.examples()])
    for src in sources:
        for text in src:
            for line in str(text).split("\n"):
                toks = emit(line)
                if toks:
                    yield toks
                    n += 1
                    if limit is not None and n >= limit:
                        return


def train_gensim(sentences: list[list[str]], folder: Path, cfg: EmbeddingsConfig) -> dict[str, Any]:
    from gensim.models import FastText, Word2Vec

    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, dict[str, Any]] = {}
    recipe = json.dumps({k: getattr(cfg, k) for k in ("dim", "window", "min_count", "epochs", "seed",
                                                         "wordnet_corpus", "corpus_limit")}, sort_keys=True)
    for name, cls in (("word2vec", Word2Vec), ("fasttext", FastText)):
        if name not in cfg.models:
            continue
        side = folder / f"{name}.recipe.json"
        if (folder / f"{name}.kv").is_file() and side.is_file() and side.read_text() == recipe and not cfg.retrain:
            out[name] = {"reused": True}
            continue
        t = time.perf_counter()
        m = cls(sentences=sentences, vector_size=cfg.dim, window=cfg.window, min_count=cfg.min_count, sg=1,
                epochs=cfg.epochs, workers=1, seed=cfg.seed)
        m.wv.save(str(folder / f"{name}.kv"))
        side.write_text(recipe)
        out[name] = {"vocabulary": len(m.wv), "train_seconds": round(time.perf_counter() - t, 1)}
    return out


def corpus_frequencies(models: dict, limit: int | None = None) -> dict[str, int]:
    """Lower-cased alphabetic word counts of the local corpora (HateXplain, CAMS, ERASER movies texts — the
    words TOKI meets; not the WordNet glosses), kept for the words every model in `models` knows."""
    from collections import Counter

    counts = Counter(w.lower() for sent in local_sentences(None, limit) for w in sent if w.isalpha())
    words = sorted(counts)
    keep = np.ones(len(words), dtype=bool)
    for emb in models.values():
        keep &= np.asarray(emb.knows(words), dtype=bool)
    return {w: counts[w] for w, k in zip(words, keep) if k}


def pair_similarities(emb, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, int]:
    """cos(a, b) over the pairs both of whose words `emb` knows; (similarities, dropped pairs)."""
    words = sorted({w for p in pairs for w in p})
    vecs, known = emb.vectors(words)
    idx = {w: i for i, w in enumerate(words)}
    a = np.array([idx[p[0]] for p in pairs])
    b = np.array([idx[p[1]] for p in pairs])
    ok = known[a] & known[b]
    return np.einsum("ij,ij->i", vecs[a[ok]], vecs[b[ok]]), int((~ok).sum())


def build_embeddings(cfg: EmbeddingsConfig | None = None, *, root: Path | None = None) -> dict[str, Any]:
    from generators.lexicon import ensure_wordnet
    from generators.trust.wordnet import frequency_pairs, random_pairs, synonym_pairs

    cfg = cfg or EmbeddingsConfig()
    unknown = set(cfg.models) - set(DEFAULT_MODELS)
    if unknown:
        raise ValueError(f"unknown embedding model(s) {sorted(unknown)}; choose from {DEFAULT_MODELS}")
    root = Path(root) if root else resource_root(FAMILY)
    folder = root / "model" / CONFIG
    t0 = time.perf_counter()
    wn = ensure_wordnet()
    related, heads = synonym_pairs(wn, cfg.n_heads)
    unrelated = random_pairs(wn, cfg.n_unrelated or len(related), seed=cfg.seed)
    console.print(f"θ_relate pairs: {len(related)} synonym pairs of {len(heads)} head words, "
                  f"{len(unrelated)} random pairs")
    gensim_stats: dict[str, Any] = {}
    if {"word2vec", "fasttext"} & set(cfg.models):
        sents = list(local_sentences(wn if cfg.wordnet_corpus else None, cfg.corpus_limit))
        gensim_stats = train_gensim(sents, folder, cfg)
        gensim_stats["sentences"] = len(sents)
        gensim_stats["tokens"] = int(sum(len(s) for s in sents))
    if cfg.theta_rule not in THETA_RULES:
        raise ValueError(f"theta_rule must be one of {THETA_RULES}, got {cfg.theta_rule!r}")
    models = {name: make_embedding(name, None, folder) for name in cfg.models}
    freq = corpus_frequencies(models, cfg.corpus_limit)
    unrelated_by_rule = {"wordnet": unrelated,
                         "corpus": frequency_pairs(freq, cfg.n_unrelated or len(related), seed=cfg.seed,
                                                   power=cfg.frequency_power, wn=wn)}
    console.print(f"corpus rule: {len(unrelated_by_rule['corpus'])} pairs drawn by frequency^{cfg.frequency_power:g} "
                  f"from {len(freq)} local-corpus words every model knows")
    rows: list[dict[str, Any]] = []
    rules: dict[str, dict[str, dict[str, Any]]] = {}
    for rule, pairs in unrelated_by_rule.items():
        rules[rule] = {}
        for name, emb in models.items():
            t = time.perf_counter()
            s_rel, drop_rel = pair_similarities(emb, related)
            s_unr, drop_unr = pair_similarities(emb, pairs)
            res: dict[str, Any] = {**theta_relate_search(s_rel, s_unr, tol=cfg.tol, max_iter=cfg.max_iter),
                                   "dropped_related": drop_rel, "dropped_unrelated": drop_unr,
                                   "seconds": round(time.perf_counter() - t, 1), "stands_in_for": STANDS_IN_FOR[name]}
            rules[rule][name] = res
            rows.append({"model": name, "rule": rule, **{k: res[k] for k in (
                "theta", "tpr", "tnr", "precision_related", "precision_unrelated", "n_related", "n_unrelated",
                "dropped_related", "dropped_unrelated")}, "stands_in_for": STANDS_IN_FOR[name]})
            console.print(f"  [{rule}] {name}: θ_relate {res['theta']:.4f}  TPR {res['tpr']:.3f}  "
                          f"TNR {res['tnr']:.3f}  "
                          f"pairs {res['n_related']} + {res['n_unrelated']}")
    thresholds = rules[cfg.theta_rule]
    folder.mkdir(parents=True, exist_ok=True)
    examples = {rule: pairs[:: max(1, len(pairs) // 20)][:20] for rule, pairs in unrelated_by_rule.items()}
    (folder / "thresholds.json").write_text(json.dumps(
        {"models": thresholds, "rule": cfg.theta_rule, "rules": rules,
         "pairs": {"related": len(related), "unrelated": len(unrelated),
                   "unrelated_corpus": len(unrelated_by_rule["corpus"]), "heads": len(heads),
                   "corpus_words": len(freq), "unrelated_examples": examples},
         "config": asdict(cfg)}, indent=1))
    import datasets

    feats = datasets.Features({
        "model": datasets.Value("string"), "rule": datasets.Value("string"), "theta": datasets.Value("float64"),
        "tpr": datasets.Value("float64"),
        "tnr": datasets.Value("float64"), "precision_related": datasets.Value("float64"),
        "precision_unrelated": datasets.Value("float64"), "n_related": datasets.Value("int64"),
        "n_unrelated": datasets.Value("int64"), "dropped_related": datasets.Value("int64"),
        "dropped_unrelated": datasets.Value("int64"), "stands_in_for": datasets.Value("string")})
    table = pa.Table.from_pylist(rows)
    stats = {"pairs_related": len(related), "pairs_unrelated": len(unrelated), "paper_pairs": "≈32,000 + 32,000",
             "pairs_unrelated_corpus": len(unrelated_by_rule["corpus"]), "corpus_words": len(freq),
             "theta_rule": cfg.theta_rule, "head_words": len(heads), "gensim": gensim_stats, "thresholds": rules,
             "seconds": round(time.perf_counter() - t0, 1)}
    for rule, by_model in rules.items():  # flat, so the card's table shows them
        for name, res in by_model.items():
            stats.update({f"{rule}_{name}_theta_relate": round(res["theta"], 4),
                          f"{rule}_{name}_tpr": round(res["tpr"], 4),
                          f"{rule}_{name}_tnr": round(res["tnr"], 4),
                          f"{rule}_{name}_pairs": f"{res['n_related']} related + {res['n_unrelated']} unrelated"})
    from generators.trust.build import CITATION, DESCRIPTION

    card = {"pretty_name": "xaibench trust", "description": DESCRIPTION, "license": "other", "citation": CITATION}
    return write_config(root, FAMILY, CONFIG, {"train": table}, feats, version=VERSION,
                        params={k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
                        stats=stats, card_info=card)
