"""Bradley–Terry summaries compare only the present (issue #36): a method is compared with another only in
the board resamples holding both, its interval comes only from the resamples holding it, a strength that
is only the prior's never ranks, a method that entered fewer than half the boards is listed, not ranked,
and the overall ranking keeps explainers apart from oracles. Since issue #45 a method must also have entered
every board its declared capabilities allow (tests/test_coverage.py): here the boards a method skips are
black-box boards it cannot enter (it needs gradients), so these tests keep testing what they tested."""

from __future__ import annotations

import numpy as np

from leaderboard.boards import boards
from leaderboard.summaries import MIN_SHARE, overall, track_summary
from tests.test_leaderboard import make_result

N = 120


def noisy(mean: float, seed: int, sd: float = 0.05) -> np.ndarray:
    return mean + sd * np.random.default_rng(seed).standard_normal(N)


GRADIENTS = {"modalities": ["image"], "needs_gradients": True, "needs_segments": False}
PLAIN = {"modalities": ["image"], "needs_gradients": False, "needs_segments": False}


def _board(model: str, means: dict[str, float], seed: int, track="aixi", resource="aixi/shape-ssin", kind=None,
           white_box=True, gradients=()):
    """One board's results (kl, lower is better) with a control far behind; its model white-box or not, and
    the methods named in `gradients` declaring that they need gradients (the others do not)."""
    out = [make_result(name, model=model, track=track, resource=resource, values=noisy(m, seed + k))
           for k, (name, m) in enumerate(sorted(means.items()))]
    out.append(make_result("random", model=model, track=track, resource=resource, values=noisy(2.0, seed + 99),
                           role="control"))
    for r in out:
        r.model["white_box"] = white_box
        r.submission["capabilities"] = GRADIENTS if r.submission["name"] in gradients else PLAIN
        if kind:
            r.submission["kind"] = kind
    return out


def _clear(n_boards: int = 4) -> list:
    rs = []
    for k in range(n_boards):
        rs += _board(f"m{k}", {"a": 0.1, "b": 0.3, "c": 0.5}, seed=10 * k, gradients=("a", "b", "c"))
    return rs


def _ranks(rows) -> dict[str, int | None]:
    return {r.submission: r.rank for r in rows}


def test_an_unrelated_board_does_not_blur_a_clear_order():
    """A clear 1 / 2 / 3 on four boards stays 1 / 2 / 3 when one unrelated board (a lone method and a
    control) is added: before, the lone method's board replaced shared boards in the resamples, where
    the three sat at the prior, and all three became `1=`. The lone method met no one (and skipped the
    four boards it could enter): listed."""
    (plain,) = track_summary(boards(_clear()))
    assert _ranks(plain.rows) == {"a": 1, "b": 2, "c": 3}
    (more,) = track_summary(boards(_clear() + _board("lone", {"z": 0.2}, seed=500, white_box=False)))
    ranks = _ranks(more.rows)
    assert (ranks["a"], ranks["b"], ranks["c"]) == (1, 2, 3) and ranks["z"] is None
    z = next(r for r in more.rows if r.submission == "z")
    assert "entered 1 of the 5 boards it can enter" in z.unranked and more.rows[-1].submission == "z"
    for r in more.rows:
        if r.rank is not None:
            assert r.interval is not None and r.interval[0] <= r.rank <= r.interval[1], r


def test_a_method_that_entered_few_boards_and_lost_is_listed_not_ranked():
    """d entered 1 of 5 boards and lost every game there: before it sat at the prior in the resamples
    without its board and was shown `2=`, above c, which won games; now it is listed, not ranked."""
    rs = []
    for k in range(5):
        rs += _board(f"m{k}", {"a": 0.1, "b": 0.3, "c": 0.5, **({"d": 0.9} if k == 0 else {})}, seed=10 * k,
                     white_box=k == 0, gradients=("d",))
    (s,) = track_summary(boards(rs))
    ranks = _ranks(s.rows)
    assert ranks["d"] is None and (ranks["a"], ranks["b"], ranks["c"]) == (1, 2, 3)
    d = next(r for r in s.rows if r.submission == "d")
    assert (d.entered, d.total) == (1, 5) and f"{MIN_SHARE:.0%}" in d.unranked and d.wins == 0.0


def test_one_board_gives_no_summary_interval():
    """Resampling one board gives that board every time: a point, not an interval — so none is shown."""
    (s,) = track_summary(boards(_board("only", {"a": 0.1, "b": 0.3}, seed=1)))
    assert _ranks(s.rows) == {"a": 1, "b": 2} and all(r.interval is None for r in s.rows)


def test_overall_keeps_explainers_apart_from_oracles_and_lists_the_rarely_present():
    """Oracles (trust boards) and explainers never meet: each kind is ranked on its own. An explainer that
    entered 1 of 5 explainer boards (l2x on the demo: robustness only) is listed, not crowned."""
    rs = []
    for k in range(4):
        rs += _board(f"m{k}", {"e1": 0.1, "e2": 0.3}, seed=10 * k, white_box=False)
    rs += _board("r0", {"e1": 0.3, "e2": 0.5, "l2x": 0.05}, seed=300, resource="aixi/shape-suum", gradients=("l2x",))
    for k in range(2):
        # oracle boards (their own resource; the track's per-instance form does not matter here)
        rs += _board(f"t{k}", {"o1": 0.1, "o2": 0.4}, seed=600 + k, resource="aixi/oracles", kind="oracle")
    bs = boards(rs)
    explainers = overall(bs)
    assert {r.submission for r in explainers} == {"e1", "e2", "l2x"}
    ranks = _ranks(explainers)
    assert ranks["l2x"] is None and ranks["e1"] == 1
    l2x = next(r for r in explainers if r.submission == "l2x")
    assert (l2x.entered, l2x.total) == (1, 5)
    oracles = overall(bs, "oracle")
    assert _ranks(oracles) == {"o1": 1, "o2": 2}


def test_the_summaries_stand_alone_as_csv(tmp_path):
    """`xaibench leaderboard --format csv --summary`: one row per (scope, submission) with the documented
    columns — every track summary and each kind's overall ranking — the listed-not-ranked with an empty
    rank and the reason; --summary with another format is refused with the fix."""
    import csv
    import io
    import json

    from benchmark import cli
    from leaderboard import render

    rs = []
    for k in range(5):
        rs += _board(f"m{k}", {"a": 0.1, "b": 0.3, "c": 0.5, **({"d": 0.9} if k == 0 else {})}, seed=10 * k,
                     white_box=k == 0, gradients=("d",))
    text = render.to_summary_csv(boards(rs))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == render.SUMMARY_CSV_COLUMNS
    track = {r["submission"]: r for r in rows if r["scope"] == "track:aixi"}
    overall_rows = {r["submission"]: r for r in rows if r["scope"] == "overall"}
    assert set(track) == set(overall_rows) == {"a", "b", "c", "d"} and track["a"]["kind"] == "explainer"
    assert (track["a"]["rank"], track["b"]["rank"], track["c"]["rank"]) == ("1", "2", "3")
    assert track["d"]["rank"] == "" and "50%" in track["d"]["unranked"] and track["d"]["entered"] == "1"
    assert track["a"]["boards_counted"] == track["a"]["boards"] == "5" and float(track["a"]["strength"]) > 0
    assert int(track["a"]["rank_ci_low"]) <= 1 <= int(track["a"]["rank_ci_high"])
    # through the CLI: the summary CSV goes to the file; --summary without --format csv is refused
    res = tmp_path / "results"
    res.mkdir()
    for n, r in enumerate(_board("m0", {"a": 0.1, "b": 0.3}, seed=1)):
        (res / f"{n}.json").write_text(json.dumps(r.to_dict()))
    out = tmp_path / "summary.csv"
    for argv, code in ((["leaderboard", "--results", str(res), "--format", "csv", "--summary", "-o", str(out)], 0),
                       (["leaderboard", "--results", str(res), "--summary"], 2)):
        try:
            cli.main(argv)
        except SystemExit as e:
            assert (e.code or 0) == code, argv
    lines = out.read_text().splitlines()
    assert lines[0] == ",".join(render.SUMMARY_CSV_COLUMNS) and lines[1].startswith("track:aixi,explainer,1,")
