"""Ranking: results → one ranked board per (track, resource, model), then Bradley–Terry summaries.

Pure functions over `benchmark.results.Result` objects; nothing here reads files or prints.

* `boards(results)` groups results by (track, resource name, model name). A board never mixes what
  the results were computed on: when results of one group come from different resource revisions,
  versions or splits, only those on the newest one (by `created`) are kept and the board carries a
  warning naming every dropped submission and its revision.
* A board ranks only results on the same instances (the same `coverage.ids_sha256`; results that did
  not record their coverage — schema 1 — count as one coverage per instance count `n`). When a board's
  results cover several sets of instances, it ranks the set with the most submissions (ties: the
  larger `n`, then the set holding the newest result) and carries a warning naming every other
  result and its coverage ("lime-text: first 300 of 1,598 instances"). So a `--limit 10` run never
  displaces a full run from a board the other submissions ran in full. `Board.coverage_text` states
  the ranked coverage ("1,598 instances (full split)").
* A submission appearing twice on the ranked coverage (e.g. two versions) keeps its newest result,
  also with a warning.
* Integrity (`Result.status`, see `benchmark.integrity`): a "modified" result (its file changed after
  xaibench wrote it) takes part in none of the choices above; it is shown as an unranked row
  (`Row.rank` None, after the ranked rows) with a warning naming its file. An "unsigned" result
  (no signature valid on this machine: schema 1, another machine's, hand-made) is ranked like a
  signed one and marked (`Row.status`), so older results stay visible. Any other status counts as
  "modified".
  Results read from a results repository (`leaderboard.repository.boards`) carry "verified" (a
  maintainer's signed re-run record holds for the file; trusted like "signed") or "self-reported"
  (ranked like "unsigned", marked).
  `boards(results, verified_only=True)` — what the static HTML board uses — keeps only "signed" (and
  "verified") results before any choice is made and names every left-out one in a warning, so a file that
  cannot be verified never changes which revision or coverage is ranked there.
* Roles (`submission.role` in the Result, from `submission.toml`): only *methods* are ranked.
  Controls (floors: random, constant, text-blind answers) and references (ceilings allowed to read
  more) are shown as marked rows at the place their primary value puts them, never ranked.
* Ranks come from a paired bootstrap (`benchmark.bootstrap`: 1,000 draws of the instances — or of
  the track's resampling units — with seed 0, the same draws for every row; seeds resampled too
  where a Result holds several seed runs). A row's rank is 1 + the number of methods significantly
  better than it (the 95 % interval of the paired difference excludes 0; `leaderboard.stats`), so
  rows the data cannot separate share a rank and are marked `tied`; `Row.interval` is the 95 %
  interval of its rank over the draws. Results without per-instance scores (older schemas) leave the
  board with point ranks (equal means share a rank, competition style: 1, 1, 3), no intervals, and a
  note saying why. A submission without a mean (every instance failed) ranks last.
* A ranking gate (`Result.extra["rank_gate"] = {"metric", "min", "beat_controls"}`, set by a track
  such as robustness): methods whose gate metric is below `min`, or (with `beat_controls`) not
  significantly better than the best control's, are ranked after every method that passes it.
* The verdict (`Board.verdict`): the board *discriminates* when its best method beats its best
  control on the primary metric by the paired bootstrap at 95 %; otherwise "does not discriminate"
  or "undefined", each with the reason. `Board.agreement`: Kendall τ-b between the primary metric's
  ranking of the methods and each other metric's (`Board.disagreeing`: those with τ < 0.5);
  `Row.all_metric` / `Row.all_metric_rank`: the methods' mean normalised rank across every metric
  (LATEC-style), a secondary ranking beside the primary one.
* `track_summary(boards)` / `overall(boards)`: submissions compared only where both entered. On every
  board that discriminates, each pair of ranked methods is one comparison (the better rank wins; a
  tie is half a win each way); a Bradley–Terry model fitted to them ranks the submissions
  (`leaderboard.stats.bradley_terry`), with 95 % rank intervals from 200 resamples of the boards
  (within each track, for `overall`, where each track's boards weigh 1 / its number of counted
  boards so every track counts once). Boards that do not discriminate, and controls and references,
  do not count; the summary names the boards left out and why.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable

import numpy as np

from benchmark.errors import XaibenchError
from benchmark.results import STATUSES, MetricSummary, Result, describe_coverage
from leaderboard import stats

__all__ = [
    "AGREEMENT_FLOOR",
    "Board",
    "Row",
    "Verdict",
    "SummaryRow",
    "TrackSummary",
    "boards",
    "competition_ranks",
    "overall",
    "track_summary",
]


@dataclass
class Row:
    """One submission on one board."""

    rank: int | None  # None: shown but not ranked (a modified result)
    submission: str
    version: str
    metrics: dict[str, MetricSummary]
    n_instances: int
    n_failed: int
    wall_time_s: float
    hash: str = ""
    created: str = ""
    status: str = "unsigned"  # "signed" / "unsigned" (shown "unverified") / "modified" (rank None)
    path: str = ""  # the file the result was read from ("" when built in memory)
    coverage: dict = field(default_factory=dict)
    fit_s: float | None = None  # an oracle's fit (TOKI: keyword identification), from the Result's extra
    role: str = "method"  # method (ranked) / control (a floor) / reference (a ceiling); see ROLES
    kind: str = "explainer"  # what the submission is: "explainer" or "oracle" (from its Result)
    interval: tuple[int, int] | None = None  # 95 % bootstrap interval of the rank (methods; None: undefined)
    tied: bool = False  # another method shares this rank: the data cannot separate them
    below_gate: str = ""  # why the method is ranked after those passing the board's gate ("" = passes)
    all_metric: float | None = None  # mean normalised rank across every metric (0 best, 1 worst)
    all_metric_rank: int | None = None  # the methods' order by `all_metric` (competition ranks)

    @property
    def ranked(self) -> bool:
        """The row has a rank (a method whose result may be ranked; not a control, reference or modified file)."""
        return self.rank is not None

    @property
    def marker(self) -> str:
        """What stands in the rank column of a row without a rank: its role, or the integrity mark."""
        if self.rank is not None:
            return ""
        return self.role if self.role in ("control", "reference") and self.status != "modified" else ""


AGREEMENT_FLOOR = 0.5  # Kendall τ below this: the primary metric disagrees with that metric


@dataclass
class Verdict:
    """Whether a board discriminates: its best method beats its best control beyond the noise."""

    status: str  # "discriminates" | "does not discriminate" | "undefined"
    reason: str
    best: str | None = None  # the best method
    control: str | None = None  # the best control
    diff: float | None = None  # best − control on the primary metric, oriented (positive = better)
    ci: tuple[float, float] | None = None  # its 95 % paired-bootstrap interval

    @property
    def discriminates(self) -> bool:
        """The best method beats the best control beyond the noise (status "discriminates")."""
        return self.status == "discriminates"

    @property
    def text(self) -> str:
        """The verdict in one line: "<status>: <reason>"."""
        return f"{self.status}: {self.reason}"


@dataclass
class Board:
    """One ranked table: the submissions evaluated on one (track, resource, model)."""

    track: str
    resource: str
    model: str
    revision: str
    resource_version: str
    split: str
    primary_metric: str
    direction: str  # of the primary metric: "lower" or "higher" is better
    metric_names: list[str]  # column order: primary first
    labels: dict[str, str]  # metric name -> short label (the name when the result gave none)
    directions: dict[str, str]  # metric name -> "lower" / "higher"
    rows: list[Row]
    warnings: list[str] = field(default_factory=list)
    coverage: dict | None = None  # the coverage of the ranked results (None: nothing ranked)
    verified_only: bool = False  # built with boards(..., verified_only=True)
    verdict: Verdict = field(default_factory=lambda: Verdict("undefined", "nothing ranked"))
    # metric -> (Kendall τ-b with the primary metric's ranking of the methods, or None, and why not)
    agreement: dict[str, tuple[float | None, str]] = field(default_factory=dict)
    intervals: str = ""  # why the board has no rank intervals ("" = it has them)
    gate: dict | None = None  # the ranking gate in force ({"metric", "min", "beat_controls"}) or None
    n_boot: int = 0  # bootstrap draws behind the intervals (0: none)
    model_note: str = ""  # the model under test's own quality figures (RCNN: selection vs Lei's targets)
    unranked: str = ""  # why no method is ranked (no floor on the board); "" = ranked

    @property
    def disagreeing(self) -> list[str]:
        """Metrics whose ranking disagrees with the primary one (τ < AGREEMENT_FLOOR)."""
        return [m for m, (tau, _) in self.agreement.items() if tau is not None and tau < AGREEMENT_FLOOR]

    @property
    def coverage_text(self) -> str:
        """The ranked coverage in words, e.g. "1,598 instances (full split)", "first 40 of 200 instances"."""
        return describe_coverage(self.coverage) if self.coverage else "no ranked results"

    @property
    def key(self) -> tuple[str, str, str]:
        """(track, resource, model): what the board is of, and how the boards are sorted."""
        return (self.track, self.resource, self.model)

    @property
    def title(self) -> str:
        """"track · resource · model", as pages and warnings name the board."""
        return f"{self.track} · {self.resource} · {self.model}"


@dataclass
class SummaryRow:
    """A submission in a track summary or the overall ranking (Bradley–Terry over shared boards)."""

    rank: int | None  # None: listed, not ranked (`unranked` says why)
    submission: str
    strength: float  # log Bradley–Terry strength (0 = the prior's reference; higher is better)
    entered: int  # counted boards entered
    total: int  # counted boards (that discriminate) in the track / overall
    wins: float  # share of its pairwise comparisons on shared boards that it won (a tie counts half)
    interval: tuple[int, int] | None = None  # 95 % rank interval over the board resamples that hold it
    tied: bool = False
    parts: dict[str, float] = field(default_factory=dict)  # board title -> its rank there
    unranked: str = ""  # why it is listed, not ranked ("" = ranked)


@dataclass
class TrackSummary:
    """A track's Bradley–Terry summary over its boards that discriminate, and why the others are not counted."""

    track: str
    n_boards: int
    rows: list[SummaryRow]
    counted: int = 0  # boards that discriminate (the only ones compared)
    left_out: list[str] = field(default_factory=list)  # "board title: why" for each board not counted


# --------------------------------------------------------------------------------------------------
# helpers


def _created_key(r: Result) -> float:
    """Sortable timestamp of `created` (ISO 8601); naive times count as UTC; unparseable → oldest."""
    text = (r.created or "").strip()
    if not text:
        return -math.inf
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return -math.inf
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def _newest_first(results: Iterable[Result]) -> list[Result]:
    """Newest `created` first; ties broken deterministically by submission name/version/hash."""
    rs = sorted(
        results,
        key=lambda r: (
            str(r.submission.get("name")),
            str(r.submission.get("version")),
            str(r.submission.get("hash")),
            str(r.resource.get("revision")),
        ),
    )
    return sorted(rs, key=_created_key, reverse=True)  # stable: ties keep the order above


def _on(r: Result) -> tuple[str, str, str]:
    """What a result was computed on, beyond the board key: (revision, version, split)."""
    return (
        str(r.resource.get("revision", "")),
        str(r.resource.get("version", "") or ""),
        str(r.resource.get("split", "")),
    )


def _describe_on(on: tuple[str, str, str]) -> str:
    revision, version, split = on
    text = f"revision {revision[:12] or '?'}"
    extras = [f"version {version}"] if version else []
    if split:
        extras.append(f"split {split}")
    return text + (f" ({', '.join(extras)})" if extras else "")


def _sub(r: Result) -> str:
    return f"{r.submission['name']} {r.submission['version']}".strip()


def competition_ranks(values: list[float | None], direction: str) -> list[int]:
    """Competition ranks (1, 1, 3) of `values`; None ranks after every number (all share it)."""
    sign = 1.0 if direction == "lower" else -1.0
    # round away float noise so that means equal to 12 significant digits tie
    keys = [None if v is None else float(f"{sign * v:.12g}") for v in values]
    present = [k for k in keys if k is not None]
    ranks = []
    for k in keys:
        if k is None:
            ranks.append(len(present) + 1)
        else:
            ranks.append(1 + sum(1 for other in present if other < k))
    return ranks


# --------------------------------------------------------------------------------------------------
# boards


def boards(results: Iterable[Result], verified_only: bool = False) -> list[Board]:
    """One ranked `Board` per (track, resource name, model name), sorted by that key.

    `verified_only`: rank only results whose `status` is "signed" (the rest are named in a warning)."""
    groups: dict[tuple[str, str, str], list[Result]] = defaultdict(list)
    for r in results:
        groups[(r.track, str(r.resource["name"]), str(r.model["name"]))].append(r)
    return [_board(key, groups[key], verified_only) for key in sorted(groups)]


# statuses a results repository's boards set (`leaderboard.repository.boards`), and those trusted as signed
REPOSITORY_STATUSES = ("verified", "self-reported")
TRUSTED = ("signed", "verified")


def _status(r: Result) -> str:
    """The result's integrity status; a value other than the known ones (e.g. one a verifier set) is not
    trusted: it counts as "modified"."""
    s = getattr(r, "status", "unsigned")
    return s if s in STATUSES + REPOSITORY_STATUSES else "modified"


def _file(r: Result) -> str:
    path = getattr(r, "path", None)
    return str(path) if path else "(no file)"


_WHY = {
    "modified": "changed after it was written",
    "unsigned": "no signature valid on this machine",
    "self-reported": "self-reported: no verification record under a configured public key",
}


def _coverage(r: Result) -> dict:
    cov = getattr(r, "coverage", None)
    return cov if isinstance(cov, dict) and cov else {"n": int(r.n_instances), "ids_sha256": None}


def _cov_key(r: Result) -> tuple[str, int]:
    """Results with equal keys cover the same instances: the ids digest, or the count when unrecorded."""
    cov = _coverage(r)
    digest = cov.get("ids_sha256")
    return (str(digest), -1) if digest else ("unrecorded", int(cov.get("n") or r.n_instances))


def _pick_coverage(ordered: list[Result]) -> tuple[list[Result], list[Result], str]:
    """(results on the ranked coverage, the others, warning or ""), `ordered` newest first."""
    groups: dict[tuple[str, int], list[Result]] = defaultdict(list)
    for r in ordered:
        groups[_cov_key(r)].append(r)
    if len(groups) <= 1:
        return ordered, [], ""

    def strength(k: tuple[str, int]) -> tuple:
        rs = groups[k]
        return (len({str(r.submission["name"]) for r in rs}), int(_coverage(rs[0]).get("n") or 0),
                max(_created_key(r) for r in rs), k)

    best = max(groups, key=strength)
    kept = groups[best]
    left = [r for r in ordered if _cov_key(r) != best]
    words: dict[tuple[str, int], str] = {k: describe_coverage(_coverage(rs[0])) for k, rs in groups.items()}
    if len(set(words.values())) < len(words):  # two sets of instances with the same description
        words = {k: w + (f" [ids {k[0][:8]}]" if k[1] == -1 else "") for k, w in words.items()}
    listing = "; ".join(f"{_sub(r)}: {words[_cov_key(r)]}" for r in left)
    names = len({str(r.submission["name"]) for r in kept})
    warning = (
        f"results cover {len(groups)} different sets of instances; ranking the {names} submission(s) on "
        f"{words[best]}. Not ranked ({len(left)}): {listing}. Re-run those on the same instances "
        f"(e.g. without --limit) to rank them."
    )
    return kept, left, warning


def _board(key: tuple[str, str, str], results: list[Result], verified_only: bool = False) -> Board:
    """The board of one (track, resource, model): the results it may rank chosen step by step (integrity,
    one resource revision, one set of instances, one result per submission), each step's warnings, the
    primary metric and the columns, then the ranks and the verdict (`_analyse`)."""
    track, resource, model = key
    warnings: list[str] = []
    ordered = _newest_first(results)
    candidates, unranked = _integrity(ordered, verified_only, warnings)
    kept_on, kept = _one_revision(candidates or ordered, candidates, warnings)
    kept, _, coverage_warning = _pick_coverage(kept)
    if coverage_warning:
        warnings.append(coverage_warning)
    chosen = _newest_per_submission(kept, warnings)
    low = _quality_warning(chosen)
    if low:
        warnings.append(low)
    primary = _primary_metric(chosen or unranked or ordered, warnings)
    names, labels, directions = _columns(primary, chosen + sorted(unranked, key=lambda r: str(r.submission["name"])))
    direction = directions[primary]

    a = _analyse(track, chosen, primary, names, directions)
    warnings += a.warnings
    rows = [_row(a.ranks[k], r, a, k) for k, r in enumerate(chosen)]
    rows = _order(rows, direction, primary)
    rows += sorted((_row(None, r) for r in unranked), key=lambda row: (row.submission, row.version, row.path))
    return Board(
        track=track,
        resource=resource,
        model=model,
        revision=kept_on[0],
        resource_version=kept_on[1],
        split=kept_on[2],
        primary_metric=primary,
        direction=direction,
        metric_names=names,
        labels=labels,
        directions=directions,
        rows=rows,
        warnings=warnings,
        coverage=dict(_coverage(_newest_first(chosen)[0])) if chosen else None,
        verified_only=verified_only,
        verdict=a.verdict,
        agreement=a.agreement,
        intervals=a.intervals,
        gate=a.gate,
        n_boot=a.n_boot,
        model_note=_model_note(chosen),
        unranked=a.unranked,
    )


def _integrity(ordered: list[Result], verified_only: bool, warnings: list[str]) -> tuple[list[Result], list[Result]]:
    """(candidates, shown unranked): a modified result takes part in no choice after this one (it is shown
    unranked); with `verified_only`, everything not signed is left out altogether. Warnings appended."""
    if verified_only:
        out = [r for r in ordered if _status(r) not in TRUSTED]
        if out:
            listing = "; ".join(f"{_sub(r)} ({_WHY[_status(r)]}: {_file(r)})" for r in out)
            warnings.append(
                f"left out {len(out)} result(s) this machine cannot verify: {listing}. Only results whose "
                f"signature holds here are published; re-run `xaibench evaluate` for them."
            )
        return [r for r in ordered if _status(r) in TRUSTED], []
    unranked = [r for r in ordered if _status(r) == "modified"]
    for r in unranked:
        warnings.append(
            f"{_file(r)} was changed after xaibench wrote it (its signature does not match): "
            f"{_sub(r)} is shown but not ranked and its numbers cannot be trusted. Check it with "
            f"`xaibench verify` or re-run `xaibench evaluate` for it."
        )
    return [r for r in ordered if _status(r) != "modified"], unranked


def _one_revision(newest_first: list[Result], candidates: list[Result],
                  warnings: list[str]) -> tuple[tuple[str, str, str], list[Result]]:
    """Never mix resource revisions / versions / splits: (the newest result's (revision, version, split),
    the candidates on it); a warning names the dropped ones."""
    kept_on = _on(newest_first[0])
    kept = [r for r in candidates if _on(r) == kept_on]
    dropped = [r for r in candidates if _on(r) != kept_on]
    if dropped:
        n_on = len({_on(r) for r in candidates})
        listing = "; ".join(f"{_sub(r)} on {_describe_on(_on(r))}" for r in dropped)
        warnings.append(
            f"results on {n_on} different resource revisions: showing only the newest, "
            f"{_describe_on(kept_on)}; dropped {len(dropped)} result(s): {listing}. "
            f"Re-run `xaibench evaluate` for them on the current revision."
        )
    return kept_on, kept


def _newest_per_submission(kept: list[Result], warnings: list[str]) -> list[Result]:
    """One row per submission (by name): its newest result of `kept` (newest first); a warning names the
    older ones dropped."""
    by_name: dict[str, list[Result]] = defaultdict(list)
    for r in kept:  # newest first
        by_name[str(r.submission["name"])].append(r)
    chosen: list[Result] = []
    for name in sorted(by_name):
        first, *rest = by_name[name]
        chosen.append(first)
        if rest:
            others = ", ".join(f"version {r.submission['version']} ({r.created or 'no date'})" for r in rest)
            warnings.append(
                f"submission '{name}' has {len(rest) + 1} results on this board: kept the newest, "
                f"version {first.submission['version']} ({first.created or 'no date'}); dropped {others}."
            )
    return chosen


def _quality_warning(chosen: list[Result]) -> str | None:
    """A model under test below its quality floor (e.g. an AIXI CNN that has not learned its function), as
    the first such Result's `model.quality` says it; None when every model meets its floor."""
    low = [r for r in chosen if (r.model.get("quality") or {}).get("meets_floor") is False]
    if not low:
        return None
    q = low[0].model["quality"]
    return (
        f"model under test below its quality floor: {q['message']} — so this board says little about the "
        "explainers." if q.get("message") else
        f"model under test below its quality floor: validation {q['metric']} {q['value']:.3f} < "
        f"{q['floor']} — it has not learned its function, so this board says little about the explainers "
        f"(retrain it, e.g. `xaibench train aixi` with more epochs or images)."
    )


def _primary_metric(named_by: list[Result], warnings: list[str]) -> str:
    """The metric most results name as primary (ties: the newest result's); a warning when they disagree."""
    counts = Counter(r.primary_metric for r in named_by)
    newest_primary = _newest_first(named_by)[0].primary_metric
    top = max(counts.values())
    primary = newest_primary if counts[newest_primary] == top else sorted(k for k, c in counts.items() if c == top)[0]
    if len(counts) > 1:
        named = ", ".join(f"{k} ({c})" for k, c in sorted(counts.items()))
        warnings.append(f"results disagree on the primary metric ({named}); ranking by '{primary}'.")
    return primary


def _columns(primary: str, results: list[Result]) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(metric names, labels, directions) of the columns: primary first, then in order of first appearance
    in `results`; a metric without a label is labelled by its name, the primary without a direction is
    "lower" is better."""
    names: list[str] = [primary]
    labels: dict[str, str] = {}
    directions: dict[str, str] = {}
    for r in results:
        for name, m in r.metrics.items():
            if name not in names:
                names.append(name)
            labels.setdefault(name, m.label or name)
            directions.setdefault(name, m.direction)
    labels.setdefault(primary, primary)
    directions.setdefault(primary, "lower")
    return names, labels, directions


def _model_note(results: list[Result]) -> str:
    """One line on the model under test from the newest result's model info: an RCNN's selection against
    Lei's targets (`selection`), else a quality floor (`quality`: metric, value, floor), else the track's
    scope note (`note`: e.g. which classes a trust set judges); "" without."""
    for r in _newest_first(results):
        info = r.model or {}
        sel = info.get("selection")
        if isinstance(sel, dict) and isinstance(sel.get("targets"), dict):
            from benchmark.models.rcnn_targets import describe

            try:
                text = describe(sel)
            except (KeyError, TypeError, ValueError):
                continue
            return "model under test: " + text + ("" if sel.get("meets_targets") else " — outside Lei's targets")
        q = info.get("quality")
        if isinstance(q, dict) and isinstance(q.get("value"), (int, float)) and q.get("metric"):
            floor = q.get("floor")
            return (f"model under test: validation {q['metric']} {q['value']:.3g}"
                    + (f" (floor {floor:.3g}: {'met' if q.get('meets_floor') else 'not met'})"
                       if isinstance(floor, (int, float)) else ""))
        if isinstance(info.get("note"), str) and info["note"]:  # a track's scope note (trust: judged classes)
            return info["note"]
    return ""


# --------------------------------------------------------------------------------------------------
# the statistics of one board


def _role(r: Result) -> str:
    role = str(r.submission.get("role", "method"))
    return role if role in ("method", "control", "reference") else "method"


@dataclass
class _Analysis:
    ranks: list[int | None]
    intervals_by_row: list[tuple[int, int] | None]
    tied: list[bool]
    below_gate: list[str]
    all_metric: list[float | None]
    all_metric_rank: list[int | None]
    verdict: Verdict
    agreement: dict[str, tuple[float | None, str]]
    intervals: str
    gate: dict | None
    n_boot: int
    warnings: list[str]
    unranked: str = ""


NO_FLOOR = ("unranked: no control Result on this board, so nothing says what an answer that ignores the input "
            "scores here (its floor) — evaluate a control on it (e.g. `xaibench evaluate random`, `uniform` or, "
            "for text, `position`) and the board is ranked")


def _draws(track: str, chosen: list[Result]) -> tuple[list[dict[str, np.ndarray]] | None, str]:
    """Per result, {metric: (B,) values} under the board's shared bootstrap draws — or (None, why not)."""
    from benchmark import bootstrap
    from benchmark.tracks import get_track

    if not chosen:
        return None, "nothing ranked"
    try:
        trk = get_track(track)
    except XaibenchError:
        return None, f"the track '{track}' is not installed here, so its results cannot be resampled"
    per = []
    for r in chosen:
        try:
            sc = r.scores()
        except XaibenchError as exc:
            return None, f"{_sub(r)}: {exc}"
        if sc is None and "live" in (r.extra or {}):
            return None, (f"{_sub(r)} is a live attack: its scored texts differ from explainer to explainer, so "
                          "there is no shared instance to resample in pairs (its metrics keep their own intervals)")
        if sc is None:
            return None, (f"{_sub(r)} carries no per-instance scores (written by an older xaibench); "
                          "re-run `xaibench evaluate` for it")
        per.append(sc)
    n = chosen[0].n_instances
    try:
        weights = bootstrap.draw_weights(trk.units(per[0].seed(0)[0], n))
        out = []
        for sc in per:
            runs = [sc.seed(k) for k in range(len(sc.seeds))]
            out.append(bootstrap.metric_draws(trk, runs, weights, bootstrap.draw_seed_weights(len(runs))))
    except (ValueError, KeyError, IndexError) as exc:
        return None, f"the per-instance scores could not be resampled ({type(exc).__name__}: {exc})"
    return out, ""


def _gate(chosen: list[Result], names: list[str]) -> dict | None:
    """The ranking gate the newest result declares (`extra.rank_gate`), when it names a board metric."""
    for r in _newest_first(chosen):
        g = (r.extra or {}).get("rank_gate")
        if isinstance(g, dict) and g.get("metric") in names:
            low = g.get("min")
            return {"metric": str(g["metric"]),
                    "min": float(low) if isinstance(low, (int, float)) and not isinstance(low, bool) else None,
                    "beat_controls": bool(g.get("beat_controls", False))}
    return None


def _analyse(track: str, chosen: list[Result], primary: str, names: list[str],
             directions: dict[str, str]) -> _Analysis:
    """Ranks, intervals, ties, the gate, the verdict and the metric agreement of a board's rows."""
    k = len(chosen)
    direction = directions[primary]
    roles = [_role(r) for r in chosen]
    points = {m: [(r.metrics[m].mean if m in r.metrics else None) for r in chosen] for m in names}
    methods = [i for i in range(k) if roles[i] == "method"]
    controls = [i for i in range(k) if roles[i] == "control"]
    draws, why = _draws(track, chosen)
    warnings: list[str] = []

    def d(i: int, m: str) -> np.ndarray:
        assert draws is not None
        return draws[i].get(m, np.full(len(next(iter(draws[i].values()))), np.nan))

    def better(i: int, j: int, m: str) -> stats.Separation:
        """Is j better than i on m (paired bootstrap, or the point values without draws)?"""
        pi, pj = points[m][i], points[m][j]
        if draws is None:
            if pi is None or pj is None:
                return stats.Separation(None, None, False)
            diff = float(stats.oriented(np.array([pj - pi]), directions[m])[0])
            return stats.Separation(diff, None, diff > 0)
        return stats.compare(d(i, m), d(j, m), pi, pj, directions[m])

    # the gate: methods below it rank after those that pass
    gate = _gate(chosen, names)
    below = [""] * k
    if gate:
        gm, gdir = gate["metric"], directions[gate["metric"]]
        best_control = _best(controls, points[gm], gdir)
        for i in methods:
            v = points[gm][i]
            if v is None:
                below[i] = f"no {gm} value"
            elif gate["min"] is not None and stats.oriented(np.array([v - gate["min"]]), gdir)[0] < 0:
                below[i] = f"{gm} {v:.4g} below the floor {gate['min']:.4g}"
            elif gate["beat_controls"] and best_control is not None and not better(best_control, i, gm).better:
                below[i] = f"{gm} not better than the control {chosen[best_control].submission['name']}'s"
    # groups: 0 = passes the gate, 1 = below it, 2 = no primary value (every instance failed)
    groups = {i: (2 if points[primary][i] is None else 1 if below[i] else 0) for i in methods}

    ranks: list[int | None] = [None] * k
    tied = [False] * k
    intervals: list[tuple[int, int] | None] = [None] * k
    if methods:
        if draws is not None:
            sep = np.array([[better(i, j, primary).better if i != j else False for j in methods] for i in methods])
            r, t = stats.display_ranks(sep, [groups[i] for i in methods])
            ivs = stats.rank_intervals([d(i, primary) for i in methods], direction, [groups[i] for i in methods])
        else:
            order = [(groups[i], points[primary][i]) for i in methods]
            r = []
            for g, v in order:
                ahead = sum(1 for g2, _ in order if g2 < g)
                same = [v2 for g2, v2 in order if g2 == g]
                r.append(ahead + competition_ranks(same, direction)[same.index(v)])
            t = [r.count(x) > 1 for x in r]
            ivs = [None] * len(methods)
        for pos, i in enumerate(methods):
            ranks[i], tied[i], intervals[i] = r[pos], t[pos], ivs[pos]

    # no floor on the board: the methods are shown, not ranked (a method that ignores the input could
    # otherwise come first, and nothing on the board would say so)
    unranked = ""
    if methods and not controls:
        unranked = NO_FLOOR
        for i in methods:
            ranks[i], tied[i], intervals[i] = None, False, None

    # the verdict: the best method against the best control
    verdict = _verdict(chosen, methods, controls, ranks, points[primary], direction, better, why, primary)
    if gate and gate["beat_controls"] and verdict.status == "does not discriminate":
        verdict = _gated_verdict(verdict, chosen, methods, controls, ranks, below, points, directions, better,
                                 gate["metric"], primary)

    # agreement of the metrics, and the secondary (all-metric) ranking, over the methods
    agreement: dict[str, tuple[float | None, str]] = {}
    for m in names:
        if m != primary:
            agreement[m] = stats.agreement([points[primary][i] for i in methods], [points[m][i] for i in methods],
                                           direction, directions[m])
    nr = stats.mean_normalised_rank({m: [points[m][i] for i in methods] for m in names},
                                    {m: directions[m] for m in names}) if methods else []
    all_metric: list[float | None] = [None] * k
    all_rank: list[int | None] = [None] * k
    present = [(i, v) for i, v in zip(methods, nr) if v is not None]
    if len(present) >= 2:
        cr = competition_ranks([v for _, v in present], "lower")
        for (i, v), rank in zip(present, cr):
            all_metric[i], all_rank[i] = v, rank
    return _Analysis(ranks, intervals, tied, below, all_metric, all_rank, verdict, agreement, why if draws is None
                     else "", gate, 0 if draws is None else _n_boot(), warnings, unranked)


def _n_boot() -> int:
    from benchmark.bootstrap import N_BOOT

    return N_BOOT


def _best(rows: list[int], values: list[float | None], direction: str) -> int | None:
    """The row of `rows` with the best value (None when no row has one); ties: the first."""
    valued = [i for i in rows if values[i] is not None]
    if not valued:
        return None
    key = stats.oriented(np.array([values[i] for i in valued], dtype=np.float64), direction)
    return valued[int(np.argmax(key))]


def _gated_verdict(plain: Verdict, chosen, methods, controls, ranks, below, points, directions, better,
                   gm: str, primary: str) -> Verdict:
    """The verdict of a board whose gate asks methods to beat the controls on `gm` (robustness: ERASER
    comprehensiveness), when a control wins on the primary metric: a text-blind control is robust by
    construction, so the question is whether the methods that pass the gate separate from the controls
    on `gm` — then the board discriminates, and the reason says the control's primary score is free."""
    passing = [i for i in methods if not below[i] and ranks[i] is not None]
    control = _best(controls, points[gm], directions[gm])
    best = _best(passing, points[gm], directions[gm])
    if best is None or control is None:
        return Verdict(plain.status, plain.reason + f"; no method passes the {gm} gate", plain.best, plain.control,
                       plain.diff, plain.ci)
    sep = better(control, best, gm)
    name_b, name_c = str(chosen[best].submission["name"]), str(chosen[control].submission["name"])
    if not sep.better or sep.ci is None:
        return plain
    return Verdict("discriminates",
                   f"on the gate metric {_contrast(name_b, name_c, gm, sep.diff, sep.ci)}; on the primary metric a "
                   "control scores higher "
                   f"({_contrast(plain.best, plain.control, primary, plain.diff, plain.ci)}) — it "
                   "never reads the input, so its score there is free, and only methods that pass the gate are ranked "
                   "first", name_b, name_c, sep.diff, sep.ci)


def _contrast(best: str | None, control: str | None, metric: str, diff: float | None,
              ci: tuple[float, float] | None) -> str:
    """'best vs the control c: Δ metric = d, 95% CI [lo, hi] (paired bootstrap, oriented so + is better)'."""
    if diff is None or ci is None:
        return f"{best} vs the control {control}: Δ {metric} undefined"
    return (f"{best} vs the control {control}: Δ {metric} = {diff:+.4g}, 95% CI [{ci[0]:+.4g}, {ci[1]:+.4g}] "
            "(paired bootstrap, oriented so + is better)")


def _verdict(chosen, methods, controls, ranks, values, direction, better, why, primary) -> Verdict:
    if not methods:
        return Verdict("undefined", "no method on this board (only controls or references)")
    if len(chosen) < 2:
        return Verdict("undefined", "only one submission on this board: nothing to compare")
    if not controls:
        return Verdict("undefined", "no control evaluated on this board (e.g. `xaibench evaluate random` or "
                       "`uniform`), so nothing says what chance scores here")
    top = [i for i in methods if ranks[i] is not None and values[i] is not None]
    if not top:
        return Verdict("undefined", f"no method has a {primary} value")
    best = min(top, key=lambda i: (ranks[i], -float(stats.oriented(np.array([values[i]]), direction)[0])))
    control = _best(controls, values, direction)
    if control is None:
        return Verdict("undefined", f"no control has a {primary} value")
    name_b, name_c = str(chosen[best].submission["name"]), str(chosen[control].submission["name"])
    if why:
        return Verdict("undefined", f"no paired bootstrap: {why}", name_b, name_c)
    sep = better(control, best, primary)
    if sep.ci is None:
        return Verdict("undefined", f"the difference between {name_b} and {name_c} is undefined in most draws",
                       name_b, name_c, sep.diff)
    words = _contrast(name_b, name_c, primary, sep.diff, sep.ci)
    if sep.better:
        return Verdict("discriminates", words, name_b, name_c, sep.diff, sep.ci)
    return Verdict("does not discriminate", words + "; its ranks are not used in the summaries",
                   name_b, name_c, sep.diff, sep.ci)


def _order(rows: list[Row], direction: str, primary: str) -> list[Row]:
    """Methods by (rank, value, name); each control / reference inserted before the first method its
    primary value beats (so it stands where its score puts it); rows without a value last."""
    def value(row: Row) -> float:
        m = row.metrics.get(primary)
        v = None if m is None else m.mean
        return -math.inf if v is None else float(stats.oriented(np.array([v]), direction)[0])

    methods = sorted([r for r in rows if r.rank is not None],
                     key=lambda r: (r.rank, -value(r), r.submission, r.version))
    others = sorted([r for r in rows if r.rank is None], key=lambda r: (-value(r), r.submission, r.version))
    out = list(methods)
    for o in others:
        pos = next((k for k, r in enumerate(out) if r.rank is not None and not r.below_gate and value(o) > value(r)),
                   len(out))
        out.insert(pos, o)
    return out


def _row(rank: int | None, r: Result, a: "_Analysis | None" = None, k: int = 0) -> Row:
    """The board row of result `r`; with the board's analysis `a`, the `k`-th ranked row's interval, tie,
    gate and all-metric order as well."""
    row = Row(
        rank=rank,
        submission=str(r.submission["name"]),
        version=str(r.submission["version"]),
        metrics=dict(r.metrics),
        n_instances=int(r.n_instances),
        n_failed=int(r.n_failed),
        wall_time_s=float(r.wall_time_s),
        hash=str(r.submission.get("hash", "")),
        created=r.created,
        status=_status(r),
        path=str(getattr(r, "path", None) or ""),
        coverage=dict(_coverage(r)),
        fit_s=_fit(r),
        role=_role(r),
        kind=str(r.submission.get("kind") or "explainer"),
    )
    if a is not None:
        row.interval, row.tied, row.below_gate = a.intervals_by_row[k], a.tied[k], a.below_gate[k]
        row.all_metric, row.all_metric_rank = a.all_metric[k], a.all_metric_rank[k]
    return row


def _fit(r: Result) -> float | None:
    v = (r.extra or {}).get("fit_s")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# --------------------------------------------------------------------------------------------------
# summaries


N_BOARD_BOOT = 200  # resamples of the boards behind a summary's rank intervals


def _comparisons(board: Board, index: dict[str, int], weight: float) -> list[tuple[int, int, float]]:
    """Each pair of ranked methods on the board: (winner, loser, weight); a tie is two half-weights."""
    rows = [(index[r.submission], r.rank) for r in board.rows
            if r.rank is not None and r.role == "method" and r.submission in index]
    out: list[tuple[int, int, float]] = []
    for a in range(len(rows)):
        for b in range(a + 1, len(rows)):
            (i, rank_i), (j, rank_j) = rows[a], rows[b]
            if rank_i < rank_j:
                out.append((i, j, weight))
            elif rank_j < rank_i:
                out.append((j, i, weight))
            else:
                out += [(i, j, weight / 2), (j, i, weight / 2)]
    return out


def _counted(boards: list[Board]) -> tuple[list[Board], list[str]]:
    """(boards that discriminate, "title: why" for each left out)."""
    kept = [b for b in boards if b.verdict.discriminates]
    left = [f"{b.title}: {b.verdict.status} ({b.verdict.reason})" for b in boards if not b.verdict.discriminates]
    return kept, left


MIN_SHARE = 0.5  # a submission that entered fewer than this share of the counted boards is listed, not ranked


def _present(boards: list[Board], index: dict[str, int]) -> np.ndarray:
    """(n,) bool: the methods with at least one comparison on `boards` (a strength that is not the prior's)."""
    out = np.zeros(len(index), dtype=bool)
    for b in boards:
        for win, lose, _w in _comparisons(b, index, 1.0):
            out[win] = out[lose] = True
    return out


def _bt_rows(strata: list[list[Board]], weights: list[float], total: int | None = None,
             kind: str | None = None) -> list[SummaryRow]:
    """Bradley–Terry summary of the methods on `strata` (lists of counted boards; stratum s's boards
    weigh weights[s]); rank intervals from resampling boards within each stratum.

    Rules (issue #36): a method is *ranked* only when it met another method on some board (else its
    strength is the prior's, θ = 0, which says nothing) and entered at least `MIN_SHARE` of the counted
    boards (`total`, default all of `strata`'s); the others are listed after the ranked rows, rank None.
    In a board resample a method is present when it has a comparison there; two methods are compared
    only over the resamples where both are present (j ahead of i when θ_j > θ_i in ≥ 97.5 % of those, and
    at least half the resamples hold both), and a method's rank interval comes only from the resamples
    that hold it, its rank there counted among the ranked methods present. Fewer than 2 counted boards:
    no interval (resampling one board gives the same board every time, a point, not an interval)."""
    boards = [b for st in strata for b in st]
    names = sorted({r.submission for b in boards for r in b.rows if r.rank is not None and r.role == "method"
                    and (kind is None or r.kind == kind)})
    if not names:
        return []
    index = {n: k for k, n in enumerate(names)}
    n_items = len(names)
    total = len(boards) if total is None else total

    def fit(chosen: list[list[Board]]) -> tuple[np.ndarray, np.ndarray]:
        comps = [c for st, w in zip(chosen, weights) for b in st for c in _comparisons(b, index, w)]
        return np.log(stats.bradley_terry(n_items, comps)), _present([b for st in chosen for b in st], index)

    theta, met = fit(strata)
    parts: dict[str, dict[str, float]] = {n: {} for n in names}
    for b in boards:
        for r in b.rows:
            if r.rank is not None and r.role == "method" and r.submission in index:
                parts[r.submission][b.title] = float(r.rank)
    entered = np.array([len(parts[n]) for n in names])
    rankable = met & (entered >= MIN_SHARE * total)
    rng = np.random.default_rng(0)
    fits = [fit([[st[j] for j in rng.integers(0, len(st), len(st))] if st else [] for st in strata])
            for _ in range(N_BOARD_BOOT)]
    draws = np.array([f[0] for f in fits])  # (B, n)
    here = np.array([f[1] for f in fits]) & rankable[None, :]  # (B, n): present and rankable in the draw
    idx = [k for k in range(n_items) if rankable[k]]
    behind = np.zeros((len(idx), len(idx)), dtype=bool)
    for a, i in enumerate(idx):
        for c, j in enumerate(idx):
            both = here[:, i] & here[:, j]
            if i != j and both.sum() >= 0.5 * N_BOARD_BOOT:
                behind[a, c] = stats.larger_share(draws[both, j], draws[both, i]) >= 0.975
    r_ranked, t_ranked = stats.display_ranks(behind) if idx else ([], [])
    ranks: list[int | None] = [None] * n_items
    tied = [False] * n_items
    ivs: list[tuple[int, int] | None] = [None] * n_items
    for a, i in enumerate(idx):
        ranks[i], tied[i] = r_ranked[a], t_ranked[a]
        rows_i = here[:, i]
        if total >= 2 and rows_i.any():
            key = np.where(here, draws, -np.inf)
            rk = 1 + np.sum(key[rows_i] > key[rows_i, i][:, None] + 1e-9 * (1 + np.abs(key[rows_i, i][:, None])),
                            axis=1)
            lo, hi = np.quantile(rk, [0.025, 0.975])
            ivs[i] = (int(math.floor(lo)), int(math.ceil(hi)))
    wins = np.zeros(n_items)
    games = np.zeros(n_items)
    for st, _w in zip(strata, weights):  # the raw wins are unweighted
        for b in st:
            for win, lose, wt in _comparisons(b, index, 1.0):
                wins[win] += wt
                games[win] += wt
                games[lose] += wt
    rows = [SummaryRow(ranks[k], n, float(theta[k]), int(entered[k]), total,
                       float(wins[k] / games[k]) if games[k] else float("nan"), ivs[k], tied[k],
                       dict(sorted(parts[n].items())),
                       "" if rankable[k] else (f"entered {entered[k]} of {total} boards (< {MIN_SHARE:.0%})"
                                               if met[k] else "met no other method: its strength is the prior's"))
            for k, n in enumerate(names)]
    rows.sort(key=lambda r: (r.rank is None, r.rank or 0, -r.strength, r.submission))
    return rows


def track_summary(boards: Iterable[Board]) -> list[TrackSummary]:
    """Per track (sorted by name): the methods ranked by a Bradley–Terry model of their pairwise
    results on the track's boards that discriminate (see the module docstring); `left_out` names the
    boards not counted and why."""
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        per_track[b.track].append(b)
    out = []
    for track in sorted(per_track):
        kept, left = _counted(per_track[track])
        out.append(TrackSummary(track, len(per_track[track]), _bt_rows([kept], [1.0]) if kept else [], len(kept),
                                left))
    return out


def overall(boards: Iterable[Board], kind: str = "explainer") -> list[SummaryRow]:
    """The methods of one `kind` (explainers, or oracles: they never meet on a board and do different
    jobs, so they are never ranked in one list) ranked by one Bradley–Terry model over every track's
    boards that discriminate and hold that kind, each track weighing the same (its boards weigh 1 / its
    number of counted boards); `entered` / `total` count those boards, and a method that entered fewer
    than `MIN_SHARE` of them is listed, not ranked (`_bt_rows`)."""
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        if any(r.kind == kind and r.role == "method" for r in b.rows):
            per_track[b.track].append(b)
    strata = [s for s in (_counted(per_track[t])[0] for t in sorted(per_track)) if s]
    if not strata:
        return []
    return _bt_rows(strata, [1.0 / len(s) for s in strata], kind=kind)
