"""Issue #12, IDC stated honestly: `xaibench generate idc` has a default MILP time limit (0 = until proven
optimal), and what the MILP returns carries its bounds and gap instead of a claim of optimality."""

from __future__ import annotations

import random

import pytest
import typer

pytest.importorskip("pyscipopt")

from benchmark import cli  # noqa: E402
from generators.idc.build import IdcConfig, milp_subsample  # noqa: E402
from generators.idc.milp import solve_milp, tfidf_vocabulary  # noqa: E402


def _generate_idc_params() -> dict:
    app = typer.main.get_command(cli.load_plugins())
    cmd = app.commands["generate"].commands["idc"]
    return {p.name: p for p in cmd.params}


def test_generate_idc_has_a_default_milp_time_limit():
    params = _generate_idc_params()
    assert params["milp_time_limit"].default == 300.0
    assert IdcConfig().milp_time_limit == 300.0
    # 0 is accepted (it means "until proven optimal") and negative values are not
    ctx = typer.main.get_command(cli.load_plugins()).commands["generate"].commands["idc"].make_context(
        "idc", ["--milp-time-limit", "0"])
    assert ctx.params["milp_time_limit"] == 0.0
    with pytest.raises(typer.exceptions.TyperException, match="greater than or equal to 0"):
        typer.main.get_command(cli.load_plugins()).commands["generate"].commands["idc"].make_context(
            "idc", ["--milp-time-limit", "-1"])


def _random_instance(seed: int):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(30)]
    docs = [rng.sample(vocab, rng.randint(2, 6)) for _ in range(60)]
    labels = [rng.choice("ab") for _ in docs]
    return docs, labels, vocab


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_proven_optimum_has_equal_bounds(seed):
    docs, labels, vocab = _random_instance(seed)
    r = solve_milp(docs, labels, vocab, min_words=1)
    assert r.optimal and not r.timed_out and r.gap == 0.0 and r.time_limit is None
    value = r.objective + r.cardinality / (2 * len(vocab) + 1)  # cost + ε·|IF|
    assert r.upper_bound == pytest.approx(value) and r.lower_bound == pytest.approx(value)
    assert r.status().startswith("proven optimal")


def _mr(n: int):
    from tests.conftest import mirror_dir_or_skip

    mirror_dir_or_skip("rt_polarity", "rt-polarity.pos")
    from generators.corpora import load_mr

    train = load_mr(source="mirror", seed=0)["train"][:n]
    return [d.tokens for d in train], [d.label for d in train]


def test_time_limited_mr_milp_reports_its_bounds_and_gap():
    # 3,000 MR documents over 1,500 TF-IDF words: one class's cover alone needs far more than 2 s here
    docs, labels = _mr(3000)
    vocab = tfidf_vocabulary(docs, 1500)
    r = solve_milp(docs, labels, vocab, min_words=5, time_limit=2)
    assert not r.optimal and r.timed_out and r.time_limit == 2
    assert 0 <= r.lower_bound < r.upper_bound
    # the returned solution's value is its objective + ε·|IF|; the gap is (upper - lower) / upper
    assert r.upper_bound == pytest.approx(r.objective + r.cardinality / (2 * len(vocab) + 1))
    assert r.gap == pytest.approx((r.upper_bound - r.lower_bound) / r.upper_bound, rel=1e-6)
    # a bound of SCIP's (or the trivial 0 when the root LP was not solved in time: gap 1), never its
    # "no bound" value -1e20, which would give a gap in the millions
    assert 0 < r.gap <= 1
    assert "time limit 2 s reached" in r.status() and "gap" in r.status()


def test_milp_subsample_keeps_n_documents_with_enough_words_of_v():
    docs, labels = _mr(1000)
    vocab = tfidf_vocabulary(docs, 600)
    sd, sl = milp_subsample(docs, labels, vocab, 200, min_words=5, seed=0)
    assert len(sd) == len(sl) == 200
    words = set(vocab)
    assert all(len(words.intersection(d)) >= 5 for d in sd)
    assert milp_subsample(docs, labels, vocab, 200, min_words=5, seed=0) == (sd, sl)  # seeded
    r = solve_milp(sd, sl, vocab, min_words=5)
    assert r.n_documents == 200 and r.n_discarded == 0


def test_tiny_build_card_carries_the_milp_status(idc_home, monkeypatch):
    from benchmark.resources import load_resource

    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    for pgt in ("milp", "hybrid"):
        res = load_resource(f"idc/mr-{pgt}")
        st = res.stats
        assert st["milp_time_limit"] == 300.0 and st["milp_status"].startswith("proven optimal")
        assert st["milp_lower_bound"] == pytest.approx(st["milp_upper_bound"])
        card = (res.root / "README.md").read_text()
        assert "milp_status" in card and "milp_lower_bound" in card
