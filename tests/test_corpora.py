"""generators.corpora: MR, ERASER and table loaders — counts, split protocol, alignment, bad input.

Tests marked by the `mr_dir` / `eraser` fixtures read the shared data mirror and skip when it is absent;
everything else builds its own tiny files.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmark.errors import RegistryError, ResourceError
from benchmark.tokenize import tokenize
from generators.corpora import (
    CORPORA,
    load_corpus,
    load_eraser,
    load_mr,
    load_text_table,
    seeded_split,
    split_sizes,
)
from generators.corpora.model import Document
from generators.corpora.mr import mr_text
from tests.conftest import mirror_dir_or_skip

# ---------------------------------------------------------------------------------------------------
# fixtures and helpers
# ---------------------------------------------------------------------------------------------------




@pytest.fixture(scope="module")
def mr_dir():
    return mirror_dir_or_skip("rt_polarity")


@pytest.fixture(scope="module")
def mr(mr_dir):
    return load_mr("local", path=mr_dir)


@pytest.fixture(scope="module")
def eraser():
    return load_eraser(mirror_dir_or_skip("eraser_movies"), ("train", "val"))


def _key(corpus):
    """Everything but `meta` (which says where a document came from) per split, in order."""
    return {s: [(d.id, d.tokens, d.label, d.text) for d in docs] for s, docs in corpus.splits.items()}


def _write_mr(folder, pos: list[bytes], neg: list[bytes]):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rt-polarity.pos").write_bytes(b"".join(line + b" \n" for line in pos))
    (folder / "rt-polarity.neg").write_bytes(b"".join(line + b" \n" for line in neg))
    return folder


def _write_hub(folder, splits: dict[str, tuple[list[str], list]]):
    """A Hugging Face-style dataset folder: data/<split>-00000-of-00001.parquet with text/label."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    for split, (texts, labels) in splits.items():
        table = pa.table({"text": pa.array(texts, pa.string()), "label": pa.array(labels)})
        pq.write_table(table, folder / "data" / f"{split}-00000-of-00001.parquet")
    return folder


TINY_POS = [b"a gripping , moving film", b"funny and warm \x97 a delight", b"", b"great acting ."]
TINY_NEG = [b"dull , dull , dull", b"the plot makes no sense", b"a mess \x85", b"boring ."]


# ---------------------------------------------------------------------------------------------------
# split protocol
# ---------------------------------------------------------------------------------------------------


def test_split_sizes_rounding_rule():
    # floor for every split but the last, which takes the rest
    assert split_sizes(10_662, (0.6, 0.2, 0.2)) == [6_397, 2_132, 2_133]
    assert split_sizes(10, (0.6, 0.2, 0.2)) == [6, 2, 2]
    assert split_sizes(7, (0.6, 0.2, 0.2)) == [4, 1, 2]
    assert split_sizes(100, (0.7, 0.3)) == [70, 30]  # 0.7*100 = 70.00000000000001 and 0.3*100 = 30.000…4


def test_seeded_split_ignores_input_order():
    docs = [Document(f"d{i}", tokenize(f"text number {i}"), i % 2, f"text number {i}") for i in range(50)]
    a = seeded_split(docs, seed=3)
    b = seeded_split(list(reversed(docs)), seed=3)
    assert {k: [d.id for d in v] for k, v in a.items()} == {k: [d.id for d in v] for k, v in b.items()}
    assert [len(v) for v in a.values()] == [30, 10, 10]
    c = seeded_split(docs, seed=4)
    assert [d.id for d in c["train"]] != [d.id for d in a["train"]]
    with pytest.raises(ResourceError, match="sum to 1"):
        seeded_split(docs, fractions=(0.5, 0.2, 0.2))
    with pytest.raises(ResourceError, match="one fraction per split"):
        seeded_split(docs, fractions=(0.5, 0.5))


# ---------------------------------------------------------------------------------------------------
# MR
# ---------------------------------------------------------------------------------------------------


def test_mr_counts_and_splits(mr):
    assert mr.classes == ["neg", "pos"]
    assert mr.stats["per_class"] == {"neg": 5_331, "pos": 5_331}
    assert mr.stats["lines"] == {"neg": 5_331, "pos": 5_331}
    assert mr.stats["excluded_empty"] == 0
    assert mr.sizes == {"train": 6_397, "validation": 2_132, "test": 2_133}
    ids = [d.id for d in mr.documents()]
    assert len(set(ids)) == 10_662  # disjoint splits, unique ids
    # first line of rt-polarity.pos, found through its provenance
    first = next(d for d in mr.documents() if d.meta == {"file": "rt-polarity.pos", "line": 1})
    assert first.label == 1 and first.id.startswith("mr-pos-")
    assert first.tokens[:5] == ["the", "rock", "is", "destined", "to"]
    assert first.tokens[7:12] == ["21st", "century's", "new", '"', "conan"]


def test_mr_cp1252_punctuation_is_restored(mr):
    # Latin-1 leaves byte 0x97 as the control character U+0097; the protocol restores the em dash
    doc = next(d for d in mr.documents() if d.text.startswith("singer/composer bryan adams"))
    assert "—" in doc.text and "\x97" not in doc.text
    assert doc.tokens[7:10] == ["songs", "—", "a"]
    assert mr.stats["c1_repaired"] == 46
    assert not any(ch in t for d in mr.documents() for t in d.tokens for ch in "\x85\x91\x92\x96\x97")


def test_mr_seeded(mr, mr_dir):
    # same seed -> same splits is checked by test_mr_split_does_not_depend_on_file_order (a fresh load)
    other = load_mr("local", path=mr_dir, seed=1)
    assert other.sizes == mr.sizes
    assert [d.id for d in other["test"]] != [d.id for d in mr["test"]]
    assert {d.id for d in other.documents()} == {d.id for d in mr.documents()}


def test_mr_split_does_not_depend_on_file_order(mr, mr_dir, tmp_path):
    for name in ("rt-polarity.pos", "rt-polarity.neg"):
        lines = (mr_dir / name).read_bytes().split(b"\n")[:-1]
        (tmp_path / name).write_bytes(b"".join(line + b"\n" for line in reversed(lines)))
    assert _key(load_mr("local", path=tmp_path)) == _key(mr)


def test_mr_hub_route_equals_local_route_on_real_data(mr, mr_dir, tmp_path):
    """The Hub builder's own layout (80/10/10 by file position, latin-1, stripped), re-split by us."""
    pos = [t.strip() for t in (mr_dir / "rt-polarity.pos").read_text(encoding="latin-1").split("\n")[:-1]]
    neg = [t.strip() for t in (mr_dir / "rt-polarity.neg").read_text(encoding="latin-1").split("\n")[:-1]]
    i1, i2 = int(len(pos) * 0.8 + 0.5), int(len(pos) * 0.9 + 0.5)
    hub = _write_hub(
        tmp_path / "rotten_tomatoes",
        {
            "train": (pos[:i1] + neg[:i1], [1] * i1 + [0] * i1),
            "validation": (pos[i1:i2] + neg[i1:i2], [1] * (i2 - i1) + [0] * (i2 - i1)),
            "test": (pos[i2:] + neg[i2:], [1] * (len(pos) - i2) + [0] * (len(neg) - i2)),
        },
    )
    via_hub = load_mr("hub", hub_id=str(hub), cache_dir=tmp_path / "hf-cache")
    assert via_hub.stats["rows"] == {"test": 1_066, "train": 8_530, "validation": 1_066}
    assert _key(via_hub) == _key(mr)


def test_mr_hub_route_equals_local_route_tiny(tmp_path):
    local = load_mr("local", path=_write_mr(tmp_path / "mr", TINY_POS, TINY_NEG), fractions=(0.5, 0.25, 0.25))
    pos = [b.decode("latin-1") for b in TINY_POS]
    neg = [b.decode("latin-1") for b in TINY_NEG]
    hub = _write_hub(
        tmp_path / "hub",
        {"train": (neg[::-1] + pos[:2], ["neg"] * 4 + ["pos"] * 2), "test": (pos[2:], ["positive"] * 2)},
    )
    via_hub = load_mr("hub", hub_id=str(hub), fractions=(0.5, 0.25, 0.25), cache_dir=tmp_path / "c")
    assert _key(via_hub) == _key(local)
    assert local.stats["excluded_empty"] == via_hub.stats["excluded_empty"] == 1  # the blank line
    assert local.stats["excluded_empty_where"] == [{"file": "rt-polarity.pos", "line": 3}]
    assert local.sizes == {"train": 3, "validation": 1, "test": 3}
    dash = next(d for d in local.documents() if "warm" in d.tokens)
    assert dash.tokens == ["funny", "and", "warm", "—", "a", "delight"]
    assert mr_text("a mess \x85 ") == "a mess"  # stripped first (as the Hub builder does)


# ---------------------------------------------------------------------------------------------------
# ERASER
# ---------------------------------------------------------------------------------------------------


def test_eraser_movies_counts(eraser):
    assert eraser.classes == ["NEG", "POS"]
    assert eraser.sizes == {"train": 1_600, "val": 200}
    tr, va = eraser.stats["splits"]["train"], eraser.stats["splits"]["val"]
    assert tr["per_class"] == {"NEG": 800, "POS": 800} and va["per_class"] == {"NEG": 100, "POS": 100}
    assert (tr["source_tokens"], tr["tokens"], tr["rationale_tokens"]) == (1_237_262, 1_257_244, 108_315)
    assert (va["source_tokens"], va["tokens"], va["rationale_tokens"]) == (152_291, 154_736, 10_071)
    assert (tr["evidence_spans"], va["evidence_spans"]) == (13_878, 1_517)
    assert eraser.stats["spans_out_of_range"] == eraser.stats["spans_text_mismatch"] == 0
    assert eraser.stats["excluded_empty"] == 0


def test_eraser_known_evidence_span(eraser):
    doc = next(d for d in eraser["train"] if d.id == "negR_000.txt")
    assert doc.label == 0
    assert (63, 67) in doc.evidence  # "mind - fuck movie" in train.jsonl
    ws = doc.text.split()
    assert ws[63:67] == ["mind", "-", "fuck", "movie"]
    inside = (doc.token_source >= 63) & (doc.token_source < 67)
    assert [t for t, k in zip(doc.tokens, inside) if k] == ["mind", "-", "fuck", "movie"]
    assert doc.rationale[inside].all()
    assert not doc.rationale[doc.token_source == 62].any()  # the token before the span ("critique :" …)


def test_eraser_flags_follow_their_source_tokens(eraser):
    for doc in eraser["val"]:
        ws = doc.text.split()
        covered = np.zeros(len(ws), dtype=bool)
        for s, e in doc.evidence:
            covered[s:e] = True
        assert np.array_equal(doc.rationale, covered[doc.token_source])
        assert doc.tokens == [t for w in ws for t in tokenize(w)]
    # a source token that becomes several tokens: "'s" -> "'", "s", both with the same flag
    doc = eraser["val"][0]
    i = next(k for k, w in enumerate(doc.text.split()) if len(tokenize(w)) > 1)
    idx = np.flatnonzero(doc.token_source == i)
    assert len(idx) == len(tokenize(doc.text.split()[i])) > 1
    assert len(set(doc.rationale[idx])) == 1


def _write_eraser(folder, annotations, docs, docs_as="gz"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.jsonl").write_text("".join(json.dumps(a) + "\n" for a in annotations))
    if docs_as == "gz":
        with gzip.open(folder / "docs.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"docid": k, "text": v}) + "\n" for k, v in docs.items())
    else:
        (folder / "docs").mkdir()
        for k, v in docs.items():
            (folder / "docs" / k).write_text(v, encoding="utf-8")
    return folder


def _ann(docid, cls, spans):
    return {
        "annotation_id": docid,
        "classification": cls,
        "evidences": [[{"docid": docid, "start_token": s, "end_token": e, "text": t}] for s, e, t in spans],
    }


TINY_DOCS = {"a.txt": "it 's 'who cares , really .\nbad film .", "b.txt": "a fine film !", "c.txt": " \n "}
TINY_ANNS = [
    _ann("a.txt", "NEG", [(1, 3, "'s 'who"), (7, 8, "bad"), (7, 12, "out of range")]),
    _ann("b.txt", "POS", [(1, 2, "great")]),  # text does not match the offsets: kept, counted
    _ann("c.txt", "POS", []),  # no tokens at all: excluded, counted
]


@pytest.mark.parametrize("docs_as", ["gz", "folder"])
def test_eraser_tiny_alignment_and_counts(tmp_path, docs_as):
    corpus = load_eraser(_write_eraser(tmp_path / "e", TINY_ANNS, TINY_DOCS, docs_as), "train")
    a, b = corpus["train"]
    assert a.tokens == ["it", "'", "s", "'", "who", "cares", ",", "really", ".", "bad", "film", "."]
    assert a.rationale.tolist() == [False, True, True, True, True] + [False] * 4 + [True, False, False]
    assert a.token_source.tolist() == [0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9]
    assert a.evidence == [(1, 3), (7, 8)]
    assert b.rationale.tolist() == [False, True, False, False] and b.label == 1
    st = corpus.stats["splits"]["train"]
    assert (st["spans_out_of_range"], st["spans_text_mismatch"], st["excluded_empty"]) == (1, 1, 1)
    assert (st["documents"], st["tokens"], st["rationale_tokens"]) == (2, 16, 6)
    with pytest.raises(ResourceError, match="outside its 10 tokens"):
        load_eraser(tmp_path / "e", "train", on_bad_span="error")


def test_eraser_bad_input(tmp_path):
    with pytest.raises(ResourceError, match="unknown classification 'MAYBE'"):
        load_eraser(_write_eraser(tmp_path / "l", [_ann("b.txt", "MAYBE", [])], TINY_DOCS), "train")
    with pytest.raises(ResourceError, match="split file .*val.jsonl is missing"):
        load_eraser(tmp_path / "l", "val")
    with pytest.raises(ResourceError, match="no text"):
        load_eraser(_write_eraser(tmp_path / "m", [_ann("zz.txt", "POS", [])], TINY_DOCS), "train")
    with pytest.raises(ResourceError, match=r"class\(es\) \['NEG'\] have no non-empty documents"):
        load_eraser(_write_eraser(tmp_path / "n", [_ann("b.txt", "POS", [])], TINY_DOCS), "train")
    folder = _write_eraser(tmp_path / "j", TINY_ANNS, TINY_DOCS)
    (folder / "train.jsonl").write_text('{"annotation_id": "a.txt", \n')
    with pytest.raises(ResourceError, match="line 1 is not valid JSON"):
        load_eraser(folder, "train")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "train.jsonl").write_text("")
    with pytest.raises(ResourceError, match="no document texts"):
        load_eraser(tmp_path / "empty", "train")


# ---------------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------------

ROWS = [
    {"text": "A great film!", "label": "positive", "split": "train"},
    {"text": "Dull, dull, dull.", "label": "negative", "split": "train"},
    {"text": "", "label": "positive", "split": "test"},
    {"text": "It is fine, I guess", "label": "neutral", "split": "test"},
    {"text": 'Worst "movie" ever', "label": "negative", "split": "validation"},
]


def _write_table(path, rows, fmt):
    if fmt == "csv":
        import csv

        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("ext", ["csv", "jsonl", "parquet"])
def test_tables_all_formats(tmp_path, ext):
    corpus = load_text_table(_write_table(tmp_path / f"reviews.{ext}", ROWS, ext), split_column="split")
    assert corpus.classes == ["negative", "neutral", "positive"]
    assert corpus.stats["label_map"] == {"negative": 0, "neutral": 1, "positive": 2}
    assert corpus.stats["excluded_empty"] == 1 and corpus.stats["excluded_empty_ids"] == ["reviews-000002"]
    assert list(corpus.splits) == ["train", "validation", "test"]
    assert _key(corpus) == {
        "train": [
            ("reviews-000000", ["a", "great", "film", "!"], 2, "A great film!"),
            ("reviews-000001", ["dull", ",", "dull", ",", "dull", "."], 0, "Dull, dull, dull."),
        ],
        "validation": [("reviews-000004", ["worst", '"', "movie", '"', "ever"], 0, 'Worst "movie" ever')],
        "test": [("reviews-000003", ["it", "is", "fine", ",", "i", "guess"], 1, "It is fine, I guess")],
    }


@pytest.mark.parametrize("ext", ["csv", "jsonl", "parquet"])
def test_tables_int_labels_and_seeded_resplit(tmp_path, ext):
    rows = [
        {"review": f"review number {i} says {'good' if i % 3 else 'bad'}", "stars": [1, 2, 10][i % 3]}
        for i in range(20)
    ]
    path = _write_table(tmp_path / f"t.{ext}", rows, ext)
    corpus = load_text_table(path, text_column="review", label_column="stars", seed=5)
    assert corpus.classes == ["1", "2", "10"]  # sorted as numbers, not as strings
    assert corpus.stats["label_kind"] == "int"
    assert corpus.sizes == {"train": 12, "validation": 4, "test": 4}
    doc = next(d for d in corpus.documents() if d.id == "t-000002")
    assert doc.label == 2 and doc.tokens == ["review", "number", "2", "says", "good"]
    assert _key(load_text_table(path, "review", "stars", seed=5)) == _key(corpus)
    assert _key(load_text_table(path, "review", "stars", seed=6)) != _key(corpus)


def test_tables_bad_input(tmp_path):
    good = _write_table(tmp_path / "g.jsonl", ROWS, "jsonl")
    with pytest.raises(ResourceError, match="does not exist"):
        load_text_table(tmp_path / "nope.csv")
    with pytest.raises(ResourceError, match=r"no column\(s\) \['body'\]"):
        load_text_table(good, text_column="body")
    with pytest.raises(ResourceError, match="unknown label 'neutral'"):
        load_text_table(good, classes=["negative", "positive"], split_column="split")
    with pytest.raises(ResourceError, match=r"class\(es\) \['mixed'\] have no non-empty documents"):
        load_text_table(good, classes=["negative", "neutral", "positive", "mixed"], split_column="split")
    # every 'positive' row but one is empty; make that one empty too -> the class has no documents
    rows = [dict(r, text="") if r["label"] == "positive" else r for r in ROWS]
    with pytest.raises(ResourceError, match=r"\['positive'\] have no non-empty documents"):
        load_text_table(_write_table(tmp_path / "e.csv", rows, "csv"), split_column="split")
    with pytest.raises(ResourceError, match="single label"):
        load_text_table(_write_table(tmp_path / "one.csv", [{"text": "x", "label": "a"}] * 3, "csv"))
    (tmp_path / "l1.csv").write_bytes("text,label\ncaf\xe9 au lait,a\nthe end,b\n".encode("latin-1"))
    with pytest.raises(ResourceError, match="cannot be decoded as utf-8.*encoding='latin-1'"):
        load_text_table(tmp_path / "l1.csv")
    ok = load_text_table(
        tmp_path / "l1.csv", encoding="latin-1", fractions=(0.5, 0.5), split_names=("a", "b")
    )
    assert ok.sizes == {"a": 1, "b": 1}
    assert any(d.tokens == ["café", "au", "lait"] for d in ok.documents())
    with pytest.raises(ResourceError, match="has no label"):
        load_text_table(_write_table(tmp_path / "n.jsonl", [{"text": "x", "label": None}], "jsonl"))
    with pytest.raises(ResourceError, match="cannot tell the format"):
        load_text_table(_write_table(tmp_path / "t.txt", ROWS, "jsonl"))
    assert load_text_table(tmp_path / "t.txt", format="jsonl", split_column="split").sizes["train"] == 2
    (tmp_path / "bad.jsonl").write_text('{"text": "a", "label": 1}\n{"text": \n')
    with pytest.raises(ResourceError, match="line 2 is not valid JSON"):
        load_text_table(tmp_path / "bad.jsonl")


# ---------------------------------------------------------------------------------------------------
# MR bad input, registry
# ---------------------------------------------------------------------------------------------------


def test_mr_bad_input(tmp_path, monkeypatch):
    with pytest.raises(ResourceError, match="needs `path`"):
        load_mr("local")
    with pytest.raises(ResourceError, match="unknown MR source"):
        load_mr("ftp")
    folder = _write_mr(tmp_path / "a", TINY_POS, TINY_NEG)
    (folder / "rt-polarity.neg").unlink()
    with pytest.raises(ResourceError, match="rt-polarity.neg is missing"):
        load_mr("local", path=folder)
    folder = _write_mr(tmp_path / "b", TINY_POS, [])
    with pytest.raises(ResourceError, match=r"class\(es\) \['neg'\] have no non-empty documents"):
        load_mr("local", path=folder)
    folder = _write_mr(tmp_path / "c", [b"a fine film"], [b"dull"])
    (folder / "rt-polarity.neg").write_text("dull film\n", encoding="utf-16")
    with pytest.raises(ResourceError, match="NUL bytes"):
        load_mr("local", path=folder)
    (folder / "rt-polarity.neg").write_text("a café of a film\n", encoding="utf-8")
    with pytest.raises(ResourceError, match="is UTF-8 text.*encoding='utf-8'"):
        load_mr("local", path=folder)
    assert load_mr("local", path=folder, encoding="utf-8", fractions=(0.5, 0.5), split_names=("x", "y"))
    hub = _write_hub(tmp_path / "hub", {"train": (["good", "bad", "meh"], [1, 0, 2])})
    with pytest.raises(ResourceError, match="has label 2"):
        load_mr("hub", hub_id=str(hub), cache_dir=tmp_path / "hc")
    with pytest.raises(ResourceError, match="could not load the MR dataset"):
        load_mr("hub", hub_id=str(tmp_path / "missing-dataset"), cache_dir=tmp_path / "hc")
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "no-mirror"))
    with pytest.raises(ResourceError, match="XAIBENCH_DATA_MIRROR"):
        load_mr("mirror")
    with pytest.raises(ResourceError, match="XAIBENCH_DATA_MIRROR"):
        load_eraser()


def test_registry(tmp_path):
    assert {"mr", "eraser-movies", "table"} <= set(CORPORA.names())
    path = _write_table(tmp_path / "r.parquet", ROWS, "parquet")
    corpus = load_corpus("table", path=path, split_column="split")
    assert corpus.name == "r" and len(corpus) == 4
    with pytest.raises(RegistryError, match="unknown corpus 'imdb'"):
        load_corpus("imdb")
