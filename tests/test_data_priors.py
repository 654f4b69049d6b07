"""Data priors are the floor (issue #50, item 2): the built-in controls `foreground` (image), `corpus-lexicon` and
`predicted-class-lexicon` (text), marked `data_prior` in their Results, and the lexicon asset they read — the
class log-odds of a text resource's training split, written by its generator (`generators.lexicon`) and handed to
the worker by the track (`Track.assets`).

The RCNN and robustness resources' lexicons: tests/test_rcnn_track.py, tests/test_robust_track.py."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmark.contracts import Batch
from benchmark.errors import SubmissionError
from benchmark.runner import capabilities_of, evaluate
from benchmark.submission import discover
from generators.lexicon import class_log_odds, write_lexicon

PRIORS = ("foreground", "corpus-lexicon", "predicted-class-lexicon", "centre-prior")


def test_the_data_priors_are_marked_controls_and_only_they_say_so():
    subs = discover()
    for name in PRIORS:
        assert subs[name].role == "control" and subs[name].data_prior, name
        assert capabilities_of(subs[name])["data_prior"] is True
    assert subs["corpus-lexicon"].needs_assets == subs["predicted-class-lexicon"].needs_assets == ["lexicon"]
    # every other submission's Results record what they recorded before (a results repository compares them)
    assert capabilities_of(subs["uniform"]) == {"modalities": ["image", "text"], "needs_gradients": False,
                                                "needs_segments": False}
    # the published ground truth (issue #58): a data prior that is a reference on the published model (a ceiling)
    # and a floor on its hidden copies, handed its asset alone (tests/test_floors.py)
    assert subs["published-truth"].role == "reference" and subs["published-truth"].data_prior
    assert subs["published-truth"].needs_assets == ["published-truth"]
    assert not any(s.data_prior for n, s in subs.items() if n not in (*PRIORS, "published-truth"))
    why = subs["corpus-lexicon"].supports("text", True, False)
    assert why is not None and "needs the 'lexicon' asset" in why
    assert subs["corpus-lexicon"].supports("text", True, False, ["lexicon"]) is None


def test_class_log_odds_by_hand(tmp_path):
    docs = [["good", "film"], ["good", "good"], ["bad", "film"]]
    odds, counts = class_log_odds(docs, [1, 1, 0], alpha=1.0)
    # document frequencies: class 1 good 2, film 1 (N₁ = 3); class 0 bad 1, film 1 (N₀ = 2); |V| = 3
    assert odds == pytest.approx({"good": math.log(3 / 6) - math.log(1 / 5), "film": math.log(2 / 6) - math.log(2 / 5),
                                  "bad": math.log(1 / 6) - math.log(2 / 5)})
    assert counts == {"documents_class_0": 1, "documents_class_1": 2, "vocabulary": 3}
    recipe = write_lexicon(tmp_path, "x", docs, [1, 1, 0], classes=("neg", "pos"), target="label", alpha=1.0)
    data = json.loads((tmp_path / "lexicon" / "x" / "log_odds.json").read_text())
    assert data["recipe"] == recipe and recipe["alpha"] == 1.0 and recipe["threshold"] is None
    assert data["log_odds"]["good"] == pytest.approx(math.log(2.5), abs=1e-6)
    with pytest.raises(ValueError, match="both classes"):
        class_log_odds(docs, [1, 1, 1])


def test_foreground_is_the_objects_and_zero_on_the_background(home):
    """On the tiny AIXI-Shape and AIXI-Color resources: > 0 on every object pixel, 0 on every background pixel
    (AIXI draws on 0); 1 under the default rule ("mask"), the objects' intensity under "distance"; the model is
    never read."""
    from benchmark.resources import load_resource
    from submissions.foreground.explainer import ForegroundExplainer
    from benchmark.tracks import get_track

    for resource in ("aixi/shape-ssin", "aixi/color-ssin"):
        inst = get_track("aixi").instances(load_resource(resource), "validation")
        batch = Batch(ids=inst.ids, inputs=inst.inputs, segments=inst.segments)
        masks = ForegroundExplainer().explain(None, batch)
        distances = ForegroundExplainer(rule="distance").explain(None, batch)
        for x, seg, k, d in zip(inst.inputs, inst.segments, masks, distances):
            assert (d[seg > 0] > 0).all() and (d[seg == 0] == 0).all()
            assert np.array_equal(d, x) and np.array_equal(k, (seg > 0).astype(np.float32))


@pytest.fixture(scope="module")
def idc_board(idc_home, tmp_path_factory):
    """corpus-lexicon and predicted-class-lexicon on the tiny idc/mr-wga (Kim CNN, 20 documents), run through
    the runner in the sandbox, with the harness's copy of the model and the generator's lexicon beside them."""
    import os

    from benchmark.resources import load_resource
    from benchmark.tracks import get_track

    os.environ["XAIBENCH_HOME"] = str(idc_home)
    results = tmp_path_factory.mktemp("priors-results")
    trk, res = get_track("idc"), load_resource("idc/mr-wga")
    kw = dict(track="idc", resource="idc/mr-wga", model="cnn", limit=20, results_dir=results)
    runs = {n: evaluate(n, **kw) for n in ("corpus-lexicon", "predicted-class-lexicon")}
    inst = trk.instances(res, "test", 20)
    spec, _ = trk.build_model(res, "cnn", inst)
    lexicon = json.loads((trk.assets(res)["lexicon"] / "log_odds.json").read_text())
    return {"runs": runs, "instances": inst, "model": spec.load(), "lexicon": lexicon, "kw": kw, "home": idc_home}


@pytest.mark.slow(reason="foreground through the runner on the whole tiny AIXI-Shape split")
def test_a_data_prior_result_passes_the_results_repository_check(home, tmp_path):
    """`data_prior` is part of the capabilities a Result records, and the check a results repository applies to
    every sent Result (its capabilities = the rebuilt submission's) accepts it."""
    from leaderboard.repository.contents import check_result
    from leaderboard.repository.layout import result_path_of
    from leaderboard.repository.validate import _Context

    sub = discover()["foreground"]
    r = evaluate(sub, track="aixi", resource="aixi/shape-ssin", model="function", results_dir=tmp_path,
                 sandbox="none", timeout_s=0)
    assert r.n_failed == 0 and r.submission["capabilities"]["data_prior"] is True
    data = json.loads(Path(r.path).read_text())
    assert check_result(data, result_path_of(r), sub, _Context()) == []
    data["submission"]["capabilities"].pop("data_prior")
    (finding,) = check_result(data, result_path_of(r), sub, _Context())
    assert "submission.capabilities says" in finding


@pytest.mark.slow(reason="published-truth through the runner on the whole tiny AIXI-Shape split")
def test_a_published_truth_result_passes_the_results_repository_check(home, tmp_path):
    """The board offers the published ground truth to the built-in `published-truth` (`runner.board_assets`), so
    the repository's check accepts its Result: a contributor can send it (the reference's CNN boards lacked it
    when the check asked the track's own assets alone); a row on a board that offers it no answers is refused."""
    from leaderboard.repository import contents
    from leaderboard.repository.layout import result_path_of
    from leaderboard.repository.validate import _Context

    sub = discover()["published-truth"]
    r = evaluate(sub, track="aixi", resource="aixi/shape-ssin", model="function", results_dir=tmp_path,
                 sandbox="none", timeout_s=0)
    assert r.n_failed == 0 and r.submission["role"] == "reference"
    data = json.loads(Path(r.path).read_text())
    assert contents.check_result(data, result_path_of(r), sub, _Context()) == []
    # the refusal the check gave before: the track's own assets (a lexicon, none on AIXI) without the board's answers
    from benchmark.resources import load_resource
    from benchmark.runner import board_assets
    from benchmark.tracks import get_track

    trk, res = get_track("aixi"), load_resource("aixi/shape-ssin")
    assert "needs the 'published-truth' asset" in contents._cannot_enter(sub, "image", False, True, trk.assets(res))
    assert contents._cannot_enter(sub, "image", False, True, board_assets(trk, res)) is None
    # the same code under another name is another code: the board's answers are not for it (as the runner says)
    from benchmark.submission import get_submission

    mine = tmp_path / "my_truth"
    mine.mkdir()
    (mine / "explainer.py").write_text((sub.path / "explainer.py").read_text())
    (mine / "submission.toml").write_text((sub.path / "submission.toml").read_text().replace(
        'name = "published-truth"', 'name = "my-truth"'))
    why = contents._cannot_enter(get_submission(mine), "image", False, True, board_assets(trk, res))
    assert why is not None and "handed to the built-in published-truth alone" in why


def _maps(r, ids, home) -> list[np.ndarray]:
    from benchmark.variant_runs.randomisation import result_outputs

    (run,) = result_outputs(r, ids, home)
    return [run[i].array for i in ids]


@pytest.mark.slow(reason="two text controls through the sandboxed worker on the tiny IDC board")
def test_the_lexicon_controls_read_the_generators_lexicon_in_the_sandbox(idc_board):
    """The IDC build wrote the lexicon of the MR training split it trained on (240 documents); in the worker,
    corpus-lexicon gives |s(w)| and predicted-class-lexicon s(w) signed toward the CNN's prediction."""
    from generators.corpora import load_mr
    from generators.lexicon import split_digest

    b = idc_board
    recipe = b["lexicon"]["recipe"]
    train = load_mr(seed=0)["train"][:240]
    assert recipe["split_sha256"] == split_digest([d.tokens for d in train], [d.label for d in train])
    assert recipe["documents"] == 240 and recipe["classes"] == ["neg", "pos"]
    odds = b["lexicon"]["log_odds"]
    inst, home = b["instances"], b["home"]
    for r in b["runs"].values():
        assert r.n_failed == 0
        assert r.submission["capabilities"]["data_prior"] is True and r.submission["role"] == "control"
    pred = b["model"].predict(inst.inputs).argmax(1)
    s = [np.array([odds.get(w, 0.0) for w in doc], dtype=np.float32) for doc in inst.inputs]
    corpus = _maps(b["runs"]["corpus-lexicon"], inst.ids, home)
    signed = _maps(b["runs"]["predicted-class-lexicon"], inst.ids, home)
    for c, p, v, y in zip(corpus, signed, s, pred):
        np.testing.assert_allclose(c, np.abs(v), rtol=1e-6)
        np.testing.assert_allclose(p, v if y == 1 else -v, rtol=1e-6)
    # (the one-epoch CNN predicts one class here: both signs are pinned by the flip test below)


@pytest.mark.slow(reason="the randomisation test's run of corpus-lexicon in the sandbox")
def test_the_corpus_lexicon_is_the_same_map_on_the_randomised_model(idc_board):
    r = evaluate("corpus-lexicon", randomised=True, **idc_board["kw"])
    sim = r.extra["randomisation"]["similarity"]
    assert sim["spearman-signed"]["mean"] == pytest.approx(1.0) and sim["spearman-signed"]["n"] > 0
    assert r.metrics[r.primary_metric].mean == idc_board["runs"]["corpus-lexicon"].metrics[r.primary_metric].mean


def test_a_resource_without_a_lexicon_refuses_the_lexicon_controls(idc_home, monkeypatch, tmp_path):
    """A resource built before lexicons existed: the controls are refused in one line before anything runs
    (`cannot evaluate`, which `xaibench evaluate all` lists as not applicable); the other text controls run."""
    home = tmp_path / "home"
    shutil.copytree(idc_home / "resources" / "idc", home / "resources" / "idc",
                    ignore=shutil.ignore_patterns("lexicon"))
    monkeypatch.setenv("XAIBENCH_HOME", str(home))
    for name in ("corpus-lexicon", "predicted-class-lexicon"):
        with pytest.raises(SubmissionError) as err:
            evaluate(name, track="idc", resource="idc/mr-wga", model="cnn", limit=2, results_dir=tmp_path / "r")
        assert str(err.value).startswith(f"cannot evaluate: {name} needs the 'lexicon' asset, which this board "
                                         "does not offer") and "\n" not in str(err.value)
    assert not (home / "cache").exists()  # refused before any cache or worker


def _flipped(model):
    """The same Kim CNN with its output layer negated: every logit changes sign, so every prediction flips."""
    import copy

    out = copy.deepcopy(model)
    with torch.no_grad():
        out.module.fc.weight.neg_()
        out.module.fc.bias.neg_()
    return out


def test_predicted_class_lexicon_flips_with_the_prediction_and_corpus_lexicon_never_moves(tmp_path, monkeypatch):
    from benchmark.models.variants.randomise import randomised
    from tests.test_text_conformance import DOCS, LABELS, TRAIN, kim_cnn

    write_lexicon(tmp_path, "train", TRAIN, LABELS, classes=("negative", "positive"), target="label")
    monkeypatch.setenv("XAIBENCH_ASSET_LEXICON", str(tmp_path / "lexicon" / "train"))
    subs = discover()
    signed, corpus = subs["predicted-class-lexicon"].instantiate(), subs["corpus-lexicon"].instantiate()
    ids = [i for i in DOCS if DOCS[i]]
    batch = Batch(ids=ids, inputs=[DOCS[i] for i in ids], seed=0)
    model = kim_cnn()
    flipped = _flipped(model)
    assert (model.predict(batch.inputs).argmax(1) != flipped.predict(batch.inputs).argmax(1)).all()
    for a, b in zip(signed.explain(model, batch), signed.explain(flipped, batch)):
        assert np.array_equal(a, -b) and np.abs(a).max() > 0
    for a, b in zip(corpus.explain(model, batch), corpus.explain(randomised(model), batch)):
        assert np.array_equal(a, b) and (a >= 0).all()
