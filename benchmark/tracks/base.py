"""The Track contract (metadata-first, after MTEB's tasks).

A track names its resource family, the models it can evaluate on a resource, the metrics (primary
first) and how to turn a resource split into `Instances`: inputs for submissions, ground truth kept
by the harness. Submissions only ever see `Instances.batch(...)`, which carries no ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.contracts import Batch
from benchmark.errors import RegistryError, XaibenchError
from benchmark.metrics import METRICS, Metric
from benchmark.registry import Registry
from benchmark.results import MetricSummary


@dataclass
class Instances:
    """A split of a resource, split into what submissions may see and what only the harness sees."""

    ids: list[str]
    inputs: Any  # (N, H, W) float32 images, or list of token lists
    truths: Any  # ground truth, indexed like ids (never handed to submissions)
    segments: np.ndarray | None = None  # optional non-ground-truth side information
    output_shapes: list[tuple[int, ...]] = field(default_factory=list)  # expected explanation shapes
    excluded: dict[str, int] = field(default_factory=dict)  # documents left out by the track, by reason

    def __len__(self) -> int:
        return len(self.ids)

    def index(self) -> dict[str, int]:
        return {i: n for n, i in enumerate(self.ids)}

    def batch(self, positions: Sequence[int], seed: int) -> Batch:
        pos = list(positions)
        seg = None if self.segments is None else self.segments[pos]
        inputs = self.inputs[pos] if isinstance(self.inputs, np.ndarray) else [self.inputs[p] for p in pos]
        return Batch(ids=[self.ids[p] for p in pos], inputs=inputs, segments=seg, seed=seed)


class Track:
    """Subclass and register with `TRACKS.register(name, instance)`."""

    name: str = ""
    family: str = ""
    modality: str = "image"
    description: str = ""
    metrics: tuple[str, ...] = ()  # the first is the primary metric
    models: tuple[str, ...] = ()  # model names this track can build from a resource
    default_split: str = "validation"
    submission_kind: str = "explainer"  # "explainer" (explain) or "oracle" (fit once, then judge)
    score_chunk: int | None = 250  # instances per `score` call; None = every instance in one call
    # why a control (random, uniform, position) may rank above the median explainer on this track's
    # boards; the site prints it with its warning (None: the generic reason, an under-trained model)
    control_note: str | None = None
    # the paper(s) the track follows: authors, year, title, link (benchmark.references); required,
    # checked when the track is registered
    reference: str = ""

    @property
    def primary_metric(self) -> str:
        return self.metrics[0]

    def metric_objects(self) -> list[Metric]:
        return [METRICS.get(m) for m in self.metrics]

    def configs(self) -> list[str]:
        """The resource configs this track knows how to build (for `xaibench list`)."""
        return []

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        raise NotImplementedError

    def inputs_key(self, resource, split: str) -> tuple[str, str]:
        """(name, revision) of what submissions are shown; explanations are cached under it, so configs
        that differ only in ground truth (e.g. IDC's three PGTs) share them. Default: the resource."""
        return resource.name, resource.revision

    def build_model(self, resource, name: str, instances: Instances, **options: Any):
        """The model under test `name` for this resource: (`ModelSpec`, model_info dict).

        The spec is a model folder a worker loads by itself, or a black box the harness serves
        (`benchmark.models.spec`); a model built from ground truth must be served, never loaded."""
        raise NotImplementedError

    def assets(self, resource) -> dict[str, Path]:
        """Read-only folders (no ground truth) every worker of this track gets, by name; the worker
        finds each through `XAIBENCH_ASSET_<NAME>` (`benchmark.sandbox.asset_env`). Default: none."""
        return {}

    def board_role(self, resource, submission: str, role: str) -> str:
        """The role (`benchmark.submission.ROLES`) a Result of `submission` takes on this resource's
        board; by default its own. A track overrides it where a submission plays another part on one
        board (robustness: the explainer the texts were attacked through is a reference there)."""
        return role

    def fit_context(self, resource, role: str = "method") -> dict[str, Any] | None:
        """For oracle tracks: what `fit` is handed (training split columns, class names, explainer);
        sent to every fresh worker before its first batch. `role` is the submission's
        (`benchmark.submission.ROLES`): only a "reference" may be handed more. Default: nothing."""
        return None

    def summary_extra(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """What the Result records beside the metric summaries (its `extra`), e.g. a pooled confusion
        table and why a metric has no value (`{"undefined": {metric: reason}}`). Default: nothing."""
        return {}

    def split_size(self, resource, split: str, instances: Instances, limit: int | None) -> int:
        """How many instances the whole split has (after the track's exclusions): the coverage a
        `limit`ed run is measured against. Default: counted by building the instances once more."""
        if limit is None or len(instances) < limit:
            return len(instances)
        return len(self.instances(resource, split, None))

    def check_metric_params(self, metric_params: dict[str, Any]) -> None:
        """Refuse unknown metric options before anything runs (XaibenchError naming the known ones)."""
        known = {k for m in self.metric_objects() for k in m.params}
        unknown = set(metric_params) - known
        if unknown:
            raise XaibenchError(f"unknown {self.name} metric option(s) {', '.join(sorted(unknown))}; known: "
                                f"{', '.join(sorted(known)) or 'none'}")

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        """Per-instance scores of every metric for the explanations of instances at `positions`;
        `metric_params` override metric defaults where a metric takes them (e.g. attribution)."""
        raise NotImplementedError


    def summarise(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, MetricSummary]:
        """The Result's metric summaries from per-instance `scores` (instances where `ok` is False
        failed and are left out). Default: mean, std and t-interval of every metric over instances;
        tracks with pooled (micro-averaged) metrics override this."""
        return {m.name: MetricSummary.from_scores(np.asarray(scores[m.name])[ok], m.direction, m.label)
                for m in self.metric_objects()}

    def units(self, scores: dict[str, np.ndarray], n: int) -> np.ndarray:
        """The resampling unit of each of the `n` instances, as (n,) integer labels: a bootstrap
        draws units with replacement and every instance of a drawn unit comes along (a cluster
        bootstrap). Default: each instance its own unit."""
        return np.arange(n)

    def estimate(self, scores: dict[str, np.ndarray], ok: np.ndarray,
                 weights: np.ndarray) -> dict[str, np.ndarray]:
        """The point value of every metric under instance weights, vectorised over draws.

        `weights` is (B, n): non-negative multiplicities of the n instances (a bootstrap draw; a row
        of ones gives the Result's own value). Returns {metric: (B,)} with NaN where the metric is
        undefined under that draw. Default, for metrics that are means over instances:

            value_b = Σ_i w_bi·x_i / Σ_i w_bi   over instances i that did not fail and where x_i is finite

        Tracks whose metrics pool over instances (counts, curves) override this; it must agree with
        `summarise`'s mean when every weight is 1 (tested for every track)."""
        w = np.asarray(weights, dtype=np.float64)
        out = {}
        for m in self.metric_objects():
            if m.name in scores:
                out[m.name] = weighted_mean(np.where(ok, np.asarray(scores[m.name], dtype=np.float64), np.nan), w)
        return out


def weighted_mean(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) Σ_i w_bi·x_i / Σ_i w_bi over the finite x_i (NaN where no finite x_i has weight)."""
    x = np.asarray(x, dtype=np.float64)
    good = np.isfinite(x)
    w = np.asarray(weights, dtype=np.float64) * good
    den = w.sum(axis=-1)
    num = w @ np.where(good, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _validate_track(name: str, track: Track) -> None:
    """A track is registered only with a non-empty `reference` (the paper it follows)."""
    ref = getattr(track, "reference", "")
    if not isinstance(ref, str) or not ref.strip():
        raise RegistryError(f"track '{name}' has no reference; set `reference` to the paper it follows "
                            "(authors, year, title, link — see benchmark.references)")


TRACKS: Registry[Track] = Registry("track", group="xaibench.tracks", validate=_validate_track)


def get_track(name: str) -> Track:
    _ensure_builtin()
    return TRACKS.get(name)


def _ensure_builtin() -> None:
    import benchmark.tracks.aixi  # noqa: F401  (registers itself)
    import benchmark.tracks.idc  # noqa: F401
    import benchmark.tracks.rcnn  # noqa: F401
    import benchmark.tracks.trust  # noqa: F401
    import benchmark.tracks.robustness  # noqa: F401
