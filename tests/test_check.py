"""`xaibench check`: the pre-submission checks catch what they claim to catch."""

from __future__ import annotations

import pytest

from benchmark.check import check_submission
from benchmark.cli import main
from tests.conftest import write_submission


def verdicts(rows):
    return {(r.check, r.model): r.ok for r in rows}


def test_a_good_submission_passes_every_check(tmp_path, home):
    sub, rows = check_submission("submissions/uniform")
    v = verdicts(rows)
    for model in ("cnn", "function", "kim-cnn", "han"):
        for check in ("outputs", "deterministic", "batch invariant"):
            assert v[(check, model)] is True, (check, model, rows)


@pytest.mark.parametrize("body,failing", [
    # depends on its batch companions
    ("return [x * len(batch) for x in batch.inputs]", "batch invariant"),
    # ignores the seed: a fresh worker gives other numbers
    ("import os\nreturn [x * (1 + os.urandom(1)[0]) for x in batch.inputs]", "deterministic"),
    ("return [np.ones((2, 2)) for x in batch.inputs]", "outputs"),
])
def test_each_check_can_fail(tmp_path, home, body, failing):
    folder = write_submission(tmp_path / "s", "s", body)
    _, rows = check_submission(folder)
    v = verdicts(rows)
    assert v[(failing, "cnn")] is False, rows
    assert v[("outputs", "cnn")] is (failing != "outputs")


def test_check_command_exit_status_and_report(tmp_path, home, capsys):
    folder = write_submission(tmp_path / "s", "s", "return [x * len(batch) for x in batch.inputs]")
    with pytest.raises(SystemExit) as exc:
        main(["check", str(folder)])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "batch invariant" in err and "FAIL" in err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "submission.toml").write_text("[submission]\nname = 'Bad Name'\n")
    with pytest.raises(SystemExit) as exc:
        main(["check", str(bad)])
    assert exc.value.code == 2
