"""The Hugging Face backend of the results store: a dataset repository `hf://datasets/ORG/NAME`, through
`huggingface_hub`'s `HfApi` — `snapshot_download` to read a revision, `create_commit(..., create_pr=True)`
to open a pull request (`refs/pr/N`), `create_commit` on `main` with `parent_commit` to land a pull request's
files with maintainers' records in one step (`land`; the pull request is then closed), and
`get_discussion_details` to name who opened a pull request. `client` replaces `HfApi()` (tests record the
calls through it; with `HF_HUB_OFFLINE=1` a real `HfApi` refuses every call, which is said in one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leaderboard.repository.layout import MARKER, RepositoryError, blob_id
from leaderboard.repository.store import Store

__all__ = ["HubStore", "TITLE_KEY"]

TITLE_KEY = "[xaibench {key}]"  # how a pull request's title carries its proposal key
REPO_TYPE = "dataset"


def sweep(root: Path) -> dict[str, str]:
    """Remove from a downloaded tree every entry that is not a plain file of at most `git.MAX_BLOB` bytes (a link,
    a FIFO, an oversize file) and say why, path by path (`Store.snapshot`)."""
    import os
    import shutil

    from leaderboard.repository.git import MAX_BLOB
    from leaderboard.repository.reading import tree_files

    files, bad = tree_files(root)
    out = {line.partition(": ")[0]: line.partition(": ")[2] + "; skipped" for line in bad}
    for rel in out:
        p = root / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
    for rel, p in files.items():
        size = os.lstat(p).st_size
        if size > MAX_BLOB:
            out[rel] = f"{size:,} bytes, more than the {MAX_BLOB:,} any file may have; skipped"
            p.unlink()
    return dict(sorted(out.items()))


MAX_IGNORED = 1000  # patterns handed to `snapshot_download` (each is matched against every path)


def bounded(paths: list[str]) -> tuple[dict[str, str], list[str]]:
    """(path → why it is skipped, `ignore_patterns` that keep each out of a download) for the paths a revision
    lists: out of the tree bounds (`layout.path_problem`: too deep or long, `..`, unprintable) or past the first
    `layout.MAX_TREE_ENTRIES`. A path too deep is ignored from the folder at the bound down, in one pattern.
    `RepositoryError` when more than `MAX_IGNORED` patterns would be needed (a revision built to be unreadable)."""
    import glob

    from leaderboard.repository.layout import MAX_TREE_DEPTH, MAX_TREE_ENTRIES, path_problem, printable

    skipped: dict[str, str] = {}
    ignore: set[str] = set()
    for n, path in enumerate(paths):
        why = path_problem(path) if n < MAX_TREE_ENTRIES else \
            f"past the first {MAX_TREE_ENTRIES:,} entries a results repository may hold; skipped"
        if not why:
            continue
        skipped[printable(path)] = why
        parts = path.split("/")
        ignore.add(glob.escape("/".join(parts[:MAX_TREE_DEPTH])) + ("/*" if len(parts) > MAX_TREE_DEPTH else ""))
        if len(ignore) > MAX_IGNORED:
            raise RepositoryError(f"the revision lists more than {MAX_IGNORED:,} paths out of the tree bounds "
                                  f"({printable(path)}: {why}); it is not read")
    return skipped, sorted(ignore)


class HubStore(Store):
    """A results repository on the Hub (`repo_id` = ORG/NAME, a dataset repository)."""

    def __init__(self, repo_id: str, client: Any = None) -> None:
        super().__init__()
        if client is None:
            from huggingface_hub import HfApi

            client = HfApi()
        self.api, self.repo_id = client, repo_id
        self.where, self.base = f"hf://datasets/{repo_id}", "main"

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.api, method)(*args, **kwargs)
        except Exception as exc:  # OfflineModeIsEnabled, HfHubHTTPError, RepositoryNotFoundError, network errors
            why = " ".join(str(exc).split())[:200]
            raise RepositoryError(f"the Hub refused {method} on {self.where} ({type(exc).__name__}: {why}); "
                                  "check the name, your token (`hf auth login`) and HF_HUB_OFFLINE") from None

    def is_results_repository(self) -> bool:
        """`file_exists` of the marker on main."""
        return bool(self._call("file_exists", self.repo_id, MARKER, repo_type=REPO_TYPE, revision=self.base))

    def snapshot(self, ref: str | None = None) -> Path:
        """`snapshot_download` of the revision into the scratch space, without the paths out of the tree bounds
        (`list_repo_files` first, `bounded`: each is listed, never downloaded); then every entry that is not a plain
        file within the size cap is removed and listed (`sweep`)."""
        dest = self.tmp / f"tree-{(ref or self.base).replace('/', '_')}"
        if not dest.exists():
            listed = self._call("list_repo_files", self.repo_id, repo_type=REPO_TYPE, revision=ref or self.base)
            skipped, ignore = bounded([str(p) for p in listed])
            self._call("snapshot_download", repo_id=self.repo_id, repo_type=REPO_TYPE, revision=ref or self.base,
                       local_dir=str(dest), **({"ignore_patterns": ignore} if ignore else {}))
            dest.mkdir(exist_ok=True)
            for cache in dest.glob(".cache"):  # huggingface_hub's bookkeeping, not part of the repository
                import shutil

                shutil.rmtree(cache, ignore_errors=True)
            self.skipped[dest] = dict(sorted({**skipped, **sweep(dest)}.items()))
        return dest

    def tip(self) -> str:
        """main's newest commit (`list_repo_commits`)."""
        commits = list(self._call("list_repo_commits", self.repo_id, repo_type=REPO_TYPE, revision=self.base))
        if not commits:
            raise RepositoryError(f"{self.where} has no commit on {self.base}")
        return str(commits[0].commit_id)

    def _num(self, ref: str) -> int:
        num = ref.removeprefix("refs/pr/")
        if not num.isdigit():
            raise RepositoryError(f"{ref} is not a pull request of {self.where}; give refs/pr/N")
        return int(num)

    def author(self, ref: str) -> str | None:
        """The Hub account that opened the pull request (`get_discussion_details(...).author`)."""
        details = self._call("get_discussion_details", self.repo_id, self._num(ref), repo_type=REPO_TYPE)
        author = getattr(details, "author", None)
        if not isinstance(author, str) or not author:
            raise RepositoryError(f"the Hub names no author for {ref} on {self.where}")
        return author

    def land(self, ref: str, files: dict[str, bytes], title: str, expected_tip: str) -> str:
        """`create_commit` on main with `parent_commit=expected_tip` (the Hub refuses it when main moved), then
        the pull request closed with a comment naming the commit (its files are on main now)."""
        num = self._num(ref)
        info = self._call("create_commit", self.repo_id, self._operations(files), commit_message=title,
                          repo_type=REPO_TYPE, revision=self.base, parent_commit=expected_tip)
        commit = str(getattr(info, "oid", info))
        self._call("change_discussion_status", self.repo_id, num, "closed", repo_type=REPO_TYPE,
                   comment=f"landed on {self.base} as {commit}: {title}")
        return commit

    def merge_base(self, ref: str) -> str:
        """The newest commit of `ref` that main's history holds (`list_repo_commits` of both)."""
        on_main = {c.commit_id for c in self._call("list_repo_commits", self.repo_id, repo_type=REPO_TYPE,
                                                    revision=self.base)}
        for c in self._call("list_repo_commits", self.repo_id, repo_type=REPO_TYPE, revision=ref):
            if c.commit_id in on_main:
                return str(c.commit_id)
        raise RepositoryError(f"{ref} shares no history with main on {self.where}")

    def differing(self, files: dict[str, bytes]) -> tuple[list[str], list[str]]:
        """By blob id (`get_paths_info` on main)."""
        infos = self._call("get_paths_info", self.repo_id, sorted(files), repo_type=REPO_TYPE, revision=self.base)
        have = {i.path: getattr(i, "blob_id", None) for i in infos}
        return ([p for p in sorted(files) if p not in have],
                [p for p in sorted(files) if p in have and have[p] != blob_id(files[p])])

    def find_proposal(self, key: str) -> str | None:
        """An open pull request whose title carries `key`."""
        tag = TITLE_KEY.format(key=key)
        for d in self._call("get_repo_discussions", self.repo_id, repo_type=REPO_TYPE,
                            discussion_type="pull_request", discussion_status="open"):
            if tag in d.title:
                return f"{self.where} pull request #{d.num} (refs/pr/{d.num})"
        return None

    def _operations(self, files: dict[str, bytes]) -> list[Any]:
        from huggingface_hub import CommitOperationAdd

        return [CommitOperationAdd(path_in_repo=p, path_or_fileobj=data) for p, data in sorted(files.items())]

    def propose(self, files: dict[str, bytes], title: str, key: str) -> tuple[str, str]:
        """`create_commit(..., create_pr=True)`: one commit in a new pull request (`refs/pr/<pr_num>`)."""
        info = self._call("create_commit", self.repo_id, self._operations(files),
                          commit_message=f"{title} {TITLE_KEY.format(key=key)}", repo_type=REPO_TYPE,
                          revision=self.base, create_pr=True)
        num = getattr(info, "pr_num", None)
        return f"{self.where} pull request {getattr(info, 'pr_url', None) or info}", f"refs/pr/{num}"

    def commit(self, files: dict[str, bytes], title: str) -> str:
        """`create_commit` on main."""
        info = self._call("create_commit", self.repo_id, self._operations(files), commit_message=title,
                          repo_type=REPO_TYPE, revision=self.base)
        return str(getattr(info, "oid", info))
