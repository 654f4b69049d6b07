"""The randomisation test on a board: whether a method's map depends on the model it explains.

Reference: J. Adebayo, J. Gilmer, M. Muelly, I. Goodfellow, M. Hardt, B. Kim, "Sanity Checks for Saliency
Maps", NeurIPS 2018 (https://arxiv.org/abs/1810.03292). A map that does not change when the model's weights
are re-drawn explains the data, not the model; a board that ranked it among the methods would tell the user
choosing an explainer for *their* model something false.

Pure functions over `benchmark.store.results.Result` objects. Every row of a board is judged with its own
randomised-model run (`benchmark.variant_runs.randomisation`: the same submission, parameters, instances and seeds run
on a randomised copy of the board's model, paired with exactly this Result's maps — its `trained_outputs_sha256`),
one of the row's companion runs (`leaderboard.companions`: from its own folder, or its own signed verification
record — never another file that bears its name). Both are resampled on the board's paired bootstrap draws
(`benchmark.bootstrap`, 1,000 draws of the track's units, seed 0):

* **similarity** — the mean over instances of the per-instance similarity of the two maps (`MEASURE`:
  Spearman's ρ of the signed maps; Adebayo's ρ of |map| and, for images, SSIM are shown beside it), with its
  95 % interval; instances where either run failed are left out and counted. A **constant map is judged, never
  skipped** (issue #58; `benchmark.variant_runs.similarity`'s per-instance record): a map constant on both models
  did not change with the model (similarity 1), a map constant on one model only did (similarity 0) — so an
  explainer cannot leave its test "not run" by answering with constant maps on most instances, and one whose maps
  are constant on most instances of both models is model-blind. A randomised run written before that record existed
  leaves them out, as it did;
* **score** — the primary metric on the randomised model against the same ground truth, and the paired
  difference Δ = trained − randomised, oriented so that + means the trained model's maps score better, with
  its 95 % interval.

The verdict (`Sanity.status`):

* **model-blind** — its maps on the randomised model are as similar to those on the trained model as the
  threshold allows (mean similarity ≥ `threshold`, default `THRESHOLD`), *or* its score on the randomised
  model is not worse beyond the noise (Δ's interval does not lie above 0). A model-blind method is shown with
  the controls — not ranked, the reason beside it — and its score sets a floor the methods must beat, like a
  blind prior's (`leaderboard.boards`);
* **model-sensitive** — neither: the maps change (similarity below the threshold) and get worse against the
  ground truth beyond the noise; on a track whose primary metric a randomised model's maps satisfy as well
  (`Track.randomisation_score_rule` False: the robustness board's stability under an attack) the maps'
  similarity alone decides;
* **not run** — with the reason (`Sanity.reason`). Where the reason lies outside the submission — the track
  does not apply the test, the model cannot be randomised, no randomised run was made (or it was paired with
  other maps: an older Result) — the row keeps its rank, marked. Where it lies in the submission's own run —
  it failed on most instances of the randomised model, or the randomised Result was changed after it was
  written — the row is not ranked (`Sanity.unranked`), and summaries count it as a loss on that board
  (`leaderboard.summaries`): otherwise failing on the randomised model would be a way around the rule.

Why `MEASURE` is the signed ρ and `THRESHOLD` 0.5: docs/leaderboard.md gives the built-ins' measured values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from benchmark.bootstrap import draw_seed_weights, draw_weights, metric_draws, percentile_interval
from benchmark.errors import XaibenchError
from benchmark.variant_runs.randomisation import CONSTANT_KEY, SIMILARITY_KEYS, randomisation_of
from benchmark.store.results import Result
from leaderboard import stats
from leaderboard.selection import newest_first, status_of

__all__ = ["MEASURE", "MIN_COMPARED", "STATUSES", "THRESHOLD", "Sanity", "judge", "pair"]

THRESHOLD = 0.5  # mean similarity (MEASURE) at or above which maps count as the same on both models
MEASURE = "spearman-signed"  # the similarity the threshold applies to (benchmark.variant_runs.similarity)
MIN_COMPARED = 0.5  # share of the board's instances whose two maps must be comparable
STATUSES = ("model-sensitive", "model-blind", "not run")


@dataclass
class Sanity:
    """One row's randomisation test (module docstring)."""

    status: str  # one of STATUSES
    reason: str
    unranked: bool = False  # "not run" because of the submission's own randomised run: shown, not ranked
    similarity: dict[str, tuple[float, tuple[float, float] | None]] | None = None  # measure -> (mean, 95% CI)
    compared: int = 0  # instances whose two maps were compared (constant ones judged: module docstring)
    constant: int = 0  # of those, the instances whose map is constant on both models (similarity 1)
    not_compared: dict[str, int] | None = None  # why the others were not (benchmark.variant_runs.similarity.CODES)
    score: float | None = None  # the primary metric on the randomised model
    diff: float | None = None  # trained − randomised, oriented (+ = the trained model's maps score better)
    diff_ci: tuple[float, float] | None = None
    seed: int | None = None  # the randomised copy's seed

    @property
    def blind(self) -> bool:
        """The method's maps do not depend on the model: it is shown with the controls."""
        return self.status == "model-blind"

    @property
    def mark(self) -> str:
        """A few words for the row: "model-blind", "randomisation test not run" or ""."""
        return {"model-blind": "model-blind", "not run": "randomisation test not run"}.get(self.status, "")

    def value(self, measure: str = MEASURE) -> float | None:
        """The mean similarity of `measure`, or None."""
        got = (self.similarity or {}).get(measure)
        return None if got is None else got[0]


def pair(trained: Result, randomised: Sequence[Result]) -> tuple[Result | None, str]:
    """Of `trained`'s own randomised-model runs (its companions), the one made for it (the same submission and
    code; paired with its maps; the newest, full randomisation), or (None, why there is none)."""
    same = [r for r in randomised if str(r.submission.get("name")) == str(trained.submission.get("name"))
            and str(r.submission.get("hash")) == str(trained.submission.get("hash"))
            and (randomisation_of(r) or {}).get("variant", "full") == "full"]
    if not same:
        return None, ("no randomised-model run of this Result: `xaibench evaluate` runs it after the trained model "
                      "(unless --no-randomisation)")
    digest = (trained.integrity or {}).get("outputs_sha256")
    matched = [r for r in same if (r.extra.get("randomisation") or {}).get("trained_outputs_sha256") == digest
               and digest]
    if not matched:
        return None, ("its randomised-model run was paired with other maps of this submission (an older Result); "
                      "run `xaibench evaluate` again")
    return newest_first(matched)[0], ""


def judge(track: Any, trained: Result, randomised: Result | None, why_none: str, primary: str, direction: str,
          threshold: float = THRESHOLD) -> Sanity:
    """The randomisation test of one row (module docstring). `track` is the board's `Track` (None when it is
    not installed here); `randomised` its paired randomised-model Result, or None with `why_none`."""
    if track is not None and not getattr(track, "randomisation_test", True):
        return Sanity("not run", f"the {track.name} track does not apply it: {track.randomisation_note}")
    unrandomisable = (trained.model or {}).get("unrandomisable")
    if isinstance(unrandomisable, str) and unrandomisable:
        return Sanity("not run", unrandomisable)
    if randomised is None and status_of(trained) == "self-reported":
        return Sanity("not run", "self-reported: its randomised-model run comes with a maintainer's re-run "
                      "(`xaibench results verify`)", unranked=True)
    if randomised is None:
        return Sanity("not run", why_none)
    seed = (randomisation_of(randomised) or {}).get("seed")
    if status_of(randomised) == "modified":
        return Sanity("not run", f"its randomised-model Result {getattr(randomised, 'path', '')} changed after it was "
                      "written", unranked=True, seed=seed)
    if track is None:
        return Sanity("not run", f"the track '{trained.track}' is not installed here, so the runs cannot be resampled",
                      seed=seed)
    try:
        s_t, s_r = trained.scores(), randomised.scores()
    except XaibenchError as exc:
        return Sanity("not run", f"its per-instance scores do not read ({exc})", seed=seed)
    if s_t is None or s_r is None or SIMILARITY_KEYS["spearman"] not in s_r.arrays:
        return Sanity("not run", "its Results carry no per-instance scores and similarities to pair (an older "
                      "xaibench); run `xaibench evaluate` again", seed=seed)
    if s_t.ok.shape != s_r.ok.shape:  # a randomised run over the first instances of the trained run only
        record = randomised.extra.get("randomisation") or {}
        if record.get("trained_ids_sha256") != (trained.coverage or {}).get("ids_sha256") \
                or s_r.ok.shape[0] != s_t.ok.shape[0] or s_r.ok.shape[1] > s_t.ok.shape[1]:
            return Sanity("not run", "its randomised-model run covers other instances than this Result; run "
                          "`xaibench evaluate` again", seed=seed)
        k = s_r.ok.shape[1]
        s_t = type(s_t)(s_t.seeds, s_t.ok[:, :k], {a: v[:, :k] for a, v in s_t.arrays.items()})
    n = randomised.n_instances  # the first n of the trained run's (`randomisation_limit`), or all of them
    weights = draw_weights(track.units(s_t.seed(0)[0], n))
    seed_w = draw_seed_weights(len(s_t.seeds))
    runs_t = [s_t.seed(k) for k in range(len(s_t.seeds))]
    runs_r = [s_r.seed(k) for k in range(len(s_r.seeds))]
    d_t = metric_draws(track, runs_t, weights, seed_w).get(primary)
    d_r = metric_draws(track, runs_r, weights, draw_seed_weights(len(runs_r))).get(primary)
    p_t, p_r = _point_of(track, runs_t, primary), _point(randomised, primary)
    sep = stats.compare(d_r, d_t, p_r, p_t, direction) if d_t is not None and d_r is not None else \
        stats.Separation(None, None, False)
    sims, compared, constant = _similarity(s_r, weights)
    record = (randomised.extra.get("randomisation") or {}).get("not_compared") or {}
    out = Sanity("not run", "", similarity=sims, compared=compared, constant=constant,
                 not_compared={str(k): int(v) for k, v in record.items() if isinstance(v, int)},
                 score=p_r, diff=sep.diff, diff_ci=sep.ci, seed=seed)
    value = out.value()
    enough = value is not None and compared >= MIN_COMPARED * n
    similar = enough and value is not None and value >= threshold
    score_rule = track is None or getattr(track, "randomisation_score_rule", True)  # not where it says nothing
    not_worse = score_rule and sep.ci is not None and not sep.better
    if similar or not_worse:
        why = ([f"its maps on the randomised model are as similar as the threshold allows (mean ρ {value:.3f} ≥ "
                f"{threshold:g} over {compared} instances"
                + (f", {constant} of them constant on both models" if constant else "") + ")"] if similar else []) + \
              ([f"its {primary} there is not worse beyond the noise (Δ trained − randomised {_g(sep.diff)}, 95% CI "
                f"[{_g(sep.ci[0])}, {_g(sep.ci[1])}], + = the trained model's maps better)"]
               if not_worse and sep.ci is not None else [])
        out.status, out.reason = "model-blind", "; and ".join(why)
        return out
    if not enough:
        out.reason = _why_not_compared(out.not_compared or {}, compared, n, randomised,
                                       CONSTANT_KEY not in s_r.arrays)
        out.unranked = True
        return out
    if not score_rule:
        assert value is not None
        out.status, out.reason = "model-sensitive", (
            f"its maps change (mean ρ {value:.3f} < {threshold:g}); the score criterion is not this track's: "
            f"{getattr(track, 'randomisation_score_note', '')}")
        return out
    if sep.ci is None:
        out.reason = f"its {primary} on the randomised model is undefined in most draws"
        out.unranked = True
        return out
    assert value is not None
    out.status, out.reason = "model-sensitive", (
        f"its maps change (mean ρ {value:.3f} < {threshold:g}) and score worse on the randomised model "
        f"(Δ {primary} {_g(sep.diff)}, 95% CI [{_g(sep.ci[0])}, {_g(sep.ci[1])}])")
    return out


def _g(x: float | None) -> str:
    """x as "+0.1234" (four significant digits; −0 shown as +0)."""
    return "undefined" if x is None else f"{x + 0.0:+.4g}"


def _point_of(track: Any, runs: list, metric: str) -> float | None:
    """The metric's value over the (possibly first-k) instances the runs hold: the mean of its seed runs'
    estimates under unit weights (the Result's own mean when they are all its instances)."""
    estimates = [track.estimate(sc, ok, np.ones((1, len(ok)))) for sc, ok in runs]
    good = [float(e[metric][0]) for e in estimates if metric in e and np.isfinite(e[metric][0])]
    return float(np.mean(good)) if good else None


def _point(r: Result, metric: str) -> float | None:
    m = r.metrics.get(metric)
    return None if m is None else m.mean


def _similarity(s_r: Any, weights: np.ndarray
                ) -> tuple[dict[str, tuple[float, tuple[float, float] | None]], int, int]:
    """Each measure's mean over instances (over the seed runs, per instance) with its interval on the draws, the
    number of instances compared on the verdict's measure, and how many of those are constant on both models. A
    constant map is judged (module docstring): 1 where it is constant on both models, 0 where on one only."""
    out: dict[str, tuple[float, tuple[float, float] | None]] = {}
    compared = 0
    const = s_r.arrays.get(CONSTANT_KEY)
    both = 0
    if const is not None:
        both = int(np.all(const == 3, axis=0).sum())
    for measure, key in SIMILARITY_KEYS.items():
        a = s_r.arrays.get(key)
        if a is None:
            continue
        if const is not None and const.shape == a.shape:
            a = np.where(const == 3, 1.0, np.where((const == 1) | (const == 2), 0.0, a))
        finite = np.isfinite(a)
        count = finite.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            v = np.where(count > 0, np.where(finite, a, 0.0).sum(axis=0) / np.maximum(count, 1), np.nan)
        good = np.isfinite(v)
        if measure == MEASURE:
            compared = int(good.sum())
        if not good.any():
            continue
        w = weights[:, good]
        den = w.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = np.where(den > 0, (w @ v[good]) / np.where(den > 0, den, 1.0), np.nan)
        out[measure] = (float(v[good].mean()), percentile_interval(draws[np.isfinite(draws)]))
    return out, compared, both


def _why_not_compared(counts: dict[str, int], compared: int, n: int, randomised: Result, older: bool = False) -> str:
    """Why too few instances could be compared: the randomised Result's own record and its first failure (`older`:
    a run written before constant maps were recorded, which leaves them out)."""
    parts = [f"{k} {v}" for k, v in sorted(counts.items())]
    failed = [f.reason for f in randomised.failures][:1]
    text = f"only {compared} of {n} instances have two comparable maps"
    if parts:
        text += f" ({', '.join(parts)})"
    if failed:
        text += f"; on the randomised model it failed {randomised.n_failed} time(s), e.g. {failed[0][:120]!r}"
    if older and any(k.startswith("constant") for k in counts):
        text += ("; its randomised run was written before constant maps were judged: run `xaibench evaluate` again "
                 "and they count")
    return text

