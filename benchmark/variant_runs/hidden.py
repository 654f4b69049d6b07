"""The hidden-copy run: the harness's side of ranking on models no submission has seen (issue #50).

A hidden-copy run is an ordinary evaluation — `benchmark.runner.evaluate(..., hidden=k)`, in the sandboxed worker,
through the runner, cached and resumable — of a submission on draw k of the board's hidden copies
(`benchmark.models.variants.hidden`: the copy's reasoning drawn from the round's secret, its ground truth recomputed on
it, `Track.hidden_copy`). It is written as a Result at its own path (`benchmark.runner.result_path`:
`<model>/hidden-<round>/d<k>/<name>.json` beside the Result on the published model) with

* `resource` — the *published* resource (name, version, revision, split): the board the copy belongs to;
* `model` — the copy's info (its `hash`, architecture, …) and `hidden` = {round, draw, commitment (never the secret),
  construction (what the copy relies on), `of`: the published model's hash, `stats`: the construction's counts —
  planted-word coverage, instances dropped by the counterfactual check, …};
* `metrics`, `instance_scores` — the track's scores against the copy's ground truth, on the copy's instances (which
  may differ from the published ones: IDC evaluates the documents the copy classifies correctly).

The boards (`leaderboard.hidden`) pair each row with its hidden-copy Results of one round and rank from them.
"""

from __future__ import annotations

from typing import Any

from benchmark.errors import XaibenchError
from benchmark.models.variants.hidden import NoHiddenCopy, Round, local_round
from benchmark.store.results import Result, coverage_of

__all__ = ["copy_for_run", "hidden_of", "hidden_round", "refuse_unconfined"]


def hidden_of(r: Result) -> dict[str, Any] | None:
    """The hidden copy a Result was computed on ({round, draw, commitment, …}), or None for the published model."""
    got = (r.model or {}).get("hidden")
    return got if isinstance(got, dict) else None


def hidden_round(r: Result) -> Any:
    """The round its hidden copy names (as written: a signed record compares it exactly), or None for the published
    model."""
    return (hidden_of(r) or {}).get("round")


def refuse_unconfined(sandbox: str, backend: str = "local") -> None:
    """`NoHiddenCopy` (one line) when a worker started in `sandbox` mode could read the round's secret or a copy's
    files (`benchmark.isolation.file_system_problem`: neither bubblewrap nor Landlock here), or when the plain worker
    would run Ray tasks (Ray's object store, reachable over a unix socket Landlock does not cover, holds the jobs)."""
    from benchmark.isolation import file_system_problem

    why = file_system_problem(sandbox)
    if why is None and backend == "ray" and (sandbox == "none" or file_system_problem("bwrap") is not None):
        why = "the plain worker's Ray tasks reach Ray's object store, which holds the served copy"
    if why is not None:
        raise NoHiddenCopy(f"no hidden-copy run here: a submission's worker could read the secret or a copy's files "
                           f"({why}); run with the bubblewrap sandbox")


def copy_for_run(track: Any, resource: Any, model: str, split: str, index: int, limit: int | None,
                 public_info: dict[str, Any], round_: Round | None = None) -> tuple[Any, dict[str, Any], Any, dict]:
    """(spec, model info, instances, coverage) of draw `index` of the board's hidden copies for a run (module
    docstring): the round is `round_` (a maintainer's, `leaderboard.repository`) or this home's (`local_round`).
    `NoHiddenCopy` (one line: which board or draw, and why) when there is none."""
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise XaibenchError(f"hidden must be a draw index ≥ 0, got {index!r}")
    rnd = round_ if round_ is not None else local_round()
    draw = rnd.draw(track.name, resource.name, resource.revision, index)
    try:
        spec, info, instances, stats = track.hidden_copy(resource, model, draw, split, limit)
        total = len(instances) if limit is None else len(track.hidden_copy(resource, model, draw, split, None)[2])
    except NoHiddenCopy as exc:
        raise NoHiddenCopy(f"{resource.name}/{model}, hidden copy {index}: {exc}") from None
    if not len(instances):
        raise NoHiddenCopy(f"{resource.name}/{model}, hidden copy {index}: no instance of {split} is left to evaluate")
    hidden = {**draw.public(), "construction": _construction(track), "of": str(public_info.get("hash", "")),
              "stats": dict(stats)}
    if instances.excluded:
        hidden["excluded"] = dict(instances.excluded)
    info = {**info, "hidden": hidden}
    return spec, info, instances, coverage_of(instances.ids, total, limit)


def _construction(track: Any) -> str:
    """What the track's copies rely on, in a few words (the construction's description, with its version)."""
    from benchmark.models.variants.hidden import CONSTRUCTIONS

    if track.name in CONSTRUCTIONS:
        c = CONSTRUCTIONS.get(track.name)
        return f"{c.description} ({c.version})"
    return getattr(track, "hidden_construction", "") or track.name
