"""The Results of a results repository's checkout, for the boards and the site (`--from`).

Each file is read with the one strict reader (`reading.read_json`: duplicate keys, nesting, size, UTF-8); a
file that does not read, or whose path disagrees with its content, is listed and left out — the board is
still built. Each Result is marked *verified* (`Result.status` "verified") when a verification record at its
`verifications/` path is signed under a configured public key and names exactly this file's path and sha256,
the digest of its folder's `source/` and the sha256 of its `submission.json`, all recomputed here — so any later
change of the Result, the code or the metadata on the default branch turns the row *self-reported*.

What the file cannot prove is not shown from it: a verified row shows the re-run's wall time and fit time (from
the signed record); a row keeps `extra.cache` only where it is the harness's own cache name for that run
(`runner.cache_rel`), so the site never opens a path a contributor wrote.

Every per-row verdict reads only what a maintainer signed (`leaderboard.companions`): a verified Result's
record carries the re-run's companion runs (`rerun`: the randomised-model Result under `randomised`, one key per
`companions.KINDS` entry), attached to that row alone (`Result.companions`), "verified" too (`_companions`); a
self-reported Result has none, and the board does not rank it where the track applies the test. A companion
Result *file* in the tree (a randomised-model run at a Result path) is never read: it is listed and left out, so
no file on the default branch — in another folder, under the verified one's name — can change what a verified
row shows. A verified row's hidden-copy runs come from its round records (`_round_runs`: signed, bound to the row
like its record, of a round the repository holds signed with the commitment the record names). Which records,
rounds and bindings are believed is `signed_state`'s to say: this module asks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError
from leaderboard.companions import KINDS, kind_of
from leaderboard.repository.layout import (MAX_RESULT_BYTES, RepositoryError, parse_result_path, printable,
                                           result_path_of)
from leaderboard.repository.signed_state import MAX_RECORD_BYTES, binds, verified

__all__ = ["MAX_RECORD_BYTES", "binds", "load_repository", "verified"]


def _own_cache(r: Any) -> None:
    """Keep `extra.cache` / `caches` only where each is the harness's own name for the run (`runner.cache_rel`:
    everything but the inputs' folder recomputed from the Result, that folder one plain name) — else drop them,
    and the site draws no picture for the row."""
    import re

    from benchmark.runner import cache_rel
    from leaderboard.repository.layout import PART_RE

    extra = r.extra
    named = extra.pop("caches", None) or [extra.get("cache")]
    extra.pop("cache", None)
    try:
        seeds = r.provenance.get("seeds") or [r.provenance.get("seed", 0)]
        parts = [r.track, str(r.model["name"]), str(r.submission["name"]), str(r.submission["hash"]),
                 str(r.model.get("hash")), str(r.resource["split"])]
        if not all(PART_RE.match(p) for p in parts) or not all(isinstance(s, int) for s in seeds) \
                or not isinstance(named, list) or len(named) != len(seeds):
            return
        own = [cache_rel(parts[0], "INPUTS", parts[1], parts[2], parts[3], parts[4],
                         r.submission.get("parameters") or {}, s, parts[5]) for s in seeds]
        pattern = [re.compile("^" + re.escape(o).replace("INPUTS", "[A-Za-z0-9][A-Za-z0-9._-]*") + "$") for o in own]
        if not all(isinstance(n, str) and p.match(n) and ".." not in n for n, p in zip(named, pattern)):
            return
    except (KeyError, TypeError, AttributeError):
        return
    extra["cache"] = named[0]
    if len(named) > 1:
        extra["caches"] = named


def load_repository(tree: Path, keys: dict[str, Any],
                    earlier: dict[str, list[bytes]] | None = None) -> tuple[list[Any], list[str]]:
    """(Results, problem lines) of a checked-out results repository, its signed state read under `keys` with the
    history `earlier` (`signed_state.read`): every line it lists, and one per round that is missing (its hidden
    scores are named, not dropped silently). Every line is printable (`layout.printable`)."""
    from benchmark.store.results import Result
    from leaderboard.repository.reading import read_json
    from leaderboard.repository.signed_state import read
    from leaderboard.repository.validate import iter_result_files

    state = read(tree, keys, earlier)
    problems = [*state.problems, *state.missing_lines()]
    found = []
    for rel in iter_result_files(tree):
        try:
            r = Result.from_dict(read_json(tree / rel, rel, MAX_RESULT_BYTES))
        except RepositoryError as exc:
            problems.append(f"{exc}; left out")
            continue
        except (XaibenchError, ValueError, TypeError, AttributeError, KeyError) as exc:
            problems.append(f"{rel}: not a Result ({' '.join(str(exc).split())[:160]}); left out")
            continue
        if not all(isinstance(x, dict) for x in (r.extra, r.provenance, r.model, r.resource, r.submission)):
            problems.append(f"{rel}: not a Result (extra, provenance, model, resource and submission are objects); "
                            "left out")
            continue
        kind = kind_of(r)
        if kind is not None:
            problems.append(f"{rel}: a {kind} run; a results repository carries it inside its row's verification "
                            "record, never as a file; left out")
            continue
        if parse_result_path(rel) != result_path_of(r):
            problems.append(f"{rel}: its path does not match its content; left out")
            continue
        _own_cache(r)
        record = state.verified(rel, problems)
        r.status = "verified" if record is not None else "self-reported"
        r.path = tree / rel
        if record is not None:
            wall, fit = record.get("wall_time_s"), record.get("fit_s")
            r.wall_time_s = float(wall) if isinstance(wall, (int, float)) and not isinstance(wall, bool) else 0.0
            r.extra.pop("fit_s", None)
            if isinstance(fit, (int, float)) and not isinstance(fit, bool):
                r.extra["fit_s"] = float(fit)
        r.companions = {} if record is None else _companions(record, rel, r, problems)
        if record is not None:
            r.companions.setdefault("hidden", []).extend(_round_runs(state, rel, r, problems))
        found.append(r)
    return found, [printable(line) for line in problems]


def _round_runs(state: Any, rel: str, r: Any, problems: list[str]) -> list[Any]:
    """The hidden-copy runs of the verified `r` from its round records that the signed state believes
    (`SignedState.round_records`: signed, bound to the row, of a round held signed with the commitment they name);
    each run must be of that round. Anything else is listed and left out."""
    from benchmark.variant_runs.hidden import hidden_round

    out = []
    for where, record, rnd in state.round_records(rel, problems):
        runs = _companions({"hidden": record.get("hidden")}, rel, r, problems).get("hidden", [])
        kept = [h for h in runs if hidden_round(h) == rnd.name]
        if len(kept) < len(runs):
            problems.append(f"{where}: a run of another round than {rnd.name}; left out")
        out += kept
    return out


def _companions(record: dict[str, Any], rel: str, r: Any, problems: list[str]) -> dict[str, list[Any]]:
    """The companion runs a verification record carries (signed with it; under each kind's `record_key`: one
    Result or a list of them), for the verified `r` alone: the maintainer's re-run held for `r`, so its companion
    runs stand for `r`'s. A run that is not a Result of `r`'s path and of its kind is listed and left out."""
    from benchmark.store.results import Result

    out: dict[str, list[Any]] = {}
    for kind in KINDS.values():
        data = record.get(kind.record_key)
        for item in data if isinstance(data, list) else [] if data is None else [data]:
            try:
                run = Result.from_dict(item)
                ok = kind_of(run) == kind.name and result_path_of(run) == parse_result_path(rel) \
                    and isinstance(run.extra, dict)
            except (XaibenchError, ValueError, TypeError, AttributeError, KeyError) as exc:
                why = " ".join(str(exc).split())[:120]
                problems.append(f"{rel}: its record's {kind.name} run is not a Result ({why}); left out")
                continue
            if not ok:
                problems.append(f"{rel}: its record's {kind.name} run is not one of this Result; left out")
                continue
            _own_cache(run)
            if kind.name == "randomised":  # paired with exactly the verified Result's maps (the re-run held)
                record_of = run.extra.get("randomisation")
                run.extra["randomisation"] = {**(record_of if isinstance(record_of, dict) else {}),
                                              "trained_outputs_sha256": r.integrity.get("outputs_sha256"),
                                              "trained_ids_sha256": (r.coverage or {}).get("ids_sha256")}
            run.status = "verified"
            out.setdefault(kind.name, []).append(run)
    return out
