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


def test_clicking_a_header_sorts(site, chrome):
    out, _ = site
    browser.set_width(chrome, 1280)
    chrome.get((out / "board" / "aixi__aixi__shape-ssin__cnn.html").as_uri())
    heads = chrome.find_elements("css selector", "table.board thead th")
    labels = [h.text for h in heads]
    pcc = next(i for i, t in enumerate(labels) if t.startswith("KL"))
    values = chrome.execute_script(
        f"return Array.from(document.querySelectorAll('table.board tbody tr')).map(r => r.cells[{pcc}].getAttribute('data-v'))")
    numbers = [float(v) for v in values if v]
    assert len(numbers) >= 3
    heads[pcc].click()
    asc = [float(v) for v in chrome.execute_script(
        f"return Array.from(document.querySelectorAll('table.board tbody tr')).map(r => r.cells[{pcc}].getAttribute('data-v'))") if v]
    assert asc == sorted(numbers)
    assert heads[pcc].get_attribute("aria-sort") == "ascending"
    heads[pcc].click()
    desc = [float(v) for v in chrome.execute_script(
        f"return Array.from(document.querySelectorAll('table.board tbody tr')).map(r => r.cells[{pcc}].getAttribute('data-v'))") if v]
    assert desc == sorted(numbers, reverse=True)
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
    verdict = chrome.find_element("id", "verdict").text
    assert verdict.split(".")[0] in ("Discriminates", "Does not discriminate", "Undefined"), verdict
    assert "control" in verdict
    heads = [h.text for h in chrome.find_elements("css selector", "table.board thead th")]
    assert heads[:3] == ["#", "rank 95%", "submission"] and "all-metric" in heads
    intervals = _column(chrome, 1)
    assert any(c != "—" for c in intervals)  # the methods' rank intervals
    ranks = _column(chrome, 0)
    assert ranks.count("ctrl") == 2  # random and uniform: marked, never ranked
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
