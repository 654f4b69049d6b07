"""What the reference builds: each track's resources (the real `xaibench generate` / `train` commands at a scale),
the boards it evaluates, and the scale rule that keeps each board within a budget on the machine at hand.

**Scales.** `default` is the reference: every generator at its default scale (docs/aixi.md, idc.md, rcnn.md,
trust.md, robustness.md; the choices below say where a default is not the generator's own and why). `tiny` is the
same flow on resources small enough to run end to end in minutes: it checks the machinery and makes the test
fixture, never a reference to read.

**The scale rule** (`choose`). A board's budget is `budget` CPU-minutes for every evaluation the reference makes of
it: the submitter's run, `verify`'s re-run, the randomisation test's run and the round's hidden copies (`passes`).
Its cost at a scale is projected as (seconds per instance per evaluation, summed over the board's submissions) ×
instances × passes (`project`), from what this machine measured in an earlier build (`costs.json` in the build's
folder: the Results' own times) or else from the priors below (docs/performance.md, "What a full-scale board
costs", 2026-11-27). Its size is projected the same way (`project_bytes`: every stored run's per-instance scores,
which its signature binds), and each board may take an equal share of the shipped tree's cap (`max_mb`) beside the
sources. A board over either is built at the largest evaluation split that fits both: its generator's scale option
(AIXI `--n-val`, IDC `--test-limit`, RCNN `--pool-limit`, trust `--test-limit`, robustness `--samples`) × the share
that fits, never below the option's floor; boards built by one command share its split and take the smallest.
Generation (training, attacks, trust sets) is not counted against a board: it is said per track.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = ["BoardPlan", "Choice", "Generate", "Knob", "SCALES", "TrackPlan", "choose", "passes", "plan_for",
           "project", "total_minutes"]

SCALES = ("default", "tiny")
BUDGET_MINUTES = 12.0  # the default per-board budget: the whole default build in about 5 h wall on 2 cores (README)
DRAWS = 3  # hidden copies per board in the reference's round (`results round start --draws`)
TIMEOUT_S = "600"  # per-instance limit of every evaluation and re-run (L2X trains its selector inside a call)


@dataclass(frozen=True)
class Knob:
    """A generator option that sets the size of the evaluation split: `--option N`; at `default` the option is
    not passed (the generator's own default, e.g. every eligible prediction); each unit gives `per_unit`
    evaluated instances (RCNN: verified reviews per pool review)."""

    option: str
    default: int
    floor: int
    unit: str
    per_unit: float = 1.0


@dataclass(frozen=True)
class Generate:
    """One `xaibench generate|train` command of a track, skipped when every resource in `builds` is built."""

    argv: tuple[str, ...]
    builds: tuple[str, ...] = ()
    what: str = ""
    knob: Knob | None = None
    value: int | None = None  # the knob's chosen value (None: its default)
    # an option that sets what the boards' fixed cost grows with (trust: the training explanations TOKI's pipeline 1
    # reads in every oracle's fit), and its chosen value
    fixed_knob: Knob | None = None
    fixed_value: int | None = None

    @property
    def command(self) -> tuple[str, ...]:
        """The argv with the chosen scale options."""
        out = self.argv
        for knob, value in ((self.knob, self.value), (self.fixed_knob, self.fixed_value)):
            if knob is not None and value is not None and value != knob.default:
                out = (*out, knob.option, str(value))
        return out

    @property
    def fixed_scale(self) -> float:
        """The share of the boards' fixed cost left at the chosen `fixed_value`."""
        if self.fixed_knob is None or self.fixed_value is None:
            return 1.0
        return self.fixed_value / self.fixed_knob.default


@dataclass(frozen=True)
class BoardPlan:
    """One board: (track, resource, model); `instances` evaluated at the default scale (approximate: a resource
    says its own), `spi` the prior of seconds per instance per evaluation summed over its submissions, `fixed_s`
    the prior of seconds per evaluation that do not grow with the instances (an oracle's fit, L2X's selector)."""

    track: str
    resource: str
    model: str
    instances: int
    spi: float
    fixed_s: float = 0.0
    hidden_share: float = 1.0  # a hidden copy's instances / the published model's (IDC drops documents)
    rows: int = 12  # submissions that enter the board (its Results)
    bpi: float = 100.0  # bytes per instance of one stored run (a Result, or one in a record): its per-instance scores

    @property
    def slug(self) -> str:
        """`family/config/model` (e.g. `aixi/shape-ssin/cnn`): a board's name in the build's records."""
        return f"{self.resource}/{self.model}"

    @property
    def resource_family(self) -> str:
        """The resource family (`aixi` of `aixi/shape-ssin`)."""
        return self.resource.split("/")[0]


@dataclass(frozen=True)
class TrackPlan:
    """A track's lane: what it needs from the data mirror, its commands, its boards and its lane order."""

    name: str
    title: str
    needs: tuple[str, ...]
    generate: tuple[Generate, ...]
    boards: tuple[BoardPlan, ...]
    minutes: float = 60.0  # expected lane minutes (longest first)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the build's frozen plan.json)."""
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "TrackPlan":
        """The inverse of `to_dict`."""
        gens = tuple(Generate(tuple(g["argv"]), tuple(g["builds"]), g["what"],
                              Knob(**g["knob"]) if g.get("knob") else None, g.get("value"),
                              Knob(**g["fixed_knob"]) if g.get("fixed_knob") else None, g.get("fixed_value"))
                     for g in d["generate"])
        boards = tuple(BoardPlan(**b) for b in d["boards"])
        return TrackPlan(d["name"], d["title"], tuple(d["needs"]), gens, boards, d["minutes"], d.get("note", ""))


def _boards(track: str, resources: tuple[str, ...], models: tuple[str, ...], instances: int, spi: dict[str, float],
            **kw: Any) -> tuple[BoardPlan, ...]:
    return tuple(BoardPlan(track, r, m, instances, spi[m], **kw) for r in resources for m in models)


AIXI_CONFIGS = tuple(f"aixi/{d}-{f}" for d in ("shape", "color") for f in ("ssin", "suum", "class"))
IDC_CONFIGS = tuple(f"idc/mr-{p}" for p in ("wga", "milp", "hybrid"))

# TOKI's pipeline 1 reads every correct training prediction's LIME explanation in each oracle's fit (the paper's
# budget for HateXplain and CAMS): about 4,500 on HateXplain (docs/trust.md: 4,507 with the supervised CNN), CAMS and
# movies their training splits' correct predictions (estimates); the default is "all" (the option not passed)
_TRAIN = {"hatexplain": 4500, "cams": 2000, "movies": 1100}


def TRAIN_EXPLAIN(dataset: str) -> Knob:  # noqa: N802 - a constant per data set
    """The trust generator's `--train-explain-limit` (the fixed cost of every oracle's fit)."""
    return Knob("--train-explain-limit", _TRAIN[dataset], 300, "explained training predictions")


# Bytes per instance of one stored run: its per-instance scores (`instance_scores`, zlib + base64 float64), measured
# on the tiny build (AIXI: 6 metrics, 49–77 B; the text tracks': see docs/reference.md)
IDC_BPI = 100.0
RCNN_BPI = 100.0
TRUST_BPI = 100.0
ROBUSTNESS_BPI = 400.0  # an attacked sample carries its texts' scores and curves

# Priors of seconds per instance per evaluation, summed over a board's submissions, on the idle 2-core CI machine:
# docs/performance.md ("What a full-scale board costs", 2026-11-27) gives IG, occlusion and LIME per track; the
# other submissions are scaled from them by their ratios in the tiny build of 2026-11-29 (one thread per lane, on
# the loaded machine: e.g. Kernel SHAP 3.4 × LIME on IDC, 4.9 × on robustness; docs/reference.md, "What it costs").
# `fixed_s`: per evaluation, worker starts and what does not grow with the instances — L2X's selector (RCNN,
# robustness), the trust oracles' fits (TOKI's pipeline 1 over every training explanation: 9–10 CPU-min per TOKI
# oracle at full scale, docs/performance.md). A build replaces them with what it measured (`costs.json`).
_DEFAULT: tuple[TrackPlan, ...] = (
    TrackPlan(
        "aixi", "AIXI: images whose labels are known functions of the drawn objects", (),
        (Generate(("generate", "aixi", "--scale", "default"), AIXI_CONFIGS,
                  "AIXI-Shape and AIXI-Color, SSIN / SUUM / Class: 10,000 training images each",
                  Knob("--n-val", 500, 50, "validation images")),
         # the default recipe (10 epochs, one-cycle 3e-3); Color with the object-removal augmentation, without which
         # its CNN reads the counts through cues that break once a circle is gone (docs/aixi.md, "CNNs that fit")
         Generate(("train", "aixi", *AIXI_CONFIGS[:3]), (), "the authors' CNN on each AIXI-Shape config"),
         Generate(("train", "aixi", *AIXI_CONFIGS[3:], "--augment-removal", "0.5"), (),
                  "the authors' CNN on each AIXI-Color config (object-removal augmentation 0.5)")),
        (*_boards("aixi", AIXI_CONFIGS, ("function",), 500, {"function": 0.2}, fixed_s=20.0, rows=8, bpi=70.0),
         *_boards("aixi", AIXI_CONFIGS, ("cnn",), 500, {"cnn": 0.85}, fixed_s=30.0, rows=14, bpi=70.0)),
        minutes=300),
    TrackPlan(
        "idc", "IDC: pseudo interpretation ground truth for a Kim CNN and a HAN on MR", ("rt_polarity",),
        # the MILP on the paper's 2,000-document sample, solved to optimality (157 s): a time-limited MILP returns
        # whatever the machine reached by the limit (docs/idc.md), so its ground truth would differ between builds
        (Generate(("generate", "idc", "--milp-sample", "2000", "--milp-time-limit", "0"), IDC_CONFIGS,
                  "the Kim CNN and the HAN on MR; WGA, MILP (2,000-document sample, proven optimal) and Hybrid",
                  Knob("--test-limit", 2133, 200, "test documents", 0.75)),),
        (*_boards("idc", IDC_CONFIGS, ("cnn",), 1598, {"cnn": 0.40}, fixed_s=30.0, hidden_share=0.3, rows=14,
                  bpi=IDC_BPI),
         *_boards("idc", IDC_CONFIGS, ("han",), 1598, {"han": 0.45}, fixed_s=30.0, hidden_share=0.3, rows=11,
                  bpi=IDC_BPI)),
        minutes=200),
    TrackPlan(
        "rcnn", "RCNN: tokens Lei's rationale model never selects contribute nothing", ("beer_advocate_lei2016",),
        tuple(Generate(("generate", "rcnn", "--aspect", a), (f"rcnn/beer-{a}",),
                       f"Lei's rationale model on {a} (quick recipe, up to 3 seeds) and its verified reviews",
                       Knob("--pool-limit", 4000, 200, "pool reviews", 0.25))
              for a in ("appearance", "aroma", "palate")),
        _boards("rcnn", tuple(f"rcnn/beer-{a}" for a in ("appearance", "aroma", "palate")), ("rcnn",), 999,
                {"rcnn": 1.9}, fixed_s=300.0, rows=13, bpi=RCNN_BPI),
        minutes=400, note="aroma and palate miss Lei's targets on the mirror's appearance file (docs/rcnn.md): their "
                          "builds stop with the figures and are listed as failed"),
    TrackPlan(
        "trust", "Trust: oracles judge explained predictions against people's rationales",
        ("hatexplain", "cams", "eraser_movies"),
        (Generate(("generate", "trust", "--embeddings"), ("trust/embeddings",),
                  "the five embedding models and θ_relate of each"),
         Generate(("generate", "trust", "--dataset", "hatexplain"), ("trust/hatexplain-cnn",),
                  "HateXplain: a Kim CNN, every eligible test prediction explained by LIME (5,000 samples)",
                  Knob("--test-limit", 913, 100, "explained test predictions"), None,
                  TRAIN_EXPLAIN("hatexplain")),
         Generate(("generate", "trust", "--dataset", "hatexplain", "--model", "cnn-sup"), ("trust/hatexplain-cnn-sup",),
                  "HateXplain with a rationale-supervised Kim CNN", Knob("--test-limit", 1022, 100,
                                                                         "explained test predictions"), None,
                  TRAIN_EXPLAIN("hatexplain")),
         Generate(("generate", "trust", "--dataset", "cams"), ("trust/cams-cnn",), "CAMS: a Kim CNN",
                  Knob("--test-limit", 1000, 100, "explained test predictions"), None, TRAIN_EXPLAIN("cams")),
         Generate(("generate", "trust", "--dataset", "movies"), ("trust/movies-cnn",), "ERASER movies: a Kim CNN",
                  Knob("--test-limit", 160, 50, "explained test predictions"), None, TRAIN_EXPLAIN("movies"))),
        (BoardPlan("trust", "trust/hatexplain-cnn", "cnn", 913, 0.2, 3300.0, rows=11, bpi=TRUST_BPI),
         BoardPlan("trust", "trust/hatexplain-cnn-sup", "cnn-sup", 1022, 0.2, 3300.0, rows=11, bpi=TRUST_BPI),
         BoardPlan("trust", "trust/cams-cnn", "cnn", 1000, 0.3, 5000.0, rows=11, bpi=TRUST_BPI),
         BoardPlan("trust", "trust/movies-cnn", "cnn", 160, 1.0, 5000.0, rows=11, bpi=TRUST_BPI)),
        minutes=300),
    TrackPlan(
        "robustness", "Robustness: TEF swaps words without changing the prediction", ("rt_polarity",),
        (Generate(("generate", "robustness"), tuple(f"robustness/mr-{m}" for m in ("cnn", "lstm", "lstm-att")),
                  "the Kim CNN, BiLSTM and BiLSTM + attention on MR; TEF, RA, RI, RS and SU through saliency",
                  Knob("--samples", 100, 10, "attacked sentences")),),
        tuple(BoardPlan("robustness", f"robustness/mr-{m}", m, 100, s, 150.0, rows=16, bpi=ROBUSTNESS_BPI)
              for m, s in (("cnn", 7.0), ("lstm", 12.0), ("lstm-att", 14.0))),
        minutes=300, note="robustness-live (each explainer attacked through itself, `xaibench attack`) is not "
                          "built: one live attack per explainer and model"),
)

# The same flow in minutes (machinery and the test fixture; never a reference to read).
_TINY: tuple[TrackPlan, ...] = (
    TrackPlan("aixi", "AIXI (tiny)", (),
              (Generate(("generate", "aixi", "--scale", "tiny", "--dataset", "shape", "--functions", "ssin"),
                        ("aixi/shape-ssin",), "AIXI-Shape SSIN, 64 / 32 images"),
               Generate(("train", "aixi", "aixi/shape-ssin", "--epochs", "1"), (), "one epoch of the CNN")),
              _boards("aixi", ("aixi/shape-ssin",), ("function", "cnn"), 32, {"function": 0.9, "cnn": 1.3}),
              minutes=10),
    TrackPlan("idc", "IDC (tiny)", ("rt_polarity",),
              (Generate(("generate", "idc", "--pgt", "wga", "--no-han", "--epochs", "1", "--limit", "300"),
                        ("idc/mr-wga",), "a Kim CNN on 300 MR documents per split, WGA"),),
              _boards("idc", ("idc/mr-wga",), ("cnn",), 150, {"cnn": 0.3}, fixed_s=60.0, hidden_share=0.3),
              minutes=15),
    TrackPlan("rcnn", "RCNN (tiny)", ("beer_advocate_lei2016",),
              # the demo's recipe (an RCNN on fewer reviews or epochs selects nothing: no review verifies)
              (Generate(("generate", "rcnn", "--aspect", "appearance", "--seed", "1", "--seeds", "1", "--epochs", "16",
                         "--patience", "2", "--pool-limit", "60", "--accept-below-target"),
                        ("rcnn/beer-appearance",), "the demo's RCNN, 60 pool reviews"),),
              _boards("rcnn", ("rcnn/beer-appearance",), ("rcnn",), 10, {"rcnn": 1.8}, fixed_s=60.0), minutes=20),
    TrackPlan("trust", "Trust (tiny)", ("hatexplain",),
              (Generate(("generate", "trust", "--embeddings", "--embedding-model", "glove-50d"), ("trust/embeddings",),
                        "one pre-trained embedding model"),
               Generate(("generate", "trust", "--dataset", "hatexplain", "--epochs", "1", "--test-limit", "40",
                         "--num-samples", "100", "--validation-limit", "0", "--train-explain-limit", "60"),
                        ("trust/hatexplain-cnn",), "40 explained test predictions")),
              (BoardPlan("trust", "trust/hatexplain-cnn", "cnn", 40, 0.06, 30.0),), minutes=10),
    TrackPlan("robustness", "Robustness (tiny)", ("rt_polarity",),
              (Generate(("generate", "robustness", "--model", "cnn", "--samples", "3", "--explainer", "saliency",
                         "--attack", "tef", "--attack", "ra", "--policy-samples", "0", "--epochs", "1"),
                        ("robustness/mr-cnn",), "a Kim CNN, TEF and RA on 3 sentences"),),
              (BoardPlan("robustness", "robustness/mr-cnn", "cnn", 3, 3.0, 30.0),), minutes=10),
)


def cap_training(tracks: tuple[TrackPlan, ...], epochs: int | None) -> tuple[TrackPlan, ...]:
    """`tracks` with every `train` command run for at most `epochs` epochs (`reference build --train-epochs`; None:
    as planned). Training is not counted against a board's budget (the scale rule), so this is the one knob of a
    track's fixed cost on a small machine; each capped command says so in its description, and the build's
    plan.json and manifest hold it."""
    if epochs is None:
        return tracks
    out = []
    for t in tracks:
        gens = []
        for g in t.generate:
            if g.argv[0] == "train":
                argv = list(g.argv)
                if "--epochs" in argv:
                    argv[argv.index("--epochs") + 1] = str(min(epochs, int(argv[argv.index("--epochs") + 1])))
                else:
                    argv += ["--epochs", str(epochs)]
                g = replace(g, argv=tuple(argv), what=f"{g.what} (at most {epochs} epoch(s): --train-epochs)")
            gens.append(g)
        out.append(replace(t, generate=tuple(gens)))
    return tuple(out)


def plan_for(scale: str) -> tuple[TrackPlan, ...]:
    """The tracks of a scale (`SCALES`), every knob at its default."""
    if scale not in SCALES:
        raise ValueError(f"scale {scale!r}: one of {', '.join(SCALES)}")
    return _DEFAULT if scale == "default" else _TINY


def passes(board: BoardPlan, draws: int) -> float:
    """Evaluations per row the reference makes of `board`: the submitter's run and verify's re-run, the
    randomisation test's run where the track applies it, and `draws` hidden copies (each `hidden_share` of the
    instances) where the board has them (`Track.randomisation_test`, `Track.no_hidden_copy_of`)."""
    from benchmark.tracks import get_track

    trk = get_track(board.track)
    hidden = 0.0 if trk.no_hidden_copy_of(board.model) else draws * board.hidden_share
    return 2.0 + (1.0 if trk.randomisation_test else 0.0) + hidden


RUN_BYTES = 4000  # bytes of one stored run besides its per-instance scores (measured: a Result 3.7 KB, a record 3 KB)
SOURCE_BYTES = 1_000_000  # what the tree holds besides the runs: every submission's source/ and metadata (~20 KB each)


def stored_runs(board: BoardPlan, draws: int) -> float:
    """Runs the reference stores per row of `board`: its Result, the randomisation test's run (in the record) and the
    hidden copies' runs (in the round record) — every evaluation but verify's re-run."""
    return passes(board, draws) - 1.0


def project_bytes(board: BoardPlan, instances: int, draws: int, measured: dict[str, Any] | None = None) -> float:
    """Bytes `board` adds to the shipped tree at `instances` instances: rows × stored runs × (a run's fixed bytes +
    its per-instance scores), from the bytes per instance measured in an earlier build where there are some."""
    bpi = float(((measured or {}).get(board.slug) or {}).get("bpi", board.bpi))
    return board.rows * stored_runs(board, draws) * (RUN_BYTES + bpi * instances)


def project(board: BoardPlan, instances: int, draws: int, measured: dict[str, Any] | None = None,
            fixed_scale: float = 1.0) -> float:
    """CPU minutes of every evaluation of `board` at `instances` instances, its fixed cost × `fixed_scale` (module
    docstring): the measured seconds per instance and fixed seconds of an earlier build (`measured[board.slug]`)
    where there are some, else the plan's priors."""
    m = (measured or {}).get(board.slug) or {}
    spi = float(m.get("spi", board.spi))
    fixed = float(m.get("fixed_s", board.fixed_s)) * fixed_scale
    return passes(board, draws) * (spi * instances + fixed) / 60.0


@dataclass
class Choice:
    """The scale rule's decision for one generator command: its option's value and, per board it builds, the
    projected minutes at the default and at the chosen scale."""

    command: str
    option: str | None
    default: int | None
    value: int | None
    boards: dict[str, dict[str, float]] = field(default_factory=dict)  # slug → {"default", "chosen", "instances"}
    reason: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)  # the fixed-cost option's value, when it was lowered

    @property
    def reduced(self) -> bool:
        """Whether the command runs below its default scale."""
        return self.value is not None and self.default is not None and self.value < self.default


def _fitting(board: BoardPlan, budget: float, draws: int, measured: dict[str, Any] | None,
             share_bytes: float | None = None, fixed_scale: float = 1.0) -> int:
    """The most instances of `board` whose projected cost (`project`) is within `budget` CPU-minutes and, with
    `share_bytes`, whose projected size (`project_bytes`) is within it (0 when even the fixed part exceeds one)."""
    m = (measured or {}).get(board.slug) or {}
    spi = float(m.get("spi", board.spi))
    fixed = float(m.get("fixed_s", board.fixed_s)) * fixed_scale
    n = board.instances
    if budget > 0 and spi > 0:
        n = min(n, max(0, int((budget * 60.0 / passes(board, draws) - fixed) / spi)))
    if share_bytes is not None:
        bpi = float(m.get("bpi", board.bpi))
        per_run = share_bytes / (board.rows * stored_runs(board, draws))
        n = min(n, max(0, int((per_run - RUN_BYTES) / bpi)) if bpi > 0 else n)
    return n


def _fixed_value(g: Generate, built: list[BoardPlan], budget: float, draws: int,
                 measured: dict[str, Any] | None) -> int | None:
    """The value of `g`'s fixed-cost option that keeps each board's fixed cost within half its budget (None: it stays
    at its default), never below the option's floor."""
    if g.fixed_knob is None or budget <= 0:
        return None
    scale = 1.0
    for b in built:
        fixed = float(((measured or {}).get(b.slug) or {}).get("fixed_s", b.fixed_s))
        room = budget * 60.0 / passes(b, draws) / 2
        if fixed > room:
            scale = min(scale, room / fixed)
    if scale >= 1.0:
        return None
    return max(g.fixed_knob.floor, min(g.fixed_knob.default, int(g.fixed_knob.default * scale)))


def _instances(board: BoardPlan, knob: Knob | None, value: int | None) -> int:
    if knob is None or value is None:
        return board.instances
    return max(1, int(board.instances * value / knob.default))


def choose(tracks: tuple[TrackPlan, ...], budget: float, draws: int, measured: dict[str, Any] | None = None,
           max_mb: float | None = None, n_boards: int | None = None) -> tuple[tuple[TrackPlan, ...], list[Choice]]:
    """The scale rule (module docstring): `tracks` with each knob set, and one `Choice` per generator command that
    builds boards. `budget` ≤ 0 keeps every default as far as time goes; `max_mb` (the shipped tree's cap) gives each
    of the `n_boards` boards (default: those of `tracks`) an equal share of it beside the sources."""
    n_boards = n_boards or sum(len(t.boards) for t in tracks)
    share = None if max_mb is None else max(0.0, max_mb * 1e6 - SOURCE_BYTES) / max(1, n_boards)
    out_tracks, choices = [], []
    for t in tracks:
        gens = []
        for g in t.generate:
            built = [b for b in t.boards if b.resource in g.builds]
            if not built:
                gens.append(g)
                continue
            c = Choice(" ".join(("xaibench",) + g.argv), g.knob.option if g.knob else None,
                       g.knob.default if g.knob else None, None)
            value = g.knob.default if g.knob else None
            fixed_value = _fixed_value(g, built, budget, draws, measured)
            scale = 1.0 if fixed_value is None or g.fixed_knob is None else fixed_value / g.fixed_knob.default
            for b in built:
                full, size = project(b, b.instances, draws, measured), project_bytes(b, b.instances, draws, measured)
                c.boards[b.slug] = {"default": round(full, 1), "instances_default": b.instances,
                                    "mb_default": round(size / 1e6, 2)}
                n = _fitting(b, budget, draws, measured, share, scale)
                if n < b.instances and g.knob is not None:
                    fits = int(g.knob.default * n / b.instances)
                    value = max(g.knob.floor, min(value or g.knob.default, fits))
            for b in built:
                n = _instances(b, g.knob, value)
                c.boards[b.slug].update(chosen=round(project(b, n, draws, measured, scale), 1), instances=n,
                                        mb=round(project_bytes(b, n, draws, measured) / 1e6, 2))
            over = [s for s, v in c.boards.items() if budget > 0 and v["chosen"] > budget]
            big = [s for s, v in c.boards.items() if share is not None and v["mb"] * 1e6 > share]
            if g.knob is not None and value is not None and value < g.knob.default:
                c.value = value
                worst = max(c.boards.values(), key=lambda v: v["default"])
                why = []
                if budget > 0 and worst["default"] > budget:
                    why.append(f"{worst['default']:.0f} CPU-min projected for its costliest board at the default "
                               f"{g.knob.option.lstrip('-')} {g.knob.default} > the budget {budget:g}")
                heaviest = max(c.boards.values(), key=lambda v: v["mb_default"])
                if share is not None and heaviest["mb_default"] * 1e6 > share:
                    why.append(f"{heaviest['mb_default']:.1f} MB projected for its largest board > its share "
                               f"{share / 1e6:.1f} MB of the shipped {max_mb:g} MB")
                c.reason = "; ".join(why) + f": {g.knob.option} {value}"
                if fixed_value is not None and g.fixed_knob is not None:
                    c.reason += (f", and {g.fixed_knob.option} {fixed_value} (of {g.fixed_knob.default}: the fixed "
                                 f"cost, {g.fixed_knob.unit}, above half the budget)")
                if value == g.knob.floor and (over or big):
                    c.reason += f" (its floor; still over on {len(set(over) | set(big))} board(s))"
            elif over or big:
                c.reason = (f"over the budget on {len(set(over) | set(big))} board(s) at the default scale, and "
                            + (t.note if g.knob is None and t.note else "its option is at the default"))
            if fixed_value is not None:
                c.fixed = {"option": g.fixed_knob.option if g.fixed_knob else None, "value": fixed_value}
            gens.append(replace(g, value=c.value, fixed_value=fixed_value))
            choices.append(c)
        out_tracks.append(replace(t, generate=tuple(gens)))
    return tuple(out_tracks), choices


def total_minutes(choices: list[Choice]) -> float:
    """The projected CPU minutes of every board's evaluations at the chosen scales."""
    return math.fsum(v["chosen"] for c in choices for v in c.boards.values())
