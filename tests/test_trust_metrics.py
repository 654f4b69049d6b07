"""Trust metrics (SPECS §1.10) on hand-built tables, and Naive from the Fig. 6 bins (SPECS §1.11)."""

import math

import numpy as np
import pytest

from benchmark.metrics import METRICS
from benchmark.metrics.trust import (FIG6_BINS, TRUST_METRICS, confusion, naive_from_bins, trust_scores,
                                     trust_values)

# Table 3 Naive rows: Acc, Pre, Sen, F1, Spec, G-mean
TABLE3_NAIVE = {
    "dongs": (0.771, 0.893, 0.836, 0.864, 0.340, 0.533),
    "cams": (0.615, 0.768, 0.543, 0.636, 0.732, 0.631),
    "hatexplain": (0.640, 0.942, 0.645, 0.765, 0.605, 0.624),
    "ours": (0.861, 0.925, 0.925, 0.925, 0.105, 0.312),
}


@pytest.mark.parametrize("dataset", sorted(TABLE3_NAIVE))
def test_naive_from_fig6_reproduces_table3(dataset):
    counts = naive_from_bins(FIG6_BINS[dataset], theta_conf=0.9)
    s = trust_scores(counts)
    for m, want in zip(TRUST_METRICS, TABLE3_NAIVE[dataset]):
        assert s[m] == pytest.approx(want, abs=1e-3 + 1e-9), (dataset, m, s[m])


def test_naive_hatexplain_table_by_hand():
    # conf ≥ 0.9 bin: 1934 trustworthy (TP), 120 untrustworthy (FP); below: 270+279+518 = 1067 FN, 184 TN
    assert naive_from_bins(FIG6_BINS["hatexplain"]).tolist() == [1934, 120, 1067, 184]
    with pytest.raises(ValueError, match="bin edge"):
        naive_from_bins(FIG6_BINS["hatexplain"], theta_conf=0.85)


def test_six_metrics_hand_built_table():
    # Dong's TOKI-lime row of Table 3: TP 303, FP 17, FN 8, TN 30
    s = trust_scores([303, 17, 8, 30])
    pre, sen, spec = 303 / 320, 303 / 311, 30 / 47
    assert s["acc"] == pytest.approx(333 / 358)
    assert s["pre"] == pytest.approx(pre)
    assert s["sen"] == pytest.approx(sen)
    assert s["f1"] == pytest.approx(2 * pre * sen / (pre + sen))
    assert s["spec"] == pytest.approx(spec)
    assert s["gmean"] == pytest.approx(math.sqrt(sen * spec))
    # the paper's rounded row
    for m, want in zip(TRUST_METRICS, (0.930, 0.947, 0.974, 0.960, 0.638, 0.789)):
        assert s[m] == pytest.approx(want, abs=1e-3)
    assert s.undefined == {}


def test_verdicts_vs_labels_and_sklearn_crosscheck():
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    judged = np.array([1, 1, 0, 0, 1, 0, 1, 1], bool)
    truth = np.array([1, 0, 1, 0, 1, 0, 1, 0], bool)
    assert confusion(judged, truth).tolist() == [3, 2, 1, 2]
    s = trust_scores(judged=judged, truth=truth)
    assert s["acc"] == pytest.approx(accuracy_score(truth, judged))
    assert s["pre"] == pytest.approx(precision_score(truth, judged))
    assert s["sen"] == pytest.approx(recall_score(truth, judged))
    assert s["f1"] == pytest.approx(f1_score(truth, judged))
    assert s["spec"] == pytest.approx(recall_score(~truth, ~judged))


def test_one_class_test_split_is_undefined_not_nan_averaged():
    # every ground-truth prediction is trustworthy: Spec and G-mean undefined, reported with a reason
    s = trust_scores(judged=[True, False, True], truth=[True, True, True])
    assert s["acc"] == pytest.approx(2 / 3) and s["sen"] == pytest.approx(2 / 3) and s["pre"] == 1.0
    assert s["spec"] is None and s["gmean"] is None
    assert "no untrustworthy" in s.undefined["spec"] and "Spec" in s.undefined["gmean"]
    # oracle says untrustworthy everywhere: Pre undefined, F1 = 0 (2TP+FP+FN > 0), Sen = 0
    s = trust_scores([0, 0, 5, 3])
    assert s["pre"] is None and s["f1"] == 0.0 and s["sen"] == 0.0 and s["gmean"] == 0.0
    # empty table: everything undefined
    s = trust_scores([0, 0, 0, 0])
    assert all(v is None for v in s.values.values())
    # arrays: NaN by default, SPECS §0's 0.0 on request
    v = trust_values(np.array([[1, 0, 0, 0], [0, 0, 0, 1]]))
    assert np.isnan(v["spec"][0]) and v["spec"][1] == 1.0 and np.isnan(v["sen"][1])
    assert trust_values([1, 0, 0, 0], zero_division=0.0)["spec"] == 0.0


def test_registered_metrics():
    for m in TRUST_METRICS:
        met = METRICS.get(f"trust-{m}")
        assert met.direction == "higher" and met.pooled and met.family == "trust"
    acc = METRICS.get("trust-acc")
    assert acc(np.array([True, False]), np.array([True, True])).tolist() == [1.0, 0.0]
    # (N, 4) counts accepted as well
    assert METRICS.get("trust-pre")(np.array([[1, 0, 0, 0], [0, 1, 0, 0]]), None).tolist() == [1.0, 0.0]
    with pytest.raises(ValueError):
        confusion([True, False], [True])
