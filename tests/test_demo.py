"""`xaibench demo`'s orchestration (issue #28): every track's steps run as ordinary commands; a built
resource is not built again; a track whose data is missing is skipped with the reason and a failing
step is reported, while the other tracks go on — never a traceback. (The full demo is timed by hand:
docs/demo.md.)"""

from __future__ import annotations

from benchmark.cli import _run, load_plugins
from generators.demo import PLAN, Step, Track, run_demo


def test_every_track_is_in_the_plan_with_its_mirror_needs():
    assert [t.name for t in PLAN] == ["aixi", "idc", "rcnn", "trust", "robustness"]
    for t in PLAN:
        assert any(s.argv[0] == "evaluate" for s in t.steps), t.name  # every track ends on a board
        assert all(s.argv[0] in ("generate", "train", "evaluate", "metrics-board") for s in t.steps)
    # the metric board (issue #39) follows the AIXI board it judges
    aixi = [s.argv[0] for s in PLAN[0].steps]
    assert aixi.index("metrics-board") > aixi.index("evaluate")


def test_tracks_fail_or_skip_alone_and_say_why(home, tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "mirror"))  # a mirror without the corpus
    (tmp_path / "mirror").mkdir()
    load_plugins()
    lines: list[str] = []
    plan = (
        Track("ok", "runs", (), (Step(("list",)),)),
        Track("absent", "needs a corpus the mirror lacks", ("no-such-corpus",), (Step(("list",)),)),
        Track("broken", "a failing step", (), (Step(("evaluate", "no-such-submission", "--track", "aixi")),
                                                Step(("list",)))),
        Track("usage", "a step that raises a usage error (click)", (),
              (Step(("evaluate", "random", "--track", "aixi", "--limit", "-3")), Step(("list",)))),
        Track("built", "already built", (),
              (Step(("generate", "aixi", "--scale", "tiny"), skip_if="aixi/shape-ssin"),)),
    )
    out = {o.name: o for o in run_demo(_run, lines.append, plan=plan)}
    assert out["ok"].status == "built"
    assert out["absent"].status == "skipped" and "no-such-corpus" in out["absent"].reason
    assert out["broken"].status == "failed" and "no-such-submission" in out["broken"].reason
    assert out["broken"].commands == ["xaibench evaluate no-such-submission --track aixi"]  # stopped there
    assert out["usage"].status == "failed" and "--limit" in out["usage"].reason  # not an uncaught click error
    assert out["built"].status == "built" and any("already built (aixi/shape-ssin @" in line for line in lines)
    assert not any("Traceback" in line for line in lines)
    only = run_demo(_run, lines.append, tracks=("ok",), plan=plan)
    assert [o.name for o in only] == ["ok"]
