"""The AIXI track (SPECS §3): synthetic images whose per-pixel importance is known exactly.

Models under test: `function` (the attribution function itself, counting the objects still visible
— Experiment 2) and `cnn` (the authors' CNN trained on the resource — Experiment 3). Explanations are
scored against G = Σ_k w_k M_k by KL and EMD on normalised maps (§3.7), plus localisation metrics.

How a signed map becomes a distribution is the metric option `normalisation` (`benchmark.metrics.saliency`:
"positive", the board's default, chosen by experiment — docs/aixi.md, "Signed maps"; "minmax", SPECS §3.7's
[I] choice and the paper-parity setting; "absolute"). Every Result records the one that scored it
(`extra.normalisation`, from the per-instance `normalisation` codes) and how many maps had nothing to normalise
(`extra.empty_maps`); a Result written before the option existed names none and was scored min–max
(`metric_params_of`). The option `attribution` of those older Results ("signed" | "absolute": |S|, then min–max)
is read for re-scoring them only; new runs name a normalisation.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

import benchmark.metrics.saliency  # noqa: F401  (registers the metrics)
from benchmark.metrics.saliency import DEFAULT_NORMALISATION, NORMALISATIONS, empty_maps
from benchmark.errors import ResourceError
from benchmark.models.aixi_function import FunctionModel, Reference, get_function, ground_truth_map, hidden_function
from benchmark.models.base import read_model_config
from benchmark.models.spec import ModelSpec
from benchmark.resources.aixi_schema import decode_split
from benchmark.tracks.base import Instances, Track, TrackMetadata, register_track
from benchmark.references import AIXI

DATASETS = ("shape", "color")
FUNCTION_NAMES = ("ssin", "suum", "class")

# A CNN below this validation score has not learned its function: explanations of it say little about
# the explainers, so its model info (hence every Result on it) carries `quality` with `meets_floor`
# False and the leaderboard marks the board (issue #12).
QUALITY_FLOOR = {"r2": 0.8, "accuracy": 0.9}


def model_quality(validation: dict) -> dict:
    """{'metric', 'value', 'floor', 'meets_floor'} of a CNN's validation scores (R² for SSIN / SUUM,
    accuracy for Class); {} when the scores name neither."""
    for metric, floor in QUALITY_FLOOR.items():
        if isinstance(validation.get(metric), (int, float)):
            value = float(validation[metric])
            return {"metric": metric, "value": value, "floor": floor, "meets_floor": bool(value >= floor)}
    return {}


class AixiTrack(Track):
    """AIXI-Shape / AIXI-Color (SPECS §3): image explanations vs pixel-exact ground-truth importance maps."""

    metadata = TrackMetadata(
        name="aixi",
        description="AIXI-Shape / AIXI-Color: pixel-exact importance maps; KL and EMD (Miró-Nicolau et al. 2023)",
        reference=AIXI,
        resource="aixi",
        main_score="kl",
        metrics=("kl", "emd", "emd-paper", "mass-accuracy", "rank-accuracy", "pcc"),
        models=("function", "cnn"),
        modality="image",
    )

    def configs(self) -> list[str]:
        """<shape|color>-<ssin|suum|class>: each dataset with each ground-truth function."""
        return [f"{d}-{f}" for d in DATASETS for f in FUNCTION_NAMES]

    @staticmethod
    def _parse(resource) -> tuple[str, str]:
        dataset, _, fname = resource.config.partition("-")
        if dataset not in DATASETS or fname not in FUNCTION_NAMES:
            raise ResourceError(f"{resource.name} is not an AIXI config (<shape|color>-<ssin|suum|class>)")
        return dataset, fname

    def instances(self, resource, split: str, limit: int | None = None) -> Instances:
        """The split's images (inputs), object masks (segments) and ground-truth maps (truths)."""
        table = resource.table(split)
        if limit is not None:
            table = table.slice(0, limit)
        d = decode_split(table, columns=("id", "image", "instances", "patterns", "gt"))
        images, segments = np.asarray(d["images"]), np.asarray(d["instances"])  # arrays already: no copy
        h, w = images.shape[1:]
        truths = {"gt": d["gt"], "patterns": d["patterns"], "images": images, "instances": segments}
        return Instances(ids=list(d["ids"]), inputs=images, truths=truths,
                         segments=segments, output_shapes=[(h, w)] * len(d["ids"]))

    def build_model(self, resource, name: str, instances: Instances | None, visible_fraction: float = 0.5,
                    **options: Any):
        """"function": the analytic model built from the ground truth (served); "cnn": the trained model."""
        dataset, fname = self._parse(resource)
        if name == "function":
            if instances is None:
                raise ValueError("the AIXI function model is built from the instances it explains; none were given")
            fn = get_function(fname, resource.params.get("class_rule", "count"))
            t = instances.truths
            refs = {i: Reference(t["images"][n], t["instances"][n], np.asarray(t["patterns"][n], dtype=np.int64))
                    for n, i in enumerate(instances.ids)}
            model = FunctionModel(fn, dataset, refs, visible_fraction=visible_fraction)
            # "source=instance": the explained instance is the source of every input (v2; the
            # earlier model searched the batch for it, which made outputs depend on the batch)
            key = f"function:{fname}:{fn.class_rule}:{visible_fraction}:source=instance"
            info = {"name": "function", "hash": hashlib.sha256(key.encode()).hexdigest()[:16], "task": fn.task,
                    "visible_fraction": visible_fraction}
            # built from ground truth (each object's pattern): served by the harness, never loaded
            return ModelSpec(name="function", modality="image", white_box=False, served=model,
                             per_instance=True), info
        if name == "cnn":
            directory = resource.model_dir()
            config = read_model_config(directory)
            task = config.get("task", "regression")
            validation = config.get("validation", {})
            info = {"name": "cnn", "hash": config["sha256"][:16], "task": task, "validation": validation,
                    "quality": model_quality(validation)}
            return ModelSpec(name="cnn", modality="image", white_box=True, loader="image", directory=directory), info
        raise ResourceError(f"the aixi track has no model '{name}'; choose one of: {', '.join(self.models)}")

    # what a copy draws (`benchmark.models.aixi_function.HIDDEN_FORMS`): "weights", the v2 construction; the drawn
    # count curves were measured as candidates (docs/aixi.md, "What the copies give away") and not adopted — an
    # experiment may set this on the track object to build them (their hash and description name the form)
    hidden_form = "weights"
    _FORM_TEXT = {"weights": "",
                  "shared-curve": "; a count curve ι̂^γ shared by the patterns drawn (v3-candidate shared-curve)",
                  "pattern-curves": "; a count curve ι̂^γ_k per pattern drawn (v3-candidate pattern-curves)"}

    @property
    def hidden_construction(self) -> str:
        """What the copies rely on, with the construction's version (`Track.hidden_construction`)."""
        return ("v2: the counting rule with its pattern weights drawn from the secret — one pattern irrelevant "
                "(weight 0), the others spread (the heavier U(0.5, 1), the lighter 2–10 times lighter); Class: the "
                "patterns' order drawn" + self._FORM_TEXT[self.hidden_form])
    published_truth = "gt"  # the published maps (issue #58: the built-in `published-truth` returns them)
    no_hidden_copy = ("the AIXI CNN is trained on images: no construction keeps a copy's ground truth exact (the "
                      "function model's boards have hidden copies)")

    def no_hidden_copy_of(self, model: str) -> str:
        """Only the function model has hidden copies (`Track.no_hidden_copy_of`)."""
        return "" if model == "function" else f"no hidden copy of the AIXI model '{model}': {self.no_hidden_copy}"

    def hidden_copy(self, resource, model: str, draw: Any, split: str, limit: int | None = None):
        """A hidden copy of the function model (`benchmark.models.aixi_function.hidden_function`, drawn from
        `draw.rng("aixi-function")`): the same counting rule with drawn pattern weights (one pattern irrelevant), the
        ground-truth maps recomputed with them (`ground_truth_map`, SPECS §3.4). Served, like the published function
        model: a submission reaches it through `predict` only. The CNN has none (`no_hidden_copy`)."""
        from benchmark.models.variants.hidden import NoHiddenCopy

        if self.no_hidden_copy_of(model):
            raise NoHiddenCopy(self.no_hidden_copy_of(model))
        dataset, fname = self._parse(resource)
        instances = self.instances(resource, split, limit)
        spec, info = self.build_model(resource, "function", instances)
        fn = hidden_function(get_function(fname, resource.params.get("class_rule", "count")), draw.rng("aixi-function"),
                             self.hidden_form)
        t = instances.truths
        gt = np.stack([ground_truth_map(t["instances"][n], t["patterns"][n], fn.weights)
                       for n in range(len(instances))]) if len(instances) else np.asarray(t["gt"])
        instances.truths = {**t, "gt": gt.astype(np.asarray(t["gt"]).dtype, copy=False)}
        served = spec.served
        assert isinstance(served, FunctionModel)
        spec.served = FunctionModel(fn, dataset, served._references, visible_fraction=served.visible_fraction)
        # the copy's hash names the draw (its public commitment) and a candidate form, never its weights (6
        # permutations of Class would be found by hashing each); v2's hash is the one its Results carry
        form = "" if self.hidden_form == "weights" else f":{self.hidden_form}"
        key = f"{info['hash']}:hidden:{draw.commitment}{form}"
        info = {**info, "hash": hashlib.sha256(key.encode()).hexdigest()[:16]}
        irrelevant = [k for k in range(3) if fn.weights[k] == 0.0]
        objects = [int(np.isin(t["patterns"][n], irrelevant).sum()) for n in range(len(instances))]
        stats = {"irrelevant_patterns": len(irrelevant),
                 "images_with_an_irrelevant_object": int(sum(1 for c in objects if c > 0)),
                 "images": len(instances)}
        return spec, info, instances, stats

    def split_size(self, resource, split: str, instances: Instances, limit: int | None) -> int:
        """The split's row count (no instance is excluded on this track)."""
        return resource.table(split, columns=["id"]).num_rows

    def check_metric_params(self, metric_params: dict[str, Any]) -> None:
        """The base check; `normalisation` must be one of `NORMALISATIONS`; the retired `attribution` is refused
        with the normalisation that replaces it."""
        if "attribution" in metric_params:
            raise ResourceError("the metric option attribution is retired: name a normalisation instead "
                                f"(normalisation=absolute for |S|; one of {', '.join(NORMALISATIONS)})")
        super().check_metric_params(metric_params)
        if metric_params.get("normalisation", DEFAULT_NORMALISATION) not in NORMALISATIONS:
            raise ResourceError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, "
                                f"got {metric_params['normalisation']!r}")

    def metric_params_of(self, extra: dict[str, Any]) -> dict[str, Any]:
        """The metric options a Result with this `extra` was scored with: its own `metric_params`, and — where it
        names no normalisation, a Result written before the option existed (2026-11-29) — min–max, the default
        it was scored under."""
        params = dict(extra.get("metric_params") or {})
        if "normalisation" not in params and "normalisation" not in extra:
            params["normalisation"] = "minmax"
        return params

    def score(self, explanations: list[np.ndarray], truths: Any, positions: Sequence[int],
              **metric_params: Any) -> dict[str, np.ndarray]:
        """Every metric of the track on the stacked (N, H, W) maps against the ground-truth maps, and per instance
        the normalisation's code (`normalisation`: its index in `NORMALISATIONS`) and whether the map had nothing to
        normalise (`empty-map`, `benchmark.metrics.saliency.empty_maps`). `attribution` (older Results only):
        "absolute" scores |S| under min–max, "signed" the map itself."""
        params = dict(metric_params)
        magnitude = params.pop("attribution", "signed") == "absolute"
        if magnitude:
            params.setdefault("normalisation", "minmax")
        normalisation = params.get("normalisation", DEFAULT_NORMALISATION)
        s = np.stack([np.asarray(e, dtype=np.float32) for e in explanations])
        if magnitude:
            s = np.abs(s)
        g = truths["gt"][list(positions)]
        out = {m.name: m(s, g, **params) for m in self.metric_objects()}
        out["normalisation"] = np.full(len(s), float(NORMALISATIONS.index(normalisation)))
        out["empty-map"] = empty_maps(s, normalisation)
        return out

    def summary_extra(self, scores: dict[str, np.ndarray], ok: np.ndarray) -> dict[str, Any]:
        """The normalisation that scored the Result (`normalisation`) and the maps that had nothing to normalise
        (`empty_maps`: how many of the instances that did not fail, and what they scored — the worst value of KL
        and EMD on the instance, or under min–max the uniform distribution, SPECS §3.7). Nothing for a Result
        scored before these were recorded (no `normalisation` codes among its per-instance scores)."""
        codes = np.asarray(scores.get("normalisation", []), dtype=np.float64)
        ok = np.asarray(ok, dtype=bool)
        codes = codes[ok & np.isfinite(codes)] if codes.shape == ok.shape else codes[:0]
        if not codes.size:
            return {}
        name = NORMALISATIONS[int(codes[0])]
        empty = np.asarray(scores.get("empty-map", np.zeros(len(ok))), dtype=np.float64)[ok]
        count = int(np.nansum(empty))
        scored = ("the uniform distribution (SPECS §3.7: a constant map)" if name == "minmax" else
                  f"the worst KL and EMD of the instance: no {'positive' if name == 'positive' else 'non-zero'} "
                  "attribution")
        return {"normalisation": name, "empty_maps": {"count": count, "scored": scored}}


register_track(AixiTrack())
