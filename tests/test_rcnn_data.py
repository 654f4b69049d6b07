"""BeerAdvocate loaders (generators/rcnn/data.py) and word vectors (generators/rcnn/vectors.py)."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmark.errors import ResourceError
from benchmark.tokenize import tokenize
from generators.rcnn.data import (
    aspect_index,
    load_beer,
    load_hub,
    mirror_dir,
    read_annotations,
    read_reviews,
    split_pool,
)
from generators.rcnn.vectors import read_vectors, train_word2vec

MIRROR = mirror_dir()
needs_mirror = pytest.mark.skipif(
    MIRROR is None or not (MIRROR / "reviews.aspect0.heldout.txt.gz").exists(),
    reason="data mirror beer_advocate_lei2016/ absent (set XAIBENCH_DATA_MIRROR to the shared data folder)")


def write_reviews(path, lines: list[str]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


GOOD = [
    "0.80 0.70 0.60 0.90 0.60\tpours a clear amber , nice head .",
    "0.20 0.30 0.40 0.50 0.60\tmurky brown , no head",
]


# -- the mirror files -----------------------------------------------------------------------------


@needs_mirror
def test_mirror_review_file_as_documented():
    lei = read_reviews(MIRROR / "reviews.aspect0.heldout.txt.gz", tokenization="lei", max_len=None)
    assert len(lei) == 10_000 and lei.stats["empty"] == 0
    assert lei.scores.shape == (10_000, 5)
    # SOURCE.md: distribution of the appearance score
    dist = Counter(np.round(lei.target("appearance").astype(np.float64), 1).tolist())
    assert dist == {0.2: 348, 0.3: 439, 0.4: 1316, 0.5: 1269, 0.6: 1638, 0.7: 135, 0.8: 921, 0.9: 1532, 1.0: 2402}
    # Lei's max_len = 256 truncates 1,026 reviews (1,113 in project tokens)
    assert read_reviews(MIRROR / "reviews.aspect0.heldout.txt.gz", tokenization="lei").stats["truncated"] == 1026
    proj = read_reviews(MIRROR / "reviews.aspect0.heldout.txt.gz", max_len=None)
    # tokenize() is NOT the identity on Lei's tokens (hence the re-tokenisation) …
    differ = sum(a != b for a, b in zip(lei.tokens, proj.tokens))
    assert differ == 6887
    # … but it never merges two Lei tokens: re-tokenising token by token = tokenising the joined text
    for a, b in zip(lei.tokens[:500], proj.tokens[:500]):
        assert b == tokenize(" ".join(a))


@needs_mirror
def test_mirror_annotations_and_span_mapping():
    lei = read_annotations(MIRROR / "annotations.json", tokenization="lei")
    proj = read_annotations(MIRROR / "annotations.json")
    assert len(lei) == len(proj) == 994 and lei.stats["truncated"] == 0
    # SOURCE.md: non-empty rationales per aspect (0 appearance 960, 1 aroma 922, 2 palate 828)
    assert [sum(bool(r.get(a)) for r in lei.rationales) for a in range(3)] == [960, 922, 828]
    # a re-mapped span covers exactly the project tokens of the Lei tokens it covered
    for a in range(3):
        for x_lei, r_lei, x_proj, r_proj in zip(lei.tokens, lei.rationales, proj.tokens, proj.rationales):
            inside_lei = [t for s, e in r_lei.get(a, []) for w in x_lei[s:e] for t in tokenize(w)]
            inside_proj = [t for s, e in r_proj.get(a, []) for t in x_proj[s:e]]
            assert inside_lei == inside_proj
    masks = proj.rationale_masks("appearance")
    assert 0.15 < np.mean([m.mean() for m in masks]) < 0.22


@needs_mirror
def test_load_beer_from_the_mirror_splits_the_pool():
    d = load_beer("appearance", limit=1000)
    assert (len(d.train), len(d.dev)) == (900, 100) and not set(d.train.ids) & set(d.dev.ids)
    assert len(d.annotations) == 994 and "split 0.90/0.10" in d.info["split"]
    assert d.train.target("appearance").min() >= 0.0 and d.train.target(0).max() <= 1.0
    again = load_beer(0, limit=1000)
    assert again.dev.ids == d.dev.ids  # seeded


# -- bad input ------------------------------------------------------------------------------------


def test_lines_without_tokens_are_skipped_and_counted(tmp_path):
    f = tmp_path / "r.txt.gz"
    write_reviews(f, [GOOD[0], "0.1 0.2 0.3 0.4 0.5\t", "0.1 0.2 0.3 0.4 0.5", "", GOOD[1]])
    r = read_reviews(f)
    assert len(r) == 2 and r.stats["empty"] == 3 and r.stats["records"] == 5
    assert r.ids == ["r.txt.gz:1", "r.txt.gz:5"]
    np.testing.assert_allclose(r.scores[1], [0.2, 0.3, 0.4, 0.5, 0.6])
    assert r.tokens[0] == ["pours", "a", "clear", "amber", ",", "nice", "head", "."]


@pytest.mark.parametrize("head, match", [
    ("0.8 0.7 1.6 0.9 0.6", "outside \\[0, 1\\]"),
    ("4.0 3.5 3.0 4.5 3.0", "outside \\[0, 1\\]"),
    ("-0.1 0.7 0.6 0.9 0.6", "outside \\[0, 1\\]"),
    ("0.8 0.7 nan 0.9 0.6", "outside \\[0, 1\\]"),
    ("0.8 0.7 0.6", "3 ratings, expected 5"),
    ("0.8 good 0.6 0.9 0.6", "not numbers"),
])
def test_bad_ratings_raise_with_the_line(tmp_path, head, match):
    f = tmp_path / "bad.txt"
    f.write_text(GOOD[0] + "\n" + head + "\tsome tokens here\n")
    with pytest.raises(ResourceError, match=match) as err:
        read_reviews(f)
    assert "bad.txt:2" in str(err.value)


def test_unknown_aspect_lists_the_valid_ones():
    names = ("appearance", "aroma", "palate", "look", "smell", 2, "1")
    assert [aspect_index(a) for a in names] == [0, 1, 2, 0, 1, 2, 1]
    for bad in ("taste", "colour", 5, -1, True):
        with pytest.raises(ResourceError, match=r"valid aspects: appearance \(0\), aroma \(1\), palate \(2\)"):
            aspect_index(bad)
    r = read_reviews_from(GOOD)
    with pytest.raises(ResourceError, match="unknown aspect"):
        r.target("overall")


def read_reviews_from(lines, tmp=None, **kw):
    import tempfile
    from pathlib import Path

    d = Path(tmp or tempfile.mkdtemp())
    write_reviews(d / "x.txt.gz", lines)
    return read_reviews(d / "x.txt.gz", **kw)


def test_long_reviews_truncated_or_excluded(tmp_path):
    lines = [GOOD[0], "0.5 0.5 0.5 0.5 0.5\t" + " ".join(f"t{i}" for i in range(10)), GOOD[1]]
    t = read_reviews_from(lines, tmp_path, max_len=6)
    assert [len(x) for x in t.tokens] == [6, 6, 5] and t.stats["truncated"] == 2 and t.stats["excluded_long"] == 0
    assert t.tokens[1] == [f"t{i}" for i in range(6)]  # the first max_len tokens (Lei)
    e = read_reviews_from(lines, tmp_path, max_len=6, long="exclude")
    assert len(e) == 1 and e.stats["excluded_long"] == 2 and e.stats["truncated"] == 0
    assert len(read_reviews_from(lines, tmp_path, max_len=None)) == 3
    with pytest.raises(ValueError, match="long must be one of"):
        read_reviews_from(lines, tmp_path, long="drop")
    with pytest.raises(ValueError, match="tokenization"):
        read_reviews_from(lines, tmp_path, tokenization="spacy")


def test_annotations_spans_checked_and_remapped(tmp_path):
    ok = {"x": ["it", "'s", "amber", "...", "nice"], "y": [0.8, 0.6, 0.6, 0.8, 0.7],
          "0": [[0, 3]], "1": [[3, 5]], "2": [], "rid": "a1"}
    f = tmp_path / "annotations.json"
    f.write_text(json.dumps(ok) + "\n")
    lei = read_annotations(f, tokenization="lei")
    proj = read_annotations(f)
    assert lei.rationales[0] == {0: [(0, 3)], 1: [(3, 5)], 2: [], 3: [], 4: []}
    # project tokens: it ' s amber . . . nice → Lei span [0, 3) = it 's amber → [0, 4); [3, 5) → [4, 8)
    assert proj.tokens[0] == ["it", "'", "s", "amber", ".", ".", ".", "nice"]
    assert proj.rationales[0][0] == [(0, 4)] and proj.rationales[0][1] == [(4, 8)]
    assert proj.rationale_masks("aroma")[0].tolist() == [False] * 4 + [True] * 4
    # truncation clips spans
    short = read_annotations(f, max_len=5)
    assert short.rationales[0][1] == [(4, 5)]
    for bad, match in ((dict(ok, **{"0": [[2, 9]]}), "outside the review"), (dict(ok, **{"0": [[1]]}), "span"),
                       (dict(ok, y=[0.8, 2.0, 0.6, 0.8, 0.7]), "outside \\[0, 1\\]")):
        f.write_text(json.dumps(bad) + "\n")
        with pytest.raises(ResourceError, match=match):
            read_annotations(f)
    f.write_text("{not json\n")
    with pytest.raises(ResourceError, match="annotations.json:1"):
        read_annotations(f)
    with pytest.raises(ResourceError, match="does not exist"):
        read_annotations(tmp_path / "missing.json")


# -- the Hub (Parquet) path ---------------------------------------------------------------------------


HUB_CARD = """---
configs:
- config_name: reviews
  default: true
  data_files:
  - split: train
    path: reviews/train-*.parquet
  - split: validation
    path: reviews/validation-*.parquet
- config_name: annotations
  data_files:
  - split: test
    path: annotations/test-*.parquet
---
# BeerAdvocate (Lei et al. 2016) in Parquet
"""


def hub_dir(tmp_path):
    """A dataset folder in Hub layout: config `reviews` (train / validation) and config `annotations`."""
    root = tmp_path / "beer-hub"
    (root / "reviews").mkdir(parents=True)
    (root / "annotations").mkdir()
    (root / "README.md").write_text(HUB_CARD)
    rows = {"train": [(f"t{i}", f"pours a clear amber head {i} ...", [0.1 * (i % 10), 0.5, 0.5, 0.5, 0.5])
                      for i in range(20)],
            "validation": [("v0", "murky brown", [0.2, 0.3, 0.4, 0.5, 0.6]), ("v1", "", [0.2, 0.3, 0.4, 0.5, 0.6])]}
    for split, data in rows.items():
        table = pa.table({"id": [r[0] for r in data], "text": [r[1] for r in data],
                          "scores": pa.array([r[2] for r in data], pa.list_(pa.float32()))})
        pq.write_table(table, root / "reviews" / f"{split}-00000-of-00001.parquet")
    ann = pa.table({"id": ["a0"], "tokens": [["it", "'s", "amber", "...", "nice"]],
                    "scores": [[0.8, 0.6, 0.6, 0.8, 0.7]],
                    "rationale_appearance": pa.array([[[0, 3]]], pa.list_(pa.list_(pa.int32()))),
                    "rationale_aroma": pa.array([[[3, 5]]], pa.list_(pa.list_(pa.int32())))})
    pq.write_table(ann, root / "annotations" / "test-00000-of-00001.parquet")
    return root


def test_hub_parquet_dataset_offline(tmp_path):
    root = hub_dir(tmp_path)
    tr = load_hub(str(root), "train")
    assert len(tr) == 20 and tr.ids[0] == "t0" and tr.tokens[0][-3:] == [".", ".", "."]
    assert tr.rationales is None
    dev = load_hub(str(root), "validation", "reviews")
    assert len(dev) == 1 and dev.stats["empty"] == 1
    ann = load_hub(str(root), "test", "annotations", max_len=None)
    assert ann.rationales[0][0] == [(0, 4)] and ann.rationales[0][1] == [(4, 8)]
    d = load_beer("appearance", root)
    assert (len(d.train), len(d.dev), len(d.annotations)) == (20, 1, 1) and d.info["split"] == "hub train / validation"
    with pytest.raises(ResourceError, match="split"):
        load_hub(str(root), "test")
    # the same checks as for files: a rating outside [0, 1] is refused
    bad = tmp_path / "bad-hub" / "data"
    bad.mkdir(parents=True)
    pq.write_table(pa.table({"text": ["a b"], "scores": [[0.5, 0.5, 5.0, 0.5, 0.5]]}),
                   bad / "train-00000-of-00001.parquet")
    with pytest.raises(ResourceError, match="outside"):
        load_hub(str(bad.parent), "train")


def test_split_pool_seeded_and_disjoint():
    r = read_reviews_from([GOOD[i % 2] for i in range(50)])
    a, b = split_pool(r, 0.2, seed=3)
    assert (len(a), len(b)) == (40, 10) and not set(a.ids) & set(b.ids)
    assert split_pool(r, 0.2, seed=3)[1].ids == b.ids and split_pool(r, 0.2, seed=4)[1].ids != b.ids


# -- word vectors -------------------------------------------------------------------------------------


def test_read_lei_vectors(tmp_path):
    f = tmp_path / "vec.txt.gz"
    with gzip.open(f, "wt") as fh:
        fh.write("amber 0.1 0.2 0.3\nhead -1 0 1\n<unk> 0 0 0\namber 9 9 9\n")
    v = read_vectors(f)
    assert v.words == ["amber", "head"] and v.dim == 3
    vocab, matrix = v.vocab_and_matrix()
    assert vocab[:2] == ["<pad>", "<unk>"] and matrix.shape == (4, 3) and not matrix[:2].any()
    np.testing.assert_allclose(matrix[2], [0.1, 0.2, 0.3])
    assert v.coverage([["amber", "x"], ["head"]]) == pytest.approx(2 / 3)
    g = tmp_path / "bad.txt"
    g.write_text("amber 0.1 0.2 0.3\nhead 1 2\n")
    with pytest.raises(ResourceError, match="2 values for 'head', expected 3"):
        read_vectors(g)
    with pytest.raises(ResourceError, match="does not exist"):
        read_vectors(tmp_path / "none.txt")


def test_word2vec_is_deterministic():
    pytest.importorskip("gensim", reason="gensim is not installed (word2vec needs it)")
    docs = [["pours", "amber", "head", "nice"], ["murky", "brown", "head"], ["amber", "head", "lacing"]] * 20
    a = train_word2vec(docs, dim=16, epochs=2, min_count=1)
    b = train_word2vec(docs, dim=16, epochs=2, min_count=1)
    assert a.words == b.words and "head" in a.words and a.dim == 16
    np.testing.assert_array_equal(a.vectors, b.vectors)
