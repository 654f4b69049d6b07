"""TOKI core (SPECS §1.2–1.6) on hand-built embeddings, pools and explanations."""

import math
import time

import numpy as np
import pytest

from benchmark.contracts import Batch, OracleContext
from benchmark.toki.baselines import Naive, RandomOracle
from benchmark.toki.core import Toki, TokiKI
from benchmark.toki.embeddings import StaticEmbedding
from benchmark.toki.explanations import Explanation, omission_scores, top_positive
from benchmark.toki.keywords import (cluster_labels, decide, importance_sums, keyword_mask, relatedness,
                                     theta_relate_search, word_pool)


def V(out):
    """The verdicts of a judgement (`judge` may return {"verdicts", "scores"})."""
    return out["verdicts"] if isinstance(out, dict) else out


def unit(*v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def deg(a):
    return unit(math.cos(math.radians(a)), math.sin(math.radians(a)))


# ----------------------------------------------------------------------------- θ_relate search
def test_theta_search_equal_error_point():
    # related ~ U[0.3, 0.9], unrelated ~ U[0.1, 0.5]: TPR(t) = (0.9 − t)/0.6, TNR(t) = (t − 0.1)/0.4
    # equal at 0.36 − 0.4t = 0.6t − 0.06 → t = 0.42, TPR = TNR = 0.8
    rel = np.linspace(0.3, 0.9, 60001)
    unr = np.linspace(0.1, 0.5, 40001)
    res = theta_relate_search(rel, unr)
    assert res["theta"] == pytest.approx(0.42, abs=1e-4)
    assert res["tpr"] == pytest.approx(0.8, abs=1e-3) and res["tnr"] == pytest.approx(0.8, abs=1e-3)
    assert abs(res["tpr"] - res["tnr"]) < 1e-3
    assert res["n_related"] == 60001 and res["n_unrelated"] == 40001
    # equal class sizes: the two precisions are balanced too
    res = theta_relate_search(np.linspace(0.3, 0.9, 5000), np.linspace(0.1, 0.5, 5000))
    assert res["precision_related"] == pytest.approx(res["precision_unrelated"], abs=1e-3)
    with pytest.raises(ValueError):
        theta_relate_search([], [0.1])


# ----------------------------------------------------------------------------- pipeline pieces
def test_top_positive_and_pool():
    assert top_positive(["!", "a"], [0.9, 0.1], 5, words_only=True).words == ["a"]
    e = top_positive(["Good", "the", "good", "bad", "x", "y"], [0.2, 0.1, 0.3, -0.5, 0.1, 0.0], top_k=2)
    assert e.words == ["good", "the"] and e.scores.tolist() == pytest.approx([0.5, 0.1])  # summed, ties stable
    e = top_positive(["a", "b", "c"], [0.1, 0.1, 0.1], top_k=2)
    assert e.words == ["a", "b"]  # ties broken by first occurrence
    assert len(top_positive(["a"], [-1.0], 10)) == 0
    pool = word_pool([Explanation(["a", "b"], np.array([0.4, 0.2])), Explanation(["a"], np.array([0.2])),
                      Explanation(["a"], np.array([0.9]))], [0, 0, 1])
    assert pool[0] == pytest.approx({"a": 0.3, "b": 0.2}) and pool[1] == pytest.approx({"a": 0.9})


def test_clustering_cut_and_keyword_selection():
    # cos distance between 0° and 20° = 1 − cos 20° = 0.060; between 20° and 90° = 0.658
    v = np.stack([deg(0), deg(20), deg(90), deg(95)])
    lab = cluster_labels(v, theta_dist=0.3)
    assert lab[0] == lab[1] and lab[2] == lab[3] and lab[0] != lab[2]
    assert len(set(cluster_labels(v, theta_dist=1.5))) == 1  # everything merges (cf. θ_dist > 0.6 collapse)
    assert cluster_labels(v[:1], 0.3).tolist() == [1]
    # class at 10°: cluster {0°, 20°} has mean at 10° → cos 1; cluster {90°, 95°} has cos(82.5°) = 0.13
    km = keyword_mask(v, deg(10), theta_dist=0.3, theta_relate=0.5)
    assert km.tolist() == [True, True, False, False]
    assert not keyword_mask(v, deg(10), 0.3, theta_relate=1.01).any()


def test_relatedness_edge_cases():
    pool = np.stack([deg(0), deg(90)])  # keyword at 0°, non-keyword at 90°
    kw = np.array([True, False])
    words = np.stack([deg(30), deg(60), deg(45)])
    # 30° nearer the keyword, 60° nearer the non-keyword, 45°: tie → keyword
    assert relatedness(words, pool, kw).tolist() == [True, False, True]
    assert relatedness(words, pool, np.array([False, False])).tolist() == [False] * 3  # K = ∅ → 0
    assert relatedness(words, pool, np.array([True, True])).tolist() == [True] * 3  # F = ∅ ≠ K → 1
    # a pool word decides by its own membership; identical vectors in K and F: self-sim 1 ties → keyword
    dup = np.stack([deg(0), deg(0)])
    assert relatedness(deg(0)[None], dup, np.array([False, True]), np.array([0])).tolist() == [True]
    assert relatedness(deg(90)[None], pool, kw, np.array([1])).tolist() == [False]


def test_importance_sums_and_decision():
    assert importance_sums([0.5, 0.3, 0.2], [True, False, True]) == pytest.approx((0.7, 0.3))
    assert decide(0.3, 0.3) and not decide(0.29, 0.3)
    assert decide(0.0, 0.0)  # literal Eq. 6: no positive word → trustworthy
    assert not decide(0.6, 0.4, trust_ratio=0.7) and decide(0.7, 0.3, trust_ratio=0.7)


# ----------------------------------------------------------------------------- the oracles end to end
WORDS = {  # toy 2-D embedding: class "sport" at 0°, "food" at 90°
    "sport": deg(0), "food": deg(90), "ball": deg(5), "goal": deg(10), "team": deg(15),
    "pizza": deg(85), "bread": deg(88), "the": deg(60), "very": deg(65), "striker": deg(8), "soup": deg(80),
}


def toy_embedding(theta=0.7, drop=()):
    words = [w for w in WORDS if w not in drop]
    return StaticEmbedding("toy", words, np.stack([WORDS[w] for w in words]), theta_relate=theta)


def fitted_toki(**kw):
    toki = Toki(models=[toy_embedding()], class_names=["sport", "food"], lemmatize=False, theta_dist=0.3, **kw)
    train = [(["ball", "the", "goal"], [0.5, 0.4, 0.3]), (["team", "very"], [0.6, 0.1]),
             (["pizza", "the"], [0.7, 0.2]), (["bread", "soup"], [0.4, 0.3])]
    toki.fit_explained(train, [0, 0, 1, 1])
    return toki


def test_toki_keywords_and_labels():
    toki = fitted_toki()
    sets = toki.keyword_sets()
    # sport pool: ball, goal, team cluster at ≈10° (cos with the class 0.98 ≥ 0.7); the/very form a second
    # cluster at 62.5° (average-linkage distance between the two clusters 0.39 > θ_dist; cos 0.46 < 0.7)
    assert sets[0] == (["ball", "goal", "team"], ["the", "very"])
    # food pool: "the" (60°) joins pizza/bread/soup (mean distance 0.09 < 0.3), cluster cos ≈ 0.98 → all keywords
    assert sets[1] == (["bread", "pizza", "soup", "the"], [])
    items = [
        {"tokens": ["striker", "the"], "prediction": 0, "confidence": 0.99,
         "explanation_words": ["striker", "the"], "explanation_scores": [0.2, 0.5]},   # IS_rel 0.2 < IS_unr 0.5
        {"tokens": ["striker", "the"], "prediction": 0, "confidence": 0.99,
         "explanation_words": ["striker", "the"], "explanation_scores": [0.5, 0.2]},   # 0.5 ≥ 0.2
        {"tokens": ["zzz"], "prediction": 1, "confidence": 0.5,
         "explanation_words": ["zzz"], "explanation_scores": [-0.3]},                  # no positive word
        {"tokens": ["zzz", "soup"], "prediction": 1, "confidence": 0.5,
         "explanation_words": ["zzz", "soup"], "explanation_scores": [0.6, 0.5]},      # F = ∅ → soup related;
        # zzz is unknown to every model → unrelated: 0.5 < 0.6
    ]
    out = V(toki.judge(Batch(ids=["a", "b", "c", "d"], inputs=items)))
    assert out == [False, True, True, False]
    d = toki.last_diagnostics
    assert d[0]["is_rel"] == pytest.approx(0.2) and d[0]["is_unr"] == pytest.approx(0.5)
    assert d[3]["is_rel"] == pytest.approx(0.5) and d[3]["is_unr"] == pytest.approx(0.6)
    assert toki.counts["empty_explanations"] == 1 and toki.counts["unknown_words"] == 1
    # unknown_words="ignore": the unknown word leaves both sums → trustworthy
    toki2 = fitted_toki(unknown_words="ignore")
    assert V(toki2.judge(Batch(ids=["d"], inputs=[items[3]]))) == [True]


def test_toki_vote_across_models():
    # a second model that does not know "the": votes on "the" come from one model only
    m1, m2 = toy_embedding(), toy_embedding(drop=("the",))
    m2.name = "toy2"
    toki = Toki(models=[m1, m2], class_names=["sport", "food"], lemmatize=False)
    toki.fit_explained([(["ball", "the"], [0.5, 0.4])], [0])
    assert toki.keyword_sets()[0] == (["ball"], ["the"])
    # "very" (65°): model 1 puts it nearer "the" (60°) than "ball" (5°) → 0; model 2 knows only the keyword
    # "ball" (F = ∅ ≠ K) → 1; mean vote 1/2 ≥ τ_vote = 0.5 → related (a tie counts as related, SPECS §1.5)
    item = {"tokens": ["very"], "prediction": 0, "confidence": 1.0, "explanation_words": ["very"],
            "explanation_scores": [1.0]}
    assert V(toki.judge(Batch(ids=["x"], inputs=[item]))) == [True]
    strict = Toki(models=[m1, m2], class_names=["sport", "food"], lemmatize=False, tau_vote=0.75)
    strict.fit_explained([(["ball", "the"], [0.5, 0.4])], [0])
    assert strict.keyword_sets()[0] == (["ball"], ["the"])
    assert V(strict.judge(Batch(ids=["x"], inputs=[item]))) == [False]


def test_class_name_without_embedding_is_an_error():
    with pytest.raises(ValueError, match="class name"):
        Toki(models=[toy_embedding()], class_names=["sport", "qqqq"], lemmatize=False).fit_explained([], [])


def test_toki_without_keywords_ablation():
    ki = TokiKI(models=[toy_embedding(theta=0.9)], class_names=["sport", "food"], lemmatize=False)
    ki.fit(OracleContext(model=None, train=None))
    items = [{"tokens": ["ball", "the"], "prediction": 0, "confidence": 1.0,
              "explanation_words": ["ball", "the"], "explanation_scores": [0.3, 0.4]}]
    # cos(ball, sport) = cos 5° ≥ 0.9 → related; cos(the, sport) = 0.707 < 0.9 → unrelated; 0.3 < 0.4
    assert V(ki.judge(Batch(ids=["a"], inputs=items))) == [False]
    items[0]["explanation_scores"] = [0.5, 0.4]
    assert V(ki.judge(Batch(ids=["a"], inputs=items))) == [True]


def test_naive_and_random():
    items = [{"confidence": c} for c in (0.95, 0.9, 0.8999)]
    assert V(Naive().judge(Batch(ids=list("abc"), inputs=items))) == [True, True, False]
    with pytest.raises(ValueError, match="confidence"):
        V(Naive().judge(Batch(ids=["a"], inputs=[{"prediction": 1}])))
    with pytest.raises(RuntimeError, match="fit"):
        Toki(models=[toy_embedding()], class_names=["a", "b"]).judge(Batch(ids=["a"], inputs=[{}]))
    r = V(RandomOracle().judge(Batch(ids=[str(i) for i in range(400)], inputs=[{}] * 400, seed=3)))
    assert 150 < sum(r) < 250
    assert r == V(RandomOracle().judge(Batch(ids=[str(i) for i in range(400)], inputs=[{}] * 400, seed=3)))


class Bag:
    """A bag-of-words model: p(class 1) = sigmoid(Σ weights)."""

    modality = "text"
    n_outputs = 2
    calls = 0

    def __init__(self, w):
        self.w = w

    def predict(self, docs):
        Bag.calls += 1
        z = np.array([sum(self.w.get(t, 0.0) for t in d) for d in docs])
        p = 1 / (1 + np.exp(-z))
        return np.stack([1 - p, p], 1)

    def target(self, docs):
        return self.predict(docs).argmax(1)


def test_omission_scores_one_predict_call():
    m = Bag({"good": 2.0, "bad": -2.0})
    Bag.calls = 0
    out = omission_scores(m, [["good", "movie", "good"], ["bad"]], [1, 0])
    assert Bag.calls == 1
    words, s = out[0]
    p = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    assert words == ["good", "movie"]
    assert s[0] == pytest.approx(p(4) - p(0)) and s[1] == pytest.approx(0.0)
    assert out[1][1][0] == pytest.approx((1 - p(-2)) - 0.5)


def test_toki_fit_with_omission_explainer():
    model = Bag({"ball": 2.0, "goal": 1.5, "pizza": -2.0, "the": 0.1})
    train = {"tokens": [["ball", "the"], ["goal", "ball"], ["pizza", "the"], ["pizza"]],
             "label": [1, 1, 0, 1], "prediction": [1, 1, 0, 0]}
    toki = Toki(explainer="omission", models=[toy_embedding()], class_names=["food", "sport"], lemmatize=False)
    toki.fit(OracleContext(model=model, train=train))
    assert toki.counts["train_explained"] == 3 and toki.counts["train_incorrect"] == 1
    # "the" lowers p(food) for the pizza document (weight +0.1 → class 1), so only "pizza" enters W_food
    assert toki.keyword_sets()[0] == (["pizza"], [])
    assert toki.keyword_sets()[1] == (["ball", "goal"], ["the"])
    # judging with its own explanations (no explanation given)
    out = V(toki.judge(Batch(ids=["q"], inputs=[{"tokens": ["ball", "the"], "prediction": 1, "confidence": 0.9}])))
    assert out == [True]


def test_pipeline2_throughput():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(3000)]
    vecs = rng.normal(size=(3002, 50))
    emb = StaticEmbedding("rand", vocab + ["pos", "neg"], vecs, theta_relate=0.1)
    toki = Toki(models=[emb], class_names=["neg", "pos"], lemmatize=False)
    train = [(list(rng.choice(vocab, 10, replace=False)), rng.random(10)) for _ in range(400)]
    toki.fit_explained(train, [i % 2 for i in range(400)])
    items = [{"tokens": [], "prediction": i % 2, "confidence": 0.9,
              "explanation_words": list(rng.choice(vocab, 10, replace=False)), "explanation_scores": rng.random(10)}
             for i in range(1000)]
    t = time.perf_counter()
    out = V(toki.judge(Batch(ids=[str(i) for i in range(1000)], inputs=items)))
    rate = len(out) / (time.perf_counter() - t)
    assert rate >= 100, f"pipeline 2 labelled {rate:.0f} predictions/s"


def test_oracle_submissions_are_found_and_instantiate():
    from benchmark.submission import discover

    subs = {n: s for n, s in discover().items() if s.kind == "oracle"}
    want = {"toki-lime", "toki-omis", "toki-grad", "toki-lime-ki", "toki-omis-ki", "toki-grad-ki",
            "naive-oracle", "random-oracle"}
    assert want <= set(subs)
    for n in want:
        obj = subs[n].instantiate()
        assert callable(obj.fit) and callable(obj.judge)
    assert subs["toki-omis"].instantiate().explainer_name == "omission"
    assert subs["toki-lime"].instantiate().train_limit is None
    assert subs["naive-oracle"].instantiate().theta_conf == 0.9


def test_dedup_model_predicts_each_distinct_document_once():
    from benchmark.toki.explanations import DedupModel

    m = Bag({"good": 2.0, "bad": -2.0})
    seen = []
    inner_predict = m.predict
    m.predict = lambda docs: (seen.append(len(docs)), inner_predict(docs))[1]
    d = DedupModel(m)
    docs = [["good"], ["bad", "x"], ["good"], [], ["bad", "x"], []]
    out = d.predict(docs)
    assert seen == [3] and d.documents == 6 and d.distinct == 3
    assert np.allclose(out, inner_predict(docs))
    assert d.target(docs).tolist() == [1, 0, 1, 0, 0, 0] and d.n_outputs == 2


def test_toki_lime_pipeline1_dedup_gives_the_same_keywords():
    model = Bag({"ball": 2.0, "goal": 1.5, "pizza": -2.0, "the": 0.1, "team": 0.8})
    train = {"tokens": [["ball", "the", "goal"], ["goal", "ball", "team"], ["pizza", "the"], ["pizza", "soup"]],
             "label": [1, 1, 0, 0], "prediction": [1, 1, 0, 0]}
    fitted = []
    for dedup in (True, False):
        toki = Toki(explainer="lime", lime_samples=300, models=[toy_embedding()], class_names=["food", "sport"],
                    lemmatize=False, dedup_predictions=dedup)
        toki.fit(OracleContext(model=model, train=train))
        fitted.append(toki)
    assert fitted[0].keyword_sets() == fitted[1].keyword_sets()
    assert fitted[0].counts["explain_distinct_documents"] < fitted[0].counts["explain_documents"]
    assert all(np.allclose(fitted[0].pool_scores[c], fitted[1].pool_scores[c]) for c in (0, 1))


def test_class_names_from_the_training_split_column():
    from benchmark.toki.core import class_names_from_rows

    train = {"tokens": [["a"], ["b"], ["c"]], "label": [0, 1, 1], "prediction": [0, 1, 1],
             "class_name": ["food", "sport", "sport"]}
    assert class_names_from_rows(train) == ["food", "sport"]
    assert class_names_from_rows({"prediction": [1], "class_name": ["sport"]}) is None  # class 0 unnamed
    with pytest.raises(ValueError, match="two names"):
        class_names_from_rows({"prediction": [0, 0], "class_name": ["food", "meal"]})
    ki = TokiKI(models=[toy_embedding()], lemmatize=False)
    ki.fit(OracleContext(model=None, train=train))
    assert ki.n_classes == 2 and ki._class_words == [["food"], ["sport"]]
    with pytest.raises(ValueError, match="class names"):
        TokiKI(models=[toy_embedding()], lemmatize=False).fit(OracleContext(model=None, train={"prediction": [0]}))


def test_class_name_unknown_to_one_model_abstains_and_is_counted():
    m1, m2 = toy_embedding(), toy_embedding(drop=("food",))
    m2.name = "toy2"
    toki = Toki(models=[m1, m2], class_names=["sport", "food"], lemmatize=False)
    toki.fit_explained([(["pizza", "ball"], [0.5, 0.4])], [1])
    assert toki.counts["class_without_embedding:toy2:1"] == 1
    # only model 1 votes on the food pool: pizza near food (keyword), ball not
    assert toki.keyword_sets()[1] == (["pizza"], ["ball"])


# ----------------------------------------------------------------------------- scores, importance type
def test_toki_scores_beside_verdicts_and_importance_equivalent():
    item = {"tokens": ["striker", "the"], "prediction": 0, "confidence": 0.99,
            "explanation_words": ["striker", "the"], "explanation_scores": [0.2, 0.5]}
    empty = {"tokens": ["zzz"], "prediction": 1, "confidence": 0.5, "explanation_words": ["zzz"],
             "explanation_scores": [-0.3]}
    out = fitted_toki().judge(Batch(ids=["a", "b"], inputs=[item, empty]))
    # striker related (0.2), the unrelated (0.5): score 0.2 / 0.7, below ½ → untrustworthy
    assert out["verdicts"] == [False, True]
    assert out["scores"] == pytest.approx([0.2 / 0.7, 1.0])  # no positive word: literal Eq. 6, score 1
    # Table 2's importance-equivalent reading: one related and one unrelated word → 1 / 2 ≥ ½ → trustworthy
    eq = fitted_toki(importance="equivalent").judge(Batch(ids=["a"], inputs=[item]))
    assert eq["verdicts"] == [True] and eq["scores"] == pytest.approx([0.5])
    assert fitted_toki(score="none").judge(Batch(ids=["a"], inputs=[item])) == [False]
    with pytest.raises(ValueError, match="importance"):
        Toki(importance="equal")
    # the verdict is the score thresholded at trust_ratio
    many = [dict(item, explanation_scores=[a, 1 - a]) for a in np.linspace(0.05, 0.95, 19)]
    for ratio in (0.3, 0.5, 0.7):
        got = fitted_toki(trust_ratio=ratio).judge(Batch(ids=[str(i) for i in range(19)], inputs=many))
        assert all(v == (s >= ratio) for v, s in zip(got["verdicts"], got["scores"]) if abs(s - ratio) > 1e-9)


def test_naive_and_random_scores():
    items = [{"confidence": c} for c in (0.95, 0.9, 0.5)]
    out = Naive().judge(Batch(ids=list("abc"), inputs=items))
    assert out == {"verdicts": [True, True, False], "scores": [0.95, 0.9, 0.5]}
    assert Naive(score="none").judge(Batch(ids=list("abc"), inputs=items)) == [True, True, False]
    batch = Batch(ids=[str(i) for i in range(2000)], inputs=[{}] * 2000, seed=1)
    for p in (0.2, 0.8):
        r = RandomOracle(p=p).judge(batch)
        assert abs(np.mean(r["verdicts"]) - p) < 0.04  # trustworthy at rate p
        assert r["verdicts"] == [s > 1 - p for s in r["scores"]]  # verdict = score thresholded at 1 − p
    # the same draw for every p: p = 0.5 keeps the verdicts of the verdict-only control
    assert RandomOracle(score="none").judge(batch) == RandomOracle().judge(batch)["verdicts"]


def test_rationale_ceiling_keyword_list_from_training_rationales():
    from benchmark.toki.baselines import RationaleCeiling, rationale_rates

    train = {"tokens": [["you", "are", "vile", "scum"], ["vile", "people", "are", "here"], ["are", "scum", "ok"],
                        ["nice", "day"]],
             "label": [1, 1, 1, 0], "rationale": [["vile", "scum"], ["vile"], ["scum", "are"], []]}
    rates = rationale_rates(train["tokens"], train["label"], train["rationale"])
    assert rates[1]["vile"] == (2, 2) and rates[1]["are"] == (1, 3) and rates[1]["you"] == (0, 1)
    assert 0 not in rates  # posts without a rationale say nothing
    ceil = RationaleCeiling()
    ceil.fit(OracleContext(model=None, train=train))
    assert ceil.keywords[1] == {"vile", "scum"}  # "are": rationale in 1 of 3 posts < ½
    items = [{"prediction": 1, "explanation_words": ["vile", "scum", "you"], "explanation_scores": [0.3, 0.2, 0.9]},
             {"prediction": 1, "explanation_words": ["vile", "are", "you"], "explanation_scores": [0.3, 0.2, 0.1]},
             {"prediction": 1, "explanation_words": [], "explanation_scores": []}]
    out = ceil.judge(Batch(ids=list("abc"), inputs=items))
    assert out["verdicts"] == [True, False, False] and out["scores"] == pytest.approx([2 / 3, 1 / 3, 0.0])
    imp = RationaleCeiling(weighting="importance")
    imp.fit(OracleContext(model=None, train=train))
    assert imp.judge(Batch(ids=["a"], inputs=items[:1]))["scores"] == pytest.approx([0.5 / 1.4])
    rate = RationaleCeiling(mode="rate")
    rate.fit(OracleContext(model=None, train=train))
    # vile 1, are 1/3, you 0 → mean 4/9
    assert rate.judge(Batch(ids=["b"], inputs=items[1:2]))["scores"] == pytest.approx([4 / 9])
    with pytest.raises(ValueError, match="reference"):
        RationaleCeiling().fit(OracleContext(model=None, train={k: train[k] for k in ("tokens", "label")}))


def test_pipeline1_reads_the_training_explanations_the_trust_set_gives():
    """train_explanations="given": a LIME TOKI takes the training split's stored explanations (no model call;
    the context has no model here), only for correct predictions; "own" explains (and so needs the model)."""
    train = {"tokens": [["ball", "the"], ["pizza", "x"], ["goal"], ["bread"]], "label": [0, 1, 0, 1],
             "prediction": [0, 1, 1, 1],
             "explanation_words": [["ball", "the"], ["pizza"], ["goal"], []],
             "explanation_scores": [[0.5, 0.1], [0.7], [0.4], []]}
    toki = Toki(explainer="lime", models=[toy_embedding()], class_names=["sport", "food"], lemmatize=False)
    toki.fit(OracleContext(model=None, train=train))
    assert toki.counts["train_explanations_given"] == 2 and toki.counts["train_without_explanation"] == 1
    assert toki.pool_words == {0: ["ball", "the"], 1: ["pizza"]}  # "goal" was predicted wrongly: left out
    with pytest.raises(ValueError, match="explains with the model under test"):
        Toki(explainer="lime", train_explanations="own", models=[toy_embedding()], class_names=["sport", "food"],
             lemmatize=False).fit(OracleContext(model=None, train=train))
    omis = Toki(explainer="omission", models=[toy_embedding()], class_names=["sport", "food"], lemmatize=False)
    omis.fit(OracleContext(model=Bag({"ball": 2.0}), train=train))  # not LIME: explains for itself
    assert "train_explanations_given" not in omis.counts


def test_toki_without_a_model_says_what_it_needs():
    """Explaining needs the model under test; a training split without predictions needs it to predict."""
    train = {"tokens": [["ball", "the"]], "label": [1]}
    toki = Toki(explainer="omission", models=[toy_embedding()], class_names=["food", "sport"], lemmatize=False)
    with pytest.raises(ValueError, match="no 'prediction' column and the context no model"):
        toki.fit(OracleContext(model=None, train=train))
    ki = TokiKI(explainer="omission", judge_explanations="own", models=[toy_embedding()],
                class_names=["food", "sport"], lemmatize=False)
    ki.fit(OracleContext(model=None, train=None))
    with pytest.raises(ValueError, match="explains with the model under test"):
        ki.judge(Batch(ids=["q"], inputs=[{"tokens": ["ball"], "prediction": 1, "confidence": 0.9}]))
