"""Generic labelled text tables: CSV / TSV, JSON lines and Parquet.

`load_text_table(path, text_column, label_column, format=None, …)`:

* **Format** from the extension unless given: ``.csv`` → csv, ``.tsv`` → tsv, ``.jsonl`` / ``.ndjson`` /
  ``.json`` → jsonl (a ``.json`` file holding one JSON array of objects is read too), ``.parquet`` /
  ``.pq`` → parquet. CSV and JSON lines are decoded with `encoding` (default UTF-8).
* **Labels**: strings or integers (integer-valued floats and digit strings count as integers). Unless
  `classes` is given, the classes are the distinct label values sorted (numerically for integers, else
  as strings) and label `i` is `classes[i]`; the mapping is recorded in `stats["label_map"]`. With
  `classes` given, a value outside it is an error, and so is a class without documents.
* **Splits**: `split_column` names a column whose values are the split names (order: train, validation
  / val / dev, test, then others sorted); otherwise the shared seeded protocol `model.seeded_split`
  (canonical content order, `default_rng(seed)` permutation, floor cuts of `fractions`).
* **Ids**: `id_column` if given (values must be unique), else ``<name>-<row:06d>`` with the 0-based data row.
* **Empty documents** (missing text or no token) are excluded and counted in `stats["excluded_empty"]`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from benchmark.errors import ResourceError
from benchmark.tokenize import tokenize

from .model import (
    DEFAULT_FRACTIONS,
    DEFAULT_SPLITS,
    Corpus,
    Document,
    check_fractions,
    corpus_stats,
    require_every_class,
    seeded_split,
)

__all__ = ["load_text_table", "read_table_rows", "TABLE_FORMATS"]

TABLE_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_SPLIT_ORDER = {"train": 0, "validation": 1, "val": 1, "dev": 1, "valid": 1, "test": 2}
_INT = re.compile(r"^[+-]?\d+$")


def _decode(path: Path, encoding: str) -> str:
    data = path.read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise ResourceError(
            f"{path} cannot be decoded as {encoding} (byte {data[err.start]:#04x} at offset {err.start}); "
            "pass the file's encoding, e.g. encoding='latin-1' or 'cp1252'"
        ) from None
    except LookupError:
        raise ResourceError(f"unknown text encoding '{encoding}'; use e.g. 'utf-8' or 'latin-1'") from None


def read_table_rows(
    path: str | Path, columns: Sequence[str], format: str | None = None, encoding: str = "utf-8"
) -> list[dict[str, Any]]:
    """Rows (dicts of the requested `columns`) of a CSV / TSV / JSON-lines / Parquet file."""
    path = Path(path)
    if not path.is_file():
        raise ResourceError(
            f"table {path} does not exist; pass the path of a CSV, JSON-lines or Parquet file"
        )
    fmt = format or TABLE_FORMATS.get(path.suffix.lower())
    if fmt not in ("csv", "tsv", "jsonl", "parquet"):
        raise ResourceError(
            f"cannot tell the format of {path} (format={format!r}); pass format='csv', 'tsv', 'jsonl' or "
            f"'parquet', or use one of the extensions {sorted(TABLE_FORMATS)}"
        )
    rows: list[dict[str, Any]]
    available: list[str]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            schema_names = pq.read_schema(path).names
        except Exception as err:  # noqa: BLE001 - pyarrow raises several types for unreadable files
            raise ResourceError(
                f"{path} is not a readable Parquet file ({err}); check the file or `format`"
            ) from None
        available = list(schema_names)
        missing = [c for c in columns if c not in available]
        if missing:
            raise ResourceError(f"{path} has no column(s) {missing}; its columns are {available}")
        rows = pq.read_table(path, columns=list(columns)).to_pylist()
    elif fmt in ("csv", "tsv"):
        text = _decode(path, encoding)
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        try:
            reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="," if fmt == "csv" else "\t")
            rows = list(reader)
        except csv.Error as err:
            raise ResourceError(f"{path} is not valid {fmt.upper()} ({err})") from None
        available = list(reader.fieldnames or [])
    else:
        text = _decode(path, encoding)
        stripped = text.lstrip()
        if stripped.startswith("["):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as err:
                raise ResourceError(f"{path} is not valid JSON ({err.msg}, line {err.lineno})") from None
            items = list(enumerate(data, start=1))
        else:
            items = []
            for lineno, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                try:
                    items.append((lineno, json.loads(line)))
                except json.JSONDecodeError as err:
                    raise ResourceError(
                        f"{path} line {lineno} is not valid JSON ({err.msg}); "
                        "JSON-lines needs one object a line"
                    ) from None
        rows = []
        keys: dict[str, None] = {}
        for lineno, obj in items:
            if not isinstance(obj, dict):
                raise ResourceError(f"{path} record {lineno} is not a JSON object")
            keys.update(dict.fromkeys(obj))
            rows.append(obj)
        available = list(keys)
    missing = [c for c in columns if c not in available]
    if missing:
        raise ResourceError(
            f"{path} has no column(s) {missing}; its columns are {available} "
            "(set text_column= / label_column= / split_column= to the right names)"
        )
    return [{c: row.get(c) for c in columns} for row in rows]


def _label_key(value: Any, where: str) -> int | str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        raise ResourceError(f"{where} has no label; every row needs a label (drop unlabelled rows first)")
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise ResourceError(f"{where} has the label {value!r}; labels must be strings or integers")
    if isinstance(value, str):
        v = value.strip()
        return int(v) if _INT.match(v) else v
    raise ResourceError(
        f"{where} has a label of type {type(value).__name__}; labels must be strings or integers"
    )


def load_text_table(
    path: str | Path,
    text_column: str = "text",
    label_column: str = "label",
    format: str | None = None,
    *,
    split_column: str | None = None,
    id_column: str | None = None,
    classes: Sequence[str | int] | None = None,
    seed: int = 0,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    split_names: Sequence[str] = DEFAULT_SPLITS,
    name: str | None = None,
    encoding: str = "utf-8",
) -> Corpus:
    """Load a labelled text table as a `Corpus` (protocol in the module docstring)."""
    path = Path(path)
    name = name or path.stem
    if split_column is None:
        check_fractions(fractions, split_names)
    columns = [text_column, label_column] + [c for c in (split_column, id_column) if c is not None]
    rows = read_table_rows(path, list(dict.fromkeys(columns)), format=format, encoding=encoding)
    if not rows:
        raise ResourceError(f"{path} has no data rows")
    keys = [_label_key(r[label_column], f"{path} row {i}") for i, r in enumerate(rows)]
    kinds = {type(k) for k in keys}
    if kinds == {int}:
        kind = "int"
    else:
        kind = "str"
        keys = [str(k) for k in keys]
    if classes is None:
        distinct = sorted(set(keys))
        if len(distinct) < 2:
            raise ResourceError(
                f"{path}: column '{label_column}' holds a single label {distinct}; a classification corpus "
                "needs at least two classes (pass `classes=` to declare the missing ones)"
            )
        class_names = [str(k) for k in distinct]
    else:
        class_names = [str(c).strip() for c in classes]
        if len(set(class_names)) != len(class_names):
            raise ResourceError(f"`classes` {class_names} repeats a class")
    index = {c: i for i, c in enumerate(class_names)}
    docs: list[Document] = []
    split_of: dict[str, str] = {}
    excluded: list[str] = []
    seen_ids: set[str] = set()
    for i, (row, key) in enumerate(zip(rows, keys)):
        label = index.get(str(key))
        if label is None:
            raise ResourceError(
                f"{path} row {i} has the unknown label {row[label_column]!r}; "
                f"known classes are {class_names} "
                "(fix the row or add the label to `classes`)"
            )
        doc_id = f"{name}-{i:06d}" if id_column is None else str(row[id_column])
        if doc_id in seen_ids:
            raise ResourceError(
                f"{path}: id {doc_id!r} (row {i}) is not unique; ids in '{id_column}' must be"
            )
        seen_ids.add(doc_id)
        raw = row[text_column]
        text = "" if raw is None or (isinstance(raw, float) and math.isnan(raw)) else str(raw)
        tokens = tokenize(text)
        if not tokens:
            excluded.append(doc_id)
            continue
        if split_column is not None:
            sp = row[split_column]
            if sp is None or str(sp).strip() == "":
                raise ResourceError(f"{path} row {i} has no value in split column '{split_column}'")
            split_of[doc_id] = str(sp).strip()
        docs.append(Document(id=doc_id, tokens=tokens, label=label, text=text, meta={"row": i}))
    require_every_class(docs, class_names, f"table {path}")
    if split_column is None:
        splits = seeded_split(docs, seed=seed, fractions=fractions, names=tuple(split_names))
    else:
        order = sorted(set(split_of.values()), key=lambda s: (_SPLIT_ORDER.get(s.lower(), 3), s))
        splits = {s: [] for s in order}
        for d in docs:
            splits[split_of[d.id]].append(d)
    stats = corpus_stats(splits, class_names)
    stats.update(
        location=str(path),
        format=format or TABLE_FORMATS.get(path.suffix.lower()),
        rows=len(rows),
        label_kind=kind,
        label_map={c: i for i, c in enumerate(class_names)},
        excluded_empty=len(excluded),
        excluded_empty_ids=excluded,
        split_rule=f"column '{split_column}'"
        if split_column is not None
        else f"seeded_split(seed={seed}, fractions={list(fractions)})",
    )
    return Corpus(name=name, classes=class_names, splits=splits, stats=stats)
