"""`evaluate --backend ray`: the same Result as the local backend, and resume after the driver is killed.

Every Ray instance these tests start runs inside a private network namespace (and PID namespace, so
killing the driver ends every Ray process with it): only loopback can be reached (`unshare -n`, as
root). Where that is not possible, or Ray is not installed, the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_submission

REPO = Path(__file__).resolve().parents[1]
NETNS = ["unshare", "-n", "-p", "-f", "--kill-child", "--mount-proc", "sh", "-c", 'ip link set lo up && exec "$@"',
         "sh"]


def _contained() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed (pip install 'xaibench[ray]'; `make test` installs it)"
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return "needs root with unshare and ip to keep Ray inside a private network namespace (loopback only)"
    probe = subprocess.run([*NETNS, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"cannot make a private network namespace here ({probe.stderr.strip()[:200]})"
    return None


contained = pytest.mark.skipif(bool(_contained()), reason=_contained() or "")


def _env(home: Path) -> dict:
    return {**os.environ, "XAIBENCH_HOME": str(home), "XAIBENCH_PROGRESS": "0", "RAY_USAGE_STATS_ENABLED": "0",
            "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _xaibench(*args: str) -> list[str]:
    return [*NETNS, sys.executable, "-m", "benchmark.cli", *args]


def _metrics(path: Path) -> dict:
    d = json.loads(path.read_text())
    return {"metrics": d["metrics"], "coverage": d["coverage"], "outputs": d["integrity"]["outputs_sha256"],
            "failures": d["failures"], "submission": d["submission"], "resource": d["resource"], "model": d["model"]}


# Both Ray runs of `test_ray_gives_the_local_result` in one driver process and one private Ray instance,
# started as `benchmark.backends._ray_init` starts it (each `evaluate` finds it running and leaves it): one
# Ray start instead of two. The command line's `--backend ray` is `test_killed_driver_resumes`'s path.
RAY_DRIVER = """
import json, sys
import ray
from benchmark.runner import evaluate
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1",
         configure_logging=False)
for sub, model, params in json.loads(sys.argv[1]):
    evaluate(sub, "aixi", "aixi/shape-ssin", model=model, limit=10, batch_size=3, results_dir=sys.argv[2],
             sandbox="none", overwrite=True, params=params, backend="ray", workers=2)
ray.shutdown()
"""


@pytest.mark.slow(reason="a private Ray instance (its processes import torch and xaibench) and the local runs")
@contained
def test_ray_gives_the_local_result(home, tmp_path):
    """occlusion and random on the tiny AIXI resource, CNN and function model: local vs Ray (2 workers,
    outputs recomputed), field for field the same metrics, coverage and outputs digest. Occlusion with
    32-pixel windows (16 per image, not its default 225): what is compared is the backend, not the method."""
    from benchmark.runner import evaluate

    local, remote = tmp_path / "local", tmp_path / "ray"
    jobs = [("occlusion", "cnn", {"window": 32, "stride": 32}), ("random", "function", {})]
    for sub, model, params in jobs:
        evaluate(sub, "aixi", "aixi/shape-ssin", model=model, limit=10, batch_size=3, results_dir=local,
                 sandbox="none", overwrite=True, params=params)
    p = subprocess.run([*NETNS, sys.executable, "-c", RAY_DRIVER, json.dumps(jobs), str(remote)], env=_env(home),
                       capture_output=True, text=True, timeout=400)
    assert p.returncode == 0, p.stderr[-2000:]
    files = sorted(q.relative_to(local) for q in local.rglob("*.json"))
    assert len(files) == 2 and files == sorted(q.relative_to(remote) for q in remote.rglob("*.json"))
    for f in files:
        a, b = _metrics(local / f), _metrics(remote / f)
        assert a == b, f
        prov = json.loads((remote / f).read_text())["provenance"]
        assert prov["backend"] == {"name": "ray", "address": None, "workers": 2}
        assert "backend" not in json.loads((local / f).read_text())["provenance"]


def _rows(cache: Path) -> dict[str, float]:
    db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5)
    try:
        return {i: s for i, s in db.execute("SELECT instance, seconds FROM outputs")}
    except sqlite3.OperationalError:
        return {}
    finally:
        db.close()


@pytest.mark.slow(reason="two Ray instances, one killed mid-run; 16 instances that sleep 0.4 s each")
@contained
def test_killed_driver_resumes(home, tmp_path):
    """A slow submission on 16 images, 8 units on 2 Ray workers; the driver (and, with it, Ray) is killed
    once some units are in the cache; the rerun computes only the rest and keeps the cached rows."""
    sub = write_submission(tmp_path / "slow", "slow-ray", """\
        time.sleep(0.4 * len(batch.ids))
        return [np.full(x.shape[:2], float(k + 1), dtype=np.float32) for k, x in enumerate(batch.inputs)]
        """)
    results = tmp_path / "results"
    args = _xaibench("evaluate", str(sub), "--track", "aixi", "-r", "aixi/shape-ssin", "-m", "cnn", "--limit", "16",
                     "--batch-size", "2", "--backend", "ray", "--workers", "2", "--sandbox", "none",
                     "--no-randomisation", "--results", str(results))  # what is tested is the resume
    driver = subprocess.Popen(args, env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    cache_dir = home / "cache" / "aixi" / "aixi__shape-ssin" / "cnn"
    deadline = time.monotonic() + 300
    before: dict[str, float] = {}
    try:
        while time.monotonic() < deadline and driver.poll() is None:
            caches = sorted(cache_dir.glob("slow-ray-*.sqlite"))
            before = _rows(caches[-1]) if caches else {}
            if len(before) >= 4:
                break
            time.sleep(0.2)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        out = driver.communicate(timeout=60)[0].decode(errors="replace")
    assert 4 <= len(before) < 16, f"the run was not caught mid-way ({len(before)} rows): {out[-1500:]}"
    time.sleep(1)
    cache = sorted(cache_dir.glob("slow-ray-*.sqlite"))[-1]
    kept = _rows(cache)
    assert len(kept) < 16 and not list(results.rglob("*.json"))  # killed before any Result was written

    p = subprocess.run(args, env=_env(home), capture_output=True, text=True, timeout=400)
    assert p.returncode == 0, p.stderr[-2000:]
    after = _rows(cache)
    assert len(after) == 16
    assert {i: after[i] for i in kept} == kept  # the units in the cache were not computed again
    (result,) = results.rglob("*.json")
    d = json.loads(result.read_text())
    assert d["n_instances"] == 16 and d["n_failed"] == 0


def test_plan_units():
    from benchmark.backends import plan_units

    batches = [[2 * i, 2 * i + 1] for i in range(10)]
    units = plan_units(batches, workers=2, per_worker=2)
    assert [len(u) for u in units] == [3, 3, 3, 1]
    assert [p for u in units for b in u for p in b] == list(range(20))  # every position once, in order
    assert plan_units([], 2) == [] and plan_units(batches[:1], 8) == [[[0, 1]]]


def test_backend_options_are_checked(home, tmp_path, capsys):
    from benchmark import cli
    from benchmark.errors import XaibenchError
    from benchmark.runner import RunOptions

    for argv in (["--backend", "spark"], ["--backend", "ray", "--workers", "0"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(["evaluate", "uniform", "--track", "aixi", "-m", "function", "--limit", "2",
                      "--results", str(tmp_path), *argv])
        assert exc.value.code == 2
    assert "spark" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
    with pytest.raises(XaibenchError, match="backend must be one of local, ray"):
        RunOptions(backend="dask").check()
    with pytest.raises(XaibenchError, match="workers must be an integer"):
        RunOptions(backend="ray", workers=0).check()


def test_the_cli_offers_the_backends_the_runner_knows():
    """`--backend`'s choices (benchmark.cli.Backend, kept light: no import of the backends) are
    `benchmark.backends.BACKENDS`."""
    from benchmark import cli
    from benchmark.backends import BACKENDS

    assert tuple(b.value for b in cli.Backend) == BACKENDS


def test_ray_needs_the_job_and_the_instances():
    from benchmark.backends import run_batches

    with pytest.raises(TypeError, match="needs the instances and the job"):
        next(run_batches([[0]], lambda b: [], backend="ray"))
    assert list(run_batches([], lambda b: [], backend="ray")) == []  # nothing to do: nothing asked for


def test_a_worker_that_keeps_crashing_stops_the_run():
    """`explain_batch` (the loop both backends run): a crashed batch is retried instance by instance;
    after MAX_CRASHES crashes in a row the rest fails unrun; a fatal crash ends it at once."""
    from benchmark.backends import Crashes, explain_batch
    from benchmark.contracts import Batch
    from benchmark.isolation import MAX_CRASHES, WorkerCrash

    class Instances:
        ids = [f"i{k}" for k in range(MAX_CRASHES + 3)]
        output_shapes = [(1,)] * len(ids)

        def batch(self, positions, seed):
            return Batch(ids=[self.ids[p] for p in positions], inputs=None, seed=seed)

    class Crashing:
        def __init__(self, fatal=False):
            self.calls, self.fatal = 0, fatal

        def explain(self, ids, inputs, segments, seed, shapes, timeout_s):
            self.calls += 1
            raise WorkerCrash("boom", fatal=self.fatal)

    crashes, worker = Crashes(), Crashing()
    entries = explain_batch(worker, Instances(), [0, 1], 0, 1.0, crashes)
    assert [e.reason for e in entries] == ["crashed: boom"] * 2 and worker.calls == 3 and crashes.in_a_row == 3
    rest = explain_batch(worker, Instances(), list(range(2, MAX_CRASHES + 3)), 0, 1.0, crashes)
    assert crashes.in_a_row == MAX_CRASHES and not any(e.ok for e in rest)
    assert rest[-1].reason.startswith(f"not run: the worker crashed {MAX_CRASHES} times in a row (last: boom)")
    fatal = Crashes()
    out = explain_batch(Crashing(fatal=True), Instances(), [0, 1], 0, 1.0, fatal)
    assert fatal.stopped == "not run: boom" and [e.reason for e in out] == ["not run: boom"] * 2
