"""Resource layout, writing and lookup.

A resource *family* (e.g. `aixi`) is one Hugging Face dataset repository, `xaibench-<family>`:

    README.md                      card: YAML `configs` (data_files per split), features, license, citation
    <config>/<split>-00000-of-00001.parquet
    model/<config>/config.json + model.safetensors     (optional; the model under test)
    provenance.json                per config: version, revision, generator parameters, seeds,
                                   statistics, file sizes/rows/sha256

`datasets.load_dataset(<dir>, <config>)` works on it exactly as on the Hub. A config's *revision* is
a hash of its Parquet files' contents, so a result always says what it was computed on.

Lookup order (`load_resource`): `$XAIBENCH_HOME/resources/<family>`, then the mirror
(`$XAIBENCH_DATA_MIRROR/xaibench-<family>`, default `../shared/data` beside the repository), then the
Hub (`huggingface_hub.snapshot_download` of `$XAIBENCH_HUB_ORG/xaibench-<family>`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from benchmark.errors import ResourceError
from benchmark.provenance import software

HUB_ORG_DEFAULT = "xaibench"


def data_home() -> Path:
    """`$XAIBENCH_HOME` (default `~/.cache/xaibench`): resources/, cache/, results/ live here."""
    return Path(os.environ.get("XAIBENCH_HOME", Path.home() / ".cache" / "xaibench")).expanduser()


def resource_root(family: str) -> Path:
    """Where the harness builds and keeps a family's configs: `$XAIBENCH_HOME/resources/<family>`."""
    return data_home() / "resources" / family


def mirror_root() -> Path | None:
    """The local data mirror (DESIGN §6): `$XAIBENCH_DATA_MIRROR`, else `../shared/data` if present."""
    env = os.environ.get("XAIBENCH_DATA_MIRROR")
    if env:
        return Path(env)
    guess = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    return guess if guess.is_dir() else None


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """The hex sha256 of a file, read in `chunk`-byte blocks (default 1 MiB)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def swap_in_folder(built: Path, dest: Path) -> None:
    """Put the finished folder `built` (a sibling of `dest`) in place of `dest` by renames: the old
    folder is moved aside first and removed after, so `dest` is never half-written."""
    old = dest.parent / f".{dest.name}.old-{os.getpid()}" if dest.exists() else None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
        dest.rename(old)
    built.rename(dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


_VERIFIED: dict[Path, tuple[int, int, str]] = {}  # split files whose sha256 was checked, by version


@dataclass
class Resource:
    """One config of a resource family, located on disk and checked for completeness."""

    family: str
    config: str
    root: Path
    meta: dict[str, Any]
    card: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """`<family>/<config>`, e.g. "aixi/shape-ssin"."""
        return f"{self.family}/{self.config}"

    @property
    def version(self) -> str:
        """The config's format version (default "v1")."""
        return self.meta.get("version", "v1")

    @property
    def revision(self) -> str:
        """The content revision (a sha256) a Result records as `resource.revision`."""
        return self.meta["revision"]

    @property
    def splits(self) -> list[str]:
        """The split names, sorted."""
        return sorted(self.meta["splits"])

    @property
    def params(self) -> dict[str, Any]:
        """The generator parameters the config was built with ({} when none)."""
        return self.meta.get("params", {})

    @property
    def stats(self) -> dict[str, Any]:
        """The generator's statistics of the config (e.g. the model's quality; {} when none)."""
        return self.meta.get("stats", {})

    def path(self, split: str) -> Path:
        """The Parquet file of `split`."""
        return self.root / self.meta["splits"][split]["file"]

    def table(self, split: str, columns: list[str] | None = None) -> pa.Table:
        """The split as an Arrow table (read straight from Parquet, no copy into a cache)."""
        if split not in self.meta["splits"]:
            raise ResourceError(
                f"resource {self.name} has no split '{split}' (has: {', '.join(self.splits)})"
            )
        try:
            self._check_digest(split)
            return pq.read_table(self.path(split), columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise ResourceError(
                f"resource {self.name} split {split} is unreadable ({exc}); regenerate it with "
                f"`xaibench generate {self.family} --overwrite`"
            ) from exc

    def _check_digest(self, split: str) -> None:
        """The split file's sha256 against provenance.json, once per process and file version (size,
        mtime): a file garbled in place keeps its size and row count and may still decode, so only the
        digest stops it from changing a number. Costs one read of the file (~1.5 GB/s)."""
        info, p = self.meta["splits"][split], self.path(split)
        if not info.get("sha256"):
            return
        st = p.stat()
        stamp = (st.st_size, st.st_mtime_ns, info["sha256"])
        if _VERIFIED.get(p) == stamp:
            return
        if sha256_file(p) != info["sha256"]:
            raise ResourceError(f"resource {self.name}: {p} does not match the sha256 in provenance.json "
                                f"(damaged or changed); regenerate it with `xaibench generate {self.family} "
                                f"--overwrite`")
        _VERIFIED[p] = stamp

    def model_dir(self) -> Path:
        """`model/<config>/`, or the folder the config names: `params["model_dir"]` (relative to the
        resource root) or the first shared model folder of `params["models"]` (a name → folder map)."""
        if isinstance(self.params.get("model_dir"), str):
            return self.root / self.params["model_dir"]
        models = self.params.get("models")
        shared = [v for v in models.values() if isinstance(v, str) and v] if isinstance(models, dict) else []
        return self.root / "model" / (shared[0] if shared else self.config)

    def hf_dataset(self, split: str | None = None):
        """The config through `datasets.load_dataset`, exactly as a Hub user would get it."""
        import datasets

        return datasets.load_dataset(str(self.root), self.config, split=split)

    def verify(self, full: bool = False) -> None:
        """Check every split exists, is a readable Parquet file with the recorded row count and
        size (and, with `full`, the recorded sha256). Raises `ResourceError` naming the fix."""
        fix = f"regenerate it with `xaibench generate {self.family} --overwrite`"
        for info in self.meta["splits"].values():
            p = self.root / info["file"]
            if not p.exists():
                raise ResourceError(f"resource {self.name}: split file {p} is missing; {fix}")
            if p.stat().st_size != info["bytes"]:
                raise ResourceError(
                    f"resource {self.name}: {p.name} has {p.stat().st_size} bytes, expected "
                    f"{info['bytes']} (truncated or changed); {fix}"
                )
            try:
                rows = pq.ParquetFile(p).metadata.num_rows
            except Exception as exc:
                raise ResourceError(f"resource {self.name}: {p.name} is not valid Parquet ({exc}); {fix}") from exc
            if rows != info["rows"]:
                raise ResourceError(f"resource {self.name}: {p.name} has {rows} rows, expected {info['rows']}; {fix}")
            if full and sha256_file(p) != info["sha256"]:
                raise ResourceError(f"resource {self.name}: {p.name} does not match its sha256; {fix}")


# -- writing -------------------------------------------------------------------------------


def _card_yaml(provenance: dict[str, Any], card_info: dict[str, Any]) -> str:
    configs, infos = [], []
    for name, meta in sorted(provenance["configs"].items()):
        configs.append(
            {
                "config_name": name,
                "data_files": [
                    {"split": s, "path": info["file"]} for s, info in sorted(meta["splits"].items())
                ],
            }
        )
        infos.append(
            {
                "config_name": name,
                "features": meta["features"],
                "splits": [
                    {"name": s, "num_examples": info["rows"], "num_bytes": info["bytes"]}
                    for s, info in sorted(meta["splits"].items())
                ],
            }
        )
    header = {
        "license": card_info.get("license", "mit"),
        "pretty_name": card_info.get("pretty_name", provenance["family"]),
        "tags": ["explainability", "xai", "ground-truth", "xaibench"],
        "configs": configs,
        "dataset_info": infos,
    }
    return yaml.safe_dump(header, sort_keys=False)


def _card_body(provenance: dict[str, Any], card_info: dict[str, Any]) -> str:
    lines = [f"# {card_info.get('pretty_name', provenance['family'])}", "", card_info.get("description", ""), ""]
    for name, meta in sorted(provenance["configs"].items()):
        lines += [f"## `{name}` ({meta['version']}, revision `{meta['revision']}`)", ""]
        lines += [f"- {s}: {info['rows']} rows, {info['bytes'] / 1e6:.1f} MB"
                  for s, info in sorted(meta["splits"].items())]
        if meta.get("params"):
            lines += ["", "Parameters:", "", "```json", json.dumps(meta["params"], indent=1, sort_keys=True), "```"]
        if meta.get("stats"):
            lines += ["", "Statistics:", "", "| statistic | value |", "|---|---|"]
            lines += [f"| {k} | {v} |" for k, v in sorted(meta["stats"].items()) if not isinstance(v, (dict, list))]
        lines.append("")
    if card_info.get("citation"):
        lines += ["## Citation", "", "```bibtex", card_info["citation"].strip(), "```", ""]
    return "\n".join(lines)


def _provenance_problem(prov: Any) -> str | None:
    """What is wrong with the structure of a parsed provenance.json (None if nothing): the fields the
    harness reads must be there with their types, so a damaged file is one clear error, not a KeyError."""
    if not isinstance(prov, dict):
        return f"a JSON {type(prov).__name__}, not an object"
    configs = prov.get("configs", {})
    if not isinstance(configs, dict):
        return "'configs' is not an object"
    for name, meta in configs.items():
        if not isinstance(meta, dict) or not isinstance(meta.get("revision"), str):
            return f"config '{name}' has no revision"
        splits = meta.get("splits")
        if not isinstance(splits, dict) or not splits:
            return f"config '{name}' lists no splits"
        for split, info in splits.items():
            if not (isinstance(info, dict) and isinstance(info.get("file"), str)
                    and all(type(info.get(k)) is int for k in ("rows", "bytes"))):
                return f"config '{name}' split '{split}' lacks its file / rows / bytes"
        for key in ("params", "stats"):
            if not isinstance(meta.get(key, {}), dict):
                return f"config '{name}' {key} is not an object"
    return None


def read_provenance(root: Path, set_aside_damaged: bool = False) -> dict[str, Any]:
    """The family's provenance.json ({} when absent). A file that is not readable JSON of the expected
    structure raises `ResourceError` naming it and the regeneration command — or, with
    `set_aside_damaged` (the generators, about to rewrite it), is moved aside to
    `provenance.json.damaged-<UTC time>` (never deleted) with one warning line, and {} is returned."""
    p = root / "provenance.json"
    if not p.exists():
        return {}
    try:
        prov = json.loads(p.read_text())
        problem = _provenance_problem(prov)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
    if problem is None:
        return prov
    if set_aside_damaged:
        from datetime import datetime, timezone

        from benchmark.progress import console

        target = p.with_name(f"{p.name}.damaged-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}")
        os.replace(p, target)
        console.print(f"warning: {p} was damaged ({problem}); moved to {target.name}; configs not rebuilt now "
                      "must be generated again", markup=False, highlight=False, soft_wrap=True)
        return {}
    family = root.name.removeprefix("xaibench-")
    raise ResourceError(f"{p} is damaged ({problem}); regenerate the resource with "
                        f"`xaibench generate {family} --overwrite`")


def write_config(
    root: Path,
    family: str,
    config: str,
    splits: dict[str, pa.Table],
    features,
    *,
    version: str = "v1",
    params: dict[str, Any] | None = None,
    stats: dict[str, Any] | None = None,
    card_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write one config atomically: Parquet files go to a temp folder that is renamed into place,
    then provenance.json and the README card are rewritten (each by temp file + rename).
    `features` is a `datasets.Features`; its schema metadata makes `load_dataset` decode columns.
    Returns the config's provenance entry."""
    root.mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(tempfile.mkdtemp(dir=root, prefix=f".{config}."))
    try:
        split_meta, digest = {}, hashlib.sha256()
        schema = features.arrow_schema
        for split in sorted(splits):
            table = splits[split]
            table = table.select(schema.names).cast(schema)
            fname = f"{split}-00000-of-00001.parquet"
            pq.write_table(table, tmp_dir / fname, compression="zstd", row_group_size=1000)
            sha = sha256_file(tmp_dir / fname)
            digest.update(f"{split}:{sha};".encode())
            split_meta[split] = {
                "file": f"{config}/{fname}",
                "rows": table.num_rows,
                "bytes": (tmp_dir / fname).stat().st_size,
                "sha256": sha,
            }
        final = root / config
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp_dir, final)
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        raise
    meta = {
        "version": version,
        "revision": digest.hexdigest()[:12],
        "splits": split_meta,
        "features": features._to_yaml_list(),
        "params": params or {},
        "stats": stats or {},
        "generator": software(),
    }
    prov = read_provenance(root, set_aside_damaged=True) or {"family": family, "configs": {}}
    prov["family"] = family
    prov["configs"][config] = meta
    if card_info:
        prov["card"] = card_info
    _atomic_write_text(root / "provenance.json", json.dumps(prov, indent=1))
    info = prov.get("card", {})
    _atomic_write_text(root / "README.md", f"---\n{_card_yaml(prov, info)}---\n\n{_card_body(prov, info)}")
    return meta


def _card_text(prov: dict[str, Any]) -> str:
    info = prov.get("card", {})
    return f"---\n{_card_yaml(prov, info)}---\n\n{_card_body(prov, info)}"


def repair_card(root: Path) -> bool:
    """Check that README.md's YAML header declares exactly what provenance.json records (the card is
    written from it by `write_config` / `update_config_meta`); when it is unreadable, garbled or stale,
    move it aside to `.README.md.damaged-<UTC time>` (a dot file: never published, never deleted),
    rewrite it from provenance.json and say so in one line. Returns True when it was rewritten."""
    prov = read_provenance(root)
    if not prov.get("configs"):
        return False
    card = root / "README.md"
    expected = yaml.safe_load(_card_yaml(prov, prov.get("card", {})))
    try:
        text = card.read_text(encoding="utf-8")
        end = text.index("\n---\n", 3)
        problem = None if text.startswith("---\n") and yaml.safe_load(text[4 : end + 1]) == expected else \
            "its YAML header does not match provenance.json"
    except FileNotFoundError:
        problem = "missing"
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        problem = f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
    if problem is None:
        return False
    where = ""
    if card.exists():
        from datetime import datetime, timezone

        aside = root / f".README.md.damaged-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"
        os.replace(card, aside)
        where = f"; the old one moved to {aside.name}"
    _atomic_write_text(card, _card_text(prov))
    from benchmark.progress import console

    console.print(f"warning: {card} was damaged ({problem}); rewritten from provenance.json{where}",
                  markup=False, highlight=False, soft_wrap=True)
    return True


def update_config_meta(root: Path, config: str, **updates: Any) -> None:
    """Merge `updates` into a config's provenance entry (e.g. the trained model's scores)."""
    prov = read_provenance(root)
    if config not in prov.get("configs", {}):
        raise ResourceError(f"{root} has no config '{config}'; generate it first")
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(prov["configs"][config].get(key), dict):
            prov["configs"][config][key].update(value)
        else:
            prov["configs"][config][key] = value
    _atomic_write_text(root / "provenance.json", json.dumps(prov, indent=1))
    info = prov.get("card", {})
    _atomic_write_text(root / "README.md", f"---\n{_card_yaml(prov, info)}---\n\n{_card_body(prov, info)}")


# -- lookup --------------------------------------------------------------------------------


def _split_name(name: str) -> tuple[str, str]:
    if name.count("/") != 1 or not all(name.split("/")):
        raise ResourceError(
            f"resource name '{name}' is not of the form <family>/<config> (e.g. aixi/shape-ssin)"
        )
    family, config = name.split("/")
    return family, config


def _candidate_roots(family: str) -> list[Path]:
    roots = [resource_root(family)]
    mirror = mirror_root()
    if mirror is not None:
        roots.append(mirror / f"xaibench-{family}")
    return roots


def _from_hub(family: str, revision: str | None = None) -> Path | None:
    """Download `<org>/xaibench-<family>` from the Hub (at `revision`: a Hub commit, branch or tag);
    None when offline or absent."""
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("XAIBENCH_OFFLINE") == "1":
        return None
    try:
        from huggingface_hub import snapshot_download

        org = os.environ.get("XAIBENCH_HUB_ORG", HUB_ORG_DEFAULT)
        return Path(snapshot_download(repo_id=f"{org}/xaibench-{family}", repo_type="dataset",
                                      revision=revision, etag_timeout=5))
    except Exception:
        return None


def split_revision(name: str, revision: str | None = None) -> tuple[str, str | None]:
    """`aixi/shape-ssin@<rev>` → ("aixi/shape-ssin", "<rev>"); a `revision` given as well must agree."""
    base, at, pinned = name.partition("@")
    if at:
        if not pinned:
            raise ResourceError(f"resource name '{name}' ends in '@' without a revision")
        if revision is not None and revision != pinned:
            raise ResourceError(f"resource {base} pinned twice, to {pinned} and to {revision}")
        revision = pinned
    return base, revision


def _matches(meta: dict[str, Any], revision: str | None) -> bool:
    """True when no revision is asked for, or the config's content revision starts with it."""
    return revision is None or str(meta.get("revision", "")).startswith(revision)


def load_resource(name: str, *, root: Path | None = None, hub: bool = True, revision: str | None = None) -> Resource:
    """Find `<family>/<config>` locally, in the mirror, or on the Hub, and check it is complete.

    `revision` (or `name@revision`) pins the content: the resource's recorded revision (the sha256 the
    Result records as `resource.revision`) must start with it (at least 7 characters). Local folders and
    the mirror are searched for a copy at that revision; on the Hub, `revision` may also name a commit,
    branch or tag of the dataset repository, and the config found there must then be at that revision or
    the Hub commit must be the one asked for. A copy at another revision is never returned silently:
    the error names the revisions that were found."""
    name, revision = split_revision(name, revision)
    if revision is not None and (len(revision) < 7
                                 or not revision.replace("-", "").replace("_", "").replace(".", "").isalnum()):
        raise ResourceError(f"revision '{revision}' of {name} is too short or malformed; give at least 7 characters "
                            "of the resource's revision (see `xaibench list` or a Result's resource.revision)")
    family, config = _split_name(name)
    roots = [Path(root)] if root is not None else _candidate_roots(family)
    seen: list[str] = []
    for r in roots:
        prov = read_provenance(r)
        if config in prov.get("configs", {}):
            meta = prov["configs"][config]
            if not _matches(meta, revision):
                seen.append(f"{str(meta.get('revision', '?'))[:12]} in {r}")
                continue
            res = Resource(family, config, r, meta, prov.get("card", {}))
            res.verify()
            return res
    if root is None and hub:
        hub_root = _from_hub(family, revision)
        if hub_root is not None:
            prov = read_provenance(hub_root)
            if config in prov.get("configs", {}):
                # the download is at `revision` (a Hub commit / tag) or the config's content is
                res = Resource(family, config, hub_root, prov["configs"][config], prov.get("card", {}))
                res.verify()
                return res
    where = ", ".join(str(r) for r in roots)
    if revision is not None and seen:
        raise ResourceError(
            f"resource {name} at revision {revision} not found; found it at other revisions: {'; '.join(seen)}. "
            f"Rebuild that revision (the generator and parameters in its Result's provenance) or drop the pin"
        )
    raise ResourceError(
        f"resource {name} not found (looked in {where} and the Hub); "
        f"create it with `xaibench generate {family}` or check the name with `xaibench list`"
    )


def list_local_resources() -> list[Resource]:
    """Every config found under `$XAIBENCH_HOME/resources` and the mirror (unverified)."""
    found: list[Resource] = []
    bases = [data_home() / "resources"]
    if (m := mirror_root()) is not None:
        bases.append(m)
    for base in bases:
        if not base.is_dir():
            continue
        for r in sorted(base.iterdir()):
            prov = read_provenance(r) if r.is_dir() else {}
            fam = str(prov.get("family") or r.name.removeprefix("xaibench-"))  # an old file without the family
            for cfg, meta in sorted(prov.get("configs", {}).items()):
                found.append(Resource(fam, cfg, r, meta, prov.get("card", {})))
    return found
