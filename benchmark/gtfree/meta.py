"""MetaQuantus beside the metric board: how reliable MetaQuantus (Hedström et al., TMLR 2023;
`metaquantus==0.0.5`) finds each image GT-free metric, so a reader can set it beside the metric's
agreement with the ground truth (`leaderboard.metric_board`).

MetaQuantus meta-evaluates a metric (an "estimator") by perturbing the evaluation problem and asking
whether its scores behave: under a *minor* perturbation (Resilience tests) they should not change
(noise resilience, NR); under a *disruptive* one (Adversary tests) they should (adversarial reactivity,
AR). Two perturbation tests, each run at both strengths:

* Input Perturbation Test (IPT): uniform noise U(−ε, ε) added to the inputs (ε = 0.001 minor, 5.0
  disruptive), the explanations of the unperturbed inputs scored on the perturbed ones;
* Model Perturbation Test (MPT): the model's weights multiplied by N(1, σ²) (σ = 0.001 minor, 2.0
  disruptive) and every explanation recomputed on the perturbed model.

(ε and σ: MetaQuantus's settings for its MNIST / fMNIST experiments, `metaquantus/helpers/configs.py`.)
For each test and each explanation method, IAC (intra-consistency) is the Wilcoxon signed-rank p-value
between unperturbed and perturbed scores (NR: p; AR: 1 − p), over the instances the perturbation kept
(NR) or changed (AR) the prediction of; IEC (inter-consistency) is the share of (method, instance) cells
whose ranking across methods is kept (NR) or whose score got worse (AR). MC is the mean of IAC_NR,
IAC_AR, IEC_NR, IEC_AR; all lie in [0, 1], higher is better. We report per test and, averaged over the
two tests, `noise_resilience` = mean(IAC_NR, IEC_NR), `adversarial_reactivity` = mean(IAC_AR, IEC_AR)
and `mc` = their mean.

Two departures from running metaquantus as shipped, both needed and both stated:

* MetaQuantus 0.0.5 compares `if score_direction:` with the strings "higher"/"lower", both truthy, so
  IEC_AR always counts "the score went up" as worse; we pass "lower" for lower-is-better metrics and
  None for higher-is-better ones, which selects the comparison its docstring describes.
* Its tests decide "prediction kept / changed" by the argmax of the output, which is always 0 for a
  one-output regressor (the AIXI SSIN boards): no instance would ever be "changed". For a regressor
  the tests here call it changed when |f(x̃) − f(x)| exceeds `tolerance` × the standard deviation of
  f over the batch ([I], default 0.1); for a classifier they are MetaQuantus's own code.

MetaQuantus needs a white-box torch model (the MPT perturbs weights) and an explainer it can re-run:
captum's Saliency, IntegratedGradients and GradientShap through `quantus.explain`, as in its paper.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import sys
import time
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch

from benchmark.gtfree import get_metric
from benchmark.gtfree.compute import _write, board_dir
from benchmark.gtfree.image import _seeded as image_seeded
from benchmark.gtfree.image import (
    _curve_mean,
    _faithfulness_correlation,
    _flat,
    _infidelity,
    _pixel_flipping,
    _region_perturbation,
)
from benchmark.store.results import ids_digest

FORMAT = "xaibench-metaquantus-v1"
FILENAME = "metaquantus.json"
TORCHVISION_MESSAGE = "metaquantus's ImageNet configs need torchvision; xaibench does not use them"
METRICS = ("faithfulness-correlation", "pixel-flipping", "region-perturbation", "infidelity", "sparseness",
           "complexity")
XAI_METHODS = ("Saliency", "IntegratedGradients", "GradientShap")
# (kind, strength, ε or σ): MetaQuantus's MNIST / fMNIST test suite (metaquantus/helpers/configs.py)
TESTS = {"Model Resilience Test": ("model", "resilience", 0.001), "Model Adversary Test": ("model", "adversary", 2.0),
         "Input Resilience Test": ("input", "resilience", 0.001), "Input Adversary Test": ("input", "adversary", 5.0)}
TOLERANCE = 0.1  # [I] a regressor's prediction "changed" when it moved more than this × std of f over the batch


class _TorchvisionPlaceholder(types.ModuleType):
    """Stands in for torchvision, which metaquantus imports at module level only for its ImageNet
    experiment configs; any use of it raises ImportError saying so."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(f"{TORCHVISION_MESSAGE} (torchvision.{name} was asked for)")


def import_metaquantus() -> types.ModuleType:
    """`import metaquantus`, also where torchvision is not importable (not installed, or PyPI's wheel
    beside our CPU torch: "operator torchvision::nms does not exist"): then, and only then, a placeholder
    module whose attributes raise ImportError is registered as `torchvision` while metaquantus imports, and
    removed afterwards: other libraries of the process (transformers asks `find_spec("torchvision")`) see
    torchvision as it is."""
    if "metaquantus" in sys.modules:
        return sys.modules["metaquantus"]
    placeholder = None
    try:
        importlib.import_module("torchvision")
    except Exception:  # noqa: BLE001 — any failure to import it means: use the placeholder
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        placeholder = sys.modules["torchvision"] = _TorchvisionPlaceholder("torchvision", TORCHVISION_MESSAGE)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module("metaquantus")
    finally:
        if placeholder is not None and sys.modules.get("torchvision") is placeholder:
            del sys.modules["torchvision"]


class _Estimator:
    """A Quantus metric as MetaQuantus uses it (`abs`, `normalise`… and a call returning one score per
    instance): the metric board's per-instance reduction (`post`) applied to the metric's output."""

    def __init__(self, metric: Any, post: Callable[[Any, int], np.ndarray]) -> None:
        self.metric, self.post = metric, post
        for attr in ("abs", "normalise", "normalise_func", "normalise_func_kwargs"):
            setattr(self, attr, getattr(metric, attr))

    def __call__(self, **kwargs: Any) -> np.ndarray:
        return self.post(self.metric(**kwargs), len(kwargs["x_batch"]))


def _map_metric(name: str) -> Callable[[dict], Any]:
    def factory(_: dict) -> Any:
        import quantus
        return getattr(quantus, name)(disable_warnings=True)
    return factory


_FACTORIES: dict[str, tuple[Callable[[dict], Any], Callable[[Any, int], np.ndarray]]] = {
    "faithfulness-correlation": (_faithfulness_correlation, _flat),
    "pixel-flipping": (_pixel_flipping, _curve_mean),
    "region-perturbation": (_region_perturbation, _curve_mean),
    "infidelity": (_infidelity, _flat),
    "sparseness": (_map_metric("Sparseness"), _flat),
    "complexity": (_map_metric("Complexity"), _flat),
}


def estimator(name: str) -> _Estimator:
    """The Quantus metric `name` with the metric board's parameters (benchmark.gtfree.image)."""
    factory, post = _FACTORIES[name]
    return _Estimator(factory(dict(get_metric(name).params)), post)


def _regression_aware(base: type, kind: str) -> type:
    """A subclass of a MetaQuantus perturbation test that, for a one-output model, decides "kept" /
    "changed" by |Δf| against `tolerance` × std(f) instead of the argmax; otherwise MetaQuantus's code."""

    class Test(base):
        def __init__(self, *args: Any, tolerance: float = TOLERANCE, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.tolerance = tolerance

        def __call__(self, estimator: Any, xai_methods: dict, nr_perturbations: int, model: Any, x_batch: np.ndarray,
                     y_batch: np.ndarray, a_batch: Any, s_batch: Any, channel_first: bool, explain_func: Callable,
                     model_predict_kwargs: dict, softmax: bool, device: Any) -> tuple[dict, np.ndarray, np.ndarray]:
            from metaquantus.helpers.utils import generate_explanations
            from quantus import get_wrapped_model

            common = dict(channel_first=channel_first, softmax=softmax, device=device,
                          model_predict_kwargs=model_predict_kwargs)
            wrapped: Any = get_wrapped_model(model=model, **common)
            f = np.asarray(wrapped.predict(torch.Tensor(x_batch)))
            if f.ndim == 2 and f.shape[1] > 1:
                return super().__call__(estimator=estimator, xai_methods=xai_methods, nr_perturbations=nr_perturbations,
                                        model=model, x_batch=x_batch, y_batch=y_batch, a_batch=a_batch,
                                        s_batch=s_batch, channel_first=channel_first, explain_func=explain_func,
                                        softmax=softmax, device=device, model_predict_kwargs=model_predict_kwargs)
            f = f.reshape(len(x_batch))
            tol = self.tolerance * float(np.std(f))
            n = len(x_batch)
            scores = {k: np.zeros((nr_perturbations, n)) for k in xai_methods}
            preds = np.zeros((nr_perturbations, n), dtype=int)
            indices = np.zeros((nr_perturbations, n), dtype=bool)
            for p in range(nr_perturbations):
                if kind == "input":  # MetaQuantus's IPT: explanations of x, scored on x̃
                    x_p = x_batch + np.random.uniform(-self.noise, self.noise, size=x_batch.shape)
                    x_p = np.clip(x_p, x_batch.min(), x_p.max()).astype(x_batch.dtype)
                    m_p, explained = model, x_batch
                else:  # MetaQuantus's MPT: weights × N(mean, std²), explanations recomputed on it
                    sampled = wrapped.sample(mean=self.mean, std=self.std, noise_type=self.noise_type)
                    m_p, x_p, explained = get_wrapped_model(model=sampled, **common).get_model(), x_batch, x_batch
                f_p = np.asarray(get_wrapped_model(model=m_p, **common).predict(torch.Tensor(x_p))).reshape(n)
                moved = np.abs(f_p - f) > tol
                indices[p] = ~moved if self.type == "resilience" else moved
                for method, kwargs in xai_methods.items():
                    kw = {**kwargs, "method": method}
                    a = generate_explanations(model=m_p, x_batch=explained, y_batch=y_batch, explain_func=explain_func,
                                              explain_func_kwargs=dict(kw), abs=estimator.abs,
                                              normalise=estimator.normalise, normalise_func=estimator.normalise_func,
                                              normalise_func_kwargs=estimator.normalise_func_kwargs, device=device)
                    scores[method][p] = estimator(model=m_p, x_batch=x_p, y_batch=y_batch, a_batch=a, s_batch=s_batch,
                                                  explain_func=explain_func, explain_func_kwargs=kw,
                                                  model_predict_kwargs=model_predict_kwargs,
                                                  channel_first=channel_first, softmax=softmax, device=device)
            return scores, preds, indices

    Test.__name__ = Test.__qualname__ = f"RegressionAware{base.__name__}"
    return Test


def test_suite(tolerance: float = TOLERANCE) -> dict[str, Any]:
    """MetaQuantus's four tests (TESTS), regression-aware (see the module docstring)."""
    mq = import_metaquantus()
    ipt = _regression_aware(mq.InputPerturbationTest, "input")
    mpt = _regression_aware(mq.ModelPerturbationTest, "model")
    suite: dict[str, Any] = {}
    for name, (kind, strength, level) in TESTS.items():
        if kind == "input":
            suite[name] = ipt(type=strength, noise=level, tolerance=tolerance)
        else:
            suite[name] = mpt(type=strength, noise_type="multiplicative", mean=1.0, std=level, tolerance=tolerance)
    return suite


@contextlib.contextmanager
def _frozen_gc() -> Iterator[None]:
    """MetaQuantus calls gc.collect() around every explanation; with this process's heap (torch, quantus,
    scipy…) each call costs ~0.2 s, over 90 % of a small run. gc.freeze() leaves the objects that exist
    now out of those collections (what the run allocates is still collected); unfrozen after."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """NumPy's global state seeded as the image metrics seed it (`image._seeded`), and torch's too."""
    with image_seeded(seed), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def _num(v: Any) -> float | None:
    v = float(v)
    return v if np.isfinite(v) else None


def meta_scores(module: torch.nn.Module, x: np.ndarray, y: np.ndarray, metric_names: Sequence[str] = METRICS,
                xai_methods: Sequence[str] = XAI_METHODS, iterations: int = 2, nr_perturbations: int = 2,
                tolerance: float = TOLERANCE, seed: int = 0) -> dict[str, dict[str, Any]]:
    """MetaQuantus's meta-evaluation of each metric on `module` (torch, channel-first inputs x (N, C, H, W),
    targets y): per metric the IAC / IEC / MC of each perturbation type ("input", "model"), the share of
    instance cells each test selected, and the summary `noise_resilience`, `adversarial_reactivity`, `mc`
    (None where undefined, e.g. no instance's prediction changed under the disruptive perturbation)."""
    mq = import_metaquantus()
    module.eval()
    out: dict[str, dict[str, Any]] = {}
    for name in metric_names:
        direction = get_metric(name).direction
        t0 = time.perf_counter()
        me = mq.MetaEvaluation(test_suite=test_suite(tolerance), xai_methods={m: {} for m in xai_methods},
                               iterations=iterations, nr_perturbations=nr_perturbations, write_to_file=False,
                               print_results=False, uid=name)
        with _seeded(seed), _frozen_gc(), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            # "lower" / None: MetaQuantus 0.0.5 tests `if score_direction:` (module docstring)
            me(estimator=estimator(name), model=module, x_batch=np.asarray(x, dtype=np.float32),
               y_batch=np.asarray(y, dtype=np.int64), channel_first=True, softmax=False, device="cpu",
               score_direction="lower" if direction == "lower" else None)
        row: dict[str, Any] = {"direction": direction, "seconds": round(time.perf_counter() - t0, 2)}
        for kind, res in me.results_meta_consistency_scores.items():
            c = res["consistency_results"]
            row[kind.lower()] = {
                "IAC_NR": _num(c["IAC_{NR} mean"]), "IAC_AR": _num(c["IAC_{AR} mean"]),
                "IEC_NR": _num(c["IEC_{NR} mean"]), "IEC_AR": _num(c["IEC_{AR} mean"]),
                "MC": _num(res["MC_mean"]), "MC_std": _num(res["MC_std"])}
        row["selected"] = {t: float(np.mean([np.mean(v) for v in me.results_indices_perturbed[t].values()]))
                           for t in TESTS}
        parts = [row[k] for k in ("input", "model") if k in row]
        nr = [p[s] for p in parts for s in ("IAC_NR", "IEC_NR")]
        ar = [p[s] for p in parts for s in ("IAC_AR", "IEC_AR")]
        row["noise_resilience"] = None if None in nr else float(np.mean(nr))
        row["adversarial_reactivity"] = None if None in ar else float(np.mean(ar))
        row["mc"] = None if None in nr + ar else float(np.mean(nr + ar))
        out[name] = row
    return out


def meta_evaluate(track: str, resource: str, model: str, home: Path, metric_names: Sequence[str] = METRICS,
                  n_images: int = 8, split: str = "validation", xai_methods: Sequence[str] = XAI_METHODS,
                  iterations: int = 2, nr_perturbations: int = 2, tolerance: float = TOLERANCE,
                  seed: int = 0) -> Path:
    """Meta-evaluate the metrics on a white-box board (its model must be a torch module: e.g. aixi's
    "cnn") over the first `n_images` of `split`; writes (atomically) and returns the board folder's
    `metaquantus.json`, rewritten after each metric; a metric already there under the same key (model,
    instances, settings) and parameters is reused.
    The resource is found as `benchmark.gtfree.compute.load_board` finds it (XAIBENCH_HOME)."""
    from importlib.metadata import version

    from benchmark.gtfree.compute import load_board

    board = load_board(track, resource, model, split, n_images)
    module = getattr(board.model, "module", None)
    if not isinstance(module, torch.nn.Module):
        raise ValueError(f"{track}/{resource}/{model} has no torch module: MetaQuantus's model test perturbs weights")
    settings = {"split": split, "n_images": len(board.ids), "xai_methods": list(xai_methods), "iterations": iterations,
                "nr_perturbations": nr_perturbations, "tolerance": tolerance, "seed": seed,
                "tests": {k: list(v) for k, v in TESTS.items()}}
    key = {"format": FORMAT, "model": board.model_hash, "ids_sha256": ids_digest(board.ids), "settings": settings,
           "metaquantus": version("metaquantus"), "quantus": version("quantus")}
    path = board_dir(home, track, resource, model) / FILENAME
    data: dict[str, Any] = {"key": key, "ids": board.ids, "metrics": {}}
    if path.exists():
        with contextlib.suppress(ValueError):
            old = json.loads(path.read_text())
            if old.get("key") == key:
                data = old
    x = np.stack([np.asarray(v, dtype=np.float32) for v in board.inputs])[:, None]
    for name in metric_names:  # one metric at a time, written after each: an interrupted run resumes
        params = json.loads(json.dumps(get_metric(name).params, default=list))
        if data["metrics"].get(name, {}).get("params") == params:
            continue
        row = meta_scores(module, x, board.targets, [name], xai_methods, iterations, nr_perturbations, tolerance,
                          seed)[name]
        data["metrics"][name] = {**row, "params": params}
        _write(path, data)
    return path


def load_meta(folder: Path) -> dict[str, dict[str, Any]]:
    """The metaquantus.json of a board folder: metric → {"noise_resilience", "adversarial_reactivity", "mc",
    "input", "model", "selected", ...}; {} when there is none (or it is not one of ours)."""
    path = Path(folder) / FILENAME
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    if data.get("key", {}).get("format") != FORMAT:
        return {}
    return dict(data["metrics"])
