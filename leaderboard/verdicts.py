"""Gates and verdicts: which methods a board may rank first, and whether the board says anything at all.

* A ranking gate (`TrackMetadata.rank_gate = {"metric", "min", "beat_controls"}`, declared by a track
  such as robustness — never read from a Result, whose file a contributor writes): methods whose gate
  metric is below `min`, or (with `beat_controls`) not significantly better than the best control's — the best
  trusted control's for a trusted row —, are ranked after every method that passes it (`gate_of`, `below_gate`).
* The verdict (`Board.verdict`): the board *discriminates* when its best method beats its best
  control on the primary metric by the paired bootstrap at 95 %; otherwise "does not discriminate"
  or "undefined", each with the reason (`verdict`). On a board whose gate asks methods to beat the
  controls, a control that never reads the input can win the primary metric for free; there the board
  discriminates when the best method passing the gate beats the best control on the gate metric, and
  the verdict says both comparisons (`gated_verdict`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmark.store.results import Result
from leaderboard import stats
from leaderboard.ranks import Paired

__all__ = ["Verdict", "below_gate", "gate_of", "gated_verdict", "verdict"]


@dataclass
class Verdict:
    """Whether a board discriminates: its best method beats its best control beyond the noise."""

    status: str  # "discriminates" | "does not discriminate" | "undefined"
    reason: str
    best: str | None = None  # the best method
    control: str | None = None  # the best control
    diff: float | None = None  # best − control on the primary metric, oriented (positive = better)
    ci: tuple[float, float] | None = None  # its 95 % paired-bootstrap interval

    @property
    def discriminates(self) -> bool:
        """The best method beats the best control beyond the noise (status "discriminates")."""
        return self.status == "discriminates"

    @property
    def text(self) -> str:
        """The verdict in one line: "<status>: <reason>"."""
        return f"{self.status}: {self.reason}"


def gate_of(track: str, names: list[str]) -> dict | None:
    """The ranking gate the track declares (`TrackMetadata.rank_gate`), when it names a board metric; None
    for a track without one or not installed here."""
    from benchmark.errors import XaibenchError
    from benchmark.tracks import get_track

    try:
        g = get_track(track).metadata.rank_gate
    except XaibenchError:
        return None
    if isinstance(g, dict) and g.get("metric") in names:
        low = g.get("min")
        return {"metric": str(g["metric"]),
                "min": float(low) if isinstance(low, (int, float)) and not isinstance(low, bool) else None,
                "beat_controls": bool(g.get("beat_controls", False))}
    return None


def below_gate(gate: dict | None, chosen: list[Result], methods: list[int], controls: list[int],
               p: Paired, trusted: list[bool] | None = None) -> list[str]:
    """Per row, why the method is below the gate ("" = it passes, or there is no gate). With `trusted` (per row:
    signed here or verified), a trusted method is held against the trusted controls only: a file nothing vouches
    for never gates a row that is vouched for."""
    below = [""] * len(chosen)
    if not gate:
        return below
    gm, gdir = gate["metric"], p.directions[gate["metric"]]
    vouched = [c for c in controls if trusted is None or trusted[c]]
    for i in methods:
        best_control = _best(vouched if trusted is not None and trusted[i] else controls, p.points[gm], gdir)
        v = p.points[gm][i]
        if v is None:
            below[i] = f"no {gm} value"
        elif gate["min"] is not None and stats.oriented(np.array([v - gate["min"]]), gdir)[0] < 0:
            below[i] = f"{gm} {v:.4g} below the floor {gate['min']:.4g}"
        elif gate["beat_controls"] and best_control is not None and not p.better(best_control, i, gm).better:
            below[i] = f"{gm} not better than the control {chosen[best_control].submission['name']}'s"
    return below


def _best(rows: list[int], values: list[float | None], direction: str) -> int | None:
    """The row of `rows` with the best value (None when no row has one); ties: the first."""
    valued = [i for i in rows if values[i] is not None]
    if not valued:
        return None
    key = stats.oriented(np.array([values[i] for i in valued], dtype=np.float64), direction)
    return valued[int(np.argmax(key))]


def gated_verdict(plain: Verdict, chosen: list[Result], methods: list[int], controls: list[int],
                  ranks: list[int | None], below: list[str], p: Paired, gm: str, primary: str) -> Verdict:
    """The verdict of a board whose gate asks methods to beat the controls on `gm` (robustness: ERASER
    comprehensiveness), when a control wins on the primary metric: a text-blind control is robust by
    construction, so the question is whether the methods that pass the gate separate from the controls
    on `gm` — then the board discriminates, and the reason says the control's primary score is free."""
    passing = [i for i in methods if not below[i] and ranks[i] is not None]
    control = _best(controls, p.points[gm], p.directions[gm])
    best = _best(passing, p.points[gm], p.directions[gm])
    if best is None or control is None:
        return Verdict(plain.status, plain.reason + f"; no method passes the {gm} gate", plain.best, plain.control,
                       plain.diff, plain.ci)
    sep = p.better(control, best, gm)
    name_b, name_c = str(chosen[best].submission["name"]), str(chosen[control].submission["name"])
    if not sep.better or sep.ci is None:
        return plain
    return Verdict("discriminates",
                   f"on the gate metric {_contrast(name_b, name_c, gm, sep.diff, sep.ci)}; on the primary metric a "
                   "control scores higher "
                   f"({_contrast(plain.best, plain.control, primary, plain.diff, plain.ci)}) — it "
                   "never reads the input, so its score there is free, and only methods that pass the gate are ranked "
                   "first", name_b, name_c, sep.diff, sep.ci)


def _contrast(best: str | None, control: str | None, metric: str, diff: float | None,
              ci: tuple[float, float] | None) -> str:
    """'best vs the control c: Δ metric = d, 95% CI [lo, hi] (paired bootstrap, oriented so + is better)'."""
    if diff is None or ci is None:
        return f"{best} vs the control {control}: Δ {metric} undefined"
    return (f"{best} vs the control {control}: Δ {metric} = {diff:+.4g}, 95% CI [{ci[0]:+.4g}, {ci[1]:+.4g}] "
            "(paired bootstrap, oriented so + is better)")


def verdict(chosen: list[Result], methods: list[int], controls: list[int], ranks: list[int | None], p: Paired,
            primary: str) -> Verdict:
    """Whether the board discriminates: its best method (by rank, then value) against its best control on
    the primary metric, by the paired bootstrap; "undefined" with the reason where that cannot be asked."""
    values, direction = p.points[primary], p.directions[primary]
    if not methods:
        return Verdict("undefined", "no method on this board (only controls or references)")
    if len(chosen) < 2:
        return Verdict("undefined", "only one submission on this board: nothing to compare")
    if not controls:
        return Verdict("undefined", "no control evaluated on this board (e.g. `xaibench evaluate random` or "
                       "`uniform`), so nothing says what chance scores here")
    top = [i for i in methods if ranks[i] is not None and values[i] is not None]
    if not top:
        return Verdict("undefined", f"no method has a {primary} value")
    best = min(top, key=lambda i: (ranks[i], -float(stats.oriented(np.array([values[i]]), direction)[0])))
    control = _best(controls, values, direction)
    if control is None:
        return Verdict("undefined", f"no control has a {primary} value")
    name_b, name_c = str(chosen[best].submission["name"]), str(chosen[control].submission["name"])
    if p.why:
        return Verdict("undefined", f"no paired bootstrap: {p.why}", name_b, name_c)
    sep = p.better(control, best, primary)
    if sep.ci is None:
        return Verdict("undefined", f"the difference between {name_b} and {name_c} is undefined in most draws",
                       name_b, name_c, sep.diff)
    words = _contrast(name_b, name_c, primary, sep.diff, sep.ci)
    if sep.better:
        return Verdict("discriminates", words, name_b, name_c, sep.diff, sep.ci)
    return Verdict("does not discriminate", words + "; its ranks are not used in the summaries",
                   name_b, name_c, sep.diff, sep.ci)
