"""The Results of a results repository's checkout, for the boards and the site (`--from`): each marked
*verified* (`Result.status` "verified": a verification record at its `verifications/` path, signed under a
configured public key, for exactly this file — its path and sha256) or *self-reported* (status
"self-reported": anything else). A Result whose path disagrees with its content is left out and named.
A verified Result's record carries the maintainer's randomised-model run (`rerun`, issue #45): it is loaded
beside it, "verified" too, paired with the verified Result, for the boards' randomisation test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import parse_result_path, result_path_of, sha256

__all__ = ["load_repository", "verified"]


def verified(tree: Path, rel: str, keys: dict[str, Any]) -> bool:
    """Whether the Result at `rel` carries a valid verification record under one of `keys`."""
    from leaderboard.repository.signing import check_record

    rp = parse_result_path(rel)
    if rp is None or not keys:
        return False
    try:
        record = json.loads((tree / rp.verification).read_text(encoding="utf-8"))
        data = (tree / rel).read_bytes()
    except (OSError, ValueError):
        return False
    return (check_record(record, keys) and record.get("result") == rel
            and record.get("result_sha256") == sha256(data))


def load_repository(tree: Path, keys: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """(Results, problem lines) of a checked-out results repository."""
    from benchmark.results import Result
    from leaderboard.repository.validate import iter_result_files

    found, problems = [], []
    for rel in iter_result_files(tree):
        path = tree / rel
        try:
            r = Result.load(path)
        except XaibenchError as exc:
            problems.append(f"{rel}: {' '.join(str(exc).split())[:200]}")
            continue
        if parse_result_path(rel) != result_path_of(r):
            problems.append(f"{rel}: its path does not match its content; left out")
            continue
        r.status = "verified" if verified(tree, rel, keys) else "self-reported"
        found.append(r)
        if r.status == "verified":
            found += _randomised(tree, rel, r, problems)
    return found, problems


def _randomised(tree: Path, rel: str, r: Any, problems: list[str]) -> list[Any]:
    """The randomised-model Result the verification record of `r` carries (signed with it), paired with `r`: the
    maintainer's re-run held for `r`, so its randomised run stands for `r`'s; [] when the record has none."""
    from benchmark.results import Result

    rp = parse_result_path(rel)
    assert rp is not None
    data = json.loads((tree / rp.verification).read_text(encoding="utf-8")).get("rerun", {}).get("randomised")
    if not isinstance(data, dict) or "not_run" in data:
        return []
    try:
        rand = Result.from_dict(data)
    except XaibenchError as exc:
        why = " ".join(str(exc).split())[:160]
        problems.append(f"{rp.verification}: its randomised-model run does not read ({why})")
        return []
    if rand.model.get("randomisation") is None or result_path_of(rand) != rp:
        problems.append(f"{rp.verification}: its randomised-model run is not one of {rel}; left out")
        return []
    rand.extra.setdefault("randomisation", {})["trained_outputs_sha256"] = r.integrity.get("outputs_sha256")
    rand.status = "verified"
    return [rand]
