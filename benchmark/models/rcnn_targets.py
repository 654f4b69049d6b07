"""Does a trained RCNN behave like Lei et al.'s (2016)? The targets every `rcnn/beer-<aspect>` build is
checked against before it is published (issue #29; DESIGN §8 "a build outside its target refuses to
publish").

Targets (appearance, Lei et al. 2016 §5 and the README of taolei87/rcnn; the same bounds for every aspect):

* **selection rate** — the share of the dev reviews' tokens the deterministic generator keeps,
  Σ_x |S_x| / Σ_x |x| over the dev split: 10 % ≤ rate ≤ 13 % (Lei's models keep about a tenth of the
  words; a model far below has collapsed towards ∅ and leaves few verifiable reviews, one far above
  keeps whole reviews and its N tokens are few);
* **rationale precision** — Σ|S_x ∩ R_x| / Σ|S_x| over the 994 human-annotated reviews of McAuley et al.
  (Lei's `prec2`, `generators.rcnn.train.rationale_precision`): ≥ 90 % (Lei ≈ 96 % on appearance). The
  recall Σ|S_x ∩ R_x| / Σ|R_x| is reported, not checked (a rationale is meant to be short).

The annotated reviews are the test set of this check only: no choice of the build (epoch, seed) reads
them (the build chooses its epoch and seed on the dev split only).

`check(...)` returns the record a build stores in its card (`stats["selection"]`, `stats["quality"]`;
`generators.rcnn.build`) and the track copies into every Result's model info (`benchmark.tracks.rcnn`):

    selection = {"dev_selection_rate", "annotated_selection_rate", "precision", "precision_macro",
                 "recall", "n_annotated", "targets": {"selection_rate": [lo, hi], "precision": p_min},
                 "failed": [names of the failed checks], "meets_targets": bool}
    quality   = {"metric", "value", "floor", "meets_floor", "message"}     (the AIXI floor's keys:
                 the first failed check, else the precision; `message` says it in a sentence)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Targets:
    """The bounds a trained RCNN must meet (module docstring): dev selection rate in
    [selection_min, selection_max] (default 10–13 %) and rationale precision ≥ precision_min (default 90 %)."""

    selection_min: float = 0.10
    selection_max: float = 0.13
    precision_min: float = 0.90

    def as_dict(self) -> dict[str, Any]:
        """The record's `targets`: {"selection_rate": [lo, hi], "precision": p_min}."""
        return {"selection_rate": [self.selection_min, self.selection_max], "precision": self.precision_min}


TARGETS = Targets()


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def check(dev_selection_rate: float | None, rationales: dict[str, Any] | None,
          targets: Targets = TARGETS) -> tuple[dict[str, Any], dict[str, Any]]:
    """(selection, quality) of a model (module docstring). A figure that cannot be measured (no dev split,
    no annotations) fails its check: a build cannot show that it meets the targets without it."""
    sel = _finite(dev_selection_rate)
    r = rationales or {}
    prec = _finite(r.get("precision"))
    failed, lines = [], []
    if sel is None:
        failed.append("dev selection rate")
        lines.append("the dev selection rate was not measured")
    elif not targets.selection_min <= sel <= targets.selection_max:
        failed.append("dev selection rate")
        lines.append(f"it selects {100 * sel:.1f} % of the dev tokens (target "
                     f"{100 * targets.selection_min:.0f}–{100 * targets.selection_max:.0f} %)")
    if prec is None:
        failed.append("rationale precision")
        lines.append("its precision against the human rationales was not measured (no annotations.json)")
    elif prec < targets.precision_min:
        failed.append("rationale precision")
        lines.append(f"its precision against the human rationales is {100 * prec:.1f} % "
                     f"(target ≥ {100 * targets.precision_min:.0f} %)")
    selection = {"dev_selection_rate": sel, "annotated_selection_rate": _finite(r.get("selection_rate")),
                 "precision": prec, "precision_macro": _finite(r.get("precision_macro")),
                 "recall": _finite(r.get("recall")), "n_annotated": r.get("n"),
                 "targets": targets.as_dict(), "failed": failed, "meets_targets": not failed}
    if not failed or failed[0] == "rationale precision":
        metric, value, floor = "rationale precision", prec, targets.precision_min
    else:
        high = sel is not None and sel > targets.selection_max
        metric = "dev selection rate" + (" (ceiling)" if high else "")
        value, floor = sel, targets.selection_max if high else targets.selection_min
    message = ("the RCNN meets Lei et al.'s behaviour: " + describe(selection) if not failed else
               "the RCNN does not behave like Lei et al.'s: " + "; ".join(lines))
    quality = {"metric": metric, "value": value, "floor": floor, "meets_floor": not failed, "message": message}
    return selection, quality


def describe(selection: dict[str, Any]) -> str:
    """One line: selection rate, precision and recall with their targets."""
    t = selection["targets"]

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f} %"

    return (f"{pct(selection['dev_selection_rate'])} of the dev tokens selected (target "
            f"{100 * t['selection_rate'][0]:.0f}–{100 * t['selection_rate'][1]:.0f} %), precision "
            f"{pct(selection['precision'])} (target ≥ {100 * t['precision']:.0f} %) and recall "
            f"{pct(selection['recall'])} against the {selection['n_annotated'] or 0} human rationales")
