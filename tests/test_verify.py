"""`xaibench verify`: a Result re-scored from its cached outputs; every kind of tampering is named."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from benchmark.store.cache import _encode
from benchmark.cli import main
from benchmark.resources import data_home
from benchmark.store.results import Result
from benchmark.runner import evaluate
from benchmark.verify import apply_verdicts, verify_result

RUN = dict(track="aixi", resource="aixi/shape-ssin", model="function", limit=5)


@pytest.fixture()
def result(home, tmp_path):
    r = evaluate("random", results_dir=tmp_path / "res", overwrite=True, **RUN)
    (path,) = list((tmp_path / "res").rglob("*.json"))
    return r, path


def test_an_untouched_result_verifies(result):
    _, path = result
    v = verify_result(path)
    assert v.ok, v.problems


def test_a_changed_cache_output_is_found(result):
    r, path = result
    cache = data_home() / r.extra["cache"]
    db = sqlite3.connect(cache)
    inst = db.execute("SELECT instance FROM outputs ORDER BY instance LIMIT 1").fetchone()[0]
    with db:
        db.execute("UPDATE outputs SET array = ? WHERE instance = ?", (_encode(np.ones((128, 128))), inst))
    db.close()
    v = verify_result(path)
    assert not v.ok and any("not the ones it was scored from" in p for p in v.problems)
    loaded = Result.load(path)
    from benchmark.verify import record

    record([v])
    assert apply_verdicts([loaded]) and loaded.status == "modified"
    evaluate("random", results_dir=path.parents[4], overwrite=True, **RUN)  # a re-run heals it
    assert verify_result(path).ok


def test_an_edited_result_is_found_even_when_re_signed(result):
    from benchmark.store.integrity import sign

    r, path = result
    d = json.loads(path.read_text())
    d["metrics"]["kl"]["mean"] = 0.0
    path.write_text(json.dumps(d))
    v = verify_result(path)
    assert any("signature" in p for p in v.problems)
    d["integrity"]["signature"] = sign(d)  # someone holding the key: the re-score still catches it
    path.write_text(json.dumps(d))
    assert Result.load(path).status == "signed"
    v = verify_result(path)
    assert [p for p in v.problems if p.startswith("kl:")] == [f"kl: the Result says 0.0, re-scoring gives "
                                                              f"{r.metrics['kl'].mean}"]


def test_verify_command_exit_status(result, capsys):
    _, path = result
    with pytest.raises(SystemExit) as exc:
        main(["verify", str(path)])
    assert exc.value.code == 0
    d = json.loads(path.read_text())
    d["n_failed"] = d["n_failed"]  # same content, file rewritten: still fine
    d["metrics"]["kl"]["mean"] += 1
    path.write_text(json.dumps(d))
    with pytest.raises(SystemExit) as exc:
        main(["verify", str(path)])
    assert exc.value.code == 1
    assert "FAILED" in capsys.readouterr().err
