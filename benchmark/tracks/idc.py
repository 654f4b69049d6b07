"""The IDC track (SPECS §5): word-level explainers scored against pseudo interpretation ground truth.

Resources `idc/mr-wga`, `idc/mr-milp`, `idc/mr-hybrid` hold the MR test split with one ground-truth
flag per token (the token is an interpretation feature IF_c of the document's class). Evaluated
documents: those the Kim CNN classifies correctly (SPECS §5.6 [I]); class c = the label (= the CNN's
prediction). Models under test: `cnn` (Kim CNN) and `han` (HAN word attention); for the HAN, c is
still the label and every CNN-correct document is evaluated.

Per document the explainer's word scores are binarised (`binarise="threshold"`: normalised by the
document's positive maximum, ≥ `alpha` = 0.3; or `"top-k"` with k = |G_d|) over the distinct word
types, and compared with G_d = {w ∈ d : w ∈ IF_c}: counts tp, fp, fn, tn. Primary metric: Cohen's κ
over the pooled counts (micro); P and R likewise; macro averages over documents with G_d ∪ E_d ≠ ∅.
Metric options (`--metric-param`): binarise, alpha, exclude_punctuation.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

import benchmark.metrics.interpretation as interp
from benchmark.errors import ResourceError, XaibenchError
from benchmark.models.base import read_model_config
from benchmark.models.spec import ModelSpec
from benchmark.store.results import MetricSummary
from benchmark.tracks.base import Instances, Track, TrackMetadata, register_track, weighted_mean
from benchmark.references import IDC

PGTS = ("wga", "milp", "hybrid")
SCORE_OPTIONS = {"binarise": "threshold", "alpha": interp.ALPHA, "exclude_punctuation": False}
REBUILD = "xaibench generate idc --overwrite"  # the command that rebuilds the models of an idc resource


class IdcTrack(Track):
    """IDC: text explanations' word labels vs a pseudo ground truth (WGA / MILP / Hybrid), pooled κ, P, R."""

    metadata = TrackMetadata(
        name="idc",
        description="IDC: MR test documents vs WGA / MILP / Hybrid pseudo ground truth; κ, P, R (Khaleel et al. 2022)",
        reference=IDC,
        resource="idc",
        main_score="interp-kappa",
        metrics=("interp-kappa", "interp-precision", "interp-recall",
                 "interp-kappa-macro", "interp-precision-macro", "interp-recall-macro"),
        models=("cnn", "han"),
        modality="text",
        default_split="test",
    )

    def configs(self) -> list[str]:
        """mr-<wga|milp|hybrid>: the MR documents with each pseudo ground truth."""
        return [f"mr-{p}" for p in PGTS]

    @staticmethod
    def _check(resource) -> None:
        if resource.params.get("data_only") or resource.config.endswith("-features"):
            raise ResourceError(f"{resource.name} holds feature sets only; evaluate on "
                                f"{resource.family}/{resource.config.removesuffix('-features')}")

    def _max_len(self, resource) -> int | None:
        cfg = resource.root / "model" / resource.params.get("models", {}).get("cnn", "mr-cnn") / "config.json"
        return read_model_config(cfg.parent, REBUILD).get("max_len") if cfg.exists() else None

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """The split's documents the CNN classifies correctly (the others are excluded and counted), cut to
        the CNN's `max_len` tokens; the truths are each document's tokens, word flags and label."""
        return self._instances(resource, split, limit)

    def _instances(self, resource, split: str, limit: int | None = None, drop: str | None = None) -> Instances:
        """`instances`, also leaving out (and counting as `excluded["planted_inert"]`) the documents whose boolean
        column `drop` is true: a hidden copy's `inert_<model>` (`hidden_copy`)."""
        self._check(resource)
        columns = ["id", "tokens", "label", "cnn_correct", "gt"]
        whole = resource.table(split)
        if drop is not None and drop not in whole.column_names:
            raise ResourceError(f"{resource.name} (a hidden copy at {resource.root}) has no column {drop!r}; "
                                "delete the copy's folder so that it is built again")
        table = whole.select(columns + ([drop] if drop else [])).to_pydict()
        dropped = table[drop] if drop else [False] * len(table["id"])
        max_len = self._max_len(resource)
        ids, tokens, gts, labels = [], [], [], []
        skipped = {"cnn_incorrect": 0, "empty": 0, "truncated": 0, "planted_inert": 0}
        for i, t, y, ok, g, inert in zip(table["id"], table["tokens"], table["label"], table["cnn_correct"],
                                         table["gt"], dropped):
            if not ok:
                skipped["cnn_incorrect"] += 1
                continue
            if not t:
                skipped["empty"] += 1
                continue
            if inert:
                skipped["planted_inert"] += 1
                continue
            if len(t) != len(g):
                raise ResourceError(f"{resource.name}: document {i} has {len(t)} tokens but {len(g)} gt flags; "
                                    "regenerate the resource")
            if max_len is not None and len(t) > max_len:
                t, g = t[:max_len], g[:max_len]
                skipped["truncated"] += 1
            ids.append(i)
            tokens.append(list(t))
            gts.append(np.asarray(g, dtype=bool))
            labels.append(int(y))
            if limit is not None and len(ids) >= limit:
                break
        truths = {"tokens": tokens, "gt": gts, "label": np.asarray(labels, dtype=np.int64)}
        return Instances(ids=ids, inputs=tokens, truths=truths, output_shapes=[(len(t),) for t in tokens],
                         excluded={k: v for k, v in skipped.items() if v})

    def inputs_key(self, resource, split: str) -> tuple[str, str]:
        """The three PGT configs show the same documents with the same models: one key for all of
        them — the split's ids and tokens and the CNN's weights (which decides the evaluated documents)."""
        self._check(resource)
        t = resource.table(split, columns=["id", "tokens", "cnn_correct"]).to_pydict()
        h = hashlib.sha256(str(resource.params.get("cnn_sha256", "")).encode())
        for i, toks, ok in zip(t["id"], t["tokens"], t["cnn_correct"]):
            h.update(f"{i}\t{int(ok)}\t{' '.join(toks)}\n".encode())
        return f"{resource.family}/{resource.params.get('dataset', 'mr')}-documents", h.hexdigest()[:12]

    def build_model(self, resource, name: str, instances: Instances | None, **options: Any):
        """The resource's trained CNN or HAN (a white-box word model)."""
        self._check(resource)
        folder = resource.params.get("models", {}).get(name)
        if name not in self.models or not folder:
            raise ResourceError(f"the idc track has no model '{name}' for {resource.name}; "
                                f"choose one of: {', '.join(self.models)}")
        directory = resource.root / "model" / folder
        cfg = read_model_config(directory, REBUILD)
        spec = ModelSpec(name=name, modality="text", white_box=True, loader="word", directory=directory,
                         options={"rebuild": REBUILD})
        info = {"name": name, "hash": cfg["sha256"][:16], "task": cfg.get("task", "binary"),
                "architecture": cfg["architecture"], "scores": cfg.get("scores", {})}
        return spec, info

    no_hidden_copy = ""
    published_truth = "gt"  # the published word flags (issue #58: the built-in `published-truth` returns them)

    def truth_maps(self, resource, split: str) -> tuple[list[str], list[np.ndarray]]:
        """Every document's published `gt` flags (1.0 / 0.0 per token) — the split's whole column, the documents the
        published CNN misclassifies included: a hidden copy evaluates the documents *it* classifies correctly."""
        self._check(resource)
        table = resource.table(split, columns=["id", "gt"]).to_pydict()
        return [str(i) for i in table["id"]], [np.asarray(g or [], dtype=np.float32) for g in table["gt"]]

    def hidden_copy(self, resource, model: str, draw: Any, split: str, limit: int | None = None):
        """The copy of draw `draw` (`Track.hidden_copy`): the derived resource the generator's construction builds
        (`Track.derived_copy`, `generators.idc.hidden`), read by this track's own `instances` and `build_model`.
        Documents where deleting the planted words of their class does not move this model's output (the derived
        split's `inert_<model>` column) are left out and counted as `excluded["planted_inert"]`: there the planted
        words do not carry the model's output."""
        from benchmark.models.variants.hidden import read_stats

        self._check(resource)
        derived = self.derived_copy(resource, draw)
        spec, info = self.build_model(derived, model, None)
        instances = self._instances(derived, split, limit, drop=f"inert_{model}")
        return spec, info, instances, read_stats(derived.root)

    def check_metric_params(self, metric_params: dict[str, Any]) -> None:
        """Refuse options other than binarise, alpha and exclude_punctuation, or bad values."""
        try:
            self._options(metric_params)
        except ValueError as exc:
            raise XaibenchError(str(exc)) from None

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        """Per document: the [tp, fp, fn, tn] counts of the explanation's word labels vs the PGT, and the metrics
        on them."""
        opts = self._options(metric_params)
        counts = np.zeros((len(positions), 4), dtype=np.int64)
        for n, (e, p) in enumerate(zip(explanations, positions)):
            tokens, gt = truths["tokens"][p], truths["gt"][p]
            features = {w for w, g in zip(tokens, gt) if g}
            counts[n] = interp.document_counts(tokens, np.asarray(e, dtype=np.float64), features,
                                               binarise=opts["binarise"], alpha=opts["alpha"],
                                               exclude_punctuation=opts["exclude_punctuation"])
        out = {m.name: m(counts, None) for m in self.metric_objects()}
        out["counts"] = counts
        return out

    @staticmethod
    def _options(metric_params: dict[str, Any]) -> dict[str, Any]:
        unknown = set(metric_params) - set(SCORE_OPTIONS)
        if unknown:
            raise ValueError(f"unknown idc metric option(s) {sorted(unknown)}; known: {', '.join(SCORE_OPTIONS)}")
        opts = {**SCORE_OPTIONS, **metric_params}
        if opts["binarise"] not in interp.BINARISATIONS:
            raise ValueError(f"binarise must be one of {interp.BINARISATIONS}")
        return opts

    def summarise(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, MetricSummary]:
        """Pooled metrics: the statistic of the summed counts, with a bootstrap CI over documents
        (std = bootstrap standard error); macro metrics: mean ± t-interval over documents."""
        if "counts" not in scores:  # every instance failed: nothing was scored
            scores = {**scores, "counts": np.zeros((len(ok), 4))}
        counts = np.asarray(scores["counts"])[ok].astype(np.int64)
        out = {}
        for m in self.metric_objects():
            if m.pooled:
                which = m.name.removeprefix("interp-")
                out[m.name] = interp.pooled_summary(counts, which, label=m.label, direction=m.direction)
            else:
                out[m.name] = MetricSummary.from_scores(np.asarray(scores[m.name])[ok], m.direction, m.label)
        return out

    def estimate(self, scores: dict[str, np.ndarray], ok: np.ndarray,
                 weights: np.ndarray) -> dict[str, np.ndarray]:
        """Pooled metrics: the statistic of the weighted sum of the documents' count tables,
        stat(W @ counts); macro metrics: the weighted mean over documents (`Track.estimate`)."""
        w = np.asarray(weights, dtype=np.float64)
        raw = np.asarray(scores.get("counts", np.zeros((len(ok), 4))), dtype=np.float64)
        counts = np.where(np.asarray(ok)[:, None], np.nan_to_num(raw), 0.0)
        pooled = w @ counts
        out = {}
        for m in self.metric_objects():
            if m.pooled:
                value = interp.statistic(pooled, m.name.removeprefix("interp-"))
                out[m.name] = np.where(w @ np.asarray(ok, dtype=np.float64) > 0, value, np.nan)
            else:
                out[m.name] = weighted_mean(np.where(ok, np.asarray(scores[m.name], dtype=np.float64), np.nan), w)
        return out


register_track(IdcTrack())
