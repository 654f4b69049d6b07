"""`xaibench generate robustness` and `xaibench reproduce tef` (registered by generators/cli.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from enum import StrEnum

from benchmark.options import SEED_MAX, exclusive
from benchmark.progress import console


# generators.robustness.train.MODELS
RobustModel = StrEnum("RobustModel", ["cnn", "lstm", "lstm-att", "minilm"])
Embeddings = StrEnum("Embeddings", ["random", "glove-50d"])  # generators.text_trainer.EMBEDDINGS
# generators.robustness.build.ATTACKS
RobustAttack = StrEnum("RobustAttack", ["tef", "ra", "ri", "rs", "su"])
VocabRule = StrEnum("VocabRule", ["extend", "drop", "off"])  # generators.robustness.build.VOCAB_RULES


def generate_robustness(
    model: List[RobustModel] = typer.Option(["cnn", "lstm", "lstm-att"], "--model", "-m",
                                    help="Models under test: cnn, lstm, lstm-att, minilm (one config "
                                    "robustness/mr-<model> each)."),
    attack: List[RobustAttack] = typer.Option(["tef", "ra", "ri", "rs", "su"], "--attack", "-a",
                                              help="tef, ra, ri, rs, su (the semi-universal policy, learned from TEF "
                                              "on the other half of the test set)."),
    explainer: Optional[List[str]] = typer.Option(None, "--explainer", "-e",
                                                  help="Explainers attacked live, repeatable (default: saliency, "
                                                  "attention, integrated-gradients; those that cannot explain a "
                                                  "model are recorded and skipped)."),
    reference: str = typer.Option("saliency", help="The explainer whose attacks the robustness track re-scores."),
    samples: int = typer.Option(100, min=1, max=100_000, help="Correctly classified MR test sentences per model."),
    slow_samples: Optional[int] = typer.Option(None, min=1, max=100_000, help="At most this many samples for "
                                               "the slow explainers (integrated-gradients; reduced scale)."),
    policy_samples: Optional[int] = typer.Option(None, min=0, max=100_000, help="TEF samples per model and "
                                                 "explainer on the policy half for su (default: --samples; 0: no su)."),
    policy_pos: bool = typer.Option(True, "--policy-pos/--no-policy-pos", help="su replaces a word only where its "
                                    "part of speech stays the same."),
    vocab_rule: VocabRule = typer.Option("extend", help="Swaps the model can read: extend (every synonym-space "
                                         "word gets its own frozen GloVe row in the word models), drop (candidates "
                                         "the model cannot represent are dropped), off (they map to <unk>)."),
    candidates: int = typer.Option(15, min=1, max=100, help="N nearest neighbours per word (paper: 15)."),
    epochs: int = typer.Option(6, min=1, max=100, help="Training epochs (best validation epoch kept)."),
    embeddings: Embeddings = typer.Option("glove-50d", help="The word models' embeddings: glove-50d (GloVe 6B "
                                          "50-d; the paper used GloVe 300-d) or random (trainable, 128-d)."),
    freeze_embeddings: Optional[bool] = typer.Option(None, "--freeze-embeddings/--train-embeddings",
                                                     help="Keep the word models' embeddings fixed while "
                                                     "training or train them (default: frozen GloVe as in "
                                                     "SPECS §2.8, trained random embeddings)."),
    vectors: Optional[Path] = typer.Option(None, help="Counter-fitted word vectors (text file, the paper's "
                                           "synonym space); default: GloVe-50d counter-fitted with WordNet."),
    seed: int = typer.Option(0, min=0, max=SEED_MAX, help="Sample choice and random attack seed."),
    explainer_param: Optional[List[str]] = typer.Option(None, "--explainer-param", help="Override an explainer "
                                                        "parameter, repeatable: NAME:KEY=VALUE (e.g. "
                                                        "integrated-gradients:n_steps=10)."),
    append: bool = typer.Option(False, help="Keep the rows of other explainers already in the config."),
    no_similarity: bool = typer.Option(False, "--no-similarity", help="Skip the MiniLM sentence similarity."),
    lexicon_alpha: float = typer.Option(1.0, min=0, max=1000, callback=exclusive(0),
                                        help="Add-α smoothing of the lexicon (the training split's class log-odds, "
                                        "a read-only asset for the data-prior controls)."),
    root: Optional[Path] = typer.Option(None, help="Resource folder (default $XAIBENCH_HOME/resources/robustness)."),
    overwrite: bool = typer.Option(False, help="Retrain the models even if trained on the same corpus."),
) -> None:
    """Attack MR's text models: the robustness resources.

    TEF / RA / RI / RS attacks on MR against the CPU text models (SPECS §2): robustness/mr-<model>."""
    from generators.robustness.build import RobustnessConfig, build_robustness

    from generators.robustness.build import DEFAULT_EXPLAINERS

    cfg = RobustnessConfig(models=tuple(str(m) for m in model), attacks=tuple(str(a) for a in attack),
                           explainers=tuple(explainer or DEFAULT_EXPLAINERS),
                           reference_explainer=reference, n_samples=samples, slow_samples=slow_samples,
                           n_candidates=candidates,
                           policy_samples=policy_samples, policy_pos=policy_pos, vocab_rule=str(vocab_rule),
                           epochs=epochs, embeddings=str(embeddings), freeze_embeddings=freeze_embeddings,
                           vectors=str(vectors) if vectors else None, seed=seed,
                           similarity=not no_similarity, explainer_params=_params(explainer_param or []),
                           append=append, lexicon_alpha=lexicon_alpha)
    metas = build_robustness(cfg, root=root, overwrite=overwrite)
    for name, meta in metas.items():
        accs = ", ".join(f"{k} {v['acc']:.3f}" for k, v in meta["stats"]["curves"].items())
        console.print(f"[green]robustness/mr-{name}[/] revision {meta['revision']}: ACC {accs}")


def _params(items: list[str]) -> dict:
    import json

    out: dict = {}
    for it in items:
        name, _, kv = it.partition(":")
        key, eq, value = kv.partition("=")
        if not name or not key or not eq:
            raise typer.BadParameter(f"--explainer-param {it!r}: expected NAME:KEY=VALUE")
        try:
            v = json.loads(value)
        except ValueError:
            v = value
        out.setdefault(name, {})[key] = v
    return out


def reproduce_tef(
    out: Optional[Path] = typer.Option(None, help="Output folder (default $XAIBENCH_HOME/results/tef)."),
    transfer_model: List[RobustModel] = typer.Option(["cnn", "lstm", "lstm-att"], "--transfer-model",
                                                     help="Models of the transfer table (repeatable; minilm adds a "
                                                     "MiniLM gradient pass per transferred text)."),
    no_transfer: bool = typer.Option(False, "--no-transfer", help="Skip the transfer table."),
    variant: Optional[List[str]] = typer.Option(None, "--variant", help="LABEL=ROOT: also tabulate the robustness "
                                                "resources built under ROOT (e.g. another --vocab-rule), repeatable."),
    table4: bool = typer.Option(False, "--table4", help="Also run Table 4 of TOKI (A2T vs TOKI-guided A2T, SPECS "
                                "§1.9; resumable; hours on 2 CPU cores at full scale)."),
    table4_model: RobustModel = typer.Option("minilm", help="Model under attack for Table 4 (its folder must exist: "
                                             "`xaibench generate robustness -m minilm`)."),
    table4_n: int = typer.Option(1066, min=1, max=1066, help="Sentences per seeded run (1,066 = the whole "
                                 "rotten_tomatoes-sized test set)."),
    table4_seeds: int = typer.Option(10, min=1, max=100, help="Seeded runs (seeds 0 to N−1)."),
    toki: bool = typer.Option(True, "--toki/--no-toki", help="Table 4's TOKI-guided attack (needs `xaibench generate "
                              "trust --embeddings`)."),
    toki_train: int = typer.Option(1000, min=10, help="Training predictions TOKI explains (pipeline 1)."),
    toki_explainer: str = typer.Option("grad", help="TOKI's explainer for pipeline 1 (grad, lime, omission)."),
    toki_candidates: str = typer.Option("pools", help="TOKI-guided candidates: pools (the paper's: TOKI's own "
                                        "pools, similar = TOKI's relatedness) or a2t-neighbourhood (pool words in "
                                        "A2T's counter-fitted cosine ≥ 0.8 neighbourhood)."),
) -> None:
    """TEF's curves and ACC beside the paper's findings.

    Ivankay et al. (2022): PCC-vs-ρ curves (PNG), ACC per explainer / model / attack, vocabulary shares,
    the semi-universal policy and transfer, from the robustness resources (`xaibench generate
    robustness`); with --table4, TOKI's Table 4."""
    from benchmark.resources import data_home
    from generators.robustness.experiments import reproduce

    folder = out or data_home() / "results" / "tef"
    variants = {}
    for v in variant or []:
        label, eq, where = v.partition("=")
        if not eq or not label or not where:
            raise typer.BadParameter(f"--variant {v!r}: expected LABEL=ROOT")
        variants[label] = Path(where)
    text, png = reproduce(folder, transfer=not no_transfer, transfer_models=tuple(str(m) for m in transfer_model),
                          variants=variants)
    console.print(text)
    if table4:
        from generators.robustness.table4 import table4 as run_table4

        t4, _ = run_table4(data_home() / "cache" / "table4", model_name=str(table4_model), n=table4_n,
                           seeds=range(table4_seeds), toki=toki,
                           toki_train=toki_train, toki_explainer=toki_explainer, log=console.print,
                           toki_candidates_rule=toki_candidates)
        (folder / f"table4-{table4_model}-{toki_candidates}.md").write_text(t4 + "\n")
        console.print(t4)
    console.print(f"curves: {png}")


def register(generate_app: typer.Typer, reproduce_app: typer.Typer) -> None:
    generate_app.command("robustness")(generate_robustness)
    reproduce_app.command("tef")(reproduce_tef)
