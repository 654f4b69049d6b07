"""`xaibench generate trust`: trust sets from people's rationales (SPECS §1.8), the embedding ensemble
resource (θ_relate per model, SPECS §1.3/§1.5) and the importer for trust sets labelled by people.
Registered on the `generate` command group by `register(generate_app)` (generators/cli.py)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from benchmark.options import SEED_MAX
from benchmark.progress import console


class TrustDataset(str, Enum):
    hatexplain = "hatexplain"
    cams = "cams"
    movies = "movies"


class Tie(str, Enum):
    exclude = "exclude"
    trustworthy = "trustworthy"
    untrustworthy = "untrustworthy"


def generate_trust(
    dataset: List[TrustDataset] = typer.Option([], "--dataset", "-d",
                                      help="hatexplain, cams and/or movies (repeatable): train the model under "
                                      "test, explain its correct test predictions with LIME and label them by "
                                      "explanation precision ≥ 0.5 (config trust/<dataset>-cnn)."),
    embeddings: bool = typer.Option(False, "--embeddings", help="Build trust/embeddings: train word2vec / fastText "
                                    "on the local corpora and estimate θ_relate per embedding model."),
    embedding_model: List[str] = typer.Option([], "--embedding-model", help="--embeddings: only these models "
                                              "(repeatable; default all five: minilm-word, minilm-static, glove-50d, "
                                              "word2vec, fasttext). The three pre-trained ones need no training."),
    import_file: Optional[Path] = typer.Option(None, "--import", help="Import a trust set labelled by people "
                                               "(CSV / JSON lines / Parquet; layout in generators/trust/importer.py)."),
    name: Optional[str] = typer.Option(None, help="--import: config name (trust/<name>)."),
    classes: List[str] = typer.Option([], "--class", help="--import: class names in label order (repeatable)."),
    tie: Tie = typer.Option(Tie.exclude, help="--import: vote ties → exclude | trustworthy | untrustworthy."),
    num_samples: int = typer.Option(5000, min=1, max=1_000_000,
                                    help="LIME samples per explained prediction (paper: 5,000)."),
    top_k: int = typer.Option(10, min=1, max=1000, help="Top positive words per explanation (paper: 10)."),
    epochs: int = typer.Option(10, min=1, max=10_000,
                               help="Training epochs of the Kim CNN (best validation epoch kept)."),
    max_len: Optional[int] = typer.Option(None, min=1, max=100_000, help="Truncate documents to N tokens (default "
                                          "per data set: hatexplain 80, cams 256, movies 500)."),
    test_limit: Optional[int] = typer.Option(None, min=1, help="Explain a seeded random sample of N eligible test "
                                             "predictions (reduced scale; the rest are counted as excluded)."),
    model: str = typer.Option("cnn", "--model", help="Model under test: cnn (Kim CNN trained on labels, CPU default), "
                              "cnn-sup (the Kim CNN with rationale supervision, see --rationale-loss) or minilm "
                              "(all-MiniLM-L6-v2 fine-tuned; reduced CPU scale: 2,000 training documents, 48 words, "
                              "use --epochs 1)."),
    rationale_loss: str = typer.Option("erasure", help="cnn-sup: the auxiliary loss toward the training rationales: "
                                       "erasure (sufficiency + comprehensiveness on erased posts), rrr (input-gradient "
                                       "penalty outside the rationale) or attribution (gradient×input cross-entropy)."),
    rationale_weight: float = typer.Option(1.0, min=0.0, help="cnn-sup: λ, the auxiliary loss's weight."),
    validation_limit: Optional[int] = typer.Option(None, min=0, help="Explain a seeded sample of N eligible "
                                                   "validation predictions (what θ_dist / θ_conf are tuned on; "
                                                   "0 = none)."),
    train_explain_limit: Optional[int] = typer.Option(None, min=0, help="LIME-explain a seeded sample of N correct "
                                                      "training predictions for TOKI's pipeline 1 (default: all)."),
    tune: List[str] = typer.Option([], "--tune", help="Tune θ_dist (TOKI-lime) and θ_conf (Naive) on the validation "
                                   "split of these built trust configs (repeatable), e.g. hatexplain-cnn-sup."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Split / sampling seed."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/trust)."),
    overwrite: bool = typer.Option(False, help="Retrain the model even if trained on the same corpus."),
) -> None:
    """Build trust-track resources.

    TOKI's trust sets (SPECS §1.8): trust/<dataset>-cnn, trust/embeddings, imported sets, tuning."""
    if not dataset and not embeddings and import_file is None and not tune:
        raise typer.BadParameter("give --dataset, --embeddings, --import or --tune")
    if embeddings:
        from generators.trust.embeddings import EmbeddingsConfig, build_embeddings

        cfg = EmbeddingsConfig(models=tuple(embedding_model)) if embedding_model else None
        meta = build_embeddings(cfg, root=root)
        console.print(f"[green]trust/embeddings[/] revision {meta['revision']}")
    for d in [str(x.value) for x in dataset]:
        from generators.trust.build import TrustBuildConfig, build_trust
        from generators.trust.data import DATASETS

        if d not in DATASETS:
            raise typer.BadParameter(f"dataset must be one of {', '.join(DATASETS)}")
        build_trust(TrustBuildConfig(dataset=d, model=model, num_samples=num_samples, top_k=top_k, epochs=epochs,
                                     max_len=max_len, test_limit=test_limit, seed=seed,
                                     validation_limit=validation_limit, train_explain_limit=train_explain_limit,
                                     rationale_loss=rationale_loss, rationale_weight=rationale_weight),
                    root=root, overwrite=overwrite)
    if import_file is not None:
        from generators.trust.importer import import_trust_set

        if not name or not classes:
            raise typer.BadParameter("--import needs --name and the --class names in label order")
        out = import_trust_set(import_file, name, classes, tie=tie.value, root=root)
        s = out["stats"]
        console.print(f"[green]trust/{name}[/]: trust {s['trust']} / untrust {s['untrust']}; "
                      f"exclusions {s['exclusions']}")


    for config in tune:
        from generators.trust.tune import tune_trust_set, tuning_path

        out = tune_trust_set(config, root=root)
        console.print(f"[green]trust/{config}[/] tuned on {out['validation']['n']} validation predictions: "
                      f"θ_dist {out['toki-lime']['theta_dist']:g} (paper 0.3), "
                      f"θ_conf {out['naive-oracle']['theta_conf']:g} "
                      f"(paper 0.9) → {tuning_path(config)}")


def register(app: typer.Typer) -> None:
    """Add `trust` to the `generate` command group."""
    app.command("trust")(generate_trust)
