"""Live attacks (SPECS §2.4–2.7): TEF and RA run against a submission's OWN explanations.

`xaibench attack <submission> --resource robustness/mr-cnn --model cnn` attacks the resource's original
samples (the first `samples` of them) with the attack layer (`benchmark.attacks.tef`) in the harness —
the model under test, the synonym space, the tagger and the prediction checks stay here — while every
explanation the search needs comes from the submission in the sandboxed worker (`benchmark.isolation`),
one worker round trip per batched `attribute` call (all candidates of a position in one message). The
submission sees texts only: never the resource, the model folder beyond what the worker loads, the
cache or the results.

Per sample and attack: one sweep at ρ_max = 0.40 with the pre budget check (the grid 0.05 … 0.40 are its
prefixes), so every substitution count r ≥ 1 the grid stops at is one attacked text, weighted by the
number of grid values that stop there. The search follows the resource's vocabulary rule
(`params.vocab_rule`; the candidates the model cannot represent are dropped unless it is "off").

No selected luck (`draws`): the search may keep whichever draw of a stochastic explainer happened to
move the most, so the attributions it found are NOT what is scored. After the search, the original
text and every attacked text that is scored are explained again, `draws` times, each under fresh
instance ids (`<sample>~<attack>~score~d<k>` and `…~r<r>~d<k>`: new per-instance seeds, never an id
the search used); draw k of an attacked text is paired with draw k of the original, and each pair
counts 1/draws — so a point's PCC is the mean over the draws. Default: the original is first explained
under two fresh ids; if the two outputs are equal the explainer does not depend on the instance's seed
and 1 draw is enough, else 3 draws (LIME, KernelSHAP, the random control).

Scoring is the robustness track's (`RobustnessTrack.score`, `summarise`, `summary_extra`): PCC, Kendall
τ-b, Spearman, top-k between the original and attacked attributions, ACC under TEF (primary) and RA on
the fixed grid, ERASER faithfulness of the originals, and the PCC-vs-ρ curves. The Result is written
beside the `robustness-live` boards (one per resource and model; the attacked texts differ per
submission, so an instance there is an attacked sample).

Exclusions, counted in the Result (`extra.excluded_samples`) and never silently dropped: a sample with
no substitutable word, an explainer that fails (exception, wrong shape, NaN, time-out, crash) on a text
the attack needed (also listed in `failures`), a constant attribution (PCC undefined). After
`MAX_CRASHES` worker crashes in a row the remaining samples are not run (recorded).

Resume: every finished (attack, sample) is appended to a JSON-lines file under
`$XAIBENCH_HOME/cache/robustness-live/` (fsync'd; a cut-off last line is ignored), keyed by the
submission hash, parameters, model hash, attack options and seed; a rerun continues where it stopped
and retries the samples left "not run".
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

from benchmark.attacks.tef import RHO_GRID, AttackConfig, Attacker, model_vocabulary, sweep
from benchmark.store.cache import Entry
from benchmark.errors import CacheError, ResourceError, SubmissionError, XaibenchError
from benchmark.isolation import MAX_CRASHES, Limits, Worker, WorkerConfig, WorkerCrash, default_memory_gb
from benchmark.progress import progress_bar
from benchmark.provenance import software
from benchmark.resources import data_home, load_resource
from benchmark.store.results import Failure, Result, coverage_of, outputs_digest
from benchmark.submission import Submission, get_submission
from benchmark.tracks import get_track

LIVE_ATTACKS = ("tef", "ra")
SPACE_FILE = "space/cf-glove50-wordnet.npz"  # the offline space `xaibench generate robustness` builds


@dataclass
class LiveOptions:
    """The options of `xaibench attack` (`attack_submission(**options)`); `check` validates them."""

    model: str = "cnn"
    samples: int | None = 20  # the first N original samples of the resource (None: all)
    attacks: tuple[str, ...] = LIVE_ATTACKS
    n_candidates: int = 15
    pcc_undefined: str = "zero"
    seed: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 60.0  # per explained text
    sandbox: str = "auto"
    memory_gb: float | None = None  # None: one worker's share of the machine (benchmark.isolation.default_memory_gb)
    overwrite: bool = False
    results_dir: Path | None = None
    vectors: Path | None = None  # the counter-fitted vector file, when the resource was built with one
    # "after" for cheap explainers: same texts up to float near-ties, fewer tagger calls (tef.AttackConfig)
    pos_check: str = "before"
    draws: int | None = None  # re-explanations of each scored text (None: 1, or 3 if the output depends on the id)

    def check(self) -> None:
        """Deduplicate `attacks` and raise `XaibenchError` for an option out of range."""
        self.attacks = tuple(dict.fromkeys(self.attacks))  # `--attack tef --attack tef` attacks once
        bad = [a for a in self.attacks if a not in LIVE_ATTACKS]
        if bad or not self.attacks:
            raise XaibenchError(f"attacks must be among {', '.join(LIVE_ATTACKS)} (the scored ones), "
                                f"got {list(self.attacks)}")
        if self.samples is not None and (isinstance(self.samples, bool) or not isinstance(self.samples, int)
                                         or self.samples < 1):
            raise XaibenchError(f"samples must be an integer ≥ 1, got {self.samples!r}")
        if not (isinstance(self.timeout_s, (int, float)) and np.isfinite(self.timeout_s) and self.timeout_s >= 0):
            raise XaibenchError(f"timeout must be a number of seconds ≥ 0, got {self.timeout_s!r}")
        if self.draws is not None and (isinstance(self.draws, bool) or not isinstance(self.draws, int)
                                       or not 1 <= self.draws <= 100):
            raise XaibenchError(f"draws must be an integer in 1 … 100, got {self.draws!r}")
        AttackConfig(n_candidates=self.n_candidates, pcc_undefined=self.pcc_undefined, seed=self.seed,
                     pos_check=self.pos_check).check()


class ExplanationFailed(RuntimeError):
    """The submission failed on a text the attack needed (the Attacker records the sample as excluded)."""


def worker_attribute(worker: Worker, prefix: str, seed: int, timeout_s: float,
                     on_crash: Callable[[str], None] | None = None):
    """`attribute(texts, ids=None) -> list[np.ndarray]` answered by the submission in `worker`: one `batch`
    message per call, instance ids `<prefix>~q<call>-<k>` (or `ids`); any failed text raises
    `ExplanationFailed` with its reason."""
    calls = iter(range(1 << 62))

    def attribute(texts, ids=None):
        texts = [[str(w) for w in t] for t in texts]
        base = f"{prefix}~q{next(calls)}"
        ids = list(ids) if ids is not None else [f"{base}-{k}" for k in range(len(texts))]
        try:
            entries = worker.explain(ids, texts, None, seed, [(len(t),) for t in texts], timeout_s)
        except WorkerCrash as crash:
            if on_crash is not None:
                on_crash(crash.reason)
            raise ExplanationFailed(f"the worker crashed: {crash.reason}") from None
        bad = [e for e in entries if not e.ok]
        if bad:
            raise ExplanationFailed(bad[0].reason)
        return [np.asarray(e.array, dtype=np.float64) for e in entries]
    return attribute


def _samples(resource, limit: int | None) -> list[tuple[str, list[str], int]]:
    """(sample id, tokens, label) of the resource's original texts, in table order."""
    t = resource.table("test").to_pydict()
    seen: dict[str, tuple[str, list[str], int]] = {}
    for i in range(len(t["id"])):
        s = t["sample"][i]
        if s not in seen:
            seen[s] = (s, list(t["tokens"][i]), int(t["label"][i]))
    out = list(seen.values())
    return out if limit is None else out[:limit]


def _space(resource, vectors: Path | None):
    from benchmark.attacks.synonyms import SynonymSpace

    if vectors is not None:
        return SynonymSpace.from_text(Path(vectors))
    file = resource.root / SPACE_FILE
    name = resource.params.get("space")
    if not file.is_file():
        raise ResourceError(f"the synonym space {file} is missing; rebuild it with `xaibench generate robustness` "
                            f"(or pass --vectors FILE, the counter-fitted vectors the resource was built with)")
    space = SynonymSpace.load(file)
    if name and space.name != name:
        raise ResourceError(f"{resource.name} was attacked in the space '{name}', but {file} holds '{space.name}'; "
                            f"pass --vectors FILE with the resource's vectors")
    return space


class _Log:
    """Append-only JSON lines: a key line, then one record per finished (attack, sample)."""

    def __init__(self, path: Path, key: dict, overwrite: bool) -> None:
        self.path, self.key = path, key
        path.parent.mkdir(parents=True, exist_ok=True)
        self.done: dict[tuple[str, str], dict] = {}
        if overwrite and path.exists():
            path.unlink()
        if path.exists():
            lines = path.read_bytes().split(b"\n")
            try:
                head = json.loads(lines[0])
            except ValueError:
                head = None
            if head != {"key": key}:
                raise CacheError(f"live-attack log {path} was made for other options (or is damaged); "
                                 "rerun with --overwrite")
            # an interrupted last line is skipped, and a sample "not run" (the worker kept crashing) is
            # attacked again: both are retried by a rerun
            self.done = {k: r for k, r in read_log(path).items()
                         if not str(r.get("excluded") or "").startswith("not run")}
            with open(path, "rb+") as f:  # drop a cut-off tail so appends start on a fresh line
                data = f.read()
                keep = data[: data.rfind(b"\n") + 1] if not data.endswith(b"\n") else data
                f.seek(0)
                f.truncate()
                f.write(keep)
        else:
            self._append({"key": key})

    def _append(self, obj: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(obj, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def add(self, rec: dict) -> None:
        self._append(rec)
        self.done[(rec["attack"], rec["sample"])] = rec


@dataclass
class _Crashes:
    """The worker's crashes since the last attack it finished (`MAX_CRASHES` in a row stop the run)."""

    in_a_row: int = 0
    last: str = ""  # the reason of the latest crash

    def record(self, why: str) -> None:
        self.in_a_row += 1
        self.last = why


def _record(attack: str, sample: str, res, rs: dict[float, int]) -> dict:
    """What a finished attack on one sample leaves for scoring (JSON): the texts it reached; the
    attributions the search saw are kept for the record, the scored ones come from `_rescore`."""
    weights: dict[int, int] = {}
    for r in rs.values():
        weights[r] = weights.get(r, 0) + 1
    points = []
    if res.excluded is None:
        for r in sorted(w for w in weights if w > 0):
            if res.prediction_after(r) != res.label:  # the attack layer never accepts such a text
                raise XaibenchError(f"live attack on {sample}: the prediction changed after {r} substitutions")
            points.append({"r": r, "rho": r / res.n, "weight": weights[r], "tokens": res.adversarial(r),
                           "search_attribution": [float(x) for x in res.attribution_after(r)]})
    return {"attack": attack, "sample": sample, "excluded": res.excluded, "n": res.n, "label": res.label,
            "tokens": list(res.tokens), "points": points,
            "search_attribution": [float(x) for x in res.attribution] if res.excluded is None else None,
            "skipped": res.skipped, "calls": res.calls, "vocab": res.vocab, "seconds": round(res.seconds, 3)}


STOCHASTIC_DRAWS = 3  # re-explanations of each scored text for an explainer whose output depends on the id


def same_output(a, b) -> bool:
    """Two explanations of one text equal up to float rounding (a batch's composition can move a
    deterministic explainer's scores by ≈ 1e-7 relative; a seeded sampler's move by far more)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = max(float(np.abs(a).max(initial=0.0)), float(np.abs(b).max(initial=0.0)), 1e-30)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-5 * scale))


def _rescore(rec: dict, attribute, draws: int | None) -> dict:
    """The scored attributions of a finished attack (module docstring, "no selected luck"): the original
    and every point's text explained under fresh ids, `draws` times. `draws=None`: the original is
    explained under two fresh ids first — equal outputs up to float rounding (`same_output`: an explainer
    whose output does not depend on the instance's seed) → 1 draw, else `STOCHASTIC_DRAWS`."""
    if rec["excluded"] is not None or not rec["points"]:
        return {**rec, "scored": []}
    texts = [rec["tokens"]] + [p["tokens"] for p in rec["points"]]
    names = ["orig"] + [f"r{p['r']}" for p in rec["points"]]
    ident = lambda nm, k: f"{rec['sample']}~{rec['attack']}~score~{nm}~d{k}"  # noqa: E731
    try:
        if draws is None:  # draw 0 of every text + the original again: does the output depend on the id?
            got = attribute(texts + texts[:1], [ident(nm, 0) for nm in names] + [ident("orig", 1)])
            probe = got.pop()
            k = 1 if same_output(got[0], probe) else STOCHASTIC_DRAWS
            if k > 1:
                more = [(nm, d) for d in range(1, k) for nm in names][1:]  # draw 1's original is the probe
                got += [probe] + attribute([texts[names.index(nm)] for nm, _d in more],
                                           [ident(nm, d) for nm, d in more])
        else:
            k = draws
            got = attribute([t for _d in range(k) for t in texts], [ident(nm, d) for d in range(k) for nm in names])
    except ExplanationFailed as exc:
        return {**rec, "excluded": f"explainer_failed: re-explaining the scored texts: {exc}"[:500], "scored": []}
    scored = []
    for d in range(k):
        part = got[d * len(texts):(d + 1) * len(texts)]
        scored.append({"draw": d, "attribution": [float(x) for x in part[0]],
                       "points": {str(p["r"]): [float(x) for x in a] for p, a in zip(rec["points"], part[1:])}})
    return {**rec, "scored": scored}


def attack_submission(submission: str | Path | Submission, resource: str, **options: Any) -> Result:
    """Run the live attacks of `options` (`LiveOptions`) on `submission`; write and return the Result."""
    from benchmark.attacks.filters import PosTagger
    from benchmark.runner import asset_key, display_name, hidden_paths, result_path

    opts = LiveOptions(**options)
    opts.check()
    sub = submission if isinstance(submission, Submission) else get_submission(submission)
    trk = get_track("robustness-live")
    if sub.kind != "explainer":
        raise SubmissionError(f"{sub.name} is an {sub.kind}; live attacks target explainers")
    res = load_resource(resource)
    if res.family != trk.family:
        raise SubmissionError(f"resource {resource} belongs to family '{res.family}', not the robustness track")
    samples = _samples(res, opts.samples)
    if not samples:
        raise ResourceError(f"{res.name} holds no attacked samples; regenerate it (xaibench generate robustness)")
    spec, model_info = trk.build_model(res, opts.model, None)
    model = spec.load()  # the harness's copy: predictions for the search, never shown to the submission
    sub.precheck()
    from benchmark.submission.requirements import check_installed

    check_installed(sub.name, sub.requires)
    assets = trk.assets(res)
    why_not = sub.supports("text", spec.white_box, False, assets)
    if why_not:
        raise SubmissionError(f"cannot evaluate: {why_not} (model '{opts.model}'); choose another model or submission")
    sub.check_parameters(opts.params)
    params = {**sub.parameters, **opts.params}
    name = display_name(sub, opts.params)
    space = _space(res, opts.vectors)
    results_dir = Path(opts.results_dir) if opts.results_dir else data_home() / "results"
    rule = "keep" if res.params.get("vocab_rule", "off") == "off" else "drop"  # the resource's vocabulary rule
    draws = opts.draws  # None: probed per record (`_rescore`)
    acfg = {"n_candidates": opts.n_candidates, "pcc_undefined": opts.pcc_undefined, "seed": opts.seed,
            "rho_grid": list(RHO_GRID), "budget_check": "pre", "pos_check": opts.pos_check,
            "unrepresentable": rule, "draws": draws}
    key = {"resource": res.name, "revision": res.revision, "model": model_info["hash"], "submission": sub.hash,
           "parameters": params, "attack": acfg, "space": space.name, **asset_key(sub, assets)}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]
    log = _Log(data_home() / "cache" / "robustness-live" / res.name.replace("/", "__") / opts.model /
               f"{sub.name}-{sub.hash[:8]}-{digest}.jsonl", key, opts.overwrite)
    config = WorkerConfig(sandbox=opts.sandbox, hidden=hidden_paths(results_dir, res.root),
                          limits=Limits(memory_bytes=int((opts.memory_gb or default_memory_gb(1)) * (1 << 30)),
                                        cpu_seconds=None), assets=assets)
    worker = Worker(sub, opts.params, spec, config)
    todo = [(a, s) for a in opts.attacks for s in samples if (a, s[0]) not in log.done]
    crashes = _Crashes()
    t_start = time.perf_counter()
    try:
        if todo:
            refused = worker.start()
            if refused:
                raise SubmissionError(f"cannot evaluate: {refused} (model '{opts.model}'); choose another model "
                                      "or submission")
        tagger = PosTagger()
        represents = model_vocabulary(model)
        with progress_bar(len(todo), f"live {'/'.join(opts.attacks)} on {name}", unit="sample") as bar:
            for attack, (sid, tokens, _label) in todo:
                if crashes.in_a_row >= MAX_CRASHES:
                    log.add({"attack": attack, "sample": sid, "excluded": "not run: the worker crashed "
                             f"{crashes.in_a_row} times in a row (last: {crashes.last})"[:500], "n": len(tokens),
                             "label": -1, "attribution": None, "points": [], "skipped": {}, "calls": {}, "seconds": 0})
                    bar.advance(1)
                    continue
                attribute = worker_attribute(worker, f"{sid}~{attack}", opts.seed, opts.timeout_s,
                                             on_crash=crashes.record)
                attacker = Attacker(model.predict, attribute, space,
                                    AttackConfig(method=attack, n_candidates=opts.n_candidates,
                                                 pcc_undefined=opts.pcc_undefined, seed=opts.seed,
                                                 pos_check=opts.pos_check, unrepresentable=rule), tagger=tagger,
                                    represents=represents)
                result, rs = sweep(attacker, tokens, RHO_GRID, sample_seed=samples.index((sid, tokens, _label)))
                if result.excluded is None:
                    crashes.in_a_row = 0
                log.add(_rescore(_record(attack, sid, result, rs), attribute, draws))
                bar.advance(1)
    finally:
        worker.close()
    return _result(trk, sub, name, params, res, opts, model_info, samples, log, worker,
                   time.perf_counter() - t_start, results_dir, result_path)


def scored(records: dict, attacks, samples) -> tuple[list[str], list[np.ndarray], list[dict], list[Failure], dict]:
    """The logged attacks as the robustness track's instances: (ids, attributions, kind, failures,
    excluded counts). Per attacked sample, attack and re-explanation draw k: the original
    (`<sample>~<attack>~live~d<k>`) and each attacked text (`…~r<r>~d<k>`, weighted by the ρ_max grid
    values that stop at it / draws); `kind[i]["unit"]` = the sample (all its attacks and draws are
    resampled together) and `kind[i]["tokens"]` = the original's or the attacked text (the faithfulness
    probes)."""
    ids: list[str] = []
    arrays: list[np.ndarray] = []
    kind: list[dict] = []
    failures: list[Failure] = []
    excluded: dict[str, int] = {}
    unit: dict[str, int] = {}
    for attack in attacks:
        for sid, tokens, _label in samples:
            rec = records.get((attack, sid))
            if rec is None:
                raise XaibenchError(f"the live-attack log has no record of {attack} on sample {sid}")
            if rec["excluded"]:
                why = rec["excluded"].split(":")[0]
                excluded[f"{attack}:{why}"] = excluded.get(f"{attack}:{why}", 0) + 1
                if why in ("explainer_failed", "not run"):
                    failures.append(Failure(f"{sid}~{attack}", rec["excluded"][:500]))
                continue
            if not rec["points"]:
                excluded[f"{attack}:no_substitution"] = excluded.get(f"{attack}:no_substitution", 0) + 1
                continue
            draws = rec.get("scored") or []
            if not draws:
                raise XaibenchError(f"the live-attack log's record of {attack} on {sid} has no re-explained "
                                    "attributions (written by an older xaibench); rerun with --overwrite")
            for d in draws:
                o = len(ids)
                u = unit.setdefault(sid, o)
                ids.append(f"{sid}~{attack}~live~d{d['draw']}")
                arrays.append(np.asarray(d["attribution"], dtype=np.float32))
                kind.append({"original": True, "unit": u, "tokens": list(tokens)})
                for p in rec["points"]:
                    ids.append(f"{sid}~{attack}~live~r{p['r']}~d{d['draw']}")
                    arrays.append(np.asarray(d["points"][str(p["r"])], dtype=np.float32))
                    kind.append({"original": False, "of": o, "unit": u, "attack": attack, "rho": p["rho"],
                                 "weight": p["weight"] / len(draws), "sample": sid,
                                 "tokens": list(p.get("tokens") or [])})
    return ids, arrays, kind, failures, excluded


def _scores(trk, ids, arrays, kind, model=None):
    truths = {"kind": kind, "texts": [k.get("tokens") for k in kind], "model": model}
    scores = trk.score(arrays, truths, list(range(len(ids)))) if ids else {m: np.zeros(0) for m in trk.metrics}
    return scores, np.ones(len(ids), dtype=bool)


def read_log(path: Path) -> dict[tuple[str, str], dict]:
    """The records of a live-attack log (the key line and any unreadable line skipped)."""
    out = {}
    for line in Path(path).read_bytes().split(b"\n")[1:]:
        try:
            rec = json.loads(line)
            out[(rec["attack"], rec["sample"])] = rec
        except (ValueError, KeyError, TypeError):
            continue
    return out


def rescore(result: Result) -> dict:
    """`xaibench verify` for a live Result: the same samples, the logged attributions hashing to the
    Result's outputs digest, and the metrics again from them."""
    from benchmark.store.results import ids_digest

    live, cov = result.extra.get("live") or {}, result.coverage or {}
    res = load_resource(result.resource["name"])
    if res.revision != result.resource["revision"]:
        raise XaibenchError(f"resource {res.name} is now at revision {res.revision}, the Result was scored on "
                            f"{result.resource['revision']}")
    samples = _samples(res, cov.get("limit"))
    if ids_digest([s for s, _t, _l in samples]) != cov.get("ids_sha256"):
        raise XaibenchError("the resource no longer gives the samples the Result covers")
    path = data_home() / str(live.get("log", ""))
    if not live.get("log") or not path.is_file():
        raise XaibenchError(f"its live-attack log {path} is gone")
    trk = get_track(result.track)
    ids, arrays, kind, _f, _e = scored(read_log(path), live.get("attacks", LIVE_ATTACKS), samples)
    logged = outputs_digest([Entry(i, True, a, "", 0.0) for i, a in zip(ids, arrays)])
    if logged != result.integrity.get("outputs_sha256"):
        raise XaibenchError("the logged attributions are not the ones it was scored from")
    from benchmark.tracks.robustness import model_loader

    return trk.summarise(*_scores(trk, ids, arrays, kind, model_loader(trk, res)))


def _result(trk, sub, name, params, res, opts, model_info, samples, log, worker, this_run_s, results_dir,
            result_path) -> Result:
    """Score the logged attacks with the robustness track and write the Result."""
    ids, arrays, kind, failures, excluded = scored(log.done, opts.attacks, samples)
    from benchmark.tracks.robustness import model_loader

    scores, ok = _scores(trk, ids, arrays, kind, model_loader(trk, res))
    metrics = trk.summarise(scores, ok)
    entries = [Entry(i, True, a, "", 0.0) for i, a in zip(ids, arrays)]
    seconds = sum(float(r.get("seconds", 0.0)) for r in log.done.values())
    calls = {c: sum(int(r.get("calls", {}).get(c, 0)) for r in log.done.values())
             for c in ("predict", "attribute", "texts_attributed")}
    vocab: dict[str, int] = {}
    for r in log.done.values():
        for c, v in (r.get("vocab") or {}).items():
            vocab[c] = vocab.get(c, 0) + int(v)
    sample_ids = [sid for sid, _t, _l in samples]
    failed = sorted({f.instance.split("~")[0] for f in failures})
    result = Result(
        submission={"name": name, "base": sub.name, "version": sub.version, "hash": sub.hash, "parameters": params,
                    "kind": sub.kind, "role": trk.board_role(res, sub.name, sub.role)},
        track=trk.name,
        resource={"name": res.name, "version": res.version, "revision": res.revision, "split": "test"},
        model=model_info, metrics=metrics, n_instances=len(sample_ids), n_failed=len(failed),
        failures=[Failure(sid, "; ".join(f.reason for f in failures if f.instance.split("~")[0] == sid)[:500])
                  for sid in failed],
        wall_time_s=round(seconds, 3),
        provenance={**software(), "seed": opts.seed, "device": f"cpu ({platform.machine()})",
                    "isolation": {"sandbox": worker.mode, "worker_starts": worker.starts,
                                  "memory_gb": opts.memory_gb or default_memory_gb(1)},
                    "this_run_s": round(this_run_s, 3)},
        primary_metric=trk.primary_metric,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        coverage=coverage_of(sample_ids, len(_samples(res, None)), opts.samples),
        integrity={"outputs_sha256": outputs_digest(entries)},
        extra={"live": {**asdict_live(opts), "samples": len(samples),
                        "attacked_texts": sum(not k["original"] for k in kind),
                        "excluded_samples": excluded, "calls": calls,
                        "draws": max((len(r.get("scored") or []) for r in log.done.values()), default=0),
                        "unrepresentable": log.key["attack"]["unrepresentable"], "vocab": vocab,
                        "log": str(log.path.relative_to(data_home()))},
               **trk.summary_extra(scores, ok)},
    )
    result.save(result_path(results_dir, trk.name, res.name, opts.model, name, result.coverage))
    return result


def asdict_live(opts: LiveOptions) -> dict:
    """The options a live Result records (`extra.live`): `LiveOptions` without paths, overwrite and params."""
    d = asdict(opts)
    for k in ("results_dir", "vectors", "overwrite", "params"):
        d.pop(k, None)
    d["attacks"] = list(opts.attacks)
    return d
