"""Which results a board ranks: the rules that keep a board from mixing what its numbers were computed on.

Pure functions over `benchmark.store.results.Result` objects; nothing here reads files or prints. Each step
appends its warnings; `leaderboard.boards` applies them in this order:

* Integrity (`Result.status`, see `benchmark.store.integrity`): a "modified" result (its file changed after
  xaibench wrote it) takes part in none of the choices below; it is shown as an unranked row
  (`Row.rank` None, after the ranked rows) with a warning naming its file. An "unsigned" result
  (no signature valid on this machine: schema 1, another machine's, hand-made) is ranked like a
  signed one and marked (`Row.status`), so older results stay visible. Any other status counts as
  "modified".
  Results read from a results repository (`leaderboard.repository.boards`) carry "verified" (a
  maintainer's signed re-run record holds for the file; trusted like "signed") or "self-reported"
  (marked; not ranked where the board's track runs the randomisation test, whose run comes only with
  the maintainer's re-run: `leaderboard.randomisation`).
  `boards(results, verified_only=True)` — what the static HTML board uses — keeps only "signed" (and
  "verified") results before any choice is made and names every left-out one in a warning, so a file that
  cannot be verified never changes which revision or coverage is ranked there (`integrity`).
* Trusted results choose: every choice below (the revision, the set of instances, a submission's result, the
  primary metric) is made by the trusted results ("signed", "verified") where a board holds any, and the others
  join only where they fit — so an unsigned or self-reported file (a forged "newer revision", a look-alike of a
  verified submission) never changes what a trusted row is shown on, with or without `verified_only`.
* One resource revision: when results of one board come from different resource revisions, versions or
  splits, only those on the newest one (by `created`; the newest trusted one where there is one) are kept
  and the board carries a warning naming every dropped submission and its revision (`one_revision`).
* One set of instances: a board ranks only results on the same instances (the same
  `coverage.ids_sha256`; results that did not record their coverage — schema 1 — count as one
  coverage per instance count `n`). When a board's results cover several sets of instances, it ranks
  the set with the most trusted submissions, then the most submissions (ties: the larger `n`, then the set
  holding the newest result)
  and carries a warning naming every other result and its coverage ("lime-text: first 300 of 1,598
  instances"). So a `--limit 10` run never displaces a full run from a board the other submissions
  ran in full (`pick_coverage`).
* One result per submission: a submission appearing twice on the ranked coverage (e.g. two versions)
  keeps its newest result, also with a warning (`newest_per_submission`).
* Then the primary metric (the one most results name, `primary_metric`), the columns (`columns`), a
  model below its quality floor (`quality_warning`) and the model's own note (`model_note`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Iterable

from benchmark.store.results import STATUSES, Result, describe_coverage

__all__ = ["REPOSITORY_STATUSES", "TRUSTED", "columns", "coverage", "integrity", "model_note", "newest_first",
           "newest_per_submission", "one_revision", "pick_coverage", "primary_metric", "quality_warning",
           "role_of", "status_of", "sub_label", "trusted"]


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


def newest_first(results: Iterable[Result]) -> list[Result]:
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


def sub_label(r: Result) -> str:
    """"name version", as warnings and reasons name a result's submission."""
    return f"{r.submission['name']} {r.submission['version']}".strip()


# statuses a results repository's boards set (`leaderboard.repository.boards`), and those trusted as signed
REPOSITORY_STATUSES = ("verified", "self-reported")
TRUSTED = ("signed", "verified")


def status_of(r: Result) -> str:
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


def coverage(r: Result) -> dict:
    """The instances a result covers (`Result.coverage`); a schema-1 result's is its instance count alone."""
    cov = getattr(r, "coverage", None)
    return cov if isinstance(cov, dict) and cov else {"n": int(r.n_instances), "ids_sha256": None}


def _cov_key(r: Result) -> tuple[str, int]:
    """Results with equal keys cover the same instances: the ids digest, or the count when unrecorded."""
    cov = coverage(r)
    digest = cov.get("ids_sha256")
    return (str(digest), -1) if digest else ("unrecorded", int(cov.get("n") or r.n_instances))


def pick_coverage(ordered: list[Result]) -> tuple[list[Result], list[Result], str]:
    """(results on the ranked coverage, the others, warning or ""), `ordered` newest first."""
    groups: dict[tuple[str, int], list[Result]] = defaultdict(list)
    for r in ordered:
        groups[_cov_key(r)].append(r)
    if len(groups) <= 1:
        return ordered, [], ""

    def strength(k: tuple[str, int]) -> tuple:
        rs = groups[k]
        names = {str(r.submission["name"]) for r in rs}
        return (len({str(r.submission["name"]) for r in rs if trusted(r)}), len(names),
                int(coverage(rs[0]).get("n") or 0), max(_created_key(r) for r in rs), k)

    best = max(groups, key=strength)
    kept = groups[best]
    left = [r for r in ordered if _cov_key(r) != best]
    words: dict[tuple[str, int], str] = {k: describe_coverage(coverage(rs[0])) for k, rs in groups.items()}
    if len(set(words.values())) < len(words):  # two sets of instances with the same description
        words = {k: w + (f" [ids {k[0][:8]}]" if k[1] == -1 else "") for k, w in words.items()}
    listing = "; ".join(f"{sub_label(r)}: {words[_cov_key(r)]}" for r in left)
    names = len({str(r.submission["name"]) for r in kept})
    warning = (
        f"results cover {len(groups)} different sets of instances; ranking the {names} submission(s) on "
        f"{words[best]}. Not ranked ({len(left)}): {listing}. Re-run those on the same instances "
        f"(e.g. without --limit) to rank them."
    )
    return kept, left, warning


def integrity(ordered: list[Result], verified_only: bool, warnings: list[str]) -> tuple[list[Result], list[Result]]:
    """(candidates, shown unranked): a modified result takes part in no choice after this one (it is shown
    unranked); with `verified_only`, everything not signed is left out altogether. Warnings appended."""
    if verified_only:
        out = [r for r in ordered if status_of(r) not in TRUSTED]
        if out:
            listing = "; ".join(f"{sub_label(r)} ({_WHY[status_of(r)]}: {_file(r)})" for r in out)
            warnings.append(
                f"left out {len(out)} result(s) this machine cannot verify: {listing}. Only results whose "
                f"signature holds here are published; re-run `xaibench evaluate` for them."
            )
        return [r for r in ordered if status_of(r) in TRUSTED], []
    unranked = [r for r in ordered if status_of(r) == "modified"]
    for r in unranked:
        warnings.append(
            f"{_file(r)} was changed after xaibench wrote it (its signature does not match): "
            f"{sub_label(r)} is shown but not ranked and its numbers cannot be trusted. Check it with "
            f"`xaibench verify` or re-run `xaibench evaluate` for it."
        )
    return [r for r in ordered if status_of(r) != "modified"], unranked


def trusted(r: Result) -> bool:
    """Whether the result's status is trusted as signed ("signed" here, "verified" in a results repository)."""
    return status_of(r) in TRUSTED


def _lead(ordered: list[Result]) -> Result:
    """The result a board's choices start from: the newest trusted one, else the newest (module docstring:
    an untrusted file never chooses what the trusted rows are shown on)."""
    return next((r for r in ordered if trusted(r)), ordered[0])


def one_revision(ordered: list[Result], candidates: list[Result],
                 warnings: list[str]) -> tuple[tuple[str, str, str], list[Result]]:
    """Never mix resource revisions / versions / splits: (the newest trusted result's — else the newest
    result's — (revision, version, split), the candidates on it); a warning names the dropped ones."""
    kept_on = _on(_lead(ordered))
    kept = [r for r in candidates if _on(r) == kept_on]
    dropped = [r for r in candidates if _on(r) != kept_on]
    if dropped:
        n_on = len({_on(r) for r in candidates})
        listing = "; ".join(f"{sub_label(r)} on {_describe_on(_on(r))}" for r in dropped)
        warnings.append(
            f"results on {n_on} different resource revisions: showing only the newest, "
            f"{_describe_on(kept_on)}; dropped {len(dropped)} result(s): {listing}. "
            f"Re-run `xaibench evaluate` for them on the current revision."
        )
    return kept_on, kept


def newest_per_submission(kept: list[Result], warnings: list[str]) -> list[Result]:
    """One row per submission (by name): its newest trusted result of `kept` (newest first), else its newest; a
    warning names the others dropped."""
    by_name: dict[str, list[Result]] = defaultdict(list)
    for r in sorted(kept, key=lambda r: not trusted(r)):  # trusted first, each newest first (a stable sort)
        by_name[str(r.submission["name"])].append(r)
    chosen: list[Result] = []
    for name in sorted(by_name):
        first, *rest = by_name[name]
        chosen.append(first)
        if rest:
            others = ", ".join(f"version {r.submission['version']} ({r.created or 'no date'})" for r in rest)
            warnings.append(
                f"submission '{name}' has {len(rest) + 1} results on this board: kept the newest"
                f"{' trusted one' if trusted(first) and not all(trusted(r) for r in rest) else ''}, "
                f"version {first.submission['version']} ({first.created or 'no date'}); dropped {others}."
            )
    return chosen


def quality_warning(chosen: list[Result]) -> str | None:
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


def primary_metric(named_by: list[Result], warnings: list[str]) -> str:
    """The metric most results name as primary (ties: the newest result's) — of the trusted results when there
    are any; a warning when they disagree."""
    named_by = [r for r in named_by if trusted(r)] or named_by
    counts = Counter(r.primary_metric for r in named_by)
    newest_primary = newest_first(named_by)[0].primary_metric
    top = max(counts.values())
    primary = newest_primary if counts[newest_primary] == top else sorted(k for k, c in counts.items() if c == top)[0]
    if len(counts) > 1:
        named = ", ".join(f"{k} ({c})" for k, c in sorted(counts.items()))
        warnings.append(f"results disagree on the primary metric ({named}); ranking by '{primary}'.")
    return primary


def columns(primary: str, results: list[Result]) -> tuple[list[str], dict[str, str], dict[str, str]]:
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


def model_note(results: list[Result]) -> str:
    """One line on the model under test from the newest result's model info: an RCNN's selection against
    Lei's targets (`selection`), else a quality floor (`quality`: metric, value, floor), else the track's
    scope note (`note`: e.g. which classes a trust set judges); "" without."""
    for r in newest_first(results):
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


def role_of(r: Result) -> str:
    """The submission's role on the board: "method" (ranked), "control" or "reference"; unknown → "method"."""
    role = str(r.submission.get("role", "method"))
    return role if role in ("method", "control", "reference") else "method"
