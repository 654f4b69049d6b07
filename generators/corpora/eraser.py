"""ERASER-format rationale corpora (DeYoung et al. 2020), e.g. ERASER Movie Reviews (Zaidan et al. 2007).

Folder layout: `{split}.jsonl` annotations — one JSON object per line with `annotation_id` (the document
id), `classification` (``"NEG"``/``"POS"`` → 0/1 by default) and `evidences` (a list of groups of spans
`{"docid", "start_token", "end_token", "text", …}`) — plus the texts, as `docs.jsonl.gz` / `docs.jsonl`
(`{"docid", "text"}` per line) or a `docs/` folder of one file per document id.

Alignment protocol: evidence offsets index the whitespace-split tokens (`str.split()`) of the whole
document, end exclusive. Every whitespace token is mapped through `benchmark.tokenize.tokenize` (it may
become several tokens, e.g. ``'who`` → ``'`` ``who``, or none); each resulting token carries the rationale
flag of its source token, and `token_source` records that source index. The flags of a document are the
union of all its spans.

Bad input: a span outside the document (or empty, start ≥ end) is excluded and counted in the split's
`spans_out_of_range` (``on_bad_span="error"`` raises instead); a span whose `text` differs from the
tokens it points at is kept (the offsets are authoritative) and counted in `spans_text_mismatch` (raises
under ``"error"``); spans naming another document are counted in `spans_other_document` and excluded;
documents with no token are excluded and counted in `excluded_empty`. Missing files or documents, bad
JSON and unknown labels raise `ResourceError`.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

import numpy as np

from benchmark.errors import ResourceError
from benchmark.resources.store import mirror_root
from benchmark.tokenize import tokenize

from .model import Corpus, RationaleDocument, corpus_stats, require_every_class

__all__ = ["load_eraser", "ERASER_MOVIES_MIRROR_DIR", "align_rationale"]

ERASER_MOVIES_MIRROR_DIR = "eraser_movies"


def _jsonl(file: Path, opener=open) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with opener(file, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ResourceError(
                        f"{file} line {lineno} is not valid JSON ({err.msg}); the file is damaged or not "
                        "ERASER JSON-lines: restore it from the source release"
                    ) from None
                if not isinstance(obj, dict):
                    raise ResourceError(
                        f"{file} line {lineno} is not a JSON object; expected ERASER JSON-lines"
                    )
                yield lineno, obj
    except UnicodeDecodeError as err:
        raise ResourceError(
            f"{file} is not UTF-8 ({err.reason} at byte {err.start}); ERASER files are UTF-8"
        ) from None
    except (OSError, EOFError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise ResourceError(
            f"{file} cannot be read ({type(err).__name__}: {err}); it may be truncated"
        ) from None


class _Texts:
    """Document texts from docs.jsonl.gz, docs.jsonl or a docs/ folder."""

    def __init__(self, directory: Path) -> None:
        self.folder: Path | None = None
        self.texts: dict[str, str] | None = None
        for name, opener in (("docs.jsonl.gz", gzip.open), ("docs.jsonl", open)):
            file = directory / name
            if file.is_file():
                self.source = name
                self.texts = {}
                for lineno, obj in _jsonl(file, opener):
                    if not isinstance(obj.get("docid"), str) or not isinstance(obj.get("text"), str):
                        raise ResourceError(f"{file} line {lineno} lacks a string 'docid' or 'text'")
                    self.texts[obj["docid"]] = obj["text"]
                return
        if (directory / "docs").is_dir():
            self.source = "docs/"
            self.folder = directory / "docs"
            return
        raise ResourceError(
            f"no document texts in {directory}: expected docs.jsonl.gz, docs.jsonl or a docs/ folder "
            "(the ERASER release layout)"
        )

    def get(self, docid: str) -> str | None:
        if self.texts is not None:
            return self.texts.get(docid)
        assert self.folder is not None
        file = self.folder / docid
        if not file.is_file():
            return None
        try:
            return file.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise ResourceError(f"{file} is not UTF-8 ({err.reason} at byte {err.start})") from None


def align_rationale(
    source_tokens: Sequence[str],
    source_flags: Sequence[bool] | np.ndarray,
    cache: dict[str, list[str]] | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Map source tokens through `tokenize`: (tokens, rationale flags, source index per token)."""
    if cache is None:
        cache = {}
    subs = []
    for tok in source_tokens:
        sub = cache.get(tok)
        if sub is None:
            sub = cache[tok] = tokenize(tok)
        subs.append(sub)
    counts = np.fromiter((len(sub) for sub in subs), dtype=np.int64, count=len(subs))
    tokens = list(chain.from_iterable(subs))
    flags = np.repeat(np.asarray(source_flags, dtype=bool), counts)
    source = np.repeat(np.arange(len(subs), dtype=np.int64), counts)
    return tokens, flags, source


def _label(value: Any, classes: Sequence[str], where: str) -> int:
    if isinstance(value, str):
        if value in classes:
            return list(classes).index(value)
        lowered = [c.lower() for c in classes]
        if value.lower() in lowered:
            return lowered.index(value.lower())
    raise ResourceError(
        f"{where}: unknown classification {value!r}; known classes are {list(classes)} "
        "(pass `classes=` with every label of this data set, in label order)"
    )


def _spans(evidences: Any, where: str) -> list[dict[str, Any]]:
    if evidences is None:
        return []
    if not isinstance(evidences, list):
        raise ResourceError(f"{where}: 'evidences' must be a list of evidence groups")
    out: list[dict[str, Any]] = []
    for group in evidences:
        for span in [group] if isinstance(group, dict) else group:
            if not isinstance(span, dict) or not all(
                isinstance(span.get(k), int) for k in ("start_token", "end_token")
            ):
                raise ResourceError(f"{where}: an evidence lacks integer 'start_token'/'end_token'")
            out.append(span)
    return out


def _resolve(directory: str | Path | None) -> Path:
    if directory is not None:
        folder = Path(directory)
        if not folder.is_dir():
            raise ResourceError(
                f"ERASER folder {folder} does not exist; pass the folder holding {{split}}.jsonl"
            )
        return folder
    root = mirror_root()
    if root is None or not (root / ERASER_MOVIES_MIRROR_DIR).is_dir():
        raise ResourceError(
            f"the ERASER movies mirror folder {ERASER_MOVIES_MIRROR_DIR}/ was not found "
            f"(mirror root: {root}); "
            "set XAIBENCH_DATA_MIRROR to the data mirror or pass `directory`"
        )
    return root / ERASER_MOVIES_MIRROR_DIR


def _split_names(folder: Path, split: str | Sequence[str]) -> list[str]:
    """The requested split names, each checked to have its `{split}.jsonl` in `folder`."""
    split_names = [split] if isinstance(split, str) else list(split)
    if not split_names:
        raise ResourceError("load_eraser needs at least one split name (e.g. 'train')")
    for sp in split_names:
        if not (folder / f"{sp}.jsonl").is_file():
            have = sorted(p.stem for p in folder.glob("*.jsonl") if p.stem != "docs")
            raise ResourceError(
                f"ERASER split file {folder / (sp + '.jsonl')} is missing; splits here: {have}"
            )
    return split_names


def _zero_counts() -> dict[str, Any]:
    return dict(
        annotations=0,
        source_tokens=0,
        source_tokens_dropped=0,
        rationale_source_tokens=0,
        evidence_spans=0,
        spans_out_of_range=0,
        spans_text_mismatch=0,
        spans_other_document=0,
        excluded_empty=0,
    )


@dataclass
class _SplitReader:
    """One split file being read: the shared text lookup and options, and what it has gathered so far."""

    file: Path
    split: str
    texts: _Texts
    classes: Sequence[str]
    on_bad_span: Literal["count", "error"]
    cache: dict[str, list[str]]
    docs: list[RationaleDocument] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=_zero_counts)
    problems: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)


def _annotation_docid(reader: _SplitReader, ann: dict[str, Any], where: str) -> str:
    """The one document id an annotation is about; refuses several documents and repeats."""
    docid = ann.get("annotation_id")
    docids = ann.get("docids")
    if isinstance(docids, list) and len(docids) > 1:
        raise ResourceError(
            f"{where}: annotations over several documents ({docids}) are not supported"
        )
    if isinstance(docids, list) and docids:
        docid = docids[0]
    if not isinstance(docid, str):
        raise ResourceError(f"{where}: missing string 'annotation_id'")
    if docid in reader.seen:
        raise ResourceError(f"{where}: document {docid} is annotated twice in {reader.file.name}")
    reader.seen.add(docid)
    return docid


def _evidence_flags(
    reader: _SplitReader, ann: dict[str, Any], docid: str, ws: list[str], where: str
) -> tuple[np.ndarray, set[tuple[int, int]]]:
    """Rationale flag per whitespace token and the kept spans, counting bad spans (module docstring)."""
    c = reader.counts
    flags = np.zeros(len(ws), dtype=bool)
    evidence: set[tuple[int, int]] = set()
    for span in _spans(ann.get("evidences"), where):
        s, e = span["start_token"], span["end_token"]
        if span.get("docid", docid) != docid:
            c["spans_other_document"] += 1
            continue
        if not (0 <= s < e <= len(ws)):
            msg = f"{where}: evidence [{s}, {e}) of {docid} is outside its {len(ws)} tokens"
            if reader.on_bad_span == "error":
                raise ResourceError(msg + "; fix the offsets or load with on_bad_span='count'")
            c["spans_out_of_range"] += 1
            reader.problems.append(msg)
            continue
        if isinstance(span.get("text"), str) and " ".join(ws[s:e]) != " ".join(span["text"].split()):
            got = " ".join(ws[s:e])
            msg = f"{where}: evidence [{s}, {e}) of {docid} reads {got!r}, not {span['text']!r}"
            if reader.on_bad_span == "error":
                raise ResourceError(msg + "; the offsets do not match the document text")
            c["spans_text_mismatch"] += 1
            reader.problems.append(msg)
        flags[s:e] = True
        evidence.add((s, e))
    return flags, evidence


def _read_annotation(reader: _SplitReader, lineno: int, ann: dict[str, Any]) -> None:
    """Turn one annotation line into a `RationaleDocument` (or count why it is left out)."""
    where = f"{reader.file.name} line {lineno}"
    c = reader.counts
    c["annotations"] += 1
    docid = _annotation_docid(reader, ann, where)
    if "classification" not in ann:
        raise ResourceError(f"{where}: missing 'classification'")
    label = _label(ann["classification"], reader.classes, where)
    text = reader.texts.get(docid)
    if text is None:
        reader.missing.append(docid)
        return
    ws = text.split()
    flags, evidence = _evidence_flags(reader, ann, docid, ws, where)
    c["evidence_spans"] += len(evidence)
    tokens, rationale, source = align_rationale(ws, flags, reader.cache)
    c["source_tokens"] += len(ws)
    c["rationale_source_tokens"] += int(flags.sum())
    c["source_tokens_dropped"] += len(ws) - (
        int(np.count_nonzero(np.diff(source))) + 1 if len(source) else 0
    )
    if not tokens:
        c["excluded_empty"] += 1
        reader.problems.append(f"{where}: document {docid} has no tokens (excluded)")
        return
    reader.docs.append(
        RationaleDocument(
            id=docid,
            tokens=tokens,
            label=label,
            text=text,
            rationale=rationale,
            token_source=source,
            evidence=sorted(evidence),
            meta={"split": reader.split, "line": lineno},
        )
    )


def _read_split(reader: _SplitReader) -> tuple[list[RationaleDocument], dict[str, Any]]:
    """Every document of one split and its counts (with rationale totals and the problems list)."""
    for lineno, ann in _jsonl(reader.file):
        _read_annotation(reader, lineno, ann)
    if reader.missing:
        raise ResourceError(
            f"{len(reader.missing)} document(s) of {reader.file.name} have no text in {reader.texts.source} "
            f"(first: {reader.missing[:3]}); the annotations and texts come from different releases"
        )
    docs, c = reader.docs, reader.counts
    rat = sum(int(d.rationale.sum()) for d in docs)
    tok = sum(len(d.tokens) for d in docs)
    c.update(rationale_tokens=rat, rationale_fraction=rat / tok if tok else 0.0, problems=reader.problems)
    return docs, c


def _eraser_stats(
    splits: dict[str, list[RationaleDocument]],
    extra: dict[str, dict[str, Any]],
    classes: Sequence[str],
    folder: Path,
    texts: _Texts,
) -> dict[str, Any]:
    """`corpus_stats` plus the ERASER counts per split and their totals."""
    stats = corpus_stats(splits, list(classes))
    for sp, c in extra.items():
        stats["splits"][sp].update(c)
    rat = sum(c["rationale_tokens"] for c in extra.values())
    stats.update(
        rationale_tokens=rat,
        rationale_fraction=rat / stats["tokens"] if stats["tokens"] else 0.0,
        excluded_empty=sum(c["excluded_empty"] for c in extra.values()),
        spans_out_of_range=sum(c["spans_out_of_range"] for c in extra.values()),
        spans_text_mismatch=sum(c["spans_text_mismatch"] for c in extra.values()),
        location=str(folder),
        texts=texts.source,
    )
    return stats


def load_eraser(
    directory: str | Path | None = None,
    split: str | Sequence[str] = ("train", "val"),
    *,
    classes: Sequence[str] = ("NEG", "POS"),
    name: str | None = None,
    on_bad_span: Literal["count", "error"] = "count",
) -> Corpus:
    """Load one or more splits of an ERASER-format folder as `RationaleDocument`s (module docstring).

    `directory` defaults to the ERASER movies mirror (`<mirror>/eraser_movies`). `split` is a split name
    or a sequence of them (`{split}.jsonl` each). `classes[i]` is the `classification` string of label `i`.
    """
    if on_bad_span not in ("count", "error"):
        raise ResourceError(f"on_bad_span must be 'count' or 'error', not {on_bad_span!r}")
    folder = _resolve(directory)
    split_names = _split_names(folder, split)
    texts = _Texts(folder)
    cache: dict[str, list[str]] = {}
    splits: dict[str, list[RationaleDocument]] = {}
    extra: dict[str, dict[str, Any]] = {}
    for sp in split_names:
        reader = _SplitReader(folder / f"{sp}.jsonl", sp, texts, classes, on_bad_span, cache)
        splits[sp], extra[sp] = _read_split(reader)
    require_every_class([d for docs in splits.values() for d in docs], classes, f"ERASER {folder}")
    stats = _eraser_stats(splits, extra, classes, folder, texts)
    if name is None:
        stem = folder.name.replace("_", "-")
        name = stem if stem.startswith("eraser") else f"eraser-{stem}"
    # lists are invariant: a list of RationaleDocuments is a list of Documents for every reader of a Corpus
    return Corpus(name=name, classes=list(classes), splits=splits, stats=stats)  # type: ignore[arg-type]  # see above
