"""The randomised-model run: the harness's side of the boards' randomisation test (Adebayo et al. 2018).

Reference: J. Adebayo et al., "Sanity Checks for Saliency Maps", NeurIPS 2018: a map that does not change
when the model's weights are re-drawn explains the data, not the model.

A randomised-model run is an ordinary evaluation — `benchmark.runner.evaluate(..., randomised=True)`, in the
sandboxed worker, through the runner — of a submission on the randomised copy of the board's model
(`benchmark.models.variants.randomise`), with the instances, parameters and seeds of its Result on the trained model
(the **trained Result**, which must exist, `trained_result`). It is cached like any run (the cache file and
key name the randomised weights' hash, which the seed determines), resumable, and written as a Result at its
own path (`benchmark.runner.result_path`: `<model>/randomised-s<seed>/<name>.json` beside the trained one):

* `model` — the randomised copy's info: its `hash` and `randomisation` = {seed, variant, top, of: the trained
  model's hash};
* `metrics` — the track's scores of the maps on the randomised model against the same ground truth;
* `instance_scores` — those scores per instance and the similarity of the two runs' maps per instance
  (`SIMILARITY_KEYS`: Spearman of |map|, SSIM for images; `benchmark.variant_runs.similarity`) and which of the two
  maps is constant (`CONSTANT_KEY`, issue #58), so a board resamples both on its own paired draws and judges a
  constant map rather than skipping it;
* `extra.randomisation` — the trained Result it was paired with (`trained_outputs_sha256`: the maps it was
  compared with; `trained_ids_sha256`, its instances; `trained_result`, its file name beside this one's
  folder) and a summary of the similarity (mean over instances, how many were comparable, why the others
  were not). With `randomisation_limit` the run covers only the first N of the trained run's instances
  (`first_instances`), and the board pairs it with their prefix.

A trained model that cannot be randomised (a served black box without a randomisation of its own) says so in
its trained Results (`model.unrandomisable`, `unrandomisable`), so the board can name the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.store.cache import Entry, read_only
from benchmark.errors import XaibenchError
from benchmark.store.results import Result, outputs_digest
from benchmark.variant_runs.similarity import Compared, compare

# measure (benchmark.variant_runs.similarity) -> its instance_scores array
SIMILARITY_KEYS = {"spearman": "sim-spearman", "spearman-signed": "sim-spearman-signed", "ssim": "sim-ssim"}
# which of an instance's two maps is constant (`benchmark.variant_runs.similarity.Compared.constant`; issue #58)
CONSTANT_KEY = "sim-constant"


def randomisation_of(r: Result) -> dict[str, Any] | None:
    """The randomisation a Result was computed under ({seed, variant, top, of}), or None for the trained model."""
    got = (r.model or {}).get("randomisation")
    return got if isinstance(got, dict) else None


def unrandomisable(spec: Any) -> str | None:
    """Why the model of `spec` (a `ModelSpec`) cannot be randomised, or None when it can: a loaded model always
    has torch weights; a served one needs a `randomised` of its own."""
    if spec.served is None:
        return None
    model = spec.served
    if hasattr(model, "randomised") or getattr(model, "module", None) is not None:
        return None
    return (f"the model under test '{spec.name}' is a black box served by the harness, with no weights to "
            "re-draw and no randomisation of its own")


def trained_result(path: Path, sub_hash: str, params: dict, ids_sha256: str, seeds: list[int]) -> Result:
    """The Result on the trained model a randomised run is paired with, checked: it exists, is unchanged since
    it was written, and was computed by the same code (`sub_hash`), parameters, instances and seeds.
    `XaibenchError` saying what to run otherwise."""
    fix = "evaluate the submission on the trained model first (the same --limit, --seeds and --param)"
    if not Path(path).is_file():
        raise XaibenchError(f"no Result on the trained model at {path}: {fix}")
    r = Result.load(path)
    problems = []
    if r.status == "modified":
        problems.append("it changed after it was written")
    if str(r.submission.get("hash")) != sub_hash:
        problems.append(f"it was computed by other code (submission hash {r.submission.get('hash')}, now {sub_hash})")
    if r.submission.get("parameters") != params:
        problems.append("it was computed with other parameters")
    if (r.coverage or {}).get("ids_sha256") != ids_sha256:
        problems.append("it covers other instances")
    if list(r.provenance.get("seeds") or [r.provenance.get("seed", 0)]) != list(seeds):
        problems.append("it was run under other seeds")
    if not (r.integrity or {}).get("outputs_sha256"):
        problems.append("it records no outputs digest (an older xaibench)")
    if problems:
        raise XaibenchError(f"the Result on the trained model at {path} does not match this run "
                            f"({'; '.join(problems)}): "
                            f"{fix}")
    return r


def first_instances(track: Any, resource: Any, split: str, limit: int, trained_ids: Sequence[str]) -> Any:
    """The track's first `limit` instances of `split`, which must be the first of the trained run's (`trained_ids`):
    a randomised run over fewer instances (`RunOptions.randomisation_limit`) is paired with their prefix
    (`Track.first_instances`)."""
    got = track.first_instances(resource, split, limit)
    if list(got.ids) != list(trained_ids[: len(got.ids)]):
        raise XaibenchError(f"the first {limit} instances of {resource.name} are not the first of the trained run's; "
                            "run the randomisation test on all of its instances (no --randomisation-limit)")
    return got


def result_outputs(r: Result, ids: list[str], home: Path) -> list[dict[str, Entry]]:
    """The cached outputs a Result was scored from, one {id: Entry} per seed run, read-only and checked
    against its `outputs_sha256`; `XaibenchError` naming what is wrong (a cache gone, damaged or replaced)."""
    caches = r.extra.get("caches") or [r.extra.get("cache")]
    if not caches or not caches[0]:
        raise XaibenchError("the Result names no output cache")
    for c in caches:
        if not (Path(home) / str(c)).exists():
            raise XaibenchError(f"its output cache {Path(home) / str(c)} is gone")
    runs = [read_only(Path(home) / str(c), ids) for c in caches]
    missing = sum(1 for run in runs for i in ids if i not in run)
    if missing:
        raise XaibenchError(f"its output cache lacks {missing} of the outputs it was scored from")
    if outputs_digest([run[i] for run in runs for i in ids]) != (r.integrity or {}).get("outputs_sha256"):
        raise XaibenchError("its output cache does not hold the maps it was scored from (outputs_sha256 differs)")
    return runs


def compare_runs(trained: Sequence[dict[str, Entry]], randomised: Sequence[dict[str, Entry]], ids: Sequence[str],
                 image: bool) -> list[Compared]:
    """Per seed run, the similarity of the trained and the randomised maps of every instance
    (`benchmark.variant_runs.similarity`)."""
    out = []
    for t, r in zip(trained, randomised):
        out.append(compare([t[i].array if t[i].ok else None for i in ids],
                           [r[i].array if r[i].ok else None for i in ids], image))
    return out


def similarity_arrays(c: Compared) -> dict[str, np.ndarray]:
    """A seed run's per-instance similarity as `instance_scores` arrays (`SIMILARITY_KEYS`), and which of the two maps
    is constant (`CONSTANT_KEY`)."""
    out = {SIMILARITY_KEYS[m]: v for m, v in c.values.items()}
    if c.constant is not None:
        out[CONSTANT_KEY] = c.constant
    return out


def summary(trained: Result, compared: Sequence[Compared], seed: int, top: int | None) -> dict[str, Any]:
    """`extra.randomisation` of a randomised-model Result (module docstring): the pairing and, per measure, the
    mean over the comparable instances of the first seed run, with their count and why the rest were not."""
    first = compared[0]
    sims: dict[str, Any] = {}
    for m, v in first.values.items():
        good = v[np.isfinite(v)]
        sims[m] = {"mean": float(good.mean()) if good.size else None, "n": int(good.size)}
    return {"seed": int(seed), "variant": "full" if top is None else "cascade", "top": top,
            "trained_outputs_sha256": trained.integrity.get("outputs_sha256"),
            "trained_ids_sha256": (trained.coverage or {}).get("ids_sha256"),
            "trained_result": Path(str(trained.path)).name if trained.path else None,
            "trained_model": str(trained.model.get("hash", "")), "similarity": sims,
            "not_compared": first.counts()}
