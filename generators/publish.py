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
