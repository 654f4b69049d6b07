"""The git backend of the results store: any repository `git` reaches (a local folder, bare or not, or a
URL). Git's plumbing only — `fetch`, `ls-tree`, `cat-file`, `hash-object`, `mktree`, `commit-tree`, `push` — in
a private scratch repository, so no working tree of the caller's is ever touched and a failed step leaves the
remote as it was. Reading a commit lists and skips every entry no checkout may hold (`snapshot`); writing one
never reads a tree into an index, so no entry already on the default branch can refuse a commit. A pull request
is a branch `xaibench/<submission>/<code-hash>/<key>` with one commit on the base branch (a forge shows it as a
pull request; `refs/pr/N` refs work as `@REF`).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any, Iterator

from leaderboard.repository.layout import MARKER, RepositoryError
from leaderboard.repository.store import Store

__all__ = ["GitStore"]

MAX_BLOB = 64 << 20  # no file of a results repository may be larger (`layout`: a pull request's whole cap)
# the signed files a commit could remove or overwrite, whose earlier versions `earlier_in` reads (`signed_state`)
EARLIER_PATHS = (":(glob)verifications/*/bindings/*.json", ":(glob)rounds/*/round.json")
MAX_EARLIER_VERSIONS = 4096
MAX_EARLIER_BYTES = 16 << 10  # a binding or a round is under 2 KiB
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
        self._commits: dict[Path, str] = {}  # snapshot folder → its commit (`earlier_in`)
        self._earlier: dict[str, dict[str, list[bytes]]] = {}
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
        return self._git_bytes(*args, cwd=cwd, env=env, data=data).decode(errors="replace").strip()

    def _git_bytes(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                   data: bytes | None = None) -> bytes:
        """git's standard output as bytes (paths as the tree holds them); `RepositoryError` with git's reason."""
        run = subprocess.run(["git", *args], cwd=cwd or self.work, input=data, capture_output=True,
                             env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}, timeout=300)
        if run.returncode != 0:
            why = (run.stderr.decode(errors="replace").strip().splitlines() or ["failed"])[-1]
            raise RepositoryError(f"git {args[0]} on {self.where or self.url}: {why}")
        return run.stdout

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
        """The commit's files, written one by one into the scratch space from `git cat-file --batch` (nothing is
        checked out, nothing followed). Every entry that is not a plain file a checkout may hold is listed in
        `skipped` and left out, and the rest is read: a symbolic link, a submodule, an entry of another mode, a
        path that is absolute, holds `.` / `..`, is not UTF-8 or printable, lies deeper or is longer than the tree
        bounds (`layout.path_problem`), a blob larger than `MAX_BLOB` (sizes read with `git ls-tree -l` first),
        one that collides with another entry, and every entry past the first `layout.MAX_TREE_ENTRIES` (the
        listing is read as a stream and no further) — so one bad object is one skipped entry, never a refused
        tip, and no tree's shape can take a reader down (folders are made one level at a time)."""
        from leaderboard.repository.layout import MAX_TREE_ENTRIES, printable

        commit = self._fetch(ref or self.base)
        dest = self.tmp / f"tree-{commit[:12]}"
        if dest.exists():
            return dest
        skipped: dict[str, str] = {}
        wanted: list[tuple[str, str]] = []
        proc = subprocess.Popen(["git", "ls-tree", "-r", "-l", "-z", "--full-tree", commit], cwd=self.work,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        try:
            for n, raw in enumerate(_entries(proc.stdout)):
                meta, _, name = raw.partition(b"\t")
                path = printable(name.decode("utf-8", errors="replace"))
                if n >= MAX_TREE_ENTRIES:
                    skipped[path] = (f"and every entry after it: the tree holds more than the {MAX_TREE_ENTRIES:,} "
                                     "entries a results repository may hold; skipped, not read further")
                    break
                mode, kind, oid, size = (meta.split() + [b"-"] * 4)[:4]
                why = _bad_entry(name, mode.decode(), kind.decode(), size.decode())
                if why:
                    skipped[path] = why
                else:
                    wanted.append((name.decode("utf-8"), oid.decode()))
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait(timeout=300)
        work = self.tmp / f".writing-{commit[:12]}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            self._write_blobs(work, wanted, skipped)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        work.rename(dest)
        self.skipped[dest] = dict(sorted(skipped.items()))
        self._commits[dest] = commit
        return dest

    def earlier_in(self, tree: Path) -> dict[str, list[bytes]] | None:
        """The earlier versions of the signed files that a commit may remove or overwrite (bindings and rounds:
        `signed_state`) on the history of the snapshot `tree`'s commit: path → the bytes of every other version of
        it any commit reachable from there held (`git log -m --raw`: merges' changes too, against each parent).
        Versions over `MAX_EARLIER_BYTES`, and those past the first `MAX_EARLIER_VERSIONS`, are not read."""
        commit = self._commits.get(Path(tree))
        if commit is None:
            return None
        if commit not in self._earlier:
            self._earlier[commit] = self._versions(Path(tree), commit)
        return self._earlier[commit]

    def _versions(self, tree: Path, commit: str) -> dict[str, list[bytes]]:
        raw = self._git_bytes("log", "-m", "--no-renames", "--format=", "--raw", "--no-abbrev", "-z", commit, "--",
                              *EARLIER_PATHS)
        blobs: dict[str, set[str]] = {}
        tokens = raw.split(b"\0")
        for meta, name in zip(tokens, tokens[1:]):
            fields = meta.strip().split()
            if not meta.strip().startswith(b":") or len(fields) < 5:
                continue
            path = name.decode("utf-8", errors="replace")
            blobs.setdefault(path, set()).update(f.decode() for f in fields[2:4] if f.strip(b"0"))
        wanted = sorted((path, oid) for path, oids in blobs.items() for oid in oids)[:MAX_EARLIER_VERSIONS]
        if not wanted:
            return {}
        sizes = self._git_bytes("cat-file", "--batch-check", data="".join(f"{oid}\n" for _, oid in wanted).encode())
        small = {line.split()[0].decode() for line in sizes.splitlines()
                 if len(line.split()) == 3 and line.split()[2].isdigit() and int(line.split()[2]) <= MAX_EARLIER_BYTES}
        wanted = [(path, oid) for path, oid in wanted if oid in small]
        out: dict[str, list[bytes]] = {}
        data = self._git_bytes("cat-file", "--batch", data="".join(f"{oid}\n" for _, oid in wanted).encode())
        at = 0
        for path, _ in wanted:
            header_end = data.index(b"\n", at)
            size = int(data[at:header_end].split()[2])
            blob = data[header_end + 1:header_end + 1 + size]
            at = header_end + 1 + size + 1
            try:
                now = (tree / path).read_bytes() if (tree / path).is_file() else None
            except OSError:
                now = None
            if blob != now:
                out.setdefault(path, []).append(blob)
        return out

    def _write_blobs(self, root: Path, wanted: list[tuple[str, str]], skipped: dict[str, str]) -> None:
        """Write each (path, blob id) under `root` as a plain file (mode 0644), read through one `git cat-file
        --batch`, its folders made one level at a time (no recursion to exhaust); a path that collides with another
        entry is skipped."""
        from leaderboard.repository.layout import printable

        proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.work, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for path, oid in wanted:
                proc.stdin.write(oid.encode() + b"\n")
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                    raise RepositoryError(f"git cat-file on {self.where}: no blob {oid} for {printable(path)}")
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)  # the newline after each object
                target = _folders(root, path.split("/"))
                try:
                    if target is None:
                        raise FileExistsError(path)
                    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                except OSError:
                    skipped[printable(path)] = "collides with another entry of the tree; skipped"
                    continue
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
        finally:
            proc.stdin.close()
            proc.stdout.close()
            proc.wait(timeout=300)

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
        """The tree of `parent` with `files` added (or replaced), built with `git mktree` from the trees it
        changes (no index: an entry of `parent` that git's index refuses — `..`, a name no checkout can hold —
        is kept as it is, never a reason to refuse the commit)."""
        blobs = {path: self._git("hash-object", "-w", "--stdin", data=data) for path, data in sorted(files.items())}
        return self._graft(self._git("rev-parse", f"{parent}^{{tree}}"), blobs)

    def _graft(self, tree: str | None, blobs: dict[str, str]) -> str:
        """`tree` (None: an empty one) with `blobs` (path relative to it → blob id) added as plain files."""
        entries: dict[bytes, bytes] = {}  # name → "<mode> <type> <id>"
        if tree is not None:
            for raw in self._git_bytes("ls-tree", "-z", tree).split(b"\0"):
                if raw:
                    meta, _, name = raw.partition(b"\t")
                    entries[name] = meta
        below: dict[str, dict[str, str]] = {}
        for path, blob in blobs.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = blob
            else:
                entries[head.encode()] = f"100644 blob {blob}".encode()
        for head, inner in below.items():
            fields = entries.get(head.encode(), b"").split()
            subtree = fields[2].decode() if len(fields) == 3 and fields[1] == b"tree" else None
            entries[head.encode()] = f"040000 tree {self._graft(subtree, inner)}".encode()
        listing = b"".join(meta + b"\t" + name + b"\0" for name, meta in sorted(entries.items()))
        return self._git("mktree", "-z", data=listing)

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


def _entries(stream: Any) -> Iterator[bytes]:
    """The NUL-terminated records of `stream`, read a block at a time (a listing of any length, never held whole)."""
    rest = b""
    while True:
        block = stream.read(1 << 16)
        if not block:
            if rest:
                yield rest
            return
        *done, rest = (rest + block).split(b"\0")
        yield from (d for d in done if d)


def _folders(root: Path, parts: list[str]) -> Path | None:
    """`root / parts`, its parent folders made one level at a time (`os.mkdir`, no recursion); None when a part is
    not a folder (an entry of the tree collides with another) or cannot be made."""
    here = root
    for part in parts[:-1]:
        here = here / part
        try:
            os.mkdir(here)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return None
        except OSError:
            return None
    return here / parts[-1]


def _bad_entry(name: bytes, mode: str, kind: str, size: str) -> str:
    """Why a tree entry (`git ls-tree -r -l`) is no plain file a checkout may hold — "" when it is one."""
    from leaderboard.repository.layout import path_problem

    try:
        path = name.decode("utf-8")
    except UnicodeDecodeError:
        return "a path that is not UTF-8; skipped"
    problem = path_problem(path)
    if problem:
        return problem
    if mode == "120000":
        return "a symbolic link; a results repository holds plain files only; skipped"
    if kind != "blob" or mode not in ("100644", "100755"):
        return f"a {kind} entry of mode {mode} (a submodule or another non-file); skipped"
    if size.isdigit() and int(size) > MAX_BLOB:
        return f"{int(size):,} bytes, more than the {MAX_BLOB:,} any file may have; skipped, nothing read from it"
    return ""


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
