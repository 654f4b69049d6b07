"""CLI commands contributed by the generators package (registered via `xaibench.commands`):
`xaibench generate aixi`, `xaibench train aixi`, `xaibench publish`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from benchmark.progress import console
from generators.rcnn_cli import register_rcnn

generate_app = typer.Typer(help="Build ground-truth resources.", no_args_is_help=True)
register_rcnn(generate_app)
__import__("generators.trust.cli").trust.cli.register(generate_app)
train_app = typer.Typer(help="Train the models under test of a resource.", no_args_is_help=True)
reproduce_app = typer.Typer(help="Re-run a paper's experiments and print our numbers beside the paper's.",
                            no_args_is_help=True)


@generate_app.command("aixi")
def generate_aixi(
    dataset: List[str] = typer.Option(["shape", "color"], "--dataset", "-d",
                                      help="AIXI-Shape ('shape') and/or AIXI-Color ('color'); repeatable."),
    scale: str = typer.Option("default", help="paper = 50,000 train / 2,000 validation (the authors' setting); "
                              "default = small enough for a laptop; tiny = for tests."),
    n_train: Optional[int] = typer.Option(None, help="Override the scale's number of training images."),
    n_val: Optional[int] = typer.Option(None, help="Override the scale's number of validation images."),
    functions: List[str] = typer.Option(["ssin", "suum", "class"], "--functions", "-f",
                                        help="Attribution functions, one config each (ssin, suum, class)."),
    seed: int = typer.Option(42, help="Seed of the drawing stream (the authors seed Python's random with 42)."),
    class_rule: str = typer.Option("count", help="Class label rule: 'count' = [ι1 > ι2]; "
                                   "'weighted' = [w1 ι1 − w2 ι2 > 0]."),
    workers: Optional[int] = typer.Option(None, help="Rendering processes (default: all cores)."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/aixi)."),
    overwrite: bool = typer.Option(False, help="Replace existing configs."),
) -> None:
    """Generate AIXI-Shape / AIXI-Color images with pixel-exact ground-truth maps (one config per
    dataset × function, e.g. aixi/shape-ssin)."""
    from generators.aixi.build import SCALES, build_aixi

    if scale not in SCALES:
        raise typer.BadParameter(f"scale must be one of {', '.join(SCALES)}")
    nt, nv = SCALES[scale]
    for d in dataset:
        metas = build_aixi(d, n_train or nt, n_val or nv, root=root, seed=seed, functions=tuple(functions),
                           class_rule=class_rule, workers=workers, overwrite=overwrite)
        for config, meta in metas.items():
            console.print(f"[green]aixi/{config}[/] revision {meta['revision']}: "
                          + ", ".join(f"{s} {i['rows']}" for s, i in sorted(meta["splits"].items())))


@generate_app.command("idc")
def generate_idc(
    pgt: List[str] = typer.Option(["wga", "milp", "hybrid"], "--pgt", "-p",
                                  help="Pseudo-ground-truth method(s): wga, milp, hybrid; one config each."),
    pool: str = typer.Option("train+validation", help="Documents the PGTs are built from: 'train+validation' "
                             "(the paper's 8K, default) or 'train'."),
    vocab_size: int = typer.Option(3000, help="|V| for MILP (TF-IDF words) and Hybrid (WGA words)."),
    hybrid_rank: str = typer.Option("total", help="Hybrid's V: 'total' = words with the highest summed WGA "
                                    "relevance in a class; 'max' = highest max_c RS[w,c]."),
    alpha: float = typer.Option(0.3, help="WGA relevance threshold α."),
    beta: float = typer.Option(0.25, help="WGA class margin β."),
    min_words: int = typer.Option(5, help="MILP: drop documents with fewer words of V."),
    milp_time_limit: Optional[float] = typer.Option(None, help="Stop SCIP after this many seconds "
                                                    "(default: solve to proven optimality)."),
    epochs: int = typer.Option(10, help="Training epochs of the CNN and the HAN (best validation kept)."),
    seed: int = typer.Option(0, help="Seed of the 60/20/20 split of MR."),
    source: str = typer.Option("mirror", help="MR from the data mirror, a local folder (--path) or the Hub."),
    path: Optional[str] = typer.Option(None, help="Folder with rt-polarity.pos/.neg (source=local)."),
    limit: Optional[int] = typer.Option(None, help="Use only the first N documents of each split (quick runs)."),
    no_han: bool = typer.Option(False, "--no-han", help="Skip training the HAN attention model."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/idc)."),
    overwrite: bool = typer.Option(False, help="Retrain the models even if trained on the same corpus."),
) -> None:
    """Train the Kim CNN (and HAN) on MR and build the IDC pseudo ground truth (idc/mr-wga, idc/mr-milp,
    idc/mr-hybrid), SPECS §5."""
    from generators.idc.build import IdcConfig, build_idc

    cfg = IdcConfig(pgts=tuple(pgt), pool=pool, vocab_size=vocab_size, hybrid_rank=hybrid_rank, alpha=alpha,
                    beta=beta, min_words=min_words, milp_time_limit=milp_time_limit, epochs=epochs, seed=seed,
                    source=source, path=path, limit=limit, han=not no_han)
    metas = build_idc(cfg, root=root, overwrite=overwrite)
    for name, meta in metas.items():
        st = meta["stats"]
        console.print(f"[green]idc/mr-{name}[/] revision {meta['revision']}: |IF_c| "
                      + ", ".join(f"{k} {v}" for k, v in st["features_per_class"].items())
                      + f", pool covered {st['pool_covered']}, CNN test accuracy {st['cnn']['test_accuracy']:.3f}")


@train_app.command("aixi")
def train_aixi_cmd(
    resource: List[str] = typer.Argument(..., help="Resource config(s), e.g. aixi/shape-ssin."),
    epochs: int = typer.Option(30, help="Maximum epochs (best validation epoch kept)."),
    batch_size: int = typer.Option(64, help="Mini-batch size."),
    lr: float = typer.Option(1e-3, help="Adam learning rate."),
    patience: int = typer.Option(5, help="Stop after this many epochs without validation improvement."),
    max_train: Optional[int] = typer.Option(None, help="Use only the first N training images."),
    seed: int = typer.Option(0, help="Initialisation / shuffling seed."),
    overwrite: bool = typer.Option(False, help="Retrain even if a model for this revision exists."),
) -> None:
    """Train the authors' CNN on a resource and store it (safetensors) in the resource's model/ folder."""
    from generators.aixi.train import TrainConfig, train_aixi

    for r in resource:
        cfg = TrainConfig(epochs=epochs, batch_size=batch_size, lr=lr, patience=patience, seed=seed,
                          max_train=max_train)
        val = train_aixi(r, cfg, overwrite=overwrite)
        console.print(f"[green]{r}[/] CNN validation: " + ", ".join(
            f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in val.items()))


@reproduce_app.command("aixi")
def reproduce_aixi(
    experiment: List[int] = typer.Option([1, 2, 3], "--experiment", "-e",
                                         help="1 = LIME vs sample size, 2 = function model, 3 = CNN."),
    dataset: List[str] = typer.Option(["shape", "color"], "--dataset", "-d", help="shape and/or color."),
    function: List[str] = typer.Option(["ssin", "suum", "class"], "--function", "-f", help="ssin, suum, class."),
    limit: Optional[int] = typer.Option(None, help="Only the first N validation images (paper: all 2,000)."),
    attribution: str = typer.Option("signed", help="Score the signed LIME map (SPECS §3.7) or its absolute "
                                    "value ('absolute')."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
) -> None:
    """AIXI Experiments 1-3 (Miró-Nicolau et al.) with exhaustive LIME; needs the resources (and, for
    Experiment 3, trained CNNs)."""
    from generators.aixi.experiments import run, table

    rows = run(tuple(experiment), tuple(dataset), tuple(function), limit=limit, results_dir=results,
               attribution=attribution)
    console.print(table(rows))


@reproduce_app.command("idc")
def reproduce_idc(
    pgt: List[str] = typer.Option(["wga", "milp", "hybrid"], "--pgt", "-p", help="PGT configs to score against."),
    method: Optional[List[str]] = typer.Option(None, "--method", "-m", help="Submissions (default: the paper's "
                                               "six methods plus input-x-gradient, occlusion, lime-text, "
                                               "kernel-shap and random)."),
    limit: Optional[int] = typer.Option(None, help="Only the first N evaluated test documents."),
    slow_limit: Optional[int] = typer.Option(300, help="Documents for lime-text and kernel-shap."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
) -> None:
    """IDC Table 1 (Khaleel et al.): interpretation methods vs the WGA / MILP / Hybrid PGTs on the MR test
    set beside the paper's κ / P / R, and RelativeConf per PGT; needs `xaibench generate idc`."""
    from generators.idc.experiments import EXTRA_METHODS, PAPER_METHODS, run, table

    rows = run(tuple(pgt), tuple(method or PAPER_METHODS + EXTRA_METHODS), limit=limit, slow_limit=slow_limit,
               results_dir=results)
    for t in table(rows, tuple(pgt)):
        console.print(t)


@reproduce_app.command("rcnn")
def reproduce_rcnn(
    aspect: List[str] = typer.Option(["appearance", "aroma", "palate"], "--aspect", "-a",
                                     help="Aspects (those without a built rcnn/beer-<aspect> are skipped)."),
    method: Optional[List[str]] = typer.Option(None, "--method", "-m", help="Submissions (default: lime-text, "
                                               "kernel-shap, l2x, plus occlusion, saliency, integrated-gradients, "
                                               "input-x-gradient and random)."),
    limit: Optional[int] = typer.Option(None, help="Only the first N verified reviews."),
    slow_limit: Optional[int] = typer.Option(300, help="Reviews for lime-text and kernel-shap."),
    results: Optional[Path] = typer.Option(None, help="Results folder (default $XAIBENCH_HOME/results)."),
) -> None:
    """Camburu et al.'s Tables 1 and 2 (RCNN zero-contribution): LIME, SHAP, L2X and more on each built
    aspect beside the paper's error rates, and the verified datasets' statistics beside the paper's;
    needs `xaibench generate rcnn`."""
    from generators.rcnn.build import ASPECT_CONFIGS
    from generators.rcnn.data import aspect_name
    from generators.rcnn.experiments import EXTRA_METHODS, PAPER_METHODS, built_aspects, run, table

    try:
        wanted = [aspect_name(a) for a in aspect]
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
    split: List[str] = typer.Option(["val"], "--split", help="Rationale split(s): train and/or val."),
    limit: Optional[int] = typer.Option(None, help="Only the first N documents."),
    alpha: float = typer.Option(0.3, help="Explainers: tokens with normalised score ≥ α are relevant."),
    top_fraction: Optional[float] = typer.Option(None, help="Explainers: mark this fraction of each document's "
                                                 "tokens instead of thresholding."),
    seed: int = typer.Option(0, help="Seed handed to explainers."),
    output: Optional[Path] = typer.Option(None, help="Also write the figures as JSON here."),
) -> None:
    """Agreement with people: score PGTs and explainers against human rationales (ERASER shape) —
    Cohen's κ, precision and recall over token positions, pooled and per document."""
    import json

    from rich.table import Table

    from benchmark.resources import load_resource
    from benchmark.submission import get_submission
    from benchmark.tracks import get_track
    from generators.corpora import load_eraser
    from generators.idc.agreement import explainer_agreement, pgt_agreement

    if not pgt and not explainer:
        raise typer.BadParameter("give at least one --pgt or --explainer")
    corpus = load_eraser(rationales, split=tuple(split))
    docs = list(corpus.documents())[:limit] if limit else list(corpus.documents())
    rows = [pgt_agreement(load_resource(p), docs, corpus.classes) for p in pgt]
    if explainer:
        res_name, _, model_name = model.partition(":")
        res = load_resource(res_name)
        trk = get_track(res.family)
        wrapped, _ = trk.build_model(res, model_name or "cnn", None)
        for e in explainer:
            sub = get_submission(e)
            rows.append(explainer_agreement(sub.instantiate({}), wrapped, docs, name=f"{sub.name} on {model}",
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
    family: str = typer.Argument(..., help="Resource family, e.g. aixi."),
    repo_id: str = typer.Option(..., "--repo-id", help="Hub dataset repository, e.g. my-org/xaibench-aixi."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/<family>)."),
    private: bool = typer.Option(False, help="Create the repository as private."),
    dry_run: bool = typer.Option(False, help="Verify and list the files, upload nothing."),
) -> None:
    """Verify a resource family (checksums, `load_dataset` on every config) and upload it to the Hub."""
    from generators.publish import publish

    files = publish(family, repo_id, root=root, private=private, dry_run=dry_run)
    verb = "would upload" if dry_run else "uploaded"
    console.print(f"{verb} {len(files)} files to {repo_id}:")
    for f in files:
        console.print(f"  {f}")


def register(app: typer.Typer) -> None:
    app.add_typer(generate_app, name="generate")
    app.add_typer(train_app, name="train")
    app.add_typer(reproduce_app, name="reproduce")
    app.command("publish")(publish_cmd)
    app.command("agreement")(agreement_cmd)
