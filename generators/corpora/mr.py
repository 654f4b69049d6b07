"""MR — Pang & Lee (2005) sentence polarity v1.0: 5,331 positive + 5,331 negative snippets (SPECS §5.7).

Sources (`load_mr(source=…)`), all going through one protocol:

* ``"mirror"`` — `<mirror>/rt_polarity/rt-polarity.{pos,neg}` (`benchmark.resources.store.mirror_root`,
  env `XAIBENCH_DATA_MIRROR`, default `../shared/data`);
* ``"local"`` — the same two files in the folder `path`;
* ``"hub"`` — `datasets.load_dataset(hub_id)` (default ``"rotten_tomatoes"``; a local dataset folder
  works too): every split of it is pooled and re-split, the Hub's own 80/10/10 split is ignored.

Text protocol (the Hub builder's, so both routes see the same strings): each file line is decoded as
Latin-1 and stripped (`str.strip`), and the Windows-1252 punctuation that Latin-1 leaves as C1 control
characters (0x85 "…", 0x91/0x92 quotes, 0x96/0x97 dashes, …) is restored to its cp1252 meaning
(46 lines of MR; `stats["c1_repaired"]`). Tokens come from `benchmark.tokenize.tokenize`.
Labels: pos = 1, neg = 0, classes ``["neg", "pos"]``.
Lines with no token are excluded and counted in `stats["excluded_empty"]`.

Splits: `model.seeded_split` — canonical order by (label, sha256 of the normalised text), seeded
permutation, cut 60/20/20 with `floor` for train and validation: 6,397 / 2,132 / 2,133 documents.
Document ids are content based and identical across sources: ``mr-pos-<first 12 hex of sha256 of the
normalised text>`` (``-2``, ``-3``, … for repeated sentences within a class, in canonical order); the file
line (1-based) or Hub split/row is kept in `Document.meta`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, Sequence

from benchmark.errors import ResourceError
from benchmark.resources.store import mirror_root
from benchmark.tokenize import tokenize

from .model import (
    DEFAULT_FRACTIONS,
    DEFAULT_SPLITS,
    Corpus,
    Document,
    canonical_order,
    check_fractions,
    content_hash,
    corpus_stats,
    require_every_class,
    seeded_split,
)

__all__ = ["load_mr", "MR_CLASSES", "MR_FILES", "MR_HUB_ID", "MR_MIRROR_DIR", "repair_c1", "mr_text"]

MR_CLASSES = ["neg", "pos"]
MR_FILES = {"neg": "rt-polarity.neg", "pos": "rt-polarity.pos"}
MR_HUB_ID = "rotten_tomatoes"
MR_MIRROR_DIR = "rt_polarity"
_LABEL_ALIASES = {"neg": 0, "negative": 0, "pos": 1, "positive": 1}
_C1 = re.compile("[\x80-\x9f]")


def _cp1252(match: re.Match[str]) -> str:
    try:
        return match.group().encode("latin-1").decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90, 0x9d are undefined in cp1252: keep them
        return match.group()


def repair_c1(text: str) -> str:
    """Latin-1-decoded C1 control characters (U+0080–U+009F) → their Windows-1252 characters."""
    return _C1.sub(_cp1252, text)


def mr_text(raw: str) -> str:
    """The MR text protocol for one line or Hub row: `str.strip`, then `repair_c1`."""
    return repair_c1(raw.strip())


def _read_lines(file: Path, encoding: str) -> list[str]:
    if not file.is_file():
        raise ResourceError(
            f"MR file {file} is missing; the folder must hold rt-polarity.pos and rt-polarity.neg "
            "(Pang & Lee sentence polarity v1.0), or use source='hub'"
        )
    data = file.read_bytes()
    if b"\x00" in data:
        raise ResourceError(
            f"{file} contains NUL bytes, so it is not a single-byte text file (UTF-16 or binary?); "
            "re-save it as Latin-1 / Windows-1252 or UTF-8 text (then pass encoding='utf-8')"
        )
    if encoding.lower().replace("_", "-") in ("latin-1", "latin1", "iso-8859-1"):
        try:
            as_utf8 = data.decode("utf-8")
        except UnicodeDecodeError:
            as_utf8 = None
        if as_utf8 is not None and not as_utf8.isascii():
            raise ResourceError(
                f"{file} is UTF-8 text, but MR is read as Latin-1 (the original files are Latin-1); "
                "reading it so would garble its accented characters: pass encoding='utf-8'"
            )
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        raise ResourceError(
            f"{file} cannot be decoded as {encoding} (byte {data[err.start]:#04x} at offset {err.start}); "
            "the original MR files are Latin-1: pass encoding='latin-1'"
        ) from None
    except LookupError:
        raise ResourceError(f"unknown text encoding '{encoding}'; use e.g. 'latin-1' or 'utf-8'") from None
    lines = text.split("\n")  # never str.splitlines: it would also split at U+0085 and friends
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _assign_ids(docs: list[Document]) -> list[Document]:
    """Content ids in canonical order: mr-<class>-<sha12>, with -2, -3 … for repeats."""
    seen: dict[str, int] = {}
    for doc in canonical_order(docs):
        base = f"mr-{MR_CLASSES[doc.label]}-{content_hash(doc)[:12]}"
        seen[base] = seen.get(base, 0) + 1
        doc.id = base if seen[base] == 1 else f"{base}-{seen[base]}"
    return docs


def _make_doc(raw: str, label: int, meta: dict[str, Any], counts: dict[str, Any]) -> Document | None:
    text = mr_text(raw)
    if text != raw.strip():
        counts["c1_repaired"] += 1
    tokens = tokenize(text)
    if not tokens:
        counts["excluded_empty"] += 1
        counts["excluded_empty_where"].append(meta)
        return None
    return Document(id="", tokens=tokens, label=label, text=text, meta=meta)


def _from_files(folder: Path, encoding: str, counts: dict[str, Any]) -> list[Document]:
    if not folder.is_dir():
        raise ResourceError(
            f"MR folder {folder} does not exist; give the folder holding rt-polarity.pos/.neg as `path`"
        )
    docs: list[Document] = []
    counts["lines"] = {}
    for label, cls in enumerate(MR_CLASSES):
        file = folder / MR_FILES[cls]
        lines = _read_lines(file, encoding)
        counts["lines"][cls] = len(lines)
        for i, line in enumerate(lines, start=1):
            doc = _make_doc(line, label, {"file": file.name, "line": i}, counts)
            if doc is not None:
                docs.append(doc)
    return docs


def _hub_label(value: Any, names: Sequence[str] | None, where: str) -> int:
    if names is not None and isinstance(value, int) and 0 <= value < len(names):
        alias = _LABEL_ALIASES.get(str(names[value]).lower())
        if alias is not None:
            return alias
    if isinstance(value, str):
        alias = _LABEL_ALIASES.get(value.strip().lower())
        if alias is not None:
            return alias
        if value.strip() in ("0", "1"):
            return int(value)
    elif isinstance(value, (int, bool)) and int(value) in (0, 1):
        return int(value)
    raise ResourceError(
        f"MR hub row {where} has label {value!r}; MR labels must be 0/'neg'/'negative' or 1/'pos'/'positive'"
        " (unlabelled rows, label -1, are not allowed): check `hub_id`"
    )


def _from_hub(
    hub_id: str, revision: str | None, cache_dir: str | Path | None, counts: dict[str, Any]
) -> list[Document]:
    import datasets  # heavy import, only on this route

    try:
        loaded = datasets.load_dataset(
            hub_id, revision=revision, cache_dir=None if cache_dir is None else str(cache_dir)
        )
    except Exception as err:  # noqa: BLE001 - any failure of the Hub/local builder becomes one message
        raise ResourceError(
            f"could not load the MR dataset '{hub_id}' with datasets.load_dataset "
            f"({type(err).__name__}: {err}); without network use source='mirror' or source='local'"
        ) from err
    if isinstance(loaded, datasets.Dataset):
        loaded = datasets.DatasetDict({"train": loaded})
    docs: list[Document] = []
    counts["rows"] = {}
    for split in sorted(loaded):
        ds = loaded[split]
        missing = [c for c in ("text", "label") if c not in ds.column_names]
        if missing:
            raise ResourceError(
                f"MR hub dataset '{hub_id}' split '{split}' lacks column(s) {missing} "
                f"(it has {ds.column_names}); MR needs 'text' and 'label'"
            )
        feature = ds.features["label"]
        names = list(feature.names) if isinstance(feature, datasets.ClassLabel) else None
        counts["rows"][split] = len(ds)
        for row, (text, value) in enumerate(zip(ds["text"], ds["label"])):
            where = {"split": split, "row": row}
            label = _hub_label(value, names, f"{split}/{row}")
            raw = text if isinstance(text, str) else ("" if text is None else str(text))
            doc = _make_doc(raw, label, where, counts)
            if doc is not None:
                docs.append(doc)
    return docs


MrSource = Literal["mirror", "local", "hub"]  # where `load_mr` reads MR from
MR_SOURCES: tuple[MrSource, ...] = ("mirror", "local", "hub")


def mr_source(name: str) -> MrSource:
    """`name` as an MR source (`MR_SOURCES`), or a ValueError naming them."""
    for source in MR_SOURCES:
        if source == name:
            return source
    raise ValueError(f"MR source must be one of {', '.join(MR_SOURCES)}, got {name!r}")


def load_mr(
    source: MrSource = "mirror",
    path: str | Path | None = None,
    seed: int = 0,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    hub_id: str = MR_HUB_ID,
    *,
    split_names: Sequence[str] = DEFAULT_SPLITS,
    encoding: str = "latin-1",
    revision: str | None = None,
    cache_dir: str | Path | None = None,
) -> Corpus:
    """Load MR and split it by the shared protocol (module docstring); classes ``["neg", "pos"]``.

    `path` (a folder with rt-polarity.pos/.neg) is required for ``source="local"`` and overrides the
    mirror for ``source="mirror"``. `hub_id`, `revision` and `cache_dir` go to `datasets.load_dataset`
    for ``source="hub"``. `encoding` applies to the files (the originals are Latin-1).
    """
    names = tuple(split_names)
    check_fractions(fractions, names)
    counts: dict[str, Any] = {"excluded_empty": 0, "excluded_empty_where": [], "c1_repaired": 0}
    if source == "hub":
        docs = _from_hub(hub_id, revision, cache_dir, counts)
        location = hub_id
    elif source in ("mirror", "local"):
        if path is not None:
            folder = Path(path)
        elif source == "local":
            raise ResourceError(
                "load_mr(source='local') needs `path`, the folder holding rt-polarity.pos/.neg"
            )
        else:
            root = mirror_root()
            if root is None or not (root / MR_MIRROR_DIR).is_dir():
                raise ResourceError(
                    f"the MR mirror folder {MR_MIRROR_DIR}/ was not found (mirror root: {root}); set "
                    "XAIBENCH_DATA_MIRROR to the data mirror, pass source='local' with `path`, "
                    "or use source='hub'"
                )
            folder = root / MR_MIRROR_DIR
        docs = _from_files(folder, encoding, counts)
        location = str(folder)
    else:
        raise ResourceError(f"unknown MR source '{source}'; use 'mirror', 'local' or 'hub'")
    require_every_class(docs, MR_CLASSES, f"MR ({source}: {location})")
    _assign_ids(docs)
    splits = seeded_split(docs, seed=seed, fractions=fractions, names=names)
    stats = corpus_stats(splits, MR_CLASSES)
    stats.update(
        source=source,
        location=location,
        seed=seed,
        fractions=list(fractions),
        split_rule="canonical order (label, sha256 of normalised text) -> default_rng(seed).permutation"
        " -> floor(f*n) per split, last split takes the rest",
        **counts,
    )
    return Corpus(name="mr", classes=list(MR_CLASSES), splits=splits, stats=stats)
