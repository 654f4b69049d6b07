"""The robustness generator and track end to end on a tiny real resource (120 MR documents per split, a
one-epoch Kim CNN, a 3,000-word GloVe synonym file supplied as `vectors`, 3 attacked samples): the
published rows keep the prediction and the budget, and the track re-scores an explainer in the worker."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def robust_home(tmp_path_factory):
    import os

    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None or not (Path(root) / "rt_polarity" / "rt-polarity.pos").is_file():
        pytest.skip("MR mirror (rt_polarity) not found")
    pytest.importorskip("spacy")
    from generators.robustness.build import RobustnessConfig, build_robustness
    from generators.robustness.counterfit import glove_vocabulary

    home = tmp_path_factory.mktemp("robust-home")
    words, vecs = glove_vocabulary(3000)
    vfile = home / "vectors.txt"
    vfile.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in v)}\n" for w, v in zip(words, vecs)))
    old = os.environ.get("XAIBENCH_HOME")
    os.environ["XAIBENCH_HOME"] = str(home)
    try:
        # trainable random embeddings: on 120 training sentences and one epoch, frozen GloVe (the default)
        # gives a below-chance model whose samples change with every detail
        build_robustness(RobustnessConfig(models=("cnn",), attacks=("tef", "ra"), explainers=("saliency",),
                                          n_samples=3, limit=120, epochs=1, vectors=str(vfile), similarity=False,
                                          embeddings="random"))
    finally:
        if old is None:
            os.environ.pop("XAIBENCH_HOME", None)
        else:
            os.environ["XAIBENCH_HOME"] = old
    return home


@pytest.fixture()
def rhome(robust_home, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(robust_home))
    return robust_home


def test_published_rows_keep_prediction_and_budget(rhome):
    from benchmark.resources import load_resource

    res = load_resource("robustness/mr-cnn")
    t = res.table("test").to_pydict()
    assert len(t["id"]) > 0 and set(t["attack"]) <= {"tef", "ra"}
    for i in range(len(t["id"])):
        assert t["pred_after"][i] == t["pred_before"][i] == t["label"][i]
        assert len(t["adversarial"][i]) == len(t["tokens"][i]) == t["n"][i]
        diff = [k for k, (a, b) in enumerate(zip(t["tokens"][i], t["adversarial"][i])) if a != b]
        assert sorted(diff) == sorted(t["positions"][i]) and len(diff) == t["r"][i]
        for rho in t["rho_max"][i]:
            assert t["r"][i] / t["n"][i] <= rho + 1e-12
    curves = res.stats["curves"]
    assert set(curves) == {"saliency/tef", "saliency/ra"}


def test_models_expose_their_training_texts(rhome):
    """`texts.parquet` beside each model (the MR training sentences): `unlabeled_texts()` for L2X."""
    from benchmark.models.text import load_word_model
    from benchmark.resources import load_resource
    from generators.corpora import load_mr

    root = load_resource("robustness/mr-cnn").root
    model = load_word_model(root / "model" / "mr-cnn", "cnn")
    assert model.unlabeled_texts() == [d.tokens for d in load_mr()["train"][:120]]
    (root / "model" / "mr-cnn" / "texts.parquet").rename(root / "texts.bak")
    try:
        assert load_word_model(root / "model" / "mr-cnn", "cnn").unlabeled_texts() is None
    finally:
        (root / "texts.bak").rename(root / "model" / "mr-cnn" / "texts.parquet")


def test_track_scores_an_explainer_in_the_worker(rhome, tmp_path):
    from benchmark.runner import evaluate
    from benchmark.tracks import get_track

    trk = get_track("robustness")
    assert trk.score_chunk is None
    res = evaluate("saliency", "robustness", "robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                   sandbox="none")
    assert res.n_failed == 0
    tef, ra = res.metrics["rob-acc-tef"], res.metrics["rob-acc-ra"]
    assert tef.mean is not None and -0.375 <= tef.mean <= 0.375
    assert ra.mean is not None
    # the reference explainer re-scored on its own attacks: the PCC the generator measured
    from benchmark.resources import load_resource

    t = load_resource("robustness/mr-cnn").table("test").to_pydict()
    gen = [p for p, a, r in zip(t["pcc"], t["attack"], t["r"]) if a == "tef" and r > 0]
    assert res.metrics["rob-pcc-tef"].mean == pytest.approx(float(np.nanmean(gen)), abs=1e-4)

    # the Result records the binned curves; ACC is their area, and the site draws them
    import benchmark.metrics.robustness as rm
    from leaderboard.site.figures import FigureContext, robustness_curves

    curves = res.extra["curves"]
    for attack, metric in (("tef", tef), ("ra", ra)):
        c = curves[attack]
        mean = np.array([np.nan if m is None else m for m in c["mean"]])
        assert sum(c["count"]) > 0
        assert rm.acc(c["centre"], mean) == pytest.approx(metric.mean, abs=1e-9)
    (fig,) = robustness_curves(FigureContext(board=None, results={"saliency": res}, site=tmp_path / "site",
                                             prefix="img/robustness__mr-cnn__cnn"))
    assert fig.path and (tmp_path / "site" / fig.path).stat().st_size > 1000
    import copy

    old = copy.copy(res)
    old.extra = {}
    (none,) = robustness_curves(FigureContext(board=None, results={"saliency": old}, site=tmp_path / "s2",
                                              prefix="img/x"))
    assert none.path is None and "older xaibench" in none.note


def test_uniform_explainer_is_an_excluded_constant(rhome, tmp_path):
    from benchmark.runner import evaluate

    res = evaluate("uniform", "robustness", "robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                   sandbox="none")
    m = res.metrics["rob-acc-tef"]
    assert m.mean is None and m.excluded > 0  # PCC undefined for every pair: counted, never a made-up curve


def test_position_control_tops_the_robustness_board(rhome, tmp_path):
    """Robustness is not faithfulness: scores that ignore the words (a fixed function of position) never
    move under substitutions — PCC 1 in every bin, the largest ACC the bins allow (0.375 when the last
    bin, centre 0.375, has points) — so the control is flagged as one on the site."""
    from benchmark.runner import evaluate
    from leaderboard.site import is_control

    res = evaluate("position", "robustness", "robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                   sandbox="none")
    sal = evaluate("saliency", "robustness", "robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                   sandbox="none")
    assert res.n_failed == 0 and res.metrics["rob-acc-tef"].mean is not None
    c = res.extra["curves"]["tef"]
    assert all(m == pytest.approx(1.0) for m, k in zip(c["mean"], c["count"]) if k)
    top = max(x for x, k in zip(c["centre"], c["count"]) if k)
    assert res.metrics["rob-acc-tef"].mean == pytest.approx(top, abs=1e-9)  # the area under PCC ≡ 1
    assert res.metrics["rob-acc-tef"].mean > sal.metrics["rob-acc-tef"].mean
    assert is_control("position")


def test_append_keeps_the_other_explainers_rows(rhome):
    from benchmark.resources import load_resource
    from generators.robustness.build import RobustnessConfig, build_robustness

    before = load_resource("robustness/mr-cnn").table("test").to_pydict()
    vfile = rhome / "vectors.txt"
    build_robustness(RobustnessConfig(models=("cnn",), attacks=("ra",), explainers=("input-x-gradient", "attention"),
                                      n_samples=2, limit=120, epochs=1, vectors=str(vfile), similarity=False,
                                      embeddings="random", append=True, explainer_params={"input-x-gradient": {"batch_size": 4}}))
    after = load_resource("robustness/mr-cnn").table("test").to_pydict()
    sal = [i for i, e in enumerate(after["explainer"]) if e == "saliency"]
    assert [after["id"][i] for i in sal] == before["id"]
    assert {"input-x-gradient"} == set(after["explainer"]) - {"saliency"}
    stats = load_resource("robustness/mr-cnn").stats
    assert "input-x-gradient/ra" in stats["curves"]
    assert "no word attention layer" in stats["skipped_explainers"]["attention"]  # a recorded reason


def _live(name, tmp_path, **kw):
    from benchmark.attacks.live import attack_submission

    return attack_submission(name, "robustness/mr-cnn", model="cnn", samples=3, sandbox="none",
                             results_dir=tmp_path / "r", vectors=Path(os.environ["XAIBENCH_HOME"]) / "vectors.txt",
                             **kw)


def test_live_attack_through_the_worker_repeats_the_generator(rhome, tmp_path):
    """`xaibench attack saliency`: TEF and RA search saliency's explanations from the sandboxed worker and
    find the texts the generator found in process (same seed, same sample order, and the generator's
    `pos_check="after"` for saliency, so the same texts are explained together: a batch's longest text
    sets the padded length, and near-ties of d can resolve differently at float rounding otherwise);
    the prediction never changes; the Result lands on the robustness-live board, one instance per
    attacked sample."""
    import json

    from benchmark.resources import load_resource

    res = _live("saliency", tmp_path, pos_check="after")
    assert res.track == "robustness-live" and res.n_instances == 3 and res.n_failed == 0
    assert res.metrics["rob-acc-tef"].mean is not None and res.metrics["rob-acc-ra"].mean is not None
    t = load_resource("robustness/mr-cnn").table("test").to_pydict()
    want = {(t["attack"][i], t["sample"][i], t["r"][i]): t["adversarial"][i] for i in range(len(t["id"]))
            if t["explainer"][i] == "saliency" and t["r"][i] > 0 and not t["excluded"][i]}
    log = Path(os.environ["XAIBENCH_HOME"]) / res.extra["live"]["log"]
    got = {}
    for line in log.read_text().splitlines()[1:]:
        rec = json.loads(line)
        for p in rec["points"]:
            got[(rec["attack"], rec["sample"], p["r"])] = p["tokens"]
    assert got == want and len(got) > 3
    assert res.extra["live"]["calls"]["attribute"] < res.extra["live"]["calls"]["texts_attributed"]  # batched
    from leaderboard.site.figures import FIGURES, FigureContext

    (fig,) = FIGURES[res.track](FigureContext(board=None, results={"saliency": res}, site=tmp_path / "site",
                                              prefix="img/live"))
    assert fig.path and (tmp_path / "site" / fig.path).stat().st_size > 1000  # the live board's curves

    # `xaibench verify` re-scores a live Result from its log; a changed logged attribution is caught
    from benchmark.runner import result_path
    from benchmark.verify import verify_result

    path = result_path(tmp_path / "r", res.track, res.resource["name"], "cnn", "saliency", res.coverage)
    assert verify_result(path).problems == []
    good = log.read_text()
    lines = good.splitlines()
    k = next(i for i, line in enumerate(lines[1:], 1) if json.loads(line).get("attribution"))
    rec = json.loads(lines[k])
    rec["attribution"][0] += 1.0
    log.write_text("\n".join(lines[:k] + [json.dumps(rec)] + lines[k + 1 :]) + "\n")
    assert any("not the ones it was scored from" in p for p in verify_result(path).problems)
    log.write_text(good)

    # resumable: a rerun attacks nothing again; a cut-off last record is attacked again, same result
    text = log.read_text()
    log.write_text(text[: text.rstrip("\n").rfind("\n") + 1] + text.rstrip("\n").rsplit("\n", 1)[1][:20])
    again = _live("saliency", tmp_path, pos_check="after")
    assert again.metrics["rob-acc-tef"].mean == pytest.approx(res.metrics["rob-acc-tef"].mean)
    assert again.metrics["rob-acc-ra"].mean == pytest.approx(res.metrics["rob-acc-ra"].mean)
    assert log.read_text().count("\n") == text.count("\n")
    # a sample left "not run" (the worker kept crashing) is attacked again by a rerun
    lines = log.read_text().splitlines()
    rec = json.loads(lines[-1])
    rec.update(excluded="not run: the worker crashed 3 times in a row", points=[], attribution=None)
    log.write_text("\n".join(lines + [json.dumps(rec)]) + "\n")
    third = _live("saliency", tmp_path, pos_check="after")
    assert third.n_failed == 0 and third.metrics["rob-acc-ra"].mean == pytest.approx(res.metrics["rob-acc-ra"].mean)


def test_live_attack_records_failing_and_constant_explainers(rhome, tmp_path):
    from tests.conftest import write_submission

    # explains the first text it is given, then raises on every call (also the worker's one-by-one retries)
    bad = write_submission(tmp_path / "bad", "bad-live", """\
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls > 1:
            raise RuntimeError("no batches")
        return [np.arange(len(x), dtype=np.float32) for x in batch.inputs]
        """, modalities='["text"]')
    res = _live(str(bad), tmp_path)
    assert res.n_failed == 3 and all("no batches" in f.reason for f in res.failures)
    assert res.metrics["rob-acc-tef"].mean is None
    assert res.extra["live"]["excluded_samples"] == {"tef:explainer_failed": 3, "ra:explainer_failed": 3}
    const = _live("uniform", tmp_path)  # PCC undefined: excluded and counted, not a failure
    assert const.n_failed == 0 and const.metrics["rob-acc-tef"].mean is None
    assert const.extra["live"]["excluded_samples"] == {"tef:constant_attribution": 3, "ra:constant_attribution": 3}
