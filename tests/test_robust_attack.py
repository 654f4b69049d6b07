"""The attack layer (benchmark.attacks): TEF / RA / RI / RS on a tiny model with a planted importance order,
the budget, prediction preservation, the sweep, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark.attacks.synonyms import SynonymSpace
from benchmark.attacks.tef import RHO_GRID, AttackConfig, Attacker, budget_r, sweep
from benchmark.metrics.robustness import attribution_distance
from tests.conftest import mirror_dir_or_skip

# word → (weight toward class 1, synonyms share a vector direction)
WEIGHTS = {"superb": 3.0, "great": 2.5, "fine": 2.0, "nice": 1.5, "okay": 1.0, "plot": 0.5, "actor": 0.2,
           "awful": -3.0, "bad": -2.5, "poor": -2.0, "dull": -1.5, "movie": 0.3, "film": 0.35,
           "story": 0.4, "tale": 0.1, "cast": 0.25, "flick": 0.05}
GROUPS = [["superb", "great", "fine", "nice", "okay"], ["awful", "bad", "poor", "dull"],
          ["movie", "film", "flick"], ["story", "tale", "plot"], ["actor", "cast"]]


def space() -> SynonymSpace:
    rng = np.random.default_rng(0)
    words, vecs = [], []
    for g, group in enumerate(GROUPS):
        base = np.zeros(len(GROUPS) * 2)
        base[g] = 1.0
        for w in group:
            words.append(w)
            vecs.append(base + 0.05 * rng.normal(size=base.size))
    return SynonymSpace(words, np.array(vecs))


def predict(texts):
    out = []
    for t in texts:
        s = sum(WEIGHTS.get(w, 0.0) for w in t)
        p1 = 1.0 / (1.0 + np.exp(-s))
        out.append([1 - p1, p1])
    return np.array(out)


def attribute(texts):
    # signed word weight times a planted position profile: the first words matter most
    return [np.array([WEIGHTS.get(w, 0.0) * (1.0 + 0.1 * (len(t) - i)) for i, w in enumerate(t)]) for t in texts]


TEXT = ["the", "movie", "is", "superb", "and", "the", "story", "great", "but", "actor", "poor", "."]


def attacker(method, **kw):
    return Attacker(predict, attribute, space(), AttackConfig(method=method, pos_filter=False, **kw))


def test_distance_is_half_one_minus_pcc_with_the_undefined_rule():
    a = np.array([1.0, 2.0, 3.0])
    assert attribution_distance(a, a) == pytest.approx(0.0)
    assert attribution_distance(a, -a) == pytest.approx(1.0)
    assert attribution_distance(a, np.array([1.0, 3.0, 2.0])) == pytest.approx((1 - 0.5) / 2)
    assert attribution_distance(a, np.ones(3)) == 0.5  # constant: PCC := 0
    assert np.isnan(attribution_distance(a, np.ones(3), undefined="nan"))


@pytest.mark.parametrize("method", ["tef", "ra", "ri", "rs"])
def test_budget_and_prediction_preserved(method):
    for rho in (0.05, 0.1, 0.2, 0.4):
        for seed in range(3):
            res = attacker(method, rho_max=rho, seed=seed).attack(TEXT, sample_seed=seed)
            assert res.excluded is None
            assert res.r / res.n <= rho + 1e-12
            for r in range(res.r + 1):
                assert int(np.argmax(predict([res.adversarial(r)])[0])) == res.label
                assert res.prediction_after(r) == res.label


def test_post_check_lets_one_substitution_through_on_short_texts():
    short = ["superb", "movie"]
    assert attacker("tef", rho_max=0.2).attack(short).r == 0
    assert attacker("tef", rho_max=0.2, budget_check="post").attack(short).r == 1


def test_variants_differ_only_in_order_and_choice():
    tef, rs = attacker("tef").attack(TEXT, 7), attacker("rs").attack(TEXT, 7)
    ra, ri = attacker("ra", seed=3).attack(TEXT, 7), attacker("ri", seed=3).attack(TEXT, 7)
    # planted importance: masking the word of largest |weight × profile| moves the attribution most
    assert tef.order == rs.order
    assert tef.order[:3] == [3, 7, 10]  # superb, great, poor
    assert ra.order == ri.order and sorted(ra.order) == sorted(tef.order)
    assert ra.order != tef.order
    # the greedy variants take the candidate of largest distance among prediction-preserving ones
    for res in (tef, ri):
        adv = list(res.tokens)
        for st in res.steps:
            cands = [c for c in space().neighbours(adv[st.position], 15)]
            texts = [adv[: st.position] + [c] + adv[st.position + 1 :] for c in cands]
            ok = [t for t in texts if np.argmax(predict([t])[0]) == res.label]
            best = max(attribution_distance(res.attribution, attribute([t])[0]) for t in ok)
            assert st.d == pytest.approx(best)
            adv[st.position] = st.replacement
    # the random-candidate variants substitute at every visited position whose candidates keep the label
    assert len(rs.steps) >= len(tef.steps)
    choices = {attacker("rs", seed=s).attack(TEXT, 7).steps[0].replacement for s in range(8)}
    assert len(choices) > 1
    # greedy beats random on the distance reached
    assert tef.steps[-1].d >= rs.steps[-1].d


def test_deterministic_under_a_seed():
    for m in ("tef", "ra", "ri", "rs"):
        a, b = attacker(m, seed=5).attack(TEXT, 2), attacker(m, seed=5).attack(TEXT, 2)
        assert a.adversarial() == b.adversarial() and [s.d for s in a.steps] == [s.d for s in b.steps]


@pytest.mark.parametrize("method", ["tef", "ra"])
def test_sweep_equals_separate_runs(method):
    long = TEXT * 3
    full, rs = sweep(attacker(method, seed=1), long, RHO_GRID, sample_seed=4)
    for rho, r in rs.items():
        sep = attacker(method, seed=1, rho_max=rho).attack(long, 4)
        assert sep.r == r == min(full.r, budget_r(rho, len(long)))
        assert sep.adversarial() == full.adversarial(r)


def test_bad_input_is_a_recorded_exclusion():
    a = attacker("tef")
    assert a.attack(["the", "and", "."]).excluded == "no_substitutable_word"
    assert a.attack(["zzz", "qqq"]).excluded == "no_substitutable_word"  # words without neighbours
    assert a.attack([]).excluded == "empty_text"
    res = a.attack(["the", "zzz", "superb"])
    assert res.skipped["no_vector"] == 1

    def const(texts):
        return [np.ones(len(t)) for t in texts]

    assert Attacker(predict, const, space(), AttackConfig(pos_filter=False)).attack(TEXT).excluded == \
        "constant_attribution"

    def failing_on_attacked(texts):
        if any(t != TEXT for t in texts):
            raise RuntimeError("boom")
        return attribute(texts)

    res = Attacker(predict, failing_on_attacked, space(), AttackConfig(pos_filter=False)).attack(TEXT)
    assert res.excluded.startswith("explainer_failed") and "boom" in res.excluded

    def flip_all(texts):  # every substituted text flips the prediction
        return np.array([[0.9, 0.1] if t != TEXT else [0.1, 0.9] for t in texts])

    res = Attacker(flip_all, attribute, space(), AttackConfig(pos_filter=False)).attack(TEXT)
    assert res.r == 0 and res.skipped["all_candidates_flip"] >= 1 and res.excluded is None


def test_batched_calls():
    res = attacker("tef").attack(TEXT)
    # one attribute call for the original, one for step 1, ≤ one per visited position
    assert res.calls["attribute"] <= 2 + len(res.order)
    assert res.calls["predict"] <= 1 + len(res.order)


def test_pos_filter_uses_the_real_tagger():
    pytest.importorskip("spacy")
    from benchmark.attacks.filters import PosTagger

    tags = PosTagger().tag([["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]])[0]
    assert tags == ("DET", "ADJ", "ADJ", "NOUN", "VERB", "ADP", "DET", "ADJ", "NOUN")
    res = Attacker(predict, attribute, space(), AttackConfig()).attack(TEXT)
    assert res.r / res.n <= 0.4


def test_windowed_tag_equals_whole_text_tag():
    """tag_at(texts, j) reads position j from a window of `radius` words either side: the same tag as
    tagging the whole text (MR sentences with random word swaps at every position)."""
    pytest.importorskip("spacy")
    mirror_dir_or_skip("rt_polarity", "rt-polarity.pos")
    from benchmark.attacks.filters import PosTagger
    from generators.corpora import load_mr

    tagger = PosTagger()
    assert tagger.radius == 5
    docs = [d.tokens for d in load_mr()["test"][:40] if len(d.tokens) > 12]
    rng = np.random.default_rng(0)
    vocab = sorted({w for d in docs for w in d})
    checked = 0
    for doc in docs[:15]:
        for j in range(len(doc)):
            texts = [doc[:j] + [vocab[int(k)]] + doc[j + 1 :] for k in rng.integers(len(vocab), size=4)] + [doc]
            whole = [t[j] for t in tagger.tag(texts)]
            tagger._cache.clear()
            assert tagger.tag_at(texts, j) == whole
            checked += 1
    assert checked > 200


def test_a2t_flips_within_budget_and_toki_rule_orders_candidates():
    from benchmark.attacks.a2t import A2TAttacker, A2TConfig, embedding_candidates, max_words, summary, toki_candidates

    sp = space()
    cfg = A2TConfig(pos_filter=False, min_cos=0.5)

    def importance(tokens, label):
        return np.array([abs(WEIGHTS.get(w, 0.0)) for w in tokens])

    text = ["superb", "story", "and", "okay", "actor"]
    res = A2TAttacker(predict, importance, embedding_candidates(sp, cfg), cfg).attack(text)
    assert len(res.positions) <= max_words(len(text), cfg) == 4
    assert res.success == (np.argmax(predict([res.adversarial])[0]) != res.label)
    skipped = A2TAttacker(predict, importance, embedding_candidates(sp, cfg), cfg).attack(text, label=0)
    assert skipped.skipped == "misclassified"
    s = summary([res, skipped])
    assert s["attacked"] == 1 and s["skipped"] == 1
    # TOKI: a related word gets low-importance keywords of its class first; an unrelated one high-importance
    # non-keywords of the other class first
    kw = {1: {"great": 0.9, "fine": 0.1, "nice": 0.5}}
    feats = {0: {"poor": 0.2, "dull": 0.8}, 1: {"okay": 0.3}}
    rule = toki_candidates(sp, lambda w, c: w in kw[c], kw, feats, min_cos=0.5)
    assert rule(["superb"], 0, 1) == []  # superb is not a keyword → other-class pool, none similar
    assert rule(["great"], 0, 1) == ["fine", "nice"]
    assert rule(["bad"], 0, 1) == ["dull", "poor"]
    # the paper's reading (issue #38): candidates from TOKI's own pools, "similar" = TOKI's relatedness, not
    # A2T's counter-fitted neighbourhood — a pool word far from the word in A2T's space can be a candidate
    def similar(w, words):
        return [x != "nice" for x in words]

    pools = toki_candidates(sp, lambda w, c: w in kw[c], kw, feats, rule="pools", similar=similar)
    assert pools(["superb"], 0, 1) == ["dull", "poor"]  # non-keywords of class 0, high importance first
    assert pools(["great"], 0, 1) == ["fine"]  # keywords of class 1 TOKI relates to "great", low first
    with pytest.raises(ValueError, match="similar"):
        toki_candidates(sp, lambda w, c: True, kw, feats, rule="pools")
    with pytest.raises(ValueError, match="rule"):
        toki_candidates(sp, lambda w, c: True, kw, feats, rule="nearest")


def test_live_attack_options_are_checked():
    """`xaibench attack` options: repeated attacks count once; unscored attacks, bad sample counts and
    time limits, and bad attack options are one-line errors before anything runs."""
    from benchmark.attacks.live import LiveOptions
    from benchmark.errors import XaibenchError

    opts = LiveOptions(attacks=("tef", "tef", "ra"))
    opts.check()
    assert opts.attacks == ("tef", "ra")
    for bad in ({"attacks": ("ri",)}, {"attacks": ()}, {"samples": 0}, {"samples": True},
                {"timeout_s": float("nan")}, {"timeout_s": -1}):
        with pytest.raises(XaibenchError):
            LiveOptions(**bad).check()
    with pytest.raises(ValueError, match="pcc_undefined"):
        LiveOptions(pcc_undefined="guess").check()


def test_pos_check_after_gives_the_same_attack():
    """`pos_check="after"` (explain every prediction-preserving candidate, tag lazily in descending d)
    finds the same substitutions and records the same skip reasons as the default, on MR sentences with
    the real tagger, a random synonym space (many POS rejections) and a planted linear model — while
    tagging fewer candidate windows and explaining more texts."""
    pytest.importorskip("spacy")
    mirror_dir_or_skip("rt_polarity", "rt-polarity.pos")
    from benchmark.attacks.filters import PosTagger
    from generators.corpora import load_mr

    docs = [d.tokens for d in load_mr()["test"][:12]]
    vocab = sorted({w for d in docs for w in d})
    rng = np.random.default_rng(1)
    sp = SynonymSpace(vocab, rng.normal(size=(len(vocab), 8)))
    weight = dict(zip(vocab, rng.normal(size=len(vocab)).tolist()))

    def pred(texts):
        s = np.array([sum(weight.get(w, 0.0) for w in t) for t in texts])
        return np.stack([1 / (1 + np.exp(s)), 1 / (1 + np.exp(-s))], axis=1)

    def attr(texts):
        return [np.array([weight.get(w, 0.0) * (1.0 + 0.1 * (len(t) - i)) for i, w in enumerate(t)]) for t in texts]

    tagger = PosTagger()
    totals = {"before": [0, 0], "after": [0, 0]}
    subs, reasons = 0, set()
    for method in ("tef", "ri"):
        for undefined in ("zero", "nan"):
            runs = {}
            for check in ("before", "after"):
                tagger._at.clear()
                att = Attacker(pred, attr, sp, AttackConfig(method=method, pcc_undefined=undefined, pos_check=check),
                               tagger=tagger)
                runs[check] = [att.attack(d, k) for k, d in enumerate(docs)]
                totals[check][0] += len(tagger._at)
                totals[check][1] += sum(r.calls["texts_attributed"] for r in runs[check])
            for a, b in zip(runs["before"], runs["after"]):
                assert a.adversarial() == b.adversarial() and a.skipped == b.skipped
                assert [s.position for s in a.steps] == [s.position for s in b.steps]
                assert np.allclose([s.d for s in a.steps], [s.d for s in b.steps])
                subs += a.r
                reasons |= set(a.skipped)
    assert subs > 20 and {"no_improving_candidate", "no_candidate"} <= reasons
    assert totals["after"][0] < totals["before"][0] and totals["after"][1] > totals["before"][1]
    with pytest.raises(ValueError, match="pos_check"):
        AttackConfig(pos_check="never").check()


def test_vocabulary_rule_drops_the_candidates_the_model_cannot_read():
    """A word outside the model's vocabulary would be read as <unk> (a deletion): under "drop" no such
    candidate is tried, under "keep" (earlier builds) they are; the counts are the same either way."""
    vocab = set(WEIGHTS) - {"fine", "nice", "tale"}  # the model cannot represent these three
    represents = vocab.__contains__
    runs = {}
    for rule in ("drop", "keep"):
        tried = []

        def spy(texts, tried=tried):
            tried += [w for t in texts for w in t]
            return predict(texts)
        att = Attacker(spy, attribute, space(), AttackConfig(method="tef", pos_filter=False, unrepresentable=rule),
                       represents=represents)
        runs[rule] = (att.attack(TEXT), set(tried))
    drop, keep = runs["drop"][0], runs["keep"][0]
    assert not runs["drop"][1] & {"fine", "nice", "tale"} and runs["keep"][1] & {"fine", "nice", "tale"}
    assert drop.vocab["applied_unrepresentable"] == 0 and all(represents(s.replacement) for s in drop.steps)
    assert drop.vocab["unrepresentable"] > 0 and drop.vocab["positions_unrepresentable"] > 0
    assert keep.vocab["unrepresentable"] > 0 and keep.vocab["candidates"] >= keep.vocab["unrepresentable"]
    with pytest.raises(ValueError):
        AttackConfig(unrepresentable="map").check()


def test_a2t_follows_the_same_vocabulary_rule():
    from benchmark.attacks.a2t import A2TAttacker, A2TConfig, embedding_candidates

    sp = space()
    vocab = set(WEIGHTS) - {"fine", "nice", "okay"}
    importance = lambda tokens, label: np.array([abs(WEIGHTS.get(w, 0.0)) for w in tokens])  # noqa: E731
    for rule in ("drop", "keep"):
        cfg = A2TConfig(pos_filter=False, min_cos=0.5, unrepresentable=rule)
        attacker = A2TAttacker(predict, importance, embedding_candidates(sp, cfg), cfg, represents=vocab.__contains__)
        res = attacker.attack(["superb", "story", "and", "great", "actor"])
        assert res.vocab["unrepresentable"] > 0
        if rule == "drop":
            assert res.vocab["applied_unrepresentable"] == 0
            assert all(res.adversarial[j] in vocab for j in res.positions)


def test_semi_universal_policy_keeps_the_part_of_speech_and_the_halves_are_disjoint():
    from generators.robustness.policies import apply_policy, split_halves

    pol = [("good", "decent", 3), ("movie", "film", 2)]
    text = ["a", "good", "movie", "and", "a", "good", "story"]
    adv, r, where = apply_policy(text, pol, rho_max=0.4)  # (r+1)/7 > 0.4 stops at r = 2
    assert (adv, r, where) == (["a", "decent", "movie", "and", "a", "decent", "story"], 2, [1, 5])
    # a replacement that would change the tag at i is skipped (here: the second "good")
    adv, r, where = apply_policy(text, pol, rho_max=0.4, keeps_pos=lambda toks, i, rep: i != 5)
    assert where == [1, 2] and adv[5] == "good"
    p, e = split_halves(11, 0)
    assert sorted(p + e) == list(range(11)) and len(p) == 5 and split_halves(11, 0) == (p, e)


def test_each_model_faces_a_policy_it_can_read():
    """Under the vocabulary rule a model's semi-universal policy comes from the events whose replacement it
    represents: another model's events may swap in words it would read as <unk>."""
    from generators.robustness.policies import model_policy

    events = {("lstm", "saliency"): [("movie", "flick"), ("movie", "flick"), ("good", "decent")],
              ("cnn", "saliency"): [("movie", "film"), ("good", "decent")]}
    assert model_policy(events, None) == [("movie", "flick", 3), ("good", "decent", 2)]
    readable = {"film", "decent"}.__contains__
    assert model_policy(events, readable) == [("good", "decent", 2), ("movie", "film", 1)]


def test_the_draw_probe_tells_seeded_noise_from_float_rounding():
    from benchmark.attacks.live import same_output

    a = np.array([0.5, -1.25, 3.0])
    assert same_output(a, a * (1 + 1e-7)) and same_output(np.zeros(3), np.zeros(3))
    assert not same_output(a, a + 0.01) and not same_output(a, a[:2])
