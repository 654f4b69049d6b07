"""Blind-prior controls (issue #36, deliverable 3): per track the strongest answer that never reads the input,
built without ground truth, as a built-in control — and whether real methods beat it on the fixture boards.

* AIXI: `centre-prior`, a centred Gaussian bump built from the image's shape only.
* trust: `text-length-oracle`, a monotone score of the explained text's word count only.
* robustness: `position` (tests/test_robust_track.py, tests/test_robust_blind.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmark.contracts import Batch, OracleContext
from benchmark.submission import discover
from tests.test_trust_track import trust_home  # noqa: F401  (session fixture: a tiny trust/hatexplain-cnn)


def test_the_blind_priors_are_registered_controls():
    subs = discover()
    assert subs["centre-prior"].role == "control" and subs["centre-prior"].kind == "explainer"
    assert subs["text-length-oracle"].role == "control" and subs["text-length-oracle"].kind == "oracle"
    assert subs["position"].role == "control"


def test_centre_prior_reads_the_shape_never_the_pixels():
    from submissions.centre_prior.explainer import CentrePriorExplainer

    rng = np.random.default_rng(0)
    a, b = rng.random((3, 20, 30)).astype(np.float32), np.zeros((3, 20, 30), np.float32)
    e = CentrePriorExplainer()
    ma = e.explain(None, Batch(ids=["x", "y", "z"], inputs=a))
    mb = e.explain(None, Batch(ids=["p", "q", "r"], inputs=b))
    for x, y in zip(ma, mb):
        assert x.shape == (20, 30) and np.array_equal(x, y)  # the same map whatever the pixels
    m = ma[0]
    assert np.allclose(m, m[::-1, :]) and np.allclose(m, m[:, ::-1])  # centred
    assert m[10, 15] > m[0, 0] and m.max() <= 1.0
    with pytest.raises(ValueError):
        CentrePriorExplainer(sigma=0)


def _item(tokens, **other):
    return {"tokens": tokens, "text": " ".join(tokens), "prediction": 0, "class_name": "x", "confidence": 0.5,
            "explanation_words": [], "explanation_scores": [], **other}


def test_length_oracle_reads_only_the_word_count():
    from benchmark.toki.controls import TextLengthOracle

    o = TextLengthOracle()
    # fit reads the training texts' tokens only (no label, no rationale column needed): median 4 words
    o.fit(OracleContext(model=None, train={"tokens": [["a"] * 2, ["a"] * 4, ["a", "b", ",", "c", "d"]]}))
    assert o.median == 4.0
    docs = [["w"] * n for n in (1, 3, 4, 5, 9)]
    j = o.judge(Batch(ids=[str(i) for i in range(5)], inputs=[_item(d) for d in docs]))
    assert j["verdicts"] == [True, True, True, False, False]
    assert all(x > y for x, y in zip(j["scores"], j["scores"][1:]))  # shorter = more trustworthy
    assert j["scores"][2] == pytest.approx(0.5)
    # nothing but the length moves it: other words, another prediction, confidence, explanation, punctuation
    other = [_item(["z"] * len(d) + ["!"], prediction=1, confidence=0.99, explanation_words=["z"],
                   explanation_scores=[1.0]) for d in docs]
    assert o.judge(Batch(ids=list("abcde"), inputs=other)) == j
    longer = TextLengthOracle(direction="longer")
    longer.fit(OracleContext(model=None, train={"tokens": [["a"] * 4]}))
    assert longer.judge(Batch(ids=["0", "1"], inputs=[_item(["w"]), _item(["w"] * 9)]))["verdicts"] == [False, True]


def test_aixi_board_is_floored_by_the_best_blind_prior_and_lime_beats_it(home, tmp_path):
    """On the tiny AIXI-Shape fixture (24 validation images, the SSIN function model) the centre prior is
    better than the uniform map on KL (objects fill a 5 × 5 grid, corners less); the board's floor is its best
    built-in control — the foreground data prior, which the board needs beside it (issue #58) — and exhaustive
    LIME still beats it beyond the noise."""
    from benchmark.runner import evaluate
    from leaderboard.boards import boards

    kw = dict(track="aixi", resource="aixi/shape-ssin", model="function", results_dir=tmp_path)
    r = {n: evaluate(n, **kw) for n in ("uniform", "centre-prior", "foreground", "lime-exhaustive")}
    assert r["centre-prior"].n_failed == 0
    assert r["centre-prior"].metrics["kl"].mean < r["uniform"].metrics["kl"].mean
    (b,) = boards(r.values())
    assert b.verdict.control == "foreground" and b.verdict.best == "lime-exhaustive"
    assert b.verdict.discriminates, b.verdict.text
    (without,) = boards([r[n] for n in ("uniform", "centre-prior", "lime-exhaustive")])
    assert without.lacking == ["foreground"] and without.verdict.status == "undefined"


def test_trust_board_is_floored_by_the_better_of_random_and_length(trust_home, tmp_path):  # noqa: F811
    """On the tiny trust fixture (8 explained predictions) the length oracle judges by the word count alone
    (by hand: n ≤ the training texts' median), and the verdict compares Naive against whichever control has
    the higher AUC. (At 200 predictions, docs/trust.md, the length prior beats every oracle.)"""
    import pyarrow.parquet as pq

    from benchmark.runner import evaluate
    from benchmark.tokenize import is_word
    from leaderboard.boards import boards

    kw = dict(track="trust", resource="trust/hatexplain-cnn", results_dir=tmp_path)
    r = {n: evaluate(n, **kw) for n in ("random-oracle", "text-length-oracle", "naive-oracle")}
    assert r["text-length-oracle"].n_failed == 0
    folder = trust_home / "resources" / "trust" / "hatexplain-cnn"
    words = lambda split: [sum(map(is_word, t)) for t in pq.read_table(  # noqa: E731
        next(folder.glob(f"{split}-*.parquet")), columns=["tokens"]).column("tokens").to_pylist()]
    m = max(1.0, float(np.median(words("train"))))
    n = words("test")
    c = r["text-length-oracle"].extra["confusion"]
    assert c["tp"] + c["fp"] == sum(k <= m for k in n)  # trustworthy verdicts = the texts no longer than m
    (b,) = boards(r.values())
    auc = {k: v.metrics["trust-auc"].mean for k, v in r.items()}
    assert b.verdict.best == "naive-oracle"
    assert b.verdict.control == max(("random-oracle", "text-length-oracle"), key=lambda k: auc[k])
