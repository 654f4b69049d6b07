"""The Results of a results repository's checkout, for the boards and the site (`--from`): each marked
*verified* (`Result.status` "verified": a verification record at its `verifications/` path, signed under a
configured public key, for exactly this file — its path and sha256) or *self-reported* (status
"self-reported": anything else). A Result whose path disagrees with its content is left out and named."""

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
    return found, problems
