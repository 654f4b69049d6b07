"""The IDC track end to end on tiny real resources (240 MR documents per split, one-epoch models):
resource layout and Hub loading, the per-document protocol through the runner, pooled κ, exclusions,
bad explainers, RelativeConf, agreement with people and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from benchmark import cli
from benchmark.errors import ResourceError
from benchmark.isolation.sandbox import bwrap_problem
from benchmark.resources import load_resource
from benchmark.runner import evaluate
from benchmark.submission import load_submission
from benchmark.tracks import get_track
from tests.conftest import write_submission

PGT_EXPLAINER = """
# a perfect explainer (a test of the protocol): it is shipped with the PGT feature sets in its own
# folder (features.json, written by the test). Reading them from the resource instead is impossible:
# the worker's sandbox has no view of $XAIBENCH_HOME (see test_reading_the_pgt_from_the_home_fails).
import json, pathlib
words = {int(c): set(w) for c, w in json.loads((pathlib.Path(__file__).parent / "features.json").read_text()).items()}
targets = model.target(batch.inputs)
return [np.array([1.0 if w in words.get(int(c), ()) else 0.0 for w in toks]) for toks, c in zip(batch.inputs, targets)]
"""

HOME_READER = """
import pyarrow.parquet as pq, pathlib
root = pathlib.Path({home!r}) / "resources" / "idc" / "mr-wga-features"
t = pq.read_table(next(root.glob("*.parquet")))
return [np.ones(len(toks)) for toks in batch.inputs]
"""


def pgt_submission(folder, config: str = "mr-wga"):
    """The perfect explainer, with the PGT's feature sets copied into its folder."""
    import json

    import pyarrow.parquet as pq

    sub = write_submission(folder, "pgt-copy", PGT_EXPLAINER, modalities='["text"]')
    root = load_resource(f"idc/{config}").root / f"{config}-features"
    t = pq.read_table(next(root.glob("*.parquet"))).to_pydict()
    words: dict = {}
    for c, w in zip(t["class"], t["word"]):
        words.setdefault(int(c), []).append(w)
    (sub / "features.json").write_text(json.dumps(words))
    with open(sub / "submission.toml", "a") as toml:  # only declared files are present when it runs
        toml.write('\n[files]\nfeatures = "features.json"\n')
    return sub


@pytest.fixture()
def idc(idc_home, monkeypatch, tmp_path):
    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    return idc_home


def test_resources_follow_the_hub_layout(idc):
    for pgt in ("wga", "milp", "hybrid"):
        res = load_resource(f"idc/mr-{pgt}")
        ds = res.hf_dataset("test")
        assert set(ds.column_names) == {"id", "text", "tokens", "label", "cnn_correct", "gt"}
        assert all(len(t) == len(g) for t, g in zip(ds["tokens"], ds["gt"]))
        assert ds.features["label"].names == ["neg", "pos"]
        st = res.stats
        assert set(st["features_per_class"]) == {"neg", "pos"}
        assert st["test_evaluated"] == sum(ds["cnn_correct"])
        rc = st["relative_conf"]
        assert 0 <= rc["average_relative_drop"] <= 1 and rc["n"] == st["test_evaluated"]
        feats = load_resource(f"idc/mr-{pgt}-features").hf_dataset("features")
        assert len(feats) == sum(st["features_per_class"].values())
    milp = load_resource("idc/mr-milp").stats
    assert milp["optimal"] is True and milp["gap"] == 0 and milp["vocabulary"] == 400


def test_gt_flags_are_the_feature_sets_applied_per_document(idc):
    res = load_resource("idc/mr-wga")
    feats = load_resource("idc/mr-wga-features").table("features").to_pydict()
    sets: dict[int, set] = {}
    for c, w in zip(feats["class"], feats["word"]):
        sets.setdefault(c, set()).add(w)
    t = res.table("test").to_pydict()
    for toks, y, g in zip(t["tokens"], t["label"], t["gt"]):
        assert g == [w in sets.get(y, set()) for w in toks]


def test_perfect_explainer_scores_kappa_one_and_random_does_not(idc, tmp_path):
    sub = pgt_submission(tmp_path / "pgt")
    res = evaluate(sub, "idc", "idc/mr-wga", model="cnn", results_dir=tmp_path / "r")
    assert res.n_failed == 0
    assert res.metrics["interp-kappa"].mean == pytest.approx(1.0)
    assert res.metrics["interp-precision"].mean == pytest.approx(1.0)
    assert res.n_instances == load_resource("idc/mr-wga").stats["test_evaluated"]
    rnd = evaluate("random", "idc", "idc/mr-wga", model="cnn", results_dir=tmp_path / "r")
    assert rnd.metrics["interp-kappa"].mean < 0.3
    lo, hi = rnd.metrics["interp-kappa"].ci95
    assert lo <= rnd.metrics["interp-kappa"].mean <= hi


def test_pooled_kappa_is_computed_from_summed_counts(idc):
    trk = get_track("idc")
    inst = trk.instances(load_resource("idc/mr-wga"), "test")
    rng = np.random.default_rng(0)
    expl = [rng.random(len(t)) for t in inst.inputs]
    scores = trk.score(expl, inst.truths, list(range(len(inst))))
    counts = scores["counts"]
    tp, fp, fn, tn = counts.sum(0).astype(float)
    n = tp + fp + fn + tn
    po, pe = (tp + tn) / n, ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
    summary = trk.summarise(scores, np.ones(len(inst), dtype=bool))
    assert summary["interp-kappa"].mean == pytest.approx((po - pe) / (1 - pe))
    assert summary["interp-precision"].mean == pytest.approx(tp / (tp + fp))
    # the top-k binarisation forces P = R under micro averaging (SPECS §5.6)
    topk = trk.score(expl, inst.truths, list(range(len(inst))), binarise="top-k")["counts"].sum(0)
    assert topk[1] == topk[2]
    with pytest.raises(ValueError, match="unknown idc metric option"):
        trk.score(expl, inst.truths, [0], attribution="absolute")


def test_wrong_length_and_nan_explanations_are_recorded_failures(idc, tmp_path):
    body = """
out = []
for i, toks in zip(batch.ids, batch.inputs):
    n = len(toks)
    out.append(np.ones(n + 1) if hash(i) % 3 == 0 else (np.full(n, np.nan) if hash(i) % 3 == 1 else np.ones(n)))
return out
"""
    sub = write_submission(tmp_path / "bad", "bad-text", body, modalities='["text"]')
    res = evaluate(sub, "idc", "idc/mr-wga", model="cnn", results_dir=tmp_path / "r")
    reasons = {f.reason for f in res.failures}
    assert res.n_failed > 0 and res.metrics["interp-kappa"].n == res.n_instances - res.n_failed
    assert any("shape" in r for r in reasons) and any("non-finite" in r for r in reasons)


@pytest.mark.skipif(bwrap_problem() is not None, reason="no bubblewrap")
def test_reading_the_pgt_from_the_home_fails(idc, tmp_path):
    """The old way the perfect explainer was written (reading the resource's feature files from
    $XAIBENCH_HOME) finds nothing in the sandbox: every instance fails."""
    from benchmark.resources import data_home

    sub = write_submission(tmp_path / "reader", "home-reader", HOME_READER.format(home=str(data_home())),
                           modalities='["text"]')
    res = evaluate(sub, "idc", "idc/mr-wga", model="cnn", results_dir=tmp_path / "r", limit=4)
    assert res.n_failed == 4 and all("StopIteration" in f.reason or "Error" in f.reason for f in res.failures)


def test_models_and_feature_configs(idc, tmp_path):
    trk = get_track("idc")
    res = load_resource("idc/mr-wga")
    inst = trk.instances(res, "test", limit=5)
    spec, info = trk.build_model(res, "han", inst)
    assert spec.loader == "word" and spec.white_box and spec.served is None
    model = spec.load()
    assert info["architecture"] == "word-attention" and len(model.attention(inst.inputs)) == 5
    with pytest.raises(ResourceError, match="no model 'bert'"):
        trk.build_model(res, "bert", inst)
    with pytest.raises(ResourceError, match="feature sets only"):
        trk.instances(load_resource("idc/mr-wga-features"), "features")


def _run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(list(argv))
    out = capsys.readouterr()
    return exc.value.code, out.out + out.err


def test_cli_lists_evaluates_and_scores_agreement(idc, tmp_path, capsys, monkeypatch):
    from benchmark.progress import console

    monkeypatch.setattr(console, "width", 400)
    code, out = _run(capsys, "list")
    assert code == 0 and "idc" in out and "mr-milp" in out and "lime-text" in out
    code, out = _run(capsys, "evaluate", "uniform", "--track", "idc", "--resource", "idc/mr-hybrid",
                     "--results", str(tmp_path / "r"))
    assert code == 0 and "interp-kappa" in out, out
    code, out = _run(capsys, "agreement", "--pgt", "idc/mr-wga", "-e", "random", "--limit", "3",
                     "--output", str(tmp_path / "a.json"))
    assert code == 0, out
    rows = json.loads((tmp_path / "a.json").read_text())
    assert [r["source"].split()[0] for r in rows] == ["pgt", "explainer"]
    assert all(-1 <= r["pooled"]["kappa"] <= 1 and r["documents"] == 3 for r in rows)


def test_pgt_configs_share_cached_explanations(idc, tmp_path):
    trk = get_track("idc")
    keys = {trk.inputs_key(load_resource(f"idc/mr-{p}"), "test") for p in ("wga", "milp", "hybrid")}
    assert len(keys) == 1  # same documents, same CNN: explained once
    evaluate("random", "idc", "idc/mr-wga", model="cnn", results_dir=tmp_path / "r")
    again = evaluate("random", "idc", "idc/mr-milp", model="cnn", results_dir=tmp_path / "r")
    assert again.resource["name"] == "idc/mr-milp"
    caches = list((idc / "cache" / "idc").rglob("random-*.sqlite"))
    assert len(caches) == 1, caches  # the second run read the first run's explanations


def test_reproduce_table1_rows_carry_the_papers_numbers(idc, tmp_path):
    from generators.idc.experiments import run, table

    rows = run(("wga", "milp"), ("lrp", "attention", "random"), limit=8, results_dir=tmp_path / "r")
    assert [(r.pgt, r.method, r.model) for r in rows][:2] == [("wga", "lrp", "cnn"), ("wga", "attention", "han")]
    assert rows[0].paper == (0.59, 0.72, 0.63) and rows[2].paper is None
    assert all(r.n + r.failed == 8 for r in rows)
    t1, rc = table(rows, ("wga", "milp"))
    assert t1.row_count == 6 and rc.row_count == 2


def test_agreement_explains_each_document_for_its_class_in_the_worker(idc, tmp_path):
    """An explainer that echoes the explained class as every word's score: under the agreement tool's
    fixed targets (the document's label, handed to the worker per sentence) it marks every token of
    the positive documents and none of the negative ones."""
    from generators.corpora import load_eraser
    from generators.idc.agreement import explainer_agreement

    every = list(load_eraser(None, split=("val",)).documents())
    docs = [d for d in every if d.label == 0][:3] + [d for d in every if d.label == 1][:3]
    assert {d.label for d in docs} == {0, 1}
    sub = write_submission(tmp_path / "echo", "echo", "t = model.target(batch.inputs)\n"
                           "return [np.full(len(d), float(c)) for d, c in zip(batch.inputs, t)]",
                           modalities='["text"]')
    spec, _ = get_track("idc").build_model(load_resource("idc/mr-wga"), "cnn", None)
    a = explainer_agreement(load_submission(sub), spec, docs, name="echo")
    positive = sum(len(d.tokens) for d in docs if d.label == 1)
    assert a.selected_fraction == pytest.approx(positive / sum(len(d.tokens) for d in docs))
