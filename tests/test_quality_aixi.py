"""Issue #12: a model under test that has not learned its function is marked. The session's tiny AIXI CNN
(shape-ssin, one epoch on 96 images) is far below the quality floor (validation R² 0.8): its model info,
every Result on it and its leaderboard board say so. The training recipe's schedule option is checked."""

from __future__ import annotations

import pytest

from benchmark.models.base import load_model
from benchmark.resources import load_resource
from benchmark.runner import evaluate
from benchmark.tracks import get_track
from benchmark.tracks.aixi import QUALITY_FLOOR, model_quality
from leaderboard.boards import boards


def test_model_quality_rule():
    assert QUALITY_FLOOR == {"r2": 0.8, "accuracy": 0.9}
    assert model_quality({"loss": 0.01, "r2": 0.85})["meets_floor"] is True
    assert model_quality({"r2": 0.79999})["meets_floor"] is False
    assert model_quality({"loss": 0.2, "accuracy": 0.89}) == {"metric": "accuracy", "value": 0.89, "floor": 0.9,
                                                              "meets_floor": False}
    assert model_quality({"loss": 0.2}) == {}


def test_tiny_cnn_is_marked_below_the_floor_in_model_info_result_and_board(home, tmp_path):
    res = load_resource("aixi/shape-ssin")
    _, config = load_model(res.model_dir())
    q = config["quality"]
    assert q["metric"] == "r2" and q["value"] == pytest.approx(config["validation"]["r2"])
    assert q["value"] < 0.8 and q["meets_floor"] is False
    assert res.meta["model"]["quality"] == q  # the resource's provenance records it too

    _, info = get_track("aixi").build_model(res, "cnn", None)
    assert info["quality"] == q
    result = evaluate("uniform", "aixi", "aixi/shape-ssin", model="cnn", limit=4, results_dir=tmp_path / "r")
    assert result.model["quality"]["meets_floor"] is False
    (board,) = boards([result])
    assert any("below its quality floor" in w and f"{q['value']:.3f}" in w for w in board.warnings)


def test_onecycle_recipe_is_recorded_and_refuses_unknown_schedules(home):
    from generators.aixi.train import TrainConfig, train_aixi

    val = train_aixi("aixi/color-suum", TrainConfig(epochs=2, batch_size=16, lr=3e-3, schedule="onecycle",
                                                    init_output_bias=True, max_train=32), overwrite=True)
    _, config = load_model(load_resource("aixi/color-suum").model_dir())
    assert config["recipe"]["schedule"] == "onecycle" and config["recipe"]["init_output_bias"] is True
    assert config["quality"]["value"] == pytest.approx(val["r2"])
    assert [h["epoch"] for h in config["history"]] == [1, 2]
    with pytest.raises(Exception, match="schedule"):
        train_aixi("aixi/color-suum", TrainConfig(epochs=1, schedule="cosine-ish"), overwrite=True)


def test_standardised_labels_are_folded_into_the_saved_model(home):
    """`standardize_labels` trains on (y − μ)/σ; the saved model must predict y itself: its validation R²,
    recomputed here from the saved weights, equals the recorded one (without the folding the predictions
    would be on the standardised scale and R² far below zero). The dropout rate is saved with the
    architecture and refused outside [0, 1)."""
    import numpy as np
    import torch

    from generators.aixi.train import TrainConfig, _load_split, train_aixi

    cfg = TrainConfig(epochs=2, batch_size=16, lr=3e-3, schedule="onecycle", standardize_labels=True, dropout=0.0,
                      max_train=48, augment_removal=0.5)
    val = train_aixi("aixi/color-suum", cfg, overwrite=True)
    res = load_resource("aixi/color-suum")
    module, config = load_model(res.model_dir())
    assert config["kwargs"]["dropout"] == 0.0 and module.drop1.p == 0.0
    assert config["recipe"]["standardize_labels"] is True and config["recipe"]["augment_removal"] == 0.5
    x, y = _load_split(res, "validation", None)
    with torch.no_grad():
        p = module.eval()(torch.from_numpy(x).float() / 255).squeeze(1).numpy()
    r2 = 1 - np.sum((p - y) ** 2) / np.sum((y - y.mean()) ** 2)
    assert r2 == pytest.approx(val["r2"], abs=1e-5)
    assert abs(float(p.mean()) - float(y.mean())) < 0.5 * float(y.std()) + 0.05  # label units, not z-scores
    with pytest.raises(Exception, match="dropout"):
        train_aixi("aixi/color-suum", TrainConfig(epochs=1, dropout=1.0), overwrite=True)


def test_removal_augmentation_removes_objects_and_recomputes_the_label(home):
    """`remove_objects`: the chosen images lose the pixels of exactly the objects whose label change the
    function accounts for; the others are untouched; the same generator seed gives the same batch."""
    import numpy as np

    from benchmark.models.aixi_function import IOTA_MAX, get_function
    from generators.aixi.train import _load_objects, _load_split, remove_objects

    res = load_resource("aixi/shape-ssin")
    x, y = _load_split(res, "train", 24)
    objects = _load_objects(res, 24)
    inst, pats, counts = objects
    fn = get_function("ssin")
    idx = np.arange(24)
    out, labels = remove_objects(x[idx], idx, objects, fn, IOTA_MAX["shape"], 1.0, np.random.default_rng(0))
    assert labels is not None and labels.shape == (24,)
    changed = 0
    for b in idx:
        gone = [j for j in range(1, len(pats[b]) + 1) if (out[b, 0][inst[b] == j] == 0).all()
                and (x[b, 0][inst[b] == j] > 0).any()]
        left = counts[b].copy()
        for j in gone:
            left[pats[b][j - 1]] -= 1
        assert labels[b] == pytest.approx(float(fn(left[None], IOTA_MAX["shape"])[0]), abs=1e-6)
        np.testing.assert_array_equal(out[b, 0][inst[b] == 0], x[b, 0][inst[b] == 0])  # background untouched
        changed += bool(gone)
    assert changed >= 6  # objects were removed (each with probability 1/2)
    assert np.any(labels != y[idx])
    again, labels2 = remove_objects(x[idx], idx, objects, fn, IOTA_MAX["shape"], 1.0, np.random.default_rng(0))
    assert np.array_equal(again, out) and np.array_equal(labels2, labels)
    same, none = remove_objects(x[idx], idx, objects, fn, IOTA_MAX["shape"], 0.0, np.random.default_rng(0))
    assert none is None and np.array_equal(same, x[idx])
