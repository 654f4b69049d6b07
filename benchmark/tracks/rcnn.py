"""The RCNN zero-contribution track (SPECS §4, Camburu et al. 2019): word-level explainers of an RCNN
rationale model (Lei et al. 2016) scored on reviews whose non-selected tokens provably contribute nothing.

Resources `rcnn/beer-appearance`, `rcnn/beer-aroma`, `rcnn/beer-palate` (generators/rcnn/build.py): split
`test` = the verified reviews with one label per token — N (non-selected: zero contribution), SDK
(selected, relevance unknown), SR (selected, clearly relevant: |Δ| ≥ τ). Model under test: `rcnn` (the
resource's trained RCNN, a regression model with one output in [0, 1]; it exposes its aspect and its
unlabeled training texts for explainers that learn from a corpus, such as L2X). Its model info carries
`selection` (dev selection rate, precision / recall against the human rationales, the targets, whether
they are met) and `quality` (the AIXI floor's keys: `meets_floor` False marks the board), from the card
(`model_selection`, `benchmark.models.rcnn_targets`).

Per review the explainer's scores rank the tokens (stable sort by decreasing score, ties by position);
metrics (lower is better; mean (std) over reviews, SPECS §4.6): `pct-first` (Eq. 4, the top token ∈ N),
`pct-misrank` (Eq. 5, an N token above the lowest-ranked SR token), `avg-misrank` (Eq. 6, how many), and
their `-pessimistic` variants (ties broken against the explainer).

Metric options (`--metric-param`): `attribution` = `"absolute"` (default, SPECS §4.5 [I]: LIME / SHAP-style
signed weights are ranked by magnitude — a rating regressor uses negative tokens as much as positive
ones; explainers whose scores are "higher = more important" and non-negative, such as L2X, the saliency
norm or the random control, rank the same either way) or `"signed"` (rank the raw scores).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import benchmark.metrics.zero_contribution as zc
from benchmark.errors import ResourceError, XaibenchError
from benchmark.models.rcnn import config_of
from benchmark.models.rcnn_targets import check
from benchmark.models.spec import ModelSpec
from benchmark.tracks.base import Instances, Track, TrackMetadata, register_track
from benchmark.references import CAMBURU, LEI

ASPECTS = ("appearance", "aroma", "palate")
SCORE_OPTIONS = {"attribution": "absolute"}  # [I] SPECS §4.5 ranking rule
VETO_COLUMN = "veto_selected"  # a hidden copy's flag: the copy selects one of its vetoed words in this review


def model_selection(stats: dict[str, Any]) -> dict[str, Any]:
    """{"selection", "quality"} of the resource's RCNN against Lei's targets (benchmark.models.rcnn_targets):
    as its card records them, or — for a resource built before the build checked itself — recomputed from
    the card's dev selection rate and rationale precision; {} when the card has neither."""
    if isinstance(stats.get("selection"), dict) and isinstance(stats.get("quality"), dict):
        return {"selection": stats["selection"], "quality": stats["quality"]}
    if "rationale_precision" not in stats and "dev_selection_rate" not in stats:
        return {}
    rationales = {k[len("rationale_"):]: v for k, v in stats.items() if k.startswith("rationale_")}
    selection, quality = check(stats.get("dev_selection_rate"), rationales or None)
    return {"selection": selection, "quality": quality}


class RcnnTrack(Track):
    """RCNN zero-contribution (Camburu et al. 2019): how often explanations rank provably irrelevant tokens high."""

    metadata = TrackMetadata(
        name="rcnn",
        description=("RCNN zero-contribution: BeerAdvocate reviews with provably irrelevant (N) and clearly "
                     "relevant (SR) tokens; %first, %misrank, avg misrank (Camburu et al. 2019)"),
        reference=f"{CAMBURU}; the rationale model: {LEI}",
        resource="rcnn",
        main_score="pct-first",
        metrics=("pct-first", "pct-misrank", "avg-misrank",
                 "pct-first-pessimistic", "pct-misrank-pessimistic", "avg-misrank-pessimistic"),
        models=("rcnn",),
        modality="text",
        default_split="test",
    )

    def configs(self) -> list[str]:
        """beer-<aspect>: the BeerAdvocate reviews of each aspect."""
        return [f"beer-{a}" for a in ASPECTS]

    def _check(self, resource) -> None:
        if resource.config not in self.configs():
            raise ResourceError(f"{resource.name} is not an rcnn track config; choose one of: "
                                + ", ".join(f"rcnn/{c}" for c in self.configs()))

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """The split's reviews with their token partition (N / SR / other) as ground truth. A hidden copy's split
        (`generators.rcnn.hidden`) flags the reviews where the copy selects one of its vetoed words
        (`veto_selected`): they are dropped before `limit` applies and counted in `excluded["veto_selected"]`."""
        self._check(resource)
        columns = ["id", "tokens", "partition"]
        if split in resource.splits and VETO_COLUMN in pq.read_schema(resource.path(split)).names:
            columns.append(VETO_COLUMN)
        table = resource.table(split, columns=columns)
        skipped = {"empty": 0, VETO_COLUMN: 0}
        if VETO_COLUMN in table.column_names:
            flags = table.column(VETO_COLUMN).to_numpy(zero_copy_only=False).astype(bool)
            skipped[VETO_COLUMN] = int(flags.sum())
            table = table.filter(pa.array(~flags))
        if limit is not None:
            table = table.slice(0, limit)
        cols = table.to_pydict()
        ids, tokens, truths = [], [], []
        for i, t, p in zip(cols["id"], cols["tokens"], cols["partition"]):
            if len(t) != len(p):
                raise ResourceError(f"{resource.name}: review {i} has {len(t)} tokens but {len(p)} partition "
                                    "labels; regenerate it with `xaibench generate rcnn --overwrite`")
            if not t:
                skipped["empty"] += 1
                continue
            ids.append(str(i))
            tokens.append([str(w) for w in t])
            truths.append(np.asarray(p, dtype=np.int8))
        return Instances(ids=ids, inputs=tokens, truths={"partition": truths},
                         output_shapes=[(len(t),) for t in tokens],
                         excluded={k: v for k, v in skipped.items() if v})

    def build_model(self, resource, name: str, instances: Instances | None, **options: Any):
        """The aspect's trained RCNN (generator + encoder; a white-box model)."""
        self._check(resource)
        if name not in self.models:
            raise ResourceError(f"the rcnn track has no model '{name}'; choose one of: {', '.join(self.models)}")
        params = resource.params
        folder = resource.root / "model" / ((params.get("models") or {}).get(name) or params.get("model")
                                            or resource.config)
        if unknown := set(options) - {"batch_size"}:
            raise ResourceError(f"unknown rcnn model option(s) {sorted(unknown)}; known: batch_size")
        spec = ModelSpec(name=name, modality="text", white_box=True, loader="rcnn", directory=folder,
                         options={"batch_size": int(options.get("batch_size", 256))})
        cfg = config_of(folder)
        info = {"name": name, "hash": cfg["sha256"][:16], "task": "regression", "architecture": cfg["architecture"],
                "aspect": cfg.get("aspect"), "validation": {k: v for k, v in cfg.get("validation", {}).items()
                                                             if not isinstance(v, dict)},
                **model_selection(resource.stats)}
        return spec, info

    no_hidden_copy = ""
    # the published N / SDK / SR labels (0 / 1 / 2) as scores: ranked as they are, every SR token comes before every
    # N token (issue #58: the built-in `published-truth` returns them)
    published_truth = "partition"

    def hidden_copy(self, resource, model: str, draw: Any, split: str, limit: int | None = None):
        """The copy of draw `draw` (`Track.hidden_copy`): the derived resource the generator's construction builds
        (`Track.derived_copy`, `generators.rcnn.hidden`), read by this track's own `instances` (which drops and
        counts the reviews where the copy selects a vetoed word, `excluded["veto_selected"]`) and `build_model`."""
        from benchmark.models.variants.hidden import read_stats

        self._check(resource)
        derived = self.derived_copy(resource, draw)
        instances = self.instances(derived, split, limit)
        spec, info = self.build_model(derived, model, instances)
        return spec, info, instances, read_stats(derived.root)

    @staticmethod
    def _options(metric_params: dict[str, Any]) -> dict[str, Any]:
        unknown = set(metric_params) - set(SCORE_OPTIONS)
        if unknown:
            raise ValueError(f"unknown rcnn metric option(s) {sorted(unknown)}; known: {', '.join(SCORE_OPTIONS)}")
        opts = {**SCORE_OPTIONS, **metric_params}
        if opts["attribution"] not in zc.ATTRIBUTIONS:
            raise ValueError(f"attribution must be one of {zc.ATTRIBUTIONS}, got {opts['attribution']!r}")
        return opts

    def check_metric_params(self, metric_params: dict[str, Any]) -> None:
        """Refuse options other than `attribution`, or a bad value."""
        try:
            self._options(metric_params)
        except ValueError as exc:
            raise XaibenchError(str(exc)) from None

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        """Eq. 4–6 under both tie rules (position, pessimistic) for each explanation."""
        opts = self._options(metric_params)
        labels = [truths["partition"][p] for p in positions]
        out = {}
        for ties in zc.TIES:
            errors = zc.zero_contribution_errors(explanations, labels, ties, opts["attribution"])
            suffix = "" if ties == "position" else "-pessimistic"
            out[f"pct-first{suffix}"] = errors["first"]
            out[f"pct-misrank{suffix}"] = errors["misrank"]
            out[f"avg-misrank{suffix}"] = errors["count"]
        return out


register_track(RcnnTrack())
