"""docs/reference.md, generated from the shipped reference (`xaibench reference docs`; the build's last step).

Everything on the page is read the way a reader reads the reference — `xaibench leaderboard --reference` (its
Markdown boards and its CSV) and `xaibench reference audit` — plus the build's manifest and the papers' tables
(`papers`). The findings at the top are computed from the CSV (`findings`), never written by hand.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ["FINDINGS", "findings", "hidden_reorders", "write_findings", "write_page"]

TRACK_ORDER = ("aixi", "idc", "rcnn", "trust", "robustness")


@contextmanager
def _reference_at(where: Path) -> Iterator[None]:
    """`$XAIBENCH_REFERENCE` set to `where` for the commands run inside (`leaderboard.reference.location`)."""
    old = os.environ.get("XAIBENCH_REFERENCE")
    os.environ["XAIBENCH_REFERENCE"] = str(Path(where).resolve())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("XAIBENCH_REFERENCE", None)
        else:
            os.environ["XAIBENCH_REFERENCE"] = old


def _output(run: Callable[[list[str]], None], argv: list[str]) -> tuple[str, float]:
    """(what `xaibench <argv> --output FILE` wrote, seconds)."""
    with tempfile.TemporaryDirectory(prefix="xaibench-reference-docs-") as tmp:
        path = Path(tmp) / "out.txt"
        t0 = time.perf_counter()
        run([*argv, "--output", str(path)])
        return path.read_text(encoding="utf-8"), time.perf_counter() - t0


def _float(x: str | None) -> float | None:
    try:
        return float(x) if x not in (None, "") else None
    except ValueError:
        return None


def _board(r: dict[str, str]) -> str:
    return f"{r['resource']} / {r['model']}"


def hidden_reorders(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Every method ranked both on a board's hidden copies and on its published model whose two ranks differ, with
    its two scores: the largest moves first."""
    out = []
    for r in rows:
        if not r.get("hidden_round") or r.get("role") != "method":
            continue
        hidden, public = _float(r.get("rank")), _float(r.get("public_rank"))
        if hidden is None or public is None or hidden == public:
            continue
        out.append({"board": _board(r), "submission": r["submission"], "public_rank": int(public),
                    "hidden_rank": int(hidden), "public": _float(r.get(f"{r['primary_metric']}_mean")),
                    "hidden": _float(r.get("hidden_mean")), "metric": r["primary_metric"]})
    return sorted(out, key=lambda x: (-abs(x["public_rank"] - x["hidden_rank"]), x["board"], x["submission"]))


def findings(rows: list[dict[str, str]]) -> list[str]:
    """The page's first lines, from the reference's CSV: how many ground-truth boards discriminate on their hidden
    copies (and which do not), the method first on most boards, what the hidden copies reorder and which data
    priors no method beats there."""
    boards: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in rows:
        boards.setdefault((r["track"], r["resource"], r["model"]), []).append(r)
    out = []
    hidden = {k: v for k, v in boards.items() if v[0].get("hidden_round")}
    if hidden:
        yes = [k for k, v in hidden.items() if v[0]["board_verdict"] == "discriminates"]
        no = [f"{k[1]} / {k[2]} ({v[0]['board_verdict']})" for k, v in hidden.items() if k not in yes]
        out.append(f"**{len(yes)} of the {len(hidden)} boards with hidden copies discriminate on them** (their best "
                   "method beats their best control and data prior there beyond the noise)"
                   + (f"; not: {', '.join(sorted(no))}." if no else "."))
    firsts: dict[str, list[str]] = {}
    for k, v in boards.items():
        for r in v:
            if r.get("role") == "method" and r.get("rank") == "1" and v[0]["board_verdict"] == "discriminates":
                firsts.setdefault(r["submission"], []).append(f"{k[1]} / {k[2]}")
    counted = sum(1 for v in boards.values() if v[0]["board_verdict"] == "discriminates")
    if firsts:
        best = sorted(firsts.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:3]
        out.append(f"**Ranked first (alone or tied) on the most discriminating boards**, of {counted}: "
                   + "; ".join(f"{name} on {len(where)}" for name, where in best) + ".")
    moves = hidden_reorders(rows)
    if moves:
        m = moves[0]
        out.append(f"**The hidden copies reorder {len({(x['board'], x['submission']) for x in moves})} method "
                   f"placing(s)**; the largest: {m['submission']} on {m['board']}, rank {m['public_rank']} on the "
                   f"published model ({m['metric']} {_num(m['public'])}) → {m['hidden_rank']} on the copies"
                   + (f" ({_num(m['hidden'])} there: each model has its own scale, so only the ranks compare)."
                      if m["hidden"] is not None else "."))
    below = sorted({f"{r['submission']} on {_board(r)}" for r in rows if r.get("role") == "method"
                    and "data prior" in (r.get("hidden_reason") or "")})
    if below:
        out.append(f"**{len(below)} method placing(s) do not beat a data prior on models they have not seen** "
                   f"(e.g. {', '.join(below[:3])}).")
    return out


def _demote(md: str) -> tuple[str, str]:
    """(`xaibench leaderboard --format md`'s boards with their headings two levels down and its title left out, its
    legend — the paragraph under the title — said once for the page)."""
    lines = md.rstrip("\n").splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    legend = ""
    if lines and not lines[0].startswith("#"):
        legend, lines = lines[0], lines[1:]
    return "\n".join(("##" + x) if x.startswith("#") else x for x in lines).strip("\n"), legend


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    def esc(x: str) -> str:
        return str(x).replace("|", "\\|")
    return ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(esc(c) for c in row) + " |" for row in rows), ""]


def _mark(holds: bool | None) -> str:
    return {True: "holds", False: "**does not hold**", None: "cannot tell"}[holds]


def _rounds_text(m: dict[str, Any]) -> str:
    """"round `reference`", or each round with its tracks where the build added tracks after a round was revealed."""
    rounds = [r for r in m.get("rounds") or [] if isinstance(r, dict)]
    if len(rounds) <= 1:
        return f"round `{(rounds[0].get('name') if rounds else None) or m.get('round')}`"
    return "rounds " + ", ".join(f"`{r.get('name')}` ({', '.join(r.get('tracks') or []) or 'no track'})"
                                 for r in rounds) + " (a round per batch of tracks: tracks added after a round was " \
        "revealed get a new round with its own secret)"


def _build_section(m: dict[str, Any]) -> list[str]:
    opts = m.get("options", {})
    machine = m.get("machine", {})
    lines = ["## The build", "",
             f"Built {m.get('built', '?')} from xaibench {m.get('xaibench', '?')} (commit {str(m.get('git'))[:12]}) "
             f"at scale **{opts.get('scale')}**, budget {opts.get('budget')} CPU-min per board, {opts.get('draws')} "
             f"hidden copies per board in {_rounds_text(m)}, on {machine.get('cpu', '?')} "
             f"({machine.get('cores', '?')} cores)"
             + (f", every `train` command capped at **{opts['train_epochs']} epoch(s)** (`--train-epochs`: the "
                "recipe's own count did not fit the machine's time; the models under test are trained less than the "
                "papers' and their boards say what those models are)" if opts.get("train_epochs") else "")
             + f". The repository's tip: `{str(m.get('tip'))[:12]}`. "
             "The command, and how to resume it: `make reference` (`xaibench reference build`; run it again after an "
             "interruption).", ""]
    rows = []
    for t in m.get("tracks", []):
        boards = t.get("boards", {})
        ok = sum(v.get("status") == "evaluated" for v in boards.values())
        rows.append([t.get("track", "?"), t.get("status", "not run"), f"{ok} of {len(t.get('boards_planned', []))}",
                     f"{t.get('seconds', 0) / 60:.1f}", f"{t.get('cpu_s', 0) / 60:.1f}", t.get("reason") or ""])
    every = all(t.get("runs") for t in m.get("tracks", []))  # records from before runs were counted: the last run's
    lines += _table(["track", "outcome", "boards", "lane wall min" + ("" if every else " (its last run)"),
                     "lane CPU min" + ("" if every else " (its last run)"), "why not"], rows)
    maint = m.get("maintainer", {})
    lines += [f"The maintainer verified and landed {maint.get('landed', 0)} pull request(s) in "
              f"{(maint.get('seconds') or 0) / 60:.1f} min (re-runs, randomisation tests and hidden copies; CPU "
              f"{(maint.get('cpu_s') or 0) / 60:.1f} min)"
              + (f"; refused {len(maint.get('refused', {}))}: " + "; ".join(f"`{b}`: {w}" for b, w in
                                                                            maint["refused"].items())
                 if maint.get("refused") else "")
              + (f"; {len(maint['superseded'])} superseded (" + ", ".join(f"`{b}`" for b in maint["superseded"])
                 + f": {next(iter(maint['superseded'].values()))})" if maint.get("superseded") else "") + ".", ""]
    reduced = [c for c in m.get("choices", []) if c.get("reason")]
    if reduced:
        lines += ["**The scale rule** (docs/reference.md's rule, `generators/reference/plan.py`): where a board's "
                  "projected cost exceeded the budget:", ""]
        lines += _table(["command", "decision"], [[f"`{c['command']}`", c["reason"]] for c in reduced])
    return lines


INTRO = ["# The reference leaderboard", "",
         "<!-- generated by `xaibench reference docs` (the last step of `make reference`) from "
         "leaderboard/reference/shipped/; do not edit by hand -->", "",
         "Every built-in submission — methods, controls, data priors and references — on every board it can enter, "
         "landed in a results repository by the flow docs/submitting.md asks of everyone: submitted, re-run and "
         "signed by a maintainer (`results verify`, with the randomisation test and the round's hidden copies), the "
         "round revealed and audited. The repository's tip ships with the package (`leaderboard/reference/shipped/`),"
         " so `xaibench leaderboard --reference` shows it straight after `make setup`, offline, in seconds.", ""]

HOW = ["## How it is built", "",
       "`make reference` runs `xaibench reference build` (`generators/reference/`); every step is an ordinary "
       "`xaibench` command, printed before it runs, and a second run resumes where the first stopped (built "
       "resources are kept, evaluations resume from their caches, `submit` opens nothing twice, a landed pull "
       "request is never verified again, the round is revealed once). `xaibench reference status` says where a build "
       "stands; `xaibench reference build --plan` what it will build and cost.", "",
       "1. **Prepare**: the plan at scale `default`, frozen in the build folder (`$XAIBENCH_HOME/reference-build/"
       "plan.json`); `results init`; a maintainer key and a contributor key (`results keygen`, kept in the build "
       "folder's `keys/`; only the public key ships); `results round start reference --draws 3` (`--secret-file "
       "FILE` starts it from a given secret).",
       "2. **Lanes**, one per track, side by side (`--jobs`, one thread each; `--backend ray` explains the lanes' "
       "batches on Ray): the track's resources (`generate`, `train`), then `evaluate all` on each board (the complete "
       "split, default parameters; `--no-randomisation --hidden-draws 0`: those runs never leave the submitter's "
       "home — `verify` makes the signed ones), then `submit` per submission. Beside them **one maintainer lane** "
       "verifies every pull request in the order it was opened (`results verify`: the re-run, the randomisation "
       "test's run, the round's hidden copies, signed and landed). Landings are one at a time because the "
       "repository takes them so: a landing is refused when `main` moved while the pull request was judged, which "
       "two verifications at once would make happen on nearly every landing. A lane does not open a second pull "
       "request of a submission while one is open (another track's): the two would overlap in its metadata and "
       "source, and once the first landed the second would no longer match its own signature; the maintainer lane "
       "sends it when the first has landed.",
       "3. **Finish**: `results reveal`, `results audit --rebuild` (the export refuses on any mismatch), the tip "
       "exported (below) and this page (`xaibench reference docs`). A round is revealed only when every board of its "
       "tracks with hidden copies has a verdict from them: once its secret is public none of its copies can be run, "
       "so the build stops first and names the boards (`--reveal-incomplete` reveals it as it is).", "",
       "**Tracks added later.** `xaibench reference build --track T` on a build whose round is revealed starts a new "
       "round (`reference-2`, …) with its own secret for T, as a maintainer runs rounds: the revealed round's copies "
       "are public, so rows verified on them would prove nothing (its secret is refused for the new round). The "
       "tracks of a revealed round are not run again and their rows stay as landed; finish reveals and audits each "
       "round once, and the page lists every round with its tracks. So the reference grows a track at a time on a "
       "small machine.", "",
       "A track whose data is missing or whose build fails is listed with its reason and the others go on; so is a "
       "board whose evaluation fails and a pull request that does not verify.", "",
       "**What verification costs, and what it may reuse.** `verify` re-runs each Result from its hashed source in "
       "the sandbox with nothing taken from a cache: that is the check, so the build never lets it reuse the "
       "submitter's outputs; on the maintainer's own machine it is a reproducibility check of the code as hashed. "
       "What the flow does let the build reuse: the submitter's runs skip the companion runs (`verify` makes the "
       "signed randomised-model and hidden-copy runs and never reads a submitter's); the hidden copies are built "
       "once per draw and cached (`$XAIBENCH_HOME/hidden/<round>/`), so every row's verification and the audit "
       "reuse them. So a board with hidden copies costs 2 + 1 + 3 × (the copies' share of its instances) "
       "evaluations per row, one without 2 + 1 (trust, which applies no randomisation test: 2); the scale rule "
       "budgets all of them.", ""]

RULE = ["## The scale rule", "",
        "A board's budget is `--board-budget` CPU-minutes (`make reference REFERENCE_BUDGET=…`, default 12) for "
        "every evaluation the reference makes of it: the submitter's run, `verify`'s re-run, the randomisation "
        "test's run and the round's hidden copies; and an equal share of the shipped tree's 30 MB (`--max-mb`) beside "
        "the sources. Its cost at a scale is projected as (seconds per instance per evaluation, summed over its "
        "submissions) × instances × evaluations, its size as rows × stored runs × (a run's fixed bytes + its "
        "per-instance scores), from what the machine measured in an earlier build (`costs.json` in the build "
        "folder) or from the plan's priors (docs/performance.md). A board over either is built at the largest "
        "evaluation split that fits both: its generator's scale option (AIXI `--n-val`, IDC `--test-limit`, RCNN "
        "`--pool-limit`, trust `--test-limit`, robustness `--samples`) × the share that fits, never below the "
        "option's floor; boards built by one command share its split and take the smallest. Generation (training, "
        "attacks, trust sets) is not counted against a board; the build reports it per track. The rule and its "
        "priors are in `generators/reference/plan.py`; `xaibench reference build --plan` prints its decisions.", ""]

SHIPS = ["## What ships", "",
         "`leaderboard/reference/shipped/`: `tree/` (the repository's tip as plain files, `git archive main`: every "
         "submission's `submission.json` and `source/`, its Results, the verification and round records, the round "
         "and its revealed secret), `maintainers.pub` (the maintainer's public key) and `manifest.json` (the build's "
         "plan, scale choices, outcomes, costs and machine, and every shipped file's sha256). At most 30 MB "
         "(`--max-mb`). Nothing in the tree can be cut after the build: every Result is bound by its record's "
         "signature to its exact bytes, per-instance scores included, and every record to its row — so the boards' "
         "intervals come from the per-instance scores of the very Results that were verified. What sets the size is "
         "the scale: the export refuses a larger tree with each part's size, and the budget is what to lower. It is "
         "written beside the shipped folder and swapped in by renames; it refuses to replace a reference with one "
         "that lacks a board the shipped one has (`--replace-partial`).", ""]

REPRO = ["## The same secret, the same boards", "",
         "`xaibench reference build --secret-file FILE` starts the round from that secret, so a rebuild draws the "
         "same hidden copies. On the same machine and thread count (each lane computes on one thread) every "
         "resource, trained model, explanation and score is the same, and so is every board, bit for bit, except the "
         "wall times a verified row shows. Across CPUs: the models under test's predictions are the same bits for "
         "the same weights (docs/demo.md), but trained weights differ in their last digits (the order of the "
         "training sums follows the CPU and its BLAS), and with them the resources' revisions, the trained hidden "
         "copies (IDC, RCNN), gradient maps to float tolerance, and occasionally which epoch or which reviews a build "
         "keeps; AIXI's images and its function model's boards are the same on any CPU. Measured: docs/performance.md, "
         "“The same bits from scratch”.", ""]


def write_page(reference: Path | None, out: Path, run: Callable[[list[str]], None] | None = None,
               readme: Path | None = None) -> Path:
    """Write docs/reference.md (module docstring) from the reference folder `reference` — or, with None, the page
    of a reference not built yet (its rules, its commands, TODO-LEAD where the build's figures go); with `readme`,
    also the findings between its `FINDINGS` markers. Returns `out`."""
    from benchmark.cli import _run
    from generators.reference.papers import compare_all

    run = run or _run
    if reference is None or not (Path(reference) / "manifest.json").is_file():
        return _write(out, INTRO + ["> **TODO-LEAD:** no reference is shipped yet: `make reference` builds it and "
                                    "writes this page from it (findings, boards, the papers beside them, what the "
                                    "hidden copies reorder, the build's costs).", ""]
                      + HOW + RULE + SHIPS + REPRO + CHECK_STATIC)
    manifest = json.loads((Path(reference) / "manifest.json").read_text(encoding="utf-8"))
    with _reference_at(reference):
        text, csv_s = _output(run, ["leaderboard", "--reference", "--format", "csv"])
        rows = list(csv.DictReader(io.StringIO(text)))
        tracks = [t for t in TRACK_ORDER if any(r["track"] == t for r in rows)]
        boards_md = {t: _output(run, ["leaderboard", "--reference", "--format", "md", "--track", t])[0]
                     for t in tracks}
    found = findings(rows)
    lines = INTRO + ["## What to take away", ""] + [f"* {f}" for f in found] + [""]
    lines += _build_section(manifest)
    lines += ["## The boards", "",
              "Each board as `xaibench leaderboard --reference --format md --track T` prints it: rank and its 95 % "
              "interval, the primary metric on the hidden copies and the public rank where the board has copies, "
              "every metric's mean ± half-width, the verdict and the notes under it.", ""]
    legend = ""
    for t in tracks:
        body, legend = _demote(boards_md[t])
        lines += [f"### {t}", "", body, ""]
    if legend:
        lines.insert(lines.index("## The boards") + 3, legend + "\n")
    lines += ["## Beside the papers", ""]
    for c in compare_all(rows):
        lines += [f"### {c.title}", "", f"_{c.source}_", ""] + _table(c.header, c.rows)
        if c.orderings:
            lines += _table(["the paper's ordering", "here", "numbers", "why not, and where it is shown"],
                            [[o.claim, _mark(o.holds), o.detail, o.why] for o in c.orderings])
    moves = hidden_reorders(rows)
    lines += ["## What the hidden copies reorder", "",
              "Methods whose rank on a board's hidden copies (the rank the board gives) differs from their rank on "
              "the published model, largest move first:", ""]
    lines += _table(["board", "method", "public rank", "hidden rank", "published score", "hidden score"],
                    [[x["board"], x["submission"], str(x["public_rank"]), str(x["hidden_rank"]), _num(x["public"]),
                      _num(x["hidden"])] for x in moves]) if moves else ["None: every method keeps its rank.", ""]
    fin = manifest.get("finish", {})
    lines += HOW + RULE + SHIPS + REPRO
    lines += ["## Checking it", "",
              f"* `xaibench leaderboard --reference [--format rich|md|csv|html] [--track T]` — reads and ranks every "
              f"board ({csv_s:.1f} s for the CSV on the build machine); `xaibench site --reference --out site/` renders"
              " it.",
              "* `xaibench reference audit` — every shipped file is what the build shipped, every Result verifies "
              "against its record under `maintainers.pub` (an edited file is named, and its row shows MODIFIED), and "
              "the round is audited as `xaibench results audit` audits a repository (signed, its revealed secret "
              "hashes to the commitment, every hidden run is a draw of it).",
              f"* `xaibench reference audit --rebuild --sample N` rebuilds N rows' hidden copies from the revealed "
              f"secret and compares them; `--rerun` also evaluates the rows again on them. Both need each row's "
              f"resource at the revision it names (`make reference` builds them; a resource with a trained model is "
              f"the same revision only on the same CPU and thread count, docs/demo.md). The build's own `results "
              f"audit --rebuild` of every round record took {fin.get('audit_s', 0) / 60:.1f} min "
              f"({fin.get('audit_cpu_s', 0) / 60:.1f} CPU-min) with the copies cached from the build.", ""]
    if readme is not None:
        write_findings(readme, found[:3])
    return _write(out, lines)


CHECK_STATIC = ["## Checking it", "",
                "* `xaibench leaderboard --reference [--format rich|md|csv|html] [--track T]` reads and ranks every "
                "board; `xaibench site --reference --out site/` renders it.",
                "* `xaibench reference audit`: every shipped file is what the build shipped, every Result verifies "
                "against its record under `maintainers.pub` (an edited file is named, and its row shows MODIFIED), "
                "and the round is audited as `xaibench results audit` audits a repository.",
                "* `xaibench reference audit --rebuild --sample N` rebuilds N rows' hidden copies from the revealed "
                "secret; `--rerun` also evaluates them again. Both need each row's resource at its revision.", ""]

FINDINGS = ("<!-- reference findings: generated by `xaibench reference docs` -->", "<!-- end of the findings -->")


def write_findings(readme: Path, found: list[str]) -> None:
    """Replace the lines between the `FINDINGS` markers of `readme` with `found` (one bullet each); a README without
    the markers is left as it is."""
    text = Path(readme).read_text(encoding="utf-8")
    start, end = text.find(FINDINGS[0]), text.find(FINDINGS[1])
    if start < 0 or end < start:
        return
    block = FINDINGS[0] + "\n" + "".join(f"* {f}\n" for f in found)
    _write(Path(readme), (text[:start] + block + text[end:]).splitlines())


def _write(out: Path, lines: list[str]) -> Path:
    """`lines` to `out`, atomically."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return out
