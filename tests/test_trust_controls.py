"""The trust track's blind controls (issue #38): oracles that read one surface quantity — the text's
length, the explanation's size — and nothing that could carry trust; the board's verdict is against the
best of them."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark.contracts import Batch, OracleContext, judgement_parts
from benchmark.toki.controls import ExplanationSizeOracle, TextLengthOracle, explanation_size, word_count


def _batch(items):
    return Batch(ids=[str(i) for i in range(len(items))], inputs=items, seed=0)


def test_text_length_scores_shorter_texts_higher_and_reads_only_the_tokens():
    o = TextLengthOracle()
    o.fit(OracleContext(model=None, train={"tokens": [["a", "b", "c", "d"], ["a", "b", "!"], ["x"] * 10]}))
    assert o.median == 4  # word counts 4, 2, 10 (punctuation left out)
    docs = [["w"] * n for n in (1, 4, 12)]
    items = [dict(tokens=d, prediction=1, confidence=0.9, explanation_words=["w"], explanation_scores=[0.5])
             for d in docs]
    v, s = judgement_parts(o.judge(_batch(items)), 3)
    assert s == pytest.approx([0.8, 0.5, 0.25]) and v == [True, True, False]
    longer = TextLengthOracle(direction="longer")
    longer.fit(OracleContext(model=None, train={"tokens": [["a"] * 4]}))
    assert judgement_parts(longer.judge(_batch(items)), 3)[1] == pytest.approx([0.2, 0.5, 0.75])
    with pytest.raises(ValueError, match="direction"):
        TextLengthOracle(direction="sideways")
    with pytest.raises(RuntimeError):
        TextLengthOracle().judge(_batch(items))


def test_explanation_size_counts_positive_words_only():
    assert explanation_size(["a", "b", ",", "c"], [0.5, -0.1, 0.3, 0.2]) == 2  # "," is no word, "b" negative
    assert explanation_size(["w"] * 15, [1.0] * 15) == 10  # capped at top_k
    assert word_count(["it", "is", ".", "ok"]) == 3
    o = ExplanationSizeOracle()
    o.fit(OracleContext(model=None, train={"explanation_words": [["a"] * 10, ["a"] * 4, []],
                                           "explanation_scores": [[1.0] * 10, [1.0] * 4, []]}))
    assert o.median == 7  # of the explained training predictions (10 and 4); unexplained left out
    items = [dict(tokens=["x"], explanation_words=["a"] * e, explanation_scores=[1.0] * e) for e in (0, 3, 10)]
    v, s = judgement_parts(o.judge(_batch(items)), 3)
    assert s == pytest.approx([1.0, 0.7, 0.0]) and v == [True, True, False]


def test_blind_controls_cannot_see_labels_and_are_registered_as_controls():
    """Registered with role "control" (ranked never, the verdict's floor); their judgements do not change
    when the ground truth fields are added to an instance (they cannot read them: the harness never sends
    them, and the controls' output is a function of the tokens / explanation sizes alone)."""
    from benchmark.submission import discover

    subs = discover()
    for name in ("text-length-oracle", "explanation-size-oracle", "random-oracle"):
        assert subs[name].kind == "oracle" and subs[name].role == "control", name
    rng = np.random.default_rng(0)
    items = [dict(tokens=["w"] * int(rng.integers(1, 30)), prediction=1, confidence=0.9,
                  explanation_words=["w"] * int(rng.integers(0, 11)), explanation_scores=[])
             for _ in range(20)]
    for x in items:
        x["explanation_scores"] = [1.0] * len(x["explanation_words"])
    leaked = [{**x, "trust": bool(rng.random() < 0.5), "rationale": ["w"]} for x in items]
    for name in ("text-length-oracle", "explanation-size-oracle"):
        o = subs[name].instantiate()
        o.fit(OracleContext(model=None, train={"tokens": [x["tokens"] for x in items],
                                               "explanation_words": [x["explanation_words"] for x in items],
                                               "explanation_scores": [x["explanation_scores"] for x in items]}))
        assert o.judge(_batch(items)) == o.judge(_batch(leaked)), name


def test_board_reports_each_judged_class():
    """`extra.per_class` (issue #38): per predicted class the judged predictions, the trustworthy ones and the
    AUC within the class — a set that judges one class (HateXplain: only "toxic" posts carry a rationale)
    says so (`classes_judged` = 1)."""
    from benchmark.tracks import get_track
    from benchmark.isolation.worker import to_verdict

    trk = get_track("trust")
    truth = np.array([True, False, True, False, True, True])
    cls = np.array([0, 0, 0, 1, 1, 1])
    s = [0.9, 0.1, 0.8, 0.7, 0.2, 0.6]  # class 0 ranked perfectly; class 1: 0 of 2 pairs right
    scores = trk.score([to_verdict(x >= 0.5, x) for x in s], {"trust": truth, "class": cls}, range(6))
    per = trk.summary_extra(scores, np.ones(6, dtype=bool))["per_class"]
    assert per["classes_judged"] == 2
    assert per["classes"]["0"] == {"n": 3, "trustworthy": 2, "auc": 1.0}
    assert per["classes"]["1"] == {"n": 3, "trustworthy": 2, "auc": 0.0}
    one = trk.score([to_verdict(True, 0.5)] * 3, {"trust": truth[:3], "class": cls[:3]}, range(3))
    assert trk.summary_extra(one, np.ones(3, dtype=bool))["per_class"]["classes_judged"] == 1


def test_the_board_states_a_one_class_trust_set():
    """A trust set whose card names classes it does not judge (HateXplain's normal posts carry no rationale)
    says so in the model info every Result carries, and the leaderboard prints it under the board."""
    from types import SimpleNamespace

    from benchmark.tracks.trust import TrustTrack
    from leaderboard.selection import model_note

    res = SimpleNamespace(stats={"judged_classes": "toxic: 339 trustworthy / 261 not",
                                 "classes_not_judged": "non-toxic"})
    note = TrustTrack.scope_note(res)
    assert "toxic: 339" in note and "not judged: non-toxic" in note
    assert TrustTrack.scope_note(SimpleNamespace(stats={"judged_classes": "NEG: 1 / 2; POS: 3 / 4",
                                                        "classes_not_judged": "none"})) == ""
    assert TrustTrack.scope_note(SimpleNamespace(stats={})) == ""  # a card written before the count
    result = SimpleNamespace(model={"name": "cnn-sup", "note": note}, created="2026-11-26T00:00:00",
                             submission={"name": "toki-lime", "version": "1.0.0", "hash": "x"},
                             resource={"revision": "r"})
    assert model_note([result]) == note
