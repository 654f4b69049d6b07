"""A board's floors: the built-in controls it runs itself, recognised by their code (issue #58).

DESIGN §8: "compute each board's floors as part of the board, so a gate never depends on which Results someone
happened to upload". Pure functions over `benchmark.store.results.Result` objects and the installed built-ins
(`benchmark.submission.builtins`: their `submission.toml` and code hash; nothing is imported or run).

* **Built-in by code** (`builtin_of`). A row is a built-in's when its submission's base name is a built-in control's
  or reference's *and* its code hash is that built-in's as installed here (the hash covers its folder and the
  harness modules it imports), scored by the track's own metrics (no metric options). A Result under a built-in's
  name with other code is not one; in a results repository the name is reserved for its code
  (`leaderboard.repository.validate`).
* **The floors.** On the published model: the built-in controls (`role = "control"`); the board's verdict compares
  its best method with the best of them, and the best built-in control declaring `data_prior` is its data-prior
  floor. On the hidden copies (`leaderboard.hidden`): the built-in data priors, controls and references alike — the
  built-in `published-truth` (`benchmark.published_truth`) reads the published ground truth: on the published model
  a ceiling (a reference), on a copy the strongest public prior, so it is a floor there and only there.
* **Never from a submission.** A method found model-blind (`leaderboard.randomisation`) and a control that is not
  a built-in are shown with the controls and never ranked; their score is printed beside the floor ("a submitted
  data prior reaches …", `beside`) and never sets it. Uploading one changes no other row.
* **Every floor the board can enter** (`needed`, `missing`). The built-in data priors a board needs are those whose
  declared capabilities fit what it offers — its kind of submission and modality (its track), gradients and object
  segments, and the read-only assets its Results record (`model.assets`, `benchmark.runner.board_assets`): on the
  published model the data-prior controls, on the copies those and the data-prior references. One that was not run,
  was run with other code, or failed on every instance is named in one line with why, and the board (or its copies)
  is unranked with that reason — it never falls back to an uploaded Result. Results written before boards recorded
  their assets name no requirement beyond a built-in control: their floor is the best built-in one present.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.store.results import Result
from leaderboard import stats
from leaderboard.selection import newest_first, trusted

__all__ = ["Builtin", "Offer", "beside", "builtin_of", "code_hash", "installed", "is_floor", "missing", "needed",
           "offer_of", "run_line"]


@dataclass(frozen=True)
class Builtin:
    """A built-in control or reference, as its `submission.toml` declares it."""

    name: str
    role: str  # "control" or "reference"
    kind: str  # "explainer" or "oracle"
    data_prior: bool
    modalities: tuple[str, ...]
    needs_gradients: bool
    needs_segments: bool
    needs_assets: tuple[str, ...]
    path: Path


@functools.cache
def installed() -> dict[str, Builtin]:
    """The built-in controls and references installed here, by name (their hashes: `code_hash`)."""
    from benchmark.submission import builtins

    return {n: Builtin(n, s.role, s.kind, bool(s.data_prior), tuple(s.modalities), bool(s.needs_gradients),
                       bool(s.needs_segments), tuple(s.needs_assets), Path(s.path))
            for n, s in builtins().items() if s.role in ("control", "reference")}


@functools.cache
def code_hash(name: str) -> str | None:
    """The code hash of the installed built-in `name` (`Submission.hash`), or None when there is none."""
    from benchmark.submission import load_submission

    b = installed().get(name)
    return None if b is None else load_submission(b.path).hash


def builtin_of(r: Result) -> Builtin | None:
    """The built-in control or reference `r` is a Result of — its base name a built-in's and its code hash that
    built-in's as installed here, scored by the track's own metrics — or None (module docstring)."""
    s = r.submission
    name = str(s.get("base") or s.get("name") or "")
    b = installed().get(name)
    if b is None or str(s.get("hash", "")) != code_hash(name):
        return None
    if (r.extra or {}).get("metric_params"):
        return None
    return b


def is_floor(r: Result, on: str) -> bool:
    """Whether `r` may set a floor `on` "published" (a built-in control) or "hidden" (a built-in data prior)."""
    b = builtin_of(r)
    if b is None:
        return False
    return b.role == "control" if on == "published" else b.data_prior


@dataclass(frozen=True)
class Offer:
    """What a board offers a submission, as its Results record it (`offer_of`)."""

    kind: str
    modality: str
    white_box: bool
    segments: bool
    assets: tuple[str, ...] | None  # None: not recorded (Results written before issue #58)


def offer_of(results: Sequence[Result], kind: str, modality: str, white_box: bool, segments: bool) -> Offer:
    """The board's offer: its kind and modality (its track), gradients and segments (`leaderboard.boards`), and the
    assets its newest trusted Result records (`model.assets`), else its newest Result's; None where none records
    them."""
    ordered = newest_first(results)
    for r in [x for x in ordered if trusted(x)] or ordered:
        got = (r.model or {}).get("assets")
        if isinstance(got, list) and all(isinstance(a, str) for a in got):
            return Offer(kind, modality, white_box, segments, tuple(sorted(got)))
    return Offer(kind, modality, white_box, segments, None)


def _fits(b: Builtin, offer: Offer) -> bool:
    return (b.kind == offer.kind and offer.modality in b.modalities and (offer.white_box or not b.needs_gradients)
            and (offer.segments or not b.needs_segments)
            and offer.assets is not None and set(b.needs_assets) <= set(offer.assets))


def needed(offer: Offer, on: str) -> list[str]:
    """The built-in data priors a board offering `offer` needs `on` "published" (the data-prior controls) or
    "hidden" (those and the data-prior references), sorted; [] where the offer was not recorded."""
    if offer.assets is None:
        return []
    roles = ("control",) if on == "published" else ("control", "reference")
    return sorted(n for n, b in installed().items() if b.data_prior and b.role in roles and _fits(b, offer))


def _why_absent(name: str, others: Sequence[Result]) -> str:
    """Why built-in `name` is not among a board's floors: run with other code, or not run."""
    theirs = [r for r in others if str(r.submission.get("base") or r.submission.get("name")) == name]
    if theirs:
        got = str(newest_first(theirs)[0].submission.get("hash", ""))
        return (f"its Result here was run with other code (hash {got}; the installed built-in's is "
                f"{code_hash(name)}) or other metric options")
    return "not run"


def missing(needs: Sequence[str], floors: dict[str, Any], others: Sequence[Result]) -> list[tuple[str, str]]:
    """(name, why) for each of `needs` the board lacks. `floors`: built-in name → its row's value on the board, or why
    it has none (a str: it failed on every instance; on the copies, its runs are incomplete); `others`: every Result
    the board holds (to say "run with other code")."""
    out = []
    for name in needs:
        if name not in floors:
            out.append((name, _why_absent(name, others)))
        elif isinstance(floors[name], str):
            out.append((name, floors[name]))
    return out


def run_line(lacking: Sequence[tuple[str, str]], where: str, command: str) -> str:
    """The one line a board (or its copies) prints when built-in floors are missing (module docstring): which, why,
    and the command that runs them (`NAME` stands for each)."""
    names = ", ".join(n for n, _ in lacking)
    return (f"unranked: the built-in floor{'s' if len(lacking) > 1 else ''} {where} missing — "
            f"{'; '.join(f'{n}: {why}' for n, why in lacking)}; floors come from built-ins the board runs itself, "
            f"never from an uploaded Result: run `{command}` for NAME in {names} (or `xaibench leaderboard`, which "
            "runs them where the resource is built here)")


def beside(names: Sequence[str], values: Sequence[float | None], blind: Sequence[bool], floor: str | None,
           floor_value: float | None, metric: str, direction: str, where: str) -> str:
    """"a submitted data prior reaches …": the best score among rows shown with the controls that set no floor
    (`names`, `values`; `blind`: found model-blind, else a control that is not built-in), beside the floor; ""
    where there is none."""
    good = [k for k, v in enumerate(values) if v is not None]
    if not good:
        return ""
    best = max(good, key=lambda k: float(stats.oriented(np.array([values[k]]), direction)[0]))
    what = "model-blind" if blind[best] else "a control that is not a built-in"
    tail = (f"; the floor is the built-in {floor} ({metric} {floor_value:.4g})" if floor is not None
            and floor_value is not None else "")
    return (f"a submitted data prior reaches {metric} {values[best]:.4g} {where} ({names[best]}, {what}): shown with "
            f"the controls, never ranked, and never a floor — floors come from built-ins only{tail}")
