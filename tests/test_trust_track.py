"""The trust track end to end: oracles fit and judge in the sandboxed worker, never see the trust
label, are validated (count, bool), cached and resumed, and scored on the pooled confusion table."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from benchmark.metrics.trust import trust_scores
from benchmark.runner import evaluate
from benchmark.submission import discover, load_submission

N_TEST = 8


@pytest.fixture(scope="session")
def trust_home(aixi_home) -> Path:
    """A tiny real trust set `trust/hatexplain-cnn` (600 HateXplain posts, a 3-epoch Kim CNN, LIME
    with 100 samples on 8 correct test predictions) and a one-model embedding asset (GloVe-50d with
    a stated θ_relate), in the session home. Skips when the HateXplain mirror is absent."""
    from benchmark.resources.store import mirror_root

    root = mirror_root()
    if root is None or not (Path(root) / "hatexplain" / "test.jsonl").is_file():
        pytest.skip("HateXplain mirror not found; set XAIBENCH_DATA_MIRROR to the shared data folder")
    import torch

    torch.set_num_threads(1)
    from generators.trust.build import TrustBuildConfig, build_trust

    os.environ["XAIBENCH_HOME"] = str(aixi_home)
    build_trust(TrustBuildConfig(dataset="hatexplain", limit=600, epochs=3, num_samples=100, test_limit=N_TEST,
                                 validation_limit=8, train_explain_limit=12,
                                 max_len=60))
    emb = aixi_home / "resources" / "trust" / "model" / "embeddings"
    emb.mkdir(parents=True, exist_ok=True)
    (emb / "thresholds.json").write_text(json.dumps({"models": {"glove-50d": {"theta": 0.1915, "tpr": 0.768,
                                                                              "tnr": 0.768}}}))
    return aixi_home


def _test_rows(home: Path) -> list[dict]:
    return pq.read_table(home / "resources" / "trust" / "hatexplain-cnn" / "test-00000-of-00001.parquet").to_pylist()


FAST = {  # small fits: the conformance test checks the contract, not TOKI's accuracy
    "toki": {"train_limit": 12, "lime_samples": 60, "lemmatize": False},
}


def _oracles() -> list[str]:
    return sorted(n for n, s in discover().items() if s.kind == "oracle")


def test_every_registered_oracle_conforms(trust_home, tmp_path):
    """One bool per instance, no failure, deterministic under a seed (a second run from a fresh cache
    with another batch size gives the same verdicts), scored on the pooled table."""
    names = _oracles()
    assert {"naive-oracle", "random-oracle", "toki-lime", "toki-omis", "toki-grad"} <= set(names)
    rows = _test_rows(trust_home)
    for name in names:
        declared = discover()[name].parameters
        params = {k: v for k, v in FAST["toki"].items() if k in declared} if name.startswith("toki") else {}
        a = evaluate(name, "trust", "trust/hatexplain-cnn", params=params, results_dir=tmp_path / "a", batch_size=8)
        got_a = _outputs(a, trust_home)
        b = evaluate(name, "trust", "trust/hatexplain-cnn", params=params, results_dir=tmp_path / "b", batch_size=3,
                     overwrite=True)
        assert a.n_instances == N_TEST and a.n_failed == 0, (name, [f.reason for f in a.failures][:2])
        got_b = _outputs(b, trust_home)
        # the same verdicts; a score (a ratio of float32 attribution sums) may move by rounding only: a
        # convolution over a batch padded to another length rounds differently (seen: one ulp, 0.9256361 / 2)
        assert sorted(got_a) == sorted(got_b) and len(got_a) == N_TEST, name
        for i in got_a:
            assert got_a[i][0] == got_b[i][0], (name, i)
            np.testing.assert_allclose(got_a[i], got_b[i], rtol=1e-5, err_msg=f"{name} {i}")
        assert a.submission["kind"] == "oracle" and a.primary_metric == "trust-auc"
        assert a.metrics["trust-auc"].mean is None or 0 <= a.metrics["trust-auc"].mean <= 1
        assert a.extra["rank_gate"]["metric"] == "trust-auc" and "chance_at_rate" in a.extra
        counts = a.metrics["trust-acc"]
        assert counts.n == N_TEST
        if name.startswith("toki"):
            assert a.extra["fit_s"] > 0
    # Naive by hand: trustworthy iff confidence ≥ 0.9, pooled against the labels
    naive = evaluate("naive-oracle", "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "a")
    want = trust_scores(judged=np.array([r["confidence"] >= 0.9 for r in rows]),
                        truth=np.array([r["trust"] for r in rows]))
    for m in ("acc", "pre", "sen", "f1", "spec", "gmean"):
        got = naive.metrics[f"trust-{m}"].mean
        assert (got is None and want.values[m] is None) or got == pytest.approx(want.values[m]), m


def _outputs(r, home: Path) -> dict[str, np.ndarray]:
    """A Result's cached per-instance outputs ([verdict, score…]), read back as it was scored."""
    from benchmark.variant_runs.randomisation import result_outputs

    (run,) = result_outputs(r, [str(row["id"]) for row in _test_rows(home)], home)
    return {i: np.asarray(e.array, dtype=float) for i, e in run.items()}


def _oracle(folder: Path, body: str, params: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.toml").write_text(textwrap.dedent(f"""\
        [submission]
        name = "{folder.name}"
        version = "0.1"
        kind = "oracle"
        entry = "oracle:Oracle"
        [capabilities]
        modalities = ["text"]
        [parameters]
        {params}
        """))
    (folder / "oracle.py").write_text(textwrap.dedent(body))
    return folder


def test_oracle_is_never_handed_the_trust_label(trust_home, tmp_path):
    """What fit and judge receive carries no ground-truth column; in the sandbox the resource files
    cannot be opened even by their real path."""
    test_file = trust_home / "resources" / "trust" / "hatexplain-cnn" / "test-00000-of-00001.parquet"
    sub = _oracle(tmp_path / "snoop-oracle", f"""
        import json, os

        class Oracle:
            def fit(self, context):
                self.seen = {{"train": sorted(context.train), "class_names": list(context.class_names),
                             "explainer": context.explainer_name, "has_explainer": context.explainer is not None}}
                try:
                    open({str(test_file)!r}, "rb").read(4)
                    self.seen["read_resource"] = True
                except OSError:
                    self.seen["read_resource"] = False

            def judge(self, batch):
                self.seen["inputs"] = sorted({{k for item in batch.inputs for k in item}})
                path = os.path.join(os.environ["XAIBENCH_SCRATCH"], "seen.json")
                with open(path, "w") as f:
                    json.dump(self.seen, f)
                return [True] * len(batch)
        """)
    r = evaluate(str(sub), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res", sandbox="auto")
    assert r.n_failed == 0
    from benchmark.resources import data_home

    seen = json.loads((data_home() / "scratch" / "snoop-oracle" / "seen.json").read_text())
    truth = {"trust", "precision", "rationale", "label"}
    assert not truth & set(seen["inputs"]), seen["inputs"]
    assert {"tokens", "prediction", "class_name", "confidence", "explanation_words", "explanation_scores"} <= set(
        seen["inputs"])
    assert {"tokens", "label", "prediction", "confidence"} <= set(seen["train"])  # training labels are not GT
    assert not {"trust", "precision", "rationale"} & set(seen["train"])
    assert seen["class_names"] == ["normal", "hateful offensive"] and seen["explainer"] == "lime-text"
    assert seen["has_explainer"]
    if r.provenance["isolation"]["sandbox"] == "bwrap":
        assert seen["read_resource"] is False


BAD = {
    "raises": ("raise ValueError('no verdict')", "raised ValueError: no verdict"),
    "count": ("return [True]", "judged 1 instances for a batch of"),
    "not-bool": ("return [1] * len(batch)", "judge returned a int for an instance, not a bool"),
    "float": ("return [0.9] * len(batch)", "not a bool"),
    "hang": ("import time; time.sleep(60)", "timed out"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_judge_is_a_recorded_failure(trust_home, tmp_path, case):
    body, reason = BAD[case]
    sub = _oracle(tmp_path / f"bad-{case}", f"""
        class Oracle:
            def fit(self, context):
                pass

            def judge(self, batch):
                {body}
        """)
    r = evaluate(str(sub), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res", timeout_s=1.0,
                 batch_size=4)
    assert r.n_failed == N_TEST
    assert all(reason in f.reason for f in r.failures), r.failures[0].reason
    assert r.metrics["trust-gmean"].mean is None and r.metrics["trust-auc"].mean is None


def test_bad_fit_fails_every_instance_with_the_reason(trust_home, tmp_path):
    raises = _oracle(tmp_path / "fit-raises", """
        class Oracle:
            def fit(self, context):
                raise RuntimeError("cannot learn")

            def judge(self, batch):
                return [True] * len(batch)
        """)
    r = evaluate(str(raises), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res")
    assert r.n_failed == N_TEST and all("fit raised RuntimeError: cannot learn" in f.reason for f in r.failures)
    hangs = _oracle(tmp_path / "fit-hangs", """
        class Oracle:
            def fit(self, context):
                import time
                time.sleep(120)

            def judge(self, batch):
                return [True] * len(batch)
        """)
    r = evaluate(str(hangs), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res", fit_timeout_s=2.0)
    assert r.n_failed == N_TEST and all("fit timed out" in f.reason for f in r.failures)
    assert "fit_s" not in r.extra


def test_resume_needs_no_second_fit_and_keeps_fit_time(trust_home, tmp_path):
    first = evaluate("naive-oracle", "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "r", overwrite=True)
    again = evaluate("naive-oracle", "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "r")
    assert again.provenance["isolation"]["worker_starts"] == 0  # every verdict came from the cache
    assert again.extra["fit_s"] == first.extra["fit_s"]
    assert again.integrity["outputs_sha256"] == first.integrity["outputs_sha256"]


def test_explainers_and_oracles_are_not_mixed(trust_home, tmp_path):
    from benchmark.errors import SubmissionError

    with pytest.raises(SubmissionError, match="the trust track evaluates oracles"):
        evaluate("occlusion", "trust", "trust/hatexplain-cnn", results_dir=tmp_path)
    with pytest.raises(SubmissionError, match="evaluates explainers"):
        evaluate("naive-oracle", "idc", "idc/mr-wga", results_dir=tmp_path)


def test_one_class_split_reports_undefined_metrics():
    """Spec and G-mean have no value when the truth has no untrustworthy prediction: None with the
    reason, never a NaN averaged into a board."""
    from benchmark.tracks import get_track

    trk = get_track("trust")
    truths = {"trust": np.ones(5, dtype=bool)}
    verdicts = [np.array([v], dtype=np.float32) for v in (1, 1, 0, 1, 0)]
    scores = trk.score(verdicts, truths, range(5))
    ok = np.ones(5, dtype=bool)
    summary = trk.summarise(scores, ok)
    assert summary["trust-spec"].mean is None and summary["trust-gmean"].mean is None
    assert summary["trust-sen"].mean == pytest.approx(0.6) and summary["trust-acc"].mean == pytest.approx(0.6)
    extra = trk.summary_extra(scores, ok)
    why = extra["undefined"]
    assert "no untrustworthy prediction" in why["trust-spec"] and "Spec" in why["trust-gmean"]
    assert summary["trust-auc"].mean is None and "one class" in why["trust-auc"]
    assert extra["confusion"] == {"tp": 3, "fp": 0, "fn": 2, "tn": 0}


def test_pooled_bootstrap_interval_contains_the_value():
    from benchmark.tracks import get_track

    trk = get_track("trust")
    rng = np.random.default_rng(1)
    truth = rng.random(400) < 0.5
    verdicts = [np.array([float(v)], dtype=np.float32) for v in rng.random(400) < 0.5]
    scores = trk.score(verdicts, {"trust": truth}, range(400))
    s = trk.summarise(scores, np.ones(400, dtype=bool))
    want = trust_scores(scores["counts"].sum(0))
    for m in ("gmean", "acc", "bacc"):
        lo, hi = s[f"trust-{m}"].ci95
        assert lo <= want.values[m] <= hi and s[f"trust-{m}"].mean == pytest.approx(want.values[m])
        assert 0 < s[f"trust-{m}"].std < 0.1
    # a verdict-only oracle ranks by its verdict: AUC = balanced accuracy, with the same interval
    assert s["trust-auc"].mean == pytest.approx(s["trust-bacc"].mean)
    assert s["trust-auc"].ci95 == pytest.approx(s["trust-bacc"].ci95)


def _judged(verdicts, scores):
    return [np.array([float(v), float(x)], dtype=np.float32) for v, x in zip(verdicts, scores)]


def test_auc_from_scores_and_estimate_under_weights():
    """AUC ranks by the oracle's score (scikit-learn's roc_auc_score, with sample weights for a
    bootstrap draw); every table metric under weights equals the metric of the weighted counts."""
    from sklearn.metrics import roc_auc_score

    from benchmark.tracks import get_track
    from benchmark.bootstrap import draw_weights

    trk = get_track("trust")
    rng = np.random.default_rng(2)
    n = 300
    truth = rng.random(n) < 0.6
    score = np.round(np.clip(0.5 + 0.3 * (truth - 0.5) + rng.normal(0, 0.25, n), 0, 1), 2)
    scores = trk.score(_judged(score >= 0.5, score), {"trust": truth}, range(n))
    ok = np.ones(n, dtype=bool)
    s = trk.summarise(scores, ok)
    assert s["trust-auc"].mean == pytest.approx(roc_auc_score(truth, score))
    lo, hi = s["trust-auc"].ci95
    assert lo < s["trust-auc"].mean < hi and hi - lo < 0.2
    w = draw_weights(np.arange(n), keep=ok, n_boot=5, seed=3)
    est = trk.estimate(scores, ok, w)
    for b in range(5):
        assert est["trust-auc"][b] == pytest.approx(roc_auc_score(truth, score, sample_weight=w[b]))
        want = trust_scores(np.round(w[b] @ scores["counts"]).astype(int))
        for m in ("acc", "gmean", "bacc", "spec"):
            assert est[f"trust-{m}"][b] == pytest.approx(want.values[m])
    assert all(est[m].shape == (5,) for m in est)
    # a failed instance weighs nothing
    ok[:10] = False
    assert trk.estimate(scores, ok, np.ones((1, n)))["trust-auc"][0] == pytest.approx(
        roc_auc_score(truth[10:], score[10:]))
    extra = trk.summary_extra(scores, np.ones(n, dtype=bool))
    q = float((score >= 0.5).mean())
    assert extra["auc_from"] == "score" and extra["trustworthy_rate"] == pytest.approx(q, abs=1e-6)
    assert extra["chance_at_rate"]["trust-gmean"] == pytest.approx(np.sqrt(q * (1 - q)), abs=1e-6)
    assert extra["chance_at_rate"]["trust-auc"] == 0.5 and extra["chance_at_rate"]["trust-bacc"] == 0.5


def test_bad_scores_are_score_failures_and_the_verdicts_still_count():
    """Issue #24 "Bad input": a score outside [0, 1], NaN, a verdict without a score, a scores list of
    the wrong length — each a recorded score failure with its reason; AUC keeps those predictions at their
    worst place (issue #38: a failure never raises AUC), the verdict-only metrics count every valid verdict."""
    from benchmark.contracts import judgement_parts
    from benchmark.tracks import get_track
    from benchmark.isolation.worker import to_verdict

    n = 8
    _, codes = judgement_parts({"verdicts": [True] * n, "scores": [0.9, 1.5, float("nan"), None, "0.3", -0.1, True,
                                                                     np.float32(0.2)]}, n)
    assert codes == [pytest.approx(0.9), -5.0, -4.0, -2.0, -3.0, -5.0, -3.0, pytest.approx(0.2)]
    assert judgement_parts({"verdicts": [True] * n, "scores": [0.5] * 3}, n)[1] == [-6.0] * n
    assert judgement_parts({"verdicts": [True] * n}, n)[1] == [-2.0] * n
    assert judgement_parts([True] * n, n)[1] == [-1.0] * n
    outputs = [to_verdict(True, c) for c in codes]
    trk = get_track("trust")
    truth = np.array([True, False] * 4)
    scores = trk.score(outputs, {"trust": truth}, range(n))
    ok = np.ones(n, dtype=bool)
    s = trk.summarise(scores, ok)
    assert s["trust-acc"].mean == pytest.approx(0.5) and s["trust-acc"].n == n  # every verdict counts
    # valid: 0.9 (trustworthy) > 0.2 (untrustworthy); the 3 failed trustworthy rank below, the 3 failed
    # untrustworthy above everything: 1 of the 16 pairs is ordered right (left out, it would read 1.0)
    assert s["trust-auc"].n == n and s["trust-auc"].excluded == 0
    assert s["trust-auc"].mean == pytest.approx(1 / 16)
    fails = trk.summary_extra(scores, ok)["score_failures"]
    assert fails["n"] == 6 and fails["positions"] == [1, 2, 3, 4, 5, 6] and "worst place" in fails["auc_rule"]
    # a constant score ties everything: AUC exactly ½ (a blind oracle's value), never more
    const = trk.score([to_verdict(True, 0.7)] * n, {"trust": truth}, range(n))
    assert trk.summarise(const, ok)["trust-auc"].mean == pytest.approx(0.5)
    # every score failed (a list of the wrong length): the worst AUC, 0
    wrong = trk.score([to_verdict(True, -6.0)] * n, {"trust": truth}, range(n))
    assert trk.summarise(wrong, ok)["trust-auc"].mean == pytest.approx(0.0)
    assert fails["reasons"] == {"the score lies outside [0, 1]": 2, "the score is NaN or infinite": 1,
                                "a verdict without a score (the judge scored other predictions)": 1,
                                "the score is not a number": 2}


BAD_SCORES = {
    "outside": ("[1.5] * len(batch)", "outside [0, 1]"),
    "nan": ("[float('nan')] * len(batch)", "NaN"),
    "missing": ("[None] + [0.5] * (len(batch) - 1)", "a verdict without a score"),
    "count": ("[0.5]", "different number of predictions"),
}


@pytest.mark.parametrize("case", sorted(BAD_SCORES))
def test_bad_scores_end_to_end(trust_home, tmp_path, case):
    body, reason = BAD_SCORES[case]
    sub = _oracle(tmp_path / f"score-{case}", f"""
        class Oracle:
            def fit(self, context):
                pass

            def judge(self, batch):
                return {{"verdicts": [True] * len(batch), "scores": {body}}}
        """)
    r = evaluate(str(sub), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res", batch_size=4)
    assert r.n_failed == 0 and r.metrics["trust-acc"].n == N_TEST  # the verdicts count
    fails = r.extra["score_failures"]
    assert fails["n"] >= 2 and any(reason in k for k in fails["reasons"]), fails
    assert r.metrics["trust-auc"].excluded == 0 and r.metrics["trust-auc"].n == N_TEST  # failures at worst place
    assert r.metrics["trust-auc"].mean <= 0.5 + 1e-9 or case == "missing"  # only a failure's worst place


def test_only_a_reference_is_handed_the_training_rationales(trust_home, tmp_path):
    """The harness adds `train["rationale"]` to the fit context of a role = "reference" submission and
    of nothing else; the rationale ceiling refuses to run without it."""
    from benchmark.resources import data_home, load_resource
    from benchmark.tracks import get_track

    trk = get_track("trust")
    res = load_resource("trust/hatexplain-cnn")
    assert "rationale" not in trk.fit_context(res)["train"]
    assert "rationale" not in trk.fit_context(res, role="control")["train"]
    ref = trk.fit_context(res, role="reference")["train"]
    assert len(ref["rationale"]) == len(ref["tokens"]) and any(ref["rationale"])
    for role in ("method", "reference"):
        sub = _oracle(tmp_path / f"peek-{role}", """
            import json, os

            class Oracle:
                def fit(self, context):
                    with open(os.path.join(os.environ["XAIBENCH_SCRATCH"], "train.json"), "w") as f:
                        json.dump(sorted(context.train), f)

                def judge(self, batch):
                    return [True] * len(batch)
            """)
        toml = sub / "submission.toml"
        toml.write_text(toml.read_text().replace('kind = "oracle"', f'kind = "oracle"\nrole = "{role}"'))
        r = evaluate(str(sub), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res")
        assert r.n_failed == 0 and r.submission["role"] == role
        seen = json.loads((data_home() / "scratch" / f"peek-{role}" / "train.json").read_text())
        assert ("rationale" in seen) == (role == "reference"), (role, seen)
    ceiling = evaluate("rationale-ceiling", "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res")
    assert ceiling.n_failed == 0 and ceiling.submission["role"] == "reference"
    forced = evaluate("rationale-ceiling", "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res2",
                      params={"min_rate": 0.4})
    assert forced.n_failed == 0


def test_score_chunk_none_scores_in_one_call():
    from benchmark.store.cache import Entry
    from benchmark.runner import _score
    from benchmark.tracks.base import Instances
    from benchmark.tracks.trust import TrustTrack

    calls = []

    class OneCall(TrustTrack):
        score_chunk = None

        def score(self, explanations, truths, positions, **kw):
            calls.append(len(list(positions)))
            return super().score(explanations, truths, positions, **kw)

    n = 600
    inst = Instances(ids=[str(i) for i in range(n)], inputs=[{}] * n, truths={"trust": np.ones(n, dtype=bool)})
    entries = {str(i): Entry(str(i), True, np.array([1.0, -1.0], dtype=np.float32), "", 0.0) for i in range(n)}
    _score(OneCall(), inst, entries, "x", {})
    assert calls == [n]
    calls.clear()
    _score(type("Chunked", (OneCall,), {"score_chunk": 250})(), inst, entries, "x", {})
    assert calls == [250, 250, 100]


def test_oracle_folder_is_one_submission():
    sub = load_submission(Path(__file__).resolve().parents[1] / "submissions" / "naive_oracle")
    assert sub.kind == "oracle" and "text" in sub.modalities


def test_reproduce_trust_prints_table3_beside_the_paper(trust_home, tmp_path, capsys):
    from benchmark import cli
    from generators.trust.reproduce import paper_rows, run

    rows = run(["hatexplain-cnn"], ["naive-oracle", "random-oracle"], results_dir=tmp_path, extras=False)
    ours = [r for r in rows if r.source == "ours"]
    assert [r.method for r in ours] == ["Naive", "random"] and all(r.n == N_TEST for r in ours)
    assert all(r.rate is not None and r.values["auc"] is not None or r.values["auc"] is None for r in ours)
    # the board rows: the ceiling (a reference), chance at TOKI-lime's rate and the two blind controls
    # (controls), TOKI-lime read importance-equivalent
    rows = run(["hatexplain-cnn"], ["toki-lime"], results_dir=tmp_path, params={"toki-lime": FAST["toki"]})
    board = {r.method: r for r in rows if r.source == "ours"}
    toki = board["TOKI-lime"]
    matched = board["chance @ TOKI rate"]
    assert matched.role == "control" and board["rationale ceiling"].role == "reference"
    assert board["text length"].role == "control" and board["explanation size"].role == "control"
    assert matched.rate == pytest.approx(toki.rate, abs=0.2) and "TOKI-lime equiv." in board
    fig6 = [r for r in paper_rows("hatexplain-cnn") if r.source.startswith("Fig. 6")][0]
    assert fig6.values["gmean"] == pytest.approx(0.624, abs=0.001)  # Table 3's Naive row from the Fig. 6 counts
    try:
        cli.main(["reproduce", "trust", "--dataset", "hatexplain-cnn", "--oracle", "naive-oracle",
                  "--results", str(tmp_path)])
    except SystemExit as e:
        assert e.code in (0, None)
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "Table 3" in out and "paper" in out and "Fig. 6" in out and ".624" in out
    assert "board" in out and "AUC" in out and "ref" in out


def test_imported_trust_set_without_a_model(trust_home, tmp_path):
    """A set labelled by people and imported without its model: oracles that read the explained
    predictions only are scored; one that queries the model fails with the reason, per instance."""
    from benchmark.errors import ResourceError
    from generators.trust.importer import import_trust_set
    from tests.test_trust_generator import ROWS, _write_jsonl

    f = tmp_path / "people.jsonl"
    _write_jsonl(f, ROWS)
    import_trust_set(f, "people-demo", ["neg", "pos"])
    r = evaluate("naive-oracle", "trust", "trust/people-demo", model="imported", results_dir=tmp_path)
    assert r.n_instances == 3 and r.n_failed == 0 and r.model["architecture"] == "none"
    with pytest.raises(ResourceError, match="use --model imported"):
        evaluate("naive-oracle", "trust", "trust/people-demo", model="cnn", results_dir=tmp_path)
    sub = _oracle(tmp_path / "asks-model", """
        class Oracle:
            def fit(self, context):
                self.model = context.model

            def judge(self, batch):
                return [bool(p[1] > 0.5) for p in self.model.predict([x["tokens"] for x in batch.inputs])]
        """)
    r = evaluate(str(sub), "trust", "trust/people-demo", model="imported", results_dir=tmp_path)
    assert r.n_failed == 3 and all("imported without its model" in f.reason for f in r.failures)


def test_site_draws_each_oracles_confusion_matrix(trust_home, tmp_path):
    from leaderboard.site import build_site

    res = tmp_path / "results"
    r = evaluate("naive-oracle", "trust", "trust/hatexplain-cnn", results_dir=res)
    c = r.extra["confusion"]
    assert sum(c.values()) == N_TEST
    build_site(tmp_path / "site", res)
    pngs = list((tmp_path / "site" / "img").glob("trust__*naive-oracle*.png"))
    assert len(pngs) == 1 and pngs[0].stat().st_size > 1000
    board = next((tmp_path / "site" / "board").glob("trust*.html")).read_text()
    assert "confusion matrix" in board and f"{N_TEST} judged predictions" in board


def test_trust_board_shows_fit_time(trust_home, tmp_path, capsys):
    from benchmark import cli

    res = tmp_path / "results"
    evaluate("naive-oracle", "trust", "trust/hatexplain-cnn", results_dir=res)
    try:
        cli.main(["leaderboard", "--results", str(res), "--format", "md"])
    except SystemExit as e:
        assert e.code in (0, None)
    out = capsys.readouterr().out
    assert "fit (s)" in out and "naive-oracle" in out


def test_model_dir_of_trust_and_embedding_configs(tmp_path):
    """`xaibench list` asks every resource for its model folder: a trust set names it in `model_dir`,
    the embeddings resource records its models as a list (not a name → folder map)."""
    from benchmark.resources.store import Resource

    trust = Resource("trust", "x-cnn", tmp_path, {"params": {"model_dir": "model/x-cnn"}})
    assert trust.model_dir() == tmp_path / "model" / "x-cnn"
    emb = Resource("trust", "embeddings", tmp_path, {"params": {"models": ["glove-50d", "word2vec"]}})
    assert emb.model_dir() == tmp_path / "model" / "embeddings"
    idc = Resource("idc", "mr-wga", tmp_path, {"params": {"models": {"cnn": "mr-cnn", "han": "mr-han"}}})
    assert idc.model_dir() == tmp_path / "model" / "mr-cnn"


def test_a_restarted_worker_whose_fit_fails_ends_the_run(trust_home, tmp_path):
    """The first fit succeeds, judge kills the worker, the restarted worker's fit raises: the run stops
    with that reason instead of refitting once per instance (MAX_CRASHES times)."""
    sub = _oracle(tmp_path / "refit-fails", """
        import os

        class Oracle:
            def fit(self, context):
                marker = os.path.join(os.environ["XAIBENCH_SCRATCH"], "fitted-once")
                if os.path.exists(marker):
                    raise RuntimeError("second fit")
                open(marker, "w").close()

            def judge(self, batch):
                os._exit(3)
        """)
    from benchmark.resources import data_home

    marker = data_home() / "scratch" / "refit-fails" / "fitted-once"
    marker.unlink(missing_ok=True)
    r = evaluate(str(sub), "trust", "trust/hatexplain-cnn", results_dir=tmp_path / "res", batch_size=4)
    assert r.n_failed == N_TEST
    assert all("fit raised RuntimeError: second fit" in f.reason for f in r.failures), r.failures[0].reason
    assert r.provenance["isolation"]["worker_starts"] == 2


def _tuning_data(monkeypatch, validation_trust):
    """load_trust_set with the test split's ground truth removed and the validation labels set to
    `validation_trust` (cycled): both branches of the tuning run on every fixture, never an early return."""
    from generators.trust import experiments

    real = experiments.load_trust_set

    def no_test_labels(config, root=None):
        data = real(config, root)
        data["test"] = [{k: v for k, v in r.items() if k not in ("trust", "precision", "rationale")}
                        for r in data["test"]]
        data["validation"] = [{**r, "trust": validation_trust[i % len(validation_trust)]}
                              for i, r in enumerate(data["validation"])]
        return data

    monkeypatch.setattr(experiments, "load_trust_set", no_test_labels)


def test_tuning_reads_the_validation_split_only(trust_home, tmp_path, monkeypatch):
    """θ_dist / θ_conf are swept on the validation trust set; the test split's labels are never read."""
    import pyarrow.parquet as pq

    from generators.trust.tune import tune_trust_set

    _tuning_data(monkeypatch, [True, False])
    val = pq.read_table(trust_home / "resources" / "trust" / "hatexplain-cnn" /
                        "validation-00000-of-00001.parquet").to_pylist()
    assert len(val) >= 2
    out = tune_trust_set("hatexplain-cnn", dist_grid=(0.3, 0.6), conf_grid=(0.5, 0.9), write=False,
                         toki_params={"lemmatize": False})
    assert out["validation"]["n"] == len(val) and out["toki-lime"]["theta_dist"] in (0.3, 0.6)
    assert out["validation"]["trust"] == (len(val) + 1) // 2
    assert out["naive-oracle"]["theta_conf"] in (0.5, 0.9) and set(out["toki-lime"]["curve"]) == {0.3, 0.6}
    assert out["toki-lime"]["pipeline1_explanations"] == 12  # the stored training explanations
    # issue #38: by AUC (the board's metric), over the class-name candidates and the importance reading too,
    # and the –K.I ablation tuned on the same grid
    assert out["criterion"] == "auc" and out["toki-lime"]["importance"] in ("different", "equivalent")
    assert out["toki-lime"]["class_names"][0] == "normal" and len(out["toki-lime"]["class_names"]) == 2
    assert len(out["toki-lime"]["grid"]) >= 2 * 2 * 2 and len(out["toki-lime-ki"]["grid"]) >= 2 * 2
    best = max(v for v in out["toki-lime"]["grid"].values() if v is not None)
    assert out["toki-lime"]["curve"][out["toki-lime"]["theta_dist"]]["auc"] == best


def test_tuning_refuses_a_one_class_validation_split(trust_home, monkeypatch):
    from generators.trust.tune import tune_trust_set

    _tuning_data(monkeypatch, [True])
    with pytest.raises(ValueError, match="one class"):
        tune_trust_set("hatexplain-cnn", write=False)
