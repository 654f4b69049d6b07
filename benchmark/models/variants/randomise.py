"""Randomised copies of a model under test: Adebayo et al.'s model-parameter randomisation.

Reference: J. Adebayo, J. Gilmer, M. Muelly, I. Goodfellow, M. Hardt, B. Kim, "Sanity Checks for Saliency
Maps", NeurIPS 2018 (https://arxiv.org/abs/1810.03292), §3 "Model parameter randomization test".

One randomisation serves the whole project — the boards' randomisation test (`benchmark.variant_runs.randomisation`, the
runner's randomised-model run) and the metric board's control (`benchmark.gtfree.compute`):

* **full** (`randomised(model, seed)`): a copy of the model whose every torch sub-module is re-initialised
  — its own `reset_parameters()`, under `torch.manual_seed(seed)`; the parameters of a module without one
  are redrawn N(0, σ²) with their own σ (N(0, 1) for a single value). A draw that reproduces the weights
  (an untrained model initialised under that very seed) is redrawn under seed + 1, … (8 tries);
* **cascading** (`randomised(model, seed, top=k)`): Adebayo's cascading variant, stage k — only the last
  k sub-modules that own parameters are re-initialised, in registration order, which is the order the
  project's architectures apply them (the output layer last): k = 1 randomises the output layer, and the
  largest k equals the full randomisation of every parameterised layer;
* a model without torch weights supplies its own `randomised(seed)` (the AIXI function model: its pattern
  weights redrawn from U(−1, 1), `benchmark.models.aixi_function`); a model with neither cannot be
  randomised (`NotRandomisable`: a served black box, a set imported without its model).

The seed is not 0 (`RANDOM_SEED`): models are commonly initialised under seed 0, and `reset_parameters`
under the training seed would rebuild the trained model's own initial weights.

`randomised_spec` gives the `ModelSpec` of the randomised copy: a served model is randomised here and
served; a loaded one carries `randomisation = {"seed", "top", "sha256"}` and is randomised where it is
loaded — in the worker, which refuses to run when its copy's weights (`weights_digest`) differ from the
harness's.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import replace
from typing import Any

import torch

from benchmark.errors import NotRandomisable, XaibenchError

RANDOM_SEED = 20181030  # the randomised copy's seed (module docstring): not 0, not a training seed
TRIES = 8

__all__ = ["RANDOM_SEED", "NotRandomisable", "apply", "owning_modules", "randomised", "randomised_spec",
           "weights_digest"]


def owning_modules(module: torch.nn.Module) -> list[torch.nn.Module]:
    """The sub-modules that own parameters directly, in registration order (the cascade's order)."""
    return [m for m in module.modules() if any(True for _ in m.parameters(recurse=False))]


def _redraw(sub: torch.nn.Module) -> None:
    """Re-initialise one module: its `reset_parameters`, else its own parameters redrawn N(0, σ²)."""
    reset = getattr(sub, "reset_parameters", None)
    if callable(reset):
        reset()
        return
    for p in sub.parameters(recurse=False):
        p.copy_(torch.randn_like(p) * float(p.std()) if p.numel() > 1 else torch.randn_like(p))


def randomised(model: Any, seed: int = RANDOM_SEED, top: int | None = None) -> Any:
    """A randomised copy of `model` (module docstring): every layer re-initialised (`top` None), or the last
    `top` parameterised layers (the cascading variant's stage). `NotRandomisable` when the model has no
    weights and no randomisation of its own; XaibenchError when re-initialising cannot change the weights."""
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise XaibenchError(f"the cascading stage must be an integer ≥ 1, got {top!r}")
    if hasattr(model, "randomised"):
        if top is not None:
            raise NotRandomisable(f"model {getattr(model, 'name', model)!r} has no layers to randomise in cascade")
        return model.randomised(seed)
    if getattr(model, "module", None) is None:
        raise NotRandomisable(f"model {getattr(model, 'name', model)!r} has no weights to randomise (a black "
                              "box with no randomisation of its own)")
    for attempt in range(TRIES):  # a draw that reproduces the weights is redrawn
        m = copy.deepcopy(model)
        m._exact = type(model._exact)()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + attempt)
            with torch.no_grad():
                if top is None:
                    for sub in m.module.modules():
                        sub.__dict__.pop("_vocabulary_tables", None)
                        if hasattr(sub, "reset_parameters"):
                            sub.reset_parameters()
                        else:
                            for p in sub.parameters(recurse=False):
                                p.copy_(torch.randn_like(p) * float(p.std()) if p.numel() > 1 else torch.randn_like(p))
                else:
                    for sub in m.module.modules():
                        sub.__dict__.pop("_vocabulary_tables", None)  # a text model's tables of the old weights
                    for sub in owning_modules(m.module)[-top:]:
                        _redraw(sub)
        if any(not torch.equal(a, b) for a, b in zip(m.module.parameters(), model.module.parameters())):
            return m
    raise XaibenchError(f"model {getattr(model, 'name', model)!r}: re-initialising did not change its weights")


def weights_digest(model: Any) -> str:
    """sha256 hex over a torch model's state (each tensor's name, dtype, shape and bytes, in state-dict order)."""
    h = hashlib.sha256(b"xaibench-weights-v1\n")
    for name, t in model.module.state_dict().items():
        t = t.detach().contiguous().cpu()
        h.update(f"{name}\t{t.dtype}\t{tuple(t.shape)}\n".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def randomised_spec(spec: Any, info: dict[str, Any], seed: int = RANDOM_SEED,
                    top: int | None = None) -> tuple[Any, dict[str, Any]]:
    """(the `ModelSpec` of the randomised copy, its model info) from the trained model's spec and info.

    The info keeps the model's name (the board it belongs to) and gets a new `hash` — the randomised weights'
    digest (a served model's: derived from the trained hash, the seed and the stage) — and `randomisation`:
    `{"seed", "variant" ("full" | "cascade"), "top", "of": the trained model's hash}`. `NotRandomisable` when
    the model cannot be randomised (module docstring)."""
    variant = {"seed": int(seed), "variant": "full" if top is None else "cascade", "top": top,
               "of": str(info.get("hash", ""))}
    if spec.served is not None:
        model = randomised(spec.served, seed, top)
        key = f"{info.get('hash')}:randomised:{seed}:{top}"
        digest = hashlib.sha256(key.encode()).hexdigest()
        new = replace(spec, served=model)
    else:
        model = randomised(spec.load(), seed, top)
        digest = weights_digest(model)
        new = replace(spec, randomisation={"seed": int(seed), "top": top, "sha256": digest})
    return new, {**info, "hash": digest[:16], "randomisation": variant}


def apply(model: Any, randomisation: dict[str, Any] | None) -> Any:
    """`model` randomised as `randomisation` ({"seed", "top", "sha256"}, `randomised_spec`) says — checked: the
    weights must hash to the harness's digest (a ValueError naming both otherwise); `model` itself when None."""
    if not randomisation:
        return model
    out = randomised(model, int(randomisation["seed"]), randomisation.get("top"))
    got = weights_digest(out)
    if got != randomisation.get("sha256"):
        raise ValueError(f"the randomised model's weights here ({got[:12]}) differ from the harness's "
                         f"({str(randomisation.get('sha256'))[:12]}): another torch version draws other weights")
    return out
