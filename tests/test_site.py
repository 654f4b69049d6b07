"""`xaibench site`: the static leaderboard built from real results (tiny AIXI resources, real runner)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest



class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("href", "src"):
            if a.get(k):
                self.links.append(a[k])


def local_links(page: Path) -> list[str]:
    p = _Links()
    p.feed(page.read_text(encoding="utf-8"))
    return [x for x in p.links if not re.match(r"^(https?:|data:|#)", x)]


def test_pages_and_links(site):
    out, report = site
    assert (out / "index.html").is_file() and (out / "style.css").is_file() and (out / "sort.js").is_file()
    boards = sorted(p.name for p in (out / "board").iterdir())
    assert boards == ["aixi__aixi__color-ssin__function.html", "aixi__aixi__shape-ssin__cnn.html",
                      "aixi__aixi__shape-ssin__function.html"]
    subs = sorted(p.stem for p in (out / "submission").iterdir())
    assert {"occlusion", "random", "uniform"} <= set(subs)
    for page in [out / "index.html", *(out / "board").iterdir(), *(out / "submission").iterdir()]:
        for link in local_links(page):
            assert (page.parent / link).resolve().is_file(), f"{page.name} links to missing {link}"
    # the cnn board's 7 submissions and the function board's 5 (the two data priors each, #58) drew 12 galleries
    assert len(report.images) == 12 and all((out / p).stat().st_size > 1000 for p in report.images)


def test_board_numbers_and_warnings(site, site_results):
    out, _ = site
    _, made = site_results
    page = (out / "board" / "aixi__aixi__shape-ssin__cnn.html").read_text()
    # the numbers are the Results' own: mean ± CI half-width, sort values are the means
    r = made[("occlusion", "cnn")]
    kl = r.metrics["kl"]
    assert f'data-v="{float(kl.mean)!r}"' in page
    assert "KL ↓ ★" in page and "PCC ↑" in page
    # bad input named on the page, never ranked
    assert "different resource revisions" in page and "occlusion-old" in page
    assert "cannot verify" in page and "tampered" in page and "0.0 ±" not in page
    # metric paragraphs come from the registry
    assert "Kullback" in page or "KL(P_G" in page
    assert "Miró-Nicolau" in page
    # each metric's reference is the registry's own (issue #31), its link clickable
    from benchmark.metrics import METRICS

    for name in ("kl", "pcc"):
        ref = METRICS.get(name).reference
        url = ref.rsplit(", ", 1)[-1]
        assert ref.split(",")[0] in page and f'<a href="{url}">' in page, name
    index = (out / "index.html").read_text()
    assert 'Reference: Miró-Nicolau' in index and '<a href="https://arxiv.org/abs/2302.05624">' in index
    assert "Reference: Ivankay" in index  # a track without results names its paper too
    occl = (out / "submission" / "occlusion.html").read_text()
    assert "Reference: Zeiler &amp; Fergus 2014" in occl
    # the quality of the model under test is shown (tiny CNN: below the R² threshold → warned)
    assert "R²" in page and page.count("below its quality floor") == 1  # the track's floor, said once
    assert "the track's floor 0.8" in page and "below its floor" in page
    lone = (out / "board" / "aixi__aixi__color-ssin__function.html").read_text()
    assert "no control Result on this board" in lone and "Not ranked" in lone  # no floor: no ranks (#36)
    # its PCC is undefined on every row: the column is not drawn, the notes name it once (#36)
    assert "Not drawn: PCC — undefined for every instance of every submission here" in lone
    assert 'title="undefined for all 6 instances">n/a' not in lone and "PCC ↑" not in lone
    assert "picture not drawn: resource aixi/color-ssin is not here at the board" in lone
    assert "found it at other revisions" in lone
    fn = (out / "board" / "aixi__aixi__shape-ssin__function.html").read_text()
    assert "no-cache: image · true map · explanation: picture not drawn: its cache" in fn
    assert "does-not-exist.sqlite is gone" in fn
    index = (out / "index.html").read_text()
    assert "could not be read" in index and "broken.json" in index
    assert "Overall" in index and "Resource revisions" in index
    assert "Track rcnn" in index and "no results yet" in index  # every registered track is listed


def test_control_warning_rule():
    from benchmark.store.results import MetricSummary
    from leaderboard.boards import Board, Row
    from leaderboard.site import control_warning

    def board(values: dict[str, float], controls=("random", "uniform")) -> Board:
        rows = []
        for k, (name, v) in enumerate(sorted(values.items(), key=lambda x: x[1])):
            role = "control" if name in controls else "method"
            rows.append(Row(None if role == "control" else k + 1, name, "1",
                            {"kl": MetricSummary(v, 0.1, (v, v), 10, 0, "lower", "KL")}, 1, 0, 0.0, role=role))
        return Board("aixi", "aixi/x", "cnn", "r", "v1", "validation", "kl", "lower", ["kl"], {}, {"kl": "lower"}, rows)

    # methods at 0.2, 0.3, 0.4 (median 0.3): uniform at 0.1 beats it, random at 0.9 does not
    w = control_warning(board({"uniform": 0.1, "a": 0.2, "b": 0.3, "c": 0.4, "random": 0.9}))
    assert w and "uniform (kl 0.1)" in w and "random (" not in w
    # a control at the median is not above it
    assert control_warning(board({"a": 0.1, "uniform": 0.2, "b": 0.2, "c": 0.3})) is None
    assert control_warning(board({"a": 0.1, "b": 0.2, "random": 0.3})) is None
    assert "has not learnt" in w  # the generic reason
    # a track with its own reason: the robustness boards' blind spot (a text-blind control is robust)
    rob = board({"position": 0.0, "a": 0.2, "b": 0.3, "c": 0.4}, controls=("position",))
    rob.track = "robustness"
    w = control_warning(rob)
    assert "position (kl 0)" in w and "not faithfulness" in w and "has not learnt" not in w


def test_model_quality_reads_results_model_info():
    """Quality floors live with the track and travel in the Result (`model.quality`); the site keeps
    no thresholds of its own (issue #31)."""
    import leaderboard.site as site
    from leaderboard.site import model_quality

    assert not hasattr(site, "QUALITY_THRESHOLDS") and not hasattr(site, "quality_warnings")
    # no floor in the Result: the figures are shown, with no threshold to judge them by
    assert model_quality({"validation": {"mse": 0.1, "r2": 0.91}}) == [("R²", 0.91, None)]
    assert model_quality({"scores": {"test": {"accuracy": 0.6}}}) == [("test accuracy", 0.6, None)]
    assert model_quality({"name": "function"}) == []
    # the track's floor is the one shown, for its metric only
    floored = {"validation": {"r2": 0.25, "accuracy": 0.5},
               "quality": {"metric": "r2", "value": 0.25, "floor": 0.8, "meets_floor": False}}
    assert model_quality(floored) == [("R²", 0.25, 0.8), ("accuracy", 0.5, None)]
    # a floor on another figure (the RCNN's rationale precision) is shown as a figure of its own
    rcnn = {"quality": {"metric": "rationale precision", "value": 0.4, "floor": 0.6, "meets_floor": False}}
    assert model_quality(rcnn) == [("rationale precision", 0.4, 0.6)]


def test_figure_registry_hook(site_results, tmp_path):
    from leaderboard.site import build_site
    from leaderboard.site.figures import FIGURES, Figure, register_figures

    results, _ = site_results
    with pytest.raises(ValueError):
        register_figures("aixi")(lambda ctx: [])
    saved = FIGURES.pop("aixi")
    try:
        @register_figures("aixi")
        def broken(ctx):
            raise RuntimeError("boom")

        report = build_site(tmp_path / "s", results)
        page = (tmp_path / "s" / "board" / "aixi__aixi__shape-ssin__cnn.html").read_text()
        assert "pictures not drawn: RuntimeError: boom" in page and report.images == []
        FIGURES["aixi"] = lambda ctx: [Figure("custom", None, "drawn elsewhere")]
        build_site(tmp_path / "s", results)
        assert "drawn elsewhere" in (tmp_path / "s" / "board" / "aixi__aixi__shape-ssin__cnn.html").read_text()
    finally:
        FIGURES["aixi"] = saved


def test_cli_site(site_results, tmp_path):
    from typer.testing import CliRunner

    from benchmark.cli import load_plugins

    results, _ = site_results
    r = CliRunner().invoke(load_plugins(), ["site", "--out", str(tmp_path / "out"), "--results", str(results),
                                            "--no-figures"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "index.html").is_file() and not any((tmp_path / "out" / "img").iterdir())


def test_publish_site_dry_run_and_folder(site, tmp_path, monkeypatch, capsys):
    import shutil

    import huggingface_hub

    from benchmark import cli

    out, report = site

    def no_network(*a, **k):
        raise AssertionError("a dry run must not talk to the Hub")

    monkeypatch.setattr(huggingface_hub, "HfApi", no_network)

    def run(*argv):
        with pytest.raises(SystemExit) as exc:
            cli.main(list(argv))
        got = capsys.readouterr()
        return exc.value.code, " ".join((got.out + got.err).split())

    code, text = run("publish", "--site", str(out), "--repo-id", "me/leaderboard", "--dry-run")
    assert code == 0, text
    n = len([p for p in out.rglob("*") if p.is_file()])
    assert f"would upload {n} files of {out} to the Space me/leaderboard" in text
    # a static host folder: a real copy, every file
    code, text = run("publish", "--site", str(out), "--to", str(tmp_path / "www"))
    assert code == 0, text
    assert sorted(p.relative_to(tmp_path / "www") for p in (tmp_path / "www").rglob("*") if p.is_file()) == \
        sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    # a site with a missing picture is not published
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / report.images[0]).unlink()
    code, text = run("publish", "--site", str(broken), "--to", str(tmp_path / "www2"))
    assert code == 2 and "broken link" in text and not (tmp_path / "www2").exists()
    code, text = run("publish", "--site", str(out))
    assert code == 2 and "exactly one target" in text


def test_text_heatmaps_from_a_real_idc_run(idc_home, tmp_path, monkeypatch):
    """IDC: occlusion (leave-one-out) on the tiny MR resource; the board shows one heatmap per submission,
    drawn from the run's cache, with the pseudo ground-truth words marked."""
    from PIL import Image

    from benchmark.runner import evaluate
    from leaderboard.site import build_site

    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    results = tmp_path / "results"
    for sub in ("occlusion", "uniform"):
        evaluate(sub, "idc", "idc/mr-wga", model="cnn", limit=4, results_dir=results, sandbox="none")
    report = build_site(tmp_path / "site", results, sample=3)
    page = (tmp_path / "site" / "board" / "idc__idc__mr-wga__cnn.html").read_text()
    assert "tokens shaded by attribution" in page and "picture not drawn" not in page
    assert len(report.images) == 2
    for rel in report.images:
        with Image.open(tmp_path / "site" / rel) as im:
            lo, hi = im.convert("L").getextrema()
            assert im.size[0] > 400 and hi - lo > 50
    assert "Khaleel" in page  # the metric paragraphs name the IDC paper


def test_no_quality_warning_without_the_tracks_floor(site_results, tmp_path):
    """A Result whose model info carries no floor (`model.quality`) gets no quality warning, however
    low its validation figures: the site has no thresholds of its own (issue #31)."""
    import copy

    from leaderboard.site import build_site

    _, made = site_results
    results = tmp_path / "results"
    for sub in ("occlusion", "random"):
        r = copy.deepcopy(made[(sub, "cnn")])
        r.model.pop("quality", None)
        r.model["validation"] = {"r2": 0.01}
        r.save(results / "aixi" / f"{sub}.json")
    out = tmp_path / "site"
    build_site(out, results, sample=0)
    page = (out / "board" / "aixi__aixi__shape-ssin__cnn.html").read_text()
    assert "R²" in page and "0.0100" in page
    assert "quality floor" not in page and "below its floor" not in page and "threshold" not in page


def test_the_showcase_board_is_the_one_whose_control_beats_the_median(tmp_path):
    """`make screenshots` shows the board carrying `control_warning`'s text, else the one with most rows."""
    from leaderboard.site import browser

    (tmp_path / "board").mkdir()
    pages = {"board/a.html": "<tr><tr><tr>", "board/b.html": "<tr><p>A control scores better than the median of "
                                                              "the 3 ranked method(s) on KL</p>"}
    for rel, text in pages.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / "site.json").write_text(json.dumps({"boards": [{"page": p} for p in pages]}), encoding="utf-8")
    assert browser.showcase_board(tmp_path) == tmp_path / "board/b.html"
    (tmp_path / "board/b.html").write_text("<tr>", encoding="utf-8")
    assert browser.showcase_board(tmp_path) == tmp_path / "board/a.html"


def test_board_page_first_screen_says_who_wins_and_how_sure():
    """Issue #36: one headline (winner, its score and interval, the verdict) before anything else, the
    table next, the notes folded below it; a metric undefined on every row is not drawn, and an n/a
    footnote is written once however many metrics and rows carry it."""
    from benchmark.store.results import MetricSummary
    from leaderboard.boards import Board, Row
    from leaderboard.verdicts import Verdict
    from leaderboard.site.pages import board_page

    def ms(v, label):
        return MetricSummary(v, 0.1 if v is not None else None, None if v is None else (v - 0.05, v + 0.05), 10,
                             0 if v is not None else 10, "higher" if label != "KL" else "lower", label)

    def row(rank, name, kl, pcc, emd, gone, role="method"):
        return Row(rank, name, "1", {"kl": ms(kl, "KL"), "pcc": ms(pcc, "PCC"), "emd": ms(emd, "EMD"),
                                     "rra": ms(gone, "RRA")}, 10, 0, 1.0, role=role)

    rows = [row(1, "good", 0.2, 0.9, None, None), row(2, "meh", 0.5, None, None, None),
            row(None, "random", 0.9, 0.0, 0.3, None, role="control")]
    names = ["kl", "pcc", "emd", "rra"]
    b = Board("aixi", "aixi/x", "cnn", "r", "v1", "validation", "kl", "lower", names,
              {"kl": "KL", "pcc": "PCC", "emd": "EMD", "rra": "RRA"},
              {"kl": "lower", "pcc": "higher", "emd": "lower", "rra": "higher"}, rows,
              verdict=Verdict("discriminates", "good vs the control random: …", "good", "random", 0.7, (0.6, 0.8)))
    b.warnings = ["a warning of the ranking"]
    html_ = board_page(b, {}, [], {}, "today")
    body = html_[html_.index("</h1>"):]
    headline = body[:body.index("</p>")]
    assert "Winner: good" in headline and "KL ↓ 0.2 [0.15, 0.25]" in headline
    assert "discriminates" in headline and "random" in headline and "+0.7 [+0.6, +0.8]" in headline
    assert "2 warnings below the table" in headline  # the ranking's and the column not drawn
    assert body.index('id="headline"') < body.index("<table") < body.index('id="notes"') < body.index('id="verdict"')
    assert body.index("<table") < body.index("a warning of the ranking")  # folded below the table
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", body)
    assert "RRA ↑" not in heads and "EMD ↓" in heads and "PCC ↑" in heads  # RRA: undefined on every row
    assert "Not drawn: RRA" in body
    assert body.count("† n/a") == 1 and "(EMD, PCC: e.g." in body  # one footnote for 3 n/a cells of 2 metrics
