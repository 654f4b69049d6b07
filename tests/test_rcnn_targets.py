"""Lei's targets for a trained RCNN (benchmark.models.rcnn_targets): 10–13 % of the dev tokens selected and
precision ≥ 90 % against the human rationales; every failure named, in the AIXI floor's keys."""

from __future__ import annotations

import pytest

from benchmark.models.rcnn_targets import TARGETS, Targets, check, describe

GOOD = {"precision": 0.93, "precision_macro": 0.94, "recall": 0.6, "selection_rate": 0.12, "n": 994}


def test_a_model_within_the_targets_meets_them():
    sel, q = check(0.115, GOOD)
    assert sel["meets_targets"] is True and sel["failed"] == []
    assert (sel["dev_selection_rate"], sel["precision"], sel["recall"], sel["n_annotated"]) == (0.115, 0.93, 0.6, 994)
    assert q == {"metric": "rationale precision", "value": 0.93, "floor": 0.9, "meets_floor": True,
                 "message": q["message"]}
    assert "11.5 % of the dev tokens selected (target 10–13 %), precision 93.0 % (target ≥ 90 %) and recall " \
           "60.0 % against the 994 human rationales" in q["message"] == "the RCNN meets Lei et al.'s behaviour: " \
           + describe(sel)
    assert check(0.10, GOOD)[0]["meets_targets"] and check(0.13, {**GOOD, "precision": 0.90})[0]["meets_targets"]


@pytest.mark.parametrize("rate, precision, failed, metric, floor, words", [
    (0.027, 0.948, ["dev selection rate"], "dev selection rate", 0.10, "selects 2.7 % of the dev tokens"),
    (0.20, 0.95, ["dev selection rate"], "dev selection rate (ceiling)", 0.13, "selects 20.0 % of the dev tokens"),
    (0.11, 0.85, ["rationale precision"], "rationale precision", 0.90,
     "precision against the human rationales is 85.0 %"),
    (0.05, 0.5, ["dev selection rate", "rationale precision"], "dev selection rate", 0.10, "; its precision"),
])
def test_each_failure_is_named(rate, precision, failed, metric, floor, words):
    sel, q = check(rate, {**GOOD, "precision": precision})
    assert sel["failed"] == failed and sel["meets_targets"] is False
    assert (q["metric"], q["floor"], q["meets_floor"]) == (metric, floor, False)
    assert q["message"].startswith("the RCNN does not behave like Lei et al.'s: ") and words in q["message"]


def test_unmeasured_figures_fail_and_targets_are_options():
    sel, q = check(None, None)
    assert sel["failed"] == ["dev selection rate", "rationale precision"] and "not measured" in q["message"]
    sel, _ = check(float("nan"), GOOD)
    assert sel["failed"] == ["dev selection rate"]
    loose = Targets(selection_min=0.02, selection_max=0.2, precision_min=0.8)
    assert check(0.027, GOOD, loose)[0]["meets_targets"] and not check(0.027, GOOD)[0]["meets_targets"]
    assert TARGETS.as_dict() == {"selection_rate": [0.10, 0.13], "precision": 0.90}
