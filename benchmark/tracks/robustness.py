"""The robustness track (SPECS §2): any word-level text explainer scored on fixed TEF / RA attacks.

Resources `robustness/mr-<model>` (built by `xaibench generate robustness`) hold, per MR test sample,
the adversarial texts of TEF and its baselines after r = 1, 2, … substitutions (the pooled ρ_max grid
0.05 … 0.40), crafted against the `reference_explainer` (saliency by default) on that model. Instances:
each original text (id `<sample>`) and each adversarial text of the scored attacks (id
`<sample>~<attack>~<explainer>~r<k>`), all explained by the submission in the sandboxed worker like
every explainer track. The track pairs them (`score_chunk = None`: every instance in one `score` call):
per adversarial text PCC, Kendall τ-b, Spearman, top-10/30/50 % intersection between the submission's
attribution of the original and of the attacked text. For a submission other than the reference
explainer this is the transfer setting across explainers (SPECS §2.6).

Summary: ACC (area under the PCC-vs-realised-ρ curve, width-0.05 bins on [0, 0.4], (0, 1) anchor,
each text weighted by the number of ρ_max grid values that stop at it) under TEF — the primary
metric, higher = more robust — and under RA beside it; a 95 % bootstrap interval over samples (200
resamples, seed 0). Exclusions: a failed original or attacked text (runner failure) or an undefined PCC
(a constant attribution) leaves that pair out, counted in the metric's `excluded`.
Metric option (`--metric-param`): by_abs (top-k by |value|).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import benchmark.metrics.robustness as rm
from benchmark.errors import ResourceError
from benchmark.models.base import read_model_config
from benchmark.models.spec import ModelSpec
from benchmark.results import MetricSummary
from benchmark.tracks.base import TRACKS, Instances, Track, weighted_mean

SCORED_ATTACKS = ("tef", "ra")
REBUILD = "xaibench generate robustness --overwrite"
PAIR_METRICS = ("pcc", "kendall", "spearman", "top10", "top30", "top50")


class RobustnessTrack(Track):
    name = "robustness"
    family = "robustness"
    control_note = ("Here that is the metric's blind spot, not the model: scores that ignore the words (the "
                    "position control) never move under a substitution, so they are perfectly robust. "
                    "Robustness is not faithfulness — read this board beside the tracks with ground truth.")
    modality = "text"
    description = "TEF: attribution robustness under prediction-preserving synonym swaps; ACC (Ivankay et al. 2022)"
    metrics = ("rob-acc-tef", "rob-acc-ra", "rob-pcc-tef", "rob-pcc-ra", "rob-kendall-tef", "rob-spearman-tef",
               "rob-top10-tef", "rob-top30-tef", "rob-top50-tef")
    models = ("cnn", "lstm", "lstm-att", "minilm")
    default_split = "test"
    score_chunk = None

    def configs(self) -> list[str]:
        return [f"mr-{m}" for m in self.models]

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        ref = resource.params.get("reference_explainer", "saliency")
        t = resource.table(split).to_pydict()
        ids, inputs, kind = [], [], []
        origin: dict[str, int] = {}
        skipped: dict[str, int] = {}
        rows = range(len(t["id"]))
        for i in rows:
            if t["explainer"][i] != ref or t["attack"][i] not in SCORED_ATTACKS:
                continue
            sample = t["sample"][i]
            if t["excluded"][i] or t["r"][i] == 0:
                why = (t["excluded"][i] or "unperturbed").split(":")[0]
                skipped[why] = skipped.get(why, 0) + 1
                continue
            if sample not in origin:
                if limit is not None and len(origin) >= limit:
                    continue
                origin[sample] = len(ids)
                ids.append(sample)
                inputs.append(list(t["tokens"][i]))
                kind.append({"original": True})
            if t["pred_after"][i] != t["pred_before"][i]:
                raise ResourceError(f"{resource.name}: row {t['id'][i]} changes the prediction; regenerate it")
            ids.append(t["id"][i])
            inputs.append(list(t["adversarial"][i]))
            kind.append({"original": False, "of": origin[sample], "attack": t["attack"][i], "rho": t["rho"][i],
                         "weight": len(t["rho_max"][i]), "sample": sample})
        truths = {"kind": kind}
        return Instances(ids=ids, inputs=inputs, truths=truths, output_shapes=[(len(x),) for x in inputs],
                         excluded=skipped)

    def inputs_key(self, resource, split: str) -> tuple[str, str]:
        """The texts submissions are shown (original + scored adversarial texts) and the model's weights:
        adding another explainer's attacks to the config (`--append`) keeps cached explanations valid."""
        import hashlib

        inst = self.instances(resource, split)
        h = hashlib.sha256(str(resource.params.get("model_sha256", "")).encode())
        for i, toks in zip(inst.ids, inst.inputs):
            h.update(f"{i}\t{' '.join(toks)}\n".encode())
        return f"{resource.name}-texts", h.hexdigest()[:12]

    def build_model(self, resource, name: str, instances: Instances, **options: Any):
        folder = resource.params.get("models", {}).get(name)
        if not folder:
            raise ResourceError(f"{resource.name} holds the attacks on model '{resource.params.get('model')}'; "
                                f"evaluate with --model {resource.params.get('model')}")
        directory = resource.root / "model" / folder
        cfg = read_model_config(directory, REBUILD)
        spec = ModelSpec(name=name, modality="text", white_box=True, loader="minilm" if name == "minilm" else "word",
                         directory=directory,
                         options={"rebuild": REBUILD})
        info = {"name": name, "hash": cfg["sha256"][:16], "task": cfg.get("task", "binary"),
                "architecture": cfg["architecture"], "scores": cfg.get("scores", {})}
        return spec, info

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        by_abs = bool(metric_params.get("by_abs", False))
        where = {p: k for k, p in enumerate(positions)}
        n = len(positions)
        out = {m: np.full(n, np.nan) for m in self.metrics}
        extra = {k: np.full(n, np.nan) for k in ("rho", "attack", "weight", "sample", "paired")}
        for k, p in enumerate(positions):
            info = truths["kind"][p]
            if info["original"]:
                continue
            extra["rho"][k] = info["rho"]
            extra["attack"][k] = SCORED_ATTACKS.index(info["attack"])
            extra["weight"][k] = info["weight"]
            extra["sample"][k] = info["of"]
            o = where.get(info["of"])
            if o is None:  # the original failed: this pair is excluded (NaN, counted)
                extra["paired"][k] = 0
                continue
            extra["paired"][k] = 1
            m = rm.pair_metrics(explanations[o], explanations[k], by_abs=by_abs)
            out[f"rob-pcc-{info['attack']}"][k] = m["pcc"]
            if info["attack"] == "tef":
                for name in ("kendall", "spearman", "top10", "top30", "top50"):
                    out[f"rob-{name}-tef"][k] = m[name]
        return {**out, **extra}

    def check_metric_params(self, metric_params: dict[str, Any]) -> None:
        from benchmark.errors import XaibenchError

        unknown = set(metric_params) - {"by_abs"}
        if unknown:
            raise XaibenchError(f"unknown robustness metric option(s) {sorted(unknown)}; known: by_abs")

    def summarise(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, MetricSummary]:
        out = {}
        n = len(ok)
        get = {k: _column(scores, k, n) for k in ("rho", "attack", "weight", "sample")}
        adv = np.isfinite(get["attack"])
        for m in self.metric_objects():
            if m.name.startswith("rob-acc-"):
                attack = SCORED_ATTACKS.index(m.name.removeprefix("rob-acc-"))
                pccs = _column(scores, f"rob-pcc-{SCORED_ATTACKS[attack]}", n)
                sel = adv & (get["attack"] == attack)
                good = sel & ok & np.isfinite(pccs)
                out[m.name] = acc_summary(get["rho"][good], pccs[good], get["weight"][good], get["sample"][good],
                                          excluded=int(sel.sum() - good.sum()), label=m.label)
            else:
                v = _column(scores, m.name, n)
                attack = SCORED_ATTACKS.index(m.name.rsplit("-", 1)[1])
                sel = adv & (get["attack"] == attack)
                out[m.name] = MetricSummary.from_scores(np.where(ok, v, np.nan)[sel], m.direction, m.label)
        return out


    def units(self, scores: dict[str, np.ndarray], n: int) -> np.ndarray:
        """The attacked sample of each text (original and adversarial texts of one sample are resampled
        together, as `acc_summary`'s bootstrap does)."""
        sample = _column(scores, "sample", n)
        if not np.isfinite(sample).all():
            return np.arange(n)
        return np.unique(sample, return_inverse=True)[1]

    def estimate(self, scores: dict[str, np.ndarray], ok: np.ndarray,
                 weights: np.ndarray) -> dict[str, np.ndarray]:
        """ACC of the weighted binned curve (each text's weight × its multiplicity in the draw) and the
        weighted mean of the pair metrics over the attack's texts, as `summarise` computes them."""
        w = np.asarray(weights, dtype=np.float64)
        n = len(ok)
        get = {k: _column(scores, k, n) for k in ("rho", "attack", "weight")}
        adv = np.isfinite(get["attack"])
        out = {}
        for m in self.metric_objects():
            if m.name.startswith("rob-acc-"):
                attack = SCORED_ATTACKS.index(m.name.removeprefix("rob-acc-"))
                pccs = _column(scores, f"rob-pcc-{SCORED_ATTACKS[attack]}", n)
                good = adv & (get["attack"] == attack) & ok & np.isfinite(pccs) & np.isfinite(get["weight"])
                out[m.name] = weighted_acc(get["rho"][good], pccs[good], w[:, good] * get["weight"][good])
            else:
                attack = SCORED_ATTACKS.index(m.name.rsplit("-", 1)[1])
                sel = adv & (get["attack"] == attack)
                v = np.where(ok & sel, _column(scores, m.name, n), np.nan)
                out[m.name] = weighted_mean(v, w)
        return out

    def summary_extra(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """The PCC-vs-realised-ρ curve of each scored attack (`curves`: {attack: {centre, mean, count}} over
        the width-0.05 bins, each text weighted as in ACC; mean None for an empty bin) — what the site
        draws."""
        n = len(ok)
        get = {k: _column(scores, k, n) for k in ("rho", "attack", "weight")}
        curves = {}
        for a, attack in enumerate(SCORED_ATTACKS):
            pccs = _column(scores, f"rob-pcc-{attack}", n)
            good = ok & (get["attack"] == a) & np.isfinite(pccs) & np.isfinite(get["weight"])
            w = get["weight"][good].astype(np.int64)
            b = rm.bin_by_rho(np.repeat(get["rho"][good], w), np.repeat(pccs[good], w))
            curves[attack] = {"centre": [round(float(c), 4) for c in b["centre"]],
                              "mean": [float(m) if np.isfinite(m) else None for m in b["mean"]],
                              "count": [int(c) for c in b["count"]]}
        return {"curves": curves}


def _column(scores: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
    """A per-instance score column as float64 (all NaN when the column is absent)."""
    return np.asarray(scores.get(name, np.full(n, np.nan)), dtype=np.float64)


def pooled_acc(rho, pcc, weight) -> float:
    w = np.asarray(weight, dtype=np.int64)
    return rm.acc_of(np.repeat(np.asarray(rho, float), w), np.repeat(np.asarray(pcc, float), w))


def weighted_acc(rho, pcc, weights) -> np.ndarray:
    """(B,) ACC of the binned PCC curve where text i counts weights[b, i] times (`pooled_acc` for
    integer weights): per bin Σ w·pcc / Σ w, then `rm.acc` over the non-empty bins."""
    rho, pcc = np.asarray(rho, dtype=np.float64), np.asarray(pcc, dtype=np.float64)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    idx = rm.bin_index(rho)
    n_bins = int(round(rm.RHO_MAX / rm.BIN_WIDTH))
    onehot = (idx[:, None] == np.arange(n_bins)[None, :]).astype(np.float64)
    den = w @ onehot
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(den > 0, (w * pcc) @ onehot / np.where(den > 0, den, 1.0), np.nan)
    centre = (np.arange(n_bins) + 0.5) * rm.BIN_WIDTH
    return np.array([rm.acc(centre, row) if np.isfinite(row).any() else np.nan for row in means])


def acc_summary(rho, pcc, weight, sample, excluded: int = 0, label: str = "", n_boot: int = 200) -> MetricSummary:
    if len(rho) == 0:
        return MetricSummary(None, None, None, 0, excluded, "higher", label)
    value = pooled_acc(rho, pcc, weight)
    samples = np.unique(sample)
    rng = np.random.default_rng(0)
    groups = {s: np.flatnonzero(sample == s) for s in samples}
    boots = []
    for _ in range(n_boot):
        pick = np.concatenate([groups[s] for s in rng.choice(samples, size=len(samples), replace=True)])
        boots.append(pooled_acc(rho[pick], pcc[pick], weight[pick]))
    boots = np.asarray([b for b in boots if np.isfinite(b)])
    std = float(boots.std(ddof=1)) if boots.size > 1 else 0.0
    ci = (float(np.quantile(boots, 0.025)), float(np.quantile(boots, 0.975))) if boots.size else (value, value)
    return MetricSummary(float(value), std, ci, int(len(samples)), excluded, "higher", label)


class LiveRobustnessTrack(RobustnessTrack):
    """The boards of live attacks (`xaibench attack`, `benchmark.attacks.live`): TEF / RA search each
    explainer's own explanations. Same metrics; an instance is an attacked sample. Filled by
    `xaibench attack` only — the runner cannot evaluate it (the texts depend on the submission)."""

    name = "robustness-live"
    description = "TEF / RA run live against each explainer's own explanations (`xaibench attack`); ACC"

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        from benchmark.errors import XaibenchError

        raise XaibenchError("the robustness-live boards are filled by `xaibench attack <explainer> --resource "
                            f"{resource.name}`: a live attack's texts depend on the submission")


TRACKS.register("robustness", RobustnessTrack())
TRACKS.register("robustness-live", LiveRobustnessTrack())
