"""Pinned resource revisions: `load_resource(name, revision=…)` / `name@revision`, recorded in Results."""

from __future__ import annotations

import pytest

from benchmark.errors import ResourceError
from benchmark.resources import load_resource


def test_pin_selects_and_refuses(home):
    res = load_resource("aixi/shape-ssin")
    rev = res.revision
    assert load_resource("aixi/shape-ssin", revision=rev[:8]).revision == rev
    assert load_resource(f"aixi/shape-ssin@{rev[:10]}").revision == rev
    assert load_resource(f"aixi/shape-ssin@{rev}", revision=rev).name == "aixi/shape-ssin"
    with pytest.raises(ResourceError, match=f"found it at other revisions: {rev[:12]}"):
        load_resource("aixi/shape-ssin", revision="deadbeef00")
    with pytest.raises(ResourceError, match="too short"):
        load_resource("aixi/shape-ssin", revision="abc")
    with pytest.raises(ResourceError, match="pinned twice"):
        load_resource(f"aixi/shape-ssin@{rev[:8]}", revision="0123456789")
    with pytest.raises(ResourceError, match="without a revision"):
        load_resource("aixi/shape-ssin@")


def test_evaluate_on_a_pinned_resource_records_it(home, tmp_path):
    from benchmark.runner import evaluate

    rev = load_resource("aixi/shape-ssin").revision
    r = evaluate("uniform", "aixi", f"aixi/shape-ssin@{rev[:8]}", model="function", limit=3, results_dir=tmp_path,
                 sandbox="none")
    assert r.resource["name"] == "aixi/shape-ssin" and r.resource["revision"] == rev
    assert r.path is not None and "@" not in str(r.path.relative_to(tmp_path).parent)
    with pytest.raises(ResourceError, match="at revision 0000000000 not found"):
        evaluate("uniform", "aixi", "aixi/shape-ssin@0000000000", model="function", limit=3,
                 results_dir=tmp_path / "other", sandbox="none")
    assert not (tmp_path / "other").exists()
