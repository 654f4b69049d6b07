"""`xaibench results audit REPO ROUND` (anyone, with the maintainers' public keys): once a round's secret is revealed,
check every hidden score the repository's records sign for that round.

Checks, each mismatch one line (`audit` returns them; the command exits 1 on any):

1. the round (`rounds/<ROUND>/round.json`) is signed under the keys given, and its revealed secret
   (`rounds/<ROUND>/secret.json`) hashes to the commitment it signed (`rounds`);
2. every round record of that round (`verifications/.../<model>.rounds/<ROUND>.json`) is signed under the keys, lies
   at the path of the Result it names, names the round's commitment, and each hidden run it carries names the
   round, a draw, the track, resource and revision of its row and the draw's commitment recomputed from the revealed
   secret (`benchmark.models.variants.hidden.Round.draw`);
3. with `rebuild`: each run's copy is built again from the secret (`benchmark.variant_runs.hidden.copy_for_run`) and the
   model block the run records (the copy's hash, its construction's counts) and its instances must be the copy's;
4. with `rerun`: each run is evaluated again on the rebuilt copy from the row's hashed source, in the sandbox, and
   compared by the re-run rules (`rerun.compare`: equal outputs when deterministic; a stochastic submission twice,
   the tolerance from those two).

A record signed by a key not given is a finding too: audit vouches only for what the given keys sign.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import RepositoryError, VERIFICATIONS, parse_result_path
from leaderboard.repository.rounds import round_path, secret_path

__all__ = ["audit"]


def audit(tree: Path, name: str, keys: dict[str, Any], rebuild: bool = False, rerun: bool = False,
          sandbox: str = "auto", timeout_s: float = 60.0, sources: Any = None,
          earlier: dict[str, list[bytes]] | None = None) -> tuple[list[str], int]:
    """(mismatch lines, runs checked) of round `name` in the checkout `tree` (module docstring; its signed state read
    under `keys` with the history `earlier`, `signed_state`). `RepositoryError` when there is nothing to audit: no
    such round signed under `keys`, or it is not revealed (a `secret.json` that does not hash to the commitment
    reveals nothing: that is the one mismatch then)."""
    from benchmark.models.variants.hidden import Round
    from leaderboard.repository.signed_state import read

    state = read(tree, keys, earlier)
    rnd = state.rounds.get(name)
    if rnd is None:
        why = next((p for p in state.problems if p.startswith(f"{round_path(name)}:")), "")
        raise RepositoryError(f"{round_path(name)}: no round {name} signed under the given keys" +
                              (f" ({why})" if why else "") + "; give the maintainers' public keys (--public-key)")
    if rnd.unrevealed:
        return [rnd.unrevealed], 0
    if not rnd.revealed or rnd.secret is None or hashlib.sha256(rnd.secret).hexdigest() != rnd.commitment:
        raise RepositoryError(f"round {name} is not revealed yet ({secret_path(name)}); it can be audited once the "
                              "maintainer runs `xaibench results reveal`")
    secret = Round(name, rnd.secret)
    out: list[str] = []
    checked = 0
    for where in _round_records(tree, name):
        lines, runs = _record(tree, where, rnd, secret, keys)
        out += lines
        checked += len(runs)
        if not lines and (rebuild or rerun):
            out += [f"{where}: {line}" for line in _again(tree, runs, secret, rebuild, rerun, sandbox, timeout_s,
                                                           sources)]
    return out, checked


def _round_records(tree: Path, name: str) -> list[str]:
    """Every file `verifications/.../<model>.rounds/<name>.json` of the tree."""
    from leaderboard.repository.reading import tree_files

    files, _ = tree_files(tree / VERIFICATIONS)
    return sorted(f"{VERIFICATIONS}/{rel}" for rel in files
                  if rel.endswith(f"/{name}.json") and rel.rpartition("/")[0].endswith(".rounds"))


def _record(tree: Path, where: str, rnd: Any, secret: Any, keys: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """(mismatch lines, its runs) of one round record against the revealed secret (module docstring, 2)."""
    from benchmark.variant_runs.hidden import hidden_of
    from benchmark.store.results import Result
    from leaderboard.repository.reading import read_json
    from leaderboard.repository.signed_state import MAX_RECORD_BYTES
    from leaderboard.repository.signing import check_record

    try:
        record = read_json(tree / where, where, MAX_RECORD_BYTES)
    except RepositoryError as exc:
        return [str(exc)], []
    if not check_record(record, keys):
        return [f"{where}: not signed under the given keys"], []
    rp = parse_result_path(str(record.get("result")))
    if rp is None or rp.round_record(rnd.name) != where:
        return [f"{where}: names the Result {record.get('result')}, whose round record is elsewhere"], []
    out = []
    if record.get("round") != rnd.name or record.get("round_commitment") != rnd.commitment:
        out.append(f"{where}: signs round {record.get('round')} with commitment {record.get('round_commitment')}; "
                   f"{round_path(rnd.name)} committed to {rnd.commitment}")
    runs = []
    for item in record.get("hidden") if isinstance(record.get("hidden"), list) else []:
        try:
            run = Result.from_dict(item)
            h = hidden_of(run) or {}
            draw = h.get("draw")
            board = (run.track, str(run.resource["name"]), str(run.resource["revision"]))
        except (XaibenchError, ValueError, TypeError, AttributeError, KeyError) as exc:
            out.append(f"{where}: a run that is not a Result ({' '.join(str(exc).split())[:120]})")
            continue
        if isinstance(draw, bool) or not isinstance(draw, int) or draw < 0 or h.get("round") != rnd.name \
                or board != (rp.track, rp.resource, rp.revision):
            out.append(f"{where}: a run of round {h.get('round')}, draw {draw!r}, board {'/'.join(board)}; not a draw "
                       f"of round {rnd.name} on {rp.track}/{rp.resource}@{rp.revision}")
            continue
        want = secret.draw(rp.track, rp.resource, rp.revision, draw).commitment
        if h.get("commitment") != want:
            out.append(f"{where}: hidden copy {draw} signs the commitment {h.get('commitment')}; the revealed secret "
                       f"gives {want}")
            continue
        runs.append(run)
    return out, runs


def _again(tree: Path, runs: list[Any], secret: Any, rebuild: bool, rerun: bool, sandbox: str, timeout_s: float,
           sources: Any) -> list[str]:
    """Mismatches of the runs of one record against their copies rebuilt from the secret and, with `rerun`, against
    the submission evaluated on them again (module docstring, 3 and 4)."""
    import json

    from benchmark.variant_runs.hidden import copy_for_run, hidden_of
    from benchmark.resources import load_resource
    from benchmark.runner import board_assets, model_record
    from benchmark.tracks import get_track

    out = []
    for run in runs:
        draw = int((hidden_of(run) or {})["draw"])
        try:
            trk = get_track(run.track)
            res = load_resource(str(run.resource["name"]), revision=str(run.resource["revision"]))
            split, model = str(run.resource["split"]), str(run.model["name"])
            published = trk.instances(res, split, None)
            spec, info = trk.build_model(res, model, published)
            offered = board_assets(trk, res)
            copy, copy_info, instances, coverage = copy_for_run(trk, res, model, split, draw, None,
                                                                model_record(spec, info, published, offered), secret)
            rebuilt = json.loads(json.dumps(model_record(copy, copy_info, instances, offered), default=str))
            if "assets" not in run.model:  # a run written before Results recorded their board's assets (issue #58)
                rebuilt.pop("assets", None)
        except XaibenchError as exc:
            out.append(f"hidden copy {draw}: its copy cannot be rebuilt ({' '.join(str(exc).split())[:200]})")
            continue
        if rebuilt != run.model:
            differ = sorted(k for k in set(rebuilt) | set(run.model) if rebuilt.get(k) != run.model.get(k))
            out.append(f"hidden copy {draw}: the run's model differs from the copy rebuilt from the secret "
                       f"({', '.join(differ)}: model hash {run.model.get('hash')}, rebuilt {rebuilt.get('hash')})")
        elif coverage.get("ids_sha256") != (run.coverage or {}).get("ids_sha256"):
            out.append(f"hidden copy {draw}: the run covers other instances than the copy rebuilt from the secret")
        elif rerun:
            out += [f"hidden copy {draw}: {line}" for line in _rerun(tree, run, draw, secret, sandbox, timeout_s,
                                                                     sources)]
    return out


def _rerun(tree: Path, run: Any, draw: int, secret: Any, sandbox: str, timeout_s: float, sources: Any) -> list[str]:
    """The re-run rules (`rerun.compare`) between a signed hidden run and the submission evaluated again on its copy
    (once when deterministic, twice when not), from its row's hashed source."""
    from leaderboard.repository.layout import result_path_of
    from leaderboard.repository.rerun import compare, hidden_runs, rebuild

    rp = result_path_of(run)
    again = []
    with tempfile.TemporaryDirectory(prefix="xaibench-audit-") as scratch:
        try:
            sub, env = rebuild(tree, rp, run, sources, Path(scratch))
            for k in range(1 if sub.deterministic else 2):
                runs, not_run, problems = hidden_runs(sub, run, rp, secret, [draw], Path(scratch) / f"again-{k}",
                                                      sandbox, timeout_s, None if env is None else env.packages)
                if not_run or problems:
                    return (not_run + problems)[:1]
                again += runs
        except (XaibenchError, OSError, KeyError, TypeError, ValueError) as exc:
            return [f"the re-run failed: {' '.join(str(exc).split())[:300]}"]
    return compare(run, again, sub.deterministic)[1]

