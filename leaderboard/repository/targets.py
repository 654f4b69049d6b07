"""From a target on the command line to a store: `hf://datasets/ORG/NAME[@REF]` is the Hub, anything else
(a folder, bare or not; a git URL) git. `REPO@REF` names a revision: a branch, `refs/pr/N` or a commit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from leaderboard.repository.layout import RepositoryError
from leaderboard.repository.store import Store

__all__ = ["HF_PREFIX", "open_store", "split_ref"]

HF_PREFIX = "hf://datasets/"


def split_ref(target: str) -> tuple[str, str | None]:
    """`REPO@REF` → (REPO, REF); (target, None) when it names no ref. A folder that exists is taken whole;
    `git@host:…` keeps its user part."""
    if Path(target).expanduser().exists() or "@" not in target:
        return target, None
    repo, _, ref = target.rpartition("@")
    user_part = ("/" not in repo and ":" not in repo) or re.search(r"://[^/]*$", repo) is not None
    if not repo or not ref or user_part or ":" in ref:  # git@host:org/x.git, ssh://git@host/x.git
        return target, None
    return repo, ref


def open_store(repo: str, client: Any = None, require: bool = True) -> Store:
    """The store of `repo` (no `@REF`); with `require`, refuses one that is not a results repository."""
    store: Store
    if repo.startswith("hf://"):
        repo_id = repo[len(HF_PREFIX):] if repo.startswith(HF_PREFIX) else ""
        if repo_id.count("/") != 1 or not all(repo_id.split("/")):
            raise RepositoryError(f"{repo}: a Hub results repository is hf://datasets/ORG/NAME")
        from leaderboard.repository.hub import HubStore

        store = HubStore(repo_id, client)
    else:
        from leaderboard.repository.git import GitStore

        store = GitStore(repo)
    if require:
        try:
            ok = store.is_results_repository()
        except BaseException:
            store.close()
            raise
        if not ok:
            store.close()
            raise RepositoryError(f"{repo} is not a results repository (no {store.base}:xaibench-results.json); "
                                  "create one with `xaibench results init`")
    return store
