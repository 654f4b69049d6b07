"""TOKI — automated trustworthiness oracle (Nguyen Tung et al. 2025, FSE; SPECS §1) and its –K.I ablation, as
plain classes with `fit(context)` / `judge(batch)` (DESIGN §4 oracle contract). The library module of
the algorithm: the trust generator, the attack layer (`benchmark.attacks`) and the oracle folders
(`submissions/toki_*`, thin wrappers) all import it from here.

What `judge` receives
---------------------
`batch.inputs` is a list of *explained correct predictions*, one mapping each (the trust resource's
test columns minus the ground truth): ``tokens`` (list of words), ``prediction`` (class index),
``confidence`` (max class probability) and, optionally, the explanation the trust set was labelled
with, ``explanation_words`` / ``explanation_scores`` (word types with scores). `judge` returns
``{"verdicts": [bool, …], "scores": [float, …]}`` (True = trustworthy; score = IS_rel / (IS_rel + IS_unr)
in [0, 1], the verdict is score ≥ trust_ratio) or, with ``score="none"``, the verdicts alone;
`last_diagnostics` keeps IS_rel, IS_unr and the per-word r(w, c).

`fit(context)`: `context.train` holds the training split (a pyarrow Table, a dict of columns or a
list of row mappings) with ``tokens``, ``label`` and ``prediction``; `context.model` is the model
under test (a word-level `TextModel`); `context.seed` the run seed.

Pipeline 1 — keyword identification (SPECS §1.2, once per model under test)
    explain every correctly predicted training instance (all of them in batched explainer calls),
    keep its top-k positive words (lower-cased, lemmatised), pool per class (Eq. 2: s_w = mean score
    of w over the class's explanations containing it), cluster each pool per embedding model
    (agglomerative, `linkage`, cosine distance, cut at θ_dist; Eq. 3), mark clusters whose mean
    vector has cos ≥ θ_relate^m with the class-name vector as keywords (Eq. 4), then vote across
    models: K_c = {w : mean_m [w ∈ K_c^m] ≥ τ_vote} over the models that embed w (SPECS §1.5).
Pipeline 2 — labelling (SPECS §1.4, vectorised over a batch)
    r_m(w, c) = [max_{k ∈ K_c} cos_m(k, w) ≥ max_{f ∈ F_c} cos_m(f, w)] (Eq. 5; K_c = ∅ → 0;
    F_c = ∅ ≠ K_c → 1; a pool word's self-similarity is exactly 1, ties → keyword; OOV → model m
    abstains); r(w, c) = [mean_m r_m(w, c) ≥ τ_vote]; IS_rel = Σ s_i r(w_i, c), IS_unr =
    Σ s_i (1 − r(w_i, c)); trustworthy iff IS_rel ≥ trust_ratio · (IS_rel + IS_unr) (Eq. 6 for
    trust_ratio = 0.5). An explanation with no positive word has IS_rel = IS_unr = 0 → trustworthy
    (literal Eq. 6; score 1), counted in `counts["empty_explanations"]`.
    `importance="equivalent"` [I] reads Table 2's "importance type" column: on the trust sets labelled
    by explanation precision (CAMS, HateXplain, Dong's) every top-k word counts alike, so s_i := 1 in
    Eq. 6 (IS_rel = the number of related words); "different" (default) is Eq. 6 with the scores.

Every [I] choice of SPECS §1 is a named constructor parameter: `linkage`, `theta_dist`, `tau_vote`,
`trust_ratio`, `top_k`, `lemmatize`, `words_only`, `unknown_words`, `train_limit`, `class_names`,
`importance`, `score`.

The equations' pieces are in `benchmark.toki.keywords` (Eq. 2–6, the θ_relate search) and
`benchmark.toki.explanations` (top-k words, omission, the lemmatiser); the baselines and the controls (Naive,
the random oracle, the rationale ceiling) are in `benchmark.toki.baselines`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, cast

import numpy as np

from benchmark.contracts import Batch, Explainer, Judgement, OracleContext
from benchmark.toki.embeddings import WordEmbedding, load_ensemble
from benchmark.toki.explanations import DedupModel, Explanation, Lemmatizer, omission_scores, top_positive, type_scores
from benchmark.toki.keywords import (LINKAGES, decide, importance_sums, judgement, keyword_mask,
                                     relatedness, trust_score, word_pool)

if TYPE_CHECKING:  # the models import torch; TOKI reads its model through `predict` only
    from benchmark.models.base import Model

UNKNOWN_WORDS = ("unrelated", "ignore")
IMPORTANCE = ("different", "equivalent")  # Table 2's "importance type": Eq. 6 with the scores, or words alike
SCORES = ("ratio", "none")  # judge's score: IS_rel / (IS_rel + IS_unr), or verdicts only
EXPLAINERS = ("lime", "omission", "grad", "context", "given")
STOP_WORDS = frozenset(
    "a an and are as at be by for from in is it of on or the to with its this that".split())


# ------------------------------------------------------------------------------ helpers
def builtin_explainer(name: str, **parameters: Any) -> Any:
    """A registered explainer (e.g. "lime-text"), found through the submission registry and built with
    `parameters` — the library never imports the `submissions` package (DESIGN §3)."""
    from benchmark.submission import get_submission

    sub = get_submission(name)
    if sub.kind != "explainer":
        raise ValueError(f"{name} is an {sub.kind}, not an explainer")
    return sub.instantiate({k: v for k, v in parameters.items() if k in sub.parameters})


def columns(data: Any, names: Sequence[str]) -> dict[str, list]:
    """A table-like (pyarrow Table, dict of columns, list of mappings, pandas frame) → columns."""
    if hasattr(data, "column_names") and hasattr(data, "to_pydict"):
        d = data.select([n for n in names if n in data.column_names]).to_pydict()
    elif isinstance(data, Mapping):
        d = {n: list(data[n]) for n in names if n in data}
    elif hasattr(data, "to_dict") and hasattr(data, "columns"):
        d = {n: list(data[n]) for n in names if n in data.columns}
    else:
        rows = list(data)
        d = {n: [r[n] for r in rows] for n in names if rows and n in rows[0]}
    return d


def instance_fields(item: Any) -> dict[str, Any]:
    """One judged instance of `batch.inputs` as a dict (module docstring: tokens, prediction, confidence,
    explanation_words / explanation_scores); TypeError for anything but a mapping."""
    if isinstance(item, Mapping):
        return dict(item)
    raise TypeError(f"an oracle instance must be a mapping with tokens / prediction / confidence, "
                    f"got {type(item)}")


def class_name_words(name: str) -> list[str]:
    """'Sci/Tech' → ['sci', 'tech']; 'jobs and careers' → ['jobs', 'careers'] (content words, SPECS §1.2 [I])."""
    import re

    words = [w for w in re.split(r"[^a-z0-9]+", str(name).lower()) if w]
    content = [w for w in words if w not in STOP_WORDS]
    return content or words


def class_names_from_rows(train: Any) -> list[str] | None:
    """Class names from a training split's `class_name` column (the name of each row's predicted class, as the
    trust sets store it): index = prediction. None without that column; an error if a class index has two
    names. Classes never predicted in the split are unnamed → None (TOKI then needs class_names)."""
    if train is None:
        return None
    cols = columns(train, ("prediction", "class_name"))
    if "class_name" not in cols or "prediction" not in cols:
        return None
    found: dict[int, str] = {}
    for p, n in zip(cols["prediction"], cols["class_name"]):
        if n is None:
            continue
        if found.setdefault(int(p), str(n)) != str(n):
            raise ValueError(f"class {int(p)} has two names in the training split: {found[int(p)]!r} and {n!r}")
    if not found or sorted(found) != list(range(max(found) + 1)):
        return None
    return [found[c] for c in range(len(found))]


# ------------------------------------------------------------------------------ the oracle
@dataclass
class _ModelState:
    """Per-embedding-model state: θ_relate, class-name vectors, per-class pool vectors."""

    emb: WordEmbedding
    theta: float
    class_vecs: dict[int, np.ndarray | None] = field(default_factory=dict)
    pools: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # (pool idx known, vecs)


# the relatedness of words to class c for one embedding model: (r_m(w, c) (U,) bool, known (U,) bool)
PerModel = Callable[["_ModelState", list[str], int], tuple[np.ndarray, np.ndarray]]


class TokiBase:
    """The machinery TOKI and TOKI (–K.I) share: explanations, the embedding ensemble, voting, and `judge`
    (Eq. 5–6, pipeline 2; module docstring). Nguyen Tung et al. 2025, Automated Trustworthiness Oracle
    Generation for Machine Learning Text Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663.
    Subclasses give `fit` and the per-model relatedness r_m(w, c).

    Args:
        explainer (str, optional): the explainer of pipeline 1 (and of pipeline 2 with judge_explanations
            "own"): "lime" (the project's batched LIME, bag-of-words features), "omission", "grad"
            (input × gradient), "context" (the explainer of the oracle context) or "given" (no explainer:
            every judged instance carries its explanation) (SPECS §1.7). Default: "lime"
        top_k (int, optional): top positive words per explanation [P]. Default: 10
        tau_vote (float, optional): vote threshold across the embedding models [I]. Default: 0.5
        trust_ratio (float, optional): trustworthy iff IS_rel ≥ trust_ratio · (IS_rel + IS_unr); 0.5 is
            Eq. 6 [I]. Default: 0.5
        lemmatize (bool, optional): lower-case and WordNet-lemmatise the words (`Lemmatizer`) [I].
            Default: True
        unknown_words (str, optional): words no embedding model knows: "unrelated" (count as unrelated) or
            "ignore" (left out of both sums) [I]. Default: "unrelated"
        class_names (list of str, optional): the class names embedded as the classes; [] = the context's,
            the model's or the training split's `class_name` column. Default: []
        embeddings (list of str, optional): the embedding models; None = every model of the embeddings
            resource whose accuracy at its equal-error point is ≥ min_eer_accuracy. Default: None
        embeddings_resource (str, optional): the resource holding the models and their θ_relate.
            Default: "trust/embeddings"
        theta_relate (dict, optional): θ_relate per model name, overriding the resource's. Default: None
        lime_samples (int, optional): LIME's perturbed samples per explanation [P]. Default: 5000
        explain_batch (int, optional): documents per explainer call. Default: 16
        judge_explanations (str, optional): "given" = judge the instance's own explanation when present;
            "own" = explain it with `explainer`. Default: "given"
        models (list of WordEmbedding, optional): ready embedding models (with θ_relate) instead of the
            resource's. Default: None
        min_eer_accuracy (float, optional): the default ensemble's accuracy floor [I]. Default: 0.6
        words_only (bool, optional): punctuation tokens never enter an explanation [I]. Default: True
        precompute_vocabulary (bool, optional): embed the training vocabulary at fit time. Default: True
        dedup_predictions (bool, optional): predict each distinct LIME perturbation once (exact).
            Default: True
        importance (str, optional): Table 2's importance type: "different" = Eq. 6 with the scores;
            "equivalent" = every top-k word weighs 1 [I]. Default: "different"
        score (str, optional): "ratio" = `judge` also returns IS_rel / (IS_rel + IS_unr); "none" = verdicts
            only. Default: "ratio"
        theta_rule (str, optional): the unrelated pairs θ_relate was searched against, "wordnet" or
            "corpus"; None = the resource's rule. Default: None
    """

    uses_keywords = True

    def __init__(self, explainer: str = "lime", top_k: int = 10, tau_vote: float = 0.5, trust_ratio: float = 0.5,
                 lemmatize: bool = True, unknown_words: str = "unrelated", class_names: Sequence[str] = (),
                 embeddings: Sequence[str] | None = None, embeddings_resource: str = "trust/embeddings",
                 theta_relate: Mapping[str, float] | None = None, lime_samples: int = 5000,
                 explain_batch: int = 16, judge_explanations: str = "given",
                 models: Sequence[WordEmbedding] | None = None, min_eer_accuracy: float = 0.6,
                 words_only: bool = True, precompute_vocabulary: bool = True, dedup_predictions: bool = True,
                 importance: str = "different", score: str = "ratio", theta_rule: str | None = None,
                 **unused: Any) -> None:
        if unused:
            raise TypeError(f"unknown TOKI parameter(s): {sorted(unused)}")
        if importance not in IMPORTANCE:
            raise ValueError(f"importance must be one of {IMPORTANCE}, got {importance!r}")
        if score not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {score!r}")
        if explainer not in EXPLAINERS:
            raise ValueError(f"explainer must be one of {EXPLAINERS}, got {explainer!r}")
        if unknown_words not in UNKNOWN_WORDS:
            raise ValueError(f"unknown_words must be one of {UNKNOWN_WORDS}, got {unknown_words!r}")
        if judge_explanations not in ("given", "own"):
            raise ValueError("judge_explanations must be 'given' (use the instance's explanation) or 'own'")
        if not 0 <= tau_vote <= 1 or not 0 <= trust_ratio <= 1:
            raise ValueError("tau_vote and trust_ratio must lie in [0, 1]")
        self.explainer_name = explainer
        self.theta_rule = theta_rule or None  # None / "": the rule the embeddings resource was built with
        self.importance = importance
        self.score = score
        self.top_k = int(top_k)
        self.tau_vote = float(tau_vote)
        self.trust_ratio = float(trust_ratio)
        self.lemmatize = bool(lemmatize)
        self.unknown_words = unknown_words
        self.class_names = list(class_names) if class_names else None
        self.embedding_names = list(embeddings) if embeddings else None
        self.embeddings_resource = embeddings_resource
        self.theta_override = dict(theta_relate or {})
        self.lime_samples = int(lime_samples)
        self.explain_batch = max(1, int(explain_batch))
        self.judge_explanations = judge_explanations
        self._given_models = list(models) if models is not None else None
        self.min_eer_accuracy = float(min_eer_accuracy)
        self.words_only = bool(words_only)
        self.precompute_vocabulary = bool(precompute_vocabulary)
        self.dedup_predictions = bool(dedup_predictions)
        self.counts: dict[str, int] = defaultdict(int)
        self.timings: dict[str, float] = {}
        self.last_diagnostics: list[dict[str, Any]] = []
        self._norm = Lemmatizer(enabled=False)  # lower-casing until fit sets up the lemmatiser
        self.model: Model | None = None
        self.seed = 0

    def fit(self, context: OracleContext) -> None:
        """Set up for one model under test (subclasses: pipeline 1)."""
        raise NotImplementedError

    def _relatedness_model(self, st: _ModelState, words: list[str], c: int) -> tuple[np.ndarray, np.ndarray]:
        """(r_m(w, c) (U,) bool, known (U,) bool) of `words` for class c under one embedding model."""
        raise NotImplementedError

    # -- set-up ---------------------------------------------------------------------------
    def _setup(self, context: OracleContext | None) -> None:
        self.model = getattr(context, "model", None)
        self.seed = int(getattr(context, "seed", 0))
        self._context_explainer = getattr(context, "explainer", None)
        self._norm = Lemmatizer(self.lemmatize)
        if self._given_models is not None:
            models = self._given_models
        else:
            models = load_ensemble(self.embedding_names, resource=self.embeddings_resource,
                                   min_eer_accuracy=self.min_eer_accuracy, theta_rule=self.theta_rule)
        self.states: list[_ModelState] = []
        for m in models:
            theta = self.theta_override.get(m.name, m.theta_relate)
            if theta is None:
                raise ValueError(f"embedding {m.name!r} has no θ_relate: estimate it (xaibench generate trust "
                                 "--embeddings) or pass theta_relate={name: value}")
            self.states.append(_ModelState(m, float(theta)))
        if not self.states:
            raise ValueError("TOKI needs at least one embedding model")
        names = (self.class_names or getattr(context, "class_names", None) or getattr(self.model, "class_names", None)
                 or class_names_from_rows(getattr(context, "train", None)))
        if not names:
            raise ValueError("TOKI needs the class names to embed them: class_names=[...], context.class_names, "
                             "model.class_names, or a 'class_name' column beside 'prediction' in the training split")
        self.n_classes = len(names)
        self._class_words = [class_name_words(n) for n in names]
        for st in self.states:
            for c, words in enumerate(self._class_words):
                vecs, known = st.emb.vectors(words)
                if known.any():  # mean of the known content words' unit vectors, re-normalised
                    v = vecs[known].mean(0)
                    st.class_vecs[c] = v / (np.linalg.norm(v) or 1.0)
                else:  # this model abstains for class c (counted)
                    st.class_vecs[c] = None
                    self.counts[f"class_without_embedding:{st.emb.name}:{c}"] += 1
        missing = [c for c in range(self.n_classes) if all(s.class_vecs.get(c) is None for s in self.states)]
        if missing:
            raise ValueError(f"no embedding model embeds the class name(s) {[names[c] for c in missing]}: "
                             "give class_names that some model knows")

    def _precompute(self, train: Any) -> None:
        """Embed every (normalised) word type of the training split once, at fit time, so that labelling
        (pipeline 2) mostly looks vectors up (the embedding models memoise)."""
        if not self.precompute_vocabulary or train is None:
            return
        from benchmark.tokenize import is_word

        t0 = time.perf_counter()
        docs = columns(train, ("tokens",)).get("tokens", [])
        vocab = sorted({self._norm(w) for d in docs for w in d if not self.words_only or is_word(str(w))})
        for st in self.states:
            st.emb.vectors(vocab)
        self.counts["vocabulary_precomputed"] = len(vocab)
        self.timings["fit_vocabulary_s"] = time.perf_counter() - t0

    def _explainer(self) -> tuple[Explainer | None, str]:
        if self.explainer_name == "context":
            if self._context_explainer is None:
                raise ValueError("explainer='context' but the oracle context carries no explainer")
            return self._context_explainer, "first"
        if self.explainer_name == "lime":
            return builtin_explainer("lime-text", num_samples=self.lime_samples, features="type"), "first"
        if self.explainer_name == "grad":
            return builtin_explainer("input-x-gradient"), "sum"
        return None, "first"  # omission: own batched implementation

    def explain(self, docs: Sequence[Sequence[str]], targets: Sequence[int], ids: Sequence[str]) -> list[Explanation]:
        """Top-k positive explanations of `docs` (explained class = `targets`), batched."""
        out: list[Explanation] = []
        if self.explainer_name == "given":
            raise ValueError("explainer='given' cannot explain new documents (pipeline 1 needs an explainer)")
        if self.model is None:
            raise ValueError("TOKI explains with the model under test: fit(context) with context.model first")
        explainer, agg = self._explainer()
        # LIME's bag-of-words samples repeat: predict each distinct perturbed document once (exact)
        dedup = DedupModel(self.model) if self.dedup_predictions and self.explainer_name in ("lime", "context") \
            else None
        # a DedupModel stands in for the model (every attribute but predict / target is the model's)
        model = cast("Model", dedup) if dedup is not None else self.model
        for s in range(0, len(docs), self.explain_batch):
            sub = [list(d) for d in docs[s : s + self.explain_batch]]
            tg = list(targets[s : s + self.explain_batch])
            if explainer is None:
                pairs = omission_scores(self.model, sub, tg)
            else:
                batch = Batch(ids=list(ids[s : s + self.explain_batch]), inputs=sub, seed=self.seed)
                scores = explainer.explain(model, batch)
                pairs = [type_scores(d, sc, agg) for d, sc in zip(sub, scores)]
            out += [top_positive(w, sc, self.top_k, self._norm, self.words_only) for w, sc in pairs]
        if dedup is not None:
            self.counts["explain_documents"] += dedup.documents
            self.counts["explain_distinct_documents"] += dedup.distinct
        return out

    def _vectors(self, st: _ModelState, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        return st.emb.vectors(list(words))

    def _instance_explanations(self, batch: Batch) -> tuple[list[Explanation], list[int]]:
        if not hasattr(self, "states"):
            raise RuntimeError("judge() before fit(): call fit(context) once per model under test first")
        items = [instance_fields(x) for x in batch.inputs]
        missing = [i for i, x in enumerate(items) if "prediction" not in x or ("tokens" not in x and
                                                                               "explanation_words" not in x)]
        if missing:
            raise ValueError(f"instance(s) {missing[:5]} lack 'prediction' or both 'tokens' and 'explanation_words'")
        preds = [int(x["prediction"]) for x in items]
        need_own = self.judge_explanations == "own" or any("explanation_words" not in x for x in items)
        if need_own:
            docs = [list(x["tokens"]) for x in items]
            exps = self.explain(docs, preds, list(batch.ids))
        else:
            exps = [top_positive(x["explanation_words"], x["explanation_scores"], self.top_k, self._norm,
                                 self.words_only) for x in items]
        return exps, preds

    def _vote_words(self, words: list[str], c: int, per_model: PerModel) -> tuple[np.ndarray, np.ndarray]:
        """r(w, c) = [mean over the models that know w of r_m(w, c) ≥ τ_vote]; (r, known_by_any)."""
        votes = np.zeros(len(words))
        voters = np.zeros(len(words))
        for st in self.states:
            r, known = per_model(st, words, c)
            votes += np.where(known, r, 0)
            voters += known
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(voters > 0, votes / np.maximum(voters, 1) >= self.tau_vote - 1e-12, False)
        return r, voters > 0

    def judge(self, batch: Batch) -> Judgement:
        """Eq. 5–6 per instance: ``{"verdicts": [...], "scores": [IS_rel / (IS_rel + IS_unr), ...]}``
        (verdicts only with score="none")."""
        t0 = time.perf_counter()
        exps, preds = self._instance_explanations(batch)
        t1 = time.perf_counter()
        by_class: dict[int, set[str]] = defaultdict(set)
        for e, c in zip(exps, preds):
            by_class[c].update(e.words)
        rel: dict[tuple[int, str], tuple[bool, bool]] = {}
        for c, ws in by_class.items():
            words = sorted(ws)
            r, known = self._vote_words(words, c, self._relatedness_model)
            for w, ri, ki in zip(words, r, known):
                rel[(c, w)] = (bool(ri), bool(ki))
        out: list[bool] = []
        ratios: list[float] = []
        diags: list[dict[str, Any]] = []
        for e, c in zip(exps, preds):
            flags = [rel[(c, w)] for w in e.words]
            keep = np.array([k or self.unknown_words == "unrelated" for _, k in flags], dtype=bool)
            r = np.array([f[0] for f in flags], dtype=bool)
            self.counts["unknown_words"] += int(sum(not k for _, k in flags))
            weights = e.scores if self.importance == "different" else np.ones(len(e))
            is_rel, is_unr = importance_sums(weights[keep] if len(e) else [], r[keep] if len(e) else [])
            if len(e) == 0:
                self.counts["empty_explanations"] += 1
            out.append(decide(is_rel, is_unr, self.trust_ratio))
            ratios.append(trust_score(is_rel, is_unr))
            diags.append({"is_rel": is_rel, "is_unr": is_unr, "words": e.words, "scores": e.scores.tolist(),
                          "related": r.tolist(), "known": [k for _, k in flags]})
        self.counts["judged"] += len(out)
        self.last_diagnostics = diags
        self.timings["judge_explain_s"] = self.timings.get("judge_explain_s", 0.0) + t1 - t0
        self.timings["judge_label_s"] = self.timings.get("judge_label_s", 0.0) + time.perf_counter() - t1
        return judgement(out, ratios if self.score == "ratio" else None)


class Toki(TokiBase):
    """TOKI (SPECS §1.2–1.5): keyword identification on the training split, then Eq. 5–6 labelling.

    Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text
    Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663. `fit` runs pipeline 1 (keywords K_c per
    class from the explanations of the correct training predictions), `judge` pipeline 2 (a prediction is
    trustworthy iff its top explanation words relate to its class).

    Args:
        theta_dist (float, optional): θ_dist, the cosine-distance cut of the dendrogram [P]. Default: 0.3
        linkage (str, optional): agglomerative linkage: "average", "complete", "single" or "weighted" [I].
            Default: "average"
        train_limit (int, optional): -1 or None = every correct training prediction; else a seeded sample
            of that size. Default: -1
        train_explanations (str, optional): "given" = pipeline 1 reads the training split's LIME
            explanations when it has them and the explainer is LIME (the trust sets store them, same
            settings); "own" = explain the training predictions in fit. Default: "given"

    Every other parameter, with its default, is `TokiBase`'s (see its docstring).
    """

    def __init__(self, theta_dist: float = 0.3, linkage: str = "average", train_limit: int | None = -1,
                 train_explanations: str = "given", **kw: Any) -> None:
        super().__init__(**kw)
        if train_explanations not in ("given", "own"):
            raise ValueError("train_explanations must be 'given' (the training split's explanations when it has "
                             "them) or 'own' (explain the training predictions in fit)")
        self.train_explanations = train_explanations
        if linkage not in LINKAGES:
            raise ValueError(f"linkage must be one of {LINKAGES}, got {linkage!r}")
        if not 0 <= theta_dist <= 2:
            raise ValueError("theta_dist is a cosine distance in [0, 2]")
        self.theta_dist = float(theta_dist)
        self.linkage = linkage
        # None or a negative value: every correct training prediction
        self.train_limit = None if train_limit is None or int(train_limit) < 0 else int(train_limit)

    # -- pipeline 1 ------------------------------------------------------------------------
    def fit(self, context: OracleContext) -> None:
        """Pipeline 1 on `context.train` for the model under test `context.model` (module docstring)."""
        self._setup(context)
        self._precompute(getattr(context, "train", None))
        t0 = time.perf_counter()
        cols = columns(context.train, ("id", "tokens", "label", "prediction", "explanation_words",
                                       "explanation_scores"))
        docs, labels = cols["tokens"], [int(y) for y in cols["label"]]
        if "prediction" in cols:
            preds = [int(p) for p in cols["prediction"]]
        elif self.model is None:
            raise ValueError("the training split has no 'prediction' column and the context no model to predict it")
        else:
            preds = np.asarray(self.model.predict([list(d) for d in docs])).argmax(1).tolist()
        ids = cols.get("id") or [f"train-{i}" for i in range(len(docs))]
        idx = [i for i in range(len(docs)) if preds[i] == labels[i] and len(docs[i])]
        self.counts["train_incorrect"] = sum(p != y for p, y in zip(preds, labels))
        given: list = cols.get("explanation_words") or []
        use_given = (self.train_explanations == "given" and self.explainer_name in ("lime", "context")
                     and bool(given) and any(given[i] for i in idx))
        if use_given:  # the trust set's own LIME explanations of the training predictions (same settings)
            self.counts["train_without_explanation"] = sum(not given[i] for i in idx)
            idx = [i for i in idx if given[i]]
        if self.train_limit is not None and len(idx) > int(self.train_limit):
            rng = np.random.default_rng(self.seed)
            idx = sorted(rng.choice(idx, int(self.train_limit), replace=False).tolist())
        self.counts["train_explained"] = len(idx)
        if use_given:
            self.counts["train_explanations_given"] = len(idx)
            exps = [top_positive(given[i], cols["explanation_scores"][i], self.top_k, self._norm, self.words_only)
                    for i in idx]
        else:
            exps = self.explain([docs[i] for i in idx], [preds[i] for i in idx], [str(ids[i]) for i in idx])
        self.fit_explanations = dict(zip((str(ids[i]) for i in idx), exps))  # per training id (diagnostics)
        self.fit_classes = [preds[i] for i in idx]  # aligned with fit_explanations (re-pool: `fit_pools`)
        t1 = time.perf_counter()
        self.fit_pools(exps, [preds[i] for i in idx])
        self.timings.update({"fit_explain_s": t1 - t0, "fit_keywords_s": time.perf_counter() - t1})

    def fit_explained(self, explanations: Sequence[tuple[Sequence[str], Sequence[float]]], classes: Sequence[int],
                      context: OracleContext | None = None) -> None:
        """Pipeline 1 from ready explanations (word/score pairs per correct training prediction and its
        class) instead of running the explainer — the same steps as `fit` after explaining."""
        self._setup(context)
        exps = [top_positive(w, s, self.top_k, self._norm, self.words_only) for w, s in explanations]
        self.counts["train_explained"] = len(exps)
        self.fit_pools(exps, classes)

    def fit_pools(self, explanations: Sequence[Explanation], classes: Sequence[int]) -> None:
        """Pool (Eq. 2), cluster and select keywords per model (Eq. 3–4), vote (SPECS §1.5)."""
        pools = word_pool(explanations, classes)
        self.pool_words: dict[int, list[str]] = {}
        self.pool_scores: dict[int, np.ndarray] = {}
        self.keywords: dict[int, np.ndarray] = {}
        self._index: dict[int, dict[str, int]] = {}
        for c in range(self.n_classes):
            words = sorted(pools.get(c, {}))
            self.pool_words[c] = words
            self.pool_scores[c] = np.array([pools[c][w] for w in words]) if words else np.zeros(0)
            votes = np.zeros(len(words))
            voters = np.zeros(len(words))
            for st in self.states:
                vecs, known = self._vectors(st, words)
                kidx = np.flatnonzero(known)
                st.pools[c] = (kidx, vecs[kidx])
                cv = st.class_vecs.get(c)
                if cv is None or len(kidx) == 0:
                    continue  # this model abstains for class c (counted in _setup)
                mask = keyword_mask(vecs[kidx], cv, self.theta_dist, st.theta, self.linkage)
                votes[kidx] += mask
                voters[kidx] += 1
            self.counts["pool_words_unknown"] += int((voters == 0).sum())
            self.keywords[c] = (voters > 0) & (votes / np.maximum(voters, 1) >= self.tau_vote - 1e-12)
            self._index[c] = {w: i for i, w in enumerate(words)}

    def keyword_sets(self) -> dict[int, tuple[list[str], list[str]]]:
        """(K_c, F_c) word lists per class."""
        return {c: ([w for w, k in zip(ws, self.keywords[c]) if k],
                    [w for w, k in zip(ws, self.keywords[c]) if not k])
                for c, ws in self.pool_words.items()}

    # -- pipeline 2 ------------------------------------------------------------------------
    def _relatedness_model(self, st: _ModelState, words: list[str], c: int) -> tuple[np.ndarray, np.ndarray]:
        vecs, known = self._vectors(st, words)
        kidx, pvecs = st.pools.get(c, (np.zeros(0, dtype=np.int64), np.zeros((0, 1))))
        is_kw = self.keywords.get(c, np.zeros(0, dtype=bool))[kidx] if len(kidx) else np.zeros(0, dtype=bool)
        r = np.zeros(len(words), dtype=bool)
        rows = np.flatnonzero(known)
        if len(rows) == 0:
            return r, known
        if len(kidx) == 0:
            return r, known  # K_c = F_c = ∅ for this model: K = ∅ → 0
        pos = {int(p): j for j, p in enumerate(kidx)}
        index = self._index.get(c, {})
        self_idx = np.array([pos.get(index.get(words[i], -1), -1) for i in rows])
        r[rows] = relatedness(vecs[rows], pvecs, is_kw, self_idx)
        return r, known


class TokiKI(TokiBase):
    """TOKI (–K.I) (SPECS §1.6): no keyword identification; r_m(w, c) = [cos_m(w, emb(c)) ≥ θ_relate^m],
    voted across models as in TOKI; fit only sets up the embeddings and class-name vectors.

    Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text
    Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663 (its −K.I ablation).

    Every parameter, with its default, is `TokiBase`'s (see its docstring).
    """

    uses_keywords = False

    def fit(self, context: OracleContext) -> None:
        """Set up the embedding models and class-name vectors (and embed the training vocabulary)."""
        self._setup(context)
        self._precompute(getattr(context, "train", None))

    def _relatedness_model(self, st: _ModelState, words: list[str], c: int) -> tuple[np.ndarray, np.ndarray]:
        vecs, known = self._vectors(st, words)
        cv = st.class_vecs.get(c)
        if cv is None:
            return np.zeros(len(words), dtype=bool), np.zeros(len(words), dtype=bool)  # abstains
        return (vecs @ cv >= st.theta) & known, known
