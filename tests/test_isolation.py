"""Hostile submissions (issue: a leaderboard people can trust). Each test plays an attack or a fault
and asserts it is contained: no ground truth reached, no file outside the worker's own folders
changed, the run completes with recorded failures where due, and every other submission's numbers
and Result files unchanged.

The attacks know the real paths of the harness's data home and results (the worst case): the
sandbox must hide them, not rely on the submission not knowing where they are.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from benchmark.resources import data_home
from benchmark.runner import evaluate
from benchmark.isolation import landlock
from benchmark.isolation.sandbox import bwrap_problem
from tests.conftest import write_submission

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unavailable: {bwrap_problem()}")
needs_landlock = pytest.mark.skipif(landlock.problem() is not None,
                                    reason=f"Landlock unavailable: {landlock.problem()}")
# the file-system boundary of each worker: bubblewrap's view, the plain worker's Landlock rules
CONFINED = [pytest.param("bwrap", marks=needs_bwrap), pytest.param("none", marks=needs_landlock)]
RUN = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=4, batch_size=2)
UNIFORM_SHAPED = "return [np.ones(x.shape, np.float32) for x in batch.inputs]"


def snapshot(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """sha256 of every file under `root` (paths relative), except those under `skip` prefixes."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(skip):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def report(name: str) -> str:
    """What a hostile submission wrote into its own scratch folder (its only persistent place)."""
    p = data_home() / "scratch" / name / "report.txt"
    return p.read_text() if p.exists() else ""


def evaluate_reference(tmp_path: Path):
    """A well-behaved submission's Result, evaluated before the attack (its file must survive)."""
    r = evaluate("uniform", results_dir=tmp_path / "res", **RUN)
    files = list((tmp_path / "res").rglob("*.json"))
    assert len(files) == 1
    return r, files[0], files[0].read_bytes()


@pytest.fixture()
def reference(home, tmp_path):
    """`evaluate_reference` in the test's home."""
    return evaluate_reference(tmp_path)


def hostile(tmp_path: Path, name: str, body: str, **kw) -> Path:
    return write_submission(tmp_path / name, name, body, **kw)


def check_contained(reference, tmp_path) -> None:
    r, path, data = reference
    assert path.read_bytes() == data, "another submission's Result file changed"
    again = evaluate("uniform", results_dir=tmp_path / "res2", **RUN)
    assert again.metrics["kl"].mean == r.metrics["kl"].mean


@pytest.mark.parametrize("sandbox", CONFINED)
def test_reading_ground_truth_files_finds_nothing(reference, tmp_path, sandbox):
    """Knowing the real paths of the data home, a resource card, another Result and the hidden copies'
    secret (issue #50) gets a submission nothing, in either worker."""
    from benchmark.models.variants.hidden import local_round, secret_path

    home, result = data_home(), reference[1]
    local_round()  # the per-home secret, made as the harness makes it
    body = f"""
import glob, os, io
paths = glob.glob({str(home)!r} + '/**/*', recursive=True)
seen = [p for p in paths if os.path.isfile(p)]
def readable(path):
    try:
        return len(open(path, 'rb').read()) > 0
    except OSError:
        return False
card, secret, result = (readable(p) for p in ({str(home / 'resources' / 'aixi' / 'README.md')!r},
                                               {str(secret_path())!r}, {str(result)!r}))
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'report.txt'), 'w') as fh:
    fh.write(f'files={{len(seen)}} card={{card}} secret={{secret}} result={{result}} '
             f'env={{os.environ.get("XAIBENCH_HOME")}}')
{UNIFORM_SHAPED}
"""
    before = snapshot(home, skip=("scratch/", "cache/", "results/"))
    name = f"gt-reader-{sandbox}"
    r = evaluate(str(hostile(tmp_path, name, body)), results_dir=tmp_path / "res", sandbox=sandbox, **RUN)
    assert r.n_failed == 0
    assert report(name).startswith("files=0 card=False secret=False result=False env=/tmp/")
    assert snapshot(home, skip=("scratch/", "cache/", "results/")) == before
    check_contained(reference, tmp_path)


@pytest.mark.parametrize("sandbox", CONFINED)
def test_writing_into_the_data_home_and_results_fails(reference, tmp_path, sandbox):
    from benchmark.models.variants.hidden import local_round, secret_path

    _, path, _ = reference
    secret = local_round().secret
    body = f"""
import os, json
hits = []
for target in ({str(path)!r}, {str(data_home() / 'resources' / 'planted.txt')!r}, {str(secret_path())!r}):
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, 'w') as fh:
            fh.write(json.dumps({{'metrics': {{'kl': {{'mean': -1}}}}}}))
        hits.append(target)
    except OSError:
        pass
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'report.txt'), 'w') as fh:
    fh.write(f'written={{len(hits)}}')
{UNIFORM_SHAPED}
"""
    name = f"forger-{sandbox}"
    evaluate(str(hostile(tmp_path, name, body)), results_dir=tmp_path / "res", sandbox=sandbox, **RUN)
    # the writes landed (if anywhere) in the bubblewrap worker's private /tmp, never in the real folders
    assert report(name) == "written=0" if sandbox == "none" else report(name).startswith("written=")
    assert not (data_home() / "resources" / "planted.txt").exists() and local_round().secret == secret
    check_contained(reference, tmp_path)


def test_stack_model_and_memory_hold_no_ground_truth(reference, tmp_path):
    """inspect.stack(), the model object's __dict__ and every object in the worker's memory: no
    instance truths, no function-model references (they never leave the harness)."""
    body = """
import gc, inspect, os
found = []
for f in inspect.stack():
    for k, v in f.frame.f_locals.items():
        if k in ('instances', 'truths') or hasattr(v, 'truths'):
            found.append('stack:' + k)
d = object.__getattribute__(model, '__dict__')
found += ['model:' + k for k in d if 'ref' in k.lower() or 'function' in k.lower()]
for o in gc.get_objects():
    if isinstance(o, dict) and any(isinstance(o.get(k), (np.ndarray, list)) for k in ('gt', 'patterns', 'truths')):
        found.append('heap:dict')
    if type(o).__name__ in ('Instances', 'FunctionModel', 'Reference'):
        found.append('heap:' + type(o).__name__)
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'report.txt'), 'w') as fh:
    fh.write('found=' + ','.join(sorted(set(found))))
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "snoop", body)), results_dir=tmp_path / "res", sandbox="none", **RUN)
    assert r.n_failed == 0
    assert report("snoop") == "found="
    check_contained(reference, tmp_path)


def test_patching_the_harness_reaches_no_score(reference, tmp_path):
    body = """
import benchmark.metrics.saliency as s, benchmark.metrics as m, benchmark.runner as runner
s.kl = lambda *a, **k: np.zeros(len(a[0]))
for metric in list(m.METRICS.values()) if hasattr(m.METRICS, 'values') else []:
    object.__setattr__(metric, 'fn', lambda e, t, **k: np.zeros(len(e)))
runner.validate_output = lambda out, shape: (np.zeros(shape, np.float32), '')
return [np.random.default_rng(0).random(x.shape).astype(np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "patcher", body)), results_dir=tmp_path / "res", **RUN)
    assert r.n_failed == 0 and r.metrics["kl"].mean > 0.05
    check_contained(reference, tmp_path)


def test_os_exit_is_a_recorded_failure(reference, tmp_path):
    body = """
import os
if batch.ids[0].endswith(('1', '3', '5', '7', '9')):
    os._exit(0)
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "exiter", body)), results_dir=tmp_path / "res", **RUN)
    crashed = [f for f in r.failures if "crashed" in f.reason]
    assert crashed and all("exited with status 0" in f.reason for f in crashed)
    assert r.n_failed == len(crashed) < r.n_instances  # the others were explained by fresh workers
    check_contained(reference, tmp_path)


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_native_hang_with_sigalrm_blocked_is_killed(reference, tmp_path, sandbox):
    body = """
import ctypes, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM, signal.SIGINT})
ctypes.CDLL(None).sleep(40)
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    t0 = time.monotonic()
    r = evaluate(str(hostile(tmp_path, f"sleeper-{sandbox}", body)), results_dir=tmp_path / "res",
                 timeout_s=1.0, sandbox=sandbox, **RUN)
    assert time.monotonic() - t0 < 30  # 2 batches × 2 s limit, plus worker starts; never 40 s per batch
    assert r.n_failed == 4 and all("timed out" in f.reason for f in r.failures)
    check_contained(reference, tmp_path)


@needs_bwrap
def test_network_is_unreachable(reference, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    connected = []

    def accept():
        t0 = time.time()
        while time.time() - t0 < 20:
            try:
                connected.append(server.accept())
            except OSError:
                pass

    th = threading.Thread(target=accept, daemon=True)
    th.start()
    body = f"""
import socket, os
try:
    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'gt please'); ok = True
except OSError as exc:
    ok = False
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'report.txt'), 'w') as fh:
    fh.write(f'connected={{ok}}')
{UNIFORM_SHAPED}
"""
    evaluate(str(hostile(tmp_path, "caller", body)), results_dir=tmp_path / "res", **RUN)
    assert report("caller") == "connected=False"
    assert not connected
    server.close()
    check_contained(reference, tmp_path)


def _run_and_check_no_heartbeat(tmp_path, name: str, body: str, sandbox: str) -> None:
    """Run the forking submission `body`, then check that nothing it started still appends to its scratch's
    beat.txt once the run is over (the file stops growing)."""
    evaluate(str(hostile(tmp_path, name, body)), results_dir=tmp_path / "res", sandbox=sandbox, **RUN)
    beat = data_home() / "scratch" / name / "beat.txt"
    time.sleep(0.5)
    n = beat.stat().st_size if beat.exists() else 0
    time.sleep(1.0)
    assert (beat.stat().st_size if beat.exists() else 0) == n, "a process of the worker is still running"


def test_a_grandchild_whose_parent_is_still_alive_does_not_outlive_the_run(reference, tmp_path):
    """Without a PID namespace (`--sandbox none`) the harness ends the worker's orphans: a child that forked and
    still lives is killed first, and only then hands its own child to the harness — a single round of killing let
    that grandchild write on (the flake of test_forked_process_does_not_outlive_the_run[none] under load)."""
    name = "forker-alive"
    body = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        path = os.path.join(os.environ['XAIBENCH_SCRATCH'], 'beat.txt')
        for _ in range(600):
            with open(path, 'a') as fh:
                fh.write('.')
            time.sleep(0.05)
        os._exit(0)
    time.sleep(60)
    os._exit(0)
time.sleep(0.3)
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    _run_and_check_no_heartbeat(tmp_path, name, body, "none")


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_forked_process_does_not_outlive_the_run(reference, tmp_path, sandbox):
    name = f"forker-{sandbox}"
    body = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        path = os.path.join(os.environ['XAIBENCH_SCRATCH'], 'beat.txt')
        for _ in range(600):
            with open(path, 'a') as fh:
                fh.write('.')
            time.sleep(0.05)
    os._exit(0)
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    _run_and_check_no_heartbeat(tmp_path, name, body, sandbox)
    check_contained(reference, tmp_path)


def test_allocating_past_the_memory_limit(reference, tmp_path):
    body = """
big = np.ones((4 << 30) // 8)  # 4 GiB, over the 2 GiB limit
return [np.ones(x.shape, np.float32) + big[:1] for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "hog", body)), results_dir=tmp_path / "res", memory_gb=2, **RUN)
    assert r.n_failed == 4 and all("MemoryError" in f.reason or "crashed" in f.reason for f in r.failures)
    check_contained(reference, tmp_path)


@pytest.mark.parametrize("body,reason", [
    ("return [object() for x in batch.inputs]", "not a numeric array"),
    ("return (np.full(x.shape, np.nan) for x in batch.inputs)", "non-finite"),
    ("return [np.ones((3, 3)) for x in batch.inputs]", "shape"),
    ("return [np.ones(batch.inputs[0].shape)] * (len(batch) + 1)", "outputs for a batch of"),
    ("import sys\nsys.exit(3)", "SystemExit"),
    ("print('x' * 50_000_000); import sys; sys.stderr.write('y' * 10_000_000)\n" + UNIFORM_SHAPED, None),
])
def test_bad_outputs_are_recorded(reference, tmp_path, body, reason):
    name = "bad-" + hashlib.sha256(body.encode()).hexdigest()[:8]
    r = evaluate(str(hostile(tmp_path, name, body)), results_dir=tmp_path / "res", **RUN)
    if reason is None:
        assert r.n_failed == 0  # a flood of output is drained, never a hang
    else:
        assert r.n_failed == 4 and all(reason in f.reason for f in r.failures), r.failures
    check_contained(reference, tmp_path)


def test_garbage_on_the_channel_is_a_recorded_failure(reference, tmp_path):
    body = """
import os, sys
fd = int(sys.argv[sys.argv.index('--fd') + 1])
os.write(fd, b'\\xff' * 64 + b'not a frame')
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "garbler", body)), results_dir=tmp_path / "res", **RUN)
    assert r.n_failed == 4 and all("protocol" in f.reason or "crashed" in f.reason for f in r.failures)
    check_contained(reference, tmp_path)


def test_fallback_without_bubblewrap_warns_once(home, tmp_path, monkeypatch, capsys):
    """The note says whether Landlock confines the plain worker's file system instead."""
    import benchmark.isolation.sandbox as sb

    monkeypatch.setattr(sb, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(sb, "_warned", set())
    for k in range(2):
        r = evaluate("uniform", results_dir=tmp_path / f"r{k}", overwrite=True, **RUN)
        assert r.provenance["isolation"]["sandbox"] == "none" and r.n_failed == 0
    err = capsys.readouterr().err
    assert err.count("submissions run in a separate") == 1
    assert ("confined by Landlock" in err) is (landlock.problem() is None)


def test_without_landlock_each_fallback_says_so_once(monkeypatch, capsys):
    import benchmark.isolation.sandbox as sb

    monkeypatch.setattr(sb, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(sb, "_warned", set())
    monkeypatch.setattr(landlock, "version", lambda: 0)
    assert sb.resolve_mode("auto") == sb.resolve_mode("auto") == sb.resolve_mode("none") == sb.resolve_mode("none")
    err = " ".join(capsys.readouterr().err.split())
    assert err.count("without a file-system sandbox (Linux") == 1
    assert err.count("--sandbox none: the plain worker's file system is not confined") == 1


def test_sandbox_required_but_missing_is_a_clear_error(home, tmp_path, monkeypatch):
    import benchmark.isolation.sandbox as sb
    from benchmark.errors import XaibenchError

    monkeypatch.setattr(sb, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    from benchmark.resources import data_home

    caches = sorted(data_home().rglob("*.sqlite"))
    with pytest.raises(XaibenchError, match="apt-get install bubblewrap"):
        evaluate("uniform", results_dir=tmp_path, sandbox="bwrap", overwrite=True, **RUN)
    assert not list(tmp_path.rglob("*.json"))
    assert sorted(data_home().rglob("*.sqlite")) == caches  # refused before any file was made


def test_limits_are_set_inside_the_worker(home, tmp_path):
    body = """
import os, resource
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'report.txt'), 'w') as fh:
    fh.write(' '.join(str(resource.getrlimit(r)[1]) for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU,
             resource.RLIMIT_CORE)))
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    evaluate(str(hostile(tmp_path, "limits", body)), results_dir=tmp_path / "res", memory_gb=3, timeout_s=2, **RUN)
    mem, cpu, core = map(int, report("limits").split())
    assert mem == 3 << 30 and core == 0
    assert cpu == int(2 * 4 * (os.cpu_count() or 1) + 600)


def test_a_worker_runs_the_harness_s_own_package_not_the_installed_one(tmp_path):
    """A harness started from another checkout (a copy of `benchmark` first on its path) starts workers that import
    that copy: `worker_command` loads `benchmark` from the harness's folder, where plain `python -m` would import the
    installation's (an editable install: its own checkout, which the sandbox does not bind)."""
    import shutil
    import subprocess
    import sys

    import benchmark

    other = tmp_path / "other-checkout"
    shutil.copytree(Path(benchmark.__file__).parent, other / "benchmark", ignore=shutil.ignore_patterns("__pycache__"))
    (other / "benchmark" / "where.py").write_text("import benchmark\nprint(benchmark.__file__)\n")
    start = ("import subprocess, sys; sys.path.insert(0, sys.argv[1]); "
             "from benchmark.isolation.sandbox import worker_command; "
             "subprocess.run(worker_command('benchmark.where'), cwd='/', check=True)")
    r = subprocess.run([sys.executable, "-c", start, str(other)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str((other / "benchmark" / "__init__.py").resolve())
    plain = subprocess.run([sys.executable, "-m", "benchmark.where"], cwd="/", capture_output=True, text=True,
                           timeout=60)
    assert plain.returncode != 0 and "No module named benchmark.where" in plain.stderr


def test_the_sandbox_binds_the_whole_harness_package():
    """The worker imports `benchmark` (not only `benchmark.isolation`, where the sandbox lives)."""
    import benchmark
    from benchmark.isolation.sandbox import _package_dirs

    assert Path(benchmark.__file__).resolve().parent in _package_dirs()
