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
from leaderboard.rank import boards


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
