"""Boards: results → one ranked board per (track, resource, model).

Pure functions over `benchmark.store.results.Result` objects; nothing here reads files or prints.
`boards(results)` groups results by (track, resource name, model name) and builds each board by the
rules of its neighbours, in this order:

1. which results it ranks (`leaderboard.selection`): integrity, one resource revision, one set of
   instances, one result per submission — each step's warnings kept on the board;
2. roles (`submission.role` in the Result, from `submission.toml`): only *methods* are ranked.
   Controls (floors: random, constant, text-blind answers, data priors) and references (ceilings allowed to read
   more) are shown as marked rows at the place their primary value puts them, never ranked; only a built-in's
   control, recognised by its code, sets a floor (`leaderboard.floors`), and every built-in data prior the board can
   enter must be on it;
   the randomisation test (`leaderboard.randomisation`, Adebayo et al. 2018) reads every row's own run on a
   randomised copy of the model (its companion run, `leaderboard.companions`: never another file's):
   a *model-blind* method is shown with the controls (its score printed beside the floor, never setting it), one
   whose own randomised run could not be compared is shown, not ranked;
3. the ranks, their intervals and ties by the paired bootstrap (`leaderboard.ranks`), after the gate
   (`leaderboard.verdicts`); no built-in control Result, or a built-in floor missing, no ranks;
4. the verdict (`leaderboard.verdicts`) and the metrics' agreement (`leaderboard.agreement`).

Per track and overall, `leaderboard.summaries` compares submissions across boards.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from benchmark.bootstrap import N_BOOT
from benchmark.errors import XaibenchError
from benchmark.store.results import MetricSummary, Result, describe_coverage
from leaderboard import stats
from leaderboard.agreement import AGREEMENT_FLOOR, all_metric_ranks, metric_agreement
from leaderboard.ranks import NO_FLOOR, method_ranks, paired
from leaderboard import companions, floors, selection
from leaderboard import hidden as hidden_copies
from leaderboard.randomisation import THRESHOLD, Sanity, judge, pair
from leaderboard.verdicts import Verdict, below_gate, gate_of, gated_verdict, verdict

__all__ = ["Board", "Row", "boards"]


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
    sanity: Sanity | None = None  # the randomisation test (leaderboard.randomisation); None: not asked
    # its declared capabilities as the Result records them ({"modalities", "needs_gradients", "needs_segments"}, and
    # "needs_assets", "data_prior" where declared: a data-prior control, issue #50); None for a Result written
    # before they were recorded
    capabilities: dict | None = None
    # its scores on the board's hidden copies (`leaderboard.hidden`); None where the board has none. On a board with
    # hidden copies `rank` comes from them and `public_rank` is its rank on the published model
    hidden: hidden_copies.HiddenRow | None = None
    public_rank: int | None = None
    builtin: bool = False  # a built-in's code (`leaderboard.floors.builtin_of`): only a built-in control sets a floor

    @property
    def ranked(self) -> bool:
        """The row has a rank (a method whose result may be ranked; not a control, reference or modified file)."""
        return self.rank is not None

    @property
    def blind(self) -> bool:
        """A method found model-blind: shown with the controls, never ranked (`leaderboard.randomisation`)."""
        return self.role == "method" and self.sanity is not None and self.sanity.blind

    @property
    def lost(self) -> str:
        """Why this method, entered on the board, lost there (issue #58; `leaderboard.summaries` counts it below every
        ranked method and tied with the other losers): "model-blind", "its own randomised run could not be judged",
        or "below the floor on the hidden copies". "" for a ranked row, a control or reference, and a method unranked
        for a reason outside its own run: a modified file, a self-reported row (its test comes with the maintainer's
        re-run), no complete run on the copies, a board without its floors."""
        if self.role != "method" or self.rank is not None or self.status in ("modified", "self-reported"):
            return ""
        if self.blind:
            return "model-blind"
        if self.sanity is not None and self.sanity.unranked:
            return "its own randomised run could not be judged"
        if self.hidden is not None and self.hidden.reason.startswith(hidden_copies.BEAT_PRIOR):
            return "below the floor on the hidden copies"
        return ""

    @property
    def marker(self) -> str:
        """What stands in the rank column of a row without a rank: its role ("model-blind" for a method shown
        with the controls), or the integrity mark."""
        if self.rank is not None or self.status == "modified":
            return ""
        if self.blind:
            return "model-blind"
        if self.role == "method" and self.hidden is not None and self.hidden.reason:
            return ("below a data prior" if self.hidden.reason.startswith(hidden_copies.BEAT_PRIOR)
                    else "floor missing" if self.hidden.reason.startswith(hidden_copies.FLOOR_MISSING)
                    else "no hidden score")
        if self.role == "control" and not self.builtin:
            return "submitted control"  # shown with the controls, never a floor (`leaderboard.floors`)
        return self.role if self.role in ("control", "reference") else ""


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
    unranked: str = ""  # why no method is ranked (no floor on the board, or a built-in floor missing); "" = ranked
    prior: str = ""  # whether the best method beats the best data prior on the published model (`_against_prior`)
    # the best score of a row shown with the controls that sets no floor (a method found model-blind, a control that is
    # not a built-in) on the published model, beside the floor (`floors.beside`); "" = none
    submitted_prior: str = ""
    # the built-in data priors the board misses on the published model (`floors.missing`); those it misses on the
    # copies are `hidden.lacking`
    lacking: list[str] = field(default_factory=list)
    threshold: float = THRESHOLD  # the randomisation test's similarity threshold the board was judged with
    score_rule: bool = True  # whether its score criterion applies on this track (Track.randomisation_score_rule)
    # what the board offers an explainer (which submissions could enter it: leaderboard.summaries): the track's
    # modality ("" when the track is not installed here), gradients (a white-box model), object segments
    modality: str = ""
    white_box: bool = True
    segments: bool = False
    # the board's hidden copies (`leaderboard.hidden`): ranks and the verdict come from them; the verdict on the
    # published model is kept beside it. None: no row was run on a hidden copy (`no_hidden` says why, where known)
    hidden: hidden_copies.HiddenBoard | None = None
    public_verdict: Verdict | None = None
    no_hidden: str = ""

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


def boards(results: Iterable[Result], verified_only: bool = False, threshold: float = THRESHOLD) -> list[Board]:
    """One ranked `Board` per (track, resource name, model name), sorted by that key.

    `verified_only`: rank only results whose `status` is "signed" (the rest are named in a warning).
    Companion runs (`leaderboard.companions`: randomised-model Results) are not rows: each row reads only its
    own (`companions.resolve`: those attached to it, else those of `results` in its own folder), for the
    randomisation test judged at the similarity `threshold` (`leaderboard.randomisation`)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not -1.0 <= threshold <= 1.0:
        raise ValueError(f"the randomisation test's threshold must be a number in [-1, 1], got {threshold!r}")
    groups: dict[tuple[str, str, str], list[Result]] = defaultdict(list)
    rows, runs = companions.resolve(results)
    for r in rows:
        groups[(r.track, str(r.resource["name"]), str(r.model["name"]))].append(r)
    return [_board(key, groups[key], runs, verified_only, float(threshold)) for key in sorted(groups)]


def _board(key: tuple[str, str, str], results: list[Result], runs: dict[int, dict[str, list[Result]]],
           verified_only: bool = False, threshold: float = THRESHOLD) -> Board:
    """The board of one (track, resource, model): the results it may rank chosen step by step (integrity,
    one resource revision, one set of instances, one result per submission), each step's warnings, the
    primary metric and the columns, then the ranks and the verdict (`_analyse`)."""
    track, resource, model = key
    warnings: list[str] = []
    ordered = selection.newest_first(results)
    candidates, unranked = selection.integrity(ordered, verified_only, warnings)
    kept_on, kept = selection.one_revision(candidates or ordered, candidates, warnings)
    kept, _, coverage_warning = selection.pick_coverage(kept)
    if coverage_warning:
        warnings.append(coverage_warning)
    chosen = selection.newest_per_submission(_builtins_kept(kept, warnings), warnings)
    low = selection.quality_warning(chosen)
    if low:
        warnings.append(low)
    primary = selection.primary_metric(chosen or unranked or ordered, warnings)
    shown = chosen + sorted(unranked, key=lambda r: str(r.submission["name"]))
    names, labels, directions = selection.columns(primary, shown)
    direction = directions[primary]
    sanity = _sanity(track, chosen, runs, verified_only, primary, direction, threshold)
    modality = _modality(track, chosen or ordered)
    white_box = _offers(chosen or ordered, "white_box", "needs_gradients")
    segments = _offers(chosen or ordered, "segments", "needs_segments")
    offer = floors.offer_of(chosen, _kind(track, chosen or ordered), modality, white_box, segments)
    evaluate = (f"xaibench evaluate NAME --track {track} --resource {resource} --model {model}"
                + _limit(chosen, "--limit"))

    a = _analyse(track, chosen, primary, names, directions, sanity, floors.needed(offer, "published"),
                 evaluate + " --no-randomisation")
    warnings += a.warnings
    rows = [_row(a.ranks[k], r, a, k) for k, r in enumerate(chosen)]
    for row, s in zip(rows, sanity):
        row.sanity = s
    hidden_runs = [runs.get(id(r), {}).get("hidden", []) for r in chosen]
    h = _hidden(track, chosen, sanity, hidden_runs, verified_only, primary, direction, rows,
                floors.needed(offer, "hidden"), evaluate + _hidden_options(hidden_runs))
    rows = _order(rows, direction, primary, by_hidden=h is not None)
    rows += sorted((_row(None, r) for r in unranked), key=lambda row: (row.submission, row.version, row.path))
    board = Board(
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
        coverage=dict(selection.coverage(selection.newest_first(chosen)[0])) if chosen else None,
        verified_only=verified_only,
        verdict=a.verdict,
        agreement=a.agreement,
        intervals=a.intervals,
        gate=a.gate,
        n_boot=a.n_boot,
        model_note=selection.model_note(chosen),
        unranked=a.unranked,
        prior=a.prior,
        submitted_prior=a.submitted,
        lacking=a.lacking,
        threshold=threshold,
        score_rule=_score_rule(track),
        modality=modality,
        white_box=white_box,
        segments=segments,
    )
    if h is not None:
        board.hidden, board.public_verdict, board.verdict = h[0], a.verdict, h[1]
    elif chosen:
        board.no_hidden = _no_hidden(track)
    return board


def _builtins_kept(kept: list[Result], warnings: list[str]) -> list[Result]:
    """`kept` without the Results under a built-in's name that are not its code, where the board holds a trusted
    Result of the built-in's code under that name (a warning names them): a look-alike, however new, never pushes the
    built-in's floor off the board (`leaderboard.floors`)."""
    theirs = {str(r.submission["name"]) for r in kept if selection.trusted(r) and floors.builtin_of(r) is not None}
    out: list[Result] = []
    dropped: list[Result] = []
    for r in kept:
        (dropped if str(r.submission["name"]) in theirs and floors.builtin_of(r) is None else out).append(r)
    for r in dropped:
        warnings.append(f"submission '{r.submission['name']}': left out a Result under a built-in's name with other "
                        f"code (hash {r.submission.get('hash')}, {r.created or 'no date'}); the board keeps the "
                        "built-in's code — a built-in's name is its code's")
    return out


def _limit(chosen: list[Result], option: str) -> str:
    """` --limit N` where the board ranks the first N instances of its split, else ""."""
    cov = selection.coverage(selection.newest_first(chosen)[0]) if chosen else {}
    return f" {option} {cov.get('n')}" if cov.get("complete") is False and cov.get("n") else ""


def _hidden_options(hidden: list[list[Result]]) -> str:
    """The `evaluate` options that run a built-in floor on the board's hidden copies: their number, and their instances
    where those are the first of each copy's."""
    from benchmark.variant_runs.hidden import hidden_of

    runs = [h for own in hidden for h in own]
    draws = {int((hidden_of(h) or {}).get("draw", -1)) for h in runs}
    if not runs:
        return ""
    out = f" --hidden-draws {max(draws) + 1}"
    cov = selection.coverage(selection.newest_first(runs)[0])
    return out + (f" --hidden-limit {cov.get('n')}" if cov.get("complete") is False and cov.get("n") else "")


def _kind(track: str, results: list[Result]) -> str:
    """The kind of submission the board ranks: its track's (`Track.submission_kind`), else its methods' kind."""
    trk = _installed(track)
    if trk is not None:
        return str(trk.submission_kind)
    kinds = {str(r.submission.get("kind") or "explainer") for r in results if selection.role_of(r) == "method"}
    return next(iter(kinds)) if len(kinds) == 1 else "explainer"


def _no_hidden(track: str) -> str:
    """Why a board has no hidden copies: the track's reason, or that none was run."""
    trk = _installed(track)
    if trk is None:
        return ""
    reason = getattr(trk, "no_hidden_copy", "")
    if reason:
        return f"no hidden copy: {reason}"
    return ("no hidden copy was evaluated: ranks come from the published model, which a submission can recognise "
            "(`xaibench evaluate ... --hidden-draws 3`)")


def _hidden(track: str, chosen: list[Result], sanity: list[Sanity], hidden: list[list[Result]], verified_only: bool,
            primary: str, direction: str, rows: list[Row], need: Sequence[str] = (),
            command: str = "") -> tuple[hidden_copies.HiddenBoard, Verdict] | None:
    """The board's hidden-copy analysis (`leaderboard.hidden`) applied to its rows (in `chosen`'s order): each row's
    hidden scores from its own hidden-copy runs (`hidden`, its companions), its rank from them (the public rank
    kept beside), and the verdict on the copies; None when no row was run on a copy. `need`: the built-in data priors
    the copies' floor needs (`floors.needed`), `command` how to run them."""
    trusted = selection.TRUSTED if verified_only else (*selection.TRUSTED, "unsigned", "self-reported")
    hidden = [[r for r in own if selection.status_of(r) in trusted] for own in hidden]
    blind = [s.blind for s in sanity]
    roles = []
    for r, s in zip(chosen, sanity):
        role = selection.role_of(r)
        roles.append("control" if role == "method" and s.blind else "held" if role == "method" and s.unranked
                     else role)
    got = hidden_copies.analyse(_installed(track), chosen, roles, blind, hidden, primary, direction, need, command)
    if got is None:
        return None
    board, per_row, _ = got
    for row, hrow, role in zip(rows, per_row, roles):
        row.hidden, row.public_rank = hrow, row.rank
        if role == "method" or row.rank is not None:
            row.rank, row.interval, row.tied = hrow.rank, hrow.interval, hrow.tied
    return board, Verdict(*hidden_copies.summary(board, per_row, chosen, primary))


def _modality(track: str, results: list[Result]) -> str:
    """The board's modality: its track's (the registry), else what its submissions all handle, else ""."""
    from benchmark.tracks import get_track

    try:
        return get_track(track).modality
    except XaibenchError:
        sets = [set(c.get("modalities") or []) for c in (_capabilities(r) for r in results) if c]
        common = set.intersection(*sets) if sets else set()
        return next(iter(common)) if len(common) == 1 else ""


def _offers(results: list[Result], key: str, need: str) -> bool:
    """Whether the board's model offers `key` (white_box / segments) as its newest Result records it; for
    Results written before that was recorded, whether a submission that needs it (`need`) is on the board."""
    for r in selection.newest_first(results):
        if isinstance((r.model or {}).get(key), bool):
            return bool(r.model[key])
    return any(bool((_capabilities(r) or {}).get(need)) for r in results)


def _capabilities(r: Result) -> dict | None:
    """The submission's declared capabilities as its Result records them, or None."""
    c = r.submission.get("capabilities")
    return dict(c) if isinstance(c, dict) else None


def _installed(track: str) -> Any:
    """The registered `Track` named `track`, or None when it is not installed here."""
    from benchmark.tracks import get_track

    try:
        return get_track(track)
    except XaibenchError:
        return None


def _score_rule(track: str) -> bool:
    """Whether the randomisation test's score criterion applies on `track` (True when it is not installed here)."""
    trk = _installed(track)
    return True if trk is None else bool(trk.randomisation_score_rule)


def _sanity(track: str, chosen: list[Result], runs: dict[int, dict[str, list[Result]]], verified_only: bool,
            primary: str, direction: str, threshold: float) -> list[Sanity]:
    """Each chosen row's randomisation test, against its own randomised-model runs (`runs`, from
    `companions.resolve`; with `verified_only`, only those whose signature holds here, as for the rows)."""
    trk = _installed(track)
    out = []
    for r in chosen:
        own = runs.get(id(r), {}).get("randomised", [])
        if verified_only:
            own = [x for x in own if selection.status_of(x) in selection.TRUSTED]
        out.append(judge(trk, r, *pair(r, own), primary, direction, threshold))
    return out


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
    prior: str = ""  # the best method against the best data prior on the published model, in words ("" = none)
    submitted: str = ""  # the best row shown with the controls that sets no floor, beside the floor (`floors.beside`)
    lacking: list[str] = field(default_factory=list)  # the built-in data priors in `need` it misses


def _analyse(track: str, chosen: list[Result], primary: str, names: list[str],
             directions: dict[str, str], sanity: list[Sanity] | None = None, need: Sequence[str] = (),
             command: str = "") -> _Analysis:
    """Ranks, intervals, ties, the gate, the verdict and the metric agreement of a board's rows. Only a built-in's
    control sets a floor (`leaderboard.floors`), and every built-in data prior in `need` must be on the board (else it
    is unranked, `command` says how to run them); a model-blind method (`sanity`) is shown with the controls and sets
    none; one whose randomisation test failed in its own run is shown, not ranked."""
    k = len(chosen)
    direction = directions[primary]
    blind = [bool(sanity and sanity[i].blind) for i in range(k)]
    held = [bool(sanity and sanity[i].unranked) for i in range(k)]  # its own randomised run failed: not ranked
    roles = [selection.role_of(r) for r in chosen]
    roles = ["control" if role == "method" and blind[i] else role for i, role in enumerate(roles)]
    methods = [i for i in range(k) if roles[i] == "method" and not held[i]]
    # the floors: the built-in controls alone — never a method found model-blind, never a control that is not built-in
    controls = [i for i in range(k) if roles[i] == "control" and floors.is_floor(chosen[i], "published")]
    p = paired(track, chosen, names, directions)

    # the gate: methods below it rank after those that pass
    gate = gate_of(track, names)
    below = below_gate(gate, chosen, methods, controls, p, [selection.trusted(r) for r in chosen])
    # groups: 0 = passes the gate, 1 = below it, 2 = no primary value (every instance failed)
    groups = {i: (2 if p.points[primary][i] is None else 1 if below[i] else 0) for i in methods}

    ranks: list[int | None] = [None] * k
    tied = [False] * k
    intervals: list[tuple[int, int] | None] = [None] * k
    if methods:
        r, t, ivs = method_ranks(p, methods, groups, primary, direction)
        for pos, i in enumerate(methods):
            ranks[i], tied[i], intervals[i] = r[pos], t[pos], ivs[pos]

    # no floor on the board, or a built-in floor it needs missing: the methods are shown, not ranked (a method that
    # ignores the input could otherwise come first, and nothing on the board would say so)
    lacking = floors.missing(need, _floor_values(chosen, controls, p.points[primary], primary), chosen)
    unranked = NO_FLOOR if methods and not controls else \
        floors.run_line(lacking, "of this board " + ("is" if len(lacking) == 1 else "are"), command) \
        if methods and lacking else ""
    if unranked:
        for i in methods:
            ranks[i], tied[i], intervals[i] = None, False, None

    # the verdict: the best method against the best built-in control
    v = verdict(chosen, methods, controls, ranks, p, primary)
    if lacking and methods and controls:
        v = Verdict("undefined", unranked.removeprefix("unranked: "))
    elif gate and gate["beat_controls"] and v.status == "does not discriminate":
        v = gated_verdict(v, chosen, methods, controls, ranks, below, p, gate["metric"], primary)

    # agreement of the metrics, and the secondary (all-metric) ranking, over the methods
    agreement = metric_agreement(p, methods, names, primary)
    all_metric, all_rank = all_metric_ranks(p, methods, names, k)
    shown = [i for i in range(k) if roles[i] == "control" and i not in controls]  # shown with them, never a floor
    best_floor = _best_of(controls, p.points[primary], direction)
    submitted = floors.beside([str(chosen[i].submission["name"]) for i in shown], [p.points[primary][i] for i in shown],
                              [blind[i] for i in shown],
                              None if best_floor is None else str(chosen[best_floor].submission["name"]),
                              None if best_floor is None else p.points[primary][best_floor], primary, direction,
                              "on the published model")
    return _Analysis(ranks, intervals, tied, below, all_metric, all_rank, v, agreement,
                     p.why if p.draws is None else "", gate, 0 if p.draws is None else N_BOOT, [], unranked,
                     _against_prior(chosen, methods, controls, ranks, p, primary), submitted,
                     [n for n, _ in lacking])


def _floor_values(chosen: list[Result], controls: list[int], values: list[float | None],
                  primary: str) -> dict[str, Any]:
    """Each built-in control on the board (`controls`): its primary value, or why it has none (`floors.missing`)."""
    out: dict[str, Any] = {}
    for i in controls:
        b = floors.builtin_of(chosen[i])
        if b is None:
            continue
        if values[i] is not None:
            out[b.name] = values[i]
        elif isinstance(out.get(b.name, ""), str):
            first = chosen[i].failures[0].reason[:120] if chosen[i].failures else "no value"
            out[b.name] = f"it has no {primary} here: it failed on every instance ({first!r})"
    return out


def _best_of(rows: list[int], values: list[float | None], direction: str) -> int | None:
    """The row of `rows` with the best value, or None."""
    good = [i for i in rows if values[i] is not None]
    return max(good, key=lambda i: float(stats.oriented(np.array([values[i]]), direction)[0])) if good else None


def _against_prior(chosen: list[Result], methods: list[int], controls: list[int], ranks: list[int | None], p: Any,
                   primary: str) -> str:
    """The best ranked method against the best built-in data prior on the published model, in words; "" where the
    board has no data prior or no ranked method."""
    priors = [i for i in controls if floors.is_floor(chosen[i], "hidden")]
    values, direction = p.points[primary], p.directions[primary]
    top = [i for i in methods if ranks[i] is not None and values[i] is not None]
    good = [i for i in priors if values[i] is not None]
    if not top or not good or p.draws is None:
        return ""
    best = min(top, key=lambda i: (ranks[i], -float(stats.oriented(np.array([values[i]]), direction)[0])))
    prior = max(good, key=lambda i: float(stats.oriented(np.array([values[i]]), direction)[0]))
    sep = p.better(prior, best, primary)
    if sep.diff is None or sep.ci is None:
        return ""
    return (f"{'beats' if sep.better else 'does not beat'} the best data prior on the published model: "
            f"{chosen[best].submission['name']} vs {chosen[prior].submission['name']}, Δ {primary} {sep.diff:+.4g}, "
            f"95% CI [{sep.ci[0]:+.4g}, {sep.ci[1]:+.4g}]")


def _order(rows: list[Row], direction: str, primary: str, by_hidden: bool = False) -> list[Row]:
    """Methods by (rank, value, name); each control / reference inserted before the first method its
    primary value beats (so it stands where its score puts it); rows without a value last. `by_hidden`: the
    values on the hidden copies (the board ranks by them)."""
    def value(row: Row) -> float:
        if by_hidden:
            v = None if row.hidden is None else row.hidden.mean
            return -math.inf if v is None else float(stats.oriented(np.array([v]), direction)[0])
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
        status=selection.status_of(r),
        path=str(getattr(r, "path", None) or ""),
        coverage=dict(selection.coverage(r)),
        fit_s=_fit(r),
        role=selection.role_of(r),
        kind=str(r.submission.get("kind") or "explainer"),
        capabilities=_capabilities(r),
        builtin=floors.builtin_of(r) is not None,
    )
    if a is not None:
        row.interval, row.tied, row.below_gate = a.intervals_by_row[k], a.tied[k], a.below_gate[k]
        row.all_metric, row.all_metric_rank = a.all_metric[k], a.all_metric_rank[k]
    return row


def _fit(r: Result) -> float | None:
    v = (r.extra or {}).get("fit_s")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
