"""Damaged files never take a run down, never change a number and are never deleted (issue #15 item 5).

Caches: a damaged SQLite file is moved aside (one warning line) and what it lost is recomputed; a
damaged row is recomputed alone. Model folders, resources and submissions: one-line errors that name
the file and the command that rebuilds it. Every test damages its own copy, never the session home.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from benchmark import cli
from benchmark.store.cache import Entry, OutputCache
from benchmark.errors import CacheError, ResourceError, SubmissionError
from benchmark.runner import evaluate
from tests.conftest import write_submission

PAGE = 4096  # SQLite's default page size

# deterministic per instance, incompressible (so the cache spans many pages), and logged per call
NOISE = """
import os
with open(os.path.join(os.environ['XAIBENCH_SCRATCH'], 'calls.log'), 'a') as fh:
    fh.write(''.join(i + '\\n' for i in batch.ids))
return [np.random.default_rng(int(i.split('-')[-1])).random(np.asarray(x).shape).astype(np.float32)
        for i, x in zip(batch.ids, batch.inputs)]
"""


@pytest.fixture()
def own_home(aixi_home, tmp_path, monkeypatch) -> Path:
    """A copy of the session's AIXI resources (with the trained shape-ssin CNN) in a fresh home."""
    home = tmp_path / "home"
    shutil.copytree(aixi_home / "resources" / "aixi", home / "resources" / "aixi")
    monkeypatch.setenv("XAIBENCH_HOME", str(home))
    return home


def noisy(tmp_path: Path) -> tuple[Path, Path]:
    """A submission that logs every explained id into its own scratch folder (the only place outside
    its private /tmp it may write)."""
    from benchmark.resources import data_home

    log = data_home() / "scratch" / "noisy" / "calls.log"
    log.unlink(missing_ok=True)
    return write_submission(tmp_path / "noisy", "noisy", NOISE), log


def calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def run(sub: Path, tmp_path: Path):
    return evaluate(str(sub), track="aixi", resource="aixi/shape-ssin", model="function", batch_size=4,
                    results_dir=tmp_path / "results")


def means(result) -> dict:
    return {k: m.mean for k, m in result.metrics.items()}


def the_cache(home: Path) -> Path:
    (path,) = [p for p in (home / "cache").rglob("*.sqlite")]
    return path


def overwrite(path: Path, offset: int, n: int, seed: int = 1) -> bytes:
    """Write `n` bytes of seeded garbage at `offset`; returns the damaged file's bytes."""
    data = bytearray(path.read_bytes())
    data[offset:offset + n] = np.random.default_rng(seed).bytes(n)
    path.write_bytes(bytes(data))
    return bytes(data)


def warnings_of(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]


# -- caches ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["middle page", "header"])
def test_damaged_cache_file_is_moved_aside_and_recomputed(own_home, tmp_path, capsys, where):
    sub, log = noisy(tmp_path)
    first = run(sub, tmp_path)
    n = first.n_instances
    assert n == 24 and first.n_failed == 0 and len(calls(log)) == n
    cache = the_cache(own_home)
    pages = cache.stat().st_size // PAGE
    assert pages > 40  # 24 incompressible 64×64 maps: a file of many pages
    damaged = overwrite(cache, (pages // 2) * PAGE if where == "middle page" else 0, PAGE if where != "header" else 100)
    capsys.readouterr()

    again = run(sub, tmp_path)
    assert means(again) == means(first) and again.n_failed == 0 and again.n_instances == n
    aside = [p for p in cache.parent.iterdir() if ".damaged-" in p.name]
    assert [p.name.split(".damaged-")[0] for p in aside] == [cache.name]
    assert aside[0].read_bytes() == damaged  # moved, not deleted, not modified
    (line,) = warnings_of(capsys)
    assert f"cache {cache} was damaged" in line and f"moved to {aside[0].name}" in line
    kept = int(line.split("; ")[-1].split()[0])  # "... ; K readable outputs kept, ..."
    recomputed = calls(log)[n:]
    assert len(recomputed) == n - kept and len(set(recomputed)) == len(recomputed)
    if where == "header":
        assert kept == 0 and "not a database" in line
    else:
        assert 0 < n - kept < n  # a page in the middle costs the rows on it, not the others
    # the fresh cache is whole: a third run computes nothing
    third = run(sub, tmp_path)
    assert means(third) == means(first) and len(calls(log)) == n + n - kept


def test_one_undecodable_row_is_recomputed_alone(own_home, tmp_path, capsys):
    sub, log = noisy(tmp_path)
    first = run(sub, tmp_path)
    cache = the_cache(own_home)
    victim = calls(log)[5]
    db = sqlite3.connect(cache)
    (blob,) = db.execute("SELECT array FROM outputs WHERE instance = ?", (victim,)).fetchone()
    bad = bytearray(blob)
    bad[len(bad) // 2] ^= 0xFF  # one flipped byte inside the compressed array
    with db:
        db.execute("UPDATE outputs SET array = ? WHERE instance = ?", (bytes(bad), victim))
    db.close()
    capsys.readouterr()

    again = run(sub, tmp_path)
    assert calls(log)[first.n_instances:] == [victim]
    assert means(again) == means(first)
    (line,) = warnings_of(capsys)
    assert f"{victim!r} (checksum mismatch)" in line and "1 stored output(s)" in line
    assert not [p for p in cache.parent.iterdir() if ".damaged-" in p.name]


def test_garbled_shape_header_of_an_old_format_row_is_recomputed(tmp_path):
    """Rows written before the CRC (format 1) still read; a garbled one is left out of done()/get()."""
    import zlib

    def old(a: np.ndarray, header: bytes | None = None) -> bytes:
        header = header or json.dumps(list(a.shape)).encode()
        return len(header).to_bytes(2, "little") + header + zlib.compress(a.astype(np.float32).tobytes(), 1)

    key = {"resource": "r", "revision": "a"}
    path = tmp_path / "c.sqlite"
    OutputCache(path, key).close()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    db = sqlite3.connect(path)
    with db:
        db.executemany("INSERT INTO outputs VALUES (?, ?, ?, ?, ?)",
                       [("good", 1, old(a), "", 0.5), ("bad-shape", 1, old(a, b"[2, 7]"), "", 0.5),
                        ("not-json", 1, old(a, b"[2,\xff"), "", 0.5), ("failed", 0, None, "raised", 0.1)])
    db.close()
    c = OutputCache(path, key)
    assert c.done() == {"good", "failed"}
    got = c.get(["good", "bad-shape", "not-json", "failed"])
    assert sorted(got) == ["failed", "good"] and np.array_equal(got["good"].array, a)
    assert got["failed"].reason == "raised" and got["failed"].array is None
    c.put([Entry("bad-shape", True, a, "", 0.2)])  # recomputed: replaced
    assert "bad-shape" in c.done()
    c.close()


def test_damage_found_while_reading_mid_run(tmp_path, capsys):
    """The file is damaged after done() succeeded: get() moves it aside, keeps what reads, and names
    the lost outputs in one CacheError; the next run recomputes exactly those."""
    key = {"resource": "r", "revision": "a"}
    path = tmp_path / "c.sqlite"
    rng = np.random.default_rng(0)
    arrays = {f"i{k}": rng.random((64, 64)).astype(np.float32) for k in range(60)}
    c = OutputCache(path, key)
    c.put([Entry(i, True, a, "", 0.1) for i, a in arrays.items()])
    c.close()
    c = OutputCache(path, key)
    assert c.done() == set(arrays)
    pages = path.stat().st_size // PAGE
    damaged = overwrite(path, (pages // 2) * PAGE, PAGE)
    c.db.execute("PRAGMA shrink_memory")  # forget cached pages: the next read goes to the file
    capsys.readouterr()
    with pytest.raises(CacheError, match=r"output\(s\) stored earlier in this run can no longer be read.*"
                                         "run the same command again"):
        c.get(list(arrays))
    (line,) = warnings_of(capsys)
    assert "found during the run" in line and c.moved and c.moved[0].read_bytes() == damaged
    c.close()
    fresh = OutputCache(path, key)
    kept = fresh.done()
    assert 0 < len(kept) < len(arrays)
    got = fresh.get(sorted(kept))
    assert all(np.array_equal(got[i].array, arrays[i]) for i in kept)  # what was kept is exact
    fresh.close()


def test_damage_found_while_writing_mid_run(tmp_path, capsys):
    """A put() that meets a damaged file stores its batch in a fresh cache; get() names what was lost."""
    key = {"resource": "r", "revision": "a"}
    path = tmp_path / "c.sqlite"
    c = OutputCache(path, key)
    c.put([Entry(f"i{k}", True, np.full((4, 4), k, np.float32), "", 0.1) for k in range(10)])
    c.close()
    c = OutputCache(path, key)
    assert len(c.done()) == 10
    damaged = overwrite(path, 0, 100)  # the header
    c.db.execute("PRAGMA shrink_memory")
    capsys.readouterr()
    c.put([Entry("new", True, np.ones((4, 4), np.float32), "", 0.1)])
    (line,) = warnings_of(capsys)
    assert "found during the run: file is not a database" in line and c.moved[0].read_bytes() == damaged
    assert np.array_equal(c.get(["new"])["new"].array, np.ones((4, 4)))
    with pytest.raises(CacheError, match="10 output"):
        c.get([f"i{k}" for k in range(10)])
    c.close()


def test_malformed_tables_or_key_are_damage_but_another_key_is_not(tmp_path, capsys):
    key = {"resource": "r", "revision": "a"}
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE outputs (x TEXT)")  # not our schema
    db.close()
    c = OutputCache(path, key)
    assert c.done() == set() and len(c.moved) == 1
    c.put([Entry("a", True, np.ones(3), "", 0.1)])
    c.close()
    assert "table outputs has columns ['x']" in warnings_of(capsys)[0]

    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET v = '{not json' WHERE k = 'revision'")
    db.close()
    c = OutputCache(path, key)
    assert c.done() == set() and len(c.moved) == 1  # its key is unreadable: its rows cannot be trusted
    c.close()
    assert "key (meta table) is not readable" in warnings_of(capsys)[0]

    with pytest.raises(CacheError, match="made for a different revision"):
        OutputCache(path, {**key, "revision": "b"})
    assert len([p for p in tmp_path.iterdir() if ".damaged-" in p.name]) == 2  # not moved for a key mismatch


HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT OR REPLACE INTO outputs VALUES ('other', 0, NULL, 'other process', 0.0)")
open(sys.argv[2], "w").write("locked")
time.sleep(1.5)
db.execute("COMMIT")
"""


def test_a_lock_held_by_another_process_is_waited_for_not_taken_for_damage(tmp_path, capsys):
    key = {"resource": "r", "revision": "a"}
    path, flag = tmp_path / "c.sqlite", tmp_path / "locked"
    OutputCache(path, key).close()
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), str(flag)])
    try:
        while not flag.exists():
            assert proc.poll() is None
            time.sleep(0.02)
        t0 = time.perf_counter()
        c = OutputCache(path, key)  # takes the write lock to check the key: waits for the other writer
        c.put([Entry("mine", True, np.ones(2), "", 0.1)])
        waited = time.perf_counter() - t0
    finally:
        proc.wait(timeout=30)
    assert waited > 0.5
    assert c.done() == {"mine", "other"} and not c.moved
    c.close()
    assert not warnings_of(capsys) and not [p for p in tmp_path.iterdir() if ".damaged-" in p.name]


# -- model folders ------------------------------------------------------------------------------------

REBUILD_CNN = "xaibench train aixi aixi/shape-ssin --overwrite"


def _cnn_damages(folder: Path) -> dict:
    """name → (damage the folder, the file the error must name, a fragment of the message)."""
    w, cfg = folder / "model.safetensors", folder / "config.json"

    def edit_config(fn):
        return lambda: cfg.write_text(json.dumps(fn(json.loads(cfg.read_text()))))

    def other_weights():
        from safetensors.torch import save_file

        from benchmark.models.architectures import AixiCNN
        from benchmark.resources.store import sha256_file

        save_file(AixiCNN(size=32).state_dict(), str(w))  # a whole file of another shape
        edit_config(lambda c: {**c, "sha256": sha256_file(w)})()

    return {
        "truncated weights": (lambda: w.write_bytes(w.read_bytes()[: w.stat().st_size // 3]), w, "sha256"),
        "garbled weights": (lambda: overwrite(w, w.stat().st_size // 2, 64), w, "sha256"),
        "weights for another model": (other_weights, w, "do not fit the 'aixi-cnn' architecture"),
        "config not JSON": (lambda: cfg.write_text('{"architecture": "aixi-cnn", '), cfg, "unreadable"),
        "config garbled bytes": (lambda: cfg.write_bytes(b"\xff\xfe\x00garbage"), cfg, "unreadable"),
        "no architecture": (edit_config(lambda c: {k: v for k, v in c.items() if k != "architecture"}), cfg,
                            "no 'architecture' name"),
        "no kwargs": (edit_config(lambda c: {**c, "kwargs": None}), cfg, "no 'kwargs' object"),
        "unknown architecture": (edit_config(lambda c: {**c, "architecture": "resnet-9000"}), cfg,
                                 "unknown architecture 'resnet-9000'"),
        "kwargs the architecture refuses": (edit_config(lambda c: {**c, "kwargs": {"depth": 3}}), cfg,
                                            "cannot build"),
        "weights missing": (lambda: w.unlink(), folder, "model.safetensors missing"),
    }


@pytest.mark.parametrize("damage", list(_cnn_damages(Path("."))))
def test_damaged_aixi_cnn_is_one_clear_error(own_home, tmp_path, damage):
    folder = own_home / "resources" / "aixi" / "model" / "shape-ssin"
    before = evaluate("saliency", track="aixi", resource="aixi/shape-ssin", model="cnn", limit=2,
                      results_dir=tmp_path / "r0")
    assert before.n_failed == 0
    do, named, fragment = _cnn_damages(folder)[damage]
    do()
    with pytest.raises(ResourceError) as exc:
        evaluate("saliency", track="aixi", resource="aixi/shape-ssin", model="cnn", limit=2,
                 results_dir=tmp_path / "r1")
    msg = str(exc.value)
    assert "\n" not in msg and str(named) in msg and fragment in msg and REBUILD_CNN in msg


def test_cli_names_the_damaged_model_on_one_line(own_home, tmp_path, capsys):
    cfg = own_home / "resources" / "aixi" / "model" / "shape-ssin" / "config.json"
    cfg.write_text("[1, 2")
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", "saliency", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "cnn",
                  "--limit", "2", "--results", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"error: model config {cfg} is unreadable") and f"`{REBUILD_CNN}`" in err


def _tiny_text_models(resources: Path) -> tuple[Path, Path]:
    """A saved Kim CNN in an idc resource layout and an RCNN (with its texts) in an rcnn one."""
    import torch

    from benchmark.models.base import save_model
    from benchmark.models.rcnn import RCNNRationale, save_rcnn, write_texts
    from benchmark.models.text import PAD, UNK, KimCNN

    torch.manual_seed(0)
    vocab = [PAD, UNK, "good", "bad", "movie", "plot"]
    cnn_dir = resources / "idc" / "model" / "mr-cnn"
    save_model(KimCNN(len(vocab), max_len=8, embed_dim=4, filters=2), cnn_dir, "kim-cnn",
               {"vocab_size": len(vocab), "max_len": 8, "embed_dim": 4, "filters": 2},
               extra={"vocab": vocab, "n_classes": 2, "max_len": 8})
    rcnn_dir = resources / "rcnn" / "model" / "beer-aroma"
    save_rcnn(RCNNRationale(len(vocab), embed_dim=4, hidden=3), vocab, rcnn_dir, extra={"aspect": "aroma"})
    write_texts(rcnn_dir, ["a", "b"], [["good", "movie"], ["bad"]])
    return cnn_dir, rcnn_dir


def test_damaged_text_models_are_one_clear_error(tmp_path):
    from benchmark.models.rcnn import config_of, load_rcnn
    from benchmark.models.text import load_word_model

    cnn_dir, rcnn_dir = _tiny_text_models(tmp_path / "resources")
    tokens = [["good", "movie"], ["bad", "plot", "unseen"]]
    p = load_word_model(cnn_dir, "cnn").predict(tokens)
    assert p.shape == (2, 2) and np.allclose(p.sum(1), 1)
    rcnn = load_rcnn(rcnn_dir, name="rcnn")
    assert rcnn.predict(tokens).shape == (2, 1) and rcnn.unlabeled_texts() == [["good", "movie"], ["bad"]]
    idc_fix, rcnn_fix = "`xaibench generate idc --overwrite`", "`xaibench generate rcnn --aspect aroma --overwrite`"

    def expect(call, named: Path, fragment: str, fix: str):
        with pytest.raises(ResourceError) as exc:
            call()
        msg = str(exc.value)
        assert "\n" not in msg and str(named) in msg and fragment in msg and fix in msg, msg

    cfg = cnn_dir / "config.json"
    good = cfg.read_text()
    for edit, fragment in [(lambda c: c.pop("vocab"), "'vocab' is not the model's vocabulary (missing"),
                           (lambda c: c["vocab"].append("extra"), "(7 entries, embedding of 6 rows"),
                           (lambda c: c["vocab"].reverse(), "must start with '<pad>', '<unk>'"),
                           (lambda c: c.update(n_classes="two"), "n_classes 'two'")]:
        c = json.loads(good)
        edit(c)
        cfg.write_text(json.dumps(c))
        expect(lambda: load_word_model(cnn_dir, "cnn"), cfg, fragment, idc_fix)
    cfg.write_text(good)
    w = cnn_dir / "model.safetensors"
    w.write_bytes(w.read_bytes()[:-10])
    expect(lambda: load_word_model(cnn_dir, "cnn"), w, "do not match the sha256", idc_fix)

    texts = rcnn_dir / "texts.parquet"
    overwrite(texts, 0, texts.stat().st_size)
    model = load_rcnn(rcnn_dir, name="rcnn")  # the texts are read when an explainer asks for them
    expect(model.unlabeled_texts, texts, "model texts", rcnn_fix)
    (rcnn_dir / "config.json").write_text("{")
    expect(lambda: config_of(rcnn_dir), rcnn_dir / "config.json", "unreadable", rcnn_fix)
    expect(lambda: load_rcnn(rcnn_dir), rcnn_dir / "config.json", "unreadable", rcnn_fix)


def test_weight_check_costs_little(own_home):
    """The sha256 of the weights is checked on every load: measured against the load itself."""
    from benchmark.models.base import load_model
    from benchmark.resources.store import sha256_file

    folder = own_home / "resources" / "aixi" / "model" / "shape-ssin"
    load_model(folder)
    t0 = time.perf_counter()
    for _ in range(5):
        load_model(folder)
    load = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    for _ in range(5):
        sha256_file(folder / "model.safetensors")
    digest = (time.perf_counter() - t0) / 5
    size = (folder / "model.safetensors").stat().st_size
    print(f"\nweights {size / 1e6:.1f} MB: sha256 {digest * 1e3:.1f} ms of a {load * 1e3:.1f} ms load")
    assert digest < 0.5  # not a timed test: a bound far above the ~4 ms measured for 5 MB


# -- resources and submissions -------------------------------------------------------------------------


def test_damaged_resource_files_are_one_clear_error(own_home, tmp_path, capsys):
    root = own_home / "resources" / "aixi"
    prov = root / "provenance.json"
    good = prov.read_text()
    fix = "xaibench generate aixi --overwrite"
    kw = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=2, results_dir=tmp_path / "r")
    first = evaluate("uniform", **kw)

    for damage, fragment in [(lambda: prov.write_bytes(b"\x89garbage\xff"), "UnicodeDecodeError"),
                             (lambda: prov.write_text(good[: len(good) // 2]), "JSONDecodeError"),
                             (lambda: prov.write_text(json.dumps({"configs": []})), "'configs' is not an object")]:
        damage()
        with pytest.raises(ResourceError) as exc:
            evaluate("uniform", **kw)
        msg = str(exc.value)
        assert "\n" not in msg and str(prov) in msg and fragment in msg and fix in msg
    c = json.loads(good)
    del c["configs"]["shape-ssin"]["splits"]["validation"]["rows"]
    prov.write_text(json.dumps(c))
    with pytest.raises(ResourceError, match="split 'validation' lacks its file / rows / bytes"):
        evaluate("uniform", **kw)
    prov.write_text(good)

    # a split garbled in place (same size, same footer): the recorded sha256 stops it
    split = root / "shape-ssin" / "validation-00000-of-00001.parquet"
    original = split.read_bytes()
    overwrite(split, len(original) // 2, 8)
    with pytest.raises(ResourceError) as exc:
        evaluate("uniform", **kw)
    assert f"{split} does not match the sha256 in provenance.json" in str(exc.value) and fix in str(exc.value)
    split.write_bytes(original)
    assert means(evaluate("uniform", **kw)) == means(first)

    # the harness never reads the card: a garbled README changes nothing
    (root / "README.md").write_bytes(b"\x00\xff garbage")
    assert means(evaluate("uniform", **kw)) == means(first)

    # regenerating over a damaged provenance.json moves it aside (never deletes it) and rebuilds
    from generators.aixi.build import build_aixi

    prov.write_text("{")
    capsys.readouterr()
    build_aixi("color", 8, 4, workers=1, functions=("ssin",), overwrite=True)
    (line,) = warnings_of(capsys)
    aside = [p for p in root.iterdir() if p.name.startswith("provenance.json.damaged-")]
    assert len(aside) == 1 and aside[0].read_text() == "{" and f"moved to {aside[0].name}" in line
    assert set(json.loads(prov.read_text())["configs"]) == {"color-ssin"}


def test_damaged_submission_folders_are_one_clear_error(own_home, tmp_path):
    kw = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=2, results_dir=tmp_path / "r")
    sub = write_submission(tmp_path / "s", "s", "return [np.zeros(x.shape) for x in batch.inputs]")
    assert evaluate(str(sub), **kw).n_failed == 0
    toml, module = sub / "submission.toml", sub / "explainer.py"
    text, code = toml.read_text(), module.read_text()

    toml.write_bytes(b"\xff\xfe[submission]\x00")
    with pytest.raises(SubmissionError, match=f"{toml}: is not valid TOML"):
        evaluate(str(sub), **kw)
    toml.write_text(text[: len(text) // 3])
    with pytest.raises(SubmissionError, match=f"{toml}: "):
        evaluate(str(sub), **kw)
    toml.write_text(text)
    module.write_text(code[: len(code) - 20])  # cut inside the method: a syntax error
    with pytest.raises(SubmissionError, match=f"{module} failed to import \\((SyntaxError|IndentationError)"):
        evaluate(str(sub), **kw)
    module.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SubmissionError, match=f"{module} failed to import"):
        evaluate(str(sub), **kw)
    module.unlink()
    with pytest.raises(SubmissionError, match=r"entry 'explainer:Explainer' must be '<module>:<Class>' naming a "
                                              r"module of the folder \(explainer.py is not there\)"):
        evaluate(str(sub), **kw)


def test_the_named_command_rebuilds_a_damaged_cnn(own_home, tmp_path, capsys):
    from benchmark.models.base import load_model

    folder = own_home / "resources" / "aixi" / "model" / "shape-ssin"
    w = folder / "model.safetensors"
    w.write_bytes(w.read_bytes()[:1000])
    with pytest.raises(ResourceError):
        load_model(folder)
    argv = REBUILD_CNN.split()[1:] + ["--epochs", "1", "--max-train", "32"]
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 0
    load_model(folder)
    r = evaluate("saliency", track="aixi", resource="aixi/shape-ssin", model="cnn", limit=2,
                 results_dir=tmp_path / "r")
    assert r.n_failed == 0
    # without --overwrite a damaged model is not "already trained" either
    w.write_bytes(w.read_bytes()[:1000])
    with pytest.raises(SystemExit) as exc:
        cli.main(argv[:-5] + argv[-4:])
    assert exc.value.code == 0 and "existing model is damaged, training it again" in capsys.readouterr().err
    load_model(folder)


def test_publish_rewrites_a_damaged_card_from_provenance(own_home, capsys):
    from generators.publish import check_family

    root = own_home / "resources" / "aixi"
    card = root / "README.md"
    good = card.read_text()
    _, files = check_family("aixi")
    assert "README.md" in files and not warnings_of(capsys)  # a healthy card is left alone
    card.write_bytes(b"\x00\xff garbage")
    _, again = check_family("aixi")
    (line,) = warnings_of(capsys)
    assert card.read_text() == good and again == files  # rewritten; the old file is not published
    (aside,) = [p for p in root.iterdir() if p.name.startswith(".README.md.damaged-")]
    assert aside.read_bytes() == b"\x00\xff garbage" and f"moved to {aside.name}" in line


def test_two_concurrent_runs_share_one_cache_without_false_damage(own_home, tmp_path):
    """Two processes run the same job on one home at once: both finish with the same numbers, no file
    is taken for damaged, nothing is moved aside."""
    import os

    from benchmark.resources import data_home

    log = data_home() / "scratch" / "slow" / "calls.log"
    sub = write_submission(tmp_path / "slow", "slow", "time.sleep(0.2)\n" + NOISE)
    argv = [sys.executable, "-m", "benchmark.cli", "evaluate", str(sub), "--track", "aixi", "--resource",
            "aixi/shape-ssin", "--model", "function", "--batch-size", "2", "--no-randomisation",
            "--hidden-draws", "0"]  # one cache
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen(argv + ["--results", str(tmp_path / f"r{k}")], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert not any("warning" in out + err or "damaged" in out + err for out, err in outs)
    results = [json.loads(next((tmp_path / f"r{k}").rglob("*.json")).read_text()) for k in range(2)]
    assert results[0]["metrics"] == results[1]["metrics"] and results[0]["n_failed"] == 0
    cache = the_cache(own_home)
    assert not [p for p in cache.parent.iterdir() if ".damaged-" in p.name]
    print(f"\n{len(calls(log))} explain calls for 24 instances (> 24: the runs overlapped)")
    shared = OutputCache(cache, _key_of(cache))
    assert shared.done() == set(calls(log)) and len(set(calls(log))) == 24
    shared.close()


def _key_of(cache: Path) -> dict:
    db = sqlite3.connect(cache)
    key = {k: json.loads(v) for k, v in db.execute("SELECT k, v FROM meta")}
    db.close()
    return key


# -- a full or unwritable data home (issue #27, item 5): say what would help, never --overwrite ----------

def _in_private_mounts(mounts: str, argv: list[str], env: dict) -> subprocess.CompletedProcess:
    """Run `xaibench argv` in a private mount namespace after the shell commands `mounts` (root only:
    the mounts, e.g. a tiny tmpfs over the cache folder, vanish with the namespace)."""
    script = f"set -e; {mounts}; exec {sys.executable} -m benchmark.cli " + " ".join(argv)
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], env=env,
                          capture_output=True, text=True, timeout=600)


needs_mounts = pytest.mark.skipif(
    shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0,
    reason="needs root to make a private mount namespace (unshare -m)")


@needs_mounts
@pytest.mark.parametrize("where", ["cache", "results"])
def test_a_full_disk_says_what_would_help(own_home, tmp_path, where):
    import os

    (own_home / "cache").mkdir(exist_ok=True)
    results = tmp_path / "results"
    results.mkdir()
    target = own_home / "cache" if where == "cache" else results
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    argv = ["evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
            "--limit", "4", "--results", str(results)]
    # a tmpfs of one page: the first SQLite page or result file fills it
    fill = f"mount -t tmpfs -o size=4k tmpfs {target}; head -c 4096 /dev/zero > {target}/filler || true"
    r = _in_private_mounts(fill, argv, env)
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 2, out[-2000:]
    assert "error:" in out and "is full" in out and "free space on it" in out, out[-2000:]
    assert "--overwrite" not in out and "Traceback" not in out


@needs_mounts
def test_a_read_only_data_home_says_where_to_write(own_home, tmp_path):
    import os

    (own_home / "cache").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    argv = ["evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
            "--limit", "4", "--results", str(tmp_path / "results")]
    r = _in_private_mounts(f"mount -t tmpfs -o ro tmpfs {own_home / 'cache'}", argv, env)
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 2, out[-2000:]
    assert "read-only file system" in out and "XAIBENCH_HOME" in out and "--overwrite" not in out, out[-2000:]


def test_storage_advice_names_the_owner_and_the_fix(tmp_path, monkeypatch):
    import errno

    from benchmark.store.storage import storage_problem

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    target = tmp_path / "cache" / "aixi" / "x.sqlite"  # missing folders: the nearest existing one is named
    denied = storage_problem(target, errno.EACCES)
    assert f"{tmp_path} belongs to uid" in denied and "XAIBENCH_HOME" in denied and "chown" in denied
    full = storage_problem(target, errno.ENOSPC)
    assert "is full" in full and f"{tmp_path}/cache" in full and "free of" in full
    assert storage_problem(target, errno.EINVAL) is None


def test_cache_errors_from_a_full_or_unwritable_disk_are_not_damage(tmp_path):
    from benchmark.errors import StorageError

    cache = OutputCache(tmp_path / "c.sqlite", {"k": 1})
    for name, message, needle in (("SQLITE_FULL", "database or disk is full", "is full"),
                                  ("SQLITE_READONLY", "attempt to write a readonly database", "may not write there")):
        exc = sqlite3.OperationalError(message)
        exc.sqlite_errorname = name
        err = cache._error(exc)
        assert isinstance(err, StorageError) and needle in str(err) and "--overwrite" not in str(err)
    exc = sqlite3.OperationalError("disk I/O error")
    exc.sqlite_errorname = "SQLITE_IOERR_WRITE"
    assert isinstance(cache._error(exc), CacheError)  # the disk has room: a real I/O error
    cache.close()
