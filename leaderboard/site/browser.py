"""A real browser for the site: headless Chromium through Selenium (tests and `make screenshots`).

Debian's `chromium` + `chromium-driver` with pip `selenium`; the Debian driver path skips Selenium
Manager, so nothing is downloaded. Exact viewport sizes come from the DevTools override
(`Emulation.setDeviceMetricsOverride`), not from the window size.

    python -m leaderboard.site.browser SITE_DIR OUT_DIR   # overview.png and board.png at 1280 px
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--hide-scrollbars", "--force-device-scale-factor=1")


def unavailable() -> str | None:
    """None when a headless Chromium can be driven here, else why not."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'xaibench[test]')"
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not Path(path).exists() and not shutil.which(Path(path).name):
            return (f"{path} not found: install Debian's {pkg} (apt-get install -y chromium chromium-driver; "
                    "`make setup` does it as root)")
    return None


def driver() -> WebDriver:
    """A headless Chromium WebDriver that records the browser console."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    # `unavailable()` said whether either is there; without one, Chrome fails naming the Debian path
    opts.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium") or CHROMIUM
    for a in ARGS:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    path = CHROMEDRIVER if Path(CHROMEDRIVER).exists() else shutil.which("chromedriver")
    return webdriver.Chrome(service=Service(path), options=opts)


def set_width(drv: WebDriver, width: int, height: int = 900, mobile: bool = False) -> None:
    """Emulate a screen `width` × `height` CSS px (device scale 1; `mobile`: a phone's viewport rules)."""
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def console_errors(drv: WebDriver) -> list[str]:
    """The SEVERE messages of the browser console since the last call (the log is read, then emptied)."""
    return [e["message"] for e in drv.get_log("browser") if e.get("level") == "SEVERE"]


def screenshot(drv: WebDriver, url: str, out: Path, width: int = 1280, max_height: int = 1400) -> Path:
    """A screenshot of `url` at `width` px, as tall as the page (at most `max_height`)."""
    set_width(drv, width)
    drv.get(url)
    height = int(drv.execute_script("return document.documentElement.scrollHeight"))
    set_width(drv, width, min(max(height, 400), max_height))
    out.parent.mkdir(parents=True, exist_ok=True)
    drv.save_screenshot(str(out))
    return out


def showcase_board(site: Path) -> Path:
    """The board to show: the first one whose control scores better than the median method (the warning
    `facts.control_warning` writes), else the board with the most rows."""
    meta = json.loads((site / "site.json").read_text(encoding="utf-8"))
    pages = [site / b["page"] for b in meta["boards"]]
    if not pages:
        return site / "index.html"
    warned = [p for p in pages if "A control scores better than the median" in p.read_text(encoding="utf-8")]
    if warned:
        return warned[0]
    return max(pages, key=lambda p: p.read_text(encoding="utf-8").count("<tr"))


def main(argv: list[str]) -> int:
    """`python -m leaderboard.site.browser SITE OUT`: screenshots of the overview and the showcase board."""
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    why = unavailable()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    site, out = Path(argv[0]).resolve(), Path(argv[1])
    drv = driver()
    try:
        for name, page in (("overview", site / "index.html"), ("board", showcase_board(site))):
            path = screenshot(drv, page.as_uri(), out / f"leaderboard-{name}.png")
            print(f"wrote {path} ({page.relative_to(site)})")
    finally:
        drv.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
