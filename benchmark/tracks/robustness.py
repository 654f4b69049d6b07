"""The robustness tracks (SPECS §2): any word-level text explainer scored on TEF / RA / SU attacks, with
its faithfulness on the same model and texts beside it.

Two named boards per resource and model:
* `robustness` — the **transfer board**. Resources `robustness/mr-<model>` (built by `xaibench generate
  robustness`) hold, per MR test sample, the adversarial texts of TEF, its baselines and the
  semi-universal policy (SU) after r = 1, 2, … substitutions (the pooled ρ_max grid 0.05 … 0.40),
  crafted through the resource's `reference_explainer` (saliency by default). Every other explainer
  faces them as a transferred attack (SPECS §2.6); the reference explainer itself faced an adaptive
  attack, so its row is marked (role "reference": drawn, never ranked — `board_role`) and it is ranked
  on the live board instead.
* `robustness-live` — the **live board** (`xaibench attack`, `benchmark.attacks.live`): TEF / RA search
  each explainer's own explanations (each explainer attacked through itself).

Instances: each original text (id `<sample>`) and each adversarial text of the scored attacks (id
`<sample>~<attack>~<explainer>~r<k>`), all explained by the submission in the sandboxed worker like
every explainer track. The track pairs them (`score_chunk = None`: every instance in one `score` call):
per adversarial text PCC, Kendall τ-b, Spearman, top-10/30/50 % intersection between the submission's
attribution of the original and of the attacked text.

Faithfulness [I] (beside robustness, so that robustness alone is not free): ERASER's comprehensiveness
and sufficiency (DeYoung et al. 2020, AOPC form) of the submission's attribution of each ORIGINAL text
on the same model: with r_k the top ⌈k·n⌉ words by attribution (signed, ties → lower position; k ∈ {1,
5, 10, 20, 50} %) and p_l the model's probability of the explained (predicted) class l,
comprehensiveness = mean_k [p_l(x) − p_l(x ∖ r_k)] (higher = more faithful: removing the words the
explanation ranks first hurts the prediction) and sufficiency = mean_k [p_l(x) − p_l(r_k)] (lower =
more faithful). Removal deletes the words from the token list (ERASER). A text of one word has none.
Comprehensiveness is also computed on every scored ATTACKED text from its own attribution
(`rob-faith-comp-attacked`, the mean over attacked texts), so a method cannot stay stable by going
unfaithful after the attack; `rob-faith-comp-worse` is the smaller of the two means (per bootstrap draw).
The harness computes them (the model never goes to the submission for this).

Ranking rule (the board's rank gate, `extra["rank_gate"]`, implemented by the leaderboard): a method
whose `rob-faith-comp-worse` (comprehensiveness on the originals and on the attacked texts, the worse
of the two) is not better than the best control's (position, uniform, random) is ranked after every
method that passes. Controls are drawn, never ranked. So a text-blind or constant method —
perfectly robust by construction — cannot come first.

Summary: ACC (area under the PCC-vs-realised-ρ curve on ONE fixed grid — width-0.05 bins on [0, 0.4],
(0, 1) anchor, interior empty bins bridged, trailing empty bins carrying the last filled value forward;
`benchmark.metrics.robustness.acc`) under TEF — the primary metric, higher = more robust — and under
RA and SU beside it, with a 95 % bootstrap interval over attacked samples (1,000 resamples, seed 0;
`estimate` / `units` are the same computation for the leaderboard's paired bootstrap). Curve weighting
(metric option `weighting`): "rho_max" (default, SPECS §2.7: each text weighted by the number of
ρ_max grid values that stop at it) or "point" (one point per (sample, r)); the Result records the ACC
under both, the curve of each attack, its bin coverage (filled / carried / bridged bins) and the ACC
under the stricter "undefined" empty-bin rule.

Exclusions and bad input: a failed original or attacked text (runner failure) leaves that pair out; a
constant (or all-zero) attribution of an original or attacked text makes the PCC undefined — never a
silent 1 or 0 — so the pair is left out and counted (`MetricSummary.excluded`, and
`extra["pcc_undefined"]` per attack). Non-finite values are refused by the runner (a failure).
Metric options (`--metric-param`): by_abs (top-k and faithfulness ranks by |value|), weighting.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import numpy as np

import benchmark.metrics.robustness as rm
from benchmark.metrics.erasure import eraser
from benchmark.bootstrap import N_BOOT, draw_weights
from benchmark.errors import ResourceError
from benchmark.models.base import read_model_config
from benchmark.models.spec import ModelSpec
from benchmark.store.results import MetricSummary
from benchmark.tracks.base import Instances, Track, TrackMetadata, register_track
from benchmark.references import TEF

SCORED_ATTACKS = ("tef", "ra", "su")
ACC_PREFIXES = ("rob-acc-", "rob-racc-")  # ACC of the raw / the residual PCC
REBUILD = "xaibench generate robustness --overwrite"
PAIR_METRICS = ("pcc", "kendall", "spearman", "top10", "top30", "top50")
FAITH_COMPS = ("rob-faith-comp", "rob-faith-comp-attacked")  # comprehensiveness on the originals / attacked texts
FAITH_WORSE = "rob-faith-comp-worse"  # the smaller of the two: what the rank gate compares
GATE = {"metric": FAITH_WORSE, "min": None, "beat_controls": True}
EXTRA_COLUMNS = ("rho", "attack", "weight", "weight_rho_max", "sample", "paired")


class RobustnessTrack(Track):
    """TEF transfer board (SPECS §2): attribution robustness under word-substitution attacks, beside faithfulness."""
    # the randomisation test's score criterion does not apply here: rACC and the other primary metrics measure how
    # stable a map stays under an attack that keeps the prediction, which the maps of a randomised model are as
    # well (measured on the demo's board, 2026-11-27: every built-in's Δ rACC trained − randomised had an interval
    # holding 0, while its maps changed completely: signed ρ −0.03 to +0.03); the maps' similarity decides
    randomisation_score_rule = False
    no_hidden_copy = ("its ground truth is the adversary's attack on the published model and its score the maps' "
                      "stability, not agreement with a model's reasoning: no construction is given (issue #50)")
    randomisation_score_note = ("its primary metric is the maps' stability under an attack that keeps the "
                                "prediction, a property a randomised model's maps have as well, so only the "
                                "maps' similarity decides")

    metadata = TrackMetadata(
        name="robustness",
        description=("TEF transfer board: texts attacked through the resource's reference explainer (marked), "
                     "re-scored with every explainer; ACC beside ERASER faithfulness (Ivankay et al. 2022)"),
        reference=TEF,
        resource="robustness",
        main_score="rob-racc-tef",
        metrics=("rob-racc-tef", "rob-racc-ra", "rob-racc-su", "rob-acc-tef", "rob-acc-ra", "rob-acc-su",
                 "rob-faith-comp", "rob-faith-comp-attacked", FAITH_WORSE, "rob-faith-suff", "rob-rpcc-tef",
                 "rob-rpcc-ra", "rob-rpcc-su", "rob-pcc-tef",
                 "rob-pcc-ra", "rob-pcc-su", "rob-kendall-tef", "rob-spearman-tef", "rob-top10-tef",
                 "rob-top30-tef", "rob-top50-tef"),
        models=("cnn", "lstm", "lstm-att", "minilm"),
        modality="text",
        default_split="test",
        rank_gate=dict(GATE),
        control_note=("Raw PCC's blind spot: scores that ignore the words (the position control) never move "
                      "under a substitution, so their raw ACC is perfect. The primary score (residual ACC) "
                      "compares attributions after removing what position and length alone predict, so such "
                      "scores have none. Robustness is not faithfulness: the board also ranks methods only above "
                      "the controls' comprehensiveness (rank gate), and draws robustness against faithfulness."),
    )
    score_chunk = None

    def configs(self) -> list[str]:
        """mr-<model>: the attacks on each model under test."""
        return [f"mr-{m}" for m in self.models]

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """Each original text followed by its scored attacked versions (through the reference explainer)."""
        ref = resource.params.get("reference_explainer", "saliency")
        t = resource.table(split).to_pydict()
        ids: list[str] = []
        inputs: list[list[str]] = []
        kind: list[dict[str, Any]] = []
        origin: dict[str, int] = {}
        skipped: dict[str, int] = {}
        for i in range(len(t["id"])):
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
        # the original texts and the model stay in the harness: the faithfulness probes (`benchmark.metrics.erasure`)
        truths = {"kind": kind, "texts": inputs, "model": model_loader(self, resource)}
        return Instances(ids=ids, inputs=inputs, truths=truths, output_shapes=[(len(x),) for x in inputs],
                         excluded=skipped)

    def first_instances(self, resource, split: str, n: int) -> Instances:
        """The first `n` texts in evaluation order (`instances`' `limit` counts original samples, each with all its
        attacked texts, which come in attack order: the first samples' TEF texts, later their RA ones — so
        `instances(limit=k)` is no prefix). Every attacked text follows its original, so any prefix holds the
        originals its texts are paired with; the randomisation test runs on it (`--randomisation-limit`)."""
        full = self.instances(resource, split)
        n = max(0, min(int(n), len(full)))
        t = full.truths
        truths = {**t, "kind": t["kind"][:n], "texts": t["texts"][:n]}
        return Instances(ids=full.ids[:n], inputs=full.inputs[:n], truths=truths,
                         output_shapes=full.output_shapes[:n], excluded=dict(full.excluded))

    def inputs_key(self, resource, split: str) -> tuple[str, str]:
        """The texts submissions are shown (original + scored adversarial texts) and the model's weights:
        adding another explainer's attacks to the config (`--append`) keeps cached explanations valid."""
        import hashlib

        inst = self.instances(resource, split)
        h = hashlib.sha256(str(resource.params.get("model_sha256", "")).encode())
        for i, toks in zip(inst.ids, inst.inputs):
            h.update(f"{i}\t{' '.join(toks)}\n".encode())
        return f"{resource.name}-texts", h.hexdigest()[:12]

    def build_model(self, resource, name: str, instances: Instances | None, **options: Any):
        """The model the resource's texts were attacked on (word model or MiniLM)."""
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

    def use_model(self, instances: Instances, load) -> None:
        """ERASER's faithfulness probes read `load()`'s model (the randomised copy in a randomised-model run)."""
        instances.truths["model"] = load

    def board_role(self, resource, submission: str, role: str) -> str:
        """The role a Result of `submission` takes on this board: the transfer board's reference explainer
        (the texts were attacked through it — an adaptive attack, not a transfer) is a marked,
        unranked "reference" row; every other keeps its own role."""
        ref = resource.params.get("reference_explainer", "saliency")
        return "reference" if submission == ref and role == "method" else role

    # -- scoring -----------------------------------------------------------------------------------
    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        """Per attacked text: PCC, Kendall, Spearman and top-k intersection with its original's attribution; per
        original: faithfulness."""
        by_abs = bool(metric_params.get("by_abs", False))
        weighting = metric_params.get("weighting", "rho_max")
        where = {p: k for k, p in enumerate(positions)}
        n = len(positions)
        out = {m: np.full(n, np.nan) for m in self.metrics}
        extra = {k: np.full(n, np.nan) for k in EXTRA_COLUMNS}
        # the board's position profile: what position and length alone predict of this submission's
        # attributions of the original texts (`rm.position_profile`), removed before the residual PCC
        orig = [(k, p) for k, p in enumerate(positions) if truths["kind"][p]["original"]]
        profile = rm.position_profile([explanations[k] for k, _p in orig],
                                      groups=[truths["kind"][p].get("unit", p) for _k, p in orig])
        originals = []
        for k, p in enumerate(positions):
            info = truths["kind"][p]
            if info["original"]:
                extra["sample"][k] = info.get("unit", p)
                originals.append(k)
                continue
            extra["rho"][k] = info["rho"]
            extra["attack"][k] = SCORED_ATTACKS.index(info["attack"])
            extra["weight_rho_max"][k] = info["weight"]
            extra["weight"][k] = info["weight"] if weighting == "rho_max" else 1.0
            extra["sample"][k] = info.get("unit", info["of"])
            o = where.get(info["of"])
            if o is None:  # the original failed: this pair is excluded (NaN, counted)
                extra["paired"][k] = 0
                continue
            extra["paired"][k] = 1
            m = rm.pair_metrics(explanations[o], explanations[k], by_abs=by_abs)
            out[f"rob-pcc-{info['attack']}"][k] = m["pcc"]
            out[f"rob-rpcc-{info['attack']}"][k] = rm.residual_pcc(explanations[o], explanations[k], profile)
            if info["attack"] == "tef":
                for name in ("kendall", "spearman", "top10", "top30", "top50"):
                    out[f"rob-{name}-tef"][k] = m[name]
        if truths.get("model") is not None and truths.get("texts") is not None:
            # comprehensiveness on the originals and on the attacked texts (each attacked text's own
            # attribution on the same model): a method must stay faithful after the attack, too
            is_original = set(originals)
            attacked = [k for k in range(n) if k not in is_original]
            rows = originals + attacked
            if rows:
                comp, suff = eraser(truths["model"](), [truths["texts"][positions[k]] for k in rows],
                                    [explanations[k] for k in rows], by_abs=by_abs)
                no = len(originals)
                out["rob-faith-comp"][originals] = comp[:no]
                out["rob-faith-suff"][originals] = suff[:no]
                out["rob-faith-comp-attacked"][attacked] = comp[no:]
        return {**out, **extra}

    def check_metric_params(self, metric_params: dict[str, Any]) -> None:
        """Only `by_abs` and `weighting` (one of `WEIGHTINGS`) are known."""
        from benchmark.errors import XaibenchError

        unknown = set(metric_params) - {"by_abs", "weighting"}
        if unknown:
            raise XaibenchError(f"unknown robustness metric option(s) {sorted(unknown)}; known: by_abs, weighting")
        if metric_params.get("weighting", "rho_max") not in rm.WEIGHTINGS:
            raise XaibenchError(f"weighting must be one of {', '.join(rm.WEIGHTINGS)}, got "
                                f"{metric_params['weighting']!r}")

    # -- summaries ---------------------------------------------------------------------------------
    def units(self, scores: dict[str, np.ndarray], n: int) -> np.ndarray:
        """The resampling unit of each instance: its attacked sample (the original's position; an original
        is its own unit), so a sample's original and attacked texts are resampled together."""
        s = _column(scores, "sample", n)
        return np.where(np.isfinite(s), s, np.arange(n)).astype(np.int64)

    def estimate(self, scores: dict[str, np.ndarray], ok: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric under instance multiplicities `weights` (B, n): ACC = the fixed-grid area of the
        curve with each text weighted by its curve weight × its multiplicity; every other metric = the
        weighted mean of its finite values over the instances it is defined on. NaN where undefined."""
        n = len(ok)
        W = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        out = {}
        cols = {k: _column(scores, k, n) for k in ("rho", "attack", "weight")}
        for m in self.metrics:
            if m.startswith(ACC_PREFIXES):
                a, column = _acc_source(m)
                pccs = _column(scores, column, n)
                sel = ok & (cols["attack"] == a) & np.isfinite(pccs) & np.isfinite(cols["weight"])
                if not sel.any():
                    out[m] = np.full(len(W), np.nan)
                    continue
                out[m] = rm.acc_weighted(cols["rho"][sel], pccs[sel], W[:, sel] * cols["weight"][sel])
            elif m == FAITH_WORSE:
                continue  # below: the smaller of the two comprehensiveness estimates
            else:
                v = np.where(ok & self._rows(m, cols["attack"]), _column(scores, m, n), np.nan)
                good = np.isfinite(v)
                mass = W[:, good].sum(axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[m] = np.where(mass > 0, (W[:, good] @ v[good]) / np.where(mass > 0, mass, 1.0), np.nan)
        if FAITH_WORSE in self.metrics:
            out[FAITH_WORSE] = worse_of(out["rob-faith-comp"], out["rob-faith-comp-attacked"])
        return out

    @staticmethod
    def _rows(metric: str, attack: np.ndarray) -> np.ndarray:
        """The texts a (non-ACC) metric is averaged over: the originals for faithfulness, the texts of
        its attack otherwise."""
        if metric == "rob-faith-comp-attacked":
            return np.isfinite(attack)
        if metric.startswith("rob-faith-"):
            return np.isnan(attack)
        a = SCORED_ATTACKS.index(metric.rsplit("-", 1)[1])
        return np.isfinite(attack) & (attack == a)

    def summarise(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, MetricSummary]:
        """ACC per attack with a bootstrap interval over samples; the other metrics: mean ± t-interval."""
        out = {}
        n = len(ok)
        attack = _column(scores, "attack", n)
        units = self.units(scores, n)
        for m in self.metric_objects():
            if m.name.startswith(ACC_PREFIXES):
                a, column = _acc_source(m.name)
                pccs = _column(scores, column, n)
                sel = np.isfinite(attack) & (attack == a)
                good = sel & ok & np.isfinite(pccs)
                out[m.name] = self._boot_summary(m.name, scores, ok, units, good, int(sel.sum() - good.sum()),
                                                 m.label)
            elif m.name == FAITH_WORSE:
                both = [np.where(ok, _column(scores, c, n), np.nan) for c in FAITH_COMPS]
                good = np.isfinite(both[0]) | np.isfinite(both[1])
                out[m.name] = self._boot_summary(m.name, scores, ok, units, good, 0, m.label)
            else:
                v = _column(scores, m.name, n)
                sel = self._rows(m.name, attack)
                out[m.name] = MetricSummary.from_scores(np.where(ok, v, np.nan)[sel], m.direction, m.label)
        return out

    def _boot_summary(self, metric: str, scores, ok, units, good, excluded: int, label: str) -> MetricSummary:
        """ACC with a 95 % percentile interval from `N_BOOT` resamples of the attacked samples (seed 0)."""
        if not good.any():
            return MetricSummary(None, None, None, 0, excluded, "higher", label)
        value = float(self.estimate(scores, ok, np.ones((1, len(ok))))[metric][0])
        if not math.isfinite(value):
            return MetricSummary(None, None, None, int(len(np.unique(units[good]))), excluded, "higher", label)
        boots = self.estimate(scores, ok, draw_weights(units, keep=good, n_boot=N_BOOT))[metric]
        boots = boots[np.isfinite(boots)]
        std = float(boots.std(ddof=1)) if boots.size > 1 else 0.0
        ci = (float(np.quantile(boots, 0.025)), float(np.quantile(boots, 0.975))) if boots.size else (value, value)
        return MetricSummary(value, std, ci, int(len(np.unique(units[good]))), excluded, "higher", label)

    def summary_extra(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """What the site draws and the board needs beside the metrics: per scored attack the PCC-vs-ρ
        curve (`curves`: centre, mean — None for an empty bin —, count, mass, the cumulative curve ACC
        integrates, and its bin `coverage`), the same for the residual PCC (`residual_curves`), the ACC
        under both curve weightings and under the "undefined" empty-bin rule (`acc_variants`, raw PCC),
        the pairs whose PCC is undefined (`pcc_undefined`: a constant or all-zero attribution) or whose
        residual PCC is (`rpcc_undefined`: also a length no other original shares, or a map position and
        length explain entirely), and the rank gate."""
        n = len(ok)
        cols = {k: _column(scores, k, n) for k in ("rho", "attack", "weight", "weight_rho_max", "paired")}
        curves: dict[str, Any] = {}
        residual: dict[str, Any] = {}
        variants: dict[str, Any] = {}
        undefined: dict[str, int] = {}
        r_undefined: dict[str, int] = {}
        for a, attack in enumerate(SCORED_ATTACKS):
            sel = ok & (cols["attack"] == a)
            for column, into, count in (("pcc", curves, undefined), ("rpcc", residual, r_undefined)):
                pccs = _column(scores, f"rob-{column}-{attack}", n)
                count[attack] = int((sel & (cols["paired"] == 1) & ~np.isfinite(pccs)).sum())
                good = sel & np.isfinite(pccs) & np.isfinite(cols["weight"])
                if not good.any():
                    continue
                b = rm.bin_by_rho(cols["rho"][good], pccs[good], weights=cols["weight"][good])
                into[attack] = {"centre": [round(float(c), 4) for c in b["centre"]],
                                "mean": [_finite(m) for m in b["mean"]],
                                "count": [int(c) for c in b["count"]],
                                "mass": [float(w) for w in b["mass"]],
                                "cumulative": [_finite(m) for m in rm.cumulative_means(b["mean"], b["mass"])],
                                "coverage": rm.bin_coverage(b["count"])}
                if column == "pcc":
                    rho, p = cols["rho"][good], pccs[good]
                    variants[attack] = {
                        "rho_max": _finite(rm.acc_of(rho, p, weights=cols["weight_rho_max"][good])),
                        "point": _finite(rm.acc_of(rho, p, weights=np.ones(good.sum()))),
                        "undefined_rule": _finite(rm.acc_of(rho, p, weights=cols["weight"][good],
                                                            empty="undefined"))}
        return {"curves": curves, "residual_curves": residual, "acc_variants": variants,
                "pcc_undefined": undefined, "rpcc_undefined": r_undefined, "rank_gate": dict(GATE)}


def worse_of(original: np.ndarray, attacked: np.ndarray) -> np.ndarray:
    """Per draw, the smaller of the comprehensiveness on the originals and on the attacked texts; the one
    defined where the other is not (no attacked text scored, or no original of two words or more)."""
    a, b = np.asarray(original, dtype=np.float64), np.asarray(attacked, dtype=np.float64)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, np.minimum(a, b)))


def model_loader(track: Track, resource):
    """A loader of the resource's model under test for the harness's faithfulness probes (loaded once)."""
    name = resource.params.get("model")
    if not name:
        return None
    held: list = []

    def load():
        if not held:
            held.append(track.build_model(resource, name, None)[0].load())
        return held[0]
    return load


def _acc_source(metric: str) -> tuple[int, str]:
    """(attack index, per-pair column) an ACC metric integrates: rob-acc-X ← rob-pcc-X, rob-racc-X ← rob-rpcc-X."""
    kind, attack = metric.removeprefix("rob-").split("-", 1)
    return SCORED_ATTACKS.index(attack), f"rob-{'rpcc' if kind == 'racc' else 'pcc'}-{attack}"


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _column(scores: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
    """A per-instance score column as float64 (all NaN when the column is absent)."""
    return np.asarray(scores.get(name, np.full(n, np.nan)), dtype=np.float64)


def pooled_acc(rho, pcc, weight) -> float:
    """ACC of (ρ, PCC) pairs with their curve weights, the whole set at once."""
    return rm.acc_of(np.asarray(rho, float), np.asarray(pcc, float), weights=np.asarray(weight, float))


class LiveRobustnessTrack(RobustnessTrack):
    """The live board (`xaibench attack`, `benchmark.attacks.live`): TEF / RA search each explainer's
    own explanations (each attacked through itself). Same metrics; an instance is an attacked sample.
    Filled by `xaibench attack` only — the runner cannot evaluate it (the texts depend on the submission)."""

    metadata = dataclasses.replace(
        RobustnessTrack.metadata,
        name="robustness-live",
        description=("TEF live board: each explainer attacked through itself (`xaibench attack`); the scored "
                     "pairs re-explained with fresh seeds; ACC beside ERASER faithfulness"),
    )

    randomisation_test = False
    randomisation_note = ("a live attack's texts depend on the explainer's own maps, so a run on a randomised model "
                          "would attack other texts; the explainer's randomisation test is on the transfer board "
                          "(`robustness`)")

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """Always refused: the live boards are filled by `xaibench attack` only."""
        from benchmark.errors import XaibenchError

        raise XaibenchError("the robustness-live boards are filled by `xaibench attack <explainer> --resource "
                            f"{resource.name}`: a live attack's texts depend on the submission")

    def board_role(self, resource, submission: str, role: str) -> str:
        """Every submission keeps its own role (each was attacked through itself)."""
        return role


register_track(RobustnessTrack())
register_track(LiveRobustnessTrack())
