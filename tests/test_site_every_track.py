"""The site's overview lists results for every kind of ground truth (issue #28): real Results of a
control and a method on a tiny resource of each track (AIXI, IDC, RCNN, trust, robustness), one
results folder, one site, opened in headless Chromium. Skips, saying why, where Chromium or a corpus
is absent."""

from __future__ import annotations

import pytest

from leaderboard.site import browser
from tests.test_rcnn_track import built  # noqa: F401  (module fixture: a tiny rcnn/beer-appearance)
from tests.test_robust_track import robust_home  # noqa: F401  (module fixture: a tiny robustness/mr-cnn)
from tests.test_trust_track import trust_home  # noqa: F401  (session fixture: a tiny trust/hatexplain-cnn)

pytestmark = [pytest.mark.skipif(bool(browser.unavailable()), reason=browser.unavailable() or ""),
              pytest.mark.usefixtures("one_torch_thread")]

# (track, resource, model, the control, a method, instances)
RUNS = [
    ("aixi", "aixi/shape-ssin", "function", "uniform", "occlusion", 4),
    ("idc", "idc/mr-wga", "cnn", "random", "saliency", 8),
    ("rcnn", "rcnn/beer-appearance", "rcnn", "random", "saliency", 8),
    ("trust", "trust/hatexplain-cnn", "cnn", "random-oracle", "naive-oracle", None),
    ("robustness", "robustness/mr-cnn", "cnn", "random", "saliency", None),
]


@pytest.fixture(scope="module")
def every_track_site(idc_home, trust_home, built, robust_home, tmp_path_factory):  # noqa: F811
    from benchmark.runner import evaluate
    from leaderboard.site import build_site

    homes = {"aixi": idc_home, "idc": idc_home, "trust": trust_home, "rcnn": built["home"],
             "robustness": robust_home}
    results = tmp_path_factory.mktemp("every-track-results")
    with pytest.MonkeyPatch.context() as mp:
        for track, resource, model, control, method, limit in RUNS:
            mp.setenv("XAIBENCH_HOME", str(homes[track]))
            for sub in (control, method):
                evaluate(sub, track, resource, model=model, limit=limit, batch_size=4, results_dir=results,
                         sandbox="none", timeout_s=0)
        out = tmp_path_factory.mktemp("every-track-site") / "site"
        build_site(out, results, sample=1)
    return out


def test_the_overview_lists_results_for_every_track(every_track_site):
    drv = browser.driver()
    try:
        browser.set_width(drv, 1280)
        drv.get((every_track_site / "index.html").as_uri())
        assert browser.console_errors(drv) == []
        sections = drv.execute_script(
            "return Array.from(document.querySelectorAll('h2')).map(h => {"
            "  const items = []; let n = h.nextElementSibling;"
            "  while (n && n.tagName !== 'H2') { items.push(n.textContent); n = n.nextElementSibling; }"
            "  return [h.textContent, items.join(' ')]; })")
    finally:
        drv.quit()
    text = {head: body for head, body in sections}
    from benchmark.tracks import get_track

    for track, resource, model, *_ in RUNS:
        body = text.get(f"Track {track}")
        assert body is not None, f"the overview has no section for {track}: {list(text)}"
        assert f"Reference: {get_track(track).reference}" in body, (track, body)  # the paper it follows
        assert "no results yet" not in body, (track, body)
        assert f"{resource} · {model}" in body, (track, body)  # the board is listed, with its verdict
        assert any(v in body for v in ("discriminates", "does not discriminate", "undefined")), (track, body)
