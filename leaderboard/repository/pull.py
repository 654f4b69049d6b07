"""A pull request as `validate`, `verify` and `merge` judge it: against the *tip* of the default branch, read
once (`tip_commit`) and held to until it lands, never against the commit the pull request was cut from.

`open_pull_request(store, ref)`:
1. what the pull request changes is `diff(merge-base, head)`: it may only add files (a modified or deleted
   file is a finding), and every entry it adds must be a plain file (`reading.tree_files`, and what the store's
   snapshot skipped: a link, an oversize blob, a bad tree entry). It is judged on its own changes only: an entry
   already on the default branch — however bad — is never its finding (the snapshot skips it, and the boards
   list it);
2. the tree it would give is the tip plus those added files (`merged`); a path the tip already holds with
   the same bytes adds nothing, with other bytes it is a finding (files are never replaced), so an old
   branch cannot re-add a merged Result or reach past a name the tip holds;
3. `judge` runs the validator on (`merged`, `tip`) with the identity that opened it, where the store can
   tell (the Hub's pull-request author) — None on bare git —, and who holds a name as the tip's signed state says
   (`signed_state`, under the maintainers' keys).
Landing (`Store.land`) writes the added files and any records in one commit whose parent is `tip_commit`,
refused when the default branch moved meanwhile: a record is never written for a file main does not hold.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import MAX_TOTAL_BYTES, RepositoryError
from leaderboard.repository.reading import read_bytes, tree_files
from leaderboard.repository.validate import Change, diff_trees, validate

__all__ = ["PullRequest", "judge", "open_pull_request"]


@dataclass
class PullRequest:
    """One pull request laid over the tip (module docstring)."""

    ref: str
    tip_commit: str
    tip: Path
    merged: Path
    added: dict[str, bytes] = field(default_factory=dict)  # what landing it writes (new to the tip)
    changes: list[Change] = field(default_factory=list)  # `merged` against `tip`
    findings: list[str] = field(default_factory=list)  # against its merge base: edits, deletions, odd entries
    author: str | None = None  # who opened it, where the store can tell
    state: Any = None  # the tip's signed state (`signed_state`), None when no key was given to read it


def open_pull_request(store: Any, ref: str, keys: dict[str, Any] | None = None) -> PullRequest:
    """The pull request `ref` of `store`, laid over the current tip (module docstring); with `keys` (the
    maintainers' public keys, `{}` when none is configured) the tip's signed state is read under them, and who holds
    a name is judged by it — without, it is left unjudged (`validate.check_changes`)."""
    from leaderboard.repository.signed_state import of_snapshot

    tip_commit = store.tip()
    tip = store.snapshot(tip_commit)
    head = store.snapshot(ref)
    start = store.snapshot(store.merge_base(ref))
    pr = PullRequest(ref, tip_commit, tip, store.tmp / f"merged-{len(list(store.tmp.glob('merged-*')))}",
                     author=store.author(ref), state=None if keys is None else of_snapshot(store, tip, keys))
    head_files, odd = tree_files(head)
    start_files, start_odd = tree_files(start)
    pr.findings += [line for line in odd if line not in start_odd]  # its own entries only
    before = store.skipped_in(start)
    pr.findings += [f"{path}: {why} (a pull request adds plain files only)"
                    for path, why in store.skipped_in(head).items() if before.get(path) != why]
    for c in diff_trees(start, head):
        if c.status != "added":
            pr.findings.append(f"{c.path}: a pull request may only add files; this one is {c.status}")
    tip_files, _ = tree_files(tip)
    shutil.copytree(tip, pr.merged, symlinks=True)
    budget = MAX_TOTAL_BYTES  # what one pull request may add: read no more than that
    for rel, path in head_files.items():
        if rel in start_files:
            continue
        try:
            data = read_bytes(path, rel, max(budget, 0))
        except RepositoryError as exc:
            pr.findings.append(f"{exc} (a pull request adds at most {MAX_TOTAL_BYTES:,} bytes)")
            break
        budget -= len(data)
        if rel in tip_files:
            if read_bytes(tip_files[rel], rel, MAX_TOTAL_BYTES) != data:
                pr.findings.append(f"{rel}: the default branch already holds it with other content; its files are "
                                   "never replaced (bump the version: a new code hash is a new folder)")
            continue
        pr.added[rel] = data
        (pr.merged / rel).parent.mkdir(parents=True, exist_ok=True)
        (pr.merged / rel).write_bytes(data)
    pr.changes = [Change("added", rel) for rel in sorted(pr.added)]
    return pr


def judge(pr: PullRequest) -> list[str]:
    """Every finding on the pull request: its own (`open_pull_request`) and the validator's."""
    return pr.findings + validate(pr.merged, pr.tip, pr.changes, pr.author, pr.state)
