"""submission.toml parsing and validation; registry duplicate checks."""

from __future__ import annotations

import pytest

from benchmark.errors import RegistryError, SubmissionError
from benchmark.registry import Registry
from benchmark.submission import discover, load_submission
from tests.conftest import write_submission


def test_builtin_submissions_are_discovered():
    subs = discover()
    for name in ("lime-exhaustive", "integrated-gradients", "random", "uniform", "grad-cam"):
        assert name in subs
    assert subs["integrated-gradients"].needs_gradients
    assert subs["lime-exhaustive"].needs_segments
    # the role a board reads: controls say so in their own submission.toml (no name list anywhere)
    assert {n for n, s in subs.items() if s.role == "control"} >= {"random", "uniform", "position", "random-oracle"}
    assert subs["integrated-gradients"].role == "method"
    # the method's paper, parsed from [submission] reference (optional: a control has none)
    assert "Sundararajan" in subs["integrated-gradients"].reference and subs["random"].reference == ""


@pytest.mark.parametrize(
    "toml, message",
    [
        ("", "missing \\[submission\\]"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\n', "'entry' is missing"),
        ('[submission]\nname="X y"\nversion="1"\nkind="explainer"\nentry="e:E"\n', "lower-case"),
        ('[submission]\nname="x"\nversion="1"\nkind="judge"\nentry="e:E"\n', "kind 'judge'"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\nrole="baseline"\nentry="e:E"\n',
         "role 'baseline' is unknown; accepted: method, control, reference"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\nentry="e:E"\n[capabilities]\nmodalities=["audio"]\n',
         "modalities"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\nentry="e:E"\n[capabilities]\nneeds_gradients="yes"\n',
         "needs_gradients"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\nentry="e:E"\nreference=2017\n',
         "'reference' must be a string"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\nentry="e:E"\n[capabilities]\nneeds_assets=["../x"]\n',
         "needs_assets must be a list of asset names"),
        ('[submission]\nname="x"\nversion="1"\nkind="explainer"\nentry="e:E"\n[capabilities]\ndata_prior="yes"\n',
         "'data_prior' must be a bool"),
        ("[submission\n", "not valid TOML"),
    ],
)
def test_bad_submission_toml(tmp_path, toml, message):
    (tmp_path / "submission.toml").write_text(toml)
    with pytest.raises(SubmissionError, match=message):
        load_submission(tmp_path)


def test_needed_assets_decide_the_boards_and_data_priors_are_recorded(tmp_path):
    """`needs_assets`: a board that does not offer the asset refuses the submission (one line, before anything
    runs); `data_prior` reaches the Result's capabilities, and neither key appears where it is not declared."""
    from benchmark.runner import capabilities_of

    sub = load_submission(write_submission(tmp_path / "p", "p", "return []\n", modalities='["text"]',
                                           caps='needs_assets = ["lexicon"]\ndata_prior = true'))
    assert sub.needs_assets == ["lexicon"] and sub.data_prior
    assert sub.supports("text", False, False) == ("p needs the 'lexicon' asset, which this board does not offer (a "
                                                  "resource built before the asset existed has none: regenerate it "
                                                  "with `xaibench generate`)")
    assert sub.supports("text", False, False, {"lexicon": tmp_path}) is None
    assert sub.supports("image", False, False, ["lexicon"]) == "p does not handle image inputs"
    assert capabilities_of(sub) == {"modalities": ["text"], "needs_gradients": False, "needs_segments": False,
                                    "needs_assets": ["lexicon"], "data_prior": True}
    plain = load_submission(write_submission(tmp_path / "q", "q", "return []\n"))
    assert capabilities_of(plain) == {"modalities": ["image"], "needs_gradients": False, "needs_segments": False}


def test_missing_toml_and_bad_entry(tmp_path):
    with pytest.raises(SubmissionError, match="no submission.toml"):
        load_submission(tmp_path)
    sub = write_submission(tmp_path / "s", "s", "return []\n")
    toml = sub / "submission.toml"
    toml.write_text(toml.read_text().replace("explainer:Explainer", "nomodule:X"))
    with pytest.raises(SubmissionError, match="entry 'nomodule:X'"):
        load_submission(sub).instantiate()


def test_unknown_parameter_and_import_error(tmp_path):
    sub = load_submission(write_submission(tmp_path / "p", "p", "return []\n", params="k = 1"))
    assert sub.instantiate({"k": 2}).kw == {"k": 2}
    with pytest.raises(SubmissionError, match="no parameter"):
        sub.instantiate({"nope": 1})
    broken = write_submission(tmp_path / "b", "b", "return []\n")
    (broken / "explainer.py").write_text("import does_not_exist\n")
    with pytest.raises(SubmissionError, match="failed to import"):
        load_submission(broken).instantiate()


def test_submission_hash_changes_with_code(tmp_path):
    folder = write_submission(tmp_path / "h", "h", "return []\n")
    h1 = load_submission(folder).hash
    (folder / "explainer.py").write_text((folder / "explainer.py").read_text() + "\n# change\n")
    assert load_submission(folder).hash != h1


def test_registry_duplicates_and_unknown():
    reg: Registry[int] = Registry("thing")
    reg.register("a", 1)
    with pytest.raises(RegistryError, match="registered twice"):
        reg.register("a", 2)
    with pytest.raises(RegistryError, match="unknown thing 'b'; known: a"):
        reg.get("b")


def test_hash_covers_the_package_modules_a_submission_imports_and_only_those(tmp_path):
    """A new module beside the submissions (e.g. another submission's helper) does not invalidate
    every cache; a change in a helper the submission imports (transitively) does."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("from pkg.deep import X\n")
    (pkg / "deep.py").write_text("X = 1\n")
    folder = write_submission(pkg / "mine", "mine", "from pkg.helper import X\nreturn []")
    h0 = load_submission(folder).hash
    (pkg / "unrelated.py").write_text("Y = 2\n")
    assert load_submission(folder).hash == h0
    (pkg / "deep.py").write_text("X = 2\n")
    assert load_submission(folder).hash != h0


def test_builtin_folders_are_found_without_importing_the_package(tmp_path):
    """The harness locates the built-in submissions through their entry point (issue #31: no module of
    benchmark imports `submissions`): a built-in is in those folders, a folder elsewhere is not."""
    from benchmark.submission import builtin_folders, get_submission, is_builtin

    folders = builtin_folders()
    assert folders and all((f / "__init__.py").is_file() for f in folders)
    assert is_builtin(get_submission("occlusion"))
    assert not is_builtin(load_submission(write_submission(tmp_path / "s", "s", "return []\n")))


def test_hash_covers_the_library_modules_a_builtin_imports():
    """A TOKI oracle's hash covers benchmark/toki (DESIGN §8: its algorithm lives there), transitively;
    an explainer that imports none of it does not."""
    from benchmark.submission import discover
    from benchmark.submission.folder import _LIBRARY_ROOT, _library_imports

    subs = discover()
    toki = [p for p in subs["toki-lime"].path.glob("*.py")]
    covered = {p.relative_to(_LIBRARY_ROOT).as_posix() for p in _library_imports(toki)}
    assert {"benchmark/toki/__init__.py", "benchmark/toki/core.py"} <= covered
    assert "benchmark/toki/embeddings.py" in covered  # imported by core, not by the oracle's own file
    assert _library_imports(list(subs["saliency"].path.glob("*.py"))) == []


def test_an_entry_python_cannot_load_is_named(tmp_path, monkeypatch):
    """No module loader for the entry file (spec_from_file_location gives None): one SubmissionError."""
    import importlib.util

    sub = load_submission(write_submission(tmp_path / "n", "noloader", "return []\n"))
    monkeypatch.setattr(importlib.util, "spec_from_file_location", lambda *a, **k: None)
    with pytest.raises(SubmissionError, match="failed to import .*Python finds no module loader"):
        sub.instantiate()
