"""Landlock, the plain worker's file-system boundary (benchmark.isolation.landlock): the ruleset per ABI
version, and a process confined by the harness's allow-list (benchmark.isolation.sandbox.landlock_rules)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.isolation import landlock as ll
from benchmark.isolation.sandbox import file_system_problem, landlock_rules
from tests.test_isolation import needs_landlock


@pytest.mark.parametrize("abi,fs,net,scoped", [
    (0, 0, 0, 0),
    (1, 0x1FFF, 0, 0),  # EXECUTE … MAKE_SYM
    (2, 0x3FFF, 0, 0),  # + REFER
    (3, 0x7FFF, 0, 0),  # + TRUNCATE
    (4, 0x7FFF, 0b11, 0),  # + TCP bind, connect
    (5, 0xFFFF, 0b11, 0),  # + IOCTL_DEV
    (6, 0xFFFF, 0b11, 0b11),  # + abstract unix sockets, signals
    (7, 0xFFFF, 0b11, 0b11),  # logging only
])
def test_ruleset_handles_what_each_abi_knows(abi, fs, net, scoped):
    assert ll.handled(abi) == (fs, net, scoped)


def test_rule_rights_per_abi_and_target():
    write_v1 = ll.allowed("write", 1, folder=True)
    assert write_v1 & (ll.MAKE_REG | ll.REMOVE_DIR | ll.WRITE_FILE) and not write_v1 & (ll.REFER | ll.TRUNCATE)
    assert not ll.allowed("write", 7, folder=True) & (ll.MAKE_CHAR | ll.MAKE_BLOCK | ll.IOCTL_DEV)
    assert ll.allowed("write", 3, folder=True) & (ll.REFER | ll.TRUNCATE) == ll.REFER | ll.TRUNCATE
    # a rule on a file holds file rights only (the kernel refuses folder rights there: EINVAL)
    assert ll.allowed("write", 3, folder=False) == ll.EXECUTE | ll.WRITE_FILE | ll.READ_FILE | ll.TRUNCATE
    assert ll.allowed("read", 1, folder=False) == ll.EXECUTE | ll.READ_FILE
    assert ll.allowed("list", 7, folder=False) == 0
    assert ll.allowed("device", 4, folder=False) == ll.READ_FILE | ll.WRITE_FILE | ll.TRUNCATE
    assert ll.allowed("device", 5, folder=False) & ll.IOCTL_DEV
    assert [ll._attr_size(a) for a in (1, 3, 4, 5, 6, 7)] == [8, 8, 16, 16, 24, 24]


PROBE = """
import json, os, socket, sys
def reads(path):
    try:
        return bool(os.listdir(path)) if os.path.isdir(path) else open(path, 'rb').read(1) is not None
    except OSError:
        return False
def writes(path):
    try:
        with open(path, 'w') as fh:
            fh.write('x')
        return True
    except OSError:
        return False
def signals(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False
def connects(port):
    try:
        socket.create_connection(('127.0.0.1', port), timeout=2).close()
        return True
    except OSError:
        return False
paths = json.loads(sys.argv[1])
print(json.dumps({'read': {k: reads(p) for k, p in paths['read'].items()},
                  'write': {k: writes(p) for k, p in paths['write'].items()},
                  'tcp': connects(paths['port']), 'numpy': bool(__import__('numpy').ones(2).sum() == 2),
                  'lock': __import__('multiprocessing').Lock().acquire(), 'signal': signals(os.getppid())}))
"""


@needs_landlock
def test_a_confined_process_reaches_only_its_allow_list(tmp_path):
    """The launcher confines a Python process to the harness's rules: the model folder, the submission and the
    system read; its home, scratch and a multiprocessing lock written; the data home's secret and results, a
    hidden folder inside an allowed one, another /tmp folder, /etc/shadow, a file the harness holds open, TCP
    and signals to the harness out of reach."""
    home, data = tmp_path / "home", tmp_path / "data"
    for folder in (home, data / "keys", data / "results", data / "scratch" / "s", data / "models" / "m",
                   tmp_path / "sub" / "hidden", tmp_path / "other"):
        folder.mkdir(parents=True)
    for f in (data / "keys" / "hidden.secret", data / "results" / "r.json", data / "models" / "m" / "w.bin",
              tmp_path / "sub" / "probe_mod.py", tmp_path / "sub" / "hidden" / "truth.txt",
              tmp_path / "other" / "x.txt"):
        f.write_text(PROBE if f.name == "probe_mod.py" else "gt")
    rules = landlock_rules(model_dir=data / "models" / "m", submission_dir=tmp_path / "sub",
                           scratch_dir=data / "scratch" / "s", home=home,
                           hidden=[data, tmp_path / "sub" / "hidden"])
    server = socket.create_server(("127.0.0.1", 0))
    held = os.open(data / "keys" / "hidden.secret", os.O_RDONLY)  # a file the harness holds open
    paths = {"read": {"model": str(data / "models" / "m" / "w.bin"), "secret": str(data / "keys" / "hidden.secret"),
                      "results": str(data / "results" / "r.json"), "data home": str(data),
                      "carved": str(tmp_path / "sub" / "hidden" / "truth.txt"), "sub": str(tmp_path / "sub"),
                      "other": str(tmp_path / "other" / "x.txt"), "shadow": "/etc/shadow", "passwd": "/etc/passwd",
                      "harness's open secret": f"/proc/{os.getpid()}/fd/{held}"},
             "write": {"home": str(home / "a"), "scratch": str(data / "scratch" / "s" / "b"),
                       "secret": str(data / "keys" / "hidden.secret"), "planted": str(data / "planted"),
                       "null": "/dev/null"},
             "port": server.getsockname()[1]}
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "sub"), "PYTHONDONTWRITEBYTECODE": "1"}
    r = subprocess.run([sys.executable, "-m", "benchmark.isolation.landlock", json.dumps(rules), "probe_mod",
                        json.dumps(paths)], capture_output=True, text=True, env=env, cwd=home, timeout=60)
    server.close()
    os.close(held)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["read"] == {"model": True, "secret": False, "results": False, "data home": False, "carved": False,
                           "sub": True, "other": False, "shadow": not Path("/etc/shadow").exists(), "passwd": True,
                           "harness's open secret": False}
    assert got["write"] == {"home": True, "scratch": True, "secret": False, "planted": False, "null": True}
    assert got["numpy"] and got["lock"] and got["tcp"] is (ll.version() < 4) and got["signal"] is (ll.version() < 6)
    assert (data / "keys" / "hidden.secret").read_text() == "gt" and not (data / "planted").exists()


def test_file_system_problem_names_each_mode(monkeypatch):
    import benchmark.isolation.sandbox as sb

    monkeypatch.setattr(sb, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(ll, "version", lambda: 0)
    assert file_system_problem("bwrap") == "bubblewrap (bwrap) is not installed"
    assert file_system_problem("auto").startswith("the plain worker's file system is not confined: Linux")
    monkeypatch.setattr(ll, "version", lambda: 1)
    assert file_system_problem("auto") is None and file_system_problem("none") is None
