"""One store interface over a results repository, whatever holds it (DESIGN §8): a git repository
(`leaderboard.repository.git`) or a Hugging Face dataset repository (`leaderboard.repository.hub`).

Everything else — the validator, `submit`, the re-run, the boards — works on plain folders (`snapshot`)
and on file maps (`{path in the repository: bytes}`), so it never knows which backend it talks to.
"""

from __future__ import annotations

import shutil
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path

__all__ = ["Store"]


class Store(ABC):
    """A results repository: read a revision as a folder, propose files (a pull request), commit files to the
    base branch (maintainers only), merge a proposal. `where` names it in messages; `base` is its default
    branch. Use as a context manager: snapshots live in a private temp folder removed at exit."""

    where: str = ""
    base: str = "main"

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="xaibench-repository-"))
        # per snapshot folder: the entries it left out (path in the repository → why), `snapshot`'s contract
        self.skipped: dict[Path, dict[str, str]] = {}

    def skipped_in(self, tree: Path) -> dict[str, str]:
        """The entries the snapshot `tree` left out (path → why: a link, an oversize blob, a bad tree entry …)."""
        return dict(self.skipped.get(Path(tree), {}))

    def earlier_in(self, tree: Path) -> dict[str, list[bytes]] | None:
        """The earlier versions main's history held of the signed files a commit could remove or overwrite
        (`signed_state`: bindings, rounds) for the snapshot `tree`: path → their bytes. None: this store reads no
        history (the Hub's is not read), and `signed_state` says what it cannot tell without it."""
        return None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the snapshots and the scratch space."""
        shutil.rmtree(self.tmp, ignore_errors=True)

    @abstractmethod
    def is_results_repository(self) -> bool:
        """Whether the base branch holds the layout marker (`layout.MARKER`)."""

    @abstractmethod
    def snapshot(self, ref: str | None = None) -> Path:
        """The files of `ref` (a branch, `refs/pr/N`, a commit; default the base branch) as a read-only-by-
        convention folder of plain files. An entry no checkout may hold (a link, a blob over the size cap, a bad
        tree entry) is left out and listed in `skipped_in(folder)`, never a reason to refuse the revision: one
        bad object on the default branch is one skipped entry."""

    @abstractmethod
    def tip(self) -> str:
        """The commit the base branch is at now (what a pull request is judged against, `pull`)."""

    @abstractmethod
    def author(self, ref: str) -> str | None:
        """Who opened the pull request `ref`, where the store can tell (the Hub's author); None where it
        cannot (a bare git repository knows no accounts)."""

    @abstractmethod
    def land(self, ref: str, files: dict[str, bytes], title: str, expected_tip: str) -> str:
        """Add `files` (a pull request's files and any maintainers' records) to the base branch in one commit
        whose parent is `expected_tip` — refused (`RepositoryError`) when the branch moved meanwhile — and mark
        the pull request `ref` merged; returns the new commit."""

    @abstractmethod
    def merge_base(self, ref: str) -> str:
        """The newest commit that `ref` and the base branch share (what a pull request is judged against)."""

    @abstractmethod
    def differing(self, files: dict[str, bytes]) -> tuple[list[str], list[str]]:
        """(paths absent from the base branch, paths present there with other content)."""

    @abstractmethod
    def find_proposal(self, key: str) -> str | None:
        """Where an open proposal made with `key` is (a branch, a pull request), or None."""

    @abstractmethod
    def propose(self, files: dict[str, bytes], title: str, key: str) -> tuple[str, str]:
        """Open a pull request adding `files` to the base branch in one commit; returns (where it is, its ref:
        what `REPO@REF` names it by)."""

    @abstractmethod
    def commit(self, files: dict[str, bytes], title: str) -> str:
        """Add `files` to the base branch in one commit (maintainers: verification records); returns the commit."""
