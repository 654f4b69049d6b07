"""`xaibench check`: the pre-submission checks catch what they claim to catch."""

from __future__ import annotations

import textwrap

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


def _oracle(folder, judge: str, fit: str = "pass"):
    import textwrap

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.toml").write_text(
        '[submission]\nname = "o"\nversion = "0.1"\nkind = "oracle"\nentry = "oracle:Oracle"\n'
        '[capabilities]\nmodalities = ["text"]\n')
    (folder / "oracle.py").write_text(
        "import os\n\n\nclass Oracle:\n    def fit(self, context):\n" + textwrap.indent(textwrap.dedent(fit), " " * 8)
        + "\n\n    def judge(self, batch):\n" + textwrap.indent(textwrap.dedent(judge), " " * 8) + "\n")
    return folder


def test_oracles_are_checked_like_explainers(tmp_path, home):
    _, rows = check_submission("submissions/naive_oracle")
    v = verdicts(rows)
    assert all(v[(c, "kim-cnn")] is True for c in ("outputs", "deterministic", "batch invariant")), rows
    # fit sees the training split; verdicts depending on the batch or on chance are caught
    cases = {
        "batch invariant": "return [len(batch) % 2 == 0] * len(batch)",
        # random verdicts and scores: two runs agree on the 8 compared instances with probability ~2^-72
        "deterministic": "return {'verdicts': [os.urandom(1)[0] % 2 == 0 for _ in batch.ids], "
                         "'scores': [os.urandom(1)[0] / 255 for _ in batch.ids]}",
        "outputs": "return [1.0 for _ in batch.ids]",
    }
    for failing, judge in cases.items():
        _, rows = check_submission(_oracle(tmp_path / failing.replace(" ", "-"), judge))
        assert verdicts(rows)[(failing, "kim-cnn")] is False, (failing, rows)
    _, rows = check_submission(_oracle(tmp_path / "fit", "return [True] * len(batch)",
                                       fit="assert len(context.train['tokens']) == 16 and context.class_names"))
    assert verdicts(rows)[("outputs", "kim-cnn")] is True, rows


def _explainer_with(folder, params: str, source: str):
    """A submission folder whose explainer.py is `source` (class Explainer) and [parameters] `params`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.toml").write_text(
        '[submission]\nname = "p"\nversion = "0.1"\nkind = "explainer"\nentry = "explainer:Explainer"\n'
        f'[capabilities]\nmodalities = ["image"]\n[parameters]\n{params}\n')
    (folder / "explainer.py").write_text("import numpy as np\n\n\n" + textwrap.dedent(source))
    return folder


EXPLAIN = "    def explain(self, model, batch):\n        return [np.zeros_like(x) for x in batch.inputs]\n"


def test_accepted_parameters_follow_kwargs_through_the_bases():
    from benchmark.submission import accepted_parameters

    class Base:
        def __init__(self, n_steps=50, seed=0):
            pass

    class Passes(Base):
        def __init__(self, window=3, **kw):
            super().__init__(**kw)

    class Keeps:
        def __init__(self, window=3, **kwargs):
            self.kwargs = kwargs

    class Cooperative(Passes):  # no __init__ of its own: Passes' is the constructor
        pass

    class Plain:
        pass

    assert accepted_parameters(Base) == {"n_steps", "seed"}
    assert accepted_parameters(Passes) == {"window", "n_steps", "seed"}
    assert accepted_parameters(Cooperative) == {"window", "n_steps", "seed"}
    assert accepted_parameters(Keeps) is None  # keeps **kwargs to itself: anything goes
    assert accepted_parameters(Plain) == set()


def _one_error_line(folder, capsys) -> str:
    """`xaibench check folder` exits 2 printing exactly one line; that line."""
    with pytest.raises(SystemExit) as exc:
        main(["check", str(folder)])
    assert exc.value.code == 2
    out = capsys.readouterr()
    lines = [ln for ln in (out.out + out.err).splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_check_names_a_parameter_the_constructor_does_not_accept(tmp_path, home, capsys):
    source = ("class Base:\n    def __init__(self, n_steps=50):\n        self.n_steps = n_steps\n\n\n"
              "class Explainer(Base):\n    def __init__(self, window=3, **kw):\n        super().__init__(**kw)\n\n"
              + EXPLAIN)
    folder = _explainer_with(tmp_path / "bad-param", "window = 3\nn_step = 50", source)
    line = _one_error_line(folder, capsys)
    assert line.startswith("error:") and "n_step " in line and "accepted: n_steps, window" in line
    # the same class with the right key passes; one that keeps **kwargs to itself accepts any key
    ok = _explainer_with(tmp_path / "good", "window = 3\nn_steps = 50", source)
    assert all(r.ok is not False for r in check_submission(ok)[1])
    keeps = _explainer_with(tmp_path / "keeps", "anything = 1",
                            "class Explainer:\n    def __init__(self, **kwargs):\n        self.kwargs = kwargs\n\n"
                            + EXPLAIN)
    assert all(r.ok is not False for r in check_submission(keeps)[1])


def test_check_names_an_unknown_role(tmp_path, capsys):
    folder = write_submission(tmp_path / "r", "r", "return [x for x in batch.inputs]")
    toml = folder / "submission.toml"
    toml.write_text(toml.read_text().replace('kind = "explainer"', 'kind = "explainer"\nrole = "ceiling"'))
    line = _one_error_line(folder, capsys)
    assert "role 'ceiling'" in line and "accepted: method, control, reference" in line
