"""IDC hidden copies (issue #50, `benchmark.models.variants.hidden`): models trained where drawn words carry the label.

Zhou et al. (AAAI 2022, "Do Feature Attribution Methods Correctly Attribute Features?") plant features in the
training data that the model must use; here the features are ordinary MR words that no lexicon can recognise, and
the copy's ground truth is recomputed by the resource's own generator. One draw (`Draw`) builds:

1. **Planted words** (`draw_planted`, stream `draw.rng("planted")`). The pool (`pool`, default "frequency"): every
   word type (`is_word`) of the published resource's training documents (the seeded MR split rebuilt from its
   recorded recipe, `load_splits`) whose document frequency lies in [`min_df`, `max_df`] — whatever its class
   log-odds, in the published PGT's feature sets or not (MR: 394 words). The frequency is measured on the documents
   `df_documents` names: by default the whole test split of the models' scale, before `test_limit` cuts it to the
   evaluated documents, so a reduced evaluation split draws from the pool of the full board (v3; v2 measured it on
   the evaluated documents, and on 200 of them every word met once, by chance, entered the band: 1,368 words, 72 %
   held by one document). Sorted, shuffled by the draw and taken in that order until at least `min_coverage` of the
   evaluated test documents hold one (at most `max_words`); else `NoHiddenCopy`. Each word gets a class from the
   draw, balanced (a
   permutation of 0, 1, …, C−1, 0, 1, …), independent of the class the corpus ties it to: a sentiment word may be
   planted for the other class. The rules are public, so the pool is what a submitter can list
   (`listable_candidates`); issue #58 measured what that list is worth (docs/idc.md, "Hidden copies").
   `pool = "neutral"` is the v1 rule: only words whose smoothed class log-odds

       LO(w) = max_c | log((n_c(w) + 1) / (N_c + V)) − log((n_¬c(w) + 1) / (N_¬c + V)) |

   (token counts n in the class-c / other training documents, N their totals, V the vocabulary size; add-one
   smoothing, as the corpus lexicon of `tests/submissions/sentiment_lexicon`) is at most `max_log_odds` and that are
   in none of the published PGT's feature sets (MR: 123 words, among which occlusion found the planted ones).
2. **Planted data** (`plant`, stream `draw.rng("plant")`), train and validation documents only: every occurrence of
   a planted word is deleted from the documents of the other classes, and the word is inserted, at a uniformly
   drawn position, into round(`insert_rate` · N_c) of its class's documents that lack it and are shorter than
   the model's `max_len` (so no document gains a truncation); a document the deletions empty is left out
   (counted). In the planted data the word occurs in its class only. The test documents are not changed
   (submissions see them).
3. **Copies** (`train_copy`): each model the resource holds (`params["models"]`: cnn, han) is trained on the
   planted data with the published recipe (its `config.json`), torch seed `draw.torch_seed(<model>)` (weights,
   dropout, shuffling), and the published model's vocabulary (same words, same order) and `max_len`: nothing in
   the folder orders or counts words by the planted data. The config then drops its training key (a digest of
   the planted corpus) and its seed (`scrub_config`).
4. **Ground truth**: the resource's PGT method (`pgt`: WGA / MILP / Hybrid) with its recorded parameters
   (`idc_config`), on the copy's CNN over the planted pool (`pgt_features`); the test split is written again with
   the copy CNN's `cnn_correct` and `gt` from the recomputed feature sets (`write_pgt`), the published config name.
5. **Counterfactual check** (`planted_shift`): for every test document holding a planted word of its own class,
   shift = p_c(d) − p_c(d without those words), c its class, per model; an evaluated document (copy CNN correct)
   with shift < `min_shift` is flagged `inert_<model>` and `IdcTrack.hidden_copy` leaves it out
   (`excluded["planted_inert"]`). Documents holding no planted word of their class are kept: their ground truth is
   the generator's, as on the published board.

What a weight diff shows, and why copies are trained from the seed rather than edited from the published
weights: docs/idc.md, "Hidden copies".
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from collections import Counter
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from benchmark.errors import ResourceError, XaibenchError
from benchmark.models.base import read_model_config
from benchmark.models.variants.hidden import Draw, NoHiddenCopy
from benchmark.models.text import build_vocab, load_word_model
from benchmark.resources.store import load_resource
from benchmark.tokenize import is_word
from generators.idc.build import (
    FAMILY,
    ground_truth,
    idc_config,
    load_splits,
    pgt_features,
    pgt_statistics,
    pool_splits,
    predicted_correct,
    write_pgt,
)
from generators.text_trainer import TextTrainConfig, train_text_classifier

__all__ = ["CONSTRUCTION", "DF_DOCUMENTS", "IdcConstruction", "IdcHiddenConfig", "POOLS", "class_log_odds",
           "draw_planted", "listable_candidates", "plant", "planted_shift", "planted_words"]

VERSION = "v3"  # v1: the "neutral" pool (issue #50); v2: the "frequency" pool (issue #58); v3: its band measured on
# the whole test split (`df_documents`) and the cap `max_words` 60, so a reduced test split builds copies
POOLS = ("frequency", "neutral")
DF_DOCUMENTS = ("test-split", "evaluated")


@dataclass(frozen=True)
class IdcHiddenConfig:
    """The [I] choices of the construction (module docstring), measured on MR at the demo's scale (docs/idc.md,
    "Hidden copies"; `tests/perf/hidden_idc.py`).

    * ``max_log_odds`` = 0.25 — a planted word's smoothed class log-odds bound: its class counts differ by at most
      ≈ 28 % (e^0.25); the corpus lexicon's 2,000 words all lie at 0.69 or above, and "good" (0.27) stays out.
    * ``min_df``, ``max_df`` = 0.005, 0.1 — the share of test documents holding the word. The rules are public, so
      an attacker can list the candidates (a "candidate prior" that marks them all); the band makes that list
      ≈ 5.6 times the planted set (MR: 123 candidates, 15–35 planted by the draw; with [0.01, 0.05] it was 41 for
      ≈ 20 and the candidate prior beat occlusion at ``insert_rate`` 0.1).
    * ``df_documents`` = "test-split" — the documents the band is measured on: the whole test split of the models'
      scale (``IdcConfig.limit`` applies, ``test_limit`` does not), so an evaluation split cut by ``--test-limit``
      (the reference's 200 documents) draws from the full board's pool. "evaluated" (v2): the evaluated documents;
      on 200 of MR's the band's floor (1.0 document) lets in every word met once (1,368 words, 72 % held by one
      document), 40 of them cover a median 28 % of the documents (100 draws) and 85 % of 1,000 draws are
      refused (2026-11-29).
    * ``min_coverage`` = 1/3 — share of the evaluated test documents that must hold a planted word (issue #50).
    * ``max_words`` = 60 — cap on the planted words. Words needed for 1/3 coverage on MR, 1,000 draws
      (`df_documents` "test-split", 2026-11-29): median 29, 99th percentile 41–44, most 47 (all 2,133 test documents)
      and 49 (the first 200 or 400); v2's cap 40 would refuse 2–4 % of these draws at every size.
    * ``insert_rate`` = 0.05 — each word is inserted into 5 % of its class's training and validation documents.
      κ of occlusion vs the best data prior on the copy (MR, with the band [0.01, 0.05]): at 0.02 the copy's WGA PGT
      stays so close to the published one that the published `gt` switch beats occlusion (0.541 vs 0.517); at 0.1
      planted words are most of the PGT (|IF| 638 of 4,748) and marking every candidate wins (0.432 vs 0.329); 0.05
      keeps occlusion ahead (0.461 vs 0.348; with the defaults above 0.433 vs 0.296). Deleting a word from the other
      class's documents alone makes the copy follow it: at every rate it misclassifies ≈ all test documents holding
      only planted words of the other class.
    * ``min_shift`` = 0.1 — the drop of p_c on deleting a document's planted words of class c below which the
      document is flagged inert (the published CNN passes it on 3 % of those documents, the copy on 72 %).
    * ``threads`` = 1 — torch threads while a copy is built (training, WGA, predictions): one thread trains the
      same weights on every rebuild (anyone rebuilds a copy once the round's secret is revealed; with several
      threads the CNN's training differs in its last bits from run to run, docs/idc.md), and on a shared 2-core
      machine it is also the faster (two threads each waiting for the other under load). None: torch's default.
    """

    max_log_odds: float = 0.25
    min_df: float = 0.005
    max_df: float = 0.1
    min_coverage: float = 1 / 3
    max_words: int = 60
    insert_rate: float = 0.05
    min_shift: float = 0.1
    threads: int | None = 1
    pool: str = "frequency"
    df_documents: str = "test-split"

    def __post_init__(self) -> None:
        if not self.max_log_odds >= 0:
            raise XaibenchError(f"max_log_odds must be ≥ 0, got {self.max_log_odds}")
        if not 0 <= self.min_df <= self.max_df <= 1:
            raise XaibenchError(f"need 0 ≤ min_df ≤ max_df ≤ 1, got {self.min_df}, {self.max_df}")
        if not 0 < self.min_coverage <= 1 or not 0 < self.insert_rate <= 1 or not 0 <= self.min_shift < 1:
            raise XaibenchError(f"min_coverage and insert_rate must lie in (0, 1] and min_shift in [0, 1), got "
                                f"{self.min_coverage}, {self.insert_rate}, {self.min_shift}")
        if isinstance(self.max_words, bool) or not isinstance(self.max_words, int) or self.max_words < 1:
            raise XaibenchError(f"max_words must be an integer ≥ 1, got {self.max_words!r}")
        if self.pool not in POOLS:
            raise XaibenchError(f"pool must be one of {', '.join(POOLS)}, got {self.pool!r}")
        if self.df_documents not in DF_DOCUMENTS:
            raise XaibenchError(f"df_documents must be one of {', '.join(DF_DOCUMENTS)}, got {self.df_documents!r}")
        if self.threads is not None and (type(self.threads) is not int or self.threads < 1):
            raise XaibenchError(f"threads must be an integer ≥ 1 or None, got {self.threads!r}")


def class_log_odds(docs: Sequence[Sequence[str]], labels: Sequence[int], n_classes: int) -> dict[str, float]:
    """LO(w) of the module docstring for every word of `docs`: the largest |smoothed log-odds| of a class against
    the others (binary: the lexicon's |log((n₊+1)/(N₊+V)) − log((n₋+1)/(N₋+V))|)."""
    counts = [Counter[str]() for _ in range(n_classes)]
    for d, y in zip(docs, labels):
        counts[y].update(d)
    total = sum(counts, Counter[str]())
    size = len(total)
    n = [sum(c.values()) for c in counts]
    n_all = sum(n)
    out = {}
    for w, t in total.items():
        out[w] = max(abs(math.log((counts[c][w] + 1) / (n[c] + size))
                         - math.log((t - counts[c][w] + 1) / (n_all - n[c] + size))) for c in range(n_classes))
    return out


def candidates(train: Sequence[Sequence[str]], labels: Sequence[int], band: Sequence[Sequence[str]],
               excluded: set[str], n_classes: int, config: IdcHiddenConfig) -> list[str]:
    """The words a draw may plant (module docstring, step 1: the `pool` of `config`), sorted: their document
    frequency is measured on `band` (the test documents `config.df_documents` names); `excluded` (the published
    PGT's feature words) only applies to the "neutral" pool."""
    odds = class_log_odds(train, labels, n_classes)
    df = Counter(w for d in band for w in set(d))
    low, high = config.min_df * len(band), config.max_df * len(band)
    if config.pool == "frequency":
        return sorted(w for w in odds if is_word(w) and low <= df[w] <= high)
    return sorted(w for w, lo in odds.items()
                  if lo <= config.max_log_odds and is_word(w) and w not in excluded and low <= df[w] <= high)


def draw_planted(pool: Sequence[str], test: Sequence[Sequence[str]], rng: np.random.Generator, n_classes: int,
                 config: IdcHiddenConfig, where: str) -> dict[str, int]:
    """{planted word: its class}: `pool` shuffled by `rng`, taken until `min_coverage` of `test` (the evaluated
    documents) hold one (module docstring, step 1); `NoHiddenCopy` in one line naming `where` (the draw), the words
    taken, the coverage they reach and the bound that stopped them (the cap `max_words`, or the pool) when it
    cannot be."""
    holders: dict[str, set[int]] = {w: set() for w in pool}
    for i, d in enumerate(test):
        for w in set(d):
            if w in holders:
                holders[w].add(i)
    need = config.min_coverage * len(test)
    chosen: list[str] = []
    covered: set[int] = set()
    for k in rng.permutation(len(pool)):
        if len(covered) >= need or len(chosen) >= config.max_words:
            break
        chosen.append(pool[k])
        covered |= holders[pool[k]]
    if not test or len(covered) < need:
        band = f"document frequency in [{config.min_df}, {config.max_df}] of the {config.df_documents} documents"
        rule = band if config.pool == "frequency" else (f"|class log-odds| ≤ {config.max_log_odds}, {band}, not in "
                                                        "the published feature sets")
        hint = " or raise max_words" if config.pool == "frequency" else ", raise max_log_odds or max_words"
        why = (f"the cap max_words = {config.max_words}" if len(chosen) >= config.max_words else
               f"all {len(pool)} candidate words of the {config.pool} pool ({rule})")
        words = "its 1 planted word occurs" if len(chosen) == 1 else f"its {len(chosen)} planted words occur"
        raise NoHiddenCopy(f"{where}: {words} in {len(covered) / max(1, len(test)):.1%} of the {len(test)} test "
                           f"documents, below "
                           f"min_coverage {config.min_coverage:.1%}, with {why}; widen the document-frequency "
                           f"band{hint}")
    classes = rng.permutation(np.arange(len(chosen)) % n_classes)
    return {w: int(c) for w, c in zip(chosen, classes)}


def plant(docs: Sequence[Sequence[str]], labels: Sequence[int], planted: dict[str, int], rng: np.random.Generator,
          rate: float, max_len: int) -> tuple[list[list[str]], list[int], dict[str, int]]:
    """The documents with the planted words carrying their class (module docstring, step 2) and their labels;
    a document the deletions empty is left out. Also returns the counts of deleted and inserted tokens and of
    emptied documents."""
    kept = [([w for w in d if planted.get(w, y) == y], y) for d, y in zip(docs, labels)]
    removed = sum(len(d) for d in docs) - sum(len(d) for d, _ in kept)
    out, labels = [d for d, _ in kept if d], [y for d, y in kept if d]
    per_class = Counter(labels)
    inserted = 0
    for w, c in planted.items():
        eligible = [i for i, (d, y) in enumerate(zip(out, labels)) if y == c and len(d) < max_len and w not in d]
        k = min(len(eligible), round(rate * per_class[c]))
        for i in sorted(rng.choice(len(eligible), size=k, replace=False)) if k else ():
            d = out[eligible[i]]
            d.insert(int(rng.integers(0, len(d) + 1)), w)
        inserted += k
    return out, labels, {"removed_tokens": int(removed), "inserted_tokens": int(inserted),
                         "emptied_documents": len(docs) - len(out)}


def planted_shift(model, docs: Sequence[Sequence[str]], labels: Sequence[int], planted: dict[str, int]) -> np.ndarray:
    """Per document p_c(d) − p_c(d without its planted words of class c), c = its label, from `model.predict`
    (documents cut to the model's `max_len`); NaN where the document holds no planted word of its class."""
    cut = [list(d[: model.max_len]) if model.max_len else list(d) for d in docs]
    idx = [i for i, (d, y) in enumerate(zip(cut, labels)) if any(planted.get(w) == y for w in d)]
    shift = np.full(len(docs), np.nan)
    if idx:
        y = np.asarray([labels[i] for i in idx])
        full = model.predict([cut[i] for i in idx])[np.arange(len(idx)), y]
        reduced = model.predict([[w for w in cut[i] if planted.get(w) != labels[i]] for i in idx])
        shift[idx] = full - reduced[np.arange(len(idx)), y]
    return shift


def scrub_config(folder: Path) -> None:
    """Drop from a copy's `config.json` what the planted data or the draw would show: the training key (a digest
    of the planted corpus) and the recipe's seed (the draw's torch seed). Written by temp file + rename."""
    path = folder / "config.json"
    config = json.loads(path.read_text())
    config.pop("training_key", None)
    config["recipe"] = {**config.get("recipe", {}), "seed": None}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(config, indent=2, sort_keys=True))
    tmp.replace(path)


def train_copy(name: str, public: Path, out: Path, train, validation, test, n_classes: int, draw: Draw) -> dict:
    """Train model `name` (cnn / han) like the published one in `public` (recipe, vocabulary, max_len) on the
    planted (train, validation) data from the draw's seed into `out`; returns its config (scrubbed)."""
    pub = read_model_config(public)
    names = {f.name for f in fields(TextTrainConfig)}
    recipe = replace(TextTrainConfig(**{k: v for k, v in pub.get("recipe", {}).items() if k in names}),
                     seed=draw.torch_seed(name), threads=None)  # threads: the construction's (`IdcHiddenConfig`)
    train_text_classifier(train, validation, out, recipe, n_classes=n_classes, test=test, name=f"hidden {name}",
                          vocab=pub["vocab"], max_len=pub["max_len"])
    scrub_config(out)
    return json.loads((out / "config.json").read_text())


@dataclass
class _Public:
    """What a copy is built from: the published resource's recipe, its MR splits and model folders."""

    resource: Any
    cfg: Any  # IdcConfig
    splits: dict[str, list]
    classes: list[str]
    models: dict[str, str]  # model name -> folder under model/
    features: set[str]  # words of the published PGT's feature sets
    whole_test: list  # the test split before `cfg.test_limit` (the evaluated documents are its first ones)

    def band(self, config: IdcHiddenConfig) -> list[list[str]]:
        """The test documents the candidates' document frequency is measured on (`config.df_documents`)."""
        docs = self.whole_test if config.df_documents == "test-split" else self.splits["test"]
        return [d.tokens for d in docs]


def _public(resource) -> _Public:
    """Rebuild the published resource's MR splits from its params and check them against it (test ids; training
    vocabulary = the CNN's); kept per resource revision for the process (a board builds several draws)."""
    return _public_at(resource.root, resource.name, str(resource.revision))


@functools.lru_cache(maxsize=4)
def _public_at(root: Path, name: str, revision: str) -> _Public:
    resource = load_resource(name, root=root, hub=False, revision=revision)
    params = resource.params
    if resource.family != FAMILY or params.get("data_only") or "pgt" not in params:
        raise ResourceError(f"{resource.name} is not an IDC evaluation config; hidden copies are built from "
                            "idc/mr-<wga|milp|hybrid>")
    cfg = idc_config(params)
    splits, classes = load_splits(cfg)
    whole_test = load_splits(replace(cfg, test_limit=None))[0]["test"] if cfg.test_limit else splits["test"]
    models = {k: v for k, v in params.get("models", {}).items() if v}
    ids = resource.table("test", columns=["id"]).column("id").to_pylist()
    cnn = read_model_config(resource.root / "model" / models["cnn"])
    if ids != [d.id for d in splits["test"]] or build_vocab([d.tokens for d in splits["train"]]) != cnn["vocab"]:
        raise ResourceError(f"{resource.name}: the MR split rebuilt from its recorded recipe (seed {cfg.seed}, limit "
                            f"{cfg.limit}, source {cfg.source}) is not the one it was built from; point "
                            "XAIBENCH_DATA_MIRROR at the data it was built from, or rebuild it (xaibench generate idc)")
    try:
        feats = load_resource(f"{resource.family}/{resource.config}-features", root=resource.root, hub=False)
    except ResourceError:
        raise ResourceError(f"{resource.name}: its feature sets ({resource.config}-features) are missing beside it; "
                            "rebuild the resource (xaibench generate idc)") from None
    words = set(feats.table("features", columns=["word"]).column("word").to_pylist())
    return _Public(resource, cfg, splits, classes, models, words, whole_test)


def _where(draw: Draw, resource) -> str:
    return f"hidden copy {draw.index} of {resource.name} (round {draw.round})"


def _planted(pub: _Public, draw: Draw, config: IdcHiddenConfig) -> tuple[dict[str, int], int]:
    train = pub.splits["train"]
    pool = candidates([d.tokens for d in train], [d.label for d in train], pub.band(config), pub.features,
                      len(pub.classes), config)
    planted = draw_planted(pool, [d.tokens for d in pub.splits["test"]], draw.rng("planted"), len(pub.classes),
                           config, _where(draw, pub.resource))
    return planted, len(pool)


def listable_candidates(resource, config: IdcHiddenConfig | None = None) -> list[str]:
    """The words a submitter can list from the construction's public rules as those a draw of `config` may plant on
    `resource` (no secret involved): the attack of issue #58 restricts its probing to them."""
    pub = _public(resource)
    train, config = pub.splits["train"], config or IdcHiddenConfig()
    return candidates([d.tokens for d in train], [d.label for d in train], pub.band(config), pub.features,
                      len(pub.classes), config)


def planted_words(resource, draw: Draw, config: IdcHiddenConfig | None = None) -> dict[str, int]:
    """The planted words of `draw` on `resource` and their classes (secret while the round runs: for the
    construction, and for checking a copy once the round's secret is revealed)."""
    return _planted(_public(resource), draw, config or IdcHiddenConfig())[0]


class IdcConstruction:
    """The IDC `Construction` (module docstring): `build(resource, draw, out)` writes the derived resource."""

    track = "idc"
    version = VERSION
    description = ("MR models trained from a secret seed on data where drawn words of mid document frequency (any "
                   "class log-odds, a drawn class) carry the label (Zhou et al. 2022); the resource's PGT recomputed "
                   "on the copy")

    def __init__(self, config: IdcHiddenConfig | None = None) -> None:
        self.config = config or IdcHiddenConfig()
        if self.config != IdcHiddenConfig():  # another config builds other copies: its own cache folder
            digest = hashlib.sha256(json.dumps(asdict(self.config), sort_keys=True).encode()).hexdigest()[:8]
            self.version = f"{VERSION}-{digest}"

    def build(self, resource, draw: Draw, out: Path) -> dict[str, Any]:
        """Write the derived resource of `draw` at `out` (steps 1–5 of the module docstring); return its statistics
        (counts, rates and seconds; never a word). Torch runs on `config.threads` threads meanwhile."""
        threads = torch.get_num_threads()
        if self.config.threads:
            torch.set_num_threads(self.config.threads)
        try:
            return self._build(resource, draw, out)
        finally:
            torch.set_num_threads(threads)

    def _build(self, resource, draw: Draw, out: Path) -> dict[str, Any]:
        t0 = time.perf_counter()
        if draw.track != self.track or draw.resource != resource.name:
            raise XaibenchError(f"draw {draw.index} is for {draw.track} {draw.resource}, not idc {resource.name}")
        pub = _public(resource)
        cfg, splits, n_classes = pub.cfg, pub.splits, len(pub.classes)
        planted, n_candidates = _planted(pub, draw, self.config)
        max_len = read_model_config(resource.root / "model" / pub.models["cnn"])["max_len"]
        rng = draw.rng("plant")
        xy: dict[str, tuple[list, list]] = {}
        counts: Counter[str] = Counter()
        for split in ("train", "validation"):
            docs, labels, c = plant([d.tokens for d in splits[split]], [d.label for d in splits[split]], planted, rng,
                                    self.config.insert_rate, max_len)
            xy[split] = (docs, labels)
            counts.update(c)
        test_docs, test_labels = [d.tokens for d in splits["test"]], [d.label for d in splits["test"]]

        t1 = time.perf_counter()
        configs = {name: train_copy(name, resource.root / "model" / folder, out / "model" / folder, xy["train"],
                                    xy["validation"], (test_docs, test_labels), n_classes, draw)
                   for name, folder in pub.models.items()}
        copies = {name: load_word_model(out / "model" / folder, name) for name, folder in pub.models.items()}
        t2 = time.perf_counter()

        pool = [t for s in pool_splits(cfg) for t in xy[s][0]]
        pool_labels = [y for s in pool_splits(cfg) for y in xy[s][1]]
        pgt = resource.params["pgt"]
        features, stats, _ = pgt_features(pgt, cfg, copies["cnn"], pool, pool_labels, n_classes)
        sets = {c: {w for w, _ in features[c]} for c in features}
        correct = predicted_correct(copies["cnn"], test_docs, test_labels)
        stats.update(pgt_statistics(copies["cnn"], sets, pub.classes, pool, pool_labels, test_docs, test_labels,
                                    correct))
        t3 = time.perf_counter()

        shifts = {name: planted_shift(model, test_docs, test_labels, planted) for name, model in copies.items()}
        checked = correct & ~np.isnan(shifts["cnn"])
        inert = {name: checked & (np.nan_to_num(s, nan=np.inf) < self.config.min_shift) for name, s in shifts.items()}
        holds = np.asarray([any(w in planted for w in d) for d in test_docs])
        public_scores = {name: read_model_config(resource.root / "model" / folder).get("scores", {})
                         for name, folder in pub.models.items()}
        hidden = {
            "planted_words": len(planted), "candidates": n_candidates,
            "test_coverage": float(holds.mean()), "evaluated": int(correct.sum()),
            "evaluated_with_planted": int(checked.sum()),
            "evaluated_coverage": float(checked.sum() / max(1, correct.sum())),
            "inert": {name: int(v.sum()) for name, v in inert.items()},
            "median_shift": {name: float(np.median(s[checked])) if checked.any() else None
                             for name, s in shifts.items()},
            "planted_in_pgt": sum(w in sets[c] for w, c in planted.items()),
            "planted_in_other_pgt": sum(w in sets[k] for w, c in planted.items() for k in sets if k != c),
            "accuracy": {name: {"copy": configs[name]["scores"].get("test_accuracy"),
                                "public": public_scores[name].get("test_accuracy")} for name in configs},
            **{k: int(v) for k, v in counts.items()},
            "seconds": {"train": round(t2 - t1, 1), "pgt": round(t3 - t2, 1),
                        "build": round(time.perf_counter() - t0, 1)},
        }
        params = {**resource.params, "cnn_sha256": configs["cnn"]["sha256"], "models": dict(resource.params["models"]),
                  "hidden": {"construction": "idc-planted-words", "version": self.version, "draw": draw.public(),
                             "config": asdict(self.config)}}
        write_pgt(out, pgt, pub.classes, splits["test"], correct, ground_truth(sets, test_docs, test_labels),
                  features, {**stats, "hidden": hidden}, params,
                  columns={f"inert_{name}": v for name, v in inert.items()})
        return {**hidden, "features_per_class": stats["features_per_class"]}


CONSTRUCTION = IdcConstruction()
