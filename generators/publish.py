"""Publishing a resource family to the Hugging Face Hub (`xaibench publish`).

Before anything is uploaded, every config is verified (files complete, sha256 as recorded) and
loaded through `datasets.load_dataset(<dir>, <config>)` exactly as a Hub user would; `--dry-run`
stops there and lists what would be uploaded.
"""

from __future__ import annotations

from pathlib import Path

from benchmark.errors import ResourceError
from benchmark.resources import load_resource, resource_root
from benchmark.resources.store import read_provenance, repair_card


def check_family(family: str, root: Path | None = None) -> tuple[Path, list[str]]:
    """Verify every config of a family; returns (root, file list relative to root)."""
    root = Path(root) if root else resource_root(family)
    prov = read_provenance(root)
    if not prov.get("configs"):
        raise ResourceError(f"no resource '{family}' at {root}; run `xaibench generate {family}` first")
    repair_card(root)  # the card is derived from provenance.json: a damaged one is rewritten, not uploaded
    for config in sorted(prov["configs"]):
        res = load_resource(f"{family}/{config}", root=root)
        res.verify(full=True)
        try:
            ds = res.hf_dataset()
        except Exception as exc:  # noqa: BLE001 - whatever `datasets` raises, the resource does not load
            raise ResourceError(f"{res.name}: load_dataset({root}, {config!r}) failed ({type(exc).__name__}: "
                                f"{' '.join(str(exc).split())[:300]}); regenerate it with "
                                f"`xaibench generate {family} --overwrite`") from exc
        for split, info in res.meta["splits"].items():
            if ds[split].num_rows != info["rows"]:
                raise ResourceError(f"{res.name}/{split}: load_dataset gives {ds[split].num_rows} rows, "
                                    f"expected {info['rows']}")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                   if p.is_file() and not p.name.startswith(".") and p.suffix not in (".pt", ".tmp")
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))
    return root, files


def publish(family: str, repo_id: str, *, root: Path | None = None, private: bool = False,
            dry_run: bool = False) -> list[str]:
    root, files = check_family(family, root)
    if dry_run:
        return files
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    api.upload_folder(folder_path=str(root), repo_id=repo_id, repo_type="dataset",
                      allow_patterns=files, commit_message=f"xaibench {family} resource")
    return files


# --------------------------------------------------------------------------------------------------
# the static leaderboard site (`xaibench site --out DIR`)


def check_site(site: Path) -> list[str]:
    """Check a built site before it goes anywhere: `index.html` and `site.json` present, every local
    link and image of every page present. Returns the files (relative, sorted); raises on a problem."""
    import re
    from html.parser import HTMLParser

    site = Path(site)
    if not (site / "index.html").is_file() or not (site / "site.json").is_file():
        raise ResourceError(f"{site} is not a built site (no index.html / site.json); build it with "
                            f"`xaibench site --out {site}`")

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []

        def handle_starttag(self, tag, attrs):
            for k, v in attrs:
                if k in ("href", "src") and v and not re.match(r"^([a-z][a-z0-9+.-]*:|#)", v):
                    self.found.append(v.split("#")[0])

    files = sorted(p.relative_to(site).as_posix() for p in site.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(site).parts))
    missing = []
    for rel in files:
        if rel.endswith(".html"):
            parser = Links()
            parser.feed((site / rel).read_text(encoding="utf-8"))
            for link in parser.found:
                target = ((site / rel).parent / link).resolve()
                if not target.is_file() or site.resolve() not in target.parents:
                    missing.append(f"{rel} → {link}")
    if missing:
        raise ResourceError(f"{site}: {len(missing)} broken link(s), e.g. {', '.join(missing[:3])}; rebuild it with "
                            f"`xaibench site --out {site}`")
    return files


def publish_site(site: Path, *, repo_id: str | None = None, to: Path | None = None, private: bool = False,
                 dry_run: bool = False) -> list[str]:
    """Upload a built site to a Hub Space (`repo_id`, a static Space) or copy it into a static host
    folder (`to`, replaced atomically: copied beside it, then renamed). `dry_run`: check and list only
    (no network, nothing written). Returns the files (relative to the site)."""
    import shutil
    import tempfile

    from benchmark.resources.store import swap_in_folder

    if (repo_id is None) == (to is None):
        raise ResourceError("publish --site needs exactly one target: --repo-id org/space (a Hub Space) or "
                            "--to FOLDER (a static host folder)")
    site = Path(site)
    files = check_site(site)
    if dry_run:
        return files
    if to is not None:
        to = Path(to)
        if to.resolve() == site.resolve() or site.resolve() in to.resolve().parents:
            raise ResourceError(f"--to {to} is the site itself or inside it; choose another folder")
        to.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=to.parent, prefix=f".{to.name}."))
        try:
            for rel in files:
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(site / rel, tmp / rel)
            swap_in_folder(tmp, to)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return files
    from huggingface_hub import HfApi

    assert repo_id is not None  # exactly one target, and it is not `to` (checked above)
    api = HfApi()
    api.create_repo(repo_id, repo_type="space", space_sdk="static", private=private, exist_ok=True)
    api.upload_folder(folder_path=str(site), repo_id=repo_id, repo_type="space", allow_patterns=files,
                      commit_message="xaibench leaderboard site")
    return files
