"""The runner: results, resume after a kill, broken submissions, time limits, cache keys."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmark.store.cache import OutputCache
from benchmark.errors import CacheError, RegistryError, ResourceError, SubmissionError
from benchmark.store.results import Result
from benchmark.runner import evaluate, validate_output
from tests.conftest import write_submission

GT_COPY = """
# a ground-truth-free 'oracle' for tests: paints each object's area (uniform over objects)
return [np.where(s > 0, 1.0, 0.0).astype(np.float32) for s in batch.segments]
"""


def test_validate_output_reasons():
    assert validate_output(np.zeros((4, 4)), (4, 4))[1] == ""
    assert "shape" in validate_output(np.zeros((3, 4)), (4, 4))[1]
    assert "non-finite" in validate_output(np.full((4, 4), np.nan), (4, 4))[1]
    assert "numeric" in validate_output("abc", (4, 4))[1]


def test_evaluate_writes_valid_result(home, tmp_path):
    r = evaluate("uniform", track="aixi", resource="aixi/shape-ssin", model="function", limit=8,
                 results_dir=tmp_path)
    assert r.n_instances == 8 and r.n_failed == 0
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1
    back = Result.load(files[0])
    assert back.metrics["kl"].mean == pytest.approx(r.metrics["kl"].mean)
    assert back.resource["revision"] == r.resource["revision"]
    assert r.primary_metric == "kl" and r.metrics["kl"].direction == "lower"


def test_broken_submission_failures_are_recorded(home, tmp_path):
    body = """
out = []
for i, x in zip(batch.ids, batch.inputs):
    k = int(i.split('-')[-1]) % 4
    if k == 0:
        out.append(np.zeros((5, 5)))            # wrong shape
    elif k == 1:
        out.append(np.full(x.shape, np.nan))    # NaN
    elif k == 2:
        raise RuntimeError('boom ' + i)         # raises (isolated by per-instance retry)
    else:
        out.append(np.ones(x.shape))
return out
"""
    sub = write_submission(tmp_path / "broken", "broken", body)
    r = evaluate(str(sub), track="aixi", resource="aixi/shape-ssin", model="function", limit=8,
                 batch_size=4, results_dir=tmp_path / "res")
    reasons = {f.instance: f.reason for f in r.failures}
    assert r.n_instances == 8 and r.n_failed == 6
    assert any("shape (5, 5)" in v for v in reasons.values())
    assert any("non-finite" in v for v in reasons.values())
    assert any("RuntimeError: boom" in v for v in reasons.values())
    assert r.metrics["kl"].n == 2


def test_hanging_explainer_times_out(home, tmp_path):
    sub = write_submission(tmp_path / "hang", "hang", "time.sleep(30)\nreturn []\n")
    r = evaluate(str(sub), track="aixi", resource="aixi/shape-ssin", model="function", limit=2,
                 batch_size=2, timeout_s=0.3, results_dir=tmp_path / "res")
    assert r.n_failed == 2 and all("timed out" in f.reason for f in r.failures)
    assert r.metrics["kl"].mean is None


def test_resume_after_kill_computes_each_instance_once(home, tmp_path):
    """kill -9 of the harness mid-run (its worker dies with it), then resume: committed instances are
    never recomputed, the interrupted batch is, and the Result equals a clean run's."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from benchmark.resources import data_home

    log = data_home() / "scratch" / "killme" / "calls.log"
    log.unlink(missing_ok=True)
    body = """
import os, time
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'calls.log'), 'a') as fh:
    for i in batch.ids:
        fh.write(i + '\\n')
time.sleep(0.4)
return [np.where(s > 0, 1.0, 0.0) for s in batch.segments]
"""
    sub = write_submission(tmp_path / "killme", "killme", body)
    kw = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=12, batch_size=3,
              results_dir=tmp_path / "res")
    code = (f"from benchmark.runner import evaluate; evaluate({str(sub)!r}, track='aixi', resource='aixi/shape-ssin',"
            f" model='function', limit=12, batch_size=3, results_dir={str(tmp_path / 'res')!r})")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, env=os.environ.copy())
    t0 = time.time()
    while time.time() - t0 < 120 and (not log.exists() or len(log.read_text().split()) < 6):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = len(log.read_text().split())
    assert 6 <= killed_at < 12 and not list((tmp_path / "res").rglob("*.json"))
    r = evaluate(str(sub), **kw)
    calls = log.read_text().split()
    assert r.n_failed == 0 and r.n_instances == 12
    # finished batches are never recomputed; at most the batch in flight at the kill is
    assert len(set(calls)) == 12
    assert len(calls) <= 12 + 3
    before = len(calls)
    again = evaluate(str(sub), **kw)  # finished: nothing recomputed
    assert len(log.read_text().split()) == before
    clean = evaluate(str(sub), **{**kw, "results_dir": tmp_path / "clean"}, overwrite=True)
    assert again.metrics["kl"].mean == clean.metrics["kl"].mean == r.metrics["kl"].mean


def test_results_do_not_depend_on_batch_size(home, tmp_path):
    a = evaluate("random", track="aixi", resource="aixi/shape-ssin", model="function", limit=10,
                 batch_size=3, results_dir=tmp_path / "a", overwrite=True)
    b = evaluate("random", track="aixi", resource="aixi/shape-ssin", model="function", limit=10,
                 batch_size=10, results_dir=tmp_path / "b", overwrite=True)
    assert a.metrics["kl"].mean == pytest.approx(b.metrics["kl"].mean, rel=1e-6)


def test_cache_refuses_a_different_revision(tmp_path):
    key = {"resource": "aixi/x", "revision": "aaa", "model": "m", "submission": "s", "parameters": {}, "seed": 0}
    OutputCache(tmp_path / "c.sqlite", key).close()
    with pytest.raises(CacheError, match="revision.*--overwrite"):
        OutputCache(tmp_path / "c.sqlite", {**key, "revision": "bbb"})
    OutputCache(tmp_path / "c.sqlite", {**key, "revision": "bbb"}, overwrite=True).close()


def test_unknown_names_give_clear_errors(home, tmp_path):
    with pytest.raises(RegistryError, match="unknown submission 'nope'"):
        evaluate("nope", track="aixi", resource="aixi/shape-ssin")
    with pytest.raises(RegistryError, match="unknown track 'nope'"):
        evaluate("uniform", track="nope", resource="aixi/shape-ssin")
    with pytest.raises(ResourceError, match="not found.*xaibench generate aixi"):
        evaluate("uniform", track="aixi", resource="aixi/shape-nothing", model="function")
    with pytest.raises(ResourceError, match="<family>/<config>"):
        evaluate("uniform", track="aixi", resource="shape-ssin", model="function")


def test_gradient_explainer_refused_on_black_box(home):
    with pytest.raises(SubmissionError, match="needs gradients"):
        evaluate("saliency", track="aixi", resource="aixi/shape-ssin", model="function", limit=2)


def test_explainer_may_refuse_a_model_it_cannot_use(home, tmp_path):
    sub = write_submission(tmp_path / "picky", "picky", "return [np.zeros(x.shape) for x in batch.inputs]")
    (sub / "explainer.py").write_text((sub / "explainer.py").read_text() + (
        "\n    def unsupported(self, model):\n"
        "        return None if model.white_box else 'picky needs a torch module'\n"))
    with pytest.raises(SubmissionError, match="cannot evaluate: picky needs a torch module"):
        evaluate(sub, "aixi", "aixi/shape-ssin", model="function", results_dir=tmp_path / "r")
    res = evaluate(sub, "aixi", "aixi/shape-ssin", model="cnn", limit=2, results_dir=tmp_path / "r")
    assert res.n_failed == 0


def test_truncated_resource_is_detected_and_not_modified(home, tmp_path, monkeypatch):
    import shutil

    src = home / "resources" / "aixi"
    copy = tmp_path / "h" / "resources" / "aixi"
    shutil.copytree(src, copy)
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "h"))
    f = copy / "shape-ssin" / "validation-00000-of-00001.parquet"
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    with pytest.raises(ResourceError, match="truncated.*xaibench generate aixi --overwrite"):
        evaluate("uniform", track="aixi", resource="aixi/shape-ssin", model="function", limit=2)
    assert f.read_bytes() == data[: len(data) // 2]
    prov = json.loads((copy / "provenance.json").read_text())
    assert "shape-ssin" in prov["configs"]


def test_cnn_model_evaluates_with_gradients(home, tmp_path):
    r = evaluate("saliency", track="aixi", resource="aixi/shape-ssin", model="cnn", limit=4,
                 results_dir=tmp_path)
    assert r.n_failed == 0 and r.model["name"] == "cnn" and "validation" in r.model


def test_micro_batch_gradient_equals_full_batch():
    """Training accumulates micro-batch gradients: the same gradient as one pass over the batch."""
    import torch

    from benchmark.models.architectures import AixiCNN

    torch.manual_seed(0)
    m = AixiCNN(size=32).eval()  # eval: no dropout, so both passes see the same function
    x, y = torch.rand(8, 1, 32, 32), torch.rand(8, 1)
    loss = torch.nn.MSELoss()
    m.zero_grad()
    loss(m(x), y).backward()
    full = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    for s in range(0, 8, 3):
        (loss(m(x[s:s + 3]), y[s:s + 3]) * (len(x[s:s + 3]) / 8)).backward()
    for a, b in zip(full, [p.grad for p in m.parameters()]):
        assert torch.allclose(a, b, atol=1e-6)


def test_changed_submission_code_starts_a_fresh_cache(home, tmp_path):
    """Editing a submission (or upgrading xaibench's built-ins) never makes a rerun fail on the old
    cache: the code's hash names the cache file, so the new code gets its own."""
    sub = write_submission(tmp_path / "ed", "edited", "return [np.ones(x.shape) for x in batch.inputs]")
    kw = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=3, results_dir=tmp_path / "r")
    evaluate(str(sub), **kw)
    (sub / "explainer.py").write_text((sub / "explainer.py").read_text() + "\n# edited\n")
    assert evaluate(str(sub), **kw).n_failed == 0
    from benchmark.resources import data_home

    assert len(list((data_home() / "cache").rglob("edited-*.sqlite"))) == 2


def test_seed_runs_make_one_result_whose_scores_hold_every_seed(home, tmp_path):
    """`--seeds 0,1,2`: one Result; the stochastic explainer's per-instance scores per seed are stored
    for the boards' bootstrap, the mean is the mean over seeds, and `xaibench verify` re-scores it."""
    from benchmark.cli import _parse_seeds
    from benchmark.verify import verify_result

    assert _parse_seeds("0, 1,2") == [0, 1, 2] and _parse_seeds(None) is None
    for bad in ("0,0", "a", "-1", ""):
        with pytest.raises(Exception, match="--seeds"):
            _parse_seeds(bad)
    multi = evaluate("random", track="aixi", resource="aixi/shape-ssin", model="function", limit=6,
                     results_dir=tmp_path / "multi", seeds=[0, 1, 2], sandbox="none")
    singles = [evaluate("random", track="aixi", resource="aixi/shape-ssin", model="function", limit=6,
                        results_dir=tmp_path / f"s{s}", seed=s, sandbox="none") for s in (0, 1, 2)]
    assert multi.provenance["seeds"] == [0, 1, 2] and len(multi.extra["caches"]) == 3
    sc = multi.scores()
    assert sc.seeds == [0, 1, 2] and sc.arrays["kl"].shape == (3, 6)
    for k, single in enumerate(singles):  # each seed run is the single-seed run
        assert np.allclose(sc.arrays["kl"][k], single.scores().arrays["kl"][0], equal_nan=True)
    assert multi.metrics["kl"].mean == pytest.approx(np.mean([s.metrics["kl"].mean for s in singles]))
    lo, hi = multi.metrics["kl"].ci95
    assert lo <= multi.metrics["kl"].mean <= hi
    path = next((tmp_path / "multi").rglob("*.json"))
    assert verify_result(path).ok, verify_result(path).problems
    with pytest.raises(Exception, match="seeds"):
        evaluate("random", track="aixi", resource="aixi/shape-ssin", model="function", limit=2,
                 results_dir=tmp_path, seeds=[1, 1])
