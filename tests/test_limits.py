"""The sandbox holds wherever the project lives and whatever a submission spends (issue #27).

* any checkout path: the package, the virtualenv, the data home and the submission under /tmp;
* processes: more than the limit, and a fork bomb, are a recorded failure naming the limit;
* disk: writing past the scratch folder's bound (also through deleted files it keeps open, and a
  folder already full of hostile content) is a recorded failure naming the limit, and the folder
  ends back under its bound;
* memory: the default limit is the machine's share, and an allocation past it is a recorded failure.

Each attack runs bounded by its own loop as well as by the limit (a bug in a limit fails the test,
never the machine), the harness and other submissions are unaffected (`check_contained`), and
nothing the worker started is left running afterwards (a heartbeat file stops growing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmark.resources import data_home
from benchmark.runner import evaluate, memory_default
from benchmark.isolation.sandbox import bwrap_problem, default_memory_gb, process_limit_problem, resolve_mode
from benchmark.isolation.scratch import measure
from tests.test_isolation import RUN, UNIFORM_SHAPED, check_contained, evaluate_reference, hostile, needs_bwrap

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def reference(home, tmp_path):
    """A well-behaved submission's Result, evaluated before the attack (test_isolation.evaluate_reference)."""
    return evaluate_reference(tmp_path)
needs_nproc = pytest.mark.skipif(bwrap_problem() is not None or process_limit_problem("bwrap") is not None,
                                 reason=f"the process limit is not enforced here: {process_limit_problem('bwrap')}")

HEARTBEAT = """
import os, time
def beat(seconds):
    path = os.path.join(os.environ['XAIBENCH_SCRATCH'], 'beat.txt')
    for _ in range(int(seconds / 0.05)):
        with open(path, 'a') as fh:
            fh.write('.')
        time.sleep(0.05)
    os._exit(0)
"""


def still_beating(name: str) -> bool:
    """Whether anything the worker started still writes the heartbeat (after the run ended)."""
    beat = data_home() / "scratch" / name / "beat.txt"
    time.sleep(0.5)
    n = beat.stat().st_size if beat.exists() else 0
    time.sleep(1.0)
    return (beat.stat().st_size if beat.exists() else 0) != n


@needs_bwrap
def test_sandbox_works_from_a_checkout_under_tmp(home, tmp_path):
    """A virtualenv, a copy of the package, the data home and the submission, all under a temporary
    folder (pytest's is under /tmp): the sandboxed worker runs the package copy from there."""
    assert str(tmp_path).startswith("/tmp/")
    checkout = tmp_path / "checkout"
    for pkg in ("benchmark", "submissions", "generators", "leaderboard"):
        shutil.copytree(REPO / pkg, checkout / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    venv = checkout / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    real_site = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "numpy").is_dir())
    (site / "parent-env.pth").write_text(real_site + "\n")  # the dependencies, not the editable install
    shutil.copytree(home / "resources", tmp_path / "home" / "resources")
    body = """
import os, benchmark
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'report.txt'), 'w') as fh:
    fh.write(os.path.dirname(benchmark.__file__))
""" + UNIFORM_SHAPED
    sub = hostile(tmp_path, "from-tmp", body)
    code = (f"from benchmark.runner import evaluate; import benchmark; print(benchmark.__file__); "
            f"r = evaluate({str(sub)!r}, sandbox='bwrap', results_dir={str(tmp_path / 'res')!r}, "
            f"track='aixi', resource='aixi/shape-ssin', model='function', limit=4, batch_size=2); "
            f"print(r.n_failed, r.provenance['isolation']['sandbox'])")
    env = {**os.environ, "PYTHONPATH": str(checkout), "XAIBENCH_HOME": str(tmp_path / "home")}
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=env, capture_output=True, text=True,
                       timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    harness_file, outcome = r.stdout.strip().splitlines()[-2:]
    assert harness_file == str(checkout / "benchmark" / "__init__.py")
    assert outcome == "0 bwrap"
    seen = (tmp_path / "home" / "scratch" / "from-tmp" / "report.txt").read_text()
    assert seen == str(checkout / "benchmark")  # the worker imported the copy under /tmp, not the repository


@needs_nproc
def test_more_processes_than_the_limit_is_a_recorded_failure(reference, tmp_path):
    body = HEARTBEAT + """
made = 0
for _ in range(4 * 32):  # never more than 4x the limit, whether or not it holds
    pid = os.fork()  # past the limit: BlockingIOError, the instance's recorded failure
    if pid == 0:
        beat(20)
    made += 1
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "spawner", body)), results_dir=tmp_path / "res", processes=32,
                 timeout_s=30, **RUN)
    assert r.provenance["isolation"]["processes"] == 32
    assert r.n_failed == 4, r.failures
    assert all("BlockingIOError" in f.reason and "process limit is 32" in f.reason for f in r.failures), r.failures
    assert not still_beating("spawner"), "a process of the worker is still running"
    check_contained(reference, tmp_path)


@needs_nproc
def test_a_fork_bomb_is_bounded_by_the_process_limit(reference, tmp_path):
    """Every process forks two more, eight levels deep (510 processes if nothing stopped it); the
    limit (48) stops it, the worker then cannot start a thread, and nothing outlives the run."""
    body = HEARTBEAT + """
import threading
def bomb(depth):
    for _ in range(2):
        try:
            pid = os.fork()
        except OSError:
            continue
        if pid == 0:
            if depth < 7:
                bomb(depth + 1)
            beat(10)
bomb(0)
time.sleep(1.0)
threading.Thread(target=time.sleep, args=(0.1,)).start()  # the limit is spent: RuntimeError
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    t0 = time.monotonic()
    r = evaluate(str(hostile(tmp_path, "bomber", body)), results_dir=tmp_path / "res", processes=48,
                 timeout_s=20, **RUN)
    assert time.monotonic() - t0 < 300
    assert r.n_failed == 4, r.failures
    assert all("process limit is 48" in f.reason or "timed out" in f.reason for f in r.failures), r.failures
    assert any("can't start new thread" in f.reason for f in r.failures), r.failures
    assert not still_beating("bomber"), "a process of the worker is still running"
    check_contained(reference, tmp_path)


def _scratch_run(tmp_path, name: str, body: str, mib: int, **kw):
    return evaluate(str(hostile(tmp_path, name, body)), results_dir=tmp_path / "res", scratch_gb=mib / 1024,
                    **{**RUN, **kw})


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_writing_past_the_scratch_bound_is_a_recorded_failure(reference, tmp_path, sandbox):
    name = f"filler-{sandbox}"
    body = """
import os
d = os.environ['XAIBENCH_SCRATCH']
for k in range(16):  # 128 MiB at most, whether or not the bound holds
    with open(os.path.join(d, f'blob-{batch.ids[0]}-{k}'), 'wb') as fh:
        fh.write(b'x' * (8 << 20))
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = _scratch_run(tmp_path, name, body, 32, sandbox=sandbox)
    assert r.provenance["isolation"]["scratch_gb"] == 32 / 1024
    assert r.n_failed == 4, r.failures
    assert all("scratch folder is over its limit (32 MiB, --scratch-limit)" in f.reason for f in r.failures), r.failures
    assert measure(data_home() / "scratch" / name, None).bytes <= 32 << 20  # emptied after the run
    check_contained(reference, tmp_path)


def test_deleted_files_kept_open_count_against_the_bound(reference, tmp_path):
    body = """
import os
path = os.path.join(os.environ['XAIBENCH_SCRATCH'], 'hidden')
fd = os.open(path, os.O_CREAT | os.O_RDWR)
os.unlink(path)
for _ in range(6):  # 48 MiB in no folder
    os.write(fd, b'h' * (8 << 20))
time.sleep(5)  # the guard looks every 0.25 s
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = _scratch_run(tmp_path, "hider", body, 32)
    assert r.n_failed == 4
    assert all("deleted files it keeps open" in f.reason and "--scratch-limit" in f.reason
               for f in r.failures), r.failures
    check_contained(reference, tmp_path)


def test_a_scratch_folder_full_of_hostile_content_is_emptied_first(reference, tmp_path):
    """Left by an earlier run: 20,000 empty files (a 32 MiB bound admits 8,192 entries), links to
    the outside and to /, a folder without permissions and nesting past PATH_MAX. The next run
    empties it in bounded time, follows no link, and runs normally."""
    from tests.test_scratch import deep

    scratch = data_home() / "scratch" / "tidy"
    if scratch.exists():
        subprocess.run(["chmod", "-R", "u+rwx", str(scratch)], check=False)
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    keep = tmp_path / "keep.txt"
    keep.write_text("outside")
    fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)
    for k in range(20_000):
        os.close(os.open(f"f{k}", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)
    (scratch / "to-keep").symlink_to(keep)
    (scratch / "to-root").symlink_to("/")
    (scratch / "locked" / "in").mkdir(parents=True)
    (scratch / "locked" / "in" / "x").write_text("x")
    (scratch / "locked").chmod(0o000)
    deep(scratch, 100)
    t0 = time.monotonic()
    r = _scratch_run(tmp_path, "tidy", UNIFORM_SHAPED, 32)
    assert time.monotonic() - t0 < 120
    assert r.n_failed == 0
    assert keep.read_text() == "outside"
    assert measure(scratch, None).entries <= 2  # the folder, at most one file the run itself wrote
    check_contained(reference, tmp_path)


def test_the_default_memory_limit_is_the_machines_share(reference, tmp_path):
    share = default_memory_gb(1)
    assert memory_default() == share
    assert memory_default("ray", None, 4) == default_memory_gb(4) <= share / 4 + 0.25
    body = f"""
big = np.empty(int({share} * (1 << 30)) + (1 << 30), dtype=np.uint8)  # never touched: safe if no limit held
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "grabber", body)), results_dir=tmp_path / "res", **RUN)
    assert r.provenance["isolation"]["memory_gb"] == share
    assert r.n_failed == 4
    assert all("MemoryError" in f.reason and "address-space limit is" in f.reason and "--memory-limit" in f.reason
               for f in r.failures), r.failures
    check_contained(reference, tmp_path)


def test_help_shows_the_machines_defaults():
    from typer.testing import CliRunner

    from benchmark.cli import app

    out = CliRunner().invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"}).output
    # rich wraps the help column beside the option's type and range column, whose words then fall between
    # the help's words on a flat reading: take them out
    flat = " ".join(out.replace("│", " ").replace("[0.25<=x<=1024.0]", " ").replace("<float range>", " ").split())
    assert f"{default_memory_gb(1):g} for a local run" in flat, flat
    assert "--process-limit" in flat and "--scratch-limit" in flat
    assert resolve_mode("none") == "none"


def test_forked_children_cannot_multiply_the_memory_limit(reference, tmp_path):
    """The address-space limit binds each process; four children that each fill 300 MiB (1.2 GiB
    together, at most, even if nothing stopped them) are over a 1 GiB limit for the worker: the
    guard stops it on their summed memory, and nothing outlives the run."""
    # No race with a loaded machine: the worker waits until all four children hold their memory, then for up to
    # 40 s, under the 60 s per-instance time limit (the guard, looking every 0.25 s, ends it long before; only a guard
    # that never acts lets it return)
    body = HEARTBEAT + """
ready_r, ready_w = os.pipe()
for _ in range(4):
    if os.fork() == 0:
        held = np.ones((300 << 20) // 8)  # touched: really resident
        os.write(ready_w, b"x")
        beat(50)
got = b""
while len(got) < 4:
    got += os.read(ready_r, 4 - len(got))
time.sleep(40)
return [np.ones(x.shape, np.float32) for x in batch.inputs]
"""
    r = evaluate(str(hostile(tmp_path, "multiplier", body)), results_dir=tmp_path / "res", memory_gb=1,
                 **{**RUN, "limit": 2})  # one batch, then each instance alone: three workers
    assert r.n_failed == 2, r.failures
    assert all("of memory together, over its limit (1 GiB, --memory-limit)" in f.reason for f in r.failures), r.failures
    assert not still_beating("multiplier"), "a process of the worker is still running"
    check_contained(reference, tmp_path)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("bwrap") is None
                    or not Path("/usr/bin/python3").exists(), reason="needs root, setpriv, bwrap and /usr/bin/python3")
def test_a_user_namespace_counts_only_its_own_tasks():
    """The premise of the non-root harness's process limit: in the user namespace bubblewrap makes,
    RLIMIT_NPROC counts that namespace's tasks, not the user's 40 other processes outside it."""
    uid = 4242_00 + os.getpid() % 1000
    script = """
import os, resource, time
resource.setrlimit(resource.RLIMIT_NPROC, (20, 20))
made = 0
for _ in range(80):  # never more than 80, whether or not the limit holds
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    made += 1
print(made)
"""
    as_user = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups"]
    outside = [subprocess.Popen([*as_user, "sleep", "20"], cwd="/") for _ in range(40)]
    try:
        r = subprocess.run([*as_user, "bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind",
                            "/", "/", "--proc", "/proc", "--dev", "/dev", "--chdir", "/", "--", "/usr/bin/python3",
                            "-c", script], capture_output=True, text=True, timeout=60, cwd="/")
    finally:
        for p in outside:
            p.kill()
            p.wait()
    if r.returncode != 0 and r.stderr.startswith("bwrap:"):
        pytest.skip(f"no unprivileged user namespaces here: {r.stderr.strip()[:200]}")
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == 18  # 20 tasks in the namespace: bubblewrap's init, the script, 18 children
