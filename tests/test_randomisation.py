"""The randomisation test's harness side (issue #45): a randomised copy of the model under test (Adebayo et al.
2018, Sanity Checks for Saliency Maps, NeurIPS 2018), the similarity of two maps, and the randomised-model run —
an ordinary evaluation through the runner, cached, resumable, verified like any Result."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from benchmark.errors import NotRandomisable, ResourceError, XaibenchError
from benchmark.models.variants.randomise import RANDOM_SEED, owning_modules, randomised, randomised_spec, weights_digest
from benchmark.variant_runs.randomisation import SIMILARITY_KEYS, randomisation_of, unrandomisable
from benchmark.resources import load_resource
from benchmark.store.results import Result
from benchmark.runner import evaluate
from benchmark.variant_runs.similarity import compare, spearman, spearman_abs, ssim_abs
from benchmark.tracks import get_track
from benchmark.verify import verify_result

RUN = dict(track="aixi", resource="aixi/shape-ssin", limit=4, batch_size=4, sandbox="none", timeout_s=0)


def _cnn(home):
    res = load_resource("aixi/shape-ssin")
    trk = get_track("aixi")
    spec, info = trk.build_model(res, "cnn", trk.instances(res, "validation", 2))
    return spec, info


def test_full_randomisation_redraws_every_layer_and_is_reproducible(home):
    spec, _info = _cnn(home)
    model = spec.load()
    before = weights_digest(model)
    a, b = randomised(model), randomised(model)
    assert weights_digest(a) == weights_digest(b) != before  # the same seed gives the same weights
    assert weights_digest(model) == before  # the trained model is left as it was
    assert weights_digest(randomised(model, RANDOM_SEED + 1)) != weights_digest(a)
    for (name, p), q in zip(model.module.named_parameters(), a.module.parameters()):
        assert not torch.equal(p, q), name  # every layer re-initialised
    x = np.random.default_rng(0).uniform(size=(3, 128, 128)).astype(np.float32)
    assert not np.allclose(model.predict(x), a.predict(x))  # and predicts with its own weights


def test_the_cascade_randomises_the_last_k_layers_only(home):
    spec, _info = _cnn(home)
    model = spec.load()
    layers = owning_modules(model.module)
    top1 = randomised(model, top=1)
    for k, (old, new) in enumerate(zip(layers, owning_modules(top1.module))):
        same = all(torch.equal(p, q) for p, q in zip(old.parameters(recurse=False), new.parameters(recurse=False)))
        assert same == (k < len(layers) - 1), k  # only the output layer changed
    full = randomised(model, top=len(layers))
    assert all(not torch.equal(p, q) for p, q in zip(model.module.parameters(), full.module.parameters()))
    with pytest.raises(XaibenchError, match="integer ≥ 1"):
        randomised(model, top=0)


def test_the_function_model_redraws_its_pattern_weights(home):
    res = load_resource("aixi/shape-ssin")
    trk = get_track("aixi")
    inst = trk.instances(res, "validation", 3)
    spec, info = trk.build_model(res, "function", inst)
    new, new_info = randomised_spec(spec, info)
    assert new.served is not spec.served and new_info["hash"] != info["hash"] and new_info["name"] == "function"
    assert new_info["randomisation"] == {"seed": RANDOM_SEED, "variant": "full", "top": None, "of": info["hash"]}
    outs = []
    for m in (spec.served, new.served):
        m.focus(inst.ids[0])
        outs.append(m.predict(inst.inputs[:1]))
    assert not np.allclose(*outs)  # the weights behind the counts changed
    with pytest.raises(NotRandomisable, match="no layers"):
        randomised_spec(spec, info, top=1)


def test_a_black_box_without_weights_cannot_be_randomised():
    from benchmark.models.spec import ModelSpec
    from benchmark.tracks.trust import NoModel

    spec = ModelSpec(name="imported", modality="text", white_box=False, served=NoModel("trust/x", 2))
    assert "black box" in unrandomisable(spec)
    with pytest.raises(NotRandomisable, match="no weights to randomise"):
        randomised_spec(spec, {"hash": "x"})


def test_a_loaded_copy_whose_weights_differ_from_the_harness_is_refused(home):
    spec, info = _cnn(home)
    new, new_info = randomised_spec(spec, info)
    assert new.randomisation["sha256"][:16] == new_info["hash"] and new.wire()["randomisation"] == new.randomisation
    assert weights_digest(new.load()) == new.randomisation["sha256"]  # loaded (as in the worker) and checked
    new.randomisation = {**new.randomisation, "sha256": "0" * 64}
    with pytest.raises(ResourceError, match="differ from the harness's"):
        new.load()


def test_similarity_by_hand():
    a = np.array([[0.0, 1.0], [2.0, 3.0]])
    assert spearman_abs(a, a) == 1.0 and spearman(a, 5 - a) == -1.0 and spearman_abs(a, -a) == 1.0
    # ties share their mean rank: ranks 1, 2, 3, 4 and 2, 1, 3.5, 3.5 → ρ = 3.5 / √(5 · 4.5)
    b = np.array([[1.0, 0.0], [2.0, 2.0]])
    assert spearman(a, b) == pytest.approx(3.5 / np.sqrt(22.5)) == pytest.approx(spearmanr(a.ravel(), b.ravel())[0])
    assert np.isnan(spearman(a, np.ones((2, 2))))
    img = np.random.default_rng(0).uniform(size=(16, 16))
    assert ssim_abs(img, 3 * img) == pytest.approx(1.0)  # each map scaled to [0, 1] by its own maximum
    assert ssim_abs(img, np.random.default_rng(1).uniform(size=(16, 16))) < 0.3
    assert np.isnan(ssim_abs(np.zeros((16, 16)), img)) and np.isnan(ssim_abs(a, a))  # all zero; under 3 pixels wide
    m = np.arange(64.0).reshape(8, 8)
    c = compare([m, m, None, m, np.ones((8, 8)), m], [m, None, m, np.ones(3), m, np.zeros((8, 8))], image=True)
    assert c.codes == ["", "failed-randomised", "failed-trained", "shape", "constant-trained", "constant-randomised"]
    assert c.values["spearman"][0] == 1.0 and c.values["ssim"][0] == pytest.approx(1.0)
    assert np.isnan(c.values["spearman"][1:]).all() and c.counts()["failed-trained"] == 1
    text = compare([np.array([1.0, 2.0, 3.0])], [np.array([3.0, 2.0, 1.0])], image=False)
    assert set(text.values) == {"spearman", "spearman-signed"} and text.values["spearman-signed"][0] == -1.0


def test_the_randomised_run_is_an_evaluation_paired_with_the_trained_one(home, tmp_path):
    out = tmp_path / "res"
    with pytest.raises(XaibenchError, match="evaluate the submission on the trained model first"):
        evaluate("occlusion", model="function", results_dir=out, randomised=True, **RUN)
    trained = evaluate("occlusion", model="function", results_dir=out, **RUN)
    assert randomisation_of(trained) is None and trained.model["white_box"] is False
    assert trained.submission["capabilities"] == {"modalities": ["image", "text"], "needs_gradients": False,
                                                  "needs_segments": False}
    r = evaluate("occlusion", model="function", results_dir=out, randomised=True, **RUN)
    assert r.path.parent.name == f"randomised-s{RANDOM_SEED}" and r.path.name == trained.path.name
    assert randomisation_of(r)["of"] == trained.model["hash"] != r.model["hash"]
    assert r.extra["randomisation"]["trained_outputs_sha256"] == trained.integrity["outputs_sha256"]
    sims = r.scores().arrays
    assert set(SIMILARITY_KEYS.values()) <= set(sims) and np.isfinite(sims["sim-spearman-signed"]).all()
    # occlusion follows the redrawn pattern weights: its signed maps change, and its KL gets worse
    assert sims["sim-spearman-signed"].mean() < 0.5 and r.metrics["kl"].mean > trained.metrics["kl"].mean
    # cached and resumable: a second run explains nothing
    again = evaluate("occlusion", model="function", results_dir=out, randomised=True, **RUN)
    assert again.provenance["isolation"]["worker_starts"] == 0 and again.integrity == {
        **again.integrity, "outputs_sha256": r.integrity["outputs_sha256"]}
    # verified like any Result: re-scored with the randomised model, the similarity recomputed
    assert verify_result(again.path).ok, verify_result(again.path).problems
    data = json.loads(again.path.read_text())
    stored = Result.from_dict(data)
    arrays = stored.scores().arrays
    arrays["sim-spearman-signed"][0, 0] = 0.99
    from benchmark.store.results import pack_scores

    ok = stored.scores().ok[0]
    stored.instance_scores = pack_scores([(0, {k: v[0] for k, v in arrays.items()}, ok)])
    stored.save(again.path)  # re-signed: only re-computing the similarity finds it
    v = verify_result(again.path)
    assert not v.ok and any("sim-spearman-signed" in p for p in v.problems), v.problems


def test_the_cli_runs_the_randomisation_test_after_the_trained_model(home, tmp_path):
    from typer.testing import CliRunner

    from benchmark.cli import app

    res = tmp_path / "res"
    argv = ["evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
            "--limit", "3", "--sandbox", "none", "--results", str(res)]
    got = CliRunner().invoke(app, argv)
    assert got.exit_code == 0, got.output
    assert "uniform (randomised model)" in got.output and "similarity to the trained model's maps" in got.output
    assert len(list(res.rglob(f"randomised-s{RANDOM_SEED}/*.json"))) == 1
    got = CliRunner().invoke(app, [*argv, "--no-randomisation", "--overwrite"])
    assert got.exit_code == 0 and "randomised model" not in got.output


def test_a_randomised_run_over_the_first_instances_is_paired_with_their_prefix(home, tmp_path):
    """`randomisation_limit`: the randomised run explains only the first N of the trained run's instances (the
    verdicts hold on fewer instances than a board ranks); the board pairs it with their prefix, verify checks it."""
    from leaderboard.boards import boards

    out = tmp_path / "res"
    run = {**RUN, "limit": 6, "batch_size": 6}
    for s in ("foreground", "centre-prior"):  # the board's built-in data priors: its floor (issue #58)
        evaluate(s, model="function", results_dir=out, **run)
    for s in ("occlusion", "random"):
        evaluate(s, model="function", results_dir=out, **run)
        r = evaluate(s, model="function", results_dir=out, randomised=True, randomisation_limit=3, **run)
    assert r.n_instances == 3 and r.extra["randomisation"]["trained_result"] == "random@6-" + \
        r.extra["randomisation"]["trained_ids_sha256"][:8] + ".json"
    assert verify_result(r.path).ok, verify_result(r.path).problems
    found = [Result.load(p) for p in out.rglob("*.json")]
    (b,) = boards(found)
    occ = next(x for x in b.rows if x.submission == "occlusion")
    assert occ.sanity.status == "model-sensitive" and occ.sanity.compared == 3 and occ.rank == 1
    with pytest.raises(XaibenchError, match="randomisation_limit must be an integer"):
        evaluate("random", model="function", results_dir=out, randomised=True, randomisation_limit=0, **run)
