"""Pictures of a board, rendered with matplotlib while the site is built.

A per-track registry: `@register_figures("aixi")` adds a function `fn(ctx) -> list[Figure]` that draws
the pictures of one board (`FigureContext`: the board, its ranked results, where to write). The trust
track (confusion matrices) and the robustness track (PCC-vs-ρ curves) add theirs the same way; a track
without a function gets no pictures and the page says nothing is drawn for it.

Rules every figure function follows:
* it never raises for missing input: a resource that is not here, a resource at another revision than
  the board's, a cache that is gone or lacks an output → a `Figure` with `path=None` and a `note`
  saying why (the page prints the note where the picture would be);
* it draws only what the Result was scored on: the resource at the board's revision, the outputs in
  the run's own cache (`Result.extra["cache"]`), the first `ctx.sample` instances of the coverage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:
    from benchmark.store.results import Result
    from leaderboard.boards import Board

__all__ = ["Figure", "FigureContext", "FIGURES", "register_figures", "figures_for"]


@dataclass
class Figure:
    """One picture of a board (or why it could not be drawn), as the page shows it."""

    title: str
    path: str | None  # relative to the site root; None when it could not be drawn
    note: str = ""  # caption, or why it is not drawn
    submission: str = ""  # the row it belongs to ("" for a board-wide figure)


@dataclass
class FigureContext:
    """What a figure function draws from: the board, its ranked results, where to write and how many
    instances to draw."""

    board: Board  # tests of a figure function that never reads it pass None
    results: dict[str, Result]  # submission display name -> its ranked Result on the board
    site: Path  # the site root
    prefix: str  # file-name prefix for this board's images, e.g. "img/aixi__shape-ssin__cnn"
    sample: int = 4
    # shared per board: (resource, split, limit) -> (resource, instances), or why they are not available
    _cache: dict[tuple[str, str, int | None], tuple[Any, Any] | str] = field(default_factory=dict)

    def image_path(self, name: str) -> tuple[Path, str]:
        """(absolute path, path relative to the site root) of this board's picture `name` (a PNG)."""
        rel = f"{self.prefix}__{_safe(name)}.png"
        return self.site / rel, rel


FigureFn = Callable[[FigureContext], list[Figure]]
FIGURES: dict[str, FigureFn] = {}


def register_figures(track: str) -> Callable[[FigureFn], FigureFn]:
    """Register the figure function of `track` (one per track; a second registration is refused)."""

    def wrap(fn: FigureFn) -> FigureFn:
        if track in FIGURES and FIGURES[track] is not fn:
            raise ValueError(f"figures for track '{track}' are already registered ({FIGURES[track].__name__})")
        FIGURES[track] = fn
        return fn

    return wrap


def figures_for(ctx: FigureContext) -> list[Figure]:
    """The board's figures; a function that fails is reported as one note, never a failed build."""
    fn = FIGURES.get(ctx.board.track)
    if fn is None:
        return []
    try:
        return fn(ctx)
    except Exception as exc:  # a picture is never worth a failed build
        return [Figure("pictures", None, f"pictures not drawn: {type(exc).__name__}: {exc}")]


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80]


# --------------------------------------------------------------------------------------------------
# shared: the board's instances and a run's cached outputs


class _Unavailable(Exception):
    pass


def _instances(ctx: FigureContext, result) -> tuple[Any, Any]:
    """(resource, instances) the result was scored on, at the board's revision; `_Unavailable` else."""
    key = (str(result.resource["name"]), str(result.resource.get("split")), (result.coverage or {}).get("limit"))
    if key in ctx._cache:
        got = ctx._cache[key]
        if isinstance(got, str):
            raise _Unavailable(got)
        return got
    from benchmark.errors import XaibenchError
    from benchmark.resources import load_resource
    from benchmark.store.results import ids_digest
    from benchmark.tracks import get_track

    try:
        try:
            res = load_resource(key[0], hub=False, revision=ctx.board.revision)
        except XaibenchError as exc:
            raise _Unavailable(f"resource {key[0]} is not here at the board's revision "
                               f"{ctx.board.revision[:12]} ({exc})") from None
        inst = get_track(result.track).instances(res, key[1], key[2])
        digest = (result.coverage or {}).get("ids_sha256")
        if digest and ids_digest(inst.ids) != digest:
            raise _Unavailable(f"resource {res.name} no longer gives the instances the results cover")
        ctx._cache[key] = (res, inst)
        return res, inst
    except _Unavailable as exc:
        ctx._cache[key] = str(exc)
        raise
    except (XaibenchError, OSError, KeyError, ValueError) as exc:
        why = f"resource {key[0]} is not available here ({exc})"
        ctx._cache[key] = why
        raise _Unavailable(why) from None


def _outputs(result, ids: list[str]) -> dict[str, Any]:
    """The run's cached outputs of `ids` (read-only); `_Unavailable` when the cache is not here."""
    from benchmark.errors import XaibenchError
    from benchmark.resources import data_home
    from benchmark.store.cache import read_only

    rel = (result.extra or {}).get("cache")
    if not rel:
        raise _Unavailable("the result names no cache (written by an older xaibench)")
    try:
        return read_only(data_home() / rel, ids)
    except XaibenchError as exc:
        raise _Unavailable(str(exc)) from None


def _save(ctx: FigureContext, fig, name: str) -> str:
    """Lay out `fig`, write it as the board's image `name` (80 dpi), close it; its path relative to the site."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path, rel = ctx.image_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return rel


def _sample_ids(inst, ctx: FigureContext) -> list[int]:
    return list(range(min(ctx.sample, len(inst.ids))))


def _per_submission(ctx: FigureContext, draw: Callable[..., Any], what: str) -> list[Figure]:
    """One picture per ranked submission: `draw(res, inst, positions, entries, name, state)` returns the
    matplotlib figure (it may keep one figure in `state` and only update it, which is much cheaper)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[Figure] = []
    states: dict[int, dict] = {}  # one drawing state per instance set (id of the Instances object)
    try:
        for name, result in ctx.results.items():
            try:
                res, inst = _instances(ctx, result)
                pos = _sample_ids(inst, ctx)
                if not pos:
                    raise _Unavailable("the board covers no instances")
                entries = _outputs(result, [inst.ids[p] for p in pos])
                path, rel = ctx.image_path(name)
                path.parent.mkdir(parents=True, exist_ok=True)
                fig = draw(res, inst, pos, entries, name, states.setdefault(id(inst), {}))
                fig.savefig(path, dpi=80)
                if fig not in [st.get("fig") for st in states.values()]:
                    plt.close(fig)
                out.append(Figure(f"{name}: {what}", rel, f"first {len(pos)} instances of the board", name))
            except _Unavailable as exc:
                out.append(Figure(f"{name}: {what}", None, f"picture not drawn: {exc}", name))
    finally:
        for st in states.values():
            if st.get("fig") is not None:
                plt.close(st["fig"])
    return out


# --------------------------------------------------------------------------------------------------
# AIXI: image, true map, explanation


@register_figures("aixi")
def aixi_gallery(ctx: FigureContext) -> list[Figure]:
    """Per submission: for each sampled instance, the image, the true map and the explanation."""
    import matplotlib.pyplot as plt

    def draw(res, inst, pos, entries, name, state):
        # the image and true-map columns are the same for every submission: drawn once, then only
        # the explanation column's data changes
        if "fig" not in state:
            fig, axes = plt.subplots(len(pos), 3, figsize=(4.8, 1.65 * len(pos)), squeeze=False)
            shown, notes = [], []
            for row, p in enumerate(pos):
                ident = inst.ids[p]
                img = np.asarray(inst.inputs[p], dtype=np.float32)
                gt = np.asarray(inst.truths["gt"][p], dtype=np.float32)
                ax = axes[row]
                ax[0].imshow(img, cmap="gray" if img.ndim == 2 else None)
                if gt.min() < 0:  # a signed map (e.g. SSIN): the explanation's diverging colours
                    glim = float(np.max(np.abs(gt))) or 1.0
                    ax[1].imshow(gt, cmap="RdBu_r", vmin=-glim, vmax=glim)
                else:
                    ax[1].imshow(gt, cmap="magma")
                shown.append(ax[2].imshow(np.zeros(gt.shape[:2], dtype=np.float32), cmap="RdBu_r", vmin=-1, vmax=1))
                notes.append(ax[2].text(0.5, 0.5, "", ha="center", va="center", fontsize=6,
                                        transform=ax[2].transAxes))
                for a_, t in zip(ax, ("image", "true map", "explanation")):
                    a_.set_xticks([])
                    a_.set_yticks([])
                    if row == 0:
                        a_.set_title(t, fontsize=8)
                ax[0].set_ylabel(ident if len(ident) <= 16 else "…" + ident[-14:], fontsize=6)
            fig.tight_layout(pad=0.3)
            state.update(fig=fig, shown=shown, notes=notes)
        for row, p in enumerate(pos):
            e = entries.get(inst.ids[p])
            im, note = state["shown"][row], state["notes"][row]
            if e is not None and e.ok:
                a = np.asarray(e.array, dtype=np.float32)
                lim = float(np.max(np.abs(a))) or 1.0
                im.set_data(a)
                im.set_clim(-lim, lim)
                im.set_visible(True)
                note.set_text("")
            else:
                im.set_visible(False)
                why = "not in the cache" if e is None else f"failed: {e.reason}"
                note.set_text("\n".join(_wrap(why, 22)[:4]))
        return state["fig"]

    return _per_submission(ctx, draw, "image · true map · explanation")


# --------------------------------------------------------------------------------------------------
# text: tokens shaded by attribution, ground-truth tokens marked


def _wrap(text: str, width: int) -> list[str]:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return lines + ([cur] if cur else [])


def _text_heatmap(ctx: FigureContext, truth_of: Callable[[Any, int], np.ndarray], legend: str,
                  max_tokens: int = 60) -> list[Figure]:
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    cmap = colormaps["RdBu_r"]
    per_line = 72  # characters of monospace text per line
    size = 9  # points; a monospace character is about 0.6 em wide
    char_in = size / 72 * 0.6
    width_in = (per_line + 3) * char_in

    def draw(res, inst, pos, entries, name, state):
        docs = []
        for p in pos:
            toks = [str(t) for t in inst.inputs[p]][:max_tokens]
            e = entries.get(inst.ids[p])
            attr = None if e is None or not e.ok else np.asarray(e.array, dtype=np.float64)[: len(toks)]
            marked = np.asarray(truth_of(inst, p), dtype=bool)[: len(toks)]
            lines, line, col = [], [], 0
            for k, t in enumerate(toks):
                if col and col + len(t) + 1 > per_line:
                    lines.append(line)
                    line, col = [], 0
                line.append((k, t, col))
                col += len(t) + 1
            lines.append(line)
            docs.append((inst.ids[p], toks, attr, marked, lines, e))
        n_lines = sum(len(d[4]) + 2 for d in docs)
        line_in = size / 72 * 1.9
        height_in = line_in * (n_lines + 1.5)
        fig = plt.figure(figsize=(width_in, height_in))
        y, dy, cw = 1.0, line_in / height_in, char_in / width_in
        for ident, _toks, attr, marked, lines, e in docs:
            head = f"{ident}" + ("" if attr is not None else
                                 ("  (not in the cache)" if e is None else f"  (failed: {e.reason[:60]})"))
            y -= dy
            fig.text(0.01, y, head, fontsize=size - 1, family="monospace", weight="bold", va="top")
            lim = float(np.max(np.abs(attr))) if attr is not None and attr.size else 0.0
            for line in lines:
                y -= dy
                for k, t, col in line:
                    level = 0.0 if attr is None or lim == 0 else float(attr[k]) / lim
                    color = cmap(0.5 + 0.5 * level)
                    fig.text(0.01 + col * cw, y, t, fontsize=size, family="monospace", va="top",
                             color="white" if abs(level) > 0.6 else "black",
                             weight="bold" if marked[k] else "normal",
                             bbox={"boxstyle": "square,pad=0.1", "facecolor": color,
                                   "edgecolor": "black" if marked[k] else "none", "linewidth": 0.6})
            y -= dy
        fig.text(0.01, 0.3 * dy, legend + "; red = supports the explained output, blue = against", fontsize=size - 2)
        return fig

    return _per_submission(ctx, draw, "tokens shaded by attribution")


@register_figures("idc")
def idc_heatmaps(ctx: FigureContext) -> list[Figure]:
    """Per submission: sampled documents, tokens shaded by attribution, PGT words boxed and bold."""
    return _text_heatmap(ctx, lambda inst, p: inst.truths["gt"][p], "boxed bold = pseudo ground-truth word")


@register_figures("rcnn")
def rcnn_heatmaps(ctx: FigureContext) -> list[Figure]:
    """Per submission: sampled reviews, tokens shaded by attribution, clearly relevant (SR) tokens boxed."""
    from benchmark.metrics.zero_contribution import SR

    return _text_heatmap(ctx, lambda inst, p: np.asarray(inst.truths["partition"][p]) == SR,
                         "boxed bold = clearly relevant (SR) token; others: SDK or zero contribution (N)")


@register_figures("trust")
def trust_confusion(ctx: FigureContext) -> list[Figure]:
    """Per oracle: its pooled confusion table (trustworthy = positive) from the Result's
    `extra.confusion`, as a 2×2 heat map with the counts written in."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[Figure] = []
    for name, result in ctx.results.items():
        c = (getattr(result, "extra", None) or {}).get("confusion")
        if not isinstance(c, dict) or not all(isinstance(c.get(k), int) for k in ("tp", "fp", "fn", "tn")):
            out.append(Figure(f"{name}: confusion matrix", None, "picture not drawn: the result records no "
                              "confusion table (written by an older xaibench)", name))
            continue
        table = np.array([[c["tp"], c["fp"]], [c["fn"], c["tn"]]])
        fig, ax = plt.subplots(figsize=(2.8, 2.5))
        ax.imshow(table, cmap="Blues", vmin=0, vmax=max(1, int(table.max())))
        for (i, j), v in np.ndenumerate(table):
            ax.text(j, i, str(v), ha="center", va="center", color="white" if v > table.max() / 2 else "black")
        ax.set_xticks([0, 1], ["truth\ntrustworthy", "truth\nuntrustw."], fontsize=8)
        ax.set_yticks([0, 1], ["judged\ntrustworthy", "judged\nuntrustw."], fontsize=8)
        ax.set_title(name[:40], fontsize=9)
        rel = _save(ctx, fig, name)
        n = int(table.sum())
        out.append(Figure(f"{name}: confusion matrix", rel, f"{n} judged predictions, trustworthy = positive", name))
    return out


@register_figures("robustness-live")
@register_figures("robustness")
def robustness_figures(ctx: FigureContext) -> list[Figure]:
    """The robustness boards' two pictures: the PCC-vs-ρ curves and robustness against faithfulness."""
    return [*robustness_curves(ctx), *robustness_vs_faithfulness(ctx)]


def robustness_curves(ctx: FigureContext) -> list[Figure]:
    """One board-wide plot: each explainer's mean PCC between original and attacked attributions against
    the realised perturbation ratio ρ (Result `extra.curves`; TEF solid, RA dashed) — the curve whose
    area is ACC (a dotted line: the value carried over empty upper bins)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn, missing = 0, []
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, result) in enumerate(ctx.results.items()):
        curves = (getattr(result, "extra", None) or {}).get("curves")
        if not isinstance(curves, dict):
            missing.append(name)
            continue
        for attack, style in (("tef", "-"), ("ra", "--")):
            c = curves.get(attack) or {}
            pts = [(x, y) for x, y in zip(c.get("centre", []), c.get("mean", [])) if finite(y)]
            if not pts:
                continue
            x, y = zip(*[(0.0, 1.0), *pts])  # the (0, 1) anchor of ACC
            colour = colours[k % len(colours)]
            ax.plot(x, y, style, color=colour, marker="o", markersize=3, label=f"{name[:28]} ({attack.upper()})")
            last = (c.get("centre") or [x[-1]])[-1]
            if x[-1] < last:
                ax.plot([x[-1], last], [y[-1], y[-1]], ":", color=colour, lw=1)
            drawn += 1
    if not drawn:
        plt.close(fig)
        why = f"no result records its curves (written by an older xaibench): {', '.join(missing)}" if missing \
            else "no attacked text was scored"
        return [Figure("PCC vs ρ", None, f"picture not drawn: {why}")]
    ax.set_xlabel("realised perturbation ratio ρ")
    ax.set_ylabel("mean PCC (original vs attacked)")
    ax.set_xlim(0, 0.4)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    rel = _save(ctx, fig, "pcc-vs-rho")
    note = ("TEF solid, RA dashed; ACC is the area under each curve on one fixed grid (0 ≤ ρ ≤ 0.375, (0, 1) "
            "anchor; dotted: the last value carried over empty upper bins)")
    if missing:
        note += f"; not drawn (no curves recorded): {', '.join(missing)}"
    return [Figure("PCC vs ρ", rel, note)]


def robustness_vs_faithfulness(ctx: FigureContext) -> list[Figure]:
    """One board-wide scatter: each submission's ACC under TEF (robustness, y) against its ERASER
    comprehensiveness on the same model and texts (faithfulness, x), with their 95 % intervals; controls
    and references hollow. A text-blind explainer sits at the top left: perfectly robust, not faithful;
    the dashed line is the best control's comprehensiveness, the board's rank gate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts, missing = [], []
    for name, result in ctx.results.items():
        m = getattr(result, "metrics", {}) or {}
        rob, faith = m.get("rob-acc-tef"), m.get("rob-faith-comp")
        if rob is None or faith is None or rob.mean is None or faith.mean is None:
            missing.append(name)
            continue
        role = (getattr(result, "submission", {}) or {}).get("role", "method")
        pts.append((name, faith, rob, role))
    if not pts:
        why = ("no result has both an ACC and a comprehensiveness (constant explainers have no ACC; results "
               "written by an older xaibench have no faithfulness)")
        return [Figure("robustness vs faithfulness", None, f"picture not drawn: {why}")]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, faith, rob, role) in enumerate(pts):
        colour = colours[k % len(colours)]
        xerr = None if faith.ci95 is None else [[faith.mean - faith.ci95[0]], [faith.ci95[1] - faith.mean]]
        yerr = None if rob.ci95 is None else [[rob.mean - rob.ci95[0]], [rob.ci95[1] - rob.mean]]
        ax.errorbar([faith.mean], [rob.mean], xerr=xerr, yerr=yerr, fmt="o", color=colour, ms=6, capsize=2,
                    mfc="white" if role != "method" else colour, label=f"{name[:28]}" + ("" if role == "method"
                                                                                      else f" ({role})"))
    controls = [f.mean for _n, f, _r, role in pts if role == "control"]
    if controls:
        ax.axvline(max(controls), ls="--", color="grey", lw=1)
    ax.set_xlabel("faithfulness: ERASER comprehensiveness (higher = more faithful)")
    ax.set_ylabel("robustness: ACC under TEF (higher = more robust)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    rel = _save(ctx, fig, "robustness-vs-faithfulness")
    note = ("robustness (ACC TEF) against faithfulness (comprehensiveness) with 95 % intervals; hollow = control or "
            "reference (not ranked); dashed = the best control's comprehensiveness: a method left of it is ranked "
            "below every method right of it")
    if missing:
        note += f"; not drawn (no ACC or no comprehensiveness): {', '.join(missing)}"
    return [Figure("robustness vs faithfulness", rel, note)]


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)
