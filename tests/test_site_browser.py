"""The static site in a real browser: headless Chromium via Selenium (skipped, with the reason, where
Debian's chromium / chromium-driver or selenium are absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.site import browser

pytestmark = pytest.mark.skipif(bool(browser.unavailable()), reason=browser.unavailable() or "")


@pytest.fixture(scope="module")
def chrome():
    drv = browser.driver()
    yield drv
    drv.quit()


def _pages(out: Path) -> list[Path]:
    return [out / "index.html", *sorted((out / "board").glob("*.html")), *sorted((out / "submission").glob("*.html"))]


def test_every_page_loads_clean(site, chrome):
    """No console error on any page; every image decodes; every local link and image exists."""
    out, _ = site
    for page in _pages(out):
        browser.set_width(chrome, 1280)
        chrome.get(page.as_uri())
        assert browser.console_errors(chrome) == [], page.name
        # images are lazy: load them all (eager) and wait until each has loaded or failed, then check
        chrome.execute_script("Array.from(document.images).forEach(i => { i.loading = 'eager'; });")
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(chrome, 10).until(lambda d: d.execute_script(
            "return Array.from(document.images).every(i => i.complete)"))
        broken = chrome.execute_script(
            "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        assert broken == [], page.name
        hrefs = chrome.execute_script(
            "return Array.from(document.querySelectorAll('a[href], link[href], script[src], img[src]'))"
            ".map(a => a.href || a.src)")
        for url in hrefs:
            if url.startswith("file://"):
                target = Path(url[len("file://"):].split("#")[0])
                assert target.is_file(), f"{page.name} links to missing {target}"


def _column(chrome, col: int) -> list[str]:
    return chrome.execute_script(
        f"return Array.from(document.querySelectorAll('table.board tbody tr')).map(r => r.cells[{col}].textContent)")


def _sort_values(chrome, col: int) -> list[float]:
    """The numeric sort values (data-v) of column `col` of the board table, in row order."""
    values = chrome.execute_script(
        "return Array.from(document.querySelectorAll('table.board tbody tr'))"
        f".map(r => r.cells[{col}].getAttribute('data-v'))")
    return [float(v) for v in values if v]


def test_clicking_a_header_sorts(site, chrome):
    out, _ = site
    browser.set_width(chrome, 1280)
    chrome.get((out / "board" / "aixi__aixi__shape-ssin__cnn.html").as_uri())
    heads = chrome.find_elements("css selector", "table.board thead th")
    labels = [h.text for h in heads]
    kl = next(i for i, t in enumerate(labels) if t.startswith("KL"))
    numbers = _sort_values(chrome, kl)
    assert len(numbers) >= 3
    heads[kl].click()
    assert _sort_values(chrome, kl) == sorted(numbers)
    assert heads[kl].get_attribute("aria-sort") == "ascending"
    heads[kl].click()
    assert _sort_values(chrome, kl) == sorted(numbers, reverse=True)
    # the names moved with their numbers
    names_desc = _column(chrome, 2)
    heads[2].click()
    assert _column(chrome, 2) == sorted(names_desc)
    assert browser.console_errors(chrome) == []


def test_boards_show_their_verdict_rank_intervals_and_metric_agreement(site, chrome):
    """What a reader needs before a number: does the board discriminate, how sure is each rank, do the
    metrics agree — on the board page and, for the verdict, on the overview."""
    out, _ = site
    browser.set_width(chrome, 1280)
    chrome.get((out / "board" / "aixi__aixi__shape-ssin__cnn.html").as_uri())
    headline = chrome.find_element("id", "headline")  # the first thing on the page: who wins, how sure (#36)
    assert headline.location["y"] < chrome.find_element("css selector", "table.board").location["y"]
    assert any(s in headline.text for s in ("Winner:", "No winner:")) and "control" in headline.text
    notes = chrome.find_element("id", "notes")
    if notes.get_attribute("open") is None:  # the notes are folded below the table: open them
        chrome.find_element("css selector", "#notes > summary").click()
    verdict = chrome.find_element("id", "verdict").text
    assert verdict.split(".")[0] in ("Discriminates", "Does not discriminate", "Undefined"), verdict
    assert "control" in verdict
    heads = [h.text for h in chrome.find_elements("css selector", "table.board thead th")]
    assert heads[:3] == ["#", "rank 95%", "submission"] and "all-metric" in heads
    intervals = _column(chrome, 1)
    assert any(c != "—" for c in intervals)  # the methods' rank intervals
    ranks = _column(chrome, 0)
    assert ranks.count("ctrl") == 4  # random, uniform and the data priors foreground, centre-prior: never ranked
    agreement = chrome.find_element("id", "agreement").text
    assert "Kendall τ" in agreement and "EMD" in agreement
    chrome.get((out / "index.html").as_uri())
    tags = [t.text for t in chrome.find_elements("css selector", ".verdict-tag")]
    assert tags and set(tags) <= {"discriminates", "does not discriminate", "undefined"}
    assert browser.console_errors(chrome) == []


def test_phone_width_has_no_page_overflow(site, chrome):
    """At 390 px nothing but a table's own scroll box is wider than the screen."""
    out, _ = site
    for page in (out / "index.html", out / "board" / "aixi__aixi__shape-ssin__cnn.html"):
        browser.set_width(chrome, 390, 800, mobile=True)
        chrome.get(page.as_uri())
        width = chrome.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, f"{page.name} is {width} px wide at 390 px"


def test_screenshots(site, chrome, tmp_path):
    from PIL import Image

    out, _ = site
    board = browser.showcase_board(out)
    for name, page in (("overview", out / "index.html"), ("board", board)):
        shot = browser.screenshot(chrome, page.as_uri(), tmp_path / f"{name}.png")
        with Image.open(shot) as im:
            assert im.size[0] == 1280 and im.size[1] >= 400
            lo, hi = im.convert("L").getextrema()
            assert hi - lo > 50  # not a blank page


def _section(chrome, heading: str) -> tuple[str, list[str]]:
    """(text, link targets) of everything between the h2 `heading` and the next h2 of the open page."""
    return chrome.execute_script(
        "const h = Array.from(document.querySelectorAll('h2')).find(h => h.textContent === arguments[0]);"
        "if (!h) return ['', []];"
        "const text = [], links = []; let n = h.nextElementSibling;"
        "while (n && n.tagName !== 'H2') { text.push(n.innerText);"
        "  n.querySelectorAll('a[href]').forEach(a => links.push(a.href)); n = n.nextElementSibling; }"
        "return [text.join(' '), links];", heading)


def test_metric_and_track_references_show_in_the_browser(site, chrome):
    """Each metric's paragraph on a board and each track's section on the overview show the registry's
    `reference` (the paper), its link clickable (issue #31: one copy of every fact, no site-side list)."""
    from benchmark.metrics import METRICS
    from benchmark.tracks import get_track

    out, _ = site
    browser.set_width(chrome, 1280)
    chrome.get((out / "board" / "aixi__aixi__shape-ssin__cnn.html").as_uri())
    text, links = _section(chrome, "Metrics")
    for name in ("kl", "pcc"):
        ref = METRICS.get(name).reference
        assert f"Reference: {ref}" in text, (name, text)
        assert ref.rsplit(", ", 1)[-1] in links, (name, links)
    chrome.get((out / "index.html").as_uri())
    for track in ("aixi", "rcnn"):  # a track with boards, and one without results
        ref = get_track(track).reference
        text, links = _section(chrome, f"Track {track}")
        assert f"Reference: {ref}" in text, (track, text)
        assert ref.rsplit(", ", 1)[-1] in links, (track, links)
    # the rcnn track follows two papers (Camburu et al. 2019; Lei et al. 2016's rationale model): both linked
    assert "Lei, Barzilay & Jaakkola 2016" in text
    assert {"https://arxiv.org/abs/1910.02065", "https://arxiv.org/abs/1606.04155"} <= set(links)
    assert browser.console_errors(chrome) == []
