"""`xaibench results verify REPO@REF` (maintainers): re-run a pull request's Results in the sandbox and sign
what holds.

The pull request must validate first (`validate`). Then, per Result it adds, the submission rebuilt from
`source/` is evaluated again (`benchmark.runner.evaluate`, `--overwrite`: nothing is taken from a cache) on
the same resource revision (`name@revision`), split, model and seeds, and compared under `xaibench verify`'s
rules: a deterministic submission (`[capabilities] deterministic`) must give the same outputs
(`integrity.outputs_sha256`) and every metric's mean equal to relative 1e-9; a stochastic one must give
every metric's mean within the two 95 % intervals' half-widths added. When every Result holds, one
verification record per Result (`signing`) is committed to the base branch; otherwise nothing is written.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmark.errors import XaibenchError
from leaderboard.repository.layout import LAYOUT_VERSION, RESULTS, RepositoryError, parse_result_path, sha256

__all__ = ["Rerun", "compare", "rerun_result", "verify_pull_request"]

REL_TOL = 1e-9


@dataclass
class Rerun:
    """One Result re-run: its path, what the re-run found wrong (none: it holds) and the re-run's figures."""

    rel: str
    problems: list[str] = field(default_factory=list)
    rule: str = ""  # "equal outputs" | "within tolerance"
    rerun: dict[str, Any] = field(default_factory=dict)


def compare(submitted: Any, again: Any, deterministic: bool) -> tuple[str, list[str]]:
    """(the rule applied, problems) between a submitted Result and its re-run (module docstring)."""
    problems = []
    if deterministic and submitted.integrity.get("outputs_sha256") != again.integrity.get("outputs_sha256"):
        problems.append("the re-run's outputs differ from the submitted ones (outputs_sha256), and the submission "
                        "says it is deterministic")
    for name, m in submitted.metrics.items():
        b = again.metrics.get(name)
        a, bm = m.mean, None if b is None else b.mean
        if a is None or bm is None:
            ok = a is None and bm is None
        elif deterministic:
            ok = math.isclose(a, bm, rel_tol=REL_TOL, abs_tol=1e-12)
        else:
            half = sum(abs(x.ci95[1] - x.ci95[0]) / 2 for x in (m, b) if x is not None and x.ci95)
            ok = abs(a - bm) <= half + 1e-12
        if not ok:
            problems.append(f"{name}: the Result says {a}, the re-run gives {bm}")
    return ("equal outputs" if deterministic else "within tolerance"), problems


def rerun_result(tree: Path, rel: str, sandbox: str = "auto", timeout_s: float = 60.0,
                 sources: Any = None) -> Rerun:
    """Re-run one Result of a checked-out tree in a scratch results folder (in the submission's own
    environment when it has requirements, its packages from `sources`: `benchmark.environments.Sources`)."""
    from benchmark.environments import Sources, for_result
    from benchmark.results import Result
    from benchmark.runner import evaluate
    from benchmark.submission import load_submission
    from leaderboard.repository.validate import rebuild_source

    out = Rerun(rel)
    rp = parse_result_path(rel)
    assert rp is not None
    submitted = Result.from_dict(json.loads((tree / rel).read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory(prefix="xaibench-rerun-") as scratch:
        try:
            sub = load_submission(rebuild_source(tree / RESULTS / rp.submission / rp.code_hash, Path(scratch) / "src"))
            env = for_result(sub.requires, submitted.provenance, sources or Sources()) if sub.requires else None
            seeds = submitted.provenance.get("seeds") or [submitted.provenance.get("seed", 0)]
            again = evaluate(sub, submitted.track, f"{rp.resource}@{rp.revision}", model=rp.model,
                             split=str(submitted.resource["split"]), seeds=[int(s) for s in seeds],
                             batch_size=int(submitted.provenance.get("batch_size", 16)), overwrite=True,
                             results_dir=Path(scratch) / "results", sandbox=sandbox, timeout_s=timeout_s,
                             environment=None if env is None else env.packages)
        except XaibenchError as exc:
            out.problems.append(f"the re-run failed: {' '.join(str(exc).split())[:300]}")
            return out
    out.rule, out.problems = compare(submitted, again, sub.deterministic)
    out.rerun = {"metrics": {k: m.mean for k, m in again.metrics.items()},
                 "outputs_sha256": again.integrity.get("outputs_sha256"),
                 "sandbox": again.provenance.get("isolation", {}).get("sandbox")}
    if sub.requires:  # the versions the re-run ran with: those the Result recorded
        out.rerun["requirements"] = again.provenance.get("requirements")
        if out.rerun["requirements"] != submitted.provenance.get("requirements"):
            out.problems.append(f"the re-run resolved the requirements to {out.rerun['requirements']}, the Result "
                                f"says {submitted.provenance.get('requirements')}")
    return out


def record_for(tree: Path, run: Rerun) -> dict[str, Any]:
    """The (unsigned) verification record of a Result that held."""
    from benchmark import __version__

    rp = parse_result_path(run.rel)
    assert rp is not None
    return {"layout": LAYOUT_VERSION, "kind": "xaibench-verification", "result": run.rel,
            "result_sha256": sha256((tree / run.rel).read_bytes()), "submission": rp.submission,
            "code_hash": rp.code_hash, "track": rp.track, "resource": rp.resource, "revision": rp.revision,
            "model": rp.model, "rule": run.rule, "rerun": run.rerun, "xaibench": __version__,
            "verified": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def verify_pull_request(store: Any, ref: str, private: Any, sandbox: str = "auto",
                        timeout_s: float = 60.0, sources: Any = None) -> tuple[list[Rerun], str | None]:
    """Validate `ref`, re-run every Result it adds, and when all hold commit their signed records to the base
    branch: (the re-runs, the commit or None when nothing was written). `sources`: where a submission's
    requirements are installed from (`benchmark.environments.Sources`)."""
    from leaderboard.repository.signing import sign_record
    from leaderboard.repository.validate import diff_trees, iter_result_files, validate

    head = store.snapshot(ref)
    base = store.snapshot(store.merge_base(ref))
    changes = diff_trees(base, head)
    findings = validate(head, base, changes)
    if findings:
        raise RepositoryError(f"{ref} does not validate ({findings[0]}"
                              + (f", and {len(findings) - 1} more" if len(findings) > 1 else "")
                              + "); run `xaibench results validate` (nothing was signed)")
    added = {c.path for c in changes if c.status == "added"}
    runs = [rerun_result(head, rel, sandbox, timeout_s, sources) for rel in iter_result_files(head) if rel in added]
    if not runs:
        raise RepositoryError(f"{ref} adds no Result to re-run")
    if any(r.problems for r in runs):
        return runs, None
    records = {}
    for run in runs:
        rp = parse_result_path(run.rel)
        assert rp is not None
        records[rp.verification] = (json.dumps(sign_record(record_for(head, run), private), indent=1,
                                               sort_keys=True) + "\n").encode("utf-8")
    first = parse_result_path(runs[0].rel)
    assert first is not None
    commit = store.commit(records, f"xaibench verify {first.submission} {first.code_hash}: {len(runs)} Result(s)")
    return runs, commit
