"""Options of every command are validated while the command line is parsed (issue #15, item 3).

The walk goes over every command of the `xaibench` app with its plugin commands loaded (so commands
added later are covered too): every int / float option declares a range, every option whose help or
default names a fixed set of values is a choice. The plays run bad values through `main` and check
the answer is one line `error: ...` with exit status 2, and that not a byte under `$XAIBENCH_HOME`
changed (results, cache, resources and models).
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
import typer

from benchmark import cli

# Numeric options that are genuinely unbounded, as (command path, option name): reason. None today;
# add an entry (with its reason) only for a number that has no meaningful bound on either side.
UNBOUNDED: dict[tuple[str, str], str] = {}

# String options whose help quotes example values but which take open-ended text, as
# (command path, option name): reason.
FREE_TEXT: dict[tuple[str, str], str] = {
    # torch device names include an index (cuda:0, cuda:1, ...): a pattern, checked by
    # benchmark.options.device_name while parsing.
    ("xaibench generate rcnn", "device"): "torch device pattern",
}


def _commands(command=None, path="xaibench"):
    """(path, click command) for every leaf command of the app, plugins included."""
    if command is None:
        command = typer.main.get_command(cli.load_plugins())
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, sub in sorted(subcommands.items()):
        yield from _commands(sub, f"{path} {name}")


def _described(param) -> dict:
    """What the walk needs of a parameter: numeric?, its (min, max), choice? (for typer with its own
    click, which describes types with a `type_descriptor`; and for older typer on click itself)."""
    desc = getattr(param, "type_descriptor", None)
    lazy = getattr(param.callback, "names", None) is not None  # benchmark.options.lazy_choice
    if desc is not None:
        annotation = desc.annotation
        args = typing.get_args(annotation) if desc.is_list else ()
        element = args[0] if args else annotation
        info = desc.parameter_info
        return {"numeric": element in (int, float) and not desc.is_choice, "min": info.min, "max": info.max,
                "choice": desc.is_choice or lazy, "string": element is str and not desc.is_path}
    import click

    numeric = isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))
    ranged = isinstance(param.type, click.types._NumberRangeBase)
    return {"numeric": numeric, "min": param.type.min if ranged else None,
            "max": param.type.max if ranged else None,
            "choice": isinstance(param.type, click.Choice) or lazy,
            "string": isinstance(param.type, click.types.StringParamType)}


def _params():
    for path, command in _commands():
        for param in command.params:
            if param.name == "help":
                continue
            yield path, param, _described(param)


def test_the_walk_sees_every_command():
    paths = {path for path, _ in _commands()}
    for expected in ("xaibench list", "xaibench evaluate", "xaibench demo", "xaibench generate aixi",
                     "xaibench generate idc", "xaibench generate rcnn", "xaibench train aixi",
                     "xaibench reproduce aixi", "xaibench reproduce idc", "xaibench reproduce rcnn",
                     "xaibench agreement", "xaibench publish", "xaibench leaderboard", "xaibench check",
                     "xaibench verify"):
        assert expected in paths


def test_every_numeric_option_has_a_range_that_holds_its_default():
    numeric = [(path, p, d) for path, p, d in _params() if d["numeric"]]
    assert len(numeric) > 30  # the walk does see the options
    missing = [f"{path} --{p.name.replace('_', '-')}" for path, p, d in numeric
               if d["min"] is None and d["max"] is None and (path, p.name) not in UNBOUNDED]
    assert not missing, f"numeric options without a range: {missing}"
    for path, p, d in numeric:
        defaults = p.default if isinstance(p.default, (list, tuple)) else [p.default]
        for v in defaults:
            if v is not None:
                assert (d["min"] is None or v >= d["min"]) and (d["max"] is None or v <= d["max"]), (path, p.name)


def test_every_option_with_fixed_values_is_a_choice():
    suspicious = []
    for path, p, d in _params():
        if not d["string"] or d["choice"] or (path, p.name) in FREE_TEXT:
            continue
        help_text = getattr(p, "help", "") or ""
        quoted = set(re.findall(r"'([\w+.\-\[\]:]+)'", help_text))
        listed_default = isinstance(p.default, (list, tuple)) and len(p.default) > 1
        if len(quoted) >= 2 or listed_default:
            suspicious.append(f"{path} --{p.name.replace('_', '-')}: {sorted(quoted) or p.default}")
    assert not suspicious, f"options that list fixed values but are not choices: {suspicious}"


def _values(enum) -> set[str]:
    return {m.value for m in enum}


def test_choices_match_the_code_that_reads_them():
    """The fixed sets are spelled in the CLI modules (importing the generators there would slow every
    command down); here they are held against the constants of the code that reads them."""
    from generators import cli as gcli
    from generators.rcnn import cli as rcnn_cli
    from generators.aixi.build import SCALES as AIXI_SCALES
    from generators.corpora.mr import MR_SOURCES
    from generators.demo import PLAN as DEMO_PLAN
    from generators.idc.build import PGTS
    from generators.rcnn.build import POOLS, SCALES as RCNN_SCALES
    from generators.rcnn.data import ALIASES, ASPECTS, LONG_POLICIES, TOKENIZATIONS

    assert _values(gcli.AixiScale) == set(AIXI_SCALES)
    assert _values(gcli.DemoTrack) == {t.kind for t in DEMO_PLAN}  # a track's lanes are chosen together
    assert _values(gcli.Pgt) == set(PGTS)
    assert _values(gcli.MrSource) == set(MR_SOURCES)
    assert _values(rcnn_cli.RcnnScale) == set(RCNN_SCALES)
    assert _values(rcnn_cli.RcnnPool) == set(POOLS)
    assert _values(rcnn_cli.Tokenization) == set(TOKENIZATIONS)
    assert _values(rcnn_cli.LongReviews) == set(LONG_POLICIES)
    assert _values(rcnn_cli.Aspect) == set(ASPECTS) | set(ALIASES) | {str(i) for i in ASPECTS.values()}


def _run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(list(argv))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def _snapshot(home: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under the home (results, cache, resources and trained models): bytes and mtime."""
    return {str(p.relative_to(home)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(home.rglob("*")) if p.is_file()}


EVALUATE = ("evaluate", "uniform", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function")

BAD = [
    (*EVALUATE, "--limit", "6", "--exclude", "random"),  # --exclude only goes with 'all'
    ("evaluate", "all", "--track", "aixi", "--model", "function", "--exclude", "no-such-explainer"),
    (*EVALUATE, "--limit", "6", "--batch-size", "0"),
    (*EVALUATE, "--limit", "-3"),
    (*EVALUATE, "--limit", "6", "--timeout", "-1"),
    (*EVALUATE, "--limit", "6", "--timeout", "nan"),
    (*EVALUATE, "--limit", "6", "--seed", "-1"),
    (*EVALUATE, "--limit", "6", "--memory-limit", "0"),
    (*EVALUATE, "--limit", "6", "--sandbox", "docker"),
    ("evaluate", "uniform", "--track", "aixi", "--model", "han", "--limit", "6"),  # an idc model
    ("evaluate", "uniform", "--track", "no-such-track", "--limit", "6"),
    (*EVALUATE, "--limit", "6", "--no-such-option"),
    (*EVALUATE, "--limit", "six"),
    ("evaluate", "--limit", "6"),  # no submission
    ("no-such-command",),
    ("generate", "aixi", "--dataset", "shape", "--scale", "tiny", "--n-train", "0", "--overwrite"),
    ("generate", "aixi", "--dataset", "circle", "--scale", "tiny", "--overwrite"),
    ("train", "aixi", "aixi/shape-ssin", "--epochs", "0", "--overwrite"),
    ("train", "aixi", "aixi/shape-ssin", "--lr", "0", "--overwrite"),
    ("generate", "rcnn", "--pool-fraction", "1"),
    ("reproduce", "aixi", "--experiment", "4"),
    ("agreement", "--split", "dev", "--pgt", "idc/mr-wga"),
    ("leaderboard", "--format", "xml"),
    ("check", "submissions/uniform", "--timeout", "-1"),
]


def test_bad_options_are_one_line_errors_and_touch_nothing(home, capsys):
    code, _, err = _run(capsys, *EVALUATE, "--limit", "6")
    assert code == 0, err
    results = list((home / "results").rglob("*.json"))
    assert results, "the good run wrote a result"
    before = _snapshot(home)
    for argv in BAD:
        code, out, err = _run(capsys, *argv)
        text = (out + err).strip()
        assert code == 2, (argv, text)
        assert len(text.splitlines()) == 1 and text.startswith("error:"), (argv, text)
        assert "Traceback" not in text
    assert _snapshot(home) == before


def test_error_messages_name_the_option_and_the_bound(home, capsys):
    _, out, err = _run(capsys, *EVALUATE, "--batch-size", "0")
    assert "--batch-size" in err and "greater than or equal to 1" in err and "xaibench evaluate --help" in err
    _, out, err = _run(capsys, "evaluate", "uniform", "--model", "han")
    assert "'han' is not a known model of this track; choose from: function, cnn" in err
    _, out, err = _run(capsys, "generate", "aixi", "--scale", "huge")
    assert "'huge' is not one of 'paper', 'default', 'demo', 'tiny'" in err
    assert "Value error" not in err  # pydantic's prefix is dropped


def test_help_still_exits_zero_and_choices_still_parse(home, capsys):
    for argv in (["--help"], ["evaluate", "--help"], ["generate", "rcnn", "--help"], ["agreement", "--help"]):
        code, out, _ = _run(capsys, *argv)
        assert code == 0 and "Usage" in out
    # a choice given in another case where the option allows it, and an alias: accepted by the parser
    # (the command then stops for want of a built resource, with a one-line error of its own)
    code, out, err = _run(capsys, "reproduce", "rcnn", "--aspect", "LOOK", "--limit", "1")
    assert "Invalid value" not in out + err


def test_evaluate_all_leaves_out_the_excluded(home, capsys):
    import json

    from benchmark.submission import discover

    others = [n for n, s in discover().items() if s.kind == "explainer" and n != "uniform"]
    results = home / "excluded-results"
    argv = ["evaluate", "all", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
            "--limit", "2", "--hidden-draws", "0", "--results", str(results)]
    for name in others:
        argv += ["--exclude", name]
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    ran = {json.loads(p.read_text())["submission"]["name"] for p in results.rglob("*.json")}
    assert ran == {"uniform"}, ran
