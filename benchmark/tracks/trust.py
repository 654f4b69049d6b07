"""The trust track (SPECS §1, TOKI): oracles judge explained predictions trustworthy or not.

Resources `trust/<dataset>-<model>` (`generators/trust`) hold, per correctly predicted test instance,
the tokens, the prediction and its confidence, and the explanation the trust label was derived from
(word / score pairs); the label `trust` (explanation precision against people's rationale words
≥ 0.5, SPECS §1.8) and the rationale itself are ground truth and stay in the harness.

An oracle submission (`kind = "oracle"`) runs in the sandboxed worker like an explainer:
* `fit(context)` once per worker — `context.train` is the resource's training split as columns
  (`id`, `tokens`, `label`, `prediction`, `confidence`, `text`, and `explanation_words` /
  `explanation_scores`: the LIME explanation of each correct training prediction, empty where none was
  computed), `context.model` the model under test
  (loaded read-only from the resource's model folder), `context.explainer` the built-in explainer
  that produced the explanations (`lime-text` with the resource's settings), `context.class_names`
  one name per class (the resource's `class_words`: what an embedding can read). A submission whose
  role is "reference" (a ceiling, never ranked) also gets the training rationales
  (`context.train["rationale"]`, one word list per training post); a method or a control never does;
* `judge(batch)` — `batch.inputs` is one mapping per instance with `tokens`, `text`, `prediction`,
  `class_name`, `confidence`, `explanation_words`, `explanation_scores` — returns one bool each
  (True = trustworthy), or `{"verdicts": [...], "scores": [...]}` with a score in [0, 1] beside each
  verdict (`benchmark.contracts.Oracle`). A wrong count or a non-bool verdict is a recorded failure of
  the instance; a bad score (outside [0, 1], NaN, missing, a list of the wrong length) is a recorded
  score failure (`extra.score_failures`, with the reasons) — the verdict still counts.

Read-only assets: the word-embedding ensemble (`trust/embeddings`, gensim vectors and θ_relate per
model) and the offline WordNet are mounted in the worker; `XAIBENCH_ASSET_TRUST_EMBEDDINGS` and
`XAIBENCH_ASSET_NLTK_DATA` say where.

Metrics (SPECS §1.10 + issue #24), trustworthy = positive, pooled over the judged predictions:
**AUC (primary)** of the oracle's scores (a verdict-only oracle's verdict is a two-level score, so its
AUC equals its balanced accuracy), balanced accuracy, then the paper's G-mean, Acc, Pre, Sen, F1, Spec.
AUC is primary because no oracle can raise it by choosing how often it says "trustworthy": an oracle
blind to trust scores ½ at every rate, while its G-mean is √(q(1 − q)) at rate q and peaks at q = ½
(docs/trust.md). Every summary's CI is a percentile bootstrap over predictions (`estimate` under
multiplicity weights). A metric whose denominator is empty is undefined: no value, the reason in
`extra.undefined`. `extra` also keeps the pooled table (`confusion`), the trustworthy rate of the
verdicts and every metric's chance value at that rate (`chance_at_rate`: what a random oracle at the
same rate expects), and the ranking gate (`rank_gate`: AUC above ½ and above the controls').
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

import benchmark.metrics.trust as trust_metrics
from benchmark.bootstrap import N_BOOT, draw_weights
from benchmark.contracts import SCORE_NONE, SCORE_REASONS
from benchmark.errors import ResourceError
from benchmark.models.base import TextModel, read_model_config
from benchmark.models.spec import ModelSpec
from benchmark.store.results import MetricSummary
from benchmark.tracks.base import Instances, Track, TrackMetadata, register_track
from benchmark.references import TOKI

DATASETS = ("hatexplain", "cams", "movies")
# model under test → its `benchmark.models.spec` loader
MODEL_LOADERS = {"cnn": "word", "cnn-sup": "word", "minilm": "minilm"}
IMPORTED = "imported"  # a trust set labelled by people, imported without its model (generators/trust/importer.py)
EMBEDDINGS = "trust/embeddings"  # the asset TOKI reads (word vectors + θ_relate per model)
INPUT_COLUMNS = ("id", "tokens", "text", "prediction", "confidence", "explanation_words", "explanation_scores")
TRAIN_COLUMNS = ("id", "tokens", "text", "label", "prediction", "confidence", "explanation_words",
                 "explanation_scores")  # explanations: LIME of the correct training predictions (TOKI's pipeline 1)
REFERENCE_COLUMNS = ("rationale",)  # training ground truth handed to a role = "reference" submission only
OUTPUT_SHAPE = (2,)  # [verdict (1 = trustworthy), score in [0, 1] or a score-failure code]


class TrustTrack(Track):
    """TOKI trust sets: oracles judge explained predictions trustworthy or not (pooled counts, AUC)."""

    metadata = TrackMetadata(
        name="trust",
        description=("TOKI trust sets: oracles judge explained predictions trustworthy or not; AUC (rate-free, "
                     "primary), balanced accuracy, and the paper's Acc, Pre, Sen, F1, Spec, G-mean (Nguyen Tung et "
                     "al. 2025)"),
        reference=TOKI,
        resource="trust",
        main_score="trust-auc",
        metrics=tuple(f"trust-{m}" for m in ("auc", "bacc", "gmean", "acc", "pre", "sen", "f1", "spec")),
        models=(*MODEL_LOADERS, IMPORTED),
        modality="text",
        default_split="test",
        submission_kind="oracle",
        rank_gate={"metric": "trust-auc", "min": 0.5, "beat_controls": True},
    )

    # The randomisation test (issue #45) is not this board's rule. An oracle judges *explained predictions*: the
    # prediction, its confidence and its LIME explanation come with each input, made on the trained model, and the
    # ground truth (trustworthy = that explanation agrees with people's rationale) is a property of those very
    # explanations. An oracle depends on the model through them, so re-drawing the weights changes the inputs and
    # the labels, not just the model: on a randomised model the oracle would judge another trust set. What the
    # rule guards against — a judgement that ignores the model's explanation — the trust boards' blind controls
    # already measure: text-length-oracle reads only the text, explanation-size-oracle only how long the
    # explanation is, random-oracle nothing, and the AUC gate ranks no method below them (docs/trust.md).
    randomisation_test = False
    no_hidden_copy = "its labels come from people's rationales, not from a model a secret could redraw"
    randomisation_note = ("an oracle's inputs are explained predictions made on the trained model, and its ground "
                          "truth is a property of those explanations, so a randomised model would change the task, "
                          "not only the model; the blind controls (text-length-oracle, explanation-size-oracle) "
                          "measure what a judgement that ignores the explanation scores")

    def configs(self) -> list[str]:
        """<dataset>-<model>: each trust set with each model under test."""
        return [f"{d}-{m}" for d in DATASETS for m in MODEL_LOADERS]

    @staticmethod
    def _check(resource) -> None:
        if resource.config == "embeddings" or "classes" not in resource.params:
            raise ResourceError(f"{resource.name} is not a trust set (it holds no explained predictions); "
                                f"evaluate on trust/<dataset>-<model>, e.g. trust/hatexplain-cnn")

    @staticmethod
    def class_names(resource) -> list[str]:
        """One readable name per class (`class_words`, else the label names)."""
        names = resource.params.get("class_words") or resource.params.get("classes") or []
        return [str(n) for n in names]

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """The split's explained predictions (inputs) with their trustworthy label (truths); train is refused."""
        self._check(resource)
        if split == "train":
            raise ResourceError(f"{resource.name}: the train split is what oracles fit on; evaluate on 'test'")
        table = resource.table(split, columns=[*INPUT_COLUMNS, "trust"]).to_pydict()
        names = self.class_names(resource)
        ids, inputs, truths = [], [], []
        skipped = {"no_label": 0}
        for n, i in enumerate(table["id"]):
            if table["trust"][n] is None:  # a row without ground truth cannot be scored
                skipped["no_label"] += 1
                continue
            pred = int(table["prediction"][n])
            if not 0 <= pred < len(names):
                raise ResourceError(f"{resource.name}: instance {i} predicts class {pred}, but the resource names "
                                    f"{len(names)} classes; regenerate it")
            words, scores = list(table["explanation_words"][n] or []), list(table["explanation_scores"][n] or [])
            if len(words) != len(scores):
                raise ResourceError(f"{resource.name}: instance {i} has {len(words)} explanation words but "
                                    f"{len(scores)} scores; regenerate it")
            ids.append(str(i))
            inputs.append({"tokens": [str(t) for t in table["tokens"][n]], "text": str(table["text"][n] or ""),
                           "prediction": pred, "class_name": names[pred],
                           "confidence": float(table["confidence"][n]),
                           "explanation_words": [str(w) for w in words],
                           "explanation_scores": [float(s) for s in scores]})
            truths.append(bool(table["trust"][n]))
            if limit is not None and len(ids) >= limit:
                break
        return Instances(ids=ids, inputs=inputs, truths={"trust": np.asarray(truths, dtype=bool),
                                                         "class": np.array([x["prediction"] for x in inputs],
                                                                           dtype=np.int64)},
                         output_shapes=[OUTPUT_SHAPE] * len(ids), excluded={k: v for k, v in skipped.items() if v})

    def build_model(self, resource, name: str, instances: Instances | None, **options: Any):
        """The model under test the set was built with (loaded read-only), or none for imported sets."""
        self._check(resource)
        built = str(resource.params.get("model", "cnn"))
        if name != built:
            raise ResourceError(f"{resource.name} was built with the model under test '{built}'; "
                                f"use --model {built}")
        if built == IMPORTED:  # no model: oracles that only read the explained predictions can still run
            names = self.class_names(resource)
            served = NoModel(resource.name, len(names))
            spec = ModelSpec(name=name, modality="text", white_box=False, served=served)
            return spec, {"name": name, "hash": IMPORTED, "task": served.task, "architecture": "none",
                          "scores": {}}
        if built not in MODEL_LOADERS or "model_dir" not in resource.params:
            raise ResourceError(f"{resource.name}: unknown model under test '{built}' "
                                f"(known: {', '.join(MODEL_LOADERS)})")
        directory = resource.root / str(resource.params["model_dir"])
        rebuild = f"xaibench generate trust --dataset {resource.params.get('dataset', '<dataset>')} --overwrite"
        cfg = read_model_config(directory, rebuild)
        spec = ModelSpec(name=name, modality="text", white_box=True, loader=MODEL_LOADERS[built],
                         directory=directory, options={"rebuild": rebuild})
        if built == "minilm":  # the tokenizer and the pieces per word change its outputs too
            from benchmark.models.transformer import model_hash

            digest = model_hash(cfg)
        else:
            digest = cfg["sha256"]
        info = {"name": name, "hash": digest[:16], "task": cfg.get("task", "binary"),
                "architecture": cfg.get("architecture", built), "scores": cfg.get("scores", {})}
        note = self.scope_note(resource)
        if note:  # shown under the board (leaderboard: the model line)
            info["note"] = note
        return spec, info

    @staticmethod
    def scope_note(resource) -> str:
        """Which predicted classes the set judges, from its card's stats (issue #38): "" when every class is
        judged or the card predates the count. HateXplain: "judges the toxic class only …"."""
        stats = getattr(resource, "stats", None) or {}
        if not isinstance(stats, dict):
            return ""
        judged, missing = stats.get("judged_classes"), stats.get("classes_not_judged")
        if not judged or not missing or missing == "none":
            return ""
        return (f"trust set judges {judged}; not judged: {missing} (no rationale, or no correct prediction "
                "sampled) — the board says nothing about those classes")

    def assets(self, resource) -> dict[str, Path]:
        """Read-only folders every oracle worker gets, when they have been built: the embedding
        ensemble (`trust/embeddings`) and the offline WordNet for NLTK (`<data home>/nltk_data`,
        `generators/lexicon.py`) — no ground truth in either."""
        from benchmark.resources import data_home, resource_root

        family, config = EMBEDDINGS.split("/")
        found = {"trust-embeddings": resource_root(family) / "model" / config, "nltk-data": data_home() / "nltk_data"}
        return {name: folder for name, folder in found.items() if folder.is_dir()}

    def fit_context(self, resource, role: str = "method") -> dict[str, Any]:
        """The `fit` message: the training split's columns, the class names, the explainer that
        produced the explanations (built-in, with the resource's settings). For a submission whose
        `role` is "reference" only, also the training rationales (`train["rationale"]`, one list of
        word types per post; empty where people marked none) — never the test split's ground truth."""
        self._check(resource)
        wanted = list(TRAIN_COLUMNS) + (list(REFERENCE_COLUMNS) if role == "reference" else [])
        cols = resource.table("train", columns=wanted).to_pydict()
        train: dict[str, list[Any]] = {
            "id": [str(i) for i in cols["id"]], "tokens": [[str(t) for t in d] for d in cols["tokens"]],
            "text": [str(t or "") for t in cols["text"]],
            "label": [int(v) for v in cols["label"]], "prediction": [int(v) for v in cols["prediction"]],
            "confidence": [float(v) for v in cols["confidence"]],
            "explanation_words": [[str(w) for w in (e or [])] for e in cols["explanation_words"]],
            "explanation_scores": [[float(x) for x in (e or [])] for e in cols["explanation_scores"]]}
        if role == "reference":
            train["rationale"] = [[str(w) for w in (g or [])] for g in cols["rationale"]]
            if not any(train["rationale"]):
                raise ResourceError(f"{resource.name} stores no training rationales (built before they were kept): "
                                    f"rebuild it (xaibench generate trust --dataset "
                                    f"{resource.params.get('dataset', '<dataset>')} --overwrite)")
        p = resource.params
        explainer = {"name": "lime-text", "parameters": {"num_samples": int(p.get("num_samples", 5000)),
                                                          "features": "type"}}
        return {"train": train, "class_names": self.class_names(resource), "explainer": explainer}

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        """Per instance: the one-row confusion counts and the table metrics on them, the verdict, the
        oracle's score (NaN when none counts) and its code (0 = a valid score; `SCORE_REASONS`; −1 = the
        oracle gave verdicts only). A one-element output (a cache written before scores) is a verdict."""
        out = [np.asarray(e, dtype=np.float64).reshape(-1) for e in explanations]
        judged = np.array([float(e[0]) >= 0.5 for e in out], dtype=bool)
        raw = np.array([float(e[1]) if e.size > 1 else SCORE_NONE for e in out], dtype=np.float64)
        valid = raw >= 0
        counts = trust_metrics.instance_counts(judged, truths["trust"][list(positions)])
        res = {m.name: m(counts, None) for m in self.metric_objects()}
        res.update(counts=counts, verdict=judged.astype(np.float64), oracle_score=np.where(valid, raw, np.nan),
                   score_code=np.where(valid, 0.0, raw))
        if "class" in truths:  # the predicted class of each judged prediction (per-class rows, `summary_extra`)
            res["pred_class"] = np.asarray(truths["class"], dtype=np.float64)[list(positions)]
        return res

    @staticmethod
    def _ranking(scores: dict[str, np.ndarray], ok: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
        """(instances AUC is computed over, their ranking scores, truth, source): the oracle's scores
        where it gave any, else its verdicts (a verdict-only oracle). A prediction whose score failed (bad,
        missing, a list of the wrong length: a recorded score failure) stays in AUC at its *worst place*
        (issue #38): a trustworthy one below every valid score (−1), an untrustworthy one above (2), so a
        failure can only lower the AUC, never raise it by leaving hard predictions out."""
        ok = np.asarray(ok, dtype=bool)
        counts = np.asarray(scores.get("counts", np.zeros((len(ok), 4))))
        truth = np.nan_to_num(counts[:, 0] + counts[:, 2]) > 0
        code = np.asarray(scores.get("score_code", np.full(len(ok), SCORE_NONE)), dtype=np.float64)
        code = np.where(np.isnan(code), SCORE_NONE, code)
        if (code[ok] == SCORE_NONE).all():
            verdict = np.asarray(scores.get("verdict", np.nan_to_num(counts[:, 0] + counts[:, 1])), dtype=np.float64)
            return ok, np.nan_to_num(verdict), truth, "verdict"
        valid = code == 0
        raw = np.nan_to_num(np.asarray(scores["oracle_score"], dtype=np.float64))
        return ok, np.where(valid, raw, np.where(truth, -1.0, 2.0)), truth, "score"

    def estimate(self, scores: dict[str, np.ndarray], ok: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric under instance weights (B, n) (bootstrap multiplicities; ones = the Result's
        value): the table metrics of the weighted pooled counts, AUC weighted (`weighted_auc`) over the
        instances with a valid score (or the verdicts of a verdict-only oracle). (B,) each, NaN where
        undefined."""
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim == 1:
            w = w[None]
        ok = np.asarray(ok, dtype=bool)
        counts = np.nan_to_num(np.asarray(scores.get("counts", np.zeros((len(ok), 4))), dtype=np.float64))
        pooled = trust_metrics.trust_values((w * ok) @ counts)
        use, rank, truth, _ = self._ranking(scores, ok)
        auc = trust_metrics.weighted_auc(rank[use], truth[use], w[:, use])
        out = {}
        for m in self.metric_objects():
            key = m.name.removeprefix("trust-")
            out[m.name] = auc if key == "auc" else pooled[key]
        return out

    def summarise(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, MetricSummary]:
        """Each metric on the pooled judged predictions (`estimate` with unit weights), with a
        percentile-bootstrap 95 % CI over predictions (std = bootstrap standard error; one (N_BOOT, n)
        draw of multiplicities shared by every metric). An undefined metric has no value (mean None);
        A failed score counts in AUC at its worst place (`_ranking`; `extra.score_failures` lists them)."""
        ok = np.asarray(ok, dtype=bool)
        n = int(ok.sum())
        use, _, _, _ = self._ranking(scores, ok)
        point = self.estimate(scores, ok, np.ones((1, len(ok))))
        boot = self.estimate(scores, ok, draw_weights(np.arange(len(ok)), keep=ok, n_boot=N_BOOT)) if n > 1 else None
        out = {}
        for m in self.metric_objects():
            n_m, excl = (int(use.sum()), n - int(use.sum())) if m.name == "trust-auc" else (n, 0)
            value = float(point[m.name][0])
            if not np.isfinite(value):
                out[m.name] = MetricSummary(None, None, None, n_m, n_m + excl, m.direction, m.label)  # none counts
                continue
            b = boot[m.name][np.isfinite(boot[m.name])] if boot is not None else np.array([])
            if b.size < 2:
                out[m.name] = MetricSummary(value, 0.0, (value, value), n_m, excl, m.direction, m.label)
                continue
            lo, hi = np.percentile(b, [2.5, 97.5])
            out[m.name] = MetricSummary(value, float(b.std(ddof=1)), (float(lo), float(hi)), n_m, excl,
                                        m.direction, m.label)
        return out

    def summary_extra(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """Beside the summaries: the pooled confusion table over the judged predictions (`confusion`),
        why each undefined metric is undefined (`undefined`), what AUC ranked by (`auc_from`: "score" or
        "verdict"), the score failures with their reasons (`score_failures`: count per reason and the
        first instances' positions), the verdicts' trustworthy rate and every metric's chance value at
        that rate (`chance_at_rate`, `benchmark.metrics.trust.chance_at_rate`), and the ranking gate
        (`rank_gate`: AUC must exceed ½ and the controls')."""
        ok = np.asarray(ok, dtype=bool)
        counts = np.nan_to_num(np.asarray(scores.get("counts", np.zeros((len(ok), 4)))))[ok].astype(np.int64)
        pooled = trust_metrics.trust_scores(counts.sum(0))
        use, _, truth, source = self._ranking(scores, ok)
        why = {f"trust-{k}": v for k, v in pooled.undefined.items()}
        if ok.any() and len(set(truth[use].tolist())) < 2:
            why["trust-auc"] = trust_metrics._REASONS["auc"]
        extra: dict[str, Any] = {"confusion": pooled.counts, "auc_from": source}
        if why:
            extra["undefined"] = why
        if source == "score":
            code = np.asarray(scores["score_code"], dtype=np.float64)
            bad = np.flatnonzero(ok & (code != 0))
            if len(bad):
                reasons: dict[str, int] = {}
                for c in code[bad]:
                    r = SCORE_REASONS.get(float(c), "a verdict without a score (the judge scored other predictions)")
                    reasons[r] = reasons.get(r, 0) + 1
                extra["score_failures"] = {"n": int(len(bad)), "reasons": reasons,
                                           "positions": [int(i) for i in bad[:20]],
                                           "auc_rule": "each at its worst place (trustworthy lowest, "
                                                       "untrustworthy highest)"}
        n = int(counts.sum())
        if n:
            tp, fp, fn, _tn = (int(x) for x in counts.sum(0))
            rate, share = (tp + fp) / n, (tp + fn) / n
            chance = trust_metrics.chance_at_rate(rate, share)
            extra["trustworthy_rate"] = round(rate, 6)
            extra["trustworthy_share"] = round(share, 6)
            extra["chance_at_rate"] = {f"trust-{k}": (None if not np.isfinite(v) else round(v, 6))
                                       for k, v in chance.items()}
        extra["rank_gate"] = dict(self.metadata.rank_gate or {})
        if "pred_class" in scores:
            extra["per_class"] = self._per_class(scores, ok)
        return extra

    def _per_class(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """Per predicted class (issue #38): the judged predictions, how many are trustworthy and the AUC
        within the class (None with one label); `classes_judged` names the classes present — a trust set
        judges only the classes whose posts carry a rationale (HateXplain: "toxic" only)."""
        use, rank, truth, _ = self._ranking(scores, ok)
        cls = np.asarray(scores["pred_class"], dtype=np.float64)
        out: dict[str, Any] = {}
        for c in sorted({int(x) for x in cls[use] if np.isfinite(x)}):
            m = use & (cls == c)
            t = truth[m]
            auc = float(trust_metrics.weighted_auc(rank[m], t)[0]) if 0 < t.sum() < len(t) else None
            out[str(c)] = {"n": int(m.sum()), "trustworthy": int(t.sum()),
                           "auc": None if auc is None else round(auc, 6)}
        return {"classes_judged": len(out), "classes": out}


class NoModel(TextModel):
    """The model under test of an imported trust set, which does not come with one: `predict`
    refuses with the reason (served by the harness, so an oracle's call becomes its recorded failure)."""

    def __init__(self, resource: str, n_classes: int) -> None:
        super().__init__(IMPORTED, "binary" if n_classes == 2 else "multiclass", max(2, n_classes))
        self.resource = resource

    def _predict(self, inputs) -> np.ndarray:
        raise ValueError(f"{self.resource} was imported without its model under test: this oracle needs the "
                         "model; use one that reads the explained predictions only (e.g. naive-oracle)")


register_track(TrustTrack())
