"""`xaibench results verify REPO@REF` (maintainers): re-run a pull request's Results in the sandbox, compare,
and — when every one holds — land the pull request with one signed record per Result in a single commit.

The pull request must validate against the tip first (`pull.judge`). Then, per Result it adds, the
submission is rebuilt in a scratch folder from exactly the files its code hash covers (`validate.hashed_source`:
nothing else is importable) and evaluated (`benchmark.runner.evaluate`, `--overwrite`: nothing is taken from a
cache) on the same resource revision, evaluation split, model, seeds and batch size. Each evaluation is one
`Evaluation` of the Result's `Rerun` (a later check, e.g. a randomised-model run, adds another to the list).

Rules (`compare`):
* deterministic (`[capabilities] deterministic = true`): the outputs digest (`integrity.outputs_sha256`), every
  per-instance score and `ok` flag (ids in order; relative 1e-9, NaN equal to NaN), every metric summary
  field, the failures (instances and reasons) and the model block equal the re-run's;
* stochastic: two evaluations, and the tolerance comes from them only — never from the submitted file: each
  metric's mean within `tol = h₁ + h₂` (the two re-runs' own 95 % half-widths) of the re-runs' mean, the two
  re-runs within `tol` of each other; the per-instance primary scores no farther from the first re-run (mean
  absolute difference) than `STOCHASTIC_FACTOR` × the second re-run is (a permutation of the instances is
  caught); the failed instances those of one of the re-runs. Equal outputs digests require equal metrics.
When every Result holds, its record (`record_for`: the Result's path and sha256, the digest of its `source/`
and of its `submission.json`, the rule, the re-runs' figures) is signed and landed with the pull request's files
in one commit on the tip it was judged against (`Store.land`); otherwise nothing is written.

The randomisation test (issue #45) is one more evaluation: where the track applies it, the re-run is repeated on
the model's randomised copy (`RANDOMISED`, `benchmark.variant_runs.randomisation`), and the record keeps its whole
Result (`randomised`: signed with the rest; or `randomised_not_run`, why the model cannot be randomised), which the
repository's boards attach to the verified row alone (`boards.load_repository`). It is a *companion run*: an
evaluation whose label `COMPANIONS` maps to a kind of `leaderboard.companions.KINDS` is never compared with the
submitted Result, and the record carries it under that kind's `record_key` (one Result, or a list) — another
kind of companion run is one more entry of each. A submitted Result comes without one, so a self-reported row is
not ranked on such a board until it is verified.

The board's floors (issue #58): a board's floor comes from the built-in data priors it runs itself, never from an
uploaded Result (`leaderboard.floors`). When every Result holds, the built-in floors the boards the pull request
touches still miss are run by the maintainer with the installed built-ins (`floor_runs`,
`leaderboard.floor_runs.run_missing`: on the published model, and on the open round's copies where the board has
them) and land in the same commit, each with its signed record (rule "a built-in floor, run by the maintainer") — a
floor already on the default branch, verified, gets only its missing round record; one that cannot run is said in
one line, and its board stays unranked with that reason.

Hidden copies (issue #50): where the repository has started rounds (`rounds`) and a Result's board has hidden
copies, the re-run is also evaluated on the open round's draws (`hidden_runs`, after `open_round` checked the
round's signature and that its secret hashes to its commitment), each run's draw commitment checked against
`Round.draw`; the runs are signed in the row's round record (`hidden_record_for`, at
`ResultPath.round_record(round)`), never in its verification record. `rehide` gives the verified rows already on the
default branch their round record of a new round. Records are never replaced.

A submission with requirements is re-run in an environment of its own (`benchmark.submission.environments.for_result`):
the versions its Result recorded (`provenance.requirements`), installed from `sources` (`--find-links`,
`--index-url`) over the harness's packages; each re-run must resolve those versions, and its figures name them.
Every evaluation's seeds, batch size and resolved requirements must be the Result's (`provenance_differences`;
no `requires`, no requirements on either side). The environment is keyed by the wheels it was built from
(`benchmark.submission.environments`: an environment the current sources could not rebuild is never reused); the record
names them (`environment`: its key and each wheel's name, version, file and sha256).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import (HIDDEN_RECORD, LAYOUT_VERSION, MAX_RESULT_BYTES, RESULTS, RepositoryError,
                                           parse_result_path, sha256)
from leaderboard.repository.reading import folder_digests

__all__ = ["COMPARED_PROVENANCE", "Evaluation", "FLOOR_RULE", "Rerun", "compare", "figures_of", "floor_runs",
           "hidden_record_for", "hidden_runs", "no_copy", "open_round", "provenance_differences", "rebuild",
           "record_for", "rehide", "rerun_all", "rerun_result", "trusted", "verify_pull_request"]

REL_TOL = 1e-9
STOCHASTIC_FACTOR = 3.0
RANDOMISED = "randomised model"  # the label of the randomisation test's evaluation (not compared: it is new)
# an evaluation's label → the companion run it is (`leaderboard.companions.KINDS`): the record carries its Result
# under that kind's `record_key`, and the boards read it for the verified row alone
COMPANIONS = {RANDOMISED: "randomised"}


@dataclass
class Evaluation:
    """One evaluation the maintainer ran for a Result: what it was (`label`) and the Result it wrote."""

    label: str  # "as submitted" | "again" (stochastic)
    result: Any


@dataclass
class Rerun:
    """One Result re-run: its path, what the re-run found wrong (none: it holds), the rule, the evaluations."""

    rel: str
    problems: list[str] = field(default_factory=list)
    rule: str = ""  # "equal outputs" | "within the re-runs' tolerance"
    evaluations: list[Evaluation] = field(default_factory=list)
    randomised_not_run: str = ""  # why the randomisation test could not run (a model that cannot be randomised)
    environment: dict[str, Any] | None = None  # the submission's own environment: its key and the wheels it holds
    round: Any = None  # the round its hidden-copy runs were drawn in (`rounds.RoundFile`), or None
    hidden: list[Any] = field(default_factory=list)  # its runs on the round's hidden copies (`hidden_runs`)
    hidden_not_run: str = ""  # why there are no hidden-copy runs, or why some draw was not run

    @property
    def reruns(self) -> list[Any]:
        """The re-runs of the Result as submitted (compared with it), without the companion runs."""
        return [e.result for e in self.evaluations if e.label not in COMPANIONS]

    @property
    def companions(self) -> dict[str, list[Any]]:
        """The companion runs made for the Result, kind → Results (`COMPANIONS`)."""
        out: dict[str, list[Any]] = {}
        for e in self.evaluations:
            if e.label in COMPANIONS:
                out.setdefault(COMPANIONS[e.label], []).append(e.result)
        return out

    @property
    def randomised(self) -> Any:
        """The randomised-model run's Result, or None."""
        return next((e.result for e in self.evaluations if e.label == RANDOMISED), None)

    @property
    def figures(self) -> list[dict[str, Any]]:
        """What the record keeps of each evaluation (the boards show its time on a verified row)."""
        return figures_of(self.evaluations)


def figures_of(evaluations: list[Evaluation]) -> list[dict[str, Any]]:
    """What a record keeps of each evaluation: its label, metric means, outputs digest, times, sandbox and
    resolved requirements."""
    out = []
    for e in evaluations:
        r = e.result
        out.append({"label": e.label, "metrics": {k: m.mean for k, m in r.metrics.items()},
                    "outputs_sha256": r.integrity.get("outputs_sha256"), "wall_time_s": float(r.wall_time_s),
                    "fit_s": (r.extra or {}).get("fit_s"), "sandbox": r.provenance.get("isolation", {}).get("sandbox"),
                    **({"requirements": r.provenance["requirements"]} if "requirements" in r.provenance else {})})
    return out


def _arrays_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=REL_TOL, atol=1e-12, equal_nan=True))


def _deterministic(submitted: Any, again: Any) -> list[str]:
    from leaderboard.repository.contents import canonical_json, metric_differences

    out = []
    if submitted.integrity.get("outputs_sha256") != again.integrity.get("outputs_sha256"):
        out.append("the re-run's outputs differ from the submitted ones (outputs_sha256), and the submission says "
                   "it is deterministic")
    mine, theirs = submitted.scores(), again.scores()
    if mine is None or theirs is None or sorted(mine.arrays) != sorted(theirs.arrays) \
            or not np.array_equal(mine.ok, theirs.ok) \
            or not all(_arrays_equal(mine.arrays[k], theirs.arrays[k]) for k in mine.arrays):
        out.append("instance_scores: the per-instance scores differ from the re-run's (ids in order)")
    said = {k: {**vars(m), "ci95": list(m.ci95) if m.ci95 else None} for k, m in submitted.metrics.items()}
    out += [d.replace(", its per-instance scores give", ", the re-run gives")
            for d in metric_differences(said, again.metrics)]
    if [(f.instance, f.reason) for f in submitted.failures] != [(f.instance, f.reason) for f in again.failures]:
        out.append("failures: the failed instances or their reasons differ from the re-run's")
    if canonical_json(submitted.model) != canonical_json(again.model):
        out.append("model: differs from the re-run's")
    return out


def _primary(r: Any) -> np.ndarray | None:
    sc = r.scores()
    a = None if sc is None else sc.arrays.get(r.primary_metric)
    return None if a is None else np.asarray(a, dtype=np.float64).reshape(-1)


def _stochastic(submitted: Any, runs: list[Any]) -> list[str]:
    out = []
    for name, m in submitted.metrics.items():
        again = [r.metrics.get(name) for r in runs]
        if any(x is None for x in again):
            out.append(f"{name}: the re-run has no such metric")
            continue
        means = [x.mean for x in again]
        if m.mean is None or any(x is None for x in means):
            if not (m.mean is None and all(x is None for x in means)):
                out.append(f"{name}: the Result says {m.mean}, the re-runs give {means}")
            continue
        tol = sum(abs(x.ci95[1] - x.ci95[0]) / 2 for x in again if x.ci95) + 1e-12
        centre = sum(means) / len(means)
        if max(means) - min(means) > tol:
            out.append(f"{name}: the re-runs disagree with each other ({means}) beyond their intervals (±{tol:.4g})")
        if abs(m.mean - centre) > tol:
            out.append(f"{name}: the Result says {m.mean}, the re-runs give {means} (tolerance ±{tol:.4g}, from the "
                       "re-runs' own intervals)")
    for r in runs:
        if r.integrity.get("outputs_sha256") == submitted.integrity.get("outputs_sha256"):
            out += [f"equal outputs, other numbers: {p}" for p in _deterministic(submitted, r)]
    sub_p, r1, r2 = _primary(submitted), _primary(runs[0]), _primary(runs[1])
    if sub_p is None or r1 is None or r2 is None or sub_p.shape != r1.shape:
        out.append("instance_scores: no per-instance primary scores to compare with the re-runs'")
    else:
        both = np.isfinite(sub_p) & np.isfinite(r1) & np.isfinite(r2)
        d_sub = float(np.abs(sub_p[both] - r1[both]).mean()) if both.any() else 0.0
        d_ref = float(np.abs(r2[both] - r1[both]).mean()) if both.any() else 0.0
        if d_sub > STOCHASTIC_FACTOR * d_ref + 1e-12:
            out.append(f"instance_scores: the per-instance {submitted.primary_metric} are {d_sub:.4g} from the "
                       f"first re-run's on average, more than {STOCHASTIC_FACTOR:g} × the {d_ref:.4g} between the two "
                       "re-runs (instances permuted or scores edited)")
    failed = [f.instance for f in submitted.failures]
    if all(failed != [f.instance for f in r.failures] for r in runs):
        out.append("failures: the failed instances are those of neither re-run")
    return out


def compare(submitted: Any, runs: list[Any], deterministic: bool) -> tuple[str, list[str]]:
    """(the rule applied, problems) between a submitted Result and the maintainer's re-runs of it (one for a
    deterministic submission, two for a stochastic one; module docstring)."""
    if deterministic:
        return "equal outputs", _deterministic(submitted, runs[0])
    if len(runs) < 2:
        return "within the re-runs' tolerance", ["a stochastic submission needs two re-runs to set a tolerance"]
    return "within the re-runs' tolerance", _stochastic(submitted, runs)


def rebuild(tree: Path, rp: Any, submitted: Any, sources: Any, scratch: Path) -> tuple[Any, Any]:
    """(the submission of `rp`'s folder rebuilt under `scratch` from exactly the files its code hash covers, its
    own environment or None): the environment holds the versions `submitted` recorded, installed from `sources`
    (`benchmark.submission.environments.Sources`) when the submission has requirements."""
    from benchmark.submission.environments import Sources, for_result
    from benchmark.submission import load_submission
    from leaderboard.repository.reading import read_json
    from leaderboard.repository.validate import hashed_source, write_tree

    folder = tree / RESULTS / rp.submission / rp.code_hash
    meta = read_json(folder / "submission.json", "submission.json", 1 << 20)
    files = {k.removeprefix("source/"): v for k, v in hashed_source(folder).items()}
    root = scratch / "src" / (meta.get("package") or "source")
    write_tree(files, root)
    sub = load_submission(root / meta["folder"])
    env = for_result(sub.requires, submitted.provenance, sources or Sources()) if sub.requires else None
    return sub, env


def rerun_result(tree: Path, rel: str, sandbox: str = "auto", timeout_s: float = 60.0,
                 sources: Any = None, hidden: tuple[Any, Any] | None = None) -> Rerun:
    """Re-run one Result of a checked-out (validated) tree in a scratch folder built from exactly the files
    its code hash covers (in the submission's own environment when it has requirements, its packages from
    `sources`: `benchmark.submission.environments.Sources`); with `hidden` = (`rounds.RoundFile`, its
    `benchmark.models.variants.hidden.Round`), also on that round's hidden copies (`hidden_runs`)."""
    from benchmark.store.results import Result
    from benchmark.runner import evaluate
    from leaderboard.repository.contents import seeds_of
    from leaderboard.repository.reading import read_json

    out = Rerun(rel)
    rp = parse_result_path(rel)
    if rp is None:
        raise RepositoryError(f"{rel}: not a Result path")
    submitted = Result.from_dict(read_json(tree / rel, rel, MAX_RESULT_BYTES))
    with tempfile.TemporaryDirectory(prefix="xaibench-rerun-") as scratch:
        try:
            import json

            sub, env = rebuild(tree, rp, submitted, sources, Path(scratch))
            if env is not None:
                out.environment = {"key": env.key, "wheels": [w.to_dict() for w in env.wheels]}
            labels = ["as submitted"] if sub.deterministic else ["as submitted", "again"]
            for k, label in enumerate(labels):
                again = evaluate(sub, submitted.track, f"{rp.resource}@{rp.revision}", model=rp.model,
                                 split=str(submitted.resource["split"]), seeds=seeds_of(submitted.provenance),
                                 batch_size=int(submitted.provenance.get("batch_size", 16)), overwrite=True,
                                 results_dir=Path(scratch) / f"results-{k}", sandbox=sandbox, timeout_s=timeout_s,
                                 environment=None if env is None else env.packages)
                out.evaluations.append(Evaluation(label, again))
            # paired with the last re-run: the output cache holds its maps (each re-run recomputes them)
            _randomised_run(out, sub, submitted, f"{rp.resource}@{rp.revision}", rp.model,
                            Path(scratch) / f"results-{len(labels) - 1}", sandbox, timeout_s,
                            None if env is None else env.packages)
            found: list[str] = []
            if hidden is not None:
                out.round = hidden[0]
                out.hidden, not_run, found = hidden_runs(sub, submitted, rp, hidden[1], range(hidden[0].draws),
                                                         Path(scratch) / "hidden", sandbox, timeout_s,
                                                         None if env is None else env.packages)
                out.hidden_not_run = "; ".join(not_run)
        except (XaibenchError, OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
            out.problems.append(f"the re-run failed: {' '.join(str(exc).split())[:300]}")
            return out
    out.rule, out.problems = compare(submitted, out.reruns, sub.deterministic)
    out.problems += found + provenance_differences(submitted, [e.result for e in out.evaluations] + out.hidden)
    return out


def hidden_runs(sub: Any, submitted: Any, rp: Any, round_: Any, draws: Iterable[int], results: Path, sandbox: str,
                timeout_s: float, environment: Any) -> tuple[list[Any], list[str], list[str]]:
    """(runs, why a draw was not run, problems): `sub` evaluated on each of `draws` of the hidden copies of
    `rp`'s board drawn from `round_` (`benchmark.runner.evaluate(..., hidden=k, hidden_round=round_)`, in the
    sandbox, nothing from a cache), with `submitted`'s split, seeds and batch size. A draw the construction cannot
    build (`NoHiddenCopy`) is not run, said why; a run whose round, draw or commitment is not
    `round_.draw(track, resource, revision, k)`'s is a problem (nothing is signed)."""
    from benchmark.variant_runs.hidden import hidden_of
    from benchmark.models.variants.hidden import NoHiddenCopy
    from benchmark.runner import evaluate
    from leaderboard.repository.contents import seeds_of

    runs, not_run, problems = [], [], []
    for k in draws:
        try:
            r = evaluate(sub, submitted.track, f"{rp.resource}@{rp.revision}", model=rp.model,
                         split=str(submitted.resource["split"]), seeds=seeds_of(submitted.provenance),
                         batch_size=int(submitted.provenance.get("batch_size", 16)), overwrite=True,
                         results_dir=results, sandbox=sandbox, timeout_s=timeout_s, environment=environment,
                         hidden=k, hidden_round=round_)
        except NoHiddenCopy as exc:
            not_run.append(" ".join(str(exc).split()))
            continue
        want = round_.draw(rp.track, rp.resource, rp.revision, k).public()
        got = hidden_of(r) or {}
        if {key: got.get(key) for key in want} != want:
            problems.append(f"hidden copy {k}: the run names round {got.get('round')}, draw {got.get('draw')}, "
                            f"commitment {got.get('commitment')}; round {round_.id} draws {want['commitment']}")
        runs.append(r)
    return runs, not_run, problems


# the provenance fields a re-run reproduces, compared for every evaluation (`provenance_differences`): what it
# ran under, and what the requirements resolved to (absent on both sides when the submission has no requires)
COMPARED_PROVENANCE = ("seed", "seeds", "batch_size", "requirements")


def provenance_differences(submitted: Any, evaluations: list[Any]) -> list[str]:
    """Where a submitted Result's provenance (`COMPARED_PROVENANCE`) differs from what the maintainer's
    evaluations ran under and resolved; the rest of it describes the contributor's machine, which no board or
    record shows (the record shows the re-run's own)."""
    out = []
    for key in COMPARED_PROVENANCE:
        said = submitted.provenance.get(key)
        got = [e.provenance.get(key) for e in evaluations]
        if any(g != said for g in got):
            word = "resolved the requirements to" if key == "requirements" else f"ran with {key}"
            out.append(f"provenance.{key}: the re-run {word} {next(g for g in got if g != said)}, the Result says "
                       f"{said}")
    return out


def _randomised_run(out: Rerun, sub: Any, submitted: Any, resource: str, model: str, results: Path, sandbox: str,
                    timeout_s: float, environment: Any) -> None:
    """The randomisation test's evaluation, after the re-runs (paired with the last one's Result, in `results`),
    where the track applies it; a model that cannot be randomised is recorded with the reason."""
    from benchmark.errors import NotRandomisable
    from benchmark.runner import evaluate
    from benchmark.tracks import get_track
    from leaderboard.repository.contents import seeds_of

    if not get_track(submitted.track).randomisation_test:
        return
    try:
        rand = evaluate(sub, submitted.track, resource, model=model, split=str(submitted.resource["split"]),
                        seeds=seeds_of(submitted.provenance),
                        batch_size=int(submitted.provenance.get("batch_size", 16)), overwrite=True,
                        results_dir=results, sandbox=sandbox, timeout_s=timeout_s, environment=environment,
                        randomised=True)
    except NotRandomisable as exc:
        out.randomised_not_run = str(exc)
        return
    out.evaluations.append(Evaluation(RANDOMISED, rand))


def record_for(tree: Path, run: Rerun, contributor: str | None = None) -> dict[str, Any]:
    """The (unsigned) verification record of a Result that held: it binds the Result's bytes, the digest of its
    `source/` and of its `submission.json` (`layout.folder_digests`), and keeps the re-runs' figures, the
    companion runs (`randomised`) and the key id of the contributor who signed the pull request."""
    from leaderboard.companions import KINDS

    first = run.figures[0]
    return {**_binding(tree, run.rel), "kind": "xaibench-verification", "rule": run.rule,
            "rerun": run.figures, "wall_time_s": first["wall_time_s"], "fit_s": first["fit_s"],
            **{KINDS[kind].record_key: runs[0].to_dict() if len(runs) == 1 else [r.to_dict() for r in runs]
               for kind, runs in run.companions.items()},
            **({"randomised_not_run": run.randomised_not_run} if run.randomised_not_run else {}),
            **({"hidden_not_run": run.hidden_not_run} if run.hidden_not_run and run.round is None else {}),
            **({"environment": run.environment} if run.environment is not None else {}),
            **({"contributor": contributor} if contributor else {}), **_made()}


def _binding(tree: Path, rel: str) -> dict[str, Any]:
    """What binds a record to its row: the Result's path and the sha256 of its bytes, the digest of its `source/`
    and of its `submission.json` (`layout.folder_digests`), and the path's parts."""
    rp = parse_result_path(rel)
    assert rp is not None
    source, meta = folder_digests(tree, rp.submission, rp.code_hash)
    return {"layout": LAYOUT_VERSION, "result": rel, "result_sha256": sha256((tree / rel).read_bytes()),
            "source_sha256": source, "submission_json_sha256": meta, "submission": rp.submission,
            "code_hash": rp.code_hash, "track": rp.track, "resource": rp.resource, "revision": rp.revision,
            "model": rp.model}


def _made() -> dict[str, str]:
    from benchmark import __version__

    return {"xaibench": __version__, "verified": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def hidden_record_for(tree: Path, run: Rerun) -> dict[str, Any]:
    """The (unsigned) record of a row's hidden-copy runs of one round, at `ResultPath.round_record(round)`: bound
    to the row like its verification record (`_binding`), it names the round and the round's commitment and carries
    the runs whole (`hidden`, the companion kind's `record_key`: each run names its draw and the draw's
    commitment), their figures, and why a draw was not run (`hidden_not_run`)."""
    from leaderboard.companions import KINDS

    return {**_binding(tree, run.rel), "kind": HIDDEN_RECORD, "round": run.round.name,
            "round_commitment": run.round.commitment, KINDS["hidden"].record_key: [r.to_dict() for r in run.hidden],
            "rerun": figures_of([Evaluation(f"hidden copy {(r.model.get('hidden') or {}).get('draw')}", r)
                                 for r in run.hidden]),
            **({"hidden_not_run": run.hidden_not_run} if run.hidden_not_run else {}),
            **({"environment": run.environment} if run.environment is not None else {}), **_made()}


def _refuse(ref: str, findings: list[str]) -> RepositoryError:
    more = f", and {len(findings) - 1} more" if len(findings) > 1 else ""
    return RepositoryError(f"{ref} does not validate ({findings[0]}{more}); run `xaibench results validate` "
                           "(nothing was signed)")


def landing_files(pr: Any, name: str | None, maintainer: Any) -> dict[str, bytes]:
    """The binding a name gets when the pull request lands (`contributors.landing_binding`, judged by the tip's
    signed state `pr.state`): the signer's key binds a name that lands for the first time, and the name passes to a
    key the bound one signed over; signed by the maintainer who lands it ({} when the binding stands as it is)."""
    from leaderboard.repository.contributors import SIGNATURES, landing_binding, read_signature

    sig_path = next((p for p in sorted(pr.added) if f"/{SIGNATURES}/" in p), None)
    if name is None or sig_path is None or pr.state is None:
        return {}
    return landing_binding(pr.state, name, read_signature(pr.added[sig_path], sig_path), pr.author, maintainer)


def trusted(private: Any, public_keys: dict[str, Any] | None) -> dict[str, Any]:
    """The keys a maintainer's command believes signed state under: its own and the configured public ones."""
    from leaderboard.repository.signing import key_id

    return {**(public_keys or {}), key_id(private.public_key()): private.public_key()}


def no_copy(rel: str) -> str:
    """Why the board of the Result at `rel` has no hidden copies ("" where its track builds them)."""
    from benchmark.tracks import get_track

    rp = parse_result_path(rel)
    assert rp is not None
    return get_track(rp.track).no_hidden_copy_of(rp.model)


def open_round(tree: Path, where: str, private: Any, key_dir: Path | None, sandbox: str,
               say: Callable[[str], None], state: Any = None) -> tuple[Any, Any] | None:
    """(the open round of the checkout `tree` signed by `private`, its `Round` with the secret checked) — None when
    the repository has started no round (`rounds`: hidden copies unused). Refused in one line, before anything
    runs: a round that round records signed by a trusted key name (or main's history held) has no signed
    `round.json` (`SignedState.missing_rounds`: it cannot vanish), `rounds/` holds files but no round signed by this
    key (forged or foreign), the newest round is revealed (no open round), its secret is lost or changed, or a worker
    here could read the secret (`benchmark.variant_runs.hidden.refuse_unconfined`). Beside a round that counts, a
    file that does not is said (`say`) and left out. `state`: the tip's signed state under the trusted keys (records
    and history; default: `tree` read under `private`'s key alone)."""
    from benchmark.variant_runs.hidden import refuse_unconfined
    from benchmark.models.variants.hidden import NoHiddenCopy
    from leaderboard.repository.rounds import load_secret, newest, round_path
    from leaderboard.repository.signed_state import read
    from leaderboard.repository.signing import default_key_dir, key_id

    own = {key_id(private.public_key()): private.public_key()}
    if state is None:
        state = read(tree, own)
    missing = state.missing_lines(f"restore it on {where} from main's history before anything is signed (nothing "
                                  "was signed)")
    if missing:
        raise RepositoryError(missing[0] + (f" ({len(missing) - 1} more round(s) missing)" if len(missing) > 1 else ""))
    rounds = {n: r for n, r in state.rounds.items() if r.signer in own}  # its secret is this key's to keep
    problems = [line for line in state.problems if line.startswith("rounds/")] + \
        [f"{round_path(n)}: signed by another maintainer's key ({r.signer}); not drawn from by this key" for n, r in
         state.rounds.items() if n not in rounds]
    current = newest(rounds)
    if current is None and problems:
        raise RepositoryError(f"{where} holds round files but no round signed by this key ({problems[0]}); nothing "
                              "was signed")
    for line in problems:
        say(line)
    if current is None:
        return None
    if current.revealed:
        raise RepositoryError(f"no open round on {where}: the newest, {current.name}, is revealed; start one with "
                              f"`xaibench results round start {where} NAME` (nothing was signed)")
    round_ = load_secret(key_dir or default_key_dir(), current, "nothing was signed")
    try:
        refuse_unconfined(sandbox)
    except NoHiddenCopy as exc:
        raise RepositoryError(f"{exc} (nothing was signed)") from None
    return current, round_


def _dump(record: dict[str, Any], private: Any) -> bytes:
    import json

    from leaderboard.repository.signing import sign_record

    return (json.dumps(sign_record(record, private), indent=1, sort_keys=True) + "\n").encode("utf-8")


def verify_pull_request(store: Any, ref: str, private: Any, sandbox: str = "auto", timeout_s: float = 60.0,
                        sources: Any = None, key_dir: Path | None = None,
                        say: Callable[[str], None] = lambda line: None,
                        public_keys: dict[str, Any] | None = None, jobs: int = 1) -> tuple[list[Rerun], str | None]:
    """Judge `ref` against the tip, re-run every Result it adds, and when all hold land it with their signed
    records in one commit: (the re-runs, the commit or None when nothing was written). `sources`: where a
    submission's requirements are installed from (`benchmark.submission.environments.Sources`). A Result whose board has
    hidden copies is also run on the open round's draws (`open_round`; the round's secret kept in `key_dir`,
    default the key folder), and those runs are signed in its round record (`hidden_record_for`). Signed state —
    who holds a name, which rounds there are — is believed under `private`'s key and `public_keys` (`trusted`);
    the binding the landing writes is signed by `private` (`landing_files`). `jobs`: boards re-run at once
    (`rerun_all`)."""
    from leaderboard.repository.pull import judge, open_pull_request

    pr = open_pull_request(store, ref, trusted(private, public_keys))
    findings = judge(pr)
    if findings:
        raise _refuse(ref, findings)
    rels = [rel for rel in sorted(pr.added) if parse_result_path(rel)]
    if not rels:
        raise RepositoryError(f"{ref} adds no Result to re-run (nothing was signed)")
    why = {rel: no_copy(rel) for rel in rels}
    hidden = open_round(pr.tip, store.where, private, key_dir, sandbox, say, pr.state) \
        if not all(why.values()) else None

    def one(rel: str) -> Rerun:
        run = rerun_result(pr.merged, rel, sandbox, timeout_s, sources, None if why[rel] else hidden)
        run.hidden_not_run = why[rel] or run.hidden_not_run or ("" if hidden else "this repository has started no "
                                                                "round of hidden copies (`xaibench results round "
                                                                "start`)")
        return run

    runs = rerun_all(rels, one, jobs)
    if any(r.problems for r in runs):
        return runs, None
    from leaderboard.repository.contributors import SIGNATURES, read_signature

    signer = next((read_signature(pr.added[p], p).key_id for p in sorted(pr.added) if f"/{SIGNATURES}/" in p), None)
    records: dict[str, bytes] = {}
    for run in runs:
        rp = parse_result_path(run.rel)
        assert rp is not None
        paths = [rp.verification] + ([rp.round_record(run.round.name)] if run.round is not None else [])
        for path in paths:
            if (pr.tip / path).exists():
                raise RepositoryError(f"{path} exists on {store.base}; a record is never replaced (nothing was "
                                      "signed)")
        records[rp.verification] = _dump(record_for(pr.merged, run, signer), private)
        if run.round is not None:
            records[paths[1]] = _dump(hidden_record_for(pr.merged, run), private)
    floors, floor_records = floor_runs(pr, rels, private, sandbox, timeout_s, hidden, say)
    runs += floors
    first = parse_result_path(runs[0].rel)
    assert first is not None
    files = {**pr.added, **landing_files(pr, first.submission, private), **records, **floor_records}
    commit = store.land(ref, files, f"xaibench verify {first.submission} {first.code_hash}: {len(runs)} Result(s) "
                                    f"re-run and signed ({ref})", pr.tip_commit)
    return runs, commit


def rerun_all(rels: list[str], one: Callable[[str], Rerun], jobs: int = 1) -> list[Rerun]:
    """`one(rel)` for every Result path, in `rels`' order. With `jobs` > 1 the Results of different resources run at
    once on that many threads (each re-run's work is in its sandboxed workers); the Results of one resource run one
    after the other, so a hidden copy they share is built once (`build_cached` would keep the first of two builds)."""
    if jobs <= 1 or len(rels) < 2:
        return [one(rel) for rel in rels]
    from concurrent.futures import ThreadPoolExecutor

    groups: dict[tuple[str, str], list[str]] = {}
    for rel in rels:
        rp = parse_result_path(rel)
        groups.setdefault((rp.track, rp.resource) if rp is not None else ("", rel), []).append(rel)

    def in_turn(group: list[str]) -> list[Rerun]:
        return [one(rel) for rel in group]

    with ThreadPoolExecutor(max_workers=min(jobs, len(groups)), thread_name_prefix="xaibench-verify") as pool:
        done = {run.rel: run for future in [pool.submit(in_turn, g) for g in groups.values()]
                for run in future.result()}
    return [done[rel] for rel in rels]


FLOOR_RULE = "a built-in floor, run by the maintainer"  # the record's rule of a floor `floor_runs` landed


def floor_runs(pr: Any, rels: list[str], private: Any, sandbox: str, timeout_s: float, hidden: tuple[Any, Any] | None,
               say: Callable[[str], None]) -> tuple[list[Rerun], dict[str, bytes]]:
    """(the floors run, the files they land): the built-in floors each board the pull request's Results `rels` are on
    still misses in the tree it would give (module docstring), run with the installed built-ins in a scratch folder;
    each lands as a submission folder (its `submission.json` and source, exactly as hashed), its Result and its signed
    record (`FLOOR_RULE`), and its round record where it was run on the open round's copies. A floor whose Result the
    tree holds unverified is not signed (its own pull request is verified like any), and one that cannot run is said
    (`say`)."""
    import json

    from benchmark.submission import builtins
    from leaderboard.boards import boards
    from leaderboard.companions import kind_of
    from leaderboard.floor_runs import run_missing
    from leaderboard.repository.boards import load_repository, verified
    from leaderboard.repository.layout import SUBMISSION_JSON, result_path_of, source_files, submission_dir, \
        submission_json
    from leaderboard.repository.signing import key_id

    own = {key_id(private.public_key()): private.public_key()}
    found, _ = load_repository(pr.merged, own)
    touched = {(rp.track, rp.resource, rp.model): rp.rel for rp in map(parse_result_path, rels) if rp is not None}
    runs: list[Rerun] = []
    files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="xaibench-floors-") as scratch:
        for b in boards(found):
            if b.key not in touched:
                continue
            todo, copies = _floors_wanted(b, found, None if no_copy(touched[b.key]) else hidden)
            if not todo:
                continue
            got = run_missing(b, Path(scratch) / f"b{len(runs)}-{len(files)}", sandbox=sandbox, timeout_s=timeout_s,
                              round_=None if hidden is None else hidden[1], todo=todo, copies=copies, say=say)
            for line in got.problems:
                say(line)
            for r in [x for x in got.results if kind_of(x) is None]:
                sub = builtins()[str(r.submission["base"])]
                rp = result_path_of(r)
                folder = submission_dir(sub.name, sub.hash)
                new = {f"{folder}/{SUBMISSION_JSON}": (json.dumps(submission_json(sub, builtin=True), indent=1,
                                                                  sort_keys=True) + "\n").encode("utf-8"),
                       **{f"{folder}/{k}": v for k, v in source_files(sub).items()}}
                held = (pr.merged / rp.rel).exists()
                if held and verified(pr.merged, rp.rel, own) is None:
                    say(f"{rp.rel}: the built-in floor's Result is on the tree unverified; verify its own pull request "
                        "(nothing of it was signed)")
                    continue
                if not held:
                    new[rp.rel] = Path(str(r.path)).read_bytes()
                clash = [p for p, d in new.items() if (pr.merged / p).exists() and (pr.merged / p).read_bytes() != d]
                if clash:
                    say(f"{clash[0]}: the tree holds it with other bytes; the built-in floor {sub.name} was not landed")
                    continue
                for p, d in new.items():
                    if not (pr.merged / p).exists():
                        (pr.merged / p).parent.mkdir(parents=True, exist_ok=True)
                        (pr.merged / p).write_bytes(d)
                        files[p] = d
                run = Rerun(rp.rel, rule=FLOOR_RULE, evaluations=[Evaluation("built-in floor", r)])
                if not held:
                    files[rp.verification] = _dump(record_for(pr.merged, run), private)
                mine = [h for h in got.results
                        if kind_of(h) == "hidden" and h.submission["name"] == r.submission["name"]]
                if mine and hidden is not None and not (pr.merged / rp.round_record(hidden[0].name)).exists():
                    run.round, run.hidden = hidden[0], mine
                    files[rp.round_record(hidden[0].name)] = _dump(hidden_record_for(pr.merged, run), private)
                runs.append(run)
    return runs, files


def _floors_wanted(board: Any, found: list[Any], hidden: tuple[Any, Any] | None) -> tuple[list[tuple[str, bool]], Any]:
    """(built-in name, on the copies too) for each floor `board` misses once the pull request lands — on the published
    model (`Board.lacking`) and, where the open round's copies will be run (`hidden`), every built-in data prior the
    copies need that no verified row of the board holds a record of that round for — and the copies to run them on."""
    from benchmark.tracks import get_track
    from benchmark.variant_runs.hidden import hidden_round
    from leaderboard import floors
    from leaderboard.companions import of
    from leaderboard.floor_runs import Copies

    published = set(board.lacking)
    if hidden is None:
        return [(n, False) for n in sorted(published)], None
    mine = [r for r in found if (r.track, str(r.resource["name"]), str(r.model["name"])) == board.key]
    offer = floors.offer_of(mine, get_track(board.track).submission_kind, board.modality, board.white_box,
                            board.segments)
    done = {b.name for r in mine if r.status == "verified" and (b := floors.builtin_of(r)) is not None
            and any(hidden_round(h) == hidden[0].name for h in of(r).get("hidden", []))}
    copies = set(floors.needed(offer, "hidden")) - done
    return ([(n, n in copies) for n in sorted(published | copies)],
            Copies(hidden[0].name, list(range(hidden[0].draws)), [None] * hidden[0].draws))


def rehide(store: Any, private: Any, sandbox: str = "auto", timeout_s: float = 60.0, sources: Any = None,
           key_dir: Path | None = None, only: set[str] | None = None,
           say: Callable[[str], None] = lambda line: None,
           public_keys: dict[str, Any] | None = None) -> tuple[list[Rerun], str | None]:
    """Run the verified rows of the repository on the open round's hidden copies (`xaibench results rehide`): every
    Result on the default branch whose verification record holds under `private`'s key (`boards.verified`), whose
    board has hidden copies and which has no round record of that round yet (of the submissions named in `only`,
    when given) is run on the round's draws in the sandbox, its submission rebuilt from exactly the hashed files
    (`rebuild`), and each row whose runs hold gets its signed round record (`hidden_record_for`). The records land in
    one commit on the tip they were judged against; a row whose runs do not hold is reported and gets none.
    (the rows run, the commit or None when none landed.)"""
    from benchmark.store.results import Result
    from leaderboard.repository.reading import read_json
    from leaderboard.repository.signed_state import of_snapshot, verified
    from leaderboard.repository.signing import key_id
    from leaderboard.repository.validate import iter_result_files

    tip = store.snapshot(store.tip())
    hidden = open_round(tip, store.where, private, key_dir, sandbox, say,
                        of_snapshot(store, tip, trusted(private, public_keys)))
    if hidden is None:
        raise RepositoryError(f"{store.where} has started no round of hidden copies; start one with `xaibench results "
                              f"round start {store.where} NAME` (nothing was signed)")
    current, round_ = hidden
    own = {key_id(private.public_key()): private.public_key()}
    runs = []
    for rel in iter_result_files(tip):
        rp = parse_result_path(rel)
        if rp is None or (only is not None and rp.submission not in only) or no_copy(rel) \
                or (tip / rp.round_record(current.name)).exists() or verified(tip, rel, own) is None:
            continue
        out = Rerun(rel, round=current)
        with tempfile.TemporaryDirectory(prefix="xaibench-rehide-") as scratch:
            try:
                submitted = Result.from_dict(read_json(tip / rel, rel, MAX_RESULT_BYTES))
                sub, env = rebuild(tip, rp, submitted, sources, Path(scratch))
                if env is not None:
                    out.environment = {"key": env.key, "wheels": [w.to_dict() for w in env.wheels]}
                out.hidden, not_run, out.problems = hidden_runs(sub, submitted, rp, round_, range(current.draws),
                                                                Path(scratch) / "hidden", sandbox, timeout_s,
                                                                None if env is None else env.packages)
                out.hidden_not_run = "; ".join(not_run)
                out.problems += provenance_differences(submitted, out.hidden)
            except (XaibenchError, OSError, KeyError, TypeError, ValueError) as exc:
                out.problems.append(f"the run failed: {' '.join(str(exc).split())[:300]}")
        runs.append(out)
    records = {}
    for r in runs:
        rp = parse_result_path(r.rel)
        if rp is not None and not r.problems:
            records[rp.round_record(current.name)] = _dump(hidden_record_for(tip, r), private)
    if not records:
        return runs, None
    return runs, store.commit(records, f"xaibench rehide: {len(records)} row(s) run on the hidden copies of round "
                                       f"{current.name}")
