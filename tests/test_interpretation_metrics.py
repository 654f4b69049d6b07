"""IDC interpretation metrics (benchmark/metrics/interpretation.py) on hand-computed cases and against
scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, precision_score, recall_score

from benchmark.metrics import METRICS
from benchmark.metrics import interpretation as im
from benchmark.metrics.interpretation import (
    average_relative_drop,
    batch_counts,
    binarise_scores,
    document_counts,
    label_counts,
    macro,
    macro_values,
    method_labels,
    pooled,
    pooled_summary,
    prk,
    relative_conf,
    select_features,
    set_level_counts,
    token_agreement,
    type_scores,
)

# hand-checked tables [tp, fp, fn, tn]
A = [3, 1, 2, 4]  # P = 3/4, R = 3/5, p_o = .7, p_e = (4·5 + 6·5)/100 = .5 -> κ = .2/.5 = .4
B = [0, 2, 3, 5]  # P = R = 0, p_o = .5, p_e = (2·3 + 8·7)/100 = .62 -> κ = -.12/.38 = -6/19
ALL_POS = [2, 0, 0, 0]  # every item positive for both: p_e = 1, p_o = 1 -> κ = 1; P = R = 1
ALL_NEG = [0, 0, 0, 5]  # G_d = E_d = ∅: p_e = 1, p_o = 1 -> κ = 1; P = R = 0 (empty denominators)
EMPTY = [0, 0, 0, 0]  # no items: everything 0.0
EMPTY_E = [0, 0, 2, 3]  # method selects nothing: P = 0 (empty), R = 0, p_o = p_e = .6 -> κ = 0
EMPTY_G = [0, 2, 0, 3]  # PGT empty in the document: R = 0 (empty), P = 0, κ = 0


def sk(pred, truth):
    """sklearn's (P, R, κ); κ is None where sklearn leaves it undefined (both label every item alike)."""
    defined = len(set(np.asarray(pred).tolist()) | set(np.asarray(truth).tolist())) > 1
    return (precision_score(truth, pred, zero_division=0), recall_score(truth, pred, zero_division=0),
            cohen_kappa_score(truth, pred) if defined else None)


# ------------------------------------------------------------------------------------ P, R, κ
def test_prk_hand_built_tables():
    p, r, k = prk(np.array([A, B]))
    np.testing.assert_allclose(p, [0.75, 0.0], atol=1e-15)
    np.testing.assert_allclose(r, [0.6, 0.0], atol=1e-15)
    np.testing.assert_allclose(k, [0.4, -6 / 19], atol=1e-15)


def test_prk_kappa_matches_definition_via_po_pe():
    tp, fp, fn, tn = 7, 3, 5, 11
    n = tp + fp + fn + tn
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
    assert prk([tp, fp, fn, tn])[2] == pytest.approx((po - pe) / (1 - pe), abs=1e-14)


@pytest.mark.parametrize("table, expected", [
    (ALL_POS, (1.0, 1.0, 1.0)),
    (ALL_NEG, (0.0, 0.0, 1.0)),
    (EMPTY, (0.0, 0.0, 0.0)),
    (EMPTY_E, (0.0, 0.0, 0.0)),
    (EMPTY_G, (0.0, 0.0, 0.0)),
    ([0, 4, 0, 0], (0.0, 0.0, 0.0)),  # method says all, PGT says none: p_e = 0, p_o = 0 -> κ = 0
    ([0, 2, 2, 0], (0.0, 0.0, -1.0)),  # total disagreement, balanced margins: 2(0 − 4)/(2·2 + 2·2)
    ([0, 2, 3, 0], (0.0, 0.0, -12 / 13)),  # total disagreement: 2(0 − 6)/(2·2 + 3·3)
])
def test_prk_edge_cases(table, expected):
    assert tuple(float(v) for v in prk(table)) == pytest.approx(expected, abs=1e-15)


def test_prk_is_vectorised_over_leading_axes():
    c = np.array([[A, B, ALL_POS], [EMPTY, EMPTY_E, EMPTY_G]])
    p, r, k = prk(c)
    assert p.shape == r.shape == k.shape == (2, 3)
    assert k[0, 1] == pytest.approx(-6 / 19) and k[0, 2] == 1.0 and k[1, 0] == 0.0


def test_prk_rejects_bad_counts():
    with pytest.raises(ValueError, match="length 4"):
        prk([1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        prk([1, -1, 0, 0])


def test_prk_agrees_with_sklearn_on_random_vectors():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        truth = rng.random(n) < rng.random()
        pred = rng.random(n) < rng.random()
        ours = prk(label_counts(pred, truth))
        p, r, k = sk(pred, truth)
        assert float(ours[0]) == pytest.approx(p, abs=1e-12)
        assert float(ours[1]) == pytest.approx(r, abs=1e-12)
        if k is not None:  # sklearn's κ is 0/0 when both label everything alike; ours is 1 (SPECS §0)
            assert float(ours[2]) == pytest.approx(k, abs=1e-12)
        else:
            assert float(ours[2]) == 1.0


def test_pooled_and_per_document_agree_with_sklearn():
    rng = np.random.default_rng(1)
    docs = [(rng.random(n) < 0.3, rng.random(n) < 0.4) for n in rng.integers(5, 30, size=25)]
    counts = np.array([label_counts(p, g) for p, g in docs])
    pred = np.concatenate([p for p, _ in docs])
    truth = np.concatenate([g for _, g in docs])
    for which, ref in zip(im.STATISTICS, sk(pred, truth)):
        value, _ = pooled(counts, which, n_boot=0)
        assert value == pytest.approx(ref, abs=1e-12)
    per_doc = np.stack(prk(counts), 1)
    for (p, g), ours in zip(docs, per_doc):
        ref = sk(p, g)
        np.testing.assert_allclose(ours[:2], ref[:2], atol=1e-12)
        if ref[2] is not None:
            assert ours[2] == pytest.approx(ref[2], abs=1e-12)


# ------------------------------------------------------------------------------------ macro
def test_macro_excludes_documents_without_any_positive():
    counts = np.array([A, B, ALL_NEG, EMPTY, EMPTY_G, EMPTY_E])  # ALL_NEG, EMPTY: G_d ∪ E_d = ∅
    k = macro_values(counts, "kappa")
    np.testing.assert_allclose(k, [0.4, -6 / 19, np.nan, np.nan, 0.0, 0.0], atol=1e-15)
    assert macro(counts, "kappa") == pytest.approx((0.4 - 6 / 19 + 0.0 + 0.0) / 4)
    assert macro(counts, "precision") == pytest.approx(0.75 / 4)
    assert macro(counts, "recall") == pytest.approx(0.6 / 4)
    assert np.isnan(macro(np.array([ALL_NEG, EMPTY]), "kappa"))


def test_pooled_hand_built():
    counts = np.array([A, B, ALL_NEG])  # sum = [3, 3, 5, 14]
    # P = 3/6, R = 3/8, κ = 2(3·14 − 3·5)/[(6)(17) + (8)(19)] = 54/254
    assert pooled(counts, "precision", n_boot=0)[0] == pytest.approx(0.5)
    assert pooled(counts, "recall", n_boot=0)[0] == pytest.approx(3 / 8)
    assert pooled(counts, "kappa", n_boot=0)[0] == pytest.approx(54 / 254)
    with pytest.raises(ValueError, match="which"):
        pooled(counts, "f1")


# ------------------------------------------------------------------------------------ bootstrap
def test_bootstrap_ci_contains_value_and_is_deterministic():
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 6, size=(80, 4))
    for which in im.STATISTICS:
        value, (lo, hi) = pooled(counts, which, n_boot=500, seed=3)
        assert lo <= value <= hi and lo < hi
        assert pooled(counts, which, n_boot=500, seed=3) == (value, (lo, hi))
        assert pooled(counts, which, n_boot=500, seed=4)[1] != (lo, hi)


def test_bootstrap_equals_a_plain_loop_over_resamples():
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 9, size=(30, 4))
    n_boot, seed = 150, 7  # two full chunks and a partial one
    draw = np.random.default_rng(seed)
    stats = []
    for s in range(0, n_boot, im._BOOT_CHUNK):
        for idx in draw.integers(0, len(counts), size=(min(im._BOOT_CHUNK, n_boot - s), len(counts))):
            stats.append(float(prk(counts[idx].sum(0))[2]))
    _, (lo, hi) = pooled(counts, "kappa", n_boot=n_boot, seed=seed)
    np.testing.assert_allclose([lo, hi], np.quantile(stats, [0.025, 0.975]), atol=1e-14)


def test_pooled_edge_cases_and_summary():
    assert np.isnan(pooled(np.zeros((0, 4)), "kappa")[0])
    counts = np.array([A, B, ALL_NEG, EMPTY_G])
    s = pooled_summary(counts, "kappa", n_boot=200, seed=0, label="κ")
    value, ci = pooled(counts, "kappa", n_boot=200, seed=0)
    assert s.mean == value and s.ci95 == ci and s.n == 4 and s.excluded == 0 and s.label == "κ"
    assert s.std > 0 and s.direction == "higher"
    assert pooled_summary(np.zeros((0, 4)), "kappa").mean is None


# ------------------------------------------------------------------------------------ WGA post-processing
def test_select_features_two_classes():
    rs = np.array([
        [0.9, 0.1],   # class 0
        [0.5, 0.3],   # margin 0.2 < β: none
        [0.2, 0.0],   # below α: none
        [0.3, 0.05],  # α and β met exactly (0.3 − 0.05 is 0.24999… in floats): class 0
        [0.1, 0.6],   # class 1
        [0.6, 0.35],  # margin exactly β: class 0
    ])
    got = select_features(rs)
    assert [g.tolist() for g in got] == [[0, 3, 5], [4]]
    assert [g.tolist() for g in select_features(rs, alpha=0.5, beta=0.3)] == [[0], [4]]


def brute_force(rs, alpha, beta):
    out = []
    for c in range(rs.shape[1]):
        out.append([w for w in range(rs.shape[0]) if rs[w, c] >= alpha - 1e-12 and all(
            rs[w, c] - rs[w, o] >= beta - 1e-12 for o in range(rs.shape[1]) if o != c)])
    return out


def test_select_features_three_classes_uses_all_other_classes():
    rs = np.array([
        [0.8, 0.5, 0.1],  # beats both others by ≥ .25: class 0
        [0.8, 0.1, 0.6],  # beats class 1 by .7 but class 2 only by .2: none ("for all ĉ")
        [0.1, 0.2, 0.9],  # class 2
        [0.4, 0.4, 0.0],  # tie: none
        [0.0, 0.35, 0.0],  # class 1
        [0.7, 0.7, 0.7],  # none
    ])
    assert [g.tolist() for g in select_features(rs)] == [[0], [4], [2]]
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = rng.random((40, 4)).round(2)
        assert [g.tolist() for g in select_features(m, 0.3, 0.1)] == brute_force(m, 0.3, 0.1)


def test_select_features_single_class_and_validation():
    assert select_features(np.array([[0.2], [0.3], [0.9]]))[0].tolist() == [1, 2]
    with pytest.raises(ValueError, match="matrix"):
        select_features(np.ones(3))
    with pytest.raises(ValueError, match="non-finite"):
        select_features(np.array([[np.nan, 0.0]]))


# ------------------------------------------------------------------------------------ per document
TOKENS = ["The", "movie", "was", "great", ",", "great", "!", "the"]
SCORES = [0.1, -0.5, 0.0, 2.0, 0.4, 1.0, 0.8, 0.6]  # positive max 2.0


def test_type_scores_max_over_occurrences_and_clipping():
    types, values = type_scores(TOKENS, SCORES)
    assert types == ["the", "movie", "was", "great", ",", "!"]
    # the: max(.1, .6)/2 = .3; movie: negative -> 0; great: max(2, 1)/2 = 1; ",": .2; "!": .4
    np.testing.assert_allclose(values, [0.3, 0.0, 0.0, 1.0, 0.2, 0.4], atol=1e-15)


def test_type_scores_all_zero_or_negative():
    types, values = type_scores(["a", "b", "a"], [-1.0, 0.0, -3.0])
    assert types == ["a", "b"] and values.tolist() == [0.0, 0.0]
    assert type_scores([], []).types == []
    with pytest.raises(ValueError, match="one value per token"):
        type_scores(["a", "b"], [1.0])
    with pytest.raises(ValueError, match="non-finite"):
        type_scores(["a"], [np.inf])


def test_type_scores_excluding_punctuation_renormalises_over_words():
    scores = [0.1, -0.5, 0.0, 2.0, 0.4, 1.0, 4.0, 0.6]  # "!" holds the maximum
    _, with_punct = type_scores(TOKENS, scores)
    assert with_punct[3] == pytest.approx(0.5)
    types, words = type_scores(TOKENS, scores, exclude_punctuation=True)
    assert types == ["the", "movie", "was", "great"]
    np.testing.assert_allclose(words, [0.3, 0.0, 0.0, 1.0], atol=1e-15)


def test_document_counts_threshold():
    features = {"great", "movie", "terrible"}  # G_d = {movie, great}
    # E_d = {the (.3 ≥ .3), great, !}: tp great; fp the, !; fn movie; tn was, ","
    assert document_counts(TOKENS, SCORES, features).tolist() == [1, 2, 1, 2]
    assert document_counts(TOKENS, SCORES, features, exclude_punctuation=True).tolist() == [1, 1, 1, 1]
    assert document_counts(TOKENS, SCORES, features, alpha=0.5).tolist() == [1, 0, 1, 4]
    assert document_counts(TOKENS, SCORES, ["great", "movie"]).tolist() == [1, 2, 1, 2]
    types, labels = method_labels(TOKENS, SCORES)
    assert [t for t, lab in zip(types, labels) if lab] == ["the", "great", "!"]


def test_document_counts_top_k():
    features = {"great", "movie"}
    # k = |G_d| = 2 -> E_d = {great (1.0), ! (.4)}
    assert document_counts(TOKENS, SCORES, features, binarise="top-k").tolist() == [1, 1, 1, 3]
    assert document_counts(TOKENS, SCORES, features, binarise="top-k", k=3).tolist() == [1, 2, 1, 2]
    # ties broken by first occurrence: "b" and "c" tie, "b" comes first
    types, labels = method_labels(["a", "b", "c"], [1.0, 0.5, 0.5], binarise="top-k", k=2)
    assert labels.tolist() == [True, True, False]
    with pytest.raises(ValueError, match="needs k"):
        method_labels(TOKENS, SCORES, binarise="top-k")
    with pytest.raises(ValueError, match="binarise"):
        document_counts(TOKENS, SCORES, features, binarise="median")


def test_document_counts_empty_pgt_and_empty_method():
    assert document_counts(TOKENS, SCORES, set()).tolist() == [0, 3, 0, 3]  # G_d = ∅: fp/tn only
    assert document_counts(TOKENS, [0.0] * 8, {"great"}).tolist() == [0, 0, 1, 5]  # E_d = ∅
    # top-k with G_d = ∅ selects nothing
    assert document_counts(TOKENS, SCORES, set(), binarise="top-k").tolist() == [0, 0, 0, 6]


def test_top_k_forces_pooled_precision_equal_recall_but_threshold_does_not():
    rng = np.random.default_rng(4)
    vocab = [f"w{i}" for i in range(30)]
    features = set(vocab[:8])
    docs = [list(rng.choice(vocab, size=int(rng.integers(5, 20)))) for _ in range(40)]
    scores = [rng.normal(size=len(d)) for d in docs]
    top = batch_counts(docs, scores, [features] * len(docs), binarise="top-k")
    thr = batch_counts(docs, scores, [features] * len(docs))
    assert (top[:, 1] == top[:, 2]).all()  # fp = fn in every document
    assert pooled(top, "precision", n_boot=0)[0] == pytest.approx(pooled(top, "recall", n_boot=0)[0])
    assert pooled(thr, "precision", n_boot=0)[0] != pytest.approx(pooled(thr, "recall", n_boot=0)[0])
    # every document's items are its distinct types
    assert (thr.sum(1) == [len(set(d)) for d in docs]).all()


# ------------------------------------------------------------------------------------ registry
def test_registered_metrics():
    counts = np.array([A, B, ALL_NEG])
    for name, label, pooled_flag in [("interp-kappa", "κ", True), ("interp-precision", "P", True),
                                     ("interp-recall", "R", True), ("interp-kappa-macro", "κ/doc", False),
                                     ("interp-precision-macro", "P/doc", False),
                                     ("interp-recall-macro", "R/doc", False)]:
        m = METRICS.get(name)
        assert m.family == "interpretation" and m.label == label and m.pooled is pooled_flag
        assert m.higher_is_better
    np.testing.assert_allclose(METRICS.get("interp-kappa")(counts, None), [0.4, -6 / 19, 1.0])
    np.testing.assert_allclose(METRICS.get("interp-kappa-macro")(counts, None), [0.4, -6 / 19, np.nan])
    np.testing.assert_allclose(METRICS.get("interp-precision")(counts, None), [0.75, 0.0, 0.0])
    np.testing.assert_allclose(METRICS.get("interp-recall-macro")(counts, None), [0.6, 0.0, np.nan])


# ------------------------------------------------------------------------------------ RelativeConf
def test_relative_conf_nothing_removed_is_mean_confidence():
    y = np.array([0.8, 0.6, 0.9])
    assert relative_conf(y, y) == pytest.approx(y.mean())
    assert average_relative_drop(y, y) == 0.0


def test_relative_conf_hand_computed():
    y, y_hat = [0.8, 0.6, 0.9], [0.4, 0.7, 0.45]  # relative drops .5, 0 (a rise counts as 0), .5
    assert relative_conf(y, y_hat) == pytest.approx((0.3 + 0.6 + 0.4) / 3)
    assert average_relative_drop(y, y_hat) == pytest.approx(1 / 3)


def test_relative_conf_validation():
    with pytest.raises(ValueError, match="> 0"):
        relative_conf([0.0, 0.5], [0.0, 0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        relative_conf([0.5, 1.2], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        average_relative_drop([0.5], [-0.1])
    with pytest.raises(ValueError, match="same length"):
        relative_conf([0.5, 0.6], [0.5])
    with pytest.raises(ValueError, match="non-empty"):
        relative_conf([], [])


# ------------------------------------------------------------------------------------ set level
def test_set_level_counts_hand_built():
    rs = np.array([[0.9, 0.1], [0.5, 0.3], [0.2, 0.0], [0.3, 0.05], [0.1, 0.6], [0.6, 0.35]])
    # method sets: class 0 {0, 3, 5}, class 1 {4}
    out = set_level_counts(rs, [{0, 1}, {4, 2}])
    assert out["counts"].tolist() == [[1, 2, 1, 2], [1, 0, 1, 4]]
    np.testing.assert_allclose(out["precision"], [1 / 3, 1.0])
    np.testing.assert_allclose(out["recall"], [0.5, 0.5])
    # class 0: 2(1·2 − 2·1)/[(3)(4) + (2)(3)] = 0; class 1: 2(4 − 0)/[(1)(4) + (2)(5)] = 8/14
    np.testing.assert_allclose(out["kappa"], [0.0, 8 / 14], atol=1e-15)
    # pooled [2, 2, 2, 6]: P = R = .5, κ = 2(12 − 4)/[(4)(8) + (4)(8)] = .25
    assert out["pooled"] == pytest.approx({"precision": 0.5, "recall": 0.5, "kappa": 0.25})
    vocab = ["good", "fine", "meh", "nice", "bad", "great"]
    words = set_level_counts(rs, [{"good", "fine", "superb"}, {"bad", "meh"}], vocab=vocab)
    assert words["counts"].tolist() == out["counts"].tolist() and words["missing"].tolist() == [1, 0]
    with pytest.raises(ValueError, match="one set per class"):
        set_level_counts(rs, [{0}])
    with pytest.raises(ValueError, match="outside"):
        set_level_counts(rs, [{0}, {6}])


# ------------------------------------------------------------------------------------ agreement with people
def test_binarise_scores():
    # normalised [.05, 0, 1, .3, .295]
    assert binarise_scores([0.1, -1.0, 2.0, 0.6, 0.59]).tolist() == [False, False, True, True, False]
    assert binarise_scores([0.1, -1.0, 2.0, 0.6, 0.59], top_fraction=0.4).tolist() == [
        False, False, True, True, False]
    assert binarise_scores(np.arange(10.0), top_fraction=0.3).sum() == 3
    assert binarise_scores([1.0, 1.0, 1.0], top_fraction=0.5).tolist() == [True, True, False]  # ⌈1.5⌉
    assert not binarise_scores([-1.0, 0.0]).any()
    with pytest.raises(ValueError, match="top_fraction"):
        binarise_scores([1.0], top_fraction=1.5)


def test_token_agreement_hand_built_and_vs_sklearn():
    out = token_agreement([[1, 1, 0, 0, 1], [0, 0]], [[1, 0, 1, 0, 1], [0, 0]])
    assert out["counts"].tolist() == [[2, 1, 1, 1], [0, 0, 0, 2]]
    # doc 0: P = R = 2/3, κ = 2(2 − 1)/[(3)(2) + (3)(2)] = 1/6; doc 1: all negative -> κ = 1, P = R = 0
    np.testing.assert_allclose(out["precision"], [2 / 3, 0.0])
    np.testing.assert_allclose(out["kappa"], [1 / 6, 1.0])
    # pooled [2, 1, 1, 3]: κ = 2(6 − 1)/[(3)(4) + (3)(4)] = 10/24
    assert out["pooled_kappa"] == pytest.approx(10 / 24)

    rng = np.random.default_rng(6)
    pred = [rng.random(n) < 0.3 for n in rng.integers(3, 40, size=30)]
    human = [rng.random(len(p)) < 0.25 for p in pred]
    out = token_agreement(pred, human)
    p, r, k = sk(np.concatenate(pred), np.concatenate(human))
    assert (out["pooled_precision"], out["pooled_recall"], out["pooled_kappa"]) == pytest.approx((p, r, k))
    for i, (a, b) in enumerate(zip(pred, human)):
        ref = sk(a, b)
        assert (out["precision"][i], out["recall"][i]) == pytest.approx(ref[:2])
        if ref[2] is not None:
            assert out["kappa"][i] == pytest.approx(ref[2])
    with pytest.raises(ValueError, match="document 1"):
        token_agreement([[1], [1, 0]], [[1], [1]])
