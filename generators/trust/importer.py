"""Import a trust set labelled by people directly (issue #9, deliverable 2) into the `trust/<name>`
resource shape that `generators.trust.build` writes.

File layout (CSV, TSV, JSON lines or Parquet; one row per prediction):

| column | required | meaning |
|---|---|---|
| `id` | no | instance id (default `row-<n>`) |
| `text` | yes (or `tokens`) | the input text; tokenised by `benchmark.tokenize.tokenize` when `tokens` is absent |
| `tokens` | no | the word tokens (a list, or a string of space-separated tokens) |
| `label` | yes | the true class (index or class name) |
| `prediction` | yes | the model's predicted class (index or name) |
| `confidence` | yes | the model's confidence (max class probability) in [0, 1] |
| `split` | no | `train` or `test` (default `test`); train rows need no explanation / trust label |
| `explanation` | test rows | word/score pairs (below) |
| `trust` | test rows, unless `votes` | `true`/`false`, `1`/`0`, `trustworthy`/`untrustworthy` |
| `votes` | no | annotator votes (below) |

`explanation`: a list of `[word, score]` pairs, a JSON string of one, or `word:score` items separated by
spaces. `votes`: a list or a JSON string of one; each vote `trustworthy`/`untrustworthy`/1/0, or
`null`/`abstain` for no vote.

Rules [P: SPECS §1.8, I where noted]:
* only correct predictions are assessed: test rows with prediction ≠ label are excluded (counted);
* the trust label of a row with votes is the *plurality* of its non-abstaining votes (SPECS §1.8); a tie
  or no vote at all → excluded and counted (`tie="exclude"` [I]; `"trustworthy"` / `"untrustworthy"`
  break ties that way instead); a row with both `trust` and `votes` whose values disagree is an error;
* a malformed value (unknown class, confidence outside [0, 1], an unparsable explanation or vote) is a
  clear error naming the row — never a silent change.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence


from benchmark.errors import ResourceError
from benchmark.resources import resource_root
from benchmark.tokenize import tokenize
from generators.corpora.tables import TABLE_FORMATS, _decode
from generators.trust.build import FAMILY, write_trust_config

TRUE = {"1", "true", "yes", "trustworthy", "trust", "t"}
FALSE = {"0", "false", "no", "untrustworthy", "untrust", "f"}
ABSTAIN = {"", "none", "null", "abstain", "na", "-"}
TIES = ("exclude", "trustworthy", "untrustworthy")


def read_rows(path: Path, format: str | None = None, encoding: str = "utf-8") -> list[dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        raise ResourceError(f"trust file {path} does not exist")
    fmt = format or TABLE_FORMATS.get(path.suffix.lower())
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    if fmt in ("csv", "tsv"):
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        return list(csv.DictReader(io.StringIO(_decode(path, encoding), newline=""),
                                   delimiter="," if fmt == "csv" else "\t"))
    if fmt == "jsonl":
        rows = []
        for n, line in enumerate(_decode(path, encoding).split("\n"), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ResourceError(f"{path} line {n} is not valid JSON ({e.msg})") from None
        return rows
    raise ResourceError(f"cannot tell the format of {path}; use .csv, .tsv, .jsonl or .parquet, or pass format=")


def _bool(v: Any, where: str) -> bool | None:
    """True / False, or None for an abstention."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in TRUE:
        return True
    if s in FALSE:
        return False
    if s in ABSTAIN:
        return None
    raise ResourceError(f"{where}: cannot read {v!r} as trustworthy / untrustworthy")


def _class(v: Any, classes: Sequence[str], where: str) -> int:
    if isinstance(v, str) and v.strip() in classes:
        return list(classes).index(v.strip())
    try:
        k = int(float(v))
    except (TypeError, ValueError):
        raise ResourceError(f"{where}: unknown class {v!r}; classes are {list(classes)}") from None
    if not 0 <= k < len(classes) or float(v) != k:
        raise ResourceError(f"{where}: class index {v!r} outside 0..{len(classes) - 1}")
    return k


def _list(v: Any, where: str, what: str) -> list:
    if v is None or v == "":
        return []
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                return list(json.loads(s))
            except json.JSONDecodeError as e:
                raise ResourceError(f"{where}: {what} is not valid JSON ({e.msg})") from None
        if what == "explanation":
            out = []
            for item in s.split():
                word, sep, score = item.rpartition(":")
                if not sep or not word:
                    raise ResourceError(f"{where}: explanation item {item!r} is not word:score")
                out.append([word, score])
            return out
        return [x.strip() for x in s.split(",")]
    raise ResourceError(f"{where}: cannot read {what} from {type(v).__name__}")


def plurality(votes: Sequence[Any], tie: str = "exclude", where: str = "") -> bool | None:
    """Plurality of the non-abstaining votes; None for a tie (tie='exclude') or no vote."""
    if tie not in TIES:
        raise ValueError(f"tie must be one of {TIES}")
    c = Counter(b for b in (_bool(v, where) for v in votes) if b is not None)
    if c[True] > c[False]:
        return True
    if c[False] > c[True]:
        return False
    if not c or tie == "exclude":
        return None
    return tie == "trustworthy"


def import_trust_set(path: str | Path, name: str, classes: Sequence[str], *, class_words: Sequence[str] | None = None,
                     format: str | None = None, tie: str = "exclude", encoding: str = "utf-8",
                     root: Path | None = None) -> dict[str, Any]:
    """Read a people-labelled trust file (module docstring) and write `trust/<name>`; returns
    {"meta": provenance entry, "stats": counts}."""
    if tie not in TIES:
        raise ResourceError(f"tie must be one of {TIES}, got {tie!r}")
    if not name or "/" in name:
        raise ResourceError(f"config name {name!r} must be non-empty without '/'")
    rows = read_rows(Path(path), format, encoding)
    if not rows:
        raise ResourceError(f"{path} has no rows")
    cols = set().union(*(r.keys() for r in rows))
    missing = [c for c in ("label", "prediction", "confidence") if c not in cols]
    if "text" not in cols and "tokens" not in cols:
        missing.append("text (or tokens)")
    if missing:
        raise ResourceError(f"{path} lacks column(s) {missing}; see generators/trust/importer.py for the layout")
    counts: Counter[str] = Counter()
    train: list[dict] = []
    test: list[dict] = []
    for n, r in enumerate(rows, start=1):
        where = f"{Path(path).name} row {n}"
        split = str(r.get("split") or "test").strip().lower()
        if split not in ("train", "test"):
            raise ResourceError(f"{where}: split must be 'train' or 'test', got {r.get('split')!r}")
        text = r.get("text") or ""
        tokens = r.get("tokens")
        tokens = ((tokens.split() if isinstance(tokens, str) else list(tokens)) if tokens not in (None, "")
                  else tokenize(str(text)))
        if not text:
            text = " ".join(tokens)
        label = _class(r.get("label"), classes, where + " label")
        pred = _class(r.get("prediction"), classes, where + " prediction")
        try:
            conf = float(r["confidence"])  # present: checked above
        except (TypeError, ValueError):
            raise ResourceError(f"{where}: confidence {r.get('confidence')!r} is not a number") from None
        if not 0.0 <= conf <= 1.0:
            raise ResourceError(f"{where}: confidence {conf} outside [0, 1]")
        base = {"id": str(r.get("id") or f"row-{n}"), "text": str(text), "tokens": [str(t) for t in tokens],
                "label": label, "prediction": pred, "confidence": conf}
        if split == "train":
            train.append(base)
            continue
        counts["test_rows"] += 1
        if pred != label:
            counts["excluded_incorrect_prediction"] += 1
            continue
        exp = _list(r.get("explanation"), where, "explanation")
        try:
            words = [str(p[0]) for p in exp]
            scores = [float(p[1]) for p in exp]
        except (TypeError, ValueError, IndexError):
            raise ResourceError(f"{where}: explanation must be [word, score] pairs") from None
        trust = _bool(r.get("trust"), where + " trust") if "trust" in r else None
        votes = _list(r.get("votes"), where, "votes") if r.get("votes") not in (None, "") else None
        if votes is not None:
            voted = plurality(votes, tie, where)
            counts["rows_with_votes"] += 1
            if trust is not None and voted is not None and voted != trust:
                raise ResourceError(f"{where}: trust={trust} disagrees with the plurality of its votes {votes}")
            if voted is None and trust is None:
                counts["excluded_vote_tie_or_no_vote"] += 1
                continue
            trust = voted if voted is not None else trust
        if trust is None:
            raise ResourceError(f"{where}: a test row needs a trust label or annotator votes")
        if not words:
            counts["empty_explanations"] += 1
        test.append({**base, "explanation_words": words, "explanation_scores": scores, "trust": bool(trust),
                     "precision": None, "rationale": []})
    if not test:
        raise ResourceError(f"{path}: no test row is left after the exclusions {dict(counts)}")
    n_trust = sum(bool(r["trust"]) for r in test)
    if n_trust in (0, len(test)):
        counts["one_class_only"] = 1  # metrics such as Spec / Sen will be undefined (reported, not averaged)
    stats = {"trust": n_trust, "untrust": len(test) - n_trust, "total": len(test), "train_documents": len(train),
             "exclusions": dict(counts), "source_file": str(path),
             **{f"exclusion_{k}": v for k, v in counts.items()}}
    params = {"dataset": name, "model": "imported", "classes": list(classes),
              "class_words": list(class_words or classes), "tie": tie, "label_source": "people (imported)",
              "ground_truth_columns": ["trust", "precision", "rationale"]}
    root = Path(root) if root else resource_root(FAMILY)
    meta = write_trust_config(root, name, classes, train, test, params, stats)
    return {"meta": meta, "stats": stats}


__all__ = ["import_trust_set", "plurality", "read_rows"]
