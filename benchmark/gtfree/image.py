"""Ground-truth-free metrics for image explanations: Quantus 0.6.0's implementations (Hedström et al.
2023), each with its authors' parameters or Quantus's defaults where the paper's image size differs.

The model is handed to Quantus as a torch module whose forward is the model's own batch-free `predict`
(`_Adaptor`; float64, rounded once — `benchmark.models.exact`); Quantus always gets `softmax=False`,
because `predict` already returns probabilities (classifiers) or values (regressors) and Quantus's
softmax on a one-output regressor is the constant 1. Quantus draws subsets from NumPy's global random
state: every call runs under `np.random.seed(seed)` (default 0) and restores the state after.

* faithfulness-correlation (Bhatt et al. 2020): Pearson correlation, over 100 random subsets S of 224
  pixels set to black, between Σ_{i∈S} a_i and f(x) − f(x_S); higher is better.
* pixel-flipping (Bach et al. 2015): f while the most relevant pixels are set to black, 256 per step
  (64 steps on 128×128) [I]; the score is the curve's mean (normalised AUC; Quantus's own AUC calls
  `numpy.trapz`, gone in NumPy 2.4); lower is better.
* region-perturbation (Samek et al. 2017): AOPC, the mean of f(x) − f(x^(k)) over the first 100 most
  relevant 8×8 patches set to black; higher is better.
* infidelity (Yeh et al. 2019): mean squared difference between Σ a_i·(x − x̃)_i and f(x) − f(x̃) over
  cumulative 8×8 black patches; one perturbation sample, because black-patch replacement is
  deterministic and Quantus's 10 samples repeat the same one (checked in tests); lower is better.
* road (Rong et al. 2022): ROAD with noisy linear imputation, most relevant first at 10…90 %: the mean
  over percentages of "the predicted class is kept"; lower is better; classifiers only.
* sparseness (Chalasani et al. 2020): Gini index of |a|; higher is sparser.
* complexity (Bhatt et al. 2020): entropy of the normalised |a|; lower is simpler.
  (Both need no model; Quantus normalises the map by its maximum and fails on a constant map, coded
  "constant-map" before it is called.)

Not computed: sensitivity-n (Ancona et al. 2018) is a correlation across the whole batch, not a score
per instance; max-sensitivity (Yeh et al. 2019) re-runs the explainer on perturbed inputs, which for a
submission means the sandbox, not the metric board.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch

from benchmark.gtfree.base import GtFreeMetric, Scored, register
from benchmark.references import BACH, BHATT, CHALASANI, ROAD, SAMEK_AOPC, YEH


class _Adaptor(torch.nn.Module):
    """A torch module over `model.predict`, for Quantus. Row i of every batch Quantus passes is a
    perturbation of instance `ids[i]`; a per-instance model (the AIXI function model) is focused on it.

    Quantus calls the model once per perturbation step with one row per instance. Batching those steps
    too (record every call, predict all rows at once, replay) gave the same scores and no speed: measured
    on 16 images, 0.8–1.2× on the AIXI CNN (its float64 `predict` costs per row, not per call) and slower
    on the function model (Quantus's own work per step dominates), so it was left out."""

    def __init__(self, model: Any, ids: Sequence[str] | None, per_instance: bool) -> None:
        super().__init__()
        self.model, self.ids, self.per_instance = model, list(ids or []), per_instance
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.detach().cpu().numpy().astype(np.float32)
        if not self.per_instance:
            return torch.as_tensor(self.model.predict(a))
        if len(a) != len(self.ids):
            raise ValueError(f"a batch of {len(a)} rows for {len(self.ids)} instances")
        out = []
        for i, row in zip(self.ids, a):
            self.model.focus(i)
            out.append(self.model.predict(row[None]))
        return torch.as_tensor(np.concatenate(out))


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def _quantus(factory: Callable[[dict], Any], post: Callable[[Any, int], np.ndarray],
             per_row: bool = False) -> Callable[..., Scored]:
    """A metric fn over a Quantus metric built by `factory(params)`; `post(output, n)` -> (n,) scores.
    `per_row`: call Quantus once per instance (for metrics that aggregate over the batch)."""
    def fn(model: Any, inputs: Sequence[Any], maps: Sequence[np.ndarray], targets: np.ndarray,
           ids: Sequence[str] | None = None, per_instance: bool = False, seed: int = 0, **params: Any) -> Scored:
        x = np.stack([np.asarray(v, dtype=np.float32) for v in inputs])
        a = np.stack([np.asarray(m, dtype=np.float32) for m in maps])
        if a.shape != x.shape:
            return Scored.failed(len(x), "shape")
        x, a, y = x[:, None], a[:, None], np.asarray(targets, dtype=np.int64)
        ids = list(ids or [""] * len(x))
        rows = [[i] for i in range(len(x))] if per_row else [list(range(len(x)))]
        values = np.full(len(x), np.nan)
        with warnings.catch_warnings(), _seeded(seed):
            warnings.simplefilter("ignore")
            for r in rows:
                out = factory(params)(model=_Adaptor(model, [ids[i] for i in r], per_instance), x_batch=x[r],
                                      y_batch=y[r], a_batch=a[r], channel_first=True, batch_size=len(r),
                                      device="cpu", softmax=False)
                values[r] = post(out, len(r))
        return Scored(values, [""] * len(x))
    return fn


def _flat(out: Any, n: int) -> np.ndarray:
    return np.asarray(out, dtype=np.float64).reshape(n)


def _curve_mean(out: Any, n: int) -> np.ndarray:
    return np.array([float(np.mean(np.asarray(c, dtype=np.float64))) for c in out]).reshape(n)


def _road_mean(out: Any, n: int) -> np.ndarray:
    return np.array([float(np.mean(list(out.values())))]) if n == 1 else np.full(n, np.nan)


def _faithfulness_correlation(p: dict) -> Any:
    import quantus
    return quantus.FaithfulnessCorrelation(nr_runs=p["nr_runs"], subset_size=p["subset_size"], perturb_baseline="black",
                                           return_aggregate=False, disable_warnings=True)


def _pixel_flipping(p: dict) -> Any:
    import quantus
    return quantus.PixelFlipping(features_in_step=p["features_in_step"], perturb_baseline="black",
                                 disable_warnings=True)


def _region_perturbation(p: dict) -> Any:
    import quantus
    return quantus.RegionPerturbation(patch_size=p["patch_size"], regions_evaluation=p["regions"], order="morf",
                                      perturb_baseline="black", disable_warnings=True)


def _infidelity(p: dict) -> Any:
    import quantus
    return quantus.Infidelity(perturb_patch_sizes=[p["patch_size"]], n_perturb_samples=p["n_perturb_samples"],
                              perturb_baseline="black", disable_warnings=True)


def _road(p: dict) -> Any:
    import quantus
    return quantus.ROAD(percentages=list(p["percentages"]), noise=p["noise"], disable_warnings=True)


def _map_only(factory_name: str) -> Callable[..., Scored]:
    def fn(model: Any, inputs: Sequence[Any], maps: Sequence[np.ndarray], targets: np.ndarray, **_: Any) -> Scored:
        import quantus
        a = np.stack([np.asarray(m, dtype=np.float32) for m in maps])[:, None]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = getattr(quantus, factory_name)(disable_warnings=True)(
                model=None, x_batch=a, y_batch=np.zeros(len(a), dtype=np.int64), a_batch=a, channel_first=True)
        return Scored(_flat(out, len(a)), [""] * len(a))
    return fn


register(GtFreeMetric("faithfulness-correlation", "image", BHATT, "higher", _quantus(_faithfulness_correlation, _flat),
                      {"nr_runs": 100, "subset_size": 224}, description="Quantus FaithfulnessCorrelation"))
register(GtFreeMetric("pixel-flipping", "image", BACH, "lower", _quantus(_pixel_flipping, _curve_mean),
                      {"features_in_step": 256}, description="Quantus PixelFlipping, mean of the curve"))
register(GtFreeMetric("region-perturbation", "image", SAMEK_AOPC, "higher",
                      _quantus(_region_perturbation, _curve_mean), {"patch_size": 8, "regions": 100},
                      description="Quantus RegionPerturbation (MoRF), AOPC"))
register(GtFreeMetric("infidelity", "image", YEH, "lower", _quantus(_infidelity, _flat),
                      {"patch_size": 8, "n_perturb_samples": 1}, description="Quantus Infidelity, black 8×8 patches"))
register(GtFreeMetric("road", "image", ROAD, "lower", _quantus(_road, _road_mean, per_row=True),
                      {"percentages": tuple(range(10, 100, 10)), "noise": 0.01}, classification_only=True,
                      description="Quantus ROAD (MoRF, noisy linear imputation)"))
register(GtFreeMetric("sparseness", "image", CHALASANI, "higher", _map_only("Sparseness"), needs_model=False,
                      description="Quantus Sparseness (Gini index)"))
register(GtFreeMetric("complexity", "image", BHATT, "lower", _map_only("Complexity"), needs_model=False,
                      description="Quantus Complexity (entropy)"))
