"""Ranking: results → one ranked board per (track, resource, model), then mean-rank summaries.

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
  `boards(results, verified_only=True)` — what the static HTML board uses — keeps only "signed"
  results before any choice is made and names every left-out one in a warning, so a file that
  cannot be verified never changes which revision or coverage is ranked there.
* Rows are ranked by the board's primary metric mean, direction-aware; a submission without a mean
  (every instance failed) ranks last; equal means share a rank (competition ranking: 1, 1, 3).
* `track_summary(boards)`: per track, each submission's mean rank over the boards of that track it
  entered (Borda-style mean rank, as MTEB does) and how many it entered. Unranked rows do not count.
* `overall(boards)`: each submission's mean of its per-track mean ranks over the tracks it entered.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable

from benchmark.results import STATUSES, MetricSummary, Result, describe_coverage

__all__ = [
    "Board",
    "Row",
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

    @property
    def ranked(self) -> bool:
        return self.rank is not None


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

    @property
    def coverage_text(self) -> str:
        """The ranked coverage in words, e.g. "1,598 instances (full split)", "first 40 of 200 instances"."""
        return describe_coverage(self.coverage) if self.coverage else "no ranked results"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.track, self.resource, self.model)

    @property
    def title(self) -> str:
        return f"{self.track} · {self.resource} · {self.model}"


@dataclass
class SummaryRow:
    """A submission's mean rank over the boards (track summary) or tracks (overall) it entered."""

    rank: int
    submission: str
    mean_rank: float
    entered: int  # boards (track summary) or tracks (overall) entered
    total: int  # boards in the track (track summary) or tracks (overall)
    parts: dict[str, float] = field(default_factory=dict)  # board title / track -> rank there


@dataclass
class TrackSummary:
    track: str
    n_boards: int
    rows: list[SummaryRow]


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


def _rank_summary(entries: dict[str, dict[str, float]], total: int) -> list[SummaryRow]:
    means = {name: sum(parts.values()) / len(parts) for name, parts in entries.items()}
    names = sorted(entries)
    ranks = competition_ranks([means[n] for n in names], "lower")
    rows = [
        SummaryRow(rank, n, means[n], len(entries[n]), total, dict(sorted(entries[n].items())))
        for rank, n in zip(ranks, names)
    ]
    rows.sort(key=lambda row: (row.rank, -row.entered, row.submission))
    return rows


# --------------------------------------------------------------------------------------------------
# boards


def boards(results: Iterable[Result], verified_only: bool = False) -> list[Board]:
    """One ranked `Board` per (track, resource name, model name), sorted by that key.

    `verified_only`: rank only results whose `status` is "signed" (the rest are named in a warning)."""
    groups: dict[tuple[str, str, str], list[Result]] = defaultdict(list)
    for r in results:
        groups[(r.track, str(r.resource["name"]), str(r.model["name"]))].append(r)
    return [_board(key, groups[key], verified_only) for key in sorted(groups)]


def _status(r: Result) -> str:
    """The result's integrity status; a value other than the three known ones (e.g. one a verifier
    set) is not trusted: it counts as "modified"."""
    s = getattr(r, "status", "unsigned")
    return s if s in STATUSES else "modified"


def _file(r: Result) -> str:
    path = getattr(r, "path", None)
    return str(path) if path else "(no file)"


_WHY = {
    "modified": "changed after it was written",
    "unsigned": "no signature valid on this machine",
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
    track, resource, model = key
    warnings: list[str] = []
    ordered = _newest_first(results)

    # 0. integrity: a modified result takes part in no choice below (shown unranked); with
    #    verified_only, everything not signed is left out
    if verified_only:
        candidates = [r for r in ordered if _status(r) == "signed"]
        unranked: list[Result] = []
        out = [r for r in ordered if _status(r) != "signed"]
        if out:
            listing = "; ".join(f"{_sub(r)} ({_WHY[_status(r)]}: {_file(r)})" for r in out)
            warnings.append(
                f"left out {len(out)} result(s) this machine cannot verify: {listing}. Only results whose "
                f"signature holds here are published; re-run `xaibench evaluate` for them."
            )
    else:
        candidates = [r for r in ordered if _status(r) != "modified"]
        unranked = [r for r in ordered if _status(r) == "modified"]
        for r in unranked:
            warnings.append(
                f"{_file(r)} was changed after xaibench wrote it (its signature does not match): "
                f"{_sub(r)} is shown but not ranked and its numbers cannot be trusted. Check it with "
                f"`xaibench verify` or re-run `xaibench evaluate` for it."
            )

    # 1. never mix resource revisions / versions / splits: keep the newest one's results
    kept_on = _on((candidates or ordered)[0])
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

    # 2. never mix sets of instances: rank the coverage most submissions ran on
    kept, _, coverage_warning = _pick_coverage(kept)
    if coverage_warning:
        warnings.append(coverage_warning)

    # 3. one row per submission: its newest result
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

    # 3b. a model under test below its quality floor (e.g. an AIXI CNN that has not learned its function)
    low = [r for r in chosen if (r.model.get("quality") or {}).get("meets_floor") is False]
    if low:
        q = low[0].model["quality"]
        warnings.append(
            f"model under test below its quality floor: validation {q['metric']} {q['value']:.3f} < "
            f"{q['floor']} — it has not learned its function, so this board says little about the explainers "
            f"(retrain it, e.g. `xaibench train aixi` with more epochs or images)."
        )

    # 4. the primary metric: the one most results name (ties: the newest result's)
    named_by = chosen or unranked or ordered
    counts = Counter(r.primary_metric for r in named_by)
    newest_primary = _newest_first(named_by)[0].primary_metric
    top = max(counts.values())
    primary = newest_primary if counts[newest_primary] == top else sorted(k for k, c in counts.items() if c == top)[0]
    if len(counts) > 1:
        named = ", ".join(f"{k} ({c})" for k, c in sorted(counts.items()))
        warnings.append(f"results disagree on the primary metric ({named}); ranking by '{primary}'.")

    # metric columns: primary first, then in order of first appearance (submissions by name)
    names: list[str] = [primary]
    labels: dict[str, str] = {}
    directions: dict[str, str] = {}
    for r in chosen + sorted(unranked, key=lambda r: str(r.submission["name"])):
        for name, m in r.metrics.items():
            if name not in names:
                names.append(name)
            labels.setdefault(name, m.label or name)
            directions.setdefault(name, m.direction)
    labels.setdefault(primary, primary)
    directions.setdefault(primary, "lower")
    direction = directions[primary]

    values = [r.metrics[primary].mean if primary in r.metrics else None for r in chosen]
    ranks: list[int | None] = list(competition_ranks(values, direction))
    rows = [_row(rank, r) for rank, r in zip(ranks, chosen)]
    rows.sort(key=lambda row: (row.rank, row.submission, row.version))
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
    )


def _row(rank: int | None, r: Result) -> Row:
    return Row(
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
    )


def _fit(r: Result) -> float | None:
    v = (r.extra or {}).get("fit_s")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# --------------------------------------------------------------------------------------------------
# summaries


def track_summary(boards: Iterable[Board]) -> list[TrackSummary]:
    """Per track (sorted by name): each submission's mean rank over the boards of it entered.

    Rows are sorted best first (lowest mean rank; equal mean ranks share a rank, then more boards
    entered, then name). `parts` maps each entered board's title to the rank there.
    """
    per_track: dict[str, list[Board]] = defaultdict(list)
    for b in boards:
        per_track[b.track].append(b)
    out = []
    for track in sorted(per_track):
        entries: dict[str, dict[str, float]] = defaultdict(dict)
        for b in per_track[track]:
            for row in b.rows:
                if row.rank is not None:
                    entries[row.submission][b.title] = float(row.rank)
        out.append(TrackSummary(track, len(per_track[track]), _rank_summary(entries, len(per_track[track]))))
    return out


def overall(boards: Iterable[Board]) -> list[SummaryRow]:
    """Each submission's mean of its per-track mean ranks over the tracks it entered, best first.

    `parts` maps each entered track to the submission's mean rank there; `entered` / `total` count
    tracks.
    """
    summaries = track_summary(boards)
    entries: dict[str, dict[str, float]] = defaultdict(dict)
    for s in summaries:
        for row in s.rows:
            entries[row.submission][s.track] = row.mean_rank
    return _rank_summary(entries, len(summaries))
