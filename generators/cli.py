"""CLI commands contributed by the generators package (registered via `xaibench.commands`):
`xaibench generate aixi`, `xaibench train aixi`, `xaibench publish`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from benchmark.progress import console

generate_app = typer.Typer(help="Build ground-truth resources.", no_args_is_help=True)
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
