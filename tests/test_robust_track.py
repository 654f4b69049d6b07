"""The robustness generator and track end to end on a tiny real resource (120 MR documents per split, a
one-epoch Kim CNN, a 3,000-word GloVe synonym file supplied as `vectors`, 12 attacked samples): the
published rows keep the prediction and the budget, and the track re-scores an explainer in the worker."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

# attacked samples: enough that original texts share lengths (the residual score's position profile
# needs two originals of a length; with 5 every length was unique and no residual score existed)
N_SAMPLES = 12


@pytest.fixture(scope="module")
def robust_home(tmp_path_factory):
    import os

    from tests.conftest import mirror_dir_or_skip

    mirror_dir_or_skip("rt_polarity", "rt-polarity.pos")
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
        build_robustness(RobustnessConfig(models=("cnn",), attacks=("tef", "ra", "su"), explainers=("saliency",),
                                          n_samples=N_SAMPLES, policy_samples=20, limit=120, epochs=1,
                                          vectors=str(vfile), similarity=False, embeddings="random", vocab_rule="drop"))
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
    assert len(t["id"]) > 0 and set(t["attack"]) == {"tef", "ra", "su"}
    for i in range(len(t["id"])):
        if t["excluded"][i] == "prediction_changed":  # a policy text that flips: recorded, never scored
            assert t["attack"][i] == "su" and t["pred_after"][i] != t["pred_before"][i]
            continue
        assert t["pred_after"][i] == t["pred_before"][i] == t["label"][i]
        assert len(t["adversarial"][i]) == len(t["tokens"][i]) == t["n"][i]
        diff = [k for k, (a, b) in enumerate(zip(t["tokens"][i], t["adversarial"][i])) if a != b]
        assert sorted(diff) == sorted(t["positions"][i]) and len(diff) == t["r"][i]
        for rho in t["rho_max"][i]:
            assert t["r"][i] / t["n"][i] <= rho + 1e-12
    curves = res.stats["curves"]
    assert set(curves) == {"saliency/tef", "saliency/ra", "saliency/su"}


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


def test_the_build_writes_the_lexicon_of_its_training_split(rhome):
    """The lexicon asset (issue #50): the class log-odds of the 120 MR training sentences the models were
    trained on, offered to every worker of the robustness boards."""
    from benchmark.resources import load_resource
    from benchmark.tracks import get_track
    from generators.corpora import load_mr
    from generators.lexicon import split_digest

    res = load_resource("robustness/mr-cnn")
    folder = get_track("robustness").assets(res)["lexicon"]
    recipe = json.loads((folder / "log_odds.json").read_text())["recipe"]
    train = load_mr()["train"][:120]
    assert recipe["split_sha256"] == split_digest([d.tokens for d in train], [d.label for d in train])
    assert recipe["documents"] == 120 and recipe["classes"] == ["neg", "pos"] and recipe["alpha"] == 1.0


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
        assert rm.acc(c["centre"], mean, c["mass"]) == pytest.approx(metric.mean, abs=1e-9)
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


def _gated_order(results):
    """The ranking contract of the boards (issue #26, `extra["rank_gate"]`), as the leaderboard applies it:
    controls and references are not ranked; a method whose gate metric is not better than the best
    control's is ranked after every method that passes; within each group by the primary metric."""
    controls = [r for r in results if r.submission.get("role") == "control"]
    methods = [r for r in results if r.submission.get("role", "method") == "method"]

    def gate_ok(r):
        gate = r.extra["rank_gate"]
        m = r.metrics[gate["metric"]]
        if m.mean is None:
            return False
        sign = 1 if m.direction == "higher" else -1
        if gate["min"] is not None and sign * m.mean < sign * gate["min"]:
            return False
        best = [c.metrics[gate["metric"]].mean for c in controls if c.metrics[gate["metric"]].mean is not None]
        return not (gate["beat_controls"] and best and sign * m.mean <= max(sign * b for b in best))

    def primary(r):
        v = r.metrics[r.primary_metric].mean
        return -np.inf if v is None else v

    return sorted(methods, key=lambda r: (not gate_ok(r), -primary(r)))


def test_no_control_and_no_text_blind_method_ranks_first(rhome, tmp_path):
    """Robustness is not faithfulness: the position control never moves under a substitution (PCC 1 in
    every bin, ACC 0.375 — the top of the grid) and a constant explainer has no PCC at all. Controls are
    never ranked; a METHOD that behaves like a control (here a copy of the position control, and a
    constant) is ranked below every method whose ERASER comprehensiveness beats the best control's."""
    from benchmark.runner import evaluate
    from leaderboard.site import is_control
    from tests.conftest import write_submission

    run = lambda sub: evaluate(sub, "robustness", "robustness/mr-cnn", model="cnn",  # noqa: E731
                               results_dir=tmp_path / "r", sandbox="none")
    blind = write_submission(tmp_path / "blind", "blind-position", """\
        return [((len(x) - np.arange(len(x))) / len(x)).astype(np.float32) for x in batch.inputs]
        """, modalities='["text"]')
    flat = write_submission(tmp_path / "flat", "flat", """\
        return [np.ones(len(x), dtype=np.float32) for x in batch.inputs]
        """, modalities='["text"]')
    results = {name: run(name) for name in ("position", "uniform", "random", "occlusion", "input-x-gradient",
                                            "corpus-lexicon", "predicted-class-lexicon")}  # every built-in floor
    results["blind-position"], results["flat"] = run(str(blind)), run(str(flat))
    pos = results["position"]
    c = pos.extra["curves"]["tef"]
    assert all(m == pytest.approx(1.0) for m, k in zip(c["mean"], c["count"]) if k)
    assert pos.metrics["rob-acc-tef"].mean == pytest.approx(0.375)  # the area under PCC ≡ 1 on the whole grid
    assert results["blind-position"].metrics["rob-acc-tef"].mean == pytest.approx(0.375)
    assert results["flat"].metrics["rob-acc-tef"].mean is None  # constant: PCC undefined, counted
    assert results["flat"].metrics["rob-acc-tef"].excluded > 0 and results["flat"].extra["pcc_undefined"]["tef"] > 0
    roles = {results[n].submission["role"] for n in ("position", "uniform", "random", "corpus-lexicon")}
    assert is_control("position") and roles == {"control"}
    comp = {n: r.metrics["rob-faith-comp"].mean for n, r in results.items()}
    assert comp["occlusion"] > max(comp["position"], comp["random"])  # deleting what it ranks first hurts most
    from leaderboard.site.figures import FIGURES, FigureContext

    _curves, scatter = FIGURES["robustness"](FigureContext(board=None, results=results, site=tmp_path / "site",
                                                           prefix="img/rob"))
    assert scatter.path and "flat" in scatter.note  # the constant has no ACC: named, not drawn
    order = [r.submission["name"] for r in _gated_order(results.values())]
    assert order[0] in ("occlusion", "input-x-gradient"), (order, comp)
    assert set(order[-2:]) == {"blind-position", "flat"}
    from leaderboard.boards import boards

    (board,) = [b for b in boards(results.values()) if b.track == "robustness"]  # the leaderboard's gate (#26)
    first = next(r for r in board.rows if r.rank is not None)
    assert first.submission in ("occlusion", "input-x-gradient")


def test_the_reference_explainer_is_marked_on_the_transfer_board(rhome, tmp_path):
    """The texts were attacked through saliency: on the transfer board its row faces an adaptive attack,
    so it is a marked reference row (not ranked); every other explainer keeps its role."""
    from benchmark.runner import evaluate

    sal = evaluate("saliency", "robustness", "robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                   sandbox="none")
    ixg = evaluate("input-x-gradient", "robustness", "robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                   sandbox="none")
    assert sal.submission["role"] == "reference" and ixg.submission["role"] == "method"


def test_su_tef_and_ra_share_the_samples_and_the_policy_never_saw_them(rhome):
    from benchmark.resources import load_resource
    from generators.corpora import load_mr
    from generators.robustness.policies import split_halves

    res = load_resource("robustness/mr-cnn")
    t = res.table("test").to_pydict()
    by = {a: {s for s, x in zip(t["sample"], t["attack"]) if x == a} for a in ("tef", "ra", "su")}
    assert by["tef"] == by["ra"] == by["su"] and len(by["tef"]) == N_SAMPLES
    test = load_mr()["test"][:120]
    policy_half, eval_half = split_halves(len(test), 0)
    assert not set(policy_half) & set(eval_half) and len(policy_half) + len(eval_half) == len(test)
    assert by["tef"] <= {test[i].id for i in eval_half}
    runs = res.stats["runs"]
    assert runs["saliency/policy"]["samples"] == 20 and runs["policy/su"]["samples"] == N_SAMPLES
    pol = {o: r for o, r, _c in runs["policy/su"]["policy_top"]}
    for i in range(len(t["id"])):
        if t["attack"][i] == "su":
            assert all(pol.get(o, r) == r for o, r in (x.split(">", 1) for x in t["replacements"][i]))


def test_no_applied_substitution_maps_to_unk_on_the_word_model(rhome):
    """The vocabulary rule: every substitution the published attacks applied is a word the model reads
    as itself (never its <unk> row); the run's counts say how many candidates were dropped."""
    from benchmark.models.text import load_word_model
    from benchmark.resources import load_resource

    res = load_resource("robustness/mr-cnn")
    model = load_word_model(res.root / "model" / "mr-cnn", "cnn")
    t = res.table("test").to_pydict()
    applied = [x.split(">", 1)[1] for reps in t["replacements"] for x in reps]
    assert applied and model.known(applied).all()
    vocab = res.stats["runs"]["saliency/tef"]["vocab"]
    assert vocab["applied_unrepresentable"] == 0 and vocab["unrepresentable"] > 0  # the tiny model lacks many
    assert res.stats["runs"]["policy/su"]["applied_unrepresentable"] == 0


def test_append_keeps_the_other_explainers_rows(rhome):
    from benchmark.resources import load_resource
    from generators.robustness.build import RobustnessConfig, build_robustness

    before = load_resource("robustness/mr-cnn").table("test").to_pydict()
    vfile = rhome / "vectors.txt"
    build_robustness(RobustnessConfig(models=("cnn",), attacks=("ra",), explainers=("input-x-gradient", "attention"),
                                      n_samples=2, limit=120, epochs=1, vectors=str(vfile), similarity=False,
                                      embeddings="random", vocab_rule="drop", append=True,
                                      explainer_params={"input-x-gradient": {"batch_size": 4}}))
    after = load_resource("robustness/mr-cnn").table("test").to_pydict()
    sal = [i for i, e in enumerate(after["explainer"]) if e == "saliency"]
    assert [after["id"][i] for i in sal] == before["id"]
    assert {"input-x-gradient"} == set(after["explainer"]) - {"saliency"}
    stats = load_resource("robustness/mr-cnn").stats
    assert "input-x-gradient/ra" in stats["curves"]
    assert "no word attention layer" in stats["skipped_explainers"]["attention"]  # a recorded reason


def _live(name, tmp_path, **kw):
    from benchmark.attacks.live import attack_submission

    kw.setdefault("samples", 3)
    return attack_submission(name, "robustness/mr-cnn", model="cnn", sandbox="none",
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
            if t["explainer"][i] == "saliency" and t["r"][i] > 0 and not t["excluded"][i] and t["attack"][i] != "su"}
    log = Path(os.environ["XAIBENCH_HOME"]) / res.extra["live"]["log"]
    got = {}
    for line in log.read_text().splitlines()[1:]:
        rec = json.loads(line)
        for p in rec["points"]:
            got[(rec["attack"], rec["sample"], p["r"])] = p["tokens"]
    live_samples = {json.loads(line)["sample"] for line in log.read_text().splitlines()[1:]}
    want = {k: v for k, v in want.items() if k[1] in live_samples}
    assert got == want and len(got) > 3
    assert res.extra["live"]["calls"]["attribute"] < res.extra["live"]["calls"]["texts_attributed"]  # batched
    from leaderboard.site.figures import FIGURES, FigureContext

    curves, scatter = FIGURES[res.track](FigureContext(board=None, results={"saliency": res}, site=tmp_path / "site",
                                                       prefix="img/live"))
    for fig in (curves, scatter):  # the live board's curves, and robustness against faithfulness
        assert fig.path and (tmp_path / "site" / fig.path).stat().st_size > 1000

    # `xaibench verify` re-scores a live Result from its log; a changed logged attribution is caught
    from benchmark.runner import result_path
    from benchmark.verify import verify_result

    path = result_path(tmp_path / "r", res.track, res.resource["name"], "cnn", "saliency", res.coverage)
    assert verify_result(path).problems == []
    good = log.read_text()
    lines = good.splitlines()
    k = next(i for i, line in enumerate(lines[1:], 1) if json.loads(line).get("scored"))
    rec = json.loads(lines[k])
    rec["scored"][0]["attribution"][0] += 1.0
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
    rec.update(excluded="not run: the worker crashed 3 times in a row", points=[], scored=[])
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
    ex = res.extra["live"]["excluded_samples"]
    # of the 3 samples, one has no word the attack may swap (never explained, counted apart)
    n = 3 - ex.get("tef:no_substitutable_word", 0)
    assert n >= 2 and res.n_failed == n and all("no batches" in f.reason for f in res.failures)
    assert res.metrics["rob-acc-tef"].mean is None
    assert {k: v for k, v in ex.items() if "explainer_failed" in k} == {"tef:explainer_failed": n,
                                                                         "ra:explainer_failed": n}
    const = _live("uniform", tmp_path)  # PCC undefined: excluded and counted, not a failure
    assert const.n_failed == 0 and const.metrics["rob-acc-tef"].mean is None
    assert {k: v for k, v in const.extra["live"]["excluded_samples"].items() if "constant" in k} == {
        "tef:constant_attribution": n, "ra:constant_attribution": n}


def _log_records(res):
    import json

    log = Path(os.environ["XAIBENCH_HOME"]) / res.extra["live"]["log"]
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


def test_live_attacks_score_fresh_draws_not_the_searched_luck(rhome, tmp_path):
    """The random control draws new noise for every candidate, and TEF keeps the draw that moved most: the
    search's own attributions of the attacked texts look anti-correlated with the original. The scored
    pairs are the original and the attacked texts explained again under fresh ids (3 draws for a
    stochastic explainer), so their PCC is the noise's: about 0, far above the selected draws'."""
    from benchmark.metrics.robustness import pcc

    res = _live("random", tmp_path, attacks=("tef",))
    assert res.extra["live"]["draws"] == 3
    recs = [r for r in _log_records(res) if r["points"]]
    assert recs
    searched, rescored = [], []
    for rec in recs:
        assert len(rec["scored"]) == 3
        for p in rec["points"]:
            # the search compared with the original attribution it had; the search's values are not scored
            searched.append(pcc(rec["search_attribution"], p["search_attribution"]))
            rescored += [pcc(d["attribution"], d["points"][str(p["r"])]) for d in rec["scored"]]
    assert np.mean(rescored) > np.mean(searched) + 0.2
    assert abs(res.metrics["rob-pcc-tef"].mean - np.mean(rescored)) < 1e-9


def test_two_live_lime_runs_with_different_seeds_agree_within_their_intervals(rhome, tmp_path):
    """No selected luck: two live TEF runs on lime-text (reduced to 200 samples per explanation) with
    seeds 0 and 1 give ACCs whose bootstrap intervals overlap. (Each mean inside the other's interval held
    on the 5-sample fixture under the old ACC rule; with 12 fixture samples the first 5 differ, 3 of them
    usable, and under the cumulative rule seed 1's mean lay 0.004 outside seed 0's interval.)"""
    a = _live("lime-text", tmp_path / "a", attacks=("tef",), seed=0, params={"num_samples": 200}, samples=5)
    b = _live("lime-text", tmp_path / "b", attacks=("tef",), seed=1, params={"num_samples": 200}, samples=5)
    ma, mb = a.metrics["rob-acc-tef"], b.metrics["rob-acc-tef"]
    assert a.extra["live"]["draws"] == 3 and ma.mean is not None and mb.mean is not None
    assert ma.ci95[0] <= mb.ci95[1] and mb.ci95[0] <= ma.ci95[1], (ma, mb)


def test_table4_runs_seeded_resumable_and_reads_only_representable_swaps(rhome, tmp_path):
    """Table 4's runner at a tiny scale (the CNN, 4 sentences × 2 seeds, A2T only): one summary per seed,
    mean ± std rendered beside the paper's row, A2T reproduced exactly on re-attack, no applied swap to a
    word the model cannot represent, and a second call resumes from the logs without attacking again."""
    from benchmark.attacks.synonyms import SynonymSpace
    from benchmark.models.text import load_word_model
    from benchmark.resources import load_resource
    from generators.robustness.table4 import table4

    root = load_resource("robustness/mr-cnn").root
    space = SynonymSpace.from_text(rhome / "vectors.txt")
    text, fig = table4(tmp_path, model_name="cnn", n=4, seeds=range(2), toki=False, similarity=False,
                       determinism_check=3, root=root, space=space, log=lambda *_: None)
    runs = fig["per_seed"]["A2T"]
    assert [r["seed"] for r in runs] == [0, 1] and all(r["sentences"] == 4 for r in runs)
    assert fig["determinism"]["identical"] == fig["determinism"]["checked"] > 0
    assert "| A2T |" in text and "0.334" in text and "±" in text
    model = load_word_model(root / "model" / "mr-cnn", "cnn")
    # one A2T run per seed (issue #38: no seed reuses another's A2T run), each in its own log
    logs = [tmp_path / f"table4-cnn-a2t-s{s}.jsonl" for s in (0, 1)]
    assert all(p.is_file() for p in logs) and not (tmp_path / "table4-cnn-a2t.jsonl").exists()
    assert fig["a2t_per_seed"] and fig["toki_candidates_rule"] == "pools" and "one A2T run per seed" in text
    logged = [json.loads(x) for p in logs for x in p.read_text().splitlines()]
    changed = [a for r in logged for a, b in zip(r["adversarial"], r["tokens"]) if a != b]
    assert model.known(changed).all() if changed else True
    assert all(r["vocab"].get("applied_unrepresentable", 0) == 0 for r in logged)
    size = [p.stat().st_size for p in logs]
    table4(tmp_path, model_name="cnn", n=4, seeds=range(2), toki=False, similarity=False, determinism_check=0,
           root=root, space=space, log=lambda *_: None)
    assert [p.stat().st_size for p in logs] == size


@pytest.mark.slow(reason="three submissions, each on the trained and on the randomised model, with ERASER's probes")
def test_a_fixed_function_of_the_input_is_model_blind_on_the_robustness_board(rhome, tmp_path):
    """Issue #45 on the robustness board: a map that is a fixed function of the input (perfectly stable under a
    synonym swap that keeps word lengths) ranks with the controls; its randomised-model run scores ERASER's
    faithfulness with the randomised model."""
    from pathlib import Path

    from benchmark.store.results import load_results
    from benchmark.runner import evaluate
    from leaderboard.boards import boards
    from leaderboard.render import randomisation_notes

    sub = Path(__file__).parent / "submissions" / "input_function"
    where = dict(track="robustness", resource="robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                 sandbox="none", timeout_s=0)
    for s in (sub, "occlusion", "random"):
        trained = evaluate(s, **where)
        rand = evaluate(s, randomised=True, **where)
    # the randomised copy answers the faithfulness probes: the random control's comprehensiveness moves with it
    assert rand.metrics["rob-faith-comp"].mean != trained.metrics["rob-faith-comp"].mean
    (b,) = boards(load_results(tmp_path / "r")[0])
    row = next(x for x in b.rows if x.submission == "input-function")
    assert row.blind and row.rank is None and row.sanity.value() == 1.0, row.sanity
    # a method's maps change on the randomised model; its stability there is not what decides on this board (a
    # randomised model's maps are as stable), so it is model-sensitive and ranked
    occ = next(x for x in b.rows if x.submission == "occlusion")
    assert occ.sanity.status == "model-sensitive" and not occ.blind, occ.sanity
    assert "the score criterion is not this track's" in occ.sanity.reason and occ.sanity.value() < 0.5
    assert not b.score_rule and "on this track the similarity alone" in " ".join(randomisation_notes(b))


def test_the_randomisation_test_runs_on_a_prefix_of_the_texts(rhome, tmp_path):
    """Issue #55: `--randomisation-limit N` on the robustness board runs the test on the trained run's first N texts
    (`RobustnessTrack.first_instances`; `limit` counts original samples, whose attacked texts come attack by attack,
    so `instances(limit=k)` is no prefix); every text of the prefix follows its original, the board pairs the run
    with that prefix and judges the maps' similarity there."""
    from benchmark.resources import load_resource
    from benchmark.runner import evaluate
    from benchmark.store.results import load_results
    from benchmark.tracks import get_track
    from leaderboard.boards import boards

    trk, res = get_track("robustness"), load_resource("robustness/mr-cnn")
    full = trk.instances(res, "test")
    assert list(trk.instances(res, "test", 2).ids) != list(full.ids[:len(trk.instances(res, "test", 2).ids)])
    n = next(p for p, k in enumerate(full.truths["kind"]) if k.get("attack") == "ra")  # the TEF texts only
    first = trk.first_instances(res, "test", n)
    assert list(first.ids) == list(full.ids[:n]) and len(first.truths["kind"]) == len(first.inputs) == n
    assert all(k["original"] or k["of"] < p for p, k in enumerate(first.truths["kind"]))
    where = dict(track="robustness", resource="robustness/mr-cnn", model="cnn", results_dir=tmp_path / "r",
                 sandbox="none")
    evaluate("saliency", **where)
    rand = evaluate("saliency", randomised=True, randomisation_limit=n, **where)
    assert rand.n_instances == n and rand.coverage["limit"] == n and rand.n_failed == 0
    assert rand.metrics["rob-racc-ra"].mean is None  # no RA text in the prefix: undefined, not a crash
    sims = rand.extra["randomisation"]["similarity"]
    assert sims["spearman-signed"]["n"] > 0
    (b,) = boards(load_results(tmp_path / "r")[0])
    row = next(x for x in b.rows if x.submission == "saliency")
    assert row.sanity.status in ("model-sensitive", "model-blind"), row.sanity
    assert "not run" not in row.sanity.status
