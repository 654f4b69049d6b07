"""`xaibench generate rcnn`: train the RCNN rationale model of an aspect and build the verified
zero-contribution resource `rcnn/beer-<aspect>` (SPECS §4). Registered on the `generate` command group
by `register_rcnn(generate_app)` (generators/cli.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, List, Optional

import typer

from benchmark.options import SEED_MAX, TIME_BUDGET_MAX_S, device_name, exclusive
from benchmark.progress import console

# Fixed value sets of the options (tests/test_cli_options.py checks each against the code that reads it).
# Aspects: the names of generators.rcnn.data.ASPECTS, its ALIASES and the indices 0-2.
Aspect = StrEnum("Aspect", ["appearance", "aroma", "palate", "look", "smell", "0", "1", "2"])
RcnnScale = StrEnum("RcnnScale", ["quick", "paper"])  # generators.rcnn.build.SCALES
RcnnPool = StrEnum("RcnnPool", ["rest", "all"])  # generators.rcnn.build.POOLS
Tokenization = StrEnum("Tokenization", ["project", "lei"])  # generators.rcnn.data.TOKENIZATIONS
LongReviews = StrEnum("LongReviews", ["truncate", "exclude"])


@dataclass
class _RcnnJob:
    """What `generate rcnn` builds for each aspect: the options of `build_rcnn` and of its two configs."""

    build: dict[str, Any]  # RCNNBuildConfig fields (all but the aspect)
    scale: str  # the recipe, generators.rcnn.build.SCALES
    overrides: dict[str, Any]  # recipe fields the scale function takes as overrides
    train: dict[str, Any]  # RCNNTrainConfig fields replaced after that (seed, time budget, device, …)
    data: str | None
    root: Path | None
    model_dir: Path | None
    vectors: Path | None
    overwrite: bool
    accept_partial: bool
    accept_below_target: bool
    seeds: int


def _recipe_overrides(hidden: int | None, lr: float | None, epochs: int | None, sparsity: float | None,
                      coherent: float | None, sparsity_target: float | None,
                      patience: int | None = None) -> dict[str, Any]:
    """The recipe fields given on the command line (`--sparsity-target 0` = Lei's cost: None)."""
    overrides: dict[str, Any] = {k: v for k, v in {"hidden": hidden, "lr": lr, "max_epochs": epochs,
                                                   "sparsity": sparsity, "coherent": coherent,
                                                   "patience": patience}.items()
                                 if v is not None}
    if sparsity_target is not None:
        overrides["sparsity_target"] = sparsity_target or None
    return overrides


def _generate_aspect(a: str, job: _RcnnJob) -> None:
    """Build `rcnn/beer-<a>`; a time-budget stop exits 3, a model below target 4, bad input is a usage error."""
    from benchmark.errors import ResourceError
    from benchmark.models.rcnn_targets import describe
    from generators.rcnn.build import SCALES, BelowTarget, RCNNBuildConfig, TrainingIncomplete, build_rcnn

    try:
        cfg = RCNNBuildConfig(aspect=a, **job.build)
        tcfg = replace(SCALES[job.scale](cfg.aspect, **job.overrides), **job.train)
        meta = build_rcnn(cfg.aspect, job.data, job.root, config=cfg, train_config=tcfg, model_dir=job.model_dir,
                          vectors_path=job.vectors, overwrite=job.overwrite, accept_partial=job.accept_partial,
                          accept_below_target=job.accept_below_target, seeds=job.seeds)
    except TrainingIncomplete as exc:
        console.print(f"[yellow]{exc}")
        raise typer.Exit(3) from exc
    except BelowTarget as exc:
        console.print(str(exc), style="red", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(4) from exc
    except (ResourceError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    st = meta["stats"]
    console.print(f"[green]rcnn/beer-{cfg.aspect}[/] revision {meta['revision']}: N = {st['N']}, dev MSE "
                  f"{st['dev_mse']:.4f}; {describe(st['selection'])}")


def generate_rcnn(
    aspect: List[Aspect] = typer.Option(["appearance"], "--aspect", "-a", case_sensitive=False,
                                        help="Aspect(s): appearance, aroma, palate (or look / smell / 0-2); "
                                        "one resource config each (rcnn/beer-<aspect>)."),
    data: Optional[str] = typer.Option(None, help="Folder of Lei's beer files (reviews.aspect<k>.{train,heldout}"
                                       ".txt.gz, annotations.json) or a Hub dataset id; default: the data mirror."),
    scale: RcnnScale = typer.Option("quick", help="RCNN recipe: 'paper' = Lei's defaults (hidden 200, batch "
                                    "256, lr 5e-4, ≤ 100 epochs, patience 10); 'quick' = hidden 64, batch 64, "
                                    "lr 2e-3, ≤ 30 epochs, patience 10, sparsity target 11.5 %, λ_c = λ_s, the "
                                    "kept epoch inside 10–13 % selected (minutes on a CPU; docs/rcnn.md)."),
    pool: RcnnPool = typer.Option("rest", help="Instance pool: 'rest' = reviews never used to fit the model "
                                  "(default); 'all' = every review of the files (the paper's reading, SPECS §4.4)."),
    pool_fraction: float = typer.Option(0.4, min=0, max=1, callback=exclusive(0, 1),
                                        help="One review file, --pool rest: the share kept as the pool (0 < f < 1)."),
    dev_fraction: float = typer.Option(0.1, min=0, max=1, callback=exclusive(0, 1),
                                       help="Share of the fitting reviews held out for early stopping (0 < f < 1)."),
    split_seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Seed of the train / dev / pool split."),
    tau: float = typer.Option(0.1, min=0, callback=exclusive(0),
                              help="Δ threshold of a clearly relevant (SR) token (> 0)."),
    tokenization: Tokenization = typer.Option("project", help="'project' (re-tokenised) or 'lei' (Lei's tokens)."),
    long: LongReviews = typer.Option("truncate", help="Reviews over 256 tokens: 'truncate' (Lei) or 'exclude'."),
    decorrelate: Optional[float] = typer.Option(None, min=0, max=1, callback=exclusive(0),
                                                help="One review file: train on this share of the file's reviews "
                                                "whose aspect rating the other four ratings predict worst (Lei's "
                                                "aspect files were made less correlated so; the pool is the "
                                                "file's other reviews); default all."),
    decorrelate_max_corr: Optional[float] = typer.Option(None, min=0, max=1, callback=exclusive(0),
                                                         help="One review file: train on the most of its least "
                                                         "predictable reviews at which the aspect correlates with "
                                                         "no other rating by more than this (Lei's appearance "
                                                         "file: 0.27); the pool is the file's other reviews."),
    lexicon_alpha: float = typer.Option(1.0, min=0, max=1000, callback=exclusive(0),
                                        help="Add-α smoothing of the lexicon (the training reviews' class log-odds, "
                                        "a read-only asset for the data-prior controls)."),
    lexicon_threshold: float = typer.Option(0.6, min=0, max=1, callback=exclusive(0, 1),
                                            help="The lexicon's classes: a training review is 'high' when its "
                                            "rating of the aspect is at least this (0 < t < 1), else 'low'."),
    limit: Optional[int] = typer.Option(None, min=1, help="Read only the first N lines of each review file."),
    pool_limit: Optional[int] = typer.Option(None, min=1, help="Verify only the first N pool reviews."),
    model_dir: Optional[Path] = typer.Option(None, help="Reuse an RCNN trained elsewhere (its folder with "
                                             "config.json + model.safetensors) instead of training."),
    vectors: Optional[Path] = typer.Option(None, help="Lei's review+wiki.filtered.200.txt.gz (default: "
                                           "word2vec trained on the training reviews)."),
    hidden: Optional[int] = typer.Option(None, min=1, help="Override the recipe's hidden size."),
    lr: Optional[float] = typer.Option(None, min=0, max=1, callback=exclusive(0),
                                       help="Override the recipe's learning rate (0 < lr ≤ 1)."),
    epochs: Optional[int] = typer.Option(None, min=1, help="Override the recipe's maximum epochs."),
    patience: Optional[int] = typer.Option(None, min=1, help="Override the recipe's patience: stop after this many "
                                           "epochs without a better kept epoch (never while no epoch has reached "
                                           "the target band)."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="RCNN initialisation / sampling seed (the first one)."),
    seeds: int = typer.Option(3, min=1, max=20, help="Train with up to this many seeds (--seed, --seed + 1 and so "
                              "on) and keep the first whose dev selection rate is within the target 10–13 % (dev split "
                              "only; REINFORCE training depends on the seed)."),
    sparsity: Optional[float] = typer.Option(None, min=0, max=1, help="Override λ_s (Lei: 3e-4)."),
    coherent: Optional[float] = typer.Option(None, min=0, max=100, help="Override λ_c / λ_s (Lei: 2.0; quick: 1.0)."),
    sparsity_target: Optional[float] = typer.Option(None, min=0, max=1, help="Override the target selection "
                                                    "rate α of the sparsity cost λ_s |Σz − α|x|| (quick: 0.115); "
                                                    "0 = Lei's cost λ_s Σz."),
    sparsity_warmup: int = typer.Option(0, min=0, max=1000, help="Ramp λ_s and λ_c from 0 to their value over "
                                        "the first N epochs (aroma / palate collapse to empty selections "
                                        "without help on the 10,000-review file)."),
    encoder_warmup: int = typer.Option(0, min=0, max=1000, help="Train the encoder alone on every token for the "
                                       "first N epochs (no selection yet); the sparsity warm-up follows it."),
    init_from: Optional[Path] = typer.Option(None, help="Start generator and encoder from this trained RCNN "
                                             "folder (e.g. <home>/resources/rcnn/model/beer-appearance); same "
                                             "hidden size, order and depth."),
    max_seconds: Optional[float] = typer.Option(None, min=0, max=TIME_BUDGET_MAX_S, callback=exclusive(0),
                                                help="Training time budget of this call; the build stops with a "
                                                "checkpoint and resumes when run again."),
    accept_partial: bool = typer.Option(False, help="Build with the best epoch so far when the training "
                                        "stopped at --max-seconds."),
    accept_below_target: bool = typer.Option(False, help="Publish the resource even when its RCNN is outside "
                                             "Lei's targets (10–13 % of the dev tokens selected, precision ≥ 90 % "
                                             "against the human rationales); the card and its Results say so."),
    threads: Optional[int] = typer.Option(None, min=1, help="torch threads (default: torch's)."),
    device: str = typer.Option("auto", callback=device_name,
                               help="Training device: 'auto' (CUDA when available), 'cpu', 'cuda[:k]'. "
                               "Verification and the saved model run on the CPU."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/rcnn)."),
    overwrite: bool = typer.Option(False, help="Retrain the RCNN even if one was trained on the same data."),
) -> None:
    """Train Lei's rationale model and build the RCNN ground truth.

    Trains the RCNN rationale model (Lei et al. 2016) and builds the zero-contribution ground truth of
    Camburu et al. (2019): reviews whose tokens are N (zero contribution) / SDK / SR."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    build = {"pool": str(pool), "pool_fraction": pool_fraction, "dev_fraction": dev_fraction,
             "split_seed": split_seed, "tau": tau, "tokenization": str(tokenization), "long": str(long),
             "limit": limit, "pool_limit": pool_limit, "decorrelate": decorrelate,
             "decorrelate_max_corr": decorrelate_max_corr, "lexicon_alpha": lexicon_alpha,
             "lexicon_threshold": lexicon_threshold}
    train = {"seed": seed, "max_seconds": max_seconds, "threads": threads, "device": device,
             "sparsity_warmup": sparsity_warmup, "encoder_warmup": encoder_warmup,
             "init_from": str(init_from) if init_from else None}
    job = _RcnnJob(build, str(scale), _recipe_overrides(hidden, lr, epochs, sparsity, coherent, sparsity_target,
                                                         patience),
                   train, data, root, model_dir, vectors, overwrite, accept_partial, accept_below_target, seeds)
    for a in (str(a) for a in aspect):
        _generate_aspect(a, job)


def register_rcnn(generate_app: typer.Typer) -> None:
    """Add `generate rcnn` to the `generate` command group."""
    generate_app.command("rcnn")(generate_rcnn)
