"""BeerAdvocate multi-aspect reviews in Lei et al.'s (2016) format (SPECS §4.2), from local files, the
data mirror, or a Hub dataset in Parquet.

Sources
-------
* review files `reviews.aspect{k}.{train,heldout}.txt.gz` (or any such text file, gzip or not), one review
  a line: five space-separated ratings in [0, 1] (appearance, aroma, palate, taste, overall), a TAB, the
  whitespace-separated lower-cased tokens;
* `annotations.json`: JSON lines with tokens `x`, ratings `y` and, per aspect key "0" … "4", human
  rationales as half-open token spans `[start, end)` into `x`;
* a Hub dataset (or a local folder in Hub layout) of Parquet files read with `datasets.load_dataset`:
  columns `scores` (5 floats) and `text` (Lei's whitespace-joined tokens) or `tokens` (a list), optional
  `id`, optional `rationale_<aspect name>` (a list of `[start, end)` spans into Lei's tokens); Lei's own
  keys `x` / `y` / "0" … "4" are accepted too. `load_beer` reads the splits `train` and `validation` (or
  `heldout`) of the config `reviews` (or the default config) and the human rationales from a config
  `annotations` (its first split) or a split `annotations`.

Every source goes through the same checks (`_build`): a line without tokens is skipped and counted
(`stats["empty"]`, as Lei's reader does); ratings that are not five numbers in [0, 1] and spans outside the
review raise `ResourceError` naming the file and line (with `bad_scores="exclude"` such a review is left out
and counted instead, `stats["excluded_scores"]`); reviews longer than `max_len` (Lei: 256) are
truncated to their first `max_len` tokens or excluded (`long="truncate" | "exclude"`), counted either way.

Tokenisation (`tokenization`)
-----------------------------
The files are pre-tokenised, but not by the project's `benchmark.tokenize.tokenize`: on the mirror's 10,000
reviews `tokenize` differs from Lei's tokens on 6,887 reviews (``11.2`` → ``11 . 2``, ``'s`` → ``' s``,
``...`` → ``. . .``, ``*is*`` → ``* is *``), +2.2 % tokens overall. So:
* `"project"` (default): every Lei token is re-tokenised with `tokenize` (a Lei token never splits across
  two project tokens, so `tokenize(" ".join(lei)) == [t for w in lei for t in tokenize(w)]`) and rationale
  spans are mapped onto the new positions (a span covers exactly the sub-tokens of its Lei tokens);
* `"lei"`: Lei's tokens as they are — the unit of the paper's statistics (Table 2 lengths) and of Lei's
  word vectors.
Truncation to `max_len` counts tokens of the chosen tokenisation.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence, TypedDict

import numpy as np

from benchmark.errors import ResourceError
from benchmark.resources.store import mirror_root
from benchmark.tokenize import tokenize

# Lei's rating columns (SPECS §4.2): 0 = appearance/look, 1 = aroma/smell, 2 = palate, 3 = taste, 4 = overall
RATING_NAMES = ("appearance", "aroma", "palate", "taste", "overall")
ASPECTS = {"appearance": 0, "aroma": 1, "palate": 2}  # the aspects of the verification (Camburu et al.)
ALIASES = {"look": "appearance", "smell": "aroma"}
N_RATINGS = 5
MAX_LEN = 256  # Lei's `max_len` [R]
TOKENIZATIONS = ("project", "lei")
LONG_POLICIES = ("truncate", "exclude")
BAD_SCORE_POLICIES = ("raise", "exclude")
MIRROR_FOLDER = "beer_advocate_lei2016"


def aspect_index(aspect: str | int) -> int:
    """0 / 1 / 2 for appearance / aroma / palate (also 'look', 'smell', or the index itself)."""
    valid = ", ".join(f"{name} ({i})" for name, i in ASPECTS.items())
    if isinstance(aspect, (int, np.integer)) and not isinstance(aspect, bool):
        if int(aspect) in ASPECTS.values():
            return int(aspect)
    elif isinstance(aspect, str):
        key = aspect.strip().lower()
        key = ALIASES.get(key, key)
        if key in ASPECTS:
            return ASPECTS[key]
        if key.isdigit() and int(key) in ASPECTS.values():
            return int(key)
    raise ResourceError(f"unknown aspect {aspect!r}; valid aspects: {valid}")


def aspect_name(aspect: str | int) -> str:
    return RATING_NAMES[aspect_index(aspect)]


@dataclass
class Reviews:
    """Tokenised reviews with their five ratings (and, for annotations, human rationales)."""

    ids: list[str]
    tokens: list[list[str]]
    scores: np.ndarray  # (N, 5) float32
    stats: dict[str, Any] = field(default_factory=dict)
    rationales: list[dict[int, list[tuple[int, int]]]] | None = None  # per review: aspect -> spans

    def __len__(self) -> int:
        return len(self.tokens)

    def target(self, aspect: str | int) -> np.ndarray:
        """The rating of `aspect` (N,) float32."""
        return self.scores[:, aspect_index(aspect)].astype(np.float32)

    def subset(self, index: Sequence[int] | np.ndarray) -> "Reviews":
        idx = [int(i) for i in index]
        return Reviews([self.ids[i] for i in idx], [self.tokens[i] for i in idx], self.scores[idx],
                       {**self.stats, "subset_of": self.stats.get("kept", len(self)), "kept": len(idx)},
                       None if self.rationales is None else [self.rationales[i] for i in idx])

    def rationale_masks(self, aspect: str | int) -> list[np.ndarray]:
        """Per review a bool array: token inside a human rationale span of `aspect`."""
        if self.rationales is None:
            raise ResourceError("these reviews carry no human rationales (load annotations.json)")
        a = aspect_index(aspect)
        out = []
        for toks, spans in zip(self.tokens, self.rationales):
            m = np.zeros(len(toks), dtype=bool)
            for s, e in spans.get(a, []):
                m[s:e] = True
            out.append(m)
        return out

    def lengths(self) -> np.ndarray:
        return np.array([len(t) for t in self.tokens], dtype=np.int64)


# -- the one normalisation every source goes through -------------------------------------------


def _check_options(max_len: int | None, long: str, tokenization: str, bad_scores: str = "raise") -> None:
    if bad_scores not in BAD_SCORE_POLICIES:
        raise ValueError(f"bad_scores must be one of {BAD_SCORE_POLICIES}, got {bad_scores!r}")
    if tokenization not in TOKENIZATIONS:
        raise ValueError(f"tokenization must be one of {TOKENIZATIONS}, got {tokenization!r}")
    if long not in LONG_POLICIES:
        raise ValueError(f"long must be one of {LONG_POLICIES}, got {long!r}")
    if max_len is not None and max_len < 1:
        raise ValueError(f"max_len must be ≥ 1 or None, got {max_len}")


def _retokenise(lei: list[str], tokenization: str) -> tuple[list[str], list[int]]:
    """(tokens, starts): starts[i] = index of Lei token i's first token, starts[len(lei)] = len(tokens)."""
    if tokenization == "lei":
        return list(lei), list(range(len(lei) + 1))
    tokens: list[str] = []
    starts = [0]
    for w in lei:
        tokens += tokenize(w)
        starts.append(len(tokens))
    return tokens, starts


def _scores(raw: Any, where: str) -> np.ndarray:
    if isinstance(raw, str):
        raw = raw.split()
    try:
        vals = np.asarray([float(v) for v in raw], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ResourceError(f"{where}: ratings {raw!r} are not numbers; expected {N_RATINGS} ratings in [0, 1] "
                            "(Lei's format: 'r0 r1 r2 r3 r4<TAB>tokens')") from exc
    if vals.shape != (N_RATINGS,):
        raise ResourceError(f"{where}: {vals.size} ratings, expected {N_RATINGS} "
                            f"({', '.join(RATING_NAMES)})")
    if not np.all(np.isfinite(vals)) or vals.min() < 0.0 or vals.max() > 1.0:
        raise ResourceError(f"{where}: ratings {vals.tolist()} outside [0, 1]; the files store stars / 5 — "
                            "rescale the ratings to [0, 1]")
    return vals


def _spans(raw: Any, n_lei: int, where: str) -> list[tuple[int, int]]:
    out = []
    for span in raw or []:
        try:
            s, e = (int(v) for v in span)
        except (TypeError, ValueError) as exc:
            raise ResourceError(f"{where}: rationale span {span!r} is not a [start, end) pair") from exc
        if not 0 <= s <= e <= n_lei:
            raise ResourceError(f"{where}: rationale span [{s}, {e}) outside the review's {n_lei} tokens")
        out.append((s, e))
    return out


def _build(records: Iterable[tuple[str, Any, list[str], dict[int, Any] | None]], source: str, *,
           max_len: int | None, long: str, tokenization: str, annotated: bool,
           bad_scores: str = "raise") -> Reviews:
    """records: (id, raw ratings, Lei tokens, raw spans per aspect index or None)."""
    _check_options(max_len, long, tokenization, bad_scores)
    ids, toks, scores, rats = [], [], [], []
    stats: dict[str, Any] = {"source": source, "records": 0, "empty": 0, "truncated": 0, "excluded_long": 0,
             "excluded_scores": 0, "tokenization": tokenization, "max_len": max_len, "long": long}
    for rid, raw_scores, lei, raw_spans in records:
        stats["records"] += 1
        if not lei:
            stats["empty"] += 1
            continue
        try:
            vals = _scores(raw_scores, rid)
        except ResourceError:
            if bad_scores == "raise":
                raise
            stats["excluded_scores"] += 1
            continue
        tokens, starts = _retokenise(lei, tokenization)
        spans = {}
        if raw_spans is not None:
            for a, raw in raw_spans.items():
                spans[a] = [(starts[s], starts[e]) for s, e in _spans(raw, len(lei), f"{rid} aspect {a}")
                            if starts[s] < starts[e]]
        if max_len is not None and len(tokens) > max_len:
            if long == "exclude":
                stats["excluded_long"] += 1
                continue
            stats["truncated"] += 1
            tokens = tokens[:max_len]
            spans = {a: [(s, min(e, max_len)) for s, e in sp if s < max_len] for a, sp in spans.items()}
        ids.append(rid)
        toks.append(tokens)
        scores.append(vals)
        rats.append(spans)
    stats["kept"] = len(toks)
    arr = np.asarray(scores, dtype=np.float32).reshape(len(scores), N_RATINGS)
    return Reviews(ids, toks, arr, stats, rats if annotated else None)


# -- files -------------------------------------------------------------------------------------------


def _open_text(path: Path):
    path = Path(path)
    if not path.exists():
        raise ResourceError(f"{path} does not exist; pass the folder with Lei's beer files (see "
                            "shared/data/beer_advocate_lei2016/SOURCE.md) or a Hub dataset id")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _review_lines(path: Path, limit: int | None) -> Iterator[tuple[str, Any, list[str], None]]:
    name = Path(path).name
    with _open_text(path) as fh:
        for n, line in enumerate(fh, 1):
            if limit is not None and n > limit:
                break
            head, _, text = line.rstrip("\n").partition("\t")
            yield f"{name}:{n}", head, text.split(), None


class ReadOptions(TypedDict):
    """How a review file or split is read (`read_reviews`, `load_hub`): the options `load_beer` passes on."""

    max_len: int | None
    long: str
    tokenization: str
    bad_scores: str


def read_reviews(path: Path | str, *, max_len: int | None = MAX_LEN, long: str = "truncate",
                 tokenization: str = "project", limit: int | None = None, bad_scores: str = "raise") -> Reviews:
    """A review file of Lei's format (`reviews.aspect{k}.{train,heldout}.txt.gz`); `limit` = first lines."""
    return _build(_review_lines(Path(path), limit), str(path), max_len=max_len, long=long,
                  tokenization=tokenization, annotated=False, bad_scores=bad_scores)


def _annotation_lines(path: Path) -> Iterator[tuple[str, Any, list[str], dict[int, Any]]]:
    name = Path(path).name
    with _open_text(path) as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{name}:{n}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ResourceError(f"{where}: not a JSON object ({exc})") from exc
            if not isinstance(obj, dict) or "x" not in obj or "y" not in obj:
                raise ResourceError(f"{where}: an annotation needs keys 'x' (tokens) and 'y' (ratings)")
            rid = f"{name}:{n}" if obj.get("rid") is None else str(obj["rid"])
            spans = {a: obj.get(str(a), []) for a in range(N_RATINGS)}
            yield rid, obj["y"], [str(t) for t in obj["x"]], spans


def read_annotations(path: Path | str, *, max_len: int | None = None, long: str = "truncate",
                     tokenization: str = "project", bad_scores: str = "raise") -> Reviews:
    """`annotations.json` (994 reviews with human rationales). Not truncated by default: Lei evaluates
    rationale precision on the whole review."""
    return _build(_annotation_lines(Path(path)), str(path), max_len=max_len, long=long,
                  tokenization=tokenization, annotated=True, bad_scores=bad_scores)


# -- Hub (Parquet) ----------------------------------------------------------------------------------


def _hub_records(ds, source: str) -> Iterator[tuple[str, Any, list[str], dict[int, Any] | None]]:
    cols = set(ds.column_names)
    if "tokens" in cols:
        tok_col = "tokens"
    elif "x" in cols:
        tok_col = "x"
    elif "text" in cols:
        tok_col = "text"
    else:
        raise ResourceError(f"{source}: no 'tokens', 'x' or 'text' column (has: {', '.join(sorted(cols))})")
    score_col = "scores" if "scores" in cols else "y" if "y" in cols else None
    if score_col is None:
        raise ResourceError(f"{source}: no 'scores' (or 'y') column (has: {', '.join(sorted(cols))})")
    span_cols = {a: c for a in range(N_RATINGS)
                 for c in (f"rationale_{RATING_NAMES[a]}", str(a)) if c in cols}
    for n, row in enumerate(ds):
        toks = row[tok_col]
        toks = toks.split() if isinstance(toks, str) else [str(t) for t in (toks or [])]
        rid = str(row["id"]) if row.get("id") is not None else f"{source}:{n}"
        spans = {a: row[c] for a, c in span_cols.items()} if span_cols else None
        yield rid, row[score_col], toks, spans


def load_hub(path: str, split: str = "train", config: str | None = None, *, max_len: int | None = MAX_LEN,
             long: str = "truncate", tokenization: str = "project", revision: str | None = None,
             bad_scores: str = "raise") -> Reviews:
    """A split of a Hub dataset id, or of a local folder in Hub layout, through `datasets.load_dataset`."""
    import datasets

    try:
        ds = datasets.load_dataset(path, config, split=split, revision=revision)
    except (FileNotFoundError, ValueError, ConnectionError) as exc:
        raise ResourceError(f"cannot load split {split!r} of the dataset {path!r} ({exc}); check the id or "
                            "folder, or pass Lei's files instead") from exc
    source = f"{path}[{config + '/' if config else ''}{split}]"
    annotated = any(c.startswith("rationale_") or c in {"0", "1", "2"} for c in ds.column_names)
    return _build(_hub_records(ds, source), source, max_len=max_len, long=long, tokenization=tokenization,
                  annotated=annotated, bad_scores=bad_scores)


# -- the data of one aspect --------------------------------------------------------------------------


def mirror_dir() -> Path | None:
    """`<mirror>/beer_advocate_lei2016` when the data mirror has it."""
    root = mirror_root()
    if root is None:
        return None
    d = Path(root) / MIRROR_FOLDER
    return d if d.is_dir() else None


@dataclass
class BeerData:
    """Train / dev reviews of one aspect and the human-annotated reviews (the rationale test set)."""

    aspect: str
    train: Reviews
    dev: Reviews
    annotations: Reviews | None
    info: dict[str, Any]


def split_pool(pool: Reviews, dev_fraction: float = 0.1, seed: int = 0) -> tuple[Reviews, Reviews]:
    """A seeded random train / dev split of one file (when no separate train file exists)."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in (0, 1), got {dev_fraction}")
    perm = np.random.default_rng(seed).permutation(len(pool))
    n_dev = max(1, int(round(dev_fraction * len(pool))))
    return pool.subset(np.sort(perm[n_dev:])), pool.subset(np.sort(perm[:n_dev]))


def locate_beer(source: str | Path | None):
    """(source, folder, whether it holds Lei's review files, find(stem) -> the `.txt.gz`/`.txt` file or
    None). `source` None = the data mirror's beer folder (a clear error when there is none)."""
    if source is None:
        source = mirror_dir()
        if source is None:
            raise ResourceError(f"no beer data: the data mirror has no {MIRROR_FOLDER}/ (set "
                                "XAIBENCH_DATA_MIRROR) — pass --data with Lei's files or a Hub dataset id")
    folder = Path(source)

    def find(stem: str) -> Path | None:
        for cand in (folder / f"{stem}.txt.gz", folder / f"{stem}.txt"):
            if cand.exists():
                return cand
        return None

    lei = folder.is_dir() and any(folder.glob("reviews.aspect*.txt*"))
    return source, folder, lei, find


def load_beer(aspect: str | int, source: str | Path | None = None, *, dev_fraction: float = 0.1,
              seed: int = 0, max_len: int | None = MAX_LEN, long: str = "truncate",
              tokenization: str = "project", limit: int | None = None, bad_scores: str = "raise") -> BeerData:
    """The data of `aspect` from a folder of Lei's files (default: the mirror) or a Hub dataset.

    Folder: `reviews.aspect{k}.train.txt.gz` + `reviews.aspect{k}.heldout.txt.gz` when both exist
    (Lei's setting); otherwise the aspect's heldout file — or, failing that, `reviews.aspect0.heldout`
    (the mirror's 10,000 reviews, which carry all five ratings) — split `1 − dev_fraction` / `dev_fraction`
    with `seed`. Hub: splits `train` and `validation` (or `heldout`), and `annotations` if present.
    `limit` reads only the first lines of each review file (quick runs); `bad_scores="exclude"` leaves out
    (and counts) reviews whose ratings are not five numbers in [0, 1] instead of refusing the file."""
    k = aspect_index(aspect)
    name = RATING_NAMES[k]
    opts = ReadOptions(max_len=max_len, long=long, tokenization=tokenization, bad_scores=bad_scores)
    source, folder, lei, find = locate_beer(source)
    info: dict[str, Any] = {"aspect": name, "source": str(source), "tokenization": tokenization,
                            "max_len": max_len, "long": long}
    if lei:
        tr, he = find(f"reviews.aspect{k}.train"), find(f"reviews.aspect{k}.heldout")
        if tr is not None and he is not None:
            train, dev = read_reviews(tr, limit=limit, **opts), read_reviews(he, limit=limit, **opts)
            info["split"] = f"{tr.name} / {he.name}"
        else:
            pool_file = he or find("reviews.aspect0.heldout")
            if pool_file is None:
                raise ResourceError(f"{folder} has neither reviews.aspect{k}.heldout nor reviews.aspect0.heldout")
            pool = read_reviews(pool_file, limit=limit, **opts)
            train, dev = split_pool(pool, dev_fraction, seed)
            info["split"] = f"{pool_file.name} split {1 - dev_fraction:.2f}/{dev_fraction:.2f} (seed {seed})"
        ann_file = folder / "annotations.json"
        annotations = read_annotations(ann_file, tokenization=tokenization) if ann_file.exists() else None
    else:
        import datasets

        src = str(source)
        try:
            configs = datasets.get_dataset_config_names(src)
            rev_cfg = "reviews" if "reviews" in configs else None
            splits = set(datasets.get_dataset_split_names(src, rev_cfg))
        except Exception as exc:  # noqa: BLE001 - any failure to resolve the dataset is the user's input
            raise ResourceError(f"{src!r} is neither a folder of Lei's beer files nor a readable dataset "
                                f"({exc})") from exc
        dev_split = "validation" if "validation" in splits else "heldout" if "heldout" in splits else None
        if "train" not in splits or dev_split is None:
            raise ResourceError(f"dataset {src!r} needs splits 'train' and 'validation' "
                                f"(has: {', '.join(sorted(splits))})")
        train, dev = load_hub(src, "train", rev_cfg, **opts), load_hub(src, dev_split, rev_cfg, **opts)
        ann_opts = ReadOptions(max_len=None, long=long, tokenization=tokenization, bad_scores=bad_scores)
        if "annotations" in configs:
            ann_split = datasets.get_dataset_split_names(src, "annotations")[0]
            annotations = load_hub(src, ann_split, "annotations", **ann_opts)
        elif "annotations" in splits:
            annotations = load_hub(src, "annotations", rev_cfg, **ann_opts)
        else:
            annotations = None
        info["split"] = f"hub train / {dev_split}"
    info.update({"train": train.stats, "dev": dev.stats,
                 "annotations": None if annotations is None else annotations.stats})
    return BeerData(name, train, dev, annotations, info)
