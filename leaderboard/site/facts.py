"""What the site's pages say beside the numbers, each read from the one place it is kept: a submission's
`submission.toml` (its installed copy), the model quality a Result carries, the metric and track
registries (descriptions, ranges, references), and the control warning a board earns."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.submission import Submission
    from leaderboard.boards import Board, Row

__all__ = ["MetricDoc", "SubmissionInfo", "control_warning", "installed_submissions", "is_control", "metric_doc",
           "model_quality", "other_tracks", "quality_floor", "submission_info", "track_reference"]


@dataclass(frozen=True)
class SubmissionInfo:
    """What the installed copy of a submission says of itself (its `submission.toml` and code hash)."""

    description: str
    modalities: list[str]
    needs_gradients: bool
    needs_segments: bool
    deterministic: bool
    default_parameters: dict[str, Any]
    role: str  # method / control / reference (benchmark.submission.ROLES)
    hash: str  # of the installed code
    version: str
    reference: str  # the method's paper ("" when none is given)


def installed_submissions() -> dict[str, Submission]:
    """Every installed submission by name (`benchmark.submission.discover`); {} when discovery fails."""
    try:
        from benchmark.submission import discover

        return discover()
    except Exception:  # a broken plugin must not stop the site
        return {}


def submission_info(base: str, installed: dict[str, Submission] | None = None) -> SubmissionInfo | None:
    """The installed submission `base` (capabilities, description, role, code hash), or None when it is not
    installed or cannot be read. `installed`: `installed_submissions()` (looked up when not given)."""
    try:
        sub = (installed if installed is not None else installed_submissions()).get(base)
        if sub is None:
            return None
        return SubmissionInfo(description=sub.description, modalities=list(sub.modalities),
                              needs_gradients=sub.needs_gradients, needs_segments=sub.needs_segments,
                              deterministic=sub.deterministic, default_parameters=dict(sub.parameters),
                              role=sub.role, hash=sub.hash, version=sub.version, reference=sub.reference)
    except Exception:  # a broken plugin must not stop the site
        return None


def is_control(base: str, info: SubmissionInfo | None = None) -> bool:
    """A control: its `submission.toml` says `role = "control"` (`info`: `submission_info`; looked up
    among the installed submissions when not given)."""
    info = info if info is not None else submission_info(base)
    return bool(info and info.role == "control")


def quality_floor(model: dict[str, Any]) -> dict[str, Any]:
    """The track's quality floor a Result's model info carries (`quality`: metric, value, floor,
    meets_floor — benchmark.tracks.aixi / rcnn), or {} when it carries none."""
    q = model.get("quality")
    return q if isinstance(q, dict) and isinstance(q.get("floor"), (int, float)) and q.get("metric") else {}


def model_quality(model: dict[str, Any]) -> list[tuple[str, float, float | None]]:
    """(name, value, floor or None) of every quality figure a Result's model info records: R² and
    accuracy from `validation` / `scores` (nested dicts searched one level deep), and the track's floor
    metric (`quality`) when it is neither. The floor is only ever the track's own, as the Result carries
    it; a figure without one has None (the site keeps no thresholds of its own)."""
    found: list[tuple[str, float, float | None]] = []
    floor = quality_floor(model)
    thresholds = {floor["metric"]: float(floor["floor"])} if floor else {}

    def visit(d: dict[str, Any], where: str) -> None:
        for k, v in d.items():
            if isinstance(v, dict) and where == "":
                visit(v, f"{k} ")
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                continue
            low = k.lower()
            kind = "r2" if low in ("r2", "r²", "r_squared") else "accuracy" if low in ("accuracy", "acc") else None
            if kind:
                found.append((f"{where}{'R²' if kind == 'r2' else 'accuracy'}".strip(), float(v),
                              thresholds.get(kind)))

    for key in ("validation", "scores"):
        if isinstance(model.get(key), dict):
            visit(model[key], "")
    if floor and floor["metric"] not in ("r2", "accuracy") and isinstance(floor.get("value"), (int, float)):
        found.append((str(floor["metric"]), float(floor["value"]), float(floor["floor"])))
    return found


@dataclass(frozen=True)
class MetricDoc:
    """A metric as the registry (`benchmark.metrics.METRICS`) describes it; a metric this install does not
    know has its name as label and nothing else."""

    label: str
    description: str = ""
    range: tuple[float, float] | None = None
    direction: str | None = None  # "lower" / "higher" is better
    reference: str = ""  # the paper the metric follows


def metric_doc(name: str) -> MetricDoc:
    """The registry's record of metric `name` (`MetricDoc`)."""
    try:
        from benchmark.metrics import METRICS

        m = METRICS.get(name)
    except Exception:  # a metric this install does not know
        return MetricDoc(label=name)
    return MetricDoc(label=m.label, description=m.description, range=m.range, direction=m.direction,
                     reference=m.reference)


def track_reference(name: str) -> str:
    """The registered track's `reference` (the paper it follows), or '' for a track this install lacks."""
    try:
        from benchmark.tracks import get_track

        return get_track(name).reference
    except Exception:  # noqa: BLE001 - a board of a track this install does not know
        return ""


def other_tracks(shown: set[str]) -> list[tuple[str, str, str]]:
    """Registered tracks without a board (name, description, reference)."""
    try:
        from benchmark.tracks.base import TRACKS, _ensure_builtin

        _ensure_builtin()
        return [(n, t.description, t.reference) for n, t in TRACKS.items() if n not in shown]
    except Exception:  # a broken track registry must not stop the site
        return []


def control_warning(board: Board) -> str | None:
    """A warning when a control's primary value beats the median of the ranked methods' values (the
    rows say what they are: `Row.role`); the track's `control_note` says why that matters, or a generic
    reason for a track this install does not know."""
    def value(row: Row) -> float | None:
        m = row.metrics.get(board.primary_metric)
        if m is None or m.mean is None:
            return None
        return -m.mean if board.direction == "lower" else m.mean

    methods = [v for r in board.rows if r.rank is not None and r.role == "method" and (v := value(r)) is not None]
    if not methods:
        return None
    median = statistics.median(methods)
    above = [r for r in board.rows if r.role == "control" and (v := value(r)) is not None and v > median]
    if not above:
        return None
    label = board.labels.get(board.primary_metric, board.primary_metric)
    who = ", ".join(f"{r.submission} ({label} {r.metrics[board.primary_metric].mean:.4g})" for r in above)
    head = (f"A control scores better than the median of the {len(methods)} ranked method(s) on {label}: {who}. ")
    try:
        from benchmark.tracks import get_track

        note = get_track(board.track).control_note
    except Exception:  # noqa: BLE001 - a board of a track this install does not know: the generic reason
        note = None
    return head + (note or "A control never looks at the model, so on this board the metric does not separate "
                   "explainers from chance — often because the model under test has not learnt the function the "
                   "ground truth describes (see its quality below).")
