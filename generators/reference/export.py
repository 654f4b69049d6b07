"""The reference's last step but one: the results repository's tip as plain files, the package's shipped reference.

What ships (`leaderboard/reference/shipped/` by default; docs/reference.md, "What ships"):

    tree/             the tip of `main` exactly (`git archive`): every submission's `submission.json` and `source/`,
                      its Results, the maintainer's verification records and round records, the round and its
                      revealed secret — everything `xaibench results audit` and the boards read
    maintainers.pub   the maintainer's public key (the private key stays in the build folder)
    manifest.json     the build: its plan and scale choices, each track's outcome and costs, the audit, the machine,
                      every shipped file's sha256 and the size of each part

Written into a folder beside the destination and swapped in by renames (`benchmark.resources.store.swap_in_folder`):
a reader never sees half a reference. It refuses, leaving the shipped one as it was: a tree over `max_mb` (with the
size of each part: every file is bound by a signature, so nothing can be cut from a built tree — the scale is what
changes its size), and a tree that lacks a board the shipped reference has (`replace_partial` to allow it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError

__all__ = ["PARTS", "boards_of", "export", "part_of"]

PARTS = ("Results", "verification records", "round records", "source and metadata", "rounds", "other")


def part_of(rel: str) -> str:
    """Which part of a results repository `rel` belongs to (`PARTS`)."""
    top = rel.split("/", 1)[0]
    if top == "results":
        pieces = rel.split("/")
        if len(pieces) > 4 and pieces[3] not in ("source", "signatures") and rel.endswith(".json"):
            return "Results"
        return "source and metadata"
    if top == "verifications":
        if ".rounds/" in rel:
            return "round records"
        return "verification records"
    if top == "rounds":
        return "rounds"
    return "other"


def boards_of(tree: Path) -> set[tuple[str, str, str]]:
    """(track, resource, model) of every Result of a results repository's tree."""
    out: set[tuple[str, str, str]] = set()
    root = tree / "results"
    if not root.is_dir():
        return out
    for path in root.glob("*/*/*/*/*.json"):  # results/<sub>/<hash>/<track>/<family>__<config>@<rev>/<model>.json
        rel = path.relative_to(tree).as_posix()
        if part_of(rel) != "Results":
            continue
        _, _, _, track, where, leaf = rel.split("/")
        resource = where.split("@", 1)[0].replace("__", "/", 1)
        out.add((track, resource, leaf.removesuffix(".json")))
    return out


def _archive(repo: Path, dest: Path) -> None:
    """`git archive main` of the bare repository `repo`, unpacked into `dest` (plain files only)."""
    run = subprocess.run(["git", f"--git-dir={repo}", "archive", "--format=tar", "main"], capture_output=True,
                         timeout=600)
    if run.returncode != 0:
        raise XaibenchError(f"git archive of {repo}: {run.stderr.decode(errors='replace').strip()[-200:]}")
    with tarfile.open(fileobj=io.BytesIO(run.stdout)) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        tar.extractall(dest, members=members, filter="data")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def export(work: Any, out: Path, manifest: dict[str, Any], max_mb: float = 30.0,
           replace_partial: bool = False) -> dict[str, Any]:
    """Write the shipped reference of the build `work` (`build.Work`) to `out` (module docstring); returns what
    was written: files, bytes, bytes per part, boards."""
    from benchmark.resources.store import swap_in_folder

    out = Path(out)
    if not out.parent.is_dir():
        raise XaibenchError(f"{out.parent} does not exist; run the build from the repository's root or give --out")
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tree = tmp / "tree"
        tree.mkdir(parents=True)
        _archive(work.repo, tree)
        shutil.copyfile(work.keys / "verifier.pub", tmp / "maintainers.pub")
        files = {p.relative_to(tree).as_posix(): p for p in sorted(tree.rglob("*")) if p.is_file()}
        sizes = dict.fromkeys(PARTS, 0)
        for rel, p in files.items():
            sizes[part_of(rel)] += p.stat().st_size
        total = sum(sizes.values())
        if total > max_mb * 1e6:
            parts = ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items() if v)
            raise XaibenchError(f"the tree is {total / 1e6:.1f} MB, over the {max_mb:g} MB the package ships ({parts});"
                                " every file is bound by a signature, so none can be cut: build at a smaller scale "
                                "(--board-budget) or give --max-mb; nothing was replaced")
        boards = boards_of(tree)
        old = boards_of(out / "tree") if (out / "tree").is_dir() else set()
        lost = sorted(old - boards)
        if lost and not replace_partial:
            raise XaibenchError(f"the new reference lacks {len(lost)} board(s) the shipped one has (e.g. "
                                f"{'/'.join(lost[0])}); give --replace-partial to ship it anyway; nothing was replaced")
        report = {"files": len(files), "bytes": total, "bytes_by_part": sizes, "boards": len(boards)}
        doc = {**manifest, "export": report, "files": {rel: _sha256(p) for rel, p in files.items()}}
        (tmp / "manifest.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        swap_in_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report
