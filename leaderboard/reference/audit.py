"""`xaibench reference audit`: anyone's check of the shipped reference, with nothing but the package.

1. every shipped file is what the build shipped, and every Result verifies against its record under the shipped
   key (`leaderboard.reference.check`: a file edited by hand is named, MODIFIED);
2. each of the reference's rounds is audited as `xaibench results audit` audits a repository
   (`leaderboard.repository.audit.audit` on the shipped tree, under the shipped key): the round is signed, its
   revealed secret hashes to the commitment, and every round record's runs are draws of it;
3. with `rebuild` / `rerun`, on `sample` round records drawn with `seed` (all when `sample` is 0): each run's copy is
   built again from the revealed secret and compared, and with `rerun` the submission is evaluated again on it from
   the row's shipped source — both need the resource at the revision the row names (built here, or on the Hub).
"""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError

__all__ = ["audit_reference", "round_records"]


def round_records(tree: Path, name: str) -> list[str]:
    """Every round record of round `name` in the tree, sorted."""
    return sorted(p.relative_to(tree).as_posix() for p in (tree / "verifications").rglob(f"*.rounds/{name}.json"))


def audit_reference(where: Path | None = None, rebuild: bool = False, rerun: bool = False, sample: int = 0,
                    seed: int = 0, track: str | None = None, sandbox: str = "auto", timeout_s: float = 60.0,
                    sources: Any = None) -> tuple[list[str], dict[str, int]]:
    """(mismatch lines, counts: Results, runs checked, runs rebuilt) of the shipped reference (module docstring);
    `track`: rebuild only that track's rows."""
    from leaderboard.reference import Reference, check, public_keys
    from leaderboard.repository.audit import audit

    lines, n_results = check(where)
    ref = Reference(where)
    names = ref.rounds()
    if not names:
        return lines + ["rounds/: no round of the reference (the manifest names none, and the tree holds not one)"], \
            {"results": n_results, "runs": 0, "rebuilt": 0}
    keys = public_keys(ref)
    checked = rebuilt = 0
    for name in names:
        found, n = audit(ref.tree, name, keys)
        lines += found
        checked += n
        if rebuild or rerun:
            more, k = _rebuild(ref.tree, name, keys, rerun, sample, seed, track, sandbox, timeout_s, sources)
            lines += [x for x in more if x not in found]
            rebuilt += k
    return lines, {"results": n_results, "runs": checked, "rebuilt": rebuilt}


def _rebuild(tree: Path, name: str, keys: dict[str, Any], rerun: bool, sample: int, seed: int, track: str | None,
             sandbox: str, timeout_s: float, sources: Any) -> tuple[list[str], int]:
    """Round `name`'s copies built again from its revealed secret (and with `rerun` its rows evaluated again) on
    `sample` of its round records drawn with `seed` (all when 0), in a scratch copy of the tree."""
    from leaderboard.repository.audit import audit

    records = round_records(tree, name)
    if track is not None:
        records = [r for r in records if r.split("/")[3] == track]
    chosen = records if sample <= 0 or sample >= len(records) else sorted(random.Random(seed).sample(records, sample))
    with tempfile.TemporaryDirectory(prefix="xaibench-reference-audit-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree, copy)
        for rel in set(round_records(copy, name)) - set(chosen):
            (copy / rel).unlink()
        try:
            return audit(copy, name, keys, rebuild=True, rerun=rerun, sandbox=sandbox, timeout_s=timeout_s,
                         sources=sources)
        except XaibenchError as exc:
            return [str(exc)], 0
