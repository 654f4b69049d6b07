"""The generators' commands: `generate`, `train`, `reproduce`, `publish`, `agreement`, `demo` and `reference`.

Registered on the `xaibench` command line through the `xaibench.commands` entry point; each track's
own commands come from its package (`generators.rcnn.cli`, `generators.trust.cli`, `generators.robustness.cli`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import List, Optional

import typer

from benchmark.options import SEED_MAX, TIME_BUDGET_MAX_S, exclusive
from benchmark.progress import console
from generators.rcnn.cli import Aspect, register_rcnn
from generators.trust.cli import register as register_trust
from generators.robustness.cli import register as register_robustness


# Fixed value sets of the options (tests/test_cli_options.py checks each against the code that reads it):
# a `StrEnum` per option annotation, whose members' values are their names (typer lists them in --help and
# refuses others); commands hand `str(member)` (the plain value) to the code below them.
AixiDataset = StrEnum("AixiDataset", ["shape", "color"])
AixiScale = StrEnum("AixiScale", ["paper", "default", "demo", "tiny"])  # generators.aixi.build.SCALES
AixiFunction = StrEnum("AixiFunction", ["ssin", "suum", "class"])
ClassRule = StrEnum("ClassRule", ["count", "weighted"])
Schedule = StrEnum("Schedule", ["constant", "onecycle"])  # generators.aixi.train.TrainConfig.schedule
Pgt = StrEnum("Pgt", ["wga", "milp", "hybrid"])  # generators.idc.build.PGTS
IdcPool = StrEnum("IdcPool", ["train+validation", "train"])
HybridRank = StrEnum("HybridRank", ["total", "max"])
MrSource = StrEnum("MrSource", ["mirror", "local", "hub"])
Normalisation = StrEnum("Normalisation", ["minmax", "positive", "absolute"])
HiddenForm = StrEnum("HiddenForm", ["weights", "shared-curve", "pattern-curves"])
Experiment = StrEnum("Experiment", ["1", "2", "3"])  # generators.aixi.experiments: Experiments 1-3
EraserSplit = StrEnum("EraserSplit", ["train", "val", "test"])  # ERASER's {split}.jsonl files


def _plain(values):
    """Enum members (or the plain-string defaults) as plain strings: config fingerprints and provenance
    must not depend on how an option was typed."""
    return None if values is None else [str(v) for v in values]

generate_app = typer.Typer(help="Build ground-truth resources.", no_args_is_help=True)
register_rcnn(generate_app)
register_trust(generate_app)
train_app = typer.Typer(help="Train the models under test of a resource.", no_args_is_help=True)
reproduce_app = typer.Typer(help="Re-run a paper's experiments beside its numbers.",
                            no_args_is_help=True)
register_robustness(generate_app, reproduce_app)


@generate_app.command("aixi")
def generate_aixi(
    dataset: List[AixiDataset] = typer.Option(["shape", "color"], "--dataset", "-d",
                                              help="AIXI-Shape ('shape') and/or AIXI-Color ('color'); repeatable."),
    scale: AixiScale = typer.Option("default", help="paper = 50,000 train / 2,000 validation (the authors' "
                                    "setting); default = 10,000 / 500 (enough for the CNN to fit); demo = 8,000 / 200; "
                                    "tiny = for tests."),
    n_train: Optional[int] = typer.Option(None, min=1, help="Override the scale's number of training images."),
    n_val: Optional[int] = typer.Option(None, min=1, help="Override the scale's number of validation images."),
    functions: List[AixiFunction] = typer.Option(["ssin", "suum", "class"], "--functions", "-f",
                                                 help="Attribution functions, one config each (ssin, suum, "
                                                 "class)."),
    seed: int = typer.Option(42, min=0, max=SEED_MAX,
                             help="Seed of the drawing stream (the authors seed Python's random with 42)."),
    class_rule: ClassRule = typer.Option("count", help="Class label rule: 'count' = [ι1 > ι2]; "
                                         "'weighted' = [w1 ι1 − w2 ι2 > 0]."),
    workers: Optional[int] = typer.Option(None, min=1, help="Rendering processes (default: all cores)."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/aixi)."),
    overwrite: bool = typer.Option(False, help="Replace existing configs."),
) -> None:
    """Generate AIXI images and their ground-truth maps.

    AIXI-Shape / AIXI-Color images with pixel-exact ground-truth maps, one config per dataset ×
    function, e.g. aixi/shape-ssin."""
    from generators.aixi.build import SCALES, build_aixi

    nt, nv = SCALES[str(scale)]
    for d in _plain(dataset):
        metas = build_aixi(d, n_train or nt, n_val or nv, root=root, seed=seed, functions=tuple(_plain(functions)),
                           class_rule=str(class_rule), workers=workers, overwrite=overwrite)
        for config, meta in metas.items():
            console.print(f"[green]aixi/{config}[/] revision {meta['revision']}: "
                          + ", ".join(f"{s} {i['rows']}" for s, i in sorted(meta["splits"].items())))


@generate_app.command("idc")
def generate_idc(
    pgt: List[Pgt] = typer.Option(["wga", "milp", "hybrid"], "--pgt", "-p",
                                  help="Pseudo-ground-truth method(s): wga, milp, hybrid; one config each."),
    pool: IdcPool = typer.Option("train+validation", help="Documents the PGTs are built from: "
                                 "'train+validation' (the paper's 8K, default) or 'train'."),
    vocab_size: int = typer.Option(3000, min=1, help="|V| for MILP (TF-IDF words) and Hybrid (WGA words)."),
    hybrid_rank: HybridRank = typer.Option("total", help="Hybrid's V: 'total' = words with the highest summed "
                                           "WGA relevance in a class; 'max' = highest max_c RS[w,c]."),
    alpha: float = typer.Option(0.3, min=0, max=1, help="WGA relevance threshold α (relevance is in [0, 1])."),
    beta: float = typer.Option(0.25, min=0, max=1, help="WGA class margin β."),
    min_words: int = typer.Option(5, min=1, help="MILP: drop documents with fewer words of V."),
    milp_time_limit: float = typer.Option(300.0, min=0, max=TIME_BUDGET_MAX_S,
                                          help="Seconds per MILP solve (MILP and Hybrid each); the best solution "
                                          "found is kept and its gap recorded. 0 = until proven optimal (on MR "
                                          "the TF-IDF MILP is not proven within 25 minutes)."),
    milp_sample: Optional[int] = typer.Option(None, min=1, help="Build the MILP PGT on a seeded random sample "
                                              "of this many documents (those with ≥ --min-words words of V); "
                                              "the paper's MILP saw ≈2,000."),
    epochs: int = typer.Option(10, min=1, help="Training epochs of the CNN and the HAN (best validation kept)."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Seed of the 60/20/20 split of MR."),
    source: MrSource = typer.Option("mirror", help="MR from the data 'mirror', a 'local' folder (--path) or the "
                                    "'hub'."),
    path: Optional[str] = typer.Option(None, help="Folder with rt-polarity.pos/.neg (source=local)."),
    limit: Optional[int] = typer.Option(None, min=1,
                                        help="Use only the first N documents of each split (quick runs)."),
    test_limit: Optional[int] = typer.Option(None, min=1, help="Evaluate only the first N documents of the (seeded, "
                                             "shuffled) test split; the models and the PGTs are built as without it "
                                             "(reduced scale)."),
    no_han: bool = typer.Option(False, "--no-han", help="Skip training the HAN attention model."),
    lexicon_alpha: float = typer.Option(1.0, min=0, max=1000, callback=exclusive(0),
                                        help="Add-α smoothing of the lexicon (the training split's class log-odds, "
                                        "a read-only asset for the data-prior controls)."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/idc)."),
    overwrite: bool = typer.Option(False, help="Retrain the models even if trained on the same corpus."),
) -> None:
    """Train the Kim CNN on MR and build the IDC ground truth.

    Trains the Kim CNN (and HAN) on MR and builds the IDC pseudo ground truth (idc/mr-wga, idc/mr-milp,
    idc/mr-hybrid), SPECS §5."""
    from generators.corpora.mr import mr_source
    from generators.idc.build import IdcConfig, build_idc

    cfg = IdcConfig(pgts=tuple(_plain(pgt)), pool=str(pool), vocab_size=vocab_size, hybrid_rank=str(hybrid_rank),
                    alpha=alpha, beta=beta, min_words=min_words, milp_time_limit=milp_time_limit,
                    milp_sample=milp_sample, epochs=epochs, seed=seed, source=mr_source(str(source)), path=path,
                    limit=limit, test_limit=test_limit, han=not no_han, lexicon_alpha=lexicon_alpha)
    metas = build_idc(cfg, root=root, overwrite=overwrite)
    for name, meta in metas.items():
        st = meta["stats"]
        console.print(f"[green]idc/mr-{name}[/] revision {meta['revision']}: |IF_c| "
                      + ", ".join(f"{k} {v}" for k, v in st["features_per_class"].items())
                      + f", pool covered {st['pool_covered']}, CNN test accuracy {st['cnn']['test_accuracy']:.3f}")
        if "milp_status" in st:
            console.print(f"    MILP: {st['milp_status']}")


@train_app.command("aixi")
def train_aixi_cmd(
    resource: List[str] = typer.Argument(..., help="Resource config(s), e.g. aixi/shape-ssin."),
    epochs: int = typer.Option(10, min=1, help="Epochs (the one-cycle schedule spans them; best validation "
                               "epoch kept)."),
    batch_size: int = typer.Option(32, min=1, help="Mini-batch size."),
    lr: float = typer.Option(3e-3, min=0, max=1, callback=exclusive(0),
                             help="Adam learning rate, the peak of the one-cycle schedule (0 < lr ≤ 1)."),
    patience: int = typer.Option(5, min=1, help="Stop after this many epochs without validation improvement."),
    max_train: Optional[int] = typer.Option(None, min=1, help="Use only the first N training images."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Initialisation / shuffling seed."),
    schedule: Schedule = typer.Option("onecycle", help="Learning rate: 'constant' (Adam at --lr) or 'onecycle' "
                                      "(warm-up to --lr, then cosine annealing over all --epochs)."),
    init_output_bias: bool = typer.Option(True, help="Start the output bias at the training labels' mean."),
    standardize_labels: bool = typer.Option(True, help="Regression: fit standardised labels, folded back into "
                                            "the output layer (the saved model predicts the label itself)."),
    dropout: float = typer.Option(0.0, min=0.0, max=1.0, callback=exclusive(None, 1),
                                  help="Dropout rate of the head while training (the authors' CNN: 0.5; "
                                  "0 ≤ rate < 1)."),
    augment_removal: float = typer.Option(0.0, min=0.0, max=1.0, help="Object-removal augmentation (not in the "
                                          "paper): the share of training images shown with each object removed "
                                          "with probability 1/2 and the label recomputed by the function."),
    overwrite: bool = typer.Option(False, help="Retrain even if a model for this revision exists."),
) -> None:
    """Train the authors' CNN on an AIXI resource.

    Stores it (safetensors) in the resource's model/ folder."""
    from generators.aixi.train import TrainConfig, train_aixi

    for r in resource:
        cfg = TrainConfig(epochs=epochs, batch_size=batch_size, lr=lr, patience=patience, seed=seed,
                          max_train=max_train, schedule=str(schedule), init_output_bias=init_output_bias,
                          standardize_labels=standardize_labels, dropout=dropout, augment_removal=augment_removal)
        val = train_aixi(r, cfg, overwrite=overwrite)
        console.print(f"[green]{r}[/] CNN validation: " + ", ".join(
            f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in val.items()))


@reproduce_app.command("aixi")
def reproduce_aixi(
    experiment: List[Experiment] = typer.Option(["1", "2", "3"], "--experiment", "-e",
                                                help="1 = LIME vs sample size, 2 = function model, 3 = CNN."),
    dataset: List[AixiDataset] = typer.Option(["shape", "color"], "--dataset", "-d", help="shape and/or color."),
    function: List[AixiFunction] = typer.Option(["ssin", "suum", "class"], "--function", "-f",
                                                help="ssin, suum, class."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N validation images (paper: all 2,000)."),
    normalisation: Normalisation = typer.Option("minmax", help="How the signed LIME map becomes a distribution: "
                                                "'minmax' (SPECS §3.7, the paper's tables), 'positive' (S⁺/ΣS⁺, the "
                                                "board's default) or 'absolute' (|S|/Σ|S|)."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
) -> None:
    """AIXI Experiments 1-3 beside the paper's numbers.

    Miró-Nicolau et al.'s experiments with exhaustive LIME; needs the resources (and, for Experiment 3,
    trained CNNs)."""
    from generators.aixi.experiments import run, table

    rows = run(tuple(int(e) for e in experiment), tuple(_plain(dataset)), tuple(_plain(function)), limit=limit,
               results_dir=results, normalisation=str(normalisation))
    console.print(table(rows))


def _with_params(text: str) -> str | tuple[str, dict[str, str | int | float]]:
    """`NAME[key=value,...]` as (NAME, {key: value}) (numbers as numbers); a plain name as itself."""
    if not text.endswith("]") or "[" not in text:
        return text
    name, _, inner = text[:-1].partition("[")
    params: dict[str, str | int | float] = {}
    for item in filter(None, inner.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"{text}: parameters are key=value, got {item!r}")
        params[key.strip()] = _number(value.strip())
    return name, params


def _number(value: str) -> str | int | float:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


@reproduce_app.command("aixi-normalisation")
def reproduce_aixi_normalisation(
    config: Optional[List[str]] = typer.Option(None, "--config", "-c", help="Boards, e.g. shape-ssin (default: "
                                               "Shape and Color × SSIN, SUUM, Class)."),
    submission: Optional[List[str]] = typer.Option(None, "--submission", "-s", help="Submissions, each a name or "
                                                   "folder, with parameters as NAME[key=value,...] (default: every "
                                                   "built-in that runs on the function model and every control)."),
    limit: Optional[int] = typer.Option(40, min=1, help="Images on the published function model (the demo: 40)."),
    draws: int = typer.Option(3, min=1, max=100, help="Hidden copies of the function model."),
    hidden_limit: Optional[int] = typer.Option(10, min=1, help="Images of each hidden copy (the demo: 10)."),
    results: Optional[Path] = typer.Option(None, help="Results folder, one sub-folder per normalisation (default "
                                           "$XAIBENCH_HOME/results-normalisation)."),
    hidden_form: HiddenForm = typer.Option("weights", help="What the hidden copies draw: 'weights' (the board's "
                                           "construction) or a candidate that also draws count curves "
                                           "('shared-curve', 'pattern-curves'; docs/aixi.md)."),
) -> None:
    """AIXI: each built-in under each normalisation of signed maps.

    Each map is explained once per image and model copy and scored as min-max, positive part and |S|; on the
    hidden copies each submission is compared with the best data prior (paired bootstrap over images and copies)."""
    from generators.aixi.experiments import CONFIGS, NORMALISATION_SUBMISSIONS, normalisation_study, normalisation_table

    subs = tuple(_with_params(s) for s in submission) if submission else NORMALISATION_SUBMISSIONS
    cells = normalisation_study(tuple(config or CONFIGS), subs, limit=limit, draws=draws, hidden_limit=hidden_limit,
                                results_dir=results, hidden_form=str(hidden_form))
    console.print(normalisation_table(cells))


@reproduce_app.command("idc")
def reproduce_idc(
    pgt: List[Pgt] = typer.Option(["wga", "milp", "hybrid"], "--pgt", "-p", help="PGT configs to score against."),
    method: Optional[List[str]] = typer.Option(None, "--method", "-m", help="Submissions (default: the paper's "
                                               "six methods plus input-x-gradient, occlusion, lime-text, "
                                               "kernel-shap and random)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N evaluated test documents."),
    slow_limit: Optional[int] = typer.Option(300, min=1, help="Documents for lime-text and kernel-shap."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
) -> None:
    """IDC Table 1 beside the paper's numbers.

    Khaleel et al.'s interpretation methods vs the WGA / MILP / Hybrid PGTs on the MR test set beside the
    paper's κ / P / R, and RelativeConf per PGT; needs `xaibench generate idc`."""
    from generators.idc.experiments import EXTRA_METHODS, PAPER_METHODS, run, table

    pgt = _plain(pgt)
    rows = run(tuple(pgt), tuple(method or PAPER_METHODS + EXTRA_METHODS), limit=limit, slow_limit=slow_limit,
               results_dir=results)
    for t in table(rows, tuple(pgt)):
        console.print(t)


@reproduce_app.command("trust")
def reproduce_trust(
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d", help="Trust configs, e.g. hatexplain-cnn "
                                                "(default: every built trust set)."),
    oracle: Optional[List[str]] = typer.Option(None, "--oracle", "-o", help="Oracle submissions (default: TOKI-lime "
                                               "/ -omis / -grad, Naive, the three –K.I rows and random)."),
    train_limit: int = typer.Option(-1, min=-1, help="TOKI pipeline 1 on a seeded sample of N correct training "
                                    "predictions (-1 = all of them, the paper's budget for CAMS / HateXplain)."),
    lime_samples: int = typer.Option(5000, min=1, help="LIME samples per explanation in TOKI-lime (paper: 5,000)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N test predictions."),
    fit_timeout: float = typer.Option(0.0, min=0, help="Time limit of each oracle's fit, s (0 = none)."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
    extras: bool = typer.Option(True, help="Also the board rows: the rationale ceiling, random at TOKI-lime's rate, "
                                "TOKI-lime importance-equivalent, and the validation-tuned θ_dist / θ_conf rows."),
) -> None:
    """TOKI Table 3 beside the paper's numbers.

    Nguyen Tung et al.'s TOKI, Naive and the –K.I ablations on every built trust set, run as oracles in
    the sandboxed worker, beside the paper's rows and Naive from the Fig. 6 counts; then the board per set (AUC with its
    interval, the chance and blind controls, the ceiling)."""
    from generators.trust.reproduce import ORACLES, run, table

    toki = {"train_limit": train_limit, "lime_samples": lime_samples}
    params = {s: {k: v for k, v in toki.items() if k in _declared(s)} for _, s in ORACLES if s.startswith("toki")}
    rows = run(dataset, oracle, params=params, limit=limit, results_dir=results, fit_timeout_s=fit_timeout,
               extras=extras)
    if not rows:
        raise typer.BadParameter("no trust set is built: run `xaibench generate trust --dataset hatexplain` first")
    for t in table(rows):
        console.print(t)


def _declared(name: str) -> set[str]:
    from benchmark.submission import get_submission

    return set(get_submission(name).parameters)


@reproduce_app.command("rcnn")
def reproduce_rcnn(
    aspect: List[Aspect] = typer.Option(["appearance", "aroma", "palate"], "--aspect", "-a", case_sensitive=False,
                                        help="Aspects (those without a built rcnn/beer-<aspect> are skipped)."),
    method: Optional[List[str]] = typer.Option(None, "--method", "-m", help="Submissions (default: lime-text, "
                                               "kernel-shap, l2x, plus occlusion, saliency, integrated-gradients, "
                                               "input-x-gradient and random)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N verified reviews."),
    slow_limit: Optional[int] = typer.Option(300, min=1, help="Reviews for lime-text and kernel-shap."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
) -> None:
    """Camburu et al.'s Tables 1 and 2 beside the paper's numbers.

    RCNN zero-contribution: LIME, SHAP, L2X and more on each built aspect beside the paper's error
    rates, and the verified datasets' statistics beside the paper's; needs `xaibench generate rcnn`."""
    from generators.rcnn.build import ASPECT_CONFIGS
    from generators.rcnn.data import aspect_name
    from generators.rcnn.experiments import EXTRA_METHODS, PAPER_METHODS, built_aspects, run, table

    try:
        wanted = [aspect_name(a) for a in _plain(aspect)]
    except Exception as exc:  # noqa: BLE001 - unknown aspect: a usage error
        raise typer.BadParameter(str(exc)) from exc
    found = built_aspects(wanted)
    missing = [a for a in wanted if a not in found]
    if missing:
        console.print(f"[yellow]not built, skipped: {', '.join(missing)} (xaibench generate rcnn --aspect …; "
                      f"configs {', '.join(ASPECT_CONFIGS)})")
    if not found:
        raise typer.Exit(1)
    rows = run(tuple(found), tuple(method or PAPER_METHODS + EXTRA_METHODS), limit=limit, slow_limit=slow_limit,
               results_dir=results)
    for t in table(rows, tuple(found)):
        console.print(t)


def agreement_cmd(
    pgt: List[str] = typer.Option([], "--pgt", help="PGT resource(s) to score, e.g. idc/mr-wga; repeatable."),
    explainer: List[str] = typer.Option([], "--explainer", "-e", help="Explainer submission(s) (name or path)."),
    model: str = typer.Option("idc/mr-wga:cnn", help="Model under test for explainers: <resource>:<cnn|han>."),
    rationales: Optional[Path] = typer.Option(None, help="ERASER-format folder (default: the mirror's "
                                              "eraser_movies)."),
    split: List[EraserSplit] = typer.Option(["val"], "--split", help="Rationale split(s): train, val and/or "
                                            "test (those the folder has)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N documents."),
    alpha: float = typer.Option(0.3, min=0, max=1,
                                help="Explainers: tokens with normalised score ≥ α are relevant."),
    top_fraction: Optional[float] = typer.Option(None, min=0, max=1, help="Explainers: mark this fraction of each "
                                                 "document's tokens instead of thresholding."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Seed handed to explainers."),
    output: Optional[Path] = typer.Option(None, help="Also write the figures as JSON here."),
) -> None:
    """Score PGTs and explainers against human rationales.

    Agreement with people on ERASER-shaped rationales: Cohen's κ, precision and recall over token
    positions, pooled and per document."""
    import json

    from rich.table import Table

    from benchmark.resources import load_resource
    from benchmark.submission import get_submission
    from benchmark.tracks import get_track
    from generators.corpora import load_eraser
    from generators.idc.agreement import explainer_agreement, pgt_agreement

    if not pgt and not explainer:
        raise typer.BadParameter("give at least one --pgt or --explainer")
    split = _plain(split)
    corpus = load_eraser(rationales, split=tuple(split))
    docs = list(corpus.documents())[:limit] if limit else list(corpus.documents())
    rows = [pgt_agreement(load_resource(p), docs, corpus.classes) for p in pgt]
    if explainer:
        res_name, _, model_name = model.partition(":")
        res = load_resource(res_name)
        trk = get_track(res.family)
        spec, _ = trk.build_model(res, model_name or "cnn", None)
        for e in explainer:
            sub = get_submission(e)
            rows.append(explainer_agreement(sub, spec, docs, name=f"{sub.name} on {model}",
                                            seed=seed, alpha=alpha, top_fraction=top_fraction))
    table = Table(title=f"agreement with human rationales ({corpus.name}, {'+'.join(split)}, {len(docs)} docs)")
    for col in ("source", "κ pooled", "P pooled", "R pooled", "κ/doc", "P/doc", "R/doc", "marked", "human"):
        table.add_column(col, justify="left" if col == "source" else "right")
    for r in rows:
        table.add_row(r.source, *(f"{r.pooled[k]:.3f}" for k in ("kappa", "precision", "recall")),
                      *(f"{r.mean[k]:.3f}" for k in ("kappa", "precision", "recall")),
                      f"{r.selected_fraction:.1%}", f"{r.human_fraction:.1%}")
    console.print(table)
    if output:
        output.write_text(json.dumps([r.as_dict() for r in rows], indent=1))


def publish_cmd(
    family: Optional[str] = typer.Argument(None, help="Resource family, e.g. aixi (not with --site)."),
    repo_id: Optional[str] = typer.Option(None, "--repo-id", help="Hub repository: a dataset (org/xaibench-aixi) "
                                          "for a resource, a static Space (org/leaderboard) for --site."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/<family>)."),
    private: bool = typer.Option(False, help="Create the repository as private."),
    dry_run: bool = typer.Option(False, help="Verify and list the files, upload nothing."),
    site: Optional[Path] = typer.Option(None, "--site", file_okay=False, help="Publish a site built by "
                                        "`xaibench site --out DIR` instead of a resource: to a Hub Space "
                                        "(--repo-id) or a static host folder (--to)."),
    to: Optional[Path] = typer.Option(None, "--to", file_okay=False, help="--site: copy it into this folder "
                                      "(replaced atomically), e.g. a web server's document root."),
) -> None:
    """Publish a resource family or a leaderboard site.

    Verifies a resource family (checksums, `load_dataset` on every config) and uploads it to the Hub;
    or, with --site, checks a built leaderboard site (every link) and uploads or copies it."""
    from benchmark.errors import XaibenchError
    from generators.publish import publish, publish_site

    verb = "would upload" if dry_run else "uploaded"
    if site is not None:
        if family is not None:
            raise XaibenchError("give either a resource family or --site, not both")
        files = publish_site(site, repo_id=repo_id, to=to, private=private, dry_run=dry_run)
        where = f"the Space {repo_id}" if repo_id else str(to)
        console.print(f"{'would copy' if dry_run and to else 'copied' if to else verb} {len(files)} files of "
                      f"{site} to {where}")
        return
    if family is None or repo_id is None:
        raise XaibenchError("publish needs a resource family and --repo-id (or --site DIR with --repo-id / --to)")
    files = publish(family, repo_id, root=root, private=private, dry_run=dry_run)
    console.print(f"{verb} {len(files)} files to {repo_id}:")
    for f in files:
        console.print(f"  {f}")


DemoTrack = StrEnum("DemoTrack", ["aixi", "idc", "rcnn", "trust", "robustness"])  # generators.demo.PLAN


def demo_cmd(
    track: Optional[List[DemoTrack]] = typer.Option(None, "--track", "-t", help="Only these tracks (repeatable; "
                                                    "default: all five)."),
    site: Path = typer.Option(Path("site"), file_okay=False, help="Where the static site is built."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=64, help="Tracks run at once, each in "
                                       "its own one-thread process (default: one per core). The numbers do not "
                                       "depend on it."),
    yardstick: bool = typer.Option(True, "--yardstick/--no-yardstick", help="At the end, time a small fixed CPU "
                                   "workload (about 10 s; python -m generators.yardstick) so the demo's time can be "
                                   "scaled to another machine."),
) -> None:
    """Run every kind of ground truth end to end, offline.

    For each track (AIXI, IDC, RCNN, trust, robustness) builds a small resource from the data mirror,
    trains what it needs, evaluates the built-in explainers or oracles on it; then prints the
    leaderboard and builds the static site. Every step is an ordinary `xaibench` command, printed
    before it runs; tracks run side by side, one per core, each line after its track's name. A second
    run (or one after a run killed halfway) redoes only what is missing; a track whose data is absent
    or whose step fails is reported and the others go on."""
    from rich.table import Table

    from benchmark.cli import _run
    from generators.demo import run_lanes

    t0 = time.perf_counter()
    outcomes = run_lanes(lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True),
                         tuple(str(t) for t in track) if track else None, jobs=jobs, columns=console.width)
    # the site is built in a process of its own while the leaderboard prints (≈ 19 s and 10 s, 2026-11-29);
    # its lines follow the leaderboard's. Should the leaderboard write Results (a floor a board missed,
    # `--run-floors`), the site is built again from them
    from benchmark.resources.store import data_home

    def results_state() -> set[tuple[str, int]]:
        return {(str(p), p.stat().st_mtime_ns) for p in (data_home() / "results").rglob("*.json")}

    before = results_state()
    site_proc = subprocess.Popen([sys.executable, "-c", "from benchmark.cli import main; main()", "site", "--out",
                                  str(site)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 errors="replace", env={**os.environ, "COLUMNS": str(console.width)})
    try:
        console.rule("xaibench leaderboard")
        _run(["leaderboard"])
    finally:
        site_out, _ = site_proc.communicate()
    console.rule(f"xaibench site --out {site}")
    if site_proc.returncode != 0 or results_state() != before:
        _run(["site", "--out", str(site)])
    else:
        console.print(site_out.rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
    table = Table(title="the demo, track by track", title_justify="left")
    for col in ("track", "outcome", "minutes", "why not"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        table.add_row(o.name, o.status, f"{o.seconds / 60:.1f}", o.reason or "")
    console.print(table)
    index = (Path(site) / "index.html").resolve()
    wall = time.perf_counter() - t0
    console.print(f"demo: {wall:.0f} s in all; open {index.as_uri()}", highlight=False, soft_wrap=True)
    if yardstick:  # this machine's speed beside the time, so it can be scaled to another's (docs/demo.md)
        from generators.yardstick import line, measure

        console.print(line(measure()), highlight=False, soft_wrap=True)
    if not any(o.status == "built" for o in outcomes):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    from generators.reference.cli import register as register_reference

    app.command("demo")(demo_cmd)
    register_reference()
    app.add_typer(generate_app, name="generate")
    app.add_typer(train_app, name="train")
    app.add_typer(reproduce_app, name="reproduce")
    app.command("publish")(publish_cmd)
    app.command("agreement")(agreement_cmd)
