"""A robustness score that a part of the map which does not read the input cannot raise (issue #36).

The constructed class: several faithful parts f (maps that read the words) × several input-independent
components g(i, n) (a function of the position i and the length n only: a large constant at a fixed
position, the position control's decay, a value at the last word, an arbitrary function of both). Raw
PCC rewards f + g (whatever never moves under a swap dominates the correlation); the residual score
(PCC after removing the board's position profile) gives f + g exactly f's score, and g alone none.
Synthetic texts (words are integers) so every case is cheap and exact; no model (faithfulness, which
needs one, is covered in test_robust_track)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmark.bootstrap import draw_weights
from benchmark.metrics import robustness as rm
from benchmark.store.results import pack_scores
from benchmark.tracks import get_track
from leaderboard.boards import boards
from tests.test_leaderboard import make_result

VOCAB = 500
TABLE = np.random.default_rng(7).standard_normal(VOCAB)  # a word's own weight, as the "model" reads it


def _texts(n_samples: int = 24, lengths=(6, 9, 12), seed: int = 0):
    """(tokens of every instance, kind per instance): each sample's original, then TEF and RA texts with
    r = 1 … 3 words swapped for other words (same length)."""
    rng = np.random.default_rng(seed)
    texts, kind = [], []
    for s in range(n_samples):
        n = lengths[s % len(lengths)]
        orig = rng.integers(0, VOCAB, n)
        o = len(texts)
        texts.append(orig)
        kind.append({"original": True})
        for attack in ("tef", "ra"):
            adv = orig.copy()
            for r, pos in enumerate(rng.permutation(n)[:3], start=1):
                adv = adv.copy()
                adv[pos] = rng.integers(0, VOCAB)
                texts.append(adv)
                kind.append({"original": False, "of": o, "attack": attack, "rho": r / n, "weight": 1, "sample": s})
    return texts, kind


def _text_noise(tokens) -> np.ndarray:
    """Noise that depends on the words (a sampling explainer's draw, seeded by its input)."""
    return np.random.default_rng(int(np.sum(tokens * np.arange(1, len(tokens) + 1))) % 2**32).standard_normal(
        len(tokens))


FAITHFUL = {  # maps that read the input
    "word-weight": lambda t: TABLE[t],
    "with-context": lambda t: TABLE[t] + 0.5 * np.r_[TABLE[t][1:], 0.0] + 0.5 * np.r_[0.0, TABLE[t][:-1]],
    "noisy": lambda t: TABLE[t] + 0.7 * _text_noise(t),
    "scaled-leave-one-out": lambda t: (TABLE[t] - TABLE[t].min()) / (np.ptp(TABLE[t]) + 1e-12),
}


def _at(i, n, where):
    return np.where(i == where, 1.0, 0.0)


BLIND = {  # components that never read the input: g(i, n)
    "constant-10-at-0": lambda i, n: 10.0 * _at(i, n, 0),
    "constant-5-at-2": lambda i, n: 5.0 * _at(i, n, 2),
    "position-decay": lambda i, n: 3.0 * (n - i) / n,
    "last-word-8": lambda i, n: 8.0 * _at(i, n, n - 1),
    "cos-of-both": lambda i, n: 4.0 * np.cos(0.7 * i * n),
}


def _maps(f=None, g=None, texts=()):
    out = []
    for t in texts:
        i, n = np.arange(len(t)), len(t)
        a = np.zeros(n)
        if f is not None:
            a = a + FAITHFUL[f](t)
        if g is not None:
            a = a + BLIND[g](i, n)
        out.append(a)
    return out


def _scored(maps, kind):
    trk = get_track("robustness")
    truths = {"kind": kind}
    scores = trk.score(maps, truths, list(range(len(maps))))
    ok = np.ones(len(maps), dtype=bool)
    return trk, scores, ok, trk.summarise(scores, ok)


@pytest.fixture(scope="module")
def board_texts():
    return _texts()


@pytest.mark.parametrize("f", sorted(FAITHFUL))
def test_an_input_independent_component_cannot_raise_the_residual_score(board_texts, f):
    texts, kind = board_texts
    alone = _point(_maps(f, None, texts), kind)
    raised_raw = 0
    for g in BLIND:
        both = _point(_maps(f, g, texts), kind)
        for attack in ("tef", "ra"):
            r_alone, r_both = alone[f"rob-racc-{attack}"], both[f"rob-racc-{attack}"]
            assert math.isfinite(r_alone) and math.isfinite(r_both)
            assert r_both == pytest.approx(r_alone, abs=1e-9), (f, g, attack)  # exactly its faithful part's
        raised_raw += both["rob-acc-tef"] > alone["rob-acc-tef"] + 0.01
    # the defect the residual score removes: raw ACC rewards most of these components
    assert raised_raw >= 3, f"raw ACC raised by only {raised_raw} of {len(BLIND)} components for {f}"


def test_a_blind_map_has_no_residual_score_and_every_pair_is_counted(board_texts):
    texts, kind = board_texts
    n_pairs = sum(1 for k in kind if not k["original"] and k["attack"] == "tef")
    for g in BLIND:
        trk, scores, ok, s = _scored(_maps(None, g, texts), kind)
        assert s["rob-racc-tef"].mean is None and s["rob-racc-tef"].excluded == n_pairs, g
        if g != "cos-of-both":  # raw PCC: perfectly robust by construction
            assert s["rob-acc-tef"].mean == pytest.approx(0.375)
        assert trk.summary_extra(scores, ok)["rpcc_undefined"]["tef"] == n_pairs


def test_the_profile_needs_a_second_text_of_the_same_length():
    """A length that no other original shares has no profile: its pairs are undefined (counted), for every
    submission alike — the residual of a lone text would be zero."""
    texts, kind = _texts(n_samples=4, lengths=(5, 6, 7, 8))
    _, scores, _, s = _scored(_maps("word-weight", None, texts), kind)
    assert s["rob-racc-tef"].mean is None
    prof = rm.position_profile([np.ones(3), np.full(3, 3.0), np.ones(4)])
    assert list(prof) == [3] and prof[3].tolist() == [2.0, 2.0, 2.0]
    assert math.isnan(rm.residual_pcc(np.ones(4), np.ones(4), {3: np.zeros(3)}))


def test_bad_maps_are_excluded_never_correlated():
    """Constant, all-NaN or infinite-at-one-position maps: the pair is undefined (an excluded, counted pair),
    never a correlation that NaN or ±inf distorts."""
    profile = {4: np.zeros(4)}
    good = np.array([0.3, -0.1, 0.8, 0.2])
    for bad in (np.full(4, 2.0), np.full(4, np.nan), np.array([0.3, np.inf, 0.8, 0.2]),
                np.array([0.3, -np.inf, 0.8, 0.2])):
        assert math.isnan(rm.residual_pcc(good, bad, profile))
        assert math.isnan(rm.residual_pcc(bad, good, profile))
        assert math.isnan(rm.pcc(good, bad))
    # a non-finite map is also kept out of the profile (it would poison every text of its length)
    prof = rm.position_profile([good, good * 2, np.array([np.nan, 0, 0, 0])])
    assert np.all(np.isfinite(prof[4]))


def _point(maps, kind) -> dict[str, float]:
    """Every metric's value on the whole set (no bootstrap: `estimate` with unit weights)."""
    trk = get_track("robustness")
    scores = trk.score(maps, {"kind": kind}, list(range(len(maps))))
    est = trk.estimate(scores, np.ones(len(maps), dtype=bool), np.ones((1, len(maps))))
    return {k: float(v[0]) for k, v in est.items()}


def _result(name, maps, kind, role="method"):
    trk, scores, ok, summary = _scored(maps, kind)
    r = make_result(name, track="robustness", resource="robustness/mr-cnn", primary="rob-racc-tef",
                    metrics=summary, n_instances=len(maps), role=role)
    r.instance_scores = pack_scores([(0, scores, ok)])
    r.extra = trk.summary_extra(scores, ok)
    return r


def test_the_class_never_ranks_above_its_faithful_part_and_a_blind_method_ranks_last(board_texts, monkeypatch):
    """One board holding every faithful part as a method, every member of the class (faithful part +
    input-independent component: 4 × 5) and every text-blind map submitted as a *method*. Without a
    control Result nothing is ranked (no floor); with one, no member ranks above its own faithful part,
    none is first unless its part is, and the blind methods rank after every map that reads the input."""
    import benchmark.tracks.robustness as tr

    monkeypatch.setattr(tr, "N_BOOT", 50)  # the Results' own intervals; the board draws its own 1,000
    texts, kind = board_texts
    results = [_result(f, _maps(f, None, texts), kind) for f in FAITHFUL]
    results += [_result(f"{f}+{g}", _maps(f, g, texts), kind) for f in FAITHFUL for g in BLIND]
    results += [_result(f"blind-{g}", _maps(None, g, texts), kind) for g in BLIND]
    # without a control Result the board has no floor: nothing is ranked, and it says why
    (bare,) = boards([r for r in results if "+" not in r.submission["name"]])
    assert all(row.rank is None for row in bare.rows) and "no control Result" in bare.unranked
    # with one (a random control: noise seeded by the text), the class is ranked by its faithful part
    noise = [_text_noise(t) for t in texts]
    (b,) = boards([*results, _result("random", noise, kind, role="control")])
    rank = {row.submission: row.rank for row in b.rows if row.role == "method"}
    first = {r.submission for r in b.rows if r.rank == 1}
    for f in FAITHFUL:
        for g in BLIND:
            assert rank[f"{f}+{g}"] >= rank[f], (f, g, rank)
            assert f"{f}+{g}" not in first or f in first, (f, g, first)
    worst_reader = max(rank[n] for n in rank if not n.startswith("blind-"))
    for g in BLIND:
        assert rank[f"blind-{g}"] > worst_reader, (g, rank)


def test_a_live_attacks_redraws_of_one_text_never_make_a_profile_by_themselves():
    """On the live board an original is re-explained several times (one `unit`): its draws are averaged
    into one text, so a length only that sample has still has no profile (the draws' noise is no signal)."""
    a = np.array([0.3, -0.1, 0.8, 0.2])
    draws = [a, a + 0.01, a - 0.02]
    assert rm.position_profile(draws, groups=["s", "s", "s"]) == {}
    prof = rm.position_profile([*draws, a * 3], groups=["s", "s", "s", "t"])
    assert np.allclose(prof[4], (np.mean(draws, axis=0) + a * 3) / 2)


class _WordSumModel:
    """p(class 1) = ½ + 0.01 + 0.05 · Σ max(weight, 0) of the words present (capped below 1): always class 1,
    and deleting a word of positive weight lowers it — a word's weight is exactly its importance."""

    @staticmethod
    def predict(texts):
        p = np.array([min(0.99, 0.51 + 0.05 * float(np.clip(TABLE[np.asarray(t, dtype=np.int64)], 0, None).sum()))
                      if len(t) else 0.51 for t in texts])
        return np.stack([1 - p, p], axis=1)


def test_comprehensiveness_is_checked_on_the_attacked_texts_and_the_gate_takes_the_worse(monkeypatch):
    """A map faithful on the originals but not on the attacked texts (there it ranks the words backwards)
    keeps the originals' comprehensiveness of a faithful map, and loses on the attacked texts' — the rank
    gate's metric `rob-faith-comp-worse` is the smaller of the two, per bootstrap draw too."""
    import benchmark.tracks.robustness as tr

    monkeypatch.setattr(tr, "N_BOOT", 50)
    texts, kind = _texts(n_samples=12)
    trk = get_track("robustness")
    truths = {"kind": kind, "texts": [list(t) for t in texts], "model": _WordSumModel}
    faithful = [TABLE[t] for t in texts]
    turncoat = [TABLE[t] if k["original"] else -TABLE[t] for t, k in zip(texts, kind)]
    est = {}
    for name, maps in (("faithful", faithful), ("turncoat", turncoat)):
        scores = trk.score(maps, truths, list(range(len(maps))))
        ok = np.ones(len(maps), dtype=bool)
        assert np.isfinite(scores["rob-faith-comp-attacked"][[not k["original"] for k in kind]]).all()
        assert np.isnan(scores["rob-faith-comp-attacked"][[k["original"] for k in kind]]).all()
        w = draw_weights(trk.units(scores, len(maps)), keep=ok, n_boot=20)
        draws = trk.estimate(scores, ok, w)
        assert np.allclose(draws["rob-faith-comp-worse"],
                           np.minimum(draws["rob-faith-comp"], draws["rob-faith-comp-attacked"]))
        est[name] = {k: float(v[0]) for k, v in trk.estimate(scores, ok, np.ones((1, len(maps)))).items()}
        summary = trk.summarise(scores, ok)["rob-faith-comp-worse"]
        assert summary.mean == pytest.approx(est[name]["rob-faith-comp-worse"]) and summary.ci95 is not None
    f, t = est["faithful"], est["turncoat"]
    assert f["rob-faith-comp"] == pytest.approx(t["rob-faith-comp"])  # the originals cannot tell them apart
    assert f["rob-faith-comp-attacked"] > 0.05 and t["rob-faith-comp-attacked"] < 0.01
    assert t["rob-faith-comp-worse"] == pytest.approx(t["rob-faith-comp-attacked"])
    assert t["rob-faith-comp-worse"] < f["rob-faith-comp-worse"]
    assert trk.summary_extra(scores, ok)["rank_gate"]["metric"] == "rob-faith-comp-worse"
