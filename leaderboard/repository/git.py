"""The git backend of the results store: any repository `git` reaches (a local folder, bare or not, or a
URL). Git's plumbing only — `fetch`, `archive`, `hash-object`, `update-index`, `commit-tree`, `push` — in a
private scratch repository, so no working tree of the caller's is ever touched and a failed step leaves the
remote as it was. A pull request is a branch `xaibench/<submission>/<code-hash>/<key>`
with one commit on the base branch (a forge shows it as a pull request; `refs/pr/N` refs work as `@REF`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from leaderboard.repository.layout import MARKER, RepositoryError
from leaderboard.repository.store import Store

__all__ = ["GitStore"]

MAX_BLOB = 64 << 20  # no file of a results repository may be larger (`layout`: a pull request's whole cap)
IDENTITY = {"GIT_AUTHOR_NAME": "xaibench", "GIT_AUTHOR_EMAIL": "xaibench@localhost",
            "GIT_COMMITTER_NAME": "xaibench", "GIT_COMMITTER_EMAIL": "xaibench@localhost"}


class GitStore(Store):
    """A results repository in git at `url` (a path or a URL)."""

    def __init__(self, url: str) -> None:
        super().__init__()
        path = Path(url).expanduser()
        self.url = str(path.resolve()) if path.exists() else url
        self.where = self.url
        self.work = self.tmp / "git"
        self._git("init", "--quiet", "--bare", str(self.work), cwd=self.tmp)
        self._fetched: dict[str, str] = {}
        try:
            head = self._git("ls-remote", "--symref", self.url, "HEAD")
        except RepositoryError:
            self.close()
            raise RepositoryError(f"{url} is not a git repository git can read; give a results repository "
                                  "(a folder, a git URL or hf://datasets/ORG/NAME)") from None
        line = next((x for x in head.splitlines() if x.startswith("ref: ")), "")
        self.base = line[len("ref: refs/heads/"):].split("\t")[0] if line else "main"

    def _git(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             data: bytes | None = None) -> str:
        run = subprocess.run(["git", *args], cwd=cwd or self.work, input=data, capture_output=True,
                             env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}, timeout=300)
        if run.returncode != 0:
            why = (run.stderr.decode(errors="replace").strip().splitlines() or ["failed"])[-1]
            raise RepositoryError(f"git {args[0]} on {self.where or self.url}: {why}")
        return run.stdout.decode(errors="replace").strip()

    def _fetch(self, ref: str) -> str:
        """The commit `ref` names on the remote, fetched into the scratch repository."""
        if ref not in self._fetched and ref in self._fetched.values():  # a commit fetched already
            return ref
        if ref not in self._fetched:
            local = f"refs/xaibench/{len(self._fetched)}"
            try:
                self._git("fetch", "--quiet", "--no-tags", self.url, f"+{ref}:{local}")
            except RepositoryError:
                raise RepositoryError(f"{self.where} has no branch or ref '{ref}'") from None
            self._fetched[ref] = self._git("rev-parse", local)
        return self._fetched[ref]

    def is_results_repository(self) -> bool:
        """Whether the base branch holds the marker file."""
        try:
            commit = self._fetch(self.base)
        except RepositoryError:
            return False
        return bool(self._git("ls-tree", commit, "--", MARKER))

    def snapshot(self, ref: str | None = None) -> Path:
        """`git archive` of the commit, streamed and unpacked into the scratch space. Refused in one line, with
        nothing read: a blob larger than `MAX_BLOB` (checked with `git ls-tree -l` first); an absolute or `..`
        entry, a link leading outside, a device or FIFO (tarfile's "data" filter). Links inside stay links,
        which the validator refuses."""
        commit = self._fetch(ref or self.base)
        dest = self.tmp / f"tree-{commit[:12]}"
        if dest.exists():
            return dest
        for line in self._git("ls-tree", "-r", "-l", "--full-tree", commit).splitlines():
            meta, _, path = line.partition("\t")
            size = meta.split()[3] if len(meta.split()) > 3 else "-"
            if size.isdigit() and int(size) > MAX_BLOB:
                raise RepositoryError(f"{ref or self.base} on {self.where} holds {path} of {int(size):,} bytes, more "
                                      f"than the {MAX_BLOB:,} any file may have; nothing was read from it")
        proc = subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=self.work, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            assert proc.stdout is not None
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                tar.extractall(dest, filter="data")
        except (tarfile.TarError, OSError) as exc:
            shutil.rmtree(dest, ignore_errors=True)
            why = " ".join(str(exc).split())[:160]
            raise RepositoryError(f"{ref or self.base} on {self.where} holds an entry no checkout may have ({why}); "
                                  "nothing was read from it") from None
        finally:
            _, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            shutil.rmtree(dest, ignore_errors=True)
            why = (err.decode(errors="replace").strip().splitlines() or ["failed"])[-1]
            raise RepositoryError(f"git archive of {ref or self.base} on {self.where}: {why}")
        dest.mkdir(exist_ok=True)
        return dest

    def tip(self) -> str:
        """The base branch's commit, fetched now."""
        self._fetched.pop(self.base, None)
        return self._fetch(self.base)

    def author(self, ref: str) -> str | None:
        """None: git records no account that opened a pull request (a commit's author is self-declared)."""
        return None

    def merge_base(self, ref: str) -> str:
        """`git merge-base` of the base branch and `ref`."""
        return self._git("merge-base", self._fetch(self.base), self._fetch(ref))

    def differing(self, files: dict[str, bytes]) -> tuple[list[str], list[str]]:
        """By blob id against the base branch's tree."""
        from leaderboard.repository.layout import blob_id

        have = {}
        if self.is_results_repository():
            for line in self._git("ls-tree", "-r", self._fetch(self.base)).splitlines():
                meta, path = line.split("\t", 1)
                have[path] = meta.split()[2]
        absent = [p for p in sorted(files) if p not in have]
        other = [p for p in sorted(files) if p in have and have[p] != blob_id(files[p])]
        return absent, other

    def _branch(self, key: str) -> str:
        return f"xaibench/{key}"

    def find_proposal(self, key: str) -> str | None:
        """The branch of `key`, when the remote has it."""
        branch = self._branch(key)
        return f"{self.where} branch {branch}" if self._git("ls-remote", self.url, f"refs/heads/{branch}") else None

    def _commit(self, parents: list[str], tree: str, title: str) -> str:
        env = {} if self._has_identity() else IDENTITY
        args = ["commit-tree", tree, *[x for p in parents for x in ("-p", p)], "-m", title]
        return self._git(*args, env=env)

    def _has_identity(self) -> bool:
        try:
            return bool(self._git("config", "user.email"))
        except RepositoryError:
            return False

    def _tree_with(self, parent: str, files: dict[str, bytes]) -> str:
        """The tree of `parent` with `files` added (a private index; nothing checked out)."""
        env = {"GIT_INDEX_FILE": str(self.tmp / "index")}
        Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
        self._git("read-tree", parent, env=env)
        for path, data in sorted(files.items()):
            blob = self._git("hash-object", "-w", "--stdin", data=data)
            self._git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        return self._git("write-tree", env=env)

    def propose(self, files: dict[str, bytes], title: str, key: str) -> tuple[str, str]:
        """One commit on the base branch, pushed as a new branch."""
        parent = self._fetch(self.base)
        commit = self._commit([parent], self._tree_with(parent, files), title)
        branch = self._branch(key)
        self._git("push", "--quiet", self.url, f"{commit}:refs/heads/{branch}")
        return f"{self.where} branch {branch} (commit {commit[:12]})", branch

    def commit(self, files: dict[str, bytes], title: str) -> str:
        """One commit on the base branch, pushed to it (refused when the branch moved meanwhile)."""
        parent = self._fetch(self.base)
        commit = self._commit([parent], self._tree_with(parent, files), title)
        self._git("push", "--quiet", self.url, f"{commit}:refs/heads/{self.base}")
        self._fetched.pop(self.base, None)
        return commit

    def land(self, ref: str, files: dict[str, bytes], title: str, expected_tip: str) -> str:
        """A merge commit of `expected_tip` and `ref` whose tree is the tip's plus `files`, pushed to the base
        branch only as a fast-forward of `expected_tip` (git refuses the push when the branch moved)."""
        head = self._fetch(ref)
        commit = self._commit([expected_tip, head], self._tree_with(expected_tip, files), title)
        try:
            self._git("push", "--quiet", self.url, f"{commit}:refs/heads/{self.base}")
        except RepositoryError:
            raise RepositoryError(f"{self.base} on {self.where} moved while {ref} was judged (or the push was "
                                  "refused); nothing was written — run the command again") from None
        self._fetched.pop(self.base, None)
        return commit


def init_bare(path: Path, files: dict[str, bytes]) -> str:
    """Make `path` a bare git repository whose `main` holds `files` in one commit (an empty bare repository
    there is filled; anything else is refused); returns the commit."""
    path = Path(path)
    env = {**os.environ, **IDENTITY, "GIT_TERMINAL_PROMPT": "0"}

    def git(*args: str, data: bytes | None = None) -> str:
        run = subprocess.run(["git", f"--git-dir={path}", *args], input=data, capture_output=True, env=env,
                             timeout=120)
        if run.returncode != 0:
            why = (run.stderr.decode(errors="replace").strip().splitlines() or ["failed"])[-1]
            raise RepositoryError(f"git {args[0]} in {path}: {why}")
        return run.stdout.decode().strip()

    if path.exists() and any(path.iterdir()):
        bare = (path / "HEAD").is_file() and (path / "objects").is_dir()
        if not bare or subprocess.run(["git", f"--git-dir={path}", "rev-parse", "--verify", "-q", "HEAD"],
                                      capture_output=True).returncode == 0:
            raise RepositoryError(f"{path} exists and is not an empty bare git repository; give a new folder")
    else:
        subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True, capture_output=True)
    git("symbolic-ref", "HEAD", "refs/heads/main")
    entries = []
    for rel, data in sorted(files.items()):
        if "/" in rel:
            raise RepositoryError(f"init_bare writes top-level files only, not {rel}")
        entries.append(f"100644 blob {git('hash-object', '-w', '--stdin', data=data)}\t{rel}")
    tree = git("mktree", data=("\n".join(entries) + "\n").encode())
    commit = git("commit-tree", tree, "-m", "a results repository (xaibench, layout 1)")
    git("update-ref", "refs/heads/main", commit)
    return commit
