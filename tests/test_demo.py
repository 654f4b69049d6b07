"""`xaibench demo`'s orchestration (issue #28): every track's steps run as ordinary commands; a built
resource is not built again; a track whose data is missing is skipped with the reason and a failing
step is reported, while the other tracks go on — never a traceback. (The full demo is timed by hand:
docs/demo.md.)"""

from __future__ import annotations

from benchmark.cli import _run, load_plugins
from generators.demo import PLAN, Step, Track, run_demo


def test_every_track_is_in_the_plan_with_its_mirror_needs():
    assert [t.name for t in PLAN] == ["aixi", "idc", "rcnn", "rcnn:l2x", "trust", "robustness"]
    assert sorted({t.kind for t in PLAN}) == ["aixi", "idc", "rcnn", "robustness", "trust"]
    built_by_a_step = {s.skip_if for t in PLAN for s in t.steps if s.skip_if}
    assert all(t.after in built_by_a_step for t in PLAN if t.after)  # a lane waits only for what the plan builds
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


def test_tracks_run_side_by_side_in_one_thread_processes_and_report_alone(home, tmp_path, monkeypatch):
    """`run_lanes` (what `xaibench demo` runs): each track in its own process, two at once, every line after
    its track's name; outcomes come back as with `run_demo`, in the plan's order; a process that dies
    without reporting fails only its own track."""
    import generators.demo as demo

    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "mirror"))
    (tmp_path / "mirror").mkdir()
    plan = (
        Track("ok", "runs", (), (Step(("list",)),), minutes=1),
        Track("absent", "needs a corpus the mirror lacks", ("no-such-corpus",), (Step(("list",)),)),
        Track("broken", "a failing step", (), (Step(("evaluate", "no-such-submission", "--track", "aixi")),
                                                Step(("list",))), minutes=3),
    )
    lines: list[str] = []
    out = demo.run_lanes(lines.append, plan=plan, jobs=2)
    assert [o.name for o in out] == ["ok", "absent", "broken"]
    ok, absent, broken = out
    assert ok.status == "built" and ok.commands == ["xaibench list"] and len(ok.step_seconds) == 1
    assert absent.status == "skipped" and "no-such-corpus" in absent.reason
    assert broken.status == "failed" and "no-such-submission" in broken.reason
    assert broken.commands == ["xaibench evaluate no-such-submission --track aixi"]
    assert "ok     │ $ xaibench list" in lines and "ok     │ Submissions" in lines
    assert any(line.startswith("broken │ failed: unknown submission 'no-such-submission'") for line in lines)
    assert not any("Traceback" in line for line in lines)

    # one at a time: the longest first; the process of "dead" dies at once, and "ok" runs after it
    real = demo._track_json
    monkeypatch.setattr(demo, "_track_json", lambda t: "not a track" if t.name == "dead" else real(t))
    lines.clear()
    ok, dead = demo.run_lanes(lines.append, plan=(plan[0], Track("dead", "dies", (), plan[0].steps, minutes=2)),
                              jobs=1)
    assert dead.status == "failed" and "exited with status 1 before it reported" in dead.reason
    assert ok.status == "built" and lines[0].startswith("dead │ ") and lines[-1].startswith("ok   │ ")


def test_a_lane_waits_for_the_resource_it_needs_and_starts_when_its_builder_ends_without_it(home, tmp_path,
                                                                                              monkeypatch):
    """`Track.after`: with a free core, a lane that needs a resource another lane builds does not start before
    the builder has it; a builder that ends without it (here: a step that builds nothing) releases the lane, which
    then runs on its own. `--track K` takes every part of track K (`rcnn` and `rcnn:l2x`)."""
    import generators.demo as demo

    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "mirror"))
    (tmp_path / "mirror").mkdir()
    plan = (
        Track("maker", "builds nothing", (), (Step(("list",), skip_if="nothing/built-here"), Step(("list",))),
              minutes=2),
        Track("other", "not asked for", (), (Step(("list",)),), minutes=9),
        Track("maker:after", "waits for it", (), (Step(("list",)),), minutes=3, after="nothing/built-here"),
    )
    lines: list[str] = []
    out = demo.run_lanes(lines.append, tracks=("maker",), plan=plan, jobs=2)
    assert [(o.name, o.status) for o in out] == [("maker", "built"), ("maker:after", "built")]
    last_of_maker = max(i for i, line in enumerate(lines) if line.startswith("maker       │"))
    first_of_waiter = min(i for i, line in enumerate(lines) if line.startswith("maker:after │"))
    assert first_of_waiter > last_of_maker  # the longer lane waited although a core was free


def test_a_track_process_computes_on_one_thread():
    """The numbers of a track do not depend on how many run beside it: torch, OpenMP and BLAS on one thread
    (its sandboxed workers inherit the variables), no progress bars."""
    from generators.demo import THREAD_VARS, lane_env

    env = lane_env(90)
    assert all(env[v] == "1" for v in THREAD_VARS) and env["XAIBENCH_PROGRESS"] == "0" and env["COLUMNS"] == "90"
    import subprocess
    import sys

    got = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert got.stdout.strip() == "1", got.stderr[-500:]


def test_the_yardstick_keeps_each_parts_best_cpu_time_and_says_it_in_one_line(monkeypatch):
    """`generators.yardstick` (issue #55): each part's best of its rounds, in CPU seconds (time waiting for a core is
    not in it), their sum is the yardstick; torch's thread count is restored after it ran on one."""
    import time

    import torch

    from generators import yardstick

    calls: list[str] = []

    def part(name: str, seconds: list[float]):
        def run() -> float:
            spin = seconds[len([c for c in calls if c == name]) % len(seconds)]
            calls.append(name)
            t = time.process_time()
            while time.process_time() - t < spin:
                pass
            return 0.0
        return run

    monkeypatch.setattr(yardstick, "PARTS", {"a": part("a", [0.2, 0.05, 0.1]), "b": part("b", [0.02, 0.06, 0.04])})
    before = torch.get_num_threads()
    y = yardstick.measure(rounds=3)
    assert torch.get_num_threads() == before
    assert calls.count("a") == calls.count("b") == 3
    assert 0.04 < y.cpu["a"] < 0.09 and 0.015 < y.cpu["b"] < 0.04  # the best (the least) of the three
    assert y.seconds == y.cpu["a"] + y.cpu["b"]
    text = yardstick.line(y)
    assert text.startswith(f"CPU yardstick: {y.seconds:.2f} s (a ") and "\n" not in text and "load average" in text

