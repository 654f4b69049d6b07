"""The trust track (SPECS §1, TOKI): oracles judge explained predictions trustworthy or not.

Resources `trust/<dataset>-<model>` (`generators/trust`) hold, per correctly predicted test instance,
the tokens, the prediction and its confidence, and the explanation the trust label was derived from
(word / score pairs); the label `trust` (explanation precision against people's rationale words
≥ 0.5, SPECS §1.8) and the rationale itself are ground truth and stay in the harness.

An oracle submission (`kind = "oracle"`) runs in the sandboxed worker like an explainer:
* `fit(context)` once per worker — `context.train` is the resource's training split as columns
  (`tokens`, `label`, `prediction`, `confidence`, `text`), `context.model` the model under test
  (loaded read-only from the resource's model folder), `context.explainer` the built-in explainer
  that produced the explanations (`lime-text` with the resource's settings), `context.class_names`
  one name per class (the resource's `class_words`: what an embedding can read);
* `judge(batch)` — `batch.inputs` is one mapping per instance with `tokens`, `text`, `prediction`,
  `class_name`, `confidence`, `explanation_words`, `explanation_scores` — returns one bool each
  (True = trustworthy). Anything else (a wrong count, a non-bool) is a recorded failure.

Read-only assets: the word-embedding ensemble (`trust/embeddings`, gensim vectors and θ_relate per
model) and the offline WordNet are mounted in the worker; `XAIBENCH_ASSET_TRUST_EMBEDDINGS` and
`XAIBENCH_ASSET_NLTK_DATA` say where.

Metrics (SPECS §1.10), trustworthy = positive, pooled over the judged predictions: Acc, Pre, Sen, F1,
Spec and G-mean (primary); the summary's CI is a percentile bootstrap over predictions. A metric
whose denominator is empty (e.g. a test split with one class) is undefined: no value, the reason in
the Result (`extra.undefined`), never a NaN averaged into a board; `extra.confusion` keeps the
pooled table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

import benchmark.metrics.trust as trust_metrics
from benchmark.errors import ResourceError
from benchmark.models.base import TextModel, read_model_config
from benchmark.models.spec import ModelSpec
from benchmark.results import MetricSummary
from benchmark.tracks.base import TRACKS, Instances, Track

DATASETS = ("hatexplain", "cams", "movies")
MODEL_LOADERS = {"cnn": "word", "minilm": "minilm"}  # model under test → `benchmark.models.spec` loader
IMPORTED = "imported"  # a trust set labelled by people, imported without its model (generators/trust/importer.py)
EMBEDDINGS = "trust/embeddings"  # the asset TOKI reads (word vectors + θ_relate per model)
INPUT_COLUMNS = ("id", "tokens", "text", "prediction", "confidence", "explanation_words", "explanation_scores")
TRAIN_COLUMNS = ("tokens", "text", "label", "prediction", "confidence")
N_BOOT = 1000


class TrustTrack(Track):
    name = "trust"
    family = "trust"
    modality = "text"
    description = ("TOKI trust sets: oracles judge explained predictions trustworthy or not; Acc, Pre, Sen, F1, "
                   "Spec, G-mean (Nguyen Tung et al. 2025)")
    metrics = tuple(f"trust-{m}" for m in ("gmean", "acc", "pre", "sen", "f1", "spec"))
    models = (*MODEL_LOADERS, IMPORTED)
    default_split = "test"
    submission_kind = "oracle"

    def configs(self) -> list[str]:
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
        return Instances(ids=ids, inputs=inputs, truths={"trust": np.asarray(truths, dtype=bool)},
                         output_shapes=[(1,)] * len(ids), excluded={k: v for k, v in skipped.items() if v})

    def build_model(self, resource, name: str, instances: Instances, **options: Any):
        self._check(resource)
        built = str(resource.params.get("model", "cnn"))
        if name != built:
            raise ResourceError(f"{resource.name} was built with the model under test '{built}'; "
                                f"use --model {built}")
        if built == IMPORTED:  # no model: oracles that only read the explained predictions can still run
            names = self.class_names(resource)
            spec = ModelSpec(name=name, modality="text", white_box=False, served=NoModel(resource.name, len(names)))
            return spec, {"name": name, "hash": IMPORTED, "task": spec.served.task, "architecture": "none",
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
        return spec, info

    def assets(self, resource) -> dict[str, Path]:
        """Read-only folders every oracle worker gets, when they have been built: the embedding
        ensemble (`trust/embeddings`) and the offline WordNet for NLTK (`<data home>/nltk_data`,
        `generators/trust/wordnet.py`) — no ground truth in either."""
        from benchmark.resources import data_home, resource_root

        family, config = EMBEDDINGS.split("/")
        found = {"trust-embeddings": resource_root(family) / "model" / config, "nltk-data": data_home() / "nltk_data"}
        return {name: folder for name, folder in found.items() if folder.is_dir()}

    def fit_context(self, resource) -> dict[str, Any]:
        """The `fit` message: the training split's columns, the class names, the explainer that
        produced the explanations (built-in, with the resource's settings)."""
        self._check(resource)
        cols = resource.table("train", columns=list(TRAIN_COLUMNS)).to_pydict()
        train = {"tokens": [[str(t) for t in d] for d in cols["tokens"]],
                 "text": [str(t or "") for t in cols["text"]],
                 "label": [int(v) for v in cols["label"]], "prediction": [int(v) for v in cols["prediction"]],
                 "confidence": [float(v) for v in cols["confidence"]]}
        p = resource.params
        explainer = {"name": "lime-text", "parameters": {"num_samples": int(p.get("num_samples", 5000)),
                                                          "features": "type"}}
        return {"train": train, "class_names": self.class_names(resource), "explainer": explainer}

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        judged = np.array([float(np.asarray(e).reshape(-1)[0]) >= 0.5 for e in explanations], dtype=bool)
        counts = trust_metrics.instance_counts(judged, truths["trust"][list(positions)])
        out = {m.name: m(counts, None) for m in self.metric_objects()}
        out["counts"] = counts
        return out

    def summarise(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, MetricSummary]:
        """Pooled: each metric of the summed [tp, fp, fn, tn] over the judged predictions, with a
        percentile-bootstrap 95 % CI over predictions (std = bootstrap standard error). An undefined
        metric (empty denominator) has no value (mean None)."""
        counts = np.asarray(scores.get("counts", np.zeros((len(ok), 4))))[ok].astype(np.int64)
        return pooled_summaries(counts, [(m.name, m.label, m.direction) for m in self.metric_objects()])

    def summary_extra(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """The pooled confusion table (`confusion`: tp, fp, fn, tn over the judged predictions) and why
        each undefined metric is undefined (`undefined`, when any is)."""
        counts = np.asarray(scores.get("counts", np.zeros((len(ok), 4))))[ok].astype(np.int64)
        pooled = trust_metrics.trust_scores(counts.sum(0))
        why = {f"trust-{k}": v for k, v in pooled.undefined.items()}
        return {"confusion": pooled.counts, **({"undefined": why} if why else {})}


    def estimate(self, scores: dict[str, np.ndarray], ok: np.ndarray,
                 weights: np.ndarray) -> dict[str, np.ndarray]:
        """Each metric of the weighted sum of the predictions' [tp, fp, fn, tn] rows, W @ counts
        (NaN where its denominator is empty), as `summarise` pools them."""
        w = np.asarray(weights, dtype=np.float64)
        counts = np.asarray(scores.get("counts", np.zeros((len(ok), 4))), dtype=np.float64)
        counts = np.where(np.asarray(ok)[:, None], np.nan_to_num(counts), 0.0)
        values = trust_metrics.trust_values(w @ counts)
        return {m.name: np.asarray(values[m.name.removeprefix("trust-")], dtype=np.float64)
                for m in self.metric_objects()}


class NoModel(TextModel):
    """The model under test of an imported trust set, which does not come with one: `predict`
    refuses with the reason (served by the harness, so an oracle's call becomes its recorded failure)."""

    def __init__(self, resource: str, n_classes: int) -> None:
        super().__init__(IMPORTED, "binary" if n_classes == 2 else "multiclass", max(2, n_classes))
        self.resource = resource

    def _predict(self, inputs) -> np.ndarray:
        raise ValueError(f"{self.resource} was imported without its model under test: this oracle needs the "
                         "model; use one that reads the explained predictions only (e.g. naive-oracle)")


def pooled_summaries(counts: np.ndarray, metrics: Sequence[tuple[str, str, str]], n_boot: int = N_BOOT,
                     seed: int = 0) -> dict[str, MetricSummary]:
    """`MetricSummary` per (name `trust-<m>`, label, direction) of the pooled (N, 4) counts; the
    bootstrap resamples predictions (vectorised: one (n_boot, N) index draw)."""
    n = len(counts)
    pooled = trust_metrics.trust_values(counts.sum(0)) if n else None
    boot = None
    if n > 1:
        idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        boot = trust_metrics.trust_values(counts[idx].sum(1))
    out = {}
    for name, label, direction in metrics:
        key = name.removeprefix("trust-")
        value = None if pooled is None else float(pooled[key])
        if value is None or not np.isfinite(value):
            out[name] = MetricSummary(None, None, None, n, n, direction, label)
            continue
        b = boot[key][np.isfinite(boot[key])] if boot is not None else np.array([])
        if b.size < 2:
            out[name] = MetricSummary(value, 0.0, (value, value), n, 0, direction, label)
            continue
        lo, hi = np.percentile(b, [2.5, 97.5])
        out[name] = MetricSummary(value, float(b.std(ddof=1)), (float(lo), float(hi)), n, 0, direction, label)
    return out


TRACKS.register("trust", TrustTrack())
