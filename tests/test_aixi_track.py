"""The AIXI track end to end on tiny real resources: paper parity properties and controls."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark.metrics.saliency import EPS
from benchmark.resources import load_resource
from benchmark.runner import evaluate
from benchmark.tracks import get_track


def test_ground_truth_copy_scores_zero(home):
    trk = get_track("aixi")
    res = load_resource("aixi/shape-suum")
    inst = trk.instances(res, "validation")
    pos = list(range(len(inst)))
    scores = trk.score([inst.truths["gt"][p] for p in pos], inst.truths, pos)
    ok = np.isfinite(scores["kl"])
    assert ok.sum() > 0
    assert np.allclose(scores["kl"][ok], 0, atol=1e-9)
    assert np.allclose(scores["emd"][ok], 0, atol=1e-9)
    assert np.allclose(scores["emd-paper"][ok], 0, atol=1e-9)
    # excluded = images without any weighted object (empty ground truth)
    empty = inst.truths["gt"].reshape(len(inst), -1).sum(1) == 0
    assert np.array_equal(~ok, empty)


@pytest.mark.parametrize("config", ["shape-ssin", "shape-suum", "color-ssin", "color-suum"])
def test_exhaustive_lime_on_function_beats_uniform_and_minimal_samples(home, tmp_path, config):
    """Paper parity (SPECS §3.8-3.9), on the normalisation the parity experiment names: min-max."""
    kw = dict(track="aixi", resource=f"aixi/{config}", model="function", results_dir=tmp_path,
              metric_params={"normalisation": "minmax"})
    full = evaluate("lime-exhaustive", **kw)
    one = evaluate("lime-exhaustive", params={"n_samples": 1}, **kw)
    uni = evaluate("uniform", **kw)
    assert full.n_failed == 0 and full.extra["normalisation"] == "minmax"
    for metric in ("kl", "emd", "emd-paper"):
        assert full.metrics[metric].mean < 0.6 * uni.metrics[metric].mean, metric
        assert full.metrics[metric].mean < one.metrics[metric].mean, metric
    # n = 1 (the all-ones sample only) gives a constant map: under min-max exactly the uniform control (Table 1's
    # baseline), every map flagged; under the positive part it has no mass at all and scores the worst there is
    assert one.metrics["kl"].mean == pytest.approx(uni.metrics["kl"].mean, rel=1e-9)
    assert one.extra["empty_maps"]["count"] == one.metrics["kl"].n + one.metrics["kl"].excluded
    board = evaluate("lime-exhaustive", params={"n_samples": 1}, **{**kw, "metric_params": {}})
    assert board.extra["normalisation"] == "positive" and board.metrics["kl"].mean > 20 > 4 * uni.metrics["kl"].mean
    # the paper's Table 2 (SPECS §3.9) has EMD(4x4) 0.04-0.06 and KL 0.2-1.5 for these cells; at 500
    # validation images we measure EMD(4x4) 0.02-0.15 and KL 0.001-0.08 (same order / better)
    assert full.metrics["emd-paper"].mean < 0.25
    assert full.metrics["kl"].mean < 0.5


def test_function_model_counts_visible_objects(home):
    trk = get_track("aixi")
    res = load_resource("aixi/shape-suum")
    inst = trk.instances(res, "validation")
    spec, info = trk.build_model(res, "function", inst)
    # built from ground truth: served by the harness, one explained instance at a time
    assert spec.served is not None and spec.loader is None and spec.per_instance and not spec.white_box
    model = spec.served
    labels = res.table("validation", columns=["label"]).column("label").to_numpy()

    def predict(n, x):
        model.focus(inst.ids[n])
        return model.predict(x)[:, 0]

    assert np.allclose([predict(n, inst.inputs[n : n + 1])[0] for n in range(len(inst))], labels, atol=1e-6)
    # hiding every object gives the function of zero counts; hiding one object drops its pattern's term
    assert np.allclose([predict(n, np.zeros_like(inst.inputs[n : n + 1]))[0] for n in range(len(inst))], 0)
    n = int(np.argmax([len(p) for p in inst.truths["patterns"]]))
    x = inst.inputs[n].copy()
    model.focus(inst.ids[n])
    x[inst.segments[n] == 1] = 0
    pattern = int(inst.truths["patterns"][n][0])
    drop = labels[n] - model.predict(x[None])[0, 0]
    assert drop == pytest.approx((1 / 2, 1 / 4, 1 / 6)[pattern] / 2, abs=1e-6)


def test_the_function_model_needs_the_instances_it_explains():
    """`build_model(..., instances=None)` (what a caller without instances passes) is one clear error for the
    AIXI function model, which is built from those instances' ground truth."""
    from types import SimpleNamespace

    from benchmark.tracks import get_track

    resource = SimpleNamespace(name="aixi/shape-ssin", config="shape-ssin", params={})
    with pytest.raises(ValueError, match="built from the instances it explains"):
        get_track("aixi").build_model(resource, "function", None)


BAD = """
out = []
for i, x in zip(batch.ids, batch.inputs):
    s = -1.0 - np.asarray(x, dtype=np.float32)  # all negative, not constant
    kind = int(i.rsplit("-", 1)[-1]) % 4  # by the instance's number: the function model explains one per call
    if kind == 1:
        s = np.zeros_like(s)
    elif kind == 2:
        s[64, 64] = 2.0  # a single positive pixel
    elif kind == 3:
        s[0, 0] = np.nan
    out.append(s)
return out
"""


@pytest.mark.parametrize("normalisation", ["positive", "absolute", "minmax"])
def test_bad_maps_through_the_runner_score_or_fail_with_a_reason(home, tmp_path, normalisation):
    """Issue #55's bad input through `evaluate`: an all-negative, an all-zero, a single-positive-pixel and a NaN map
    in turn. The NaN map is a recorded failure with its reason; the others have defined scores, and the maps with
    nothing to normalise score the worst KL of their instance (or, under min-max, the uniform map's), counted in
    the Result beside the normalisation that scored it."""
    from tests.conftest import write_submission

    sub = write_submission(tmp_path / "bad", "bad-maps", BAD)
    params = {} if normalisation == "positive" else {"normalisation": normalisation}
    r = evaluate(sub, track="aixi", resource="aixi/shape-ssin", model="function", limit=8, batch_size=8,
                 results_dir=tmp_path / "r", metric_params=params)
    assert r.n_failed == 2 and all("non-finite" in f.reason for f in r.failures)
    assert r.extra["normalisation"] == normalisation
    sc, ok = r.scores().seed(0)
    kl_ = sc["kl"][ok]
    kind = np.arange(8)[ok] % 4
    defined = np.isfinite(kl_)  # images with an empty ground truth are excluded whatever the map
    assert defined.sum() >= 4 and np.isfinite(sc["emd"][ok][defined]).all()
    empty = {"positive": (0, 1), "absolute": (1,), "minmax": (1,)}[normalisation]
    assert r.extra["empty_maps"]["count"] == int(np.isin(kind, empty).sum())
    worst = np.isin(kind, empty) & defined
    if normalisation == "minmax":  # the uniform map (SPECS §3.7), flagged: the uniform control's score
        uni = evaluate("uniform", track="aixi", resource="aixi/shape-ssin", model="function", limit=8,
                       results_dir=tmp_path / "r", metric_params=params)
        usc, uok = uni.scores().seed(0)
        np.testing.assert_allclose(kl_[worst], usc["kl"][ok][worst], rtol=1e-9)
    else:
        # the worst KL of the instance: Σ P_G log(ε + P_G/ε), nothing is higher
        pg = inst_pg(r, ok)
        np.testing.assert_allclose(kl_[worst], [(p * np.log(EPS + p / EPS)).sum() for p in pg[worst]], rtol=1e-9)
        assert (kl_[worst] > 20).all() and (kl_[defined] <= np.array([(p * np.log(EPS + p / EPS)).sum()
                                                                      for p in pg[defined]]) + 1e-9).all()


def inst_pg(r, ok) -> np.ndarray:
    """P_G (flattened, with zeros) of the instances of Result `r` that did not fail."""
    trk = get_track("aixi")
    inst = trk.instances(load_resource(r.resource["name"]), "validation", r.n_instances)
    g = inst.truths["gt"].reshape(r.n_instances, -1).astype(np.float64)[ok]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(g / g.sum(1, keepdims=True))


def test_metric_options_are_checked_and_older_results_name_min_max():
    trk = get_track("aixi")
    from benchmark.errors import XaibenchError

    trk.check_metric_params({"normalisation": "absolute"})
    with pytest.raises(XaibenchError, match="normalisation must be one of"):
        trk.check_metric_params({"normalisation": "softmax"})
    with pytest.raises(XaibenchError, match="attribution is retired"):
        trk.check_metric_params({"attribution": "absolute"})
    # what a re-score uses: a Result that names its normalisation (in extra) keeps its own options; one written
    # before the option existed was scored min-max, with its `attribution` if it had one
    assert trk.metric_params_of({"normalisation": "positive"}) == {}
    assert trk.metric_params_of({"normalisation": "minmax", "metric_params": {"normalisation": "minmax"}}) == \
        {"normalisation": "minmax"}
    assert trk.metric_params_of({}) == {"normalisation": "minmax"}
    assert trk.metric_params_of({"metric_params": {"attribution": "absolute"}}) == \
        {"attribution": "absolute", "normalisation": "minmax"}


def test_older_attribution_results_rescore_as_they_were_scored(home):
    """`attribution=absolute` (before `normalisation`): |S| under min-max, exactly — not |S|/Σ|S|, which differs
    where |S| has no zero pixel."""
    from benchmark.metrics.saliency import kl

    trk = get_track("aixi")
    inst = trk.instances(load_resource("aixi/shape-ssin"), "validation", 6)
    rng = np.random.default_rng(0)
    maps = [inst.truths["gt"][p] * rng.choice([-1, 1]) + 0.01 + 0.02 * rng.random((128, 128)) for p in range(6)]
    pos = list(range(6))
    old = trk.score(maps, inst.truths, pos, attribution="absolute")
    want = kl(np.abs(np.stack(maps).astype(np.float32)), inst.truths["gt"][:6], normalisation="minmax")
    np.testing.assert_array_equal(old["kl"], want)
    assert not np.allclose(old["kl"], trk.score(maps, inst.truths, pos, normalisation="absolute")["kl"],
                           equal_nan=True)
    assert set(old["normalisation"]) == {0.0}  # min-max's code


def test_a_result_from_before_the_option_verifies_as_min_max(home, tmp_path):
    """A Result written before `normalisation` existed (no `extra.normalisation`, no per-instance codes) was scored
    min-max; `verify` re-scores it so, and it checks out — while the same file re-scored under the board's default
    would not (the random control's maps have no zero pixel: min-max and the positive part differ)."""
    import json

    from benchmark.store.integrity import sign
    from benchmark.store.results import Result
    from benchmark.verify import verify_result

    kw = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=5, results_dir=tmp_path / "r")
    r = evaluate("random", metric_params={"normalisation": "minmax"}, **kw)
    (path,) = list((tmp_path / "r").rglob("*.json"))
    d = json.loads(path.read_text())
    for key in ("metric_params", "normalisation", "empty_maps"):
        d["extra"].pop(key)
    for key in ("normalisation", "empty-map"):
        d["instance_scores"]["arrays"].pop(key)
    d["submission"]["name"] = "random"
    d["integrity"]["signature"] = sign(d)
    path.write_text(json.dumps(d))
    assert Result.load(path).status == "signed"
    assert verify_result(path).ok, verify_result(path).problems
    board = evaluate("random", **kw)
    assert board.metrics["kl"].mean != pytest.approx(r.metrics["kl"].mean, rel=1e-6)


@pytest.mark.slow(reason="two submissions on the published function and a hidden copy, scored three ways (12 runs)")
def test_the_normalisation_study_scores_each_map_once_per_normalisation(home, tmp_path):
    """`generators.aixi.experiments.normalisation_study` (docs/aixi.md, Signed maps): through `evaluate`, every
    submission on the published function and its copies under each normalisation, the explanations computed once
    (one output cache per submission and model copy), compared with the better data prior on the copies; and
    `read_study` reads the same cells back from the Results."""
    from generators.aixi.experiments import normalisation_study, read_study
    from generators.cli import _with_params

    cells = normalisation_study(("shape-ssin",), ("foreground", "lime-exhaustive"), limit=6, draws=1, hidden_limit=4,
                                results_dir=tmp_path / "study")
    assert {(c.submission, c.normalisation) for c in cells} == {(s, n) for s in ("foreground", "lime-exhaustive")
                                                                  for n in ("minmax", "positive", "absolute")}
    by = {(c.submission, c.normalisation): c for c in cells}
    assert all(c.floor == "foreground" for c in cells) and by["foreground", "positive"].delta is None
    lime = by["lime-exhaustive", "positive"]
    assert lime.delta == pytest.approx(by["foreground", "positive"].hidden_kl - lime.hidden_kl)
    assert lime.delta_ci is not None and lime.delta_ci[0] <= lime.delta <= lime.delta_ci[1]
    # exhaustive LIME has no negative value on the published SSIN function: min-max and the positive part agree
    assert by["lime-exhaustive", "minmax"].kl == pytest.approx(lime.kl, rel=1e-9)
    from benchmark.store.results import load_results

    found, _ = load_results(tmp_path / "study")
    lime_runs = [r for r in found if r.submission["base"] == "lime-exhaustive"]
    assert len(lime_runs) == 6  # 3 normalisations × (published, copy 0), each map explained once per model copy:
    assert len({r.extra["cache"] for r in lime_runs}) == 2  # one output cache each, shared by the normalisations
    assert {r.extra["normalisation"] for r in lime_runs} == {"minmax", "positive", "absolute"}
    again = {(c.submission, c.normalisation): c for c in read_study(tmp_path / "study", draws=1)}
    assert again.keys() == by.keys() and all(again[k].hidden_kl == by[k].hidden_kl for k in by)
    assert _with_params("tests/x[form=shared,n=2]") == ("tests/x", {"form": "shared", "n": 2})
    assert _with_params("lime-image") == "lime-image"
