"""The Track contract (metadata-first, after MTEB's `TaskMetadata`).

A track declares its `TrackMetadata` once — its name, the resource family it reads, the models it can
evaluate on a resource, its metrics and main score, the paper it follows — and says how to turn a
resource split into `Instances`: inputs for submissions, ground truth kept by the harness.
Submissions only ever see `Instances.batch(...)`, which carries no ground truth.

The built-in tracks register themselves (`register_track`) when their modules are imported; the
package (`benchmark.tracks`) names those modules and `TRACKS` imports them on its first lookup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from benchmark.contracts import Batch
from benchmark.errors import XaibenchError
from benchmark.metrics import METRICS, Metric
from benchmark.metrics.base import require_reference
from benchmark.registry import MetadataError, Registry
from benchmark.store.results import MetricSummary
from benchmark.submission import KINDS, MODALITIES

_SLUG = re.compile(r"[a-z][a-z0-9-]*")


LEXICON_ASSET = "lexicon"  # the asset name: a worker finds it through $XAIBENCH_ASSET_LEXICON


def lexicon_asset(resource) -> dict[str, Path]:
    """{"lexicon": folder} when `resource`'s generator wrote a lexicon — the class log-odds of the resource's
    training split (`generators.lexicon.write_lexicon`; issue #50: what the data-prior controls read) in
    `<root>/lexicon/<params["lexicon"]>/` —, else {} (a resource built before lexicons existed, or none)."""
    name = (getattr(resource, "params", None) or {}).get("lexicon")
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        return {}
    folder = Path(resource.root) / "lexicon" / name
    return {LEXICON_ASSET: folder} if folder.is_dir() else {}


@dataclass(frozen=True, kw_only=True)
class TrackMetadata:
    """What a track is, declared once and validated where it is declared (a `MetadataError` naming
    the track): a slug name and resource family, a non-empty reference, the main score among the
    metrics, and a known modality and submission kind (`benchmark.submission.MODALITIES`, `KINDS`)."""

    name: str  # registry key, e.g. "aixi"; also the CLI's and the boards' name
    description: str  # one line for `xaibench list` and the site
    reference: str  # the paper(s) the track follows: authors, year, title, link (benchmark.references)
    resource: str  # the resource family it reads (`<family>/<config>` names, `xaibench-<family>` repos)
    main_score: str  # the primary metric: boards rank by it
    metrics: tuple[str, ...]  # every metric the track scores, the main score among them
    models: tuple[str, ...]  # model names the track can build from a resource
    modality: str = "image"  # "image" or "text" (what submissions must support)
    default_split: str = "validation"
    submission_kind: str = "explainer"  # "explainer" (explain) or "oracle" (fit once, then judge)
    # why a control (random, uniform, position) may rank above the median explainer on this track's
    # boards; the site prints it with its warning (None: the generic reason, an under-trained model)
    control_note: str | None = None
    # the boards' ranking gate ({"metric", "min", "beat_controls"}, `leaderboard.verdicts`): declared by the
    # track, never read from a Result, so no contributor's file can move another's row below it (None: none)
    rank_gate: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        owner = f"track {self.name!r}"
        if not isinstance(self.name, str) or not _SLUG.fullmatch(self.name):
            raise MetadataError(f"{owner}: name must be a lower-case slug (letters, digits, '-')")
        if not isinstance(self.description, str) or not self.description.strip():
            raise MetadataError(f"{owner}: description is empty")
        require_reference(self.reference, owner)
        if not isinstance(self.resource, str) or not _SLUG.fullmatch(self.resource):
            raise MetadataError(f"{owner}: resource family {self.resource!r} is not a lower-case slug "
                                "(the <family> of `<family>/<config>` resource names)")
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(self, "models", tuple(self.models))
        if not self.metrics or len(set(self.metrics)) != len(self.metrics):
            raise MetadataError(f"{owner}: metrics {self.metrics} must be non-empty and without repeats")
        if self.main_score not in self.metrics:
            raise MetadataError(f"{owner}: main score {self.main_score!r} is not one of its metrics "
                                f"({', '.join(self.metrics)})")
        if not self.models:
            raise MetadataError(f"{owner}: models is empty; name the models it can build from a resource")
        if self.modality not in MODALITIES:
            raise MetadataError(f"{owner}: modality {self.modality!r} is unknown; must be one of "
                                f"{', '.join(MODALITIES)}")
        if self.submission_kind not in KINDS:
            raise MetadataError(f"{owner}: submission kind {self.submission_kind!r} is unknown; must be one of "
                                f"{', '.join(KINDS)}")
        if not isinstance(self.default_split, str) or not self.default_split.strip():
            raise MetadataError(f"{owner}: default split is empty")


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
        """{instance id: position} over `ids`."""
        return {i: n for n, i in enumerate(self.ids)}

    def batch(self, positions: Sequence[int], seed: int) -> Batch:
        """The `Batch` submissions see for `positions`: ids, inputs, segments and the seed; never truths."""
        return Batch.of(self.ids, self.inputs, self.segments, positions, seed)


class Track:
    """A resource family's evaluation: declare `metadata = TrackMetadata(...)` on the subclass,
    override the methods below, and register an instance with `register_track(MyTrack())`.

    The metadata's fields read as attributes (`name`, `reference`, `modality`, `models`, ...;
    `family` is its `resource`, `primary_metric` its `main_score`, and `metrics` lists the main score
    first)."""

    metadata: ClassVar[TrackMetadata]
    score_chunk: int | None = 250  # instances per `score` call; None = every instance in one call
    # the randomisation test (`benchmark.variant_runs.randomisation`, Adebayo et al. 2018): `xaibench evaluate`
    # also runs each submission on a randomised copy of the model; a track where that does not apply sets it False
    # and says why
    randomisation_test: ClassVar[bool] = True
    randomisation_note: ClassVar[str] = ""
    # whether the test's score criterion applies (a method is model-blind when its primary score on the randomised
    # model is not worse beyond the noise): False where the primary metric is not agreement with a ground truth of
    # the model but a property a randomised model's maps have as well (the robustness board's stability under an
    # attack); then only the maps' similarity decides, and `randomisation_score_note` says why
    randomisation_score_rule: ClassVar[bool] = True
    randomisation_score_note: ClassVar[str] = ""
    # hidden copies (`benchmark.models.variants.hidden`, issue #50): why this track's boards have none ("" where
    # `hidden_copy` builds them)
    no_hidden_copy: ClassVar[str] = "its ground truth does not come from a model a secret could redraw"
    # the ground truth a board publishes with its data, as a map an explainer could return (issue #58): the key of
    # `Instances.truths` holding, per instance, a map of the explanation's shape that scores perfectly on the published
    # model — the strongest public data prior on a hidden copy (`benchmark.published_truth`, read by the built-in
    # `published-truth` alone); None where the board publishes none
    published_truth: ClassVar[str | None] = None

    @property
    def name(self) -> str:
        """The registry key (`metadata.name`)."""
        return self.metadata.name

    @property
    def family(self) -> str:
        """The resource family the track reads (`metadata.resource`)."""
        return self.metadata.resource

    @property
    def description(self) -> str:
        """One line for `xaibench list` and the site (`metadata.description`)."""
        return self.metadata.description

    @property
    def reference(self) -> str:
        """The paper(s) the track follows (`metadata.reference`)."""
        return self.metadata.reference

    @property
    def modality(self) -> str:
        """"image" or "text" (`metadata.modality`)."""
        return self.metadata.modality

    @property
    def models(self) -> tuple[str, ...]:
        """Model names the track can build from a resource (`metadata.models`)."""
        return self.metadata.models

    @property
    def default_split(self) -> str:
        """The split evaluated when none is asked for (`metadata.default_split`)."""
        return self.metadata.default_split

    @property
    def submission_kind(self) -> str:
        """"explainer" or "oracle": what the track evaluates (`metadata.submission_kind`)."""
        return self.metadata.submission_kind

    @property
    def control_note(self) -> str | None:
        """Why a control may rank high on this track's boards, or None (`metadata.control_note`)."""
        return self.metadata.control_note

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric of the track, the main score first, the others in their declared order."""
        main = self.metadata.main_score
        return (main, *(m for m in self.metadata.metrics if m != main))

    @property
    def primary_metric(self) -> str:
        """The metric boards rank by (`metadata.main_score`)."""
        return self.metadata.main_score

    def metric_objects(self) -> list[Metric]:
        """The registered `Metric` of each of `metrics`, in that order."""
        return [METRICS.get(m) for m in self.metrics]

    def configs(self) -> list[str]:
        """The resource configs this track knows how to build (for `xaibench list`)."""
        return []

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """The `Instances` of `split` (the first `limit`, after the track's exclusions); tracks override it."""
        raise NotImplementedError

    def first_instances(self, resource, split: str, n: int) -> Instances:
        """The first `n` instances of `split` in evaluation order: a prefix of `instances(resource, split)` (what the
        randomisation test runs on under `--randomisation-limit`, `benchmark.variant_runs.randomisation`). Default:
        `instances(resource, split, n)`, where a limit takes the first n instances; a track whose `limit` counts
        something else (robustness: original samples) overrides it."""
        return self.instances(resource, split, n)

    def inputs_key(self, resource, split: str) -> tuple[str, str]:
        """(name, revision) of what submissions are shown; explanations are cached under it, so configs
        that differ only in ground truth (e.g. IDC's three PGTs) share them. Default: the resource."""
        return resource.name, resource.revision

    def build_model(self, resource, name: str, instances: Instances | None, **options: Any):
        """The model under test `name` for this resource: (`ModelSpec`, model_info dict). `instances`: the
        instances to be explained; None where the caller has none (a live attack's own texts).

        The spec is a model folder a worker loads by itself, or a black box the harness serves
        (`benchmark.models.spec`); a model built from ground truth must be served, never loaded."""
        raise NotImplementedError

    def use_model(self, instances: Instances, load: Callable[[], Any]) -> None:
        """Score `instances` with the model `load()` gives wherever the track's scoring reads the model under
        test (robustness: ERASER's faithfulness probes) — the randomised copy, in a randomised-model run
        (`benchmark.variant_runs.randomisation`). Default: the track's scoring reads no model."""

    def no_hidden_copy_of(self, model: str) -> str:
        """Why the board of `model` has no hidden copies, in one line; "" where `hidden_copy` builds them (a draw may
        still fail to build: `NoHiddenCopy` then says why). Cheap: nothing is built."""
        return f"no hidden copy on the {self.name} track: {self.no_hidden_copy}" if self.no_hidden_copy else ""

    def hidden_copy(self, resource, model: str, draw: Any, split: str,
                    limit: int | None = None) -> tuple[Any, dict[str, Any], Instances, dict[str, Any]]:
        """A hidden copy of the board's model drawn from `draw` (`benchmark.models.variants.hidden.Draw`): (the copy's
        `ModelSpec`, its model info, the `Instances` of `split` with the ground truth recomputed on the copy — the
        first `limit` —, the construction's statistics). Default: `NoHiddenCopy` with `no_hidden_copy`."""
        from benchmark.models.variants.hidden import NoHiddenCopy

        raise NoHiddenCopy(f"no hidden copy on the {self.name} track: {self.no_hidden_copy}")

    def derived_copy(self, resource, draw: Any) -> Any:
        """The derived resource of `draw` (`benchmark.models.variants.hidden.build_cached`) built by the construction
        this track's generator registers (`CONSTRUCTIONS`); `NoHiddenCopy` when none is installed."""
        from benchmark.errors import RegistryError
        from benchmark.models.variants.hidden import CONSTRUCTIONS, NoHiddenCopy, build_cached
        from benchmark.progress import console
        from benchmark.resources.store import load_resource

        try:
            construction = CONSTRUCTIONS.get(self.name)
        except RegistryError:
            raise NoHiddenCopy(f"no hidden copy on the {self.name} track: no construction is installed (the "
                               f"generators package registers it; `pip install -e .`)") from None
        root = build_cached(construction, resource, draw,
                            on_build=lambda m: console.print(m, markup=False, highlight=False))
        return load_resource(resource.name, root=root, hub=False)

    def truth_maps(self, resource, split: str) -> tuple[list[str], list[np.ndarray]]:
        """(ids, maps): every instance's published ground truth of `split` as a map (`published_truth`), what the
        built-in `published-truth` returns. Default: the track's instances of the split."""
        if self.published_truth is None:
            raise XaibenchError(f"the {self.name} track publishes no ground truth map")
        inst = self.instances(resource, split, None)
        return list(inst.ids), [np.asarray(m, dtype=np.float32) for m in inst.truths[self.published_truth]]

    def assets(self, resource) -> dict[str, Path]:
        """Read-only folders (no ground truth) every worker of this track gets, by name; the worker
        finds each through `XAIBENCH_ASSET_<NAME>` (`benchmark.isolation.sandbox.asset_env`). Default: the
        resource's lexicon (`lexicon_asset`) where its generator wrote one, else none."""
        return lexicon_asset(resource)

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

    def metric_params_of(self, extra: dict[str, Any]) -> dict[str, Any]:
        """The metric options a Result with this `extra` was scored with (what a re-score must use): its
        `metric_params`. A track whose defaults changed overrides it to name the defaults older Results had."""
        return dict(extra.get("metric_params") or {})

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


def _validate_track(name: str, track: object) -> None:
    """A track is registered only as a `Track` with valid `TrackMetadata` under the metadata's own name,
    every metric of which is registered (a MetadataError naming the track otherwise)."""
    meta = getattr(track, "metadata", None)
    if not isinstance(track, Track) or not isinstance(meta, TrackMetadata):
        raise MetadataError(f"track '{name}' declares no metadata; give its class "
                            "`metadata = TrackMetadata(name=..., reference=..., main_score=..., ...)`")
    if meta.name != name:
        raise MetadataError(f"track '{name}' is registered under another name than its metadata's "
                            f"'{meta.name}'; register it with `register_track`")
    unknown = [m for m in meta.metrics if m not in METRICS]
    if unknown:
        raise MetadataError(f"track '{name}': metric(s) {', '.join(unknown)} are not registered; import the "
                            "module that declares them before the track")


TRACKS: Registry[Track] = Registry("track", group="xaibench.tracks", validate=_validate_track)


def register_track(track: Track) -> Track:
    """Register `track` under its metadata's name (validated: `_validate_track`); returns it."""
    return TRACKS.register(track.metadata.name, track)


def get_track(name: str) -> Track:
    """The registered track `name` (the built-in tracks and entry points load on the first lookup)."""
    return TRACKS.get(name)


def _ensure_builtin() -> None:
    """Load the built-in tracks (and entry points) now; kept for callers that predate lazy loading."""
    TRACKS.load()
