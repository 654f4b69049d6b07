"""The reference build's machinery (generators/reference/), without building a reference: the scale rule and its
projections, the export's refusals and its atomic swap, the page's findings and the papers' orderings computed from
a reference's CSV, a round started from a given secret, a build folder refused at another scale, a lane whose data
is missing, and the maintainer lane's stop."""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from benchmark.errors import XaibenchError
from generators.reference import plan as P
from generators.reference.build import Options, Work, _git, lane, maintain, prepare
from generators.reference.docs import findings, hidden_reorders
from generators.reference.export import boards_of, export, part_of
from generators.reference.papers import compare_all


def _board(track="aixi", resource="aixi/shape-ssin", model="function", instances=500, spi=1.0, fixed=0.0):
    return P.BoardPlan(track, resource, model, instances, spi, fixed)


def _track(boards, knob=P.Knob("--n-val", 500, 50, "validation images"), builds=("aixi/shape-ssin",)):
    gen = P.Generate(("generate", "aixi"), builds, "", knob)
    return P.TrackPlan("aixi", "AIXI", (), (gen,), tuple(boards))


# ---------------------------------------------------------------------------------------------------------------
# the scale rule


def test_passes_count_the_evaluations_verify_makes_of_a_row():
    # AIXI function: the submitter's run, verify's re-run, the randomisation test, 3 hidden copies of every image
    assert P.passes(_board(model="function"), 3) == 6.0
    # the AIXI CNN has no hidden copy: 3 evaluations; the trust track applies no randomisation test: 2
    assert P.passes(_board(model="cnn"), 3) == 3.0
    assert P.passes(P.BoardPlan("trust", "trust/hatexplain-cnn", "cnn", 100, 1.0), 3) == 2.0
    # IDC's copies hold a share of the documents
    assert P.passes(P.BoardPlan("idc", "idc/mr-wga", "cnn", 100, 1.0, 0.0, 0.5), 2) == 4.0


def test_project_prefers_what_this_machine_measured():
    b = _board(spi=1.0, fixed=60.0)
    assert P.project(b, 100, 3) == pytest.approx(6 * (100 + 60) / 60)
    measured = {b.slug: {"spi": 0.5, "fixed_s": 0.0}}
    assert P.project(b, 100, 3, measured) == pytest.approx(6 * 50 / 60)


def test_a_board_over_its_budget_is_built_at_the_largest_split_that_fits():
    b = _board(spi=1.0)  # 6 passes × 500 s = 50 CPU-min at the default
    tracks, choices = P.choose((_track([b]),), budget=10.0, draws=3)
    (c,) = choices
    assert c.boards[b.slug]["default"] == pytest.approx(50.0)
    assert c.reduced and c.value == 100  # 6 × 100 s = 10 min
    assert c.boards[b.slug]["chosen"] <= 10.0 and c.boards[b.slug]["instances"] == 100
    assert tracks[0].generate[0].command == ("generate", "aixi", "--n-val", "100")
    assert "50 CPU-min projected" in c.reason and "--n-val 100" in c.reason


def test_boards_of_one_command_share_its_split_and_the_floor_holds():
    cheap, dear = _board(model="cnn", spi=0.1), _board(model="function", spi=100.0)
    tracks, (c,) = P.choose((_track([cheap, dear]),), budget=10.0, draws=3)
    assert c.value == 50  # the dear board wants 1 image; the option's floor is 50, shared by both boards
    assert {v["instances"] for v in c.boards.values()} == {50}
    assert "its floor; still over on 1 board(s)" in c.reason


def test_within_budget_or_without_budget_nothing_changes():
    b = _board(spi=0.01)
    _, (c,) = P.choose((_track([b]),), budget=10.0, draws=3)
    assert not c.reduced and c.reason == "" and c.value is None
    _, (c,) = P.choose((_track([_board(spi=100.0)]),), budget=0.0, draws=3)
    assert not c.reduced


def test_a_board_over_its_share_of_the_shipped_size_is_cut_to_fit():
    b = P.BoardPlan("aixi", "aixi/shape-ssin", "function", 500, 0.001, rows=10, bpi=1000.0)
    # 10 rows × 5 stored runs (Result, randomised run, 3 hidden copies) × (4,000 + 1,000 × n) bytes
    assert P.project_bytes(b, 500, 3) == 10 * 5 * (P.RUN_BYTES + 1000 * 500)
    _, (c,) = P.choose((_track([b]),), budget=0.0, draws=3, max_mb=1 + 5.0, n_boards=2)  # a 2.5 MB share each
    assert (2_500_000 / 50 - P.RUN_BYTES) // 1000 == 46 and c.value == 50  # 46 fit; the option's floor is 50
    assert c.reduced and "MB projected for its largest board > its share 2.5 MB" in c.reason
    _, (c,) = P.choose((_track([b]),), budget=0.0, draws=3, max_mb=1000.0)
    assert not c.reduced


def test_a_fixed_cost_over_half_the_budget_lowers_its_own_option_first():
    # trust: every oracle's fit reads the training explanations (fixed per evaluation); 2 evaluations per row
    b = P.BoardPlan("trust", "trust/hatexplain-cnn", "cnn", 1000, 0.1, 1800.0)
    gen = P.Generate(("generate", "trust"), ("trust/hatexplain-cnn",), "", P.Knob("--test-limit", 1000, 100, "t"),
                     None, P.Knob("--train-explain-limit", 4500, 300, "training explanations"))
    t = P.TrackPlan("trust", "Trust", (), (gen,), (b,))
    tracks, (c,) = P.choose((t,), budget=12.0, draws=3)
    # half of 12 × 60 / 2 s per evaluation = 180 s for the fit: 4,500 × 180 / 1,800 = 450 explanations
    assert c.fixed == {"option": "--train-explain-limit", "value": 450}
    # the rest, 360 − 180 s, for the instances at 0.1 s: 1,800 → the whole split fits
    assert not c.reduced and c.boards[b.slug]["chosen"] == pytest.approx(2 * (0.1 * 1000 + 180) / 60, abs=0.05)
    assert tracks[0].generate[0].command == ("generate", "trust", "--train-explain-limit", "450")
    assert tracks[0].generate[0].fixed_scale == pytest.approx(0.1)


def test_a_board_without_a_scale_option_is_kept_at_default_and_says_so():
    b = P.BoardPlan("idc", "idc/mr-wga", "cnn", 1598, 1.0)
    t = P.TrackPlan("idc", "IDC", (), (P.Generate(("generate", "idc"), ("idc/mr-wga",)),), (b,), note="no option")
    tracks, (c,) = P.choose((t,), budget=10.0, draws=3)
    assert not c.reduced and tracks[0].generate[0].command == ("generate", "idc")
    assert "over the budget" in c.reason and "no option" in c.reason


def test_the_default_plan_names_real_commands_and_boards():
    from benchmark.cli import load_plugins
    from benchmark.tracks import get_track

    app = load_plugins()
    for scale in P.SCALES:
        for t in P.plan_for(scale):
            for b in t.boards:
                trk = get_track(b.track)
                assert b.model in trk.models and b.resource.split("/")[1] in trk.configs()
                assert any(b.resource in g.builds for g in t.generate), b.slug
            for g in t.generate:  # every command parses (the --help of its command exists)
                group = next(x for x in app.registered_groups if x.name == g.argv[0]).typer_instance
                assert any(c.name == g.argv[1] for c in group.registered_commands), g.argv
    with pytest.raises(ValueError):
        P.plan_for("paper")


def test_the_plan_survives_its_json_form():
    for t in P.plan_for("default"):
        t2 = replace(t, generate=tuple(replace(g, value=7, fixed_value=9 if g.fixed_knob else None) if g.knob else g
                                       for g in t.generate))
        assert P.TrackPlan.from_dict(json.loads(json.dumps(t2.to_dict()))) == t2


# ---------------------------------------------------------------------------------------------------------------
# export


def test_parts_and_boards_of_a_tree(tmp_path):
    rel = "results/occlusion/0123456789abcdef/aixi/aixi__shape-ssin@abc/cnn.json"
    assert part_of(rel) == "Results"
    assert part_of("results/occlusion/0123456789abcdef/source/occlusion/explainer.py") == "source and metadata"
    assert part_of("results/occlusion/0123456789abcdef/submission.json") == "source and metadata"
    assert part_of("verifications/occlusion/0123456789abcdef/aixi/aixi__shape-ssin@abc/cnn.json") \
        == "verification records"
    assert part_of("verifications/occlusion/0123456789abcdef/aixi/aixi__shape-ssin@abc/cnn.rounds/r.json") \
        == "round records"
    assert part_of("rounds/r/round.json") == "rounds"
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text("{}")
    assert boards_of(tmp_path) == {("aixi", "aixi/shape-ssin", "cnn")}


def _repo_with(work: Work, files: dict[str, bytes]) -> None:
    from leaderboard.repository.git import GitStore, init_bare
    from leaderboard.repository.signing import keygen

    if not (work.repo / "HEAD").exists():
        init_bare(work.repo, {"xaibench-results.json": b'{"layout": 1}\n'})
        keygen(work.keys)
    with GitStore(str(work.repo)) as store:
        store.commit(files, "files")


RESULT = "results/occlusion/0123456789abcdef/aixi/aixi__shape-ssin@abc/{}.json"


def test_export_writes_aside_and_swaps_in_and_refuses_what_it_should(tmp_path):
    work = Work(tmp_path / "work")
    _repo_with(work, {RESULT.format("cnn"): b"{}\n", RESULT.format("function"): b"{}\n"})
    out = tmp_path / "pkg" / "shipped"
    out.parent.mkdir()
    report = export(work, out, {"round": "r"}, max_mb=1.0)
    assert report["boards"] == 2 and (out / "tree" / RESULT.format("cnn")).is_file()
    assert (out / "maintainers.pub").read_bytes() == (work.keys / "verifier.pub").read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["round"] == "r"
    assert manifest["files"]["xaibench-results.json"] == hashlib.sha256(b'{"layout": 1}\n').hexdigest()
    assert not list(out.parent.glob(".shipped.*"))  # nothing left aside

    # a new tip that lacks a board the shipped reference has: refused, the shipped one untouched
    subprocess.run(["git", f"--git-dir={work.repo}", "update-ref", "refs/heads/main", "main~1"], check=True)
    _repo_with(work, {RESULT.format("cnn"): b"{}\n"})
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(XaibenchError, match="lacks 1 board"):
        export(work, out, {"round": "r"})
    assert (out / "manifest.json").read_bytes() == before and not list(out.parent.glob(".shipped.*"))
    assert export(work, out, {"round": "r2"}, replace_partial=True)["boards"] == 1
    assert json.loads((out / "manifest.json").read_text())["round"] == "r2"

    # over the size cap: refused with the size of each part
    _repo_with(work, {RESULT.format("function"): b"x" * 200_000})
    with pytest.raises(XaibenchError, match=r"0\.2 MB, over the 0\.1 MB .*Results 0\.2 MB"):
        export(work, out, {}, max_mb=0.1)
    assert json.loads((out / "manifest.json").read_text())["round"] == "r2"


# ---------------------------------------------------------------------------------------------------------------
# the page: findings and the papers, from a reference's CSV


def _row(resource, model, sub, rank="", public="", role="method", verdict="discriminates", hidden=True, **metrics):
    track = resource.split("/")[0]
    primary = {"aixi": "kl", "idc": "interp-kappa", "rcnn": "pct-first", "trust": "trust-auc",
               "robustness": "rob-racc-tef"}[track]
    row = {"track": track, "resource": resource, "model": model, "submission": sub, "rank": rank, "role": role,
           "primary_metric": primary, "board_verdict": verdict, "public_rank": public,
           "hidden_round": "reference" if hidden else "", "hidden_mean": "", "hidden_reason": ""}
    row.update({f"{k.replace('_', '-')}_mean": str(v) for k, v in metrics.items()})
    return row


def test_findings_and_reorders_come_from_the_csv():
    rows = [_row("idc/mr-wga", "cnn", "lrp", "1", "2", interp_kappa=0.5),
            _row("idc/mr-wga", "cnn", "lime-text", "2", "1", interp_kappa=0.6),
            _row("idc/mr-wga", "cnn", "saliency", "", "3", interp_kappa=0.1),
            _row("idc/mr-wga", "cnn", "corpus-lexicon", role="control"),
            _row("aixi/shape-ssin", "function", "lime-image", "", "1", verdict="does not discriminate")]
    rows[2]["hidden_reason"] = "does not beat a data prior on models it has not seen (Δ −0.1)"
    moves = hidden_reorders(rows)
    assert [(m["submission"], m["public_rank"], m["hidden_rank"]) for m in moves] == [("lime-text", 1, 2),
                                                                                       ("lrp", 2, 1)]
    text = "\n".join(findings(rows))
    assert "1 of the 2 boards with hidden copies discriminate" in text
    assert "aixi/shape-ssin / function (does not discriminate)" in text
    assert "lrp on 1" in text and "reorder 2 method placing(s)" in text
    assert ("lime-text on idc/mr-wga / cnn, rank 1 on the published model (interp-kappa 0.600) → 2 on the "
            "copies.") in text
    assert "saliency on idc/mr-wga / cnn" in text


def test_the_papers_orderings_are_checked_on_our_numbers():
    rows = [_row("idc/mr-wga", "cnn", m, interp_kappa=k) for m, k in
            (("lrp", 0.55), ("integrated-gradients", 0.55), ("deeplift", 0.55), ("grad-cam", 0.2), ("saliency", 0.1))]
    rows.append(_row("idc/mr-wga", "han", "attention", interp_kappa=0.02))
    rows += [_row("rcnn/beer-appearance", "rcnn", m, pct_first=v, pct_misrank=v, avg_misrank=v)
             for m, v in (("lime-text", 1.0), ("kernel-shap", 0.5), ("l2x", 3.0))]
    got = {o.claim: o for c in compare_all(rows) for o in c.orderings}
    family = got["WGA: the gradient-by-input family (LRP, IG, DeepLIFT, Grad-CAM) > Saliency"]
    assert family.holds is True  # 0.2 > 0.1
    assert got["WGA: LRP ≈ IG ≈ DeepLIFT (the paper: within 0.02 of κ)"].holds is True
    gradcam = got["WGA: Grad-CAM ≈ LRP (the paper: within 0.01 of κ)"]
    assert gradcam.holds is False and "windows, not words" in gradcam.why  # 0.2 against 0.55
    assert got["WGA: Saliency > HAN attention"].holds is True
    assert got["MILP: Saliency > HAN attention"].holds is None  # no MILP board: cannot tell
    assert got["appearance: lime-text errs less than L2X on pct-first"].holds is True
    assert got["aroma: lime-text errs less than L2X on pct-first"].holds is None
    rows[3]["interp-kappa_mean"] = "0.05"  # Grad-CAM below saliency: the paper's family ordering fails, with why
    family = {o.claim: o for c in compare_all(rows) for o in c.orderings}[family.claim]
    assert family.holds is False and "windows, not words" in family.why


# ---------------------------------------------------------------------------------------------------------------
# the round's secret, the build folder, a lane, the maintainer


def test_a_round_started_from_a_given_secret_commits_to_it(tmp_path):
    from leaderboard.repository.git import init_bare
    from leaderboard.repository.layout import RepositoryError
    from leaderboard.repository.rounds import read_secret_file, secret_file, start
    from leaderboard.repository.signing import keygen, load_private_key

    repo = tmp_path / "r.git"
    init_bare(repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    keygen(tmp_path / "keys")
    secret = bytes(range(32))
    (tmp_path / "s.hex").write_text(secret.hex() + "\n")
    _, commitment, _ = start(str(repo), "r1", 2, load_private_key(tmp_path / "keys" / "verifier.key"),
                             tmp_path / "keys", read_secret_file(tmp_path / "s.hex"))
    assert commitment == hashlib.sha256(secret).hexdigest()
    assert secret_file(tmp_path / "keys", "r1").read_text().strip() == secret.hex()
    (tmp_path / "bad.hex").write_text("not hex")
    with pytest.raises(RepositoryError, match="not 64 hex digits"):
        read_secret_file(tmp_path / "bad.hex")


def test_a_build_folder_is_resumed_with_its_own_plan_only(tmp_path):
    work = Work(tmp_path / "w")
    calls: list[list[str]] = []
    frozen = {"options": {"scale": "tiny", "budget": 12.0, "draws": 3}, "planned": "then", "choices": [],
              "tracks": [], "round": "reference"}
    work.root.mkdir()
    work.plan.write_text(json.dumps(frozen))
    with pytest.raises(XaibenchError, match="scale tiny, budget 12, 3 draws and 30 MB"):
        prepare(work, Options(scale="default"), calls.append, lambda line: None)
    assert calls == []


def test_tracks_added_after_the_round_is_revealed_go_to_a_new_round_with_a_new_secret(tmp_path, monkeypatch):
    """A build whose round is revealed takes more tracks (the maintainer's flow: a new round, its own secret): the
    tracks already built stay in their round and are not run again; a revealed round's secret is refused for the
    new one (anyone could draw its copies); a plan written before rounds were listed reads as one round."""
    from benchmark.cli import _run, load_plugins
    from generators.reference.build import _revealed, rounds_of

    load_plugins()  # the `results` commands
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    work, said = Work(tmp_path / "w"), []
    first = tmp_path / "s1.hex"
    first.write_text(bytes(range(32)).hex() + "\n")
    frozen = prepare(work, Options(scale="tiny", tracks=["aixi"], secret_file=str(first)), _run, said.append)
    assert rounds_of(frozen) == [{"name": "reference", "tracks": ["aixi"]}]
    again = prepare(work, Options(scale="tiny", tracks=["aixi", "idc"], secret_file=str(first)), _run, said.append)
    assert rounds_of(again) == [{"name": "reference", "tracks": ["aixi", "idc"]}]  # the round is open: it takes them
    _run(["results", "reveal", str(work.repo), "reference", "--key", str(work.keys / "verifier.key")])
    assert _revealed(work, "reference")
    with pytest.raises(XaibenchError, match="the secret of round reference, revealed already"):
        prepare(work, Options(scale="tiny", tracks=["rcnn"], secret_file=str(first)), _run, said.append)
    assert not _revealed(work, "reference-2") and "round reference-2" not in _git(work.repo, "log", "--format=%s",
                                                                                    "main")
    second = tmp_path / "s2.hex"
    second.write_text(bytes(range(1, 33)).hex() + "\n")
    frozen = prepare(work, Options(scale="tiny", tracks=["rcnn"], secret_file=str(second)), _run, said.append)
    assert rounds_of(frozen)[1]["name"] == "reference-2" and "rcnn" in rounds_of(frozen)[1]["tracks"]
    assert json.loads(work.plan.read_text())["rounds"] == rounds_of(frozen)
    assert any("round reference is revealed" in line for line in said)
    assert "xaibench round reference-2 starts" in _git(work.repo, "log", "--format=%s", "main")
    legacy = {"tracks": [{"name": "aixi"}, {"name": "idc"}], "round": "reference"}
    assert rounds_of(legacy) == [{"name": "reference", "tracks": ["aixi", "idc"]}]


def test_a_round_whose_boards_lack_hidden_verdicts_is_not_revealed(tmp_path, monkeypatch):
    """`finish` asks the leaderboard which boards of a round have no verdict from its copies before it reveals it
    (once revealed, none of its copies can be run): it stops, naming them and the way on, and reveals nothing;
    with `reveal_incomplete` it reveals the round and records the boards."""
    from benchmark.cli import _run, load_plugins
    from generators.reference import build as B

    load_plugins()
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    work, said = Work(tmp_path / "w"), []
    prepare(work, Options(scale="tiny", tracks=["aixi"]), _run, said.append)
    asked: list[tuple[str, list[str]]] = []

    def gaps(w, name, tracks):
        asked.append((name, tracks))
        return ["aixi aixi/shape-ssin/function: hidden round none"]

    monkeypatch.setattr(B, "_round_gaps", gaps)
    with pytest.raises(XaibenchError, match=r"round reference is not revealed: 1 board\(s\) .*aixi/shape-ssin/function"
                                            r".*results rehide.*--reveal-incomplete"):
        B.finish(work, tmp_path / "out", None, _run, said.append, 30.0)
    assert asked == [("reference", ["aixi"])] and not B._revealed(work, "reference")
    B.finish(work, tmp_path / "out", None, _run, said.append, 30.0, reveal_incomplete=True)
    assert B._revealed(work, "reference")
    assert json.loads(work.finished.read_text())["unverdicted"] == {"reference": ["aixi aixi/shape-ssin/function: "
                                                                                  "hidden round none"]}


def test_a_lane_whose_data_is_missing_is_skipped_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "no-mirror"))
    work = Work(tmp_path / "w")
    t = next(t for t in P.plan_for("tiny") if t.name == "idc")
    work.root.mkdir()
    work.plan.write_text(json.dumps({"options": {}, "tracks": [t.to_dict()], "choices": []}))
    out = lane(work, "idc", lambda argv: pytest.fail(f"ran {argv}"), lambda line: None)
    assert out.status == "skipped" and "rt_polarity" in out.reason
    assert json.loads(work.lane("idc").read_text())["status"] == "skipped"


def test_training_capped_by_train_epochs_is_in_the_frozen_plan(tmp_path):
    """`--train-epochs N`: every `train` command of the plan runs at most N epochs (an explicit --epochs lowered,
    none added otherwise), says so, and a build folder planned with one cap is not resumed with another."""
    tracks = P.cap_training(P.plan_for("default"), 2)
    trains = [g for t in tracks for g in t.generate if g.argv[0] == "train"]
    assert len(trains) == 2 and all(g.command[-2:] == ("--epochs", "2") and "--train-epochs" in g.what
                                    for g in trains)
    assert all(g.argv == h.argv for t, u in zip(tracks, P.plan_for("default")) for g, h in zip(t.generate, u.generate)
               if g.argv[0] != "train")
    tiny = P.cap_training(P.plan_for("tiny"), 3)  # the tiny AIXI CNN trains 1 epoch: the cap never raises it
    assert [g.argv for t in tiny for g in t.generate if g.argv[0] == "train"][0][-2:] == ("--epochs", "1")
    assert P.cap_training(P.plan_for("default"), None) == P.plan_for("default")
    work = Work(tmp_path / "w")
    work.root.mkdir()
    work.plan.write_text(json.dumps({"options": {"scale": "default", "budget": 12.0, "draws": 3, "train_epochs": 2},
                                     "planned": "then", "tracks": [], "choices": [], "round": "reference"}))
    with pytest.raises(XaibenchError, match="training capped at 2 epoch"):
        prepare(work, Options(scale="default"), lambda argv: None, lambda line: None)


def test_a_failed_generate_leaves_no_board_on_a_resource_it_found_already(tmp_path, monkeypatch):
    """A home holding one of a command's resources already (an earlier build at another scale): the command refuses
    to overwrite it, and none of its boards is evaluated on what the home held — each fails with the reason."""
    import generators.reference.build as B

    work = Work(tmp_path / "w")
    t = next(t for t in P.plan_for("default") if t.name == "aixi")
    work.root.mkdir()
    work.plan.write_text(json.dumps({"options": {}, "tracks": [t.to_dict()], "choices": []}))
    assert len(t.generate[0].builds) > 1  # a command that builds several resources, one of them held
    held = t.generate[0].builds[0]
    monkeypatch.setattr(B, "_built", lambda r: r == held)
    monkeypatch.setattr(B, "_submit_all", lambda *a: None)
    ran: list[list[str]] = []

    def run(argv: list[str]) -> None:
        ran.append(argv)
        if argv[0] == "generate":
            raise XaibenchError(f"resource {held} already exists; pass --overwrite to replace it")

    out = lane(work, "aixi", run, lambda line: None)
    assert not [a for a in ran if a[0] == "evaluate"]
    on_held = [v for b, v in out.boards.items() if b.startswith(held + "/")]
    assert on_held and all(v["status"] == "failed" and "already exists" in v["reason"] for v in on_held)
    assert out.status == "failed"


def test_the_maintainer_stops_once_the_lanes_are_done_and_nothing_is_open(tmp_path):
    from leaderboard.repository.git import init_bare

    work = Work(tmp_path / "w")
    work.root.mkdir()
    init_bare(work.repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    work.plan.write_text(json.dumps({"options": {}, "tracks": [], "choices": []}))
    work.lanes_done.write_text("now\n")
    record = maintain(work, lambda argv: pytest.fail(f"ran {argv}"), lambda line: None, poll_s=0.01)
    assert record["landed"] == {} and record["refused"] == {}
    assert Path(work.maintainer).is_file()


def test_the_maintainer_verifies_a_pull_requests_boards_at_once(tmp_path, capsys):
    """The maintainer is the build's bottleneck: its `results verify` re-runs `VERIFY_JOBS` boards at once, and the
    command line takes the option (the missing key is its error, not the option)."""
    from benchmark.cli import main
    from generators.reference import build as B

    argv = B._verify_argv(Work(tmp_path / "w"), "xaibench/occlusion/h/p")
    assert argv[argv.index("--jobs") + 1] == str(B.VERIFY_JOBS) and B.VERIFY_JOBS >= 1
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code != 0 and "no signing key" in err and "No such option" not in err


def test_an_idle_maintainer_decides_again_only_when_the_state_changes(tmp_path, monkeypatch):
    """Waiting for the lanes, the maintainer polls every few seconds; `_supersede` and `_resubmit` read every board's
    Results, so they run once per state of `main`, the closed pull requests and the lanes' records, not per poll."""
    from generators.reference import build as B
    from leaderboard.repository.git import init_bare

    work = Work(tmp_path / "w")
    (work.root / "lanes").mkdir(parents=True)
    init_bare(work.repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    work.plan.write_text(json.dumps({"options": {}, "tracks": [], "choices": []}))
    calls = {"supersede": 0, "resubmit": 0}

    def counted(name):
        def call(*args):
            calls[name] += 1
            return False
        return call

    monkeypatch.setattr(B, "_supersede", counted("supersede"))
    monkeypatch.setattr(B, "_resubmit", counted("resubmit"))
    polls, real_sleep = [], time.sleep

    def sleep(seconds):
        if seconds != 5.0:  # another thread's (the CPU meter's)
            return real_sleep(seconds)
        polls.append(seconds)
        if len(polls) == 10:  # a lane ends: its record changes
            (work.root / "lanes" / "aixi.json").write_text('{"status": "built"}')
        if len(polls) == 20:
            work.lanes_done.write_text("now\n")

    monkeypatch.setattr(B.time, "sleep", sleep)
    maintain(work, lambda argv: pytest.fail(f"ran {argv}"), lambda line: None, poll_s=5.0)
    assert len(polls) == 20
    assert calls == {"supersede": 2, "resubmit": 2}  # the first poll and the lane's end


def test_a_git_that_does_not_answer_is_one_line_and_the_maintainer_asks_again(tmp_path, monkeypatch):
    """A build stopped (SIGSTOP) and resumed past git's time limit: `_git` says so in one line (no traceback), and
    the maintainer lists the open pull requests again instead of dying."""
    from generators.reference import build as B
    from leaderboard.repository.git import init_bare

    work = Work(tmp_path / "w")
    work.root.mkdir()
    init_bare(work.repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    work.plan.write_text(json.dumps({"options": {}, "tracks": [], "choices": []}))
    work.lanes_done.write_text("now\n")
    real, failed = subprocess.run, []

    def slow_once(argv, *a, **kw):
        if "for-each-ref" in argv and not failed:
            failed.append(argv)
            raise subprocess.TimeoutExpired(argv, 300)
        return real(argv, *a, **kw)

    monkeypatch.setattr(B.subprocess, "run", slow_once)
    said: list[str] = []
    record = maintain(work, lambda argv: pytest.fail(f"ran {argv}"), said.append, poll_s=0.01)
    assert failed and record["landed"] == {} and any("no answer within 300 s" in line for line in said)


def test_a_pull_request_refused_for_a_name_only_floors_hold_is_bound_and_verified_again(tmp_path):
    """The maintainer's floors land a built-in's rows without a contributor binding; the build's own pull request of
    that built-in's other rows is then refused ("bound to no contributor key"): the maintainer binds the name to the
    build's contributor key, once, and verifies the pull request again; any other refusal stays."""
    from generators.reference import build as B

    work = Work(tmp_path / "w")
    record = {"landed": {}, "refused": {
        "xaibench/published-truth/h/p": "xaibench/published-truth/h/p does not validate (results/published-truth/: "
                                        "the name is held but bound to no contributor key (no binding …)",
        "xaibench/other/h/p": "does not validate (results/other/x.json: the default branch already holds it)"}}
    calls: list[list[str]] = []
    assert B._bind_held(work, record, calls.append, lambda line: None)
    assert [c[:4] for c in calls] == [["results", "bind", str(work.repo), "published-truth"]]
    assert calls[0][calls[0].index("--public-key") + 1] == str(work.keys / "contributor.pub")
    assert list(record["refused"]) == ["xaibench/other/h/p"] and "published-truth" in record["bound"]
    record["refused"]["xaibench/published-truth/h/q"] = record["refused"]["xaibench/other/h/p"].replace(
        "results/other/x.json: the default branch already holds it",
        "results/published-truth/: the name is held but bound to no contributor key")
    assert not B._bind_held(work, record, calls.append, lambda line: None) and len(calls) == 1  # bound once


def test_a_refused_pull_request_whose_results_all_landed_as_floor_runs_is_superseded(tmp_path):
    """A built-in floor's own pull request is refused once the maintainer's floor runs landed its Results at the same
    paths: with every one of its Results on `main` it is recorded as superseded (the reference lists it so), not
    refused; one whose Results are not all on `main`, or that the lanes hold none of, stays refused."""
    from generators.reference import build as B
    from leaderboard.repository.git import init_bare

    work = Work(tmp_path / "w")
    t = next(t for t in P.plan_for("tiny") if t.name == "aixi")
    work.root.mkdir()
    work.plan.write_text(json.dumps({"options": {}, "tracks": [t.to_dict()], "choices": []}))
    on_main = {"xaibench-results.json": b'{"layout": 1}\n'}
    for k, b in enumerate(t.boards):
        folder = work.results("aixi") / "aixi" / b.resource.replace("/", "__") / b.model
        folder.mkdir(parents=True)
        for name in ("foreground", "occlusion"):
            (folder / f"{name}.json").write_text(json.dumps({
                "submission": {"name": name, "hash": "h"}, "track": "aixi", "coverage": {"complete": True},
                "resource": {"name": b.resource, "revision": "r"}, "model": {"name": b.model}}))
            if name == "foreground" or k == 0:  # occlusion: one board's Result only
                on_main[f"results/{name}/h/aixi/{b.resource.replace('/', '__')}@r/{b.model}.json"] = b"{}"
    init_bare(work.repo, {"xaibench-results.json": on_main.pop("xaibench-results.json")})
    checkout = tmp_path / "checkout"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(checkout)]
    subprocess.run(["git", "clone", "-q", str(work.repo), str(checkout)], check=True, capture_output=True)
    for rel, data in on_main.items():
        (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
        (checkout / rel).write_bytes(data)
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "-m", "floor runs"], check=True, capture_output=True)
    subprocess.run([*git, "push", "-q", "origin", "HEAD:main"], check=True, capture_output=True)
    record = {"landed": {}, "refused": {"xaibench/foreground/h/p1": "the default branch already holds it",
                                        "xaibench/occlusion/h/p2": "the default branch already holds it",
                                        "xaibench/lrp/h/p3": "the default branch already holds it"}}
    (checkout / "pr.txt").write_text("the built-in's own pull request")  # a branch off main, never landed
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "-m", "pull request"], check=True, capture_output=True)
    subprocess.run([*git, "push", "-q", "origin", "HEAD:refs/heads/xaibench/foreground/h/p1"], check=True,
                   capture_output=True)
    assert B._pending(work, B._closed(record)) == []  # refused: not verified again
    assert B._supersede(work, record)
    assert B._pending(work, B._closed(record)) == []  # superseded: not verified again either
    assert list(record["superseded"]) == ["xaibench/foreground/h/p1"]
    assert sorted(record["refused"]) == ["xaibench/lrp/h/p3", "xaibench/occlusion/h/p2"]
    assert not B._supersede(work, record)
    from generators.reference.docs import _build_section

    page = "\n".join(_build_section({"maintainer": {"landed": 3, "refused": record["refused"],
                                                    "superseded": record["superseded"]}}))
    assert "refused 2: `xaibench/occlusion/h/p2`" in page
    assert "1 superseded (`xaibench/foreground/h/p1`: every Result" in page


@pytest.mark.slow(reason="builds the tiny IDC resources and runs a data prior on a board in the plain worker")
def test_a_data_prior_reaches_a_results_repository(idc_home, tmp_path, monkeypatch):
    """The data priors (the lexicon controls) need the resource's lexicon asset: the validator asks the runner's
    question with the track's assets, so their Results validate — before, every one was refused ("needs the
    'lexicon' asset, which this board does not offer") and no text board of a results repository had its floor."""
    from benchmark.runner import evaluate
    from leaderboard.repository.git import init_bare
    from leaderboard.repository.submit import submit
    from tests.test_results_repository import contributor

    monkeypatch.setenv("XAIBENCH_HOME", str(idc_home))
    contributor()
    results = tmp_path / "res"
    evaluate("corpus-lexicon", "idc", "idc/mr-wga", model="cnn", results_dir=results, sandbox="none", timeout_s=0)
    repo = tmp_path / "r.git"
    init_bare(repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    out = submit("corpus-lexicon", str(repo), results_dir=results, dry_run=True, check=False)
    assert any(p.endswith("/cnn.json") for p in out.sent), out.message


def test_the_cpu_meter_counts_a_grandchild_s_cpu():
    """A sandboxed worker's CPU never reaches its parent's rusage (bubblewrap reaps it): the meter reads /proc."""
    import sys

    from generators.reference.build import CpuMeter

    meter = CpuMeter(every_s=0.1)
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6:\n    pass\n"
    subprocess.run(["bash", "-c", f"{sys.executable} -c '{burn}' & wait"], check=True)  # a grandchild
    assert meter.total() >= 0.45
    meter.stop()


def test_a_resumed_lane_keeps_the_boards_an_earlier_run_evaluated(tmp_path, monkeypatch):
    """Evaluating a board again would write its Results anew (a new `created`): the repository, which may hold them
    already, would refuse them as other content at their paths. A resumed lane keeps them and submits them as they
    are (`submit` then opens nothing new). Its cost is every run's: the earlier runs' seconds and the steps they ran
    stay in the record."""
    from generators.reference import build as B

    work = Work(tmp_path / "w")
    t = next(t for t in P.plan_for("tiny") if t.name == "aixi")
    work.root.mkdir()
    work.plan.write_text(json.dumps({"options": {}, "tracks": [t.to_dict()], "choices": []}))
    from leaderboard.repository.git import init_bare

    init_bare(work.repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    kept = {b.slug: {"status": "evaluated", "seconds": 1.0} for b in t.boards}
    work.lane("aixi").parent.mkdir()
    generated = "xaibench " + " ".join(t.generate[0].command)
    work.lane("aixi").write_text(json.dumps({"boards": kept, "seconds": 100.0, "cpu_s": 50.0, "steps": [
        {"command": generated, "seconds": 60.0, "cpu_s": 30.0}]}))
    monkeypatch.setattr(B, "_built", lambda resource: True)  # the earlier run built them
    for b in t.boards:
        folder = work.results("aixi") / "aixi" / b.resource.replace("/", "__") / b.model
        folder.mkdir(parents=True)
        (folder / "occlusion.json").write_text(json.dumps({"submission": {"name": "occlusion"}, "n_instances": 32,
                                                           "coverage": {"complete": True}}))
    calls: list[list[str]] = []

    class Stopped(BaseException):
        pass

    def stopped_at_submit(argv: list[str]) -> None:  # the build stopped (TERM) while the lane submits
        calls.append(argv)
        if argv[0] == "submit":
            raise Stopped

    with pytest.raises(Stopped):
        lane(work, "aixi", stopped_at_submit, lambda line: None)
    assert json.loads(work.lane("aixi").read_text())["boards"] == kept  # the next run still keeps them
    calls.clear()
    out = lane(work, "aixi", calls.append, lambda line: None)
    assert not [c for c in calls if c[0] == "evaluate"]
    assert [c[:2] for c in calls if c[0] == "submit"] == [["submit", "occlusion"]]
    assert out.boards == kept and out.status == "built"
    assert out.runs == 3 and out.seconds >= 100.0 and out.cpu_s >= 50.0  # the first, the stopped one and this one
    assert out.steps[0] == {"command": generated, "seconds": 60.0, "cpu_s": 30.0, "earlier_run": True}


def test_a_submission_with_an_open_pull_request_is_deferred_then_sent_by_the_maintainer(tmp_path):
    """Two open pull requests of one submission overlap in its metadata and source: once the first lands, the second no
    longer matches its signature and is refused. A lane defers such a submission; the maintainer sends it when none of
    its pull requests is open and its Results are not all on main."""
    from generators.reference import build as B
    from leaderboard.repository.git import GitStore, init_bare

    work = Work(tmp_path / "w")
    t = next(t for t in P.plan_for("tiny") if t.name == "aixi")
    work.root.mkdir()
    work.plan.write_text(json.dumps({"options": {}, "tracks": [t.to_dict()], "choices": []}))
    init_bare(work.repo, {"xaibench-results.json": b'{"layout": 1}\n'})
    with GitStore(str(work.repo)) as store:  # another track's pull request of occlusion, open
        store.propose({"results/occlusion/0123456789abcdef/submission.json": b"{}\n"}, "open", "occlusion/x/y")
    assert B._open_of(work, "occlusion", set()) and not B._open_of(work, "random", set())
    work.lane("aixi").parent.mkdir()
    work.lane("aixi").write_text(json.dumps({"boards": {b.slug: {"status": "evaluated"} for b in t.boards}}))
    for b in t.boards:
        folder = work.results("aixi") / "aixi" / b.resource.replace("/", "__") / b.model
        folder.mkdir(parents=True)
        for name in ("occlusion", "random"):
            (folder / f"{name}.json").write_text(json.dumps({
                "submission": {"name": name, "hash": "0123456789abcdef"}, "track": "aixi", "n_instances": 32,
                "resource": {"name": b.resource, "revision": "abc"}, "model": {"name": b.model},
                "coverage": {"complete": True}}))
    calls: list[list[str]] = []
    out = lane(work, "aixi", calls.append, lambda line: None)
    assert out.submitted == {"occlusion": B.DEFERRED, "random": "proposed"}
    assert [c[1] for c in calls if c[0] == "submit"] == ["random"]

    with GitStore(str(work.repo)) as store:  # what the lane's `submit random` opened
        store.propose({"results/random/0123456789abcdef/submission.json": b"{}\n"}, "open", "random/x/y")
    record = {"landed": {}, "refused": {}}
    assert not B._resubmit(work, record, calls.append, lambda line: None)  # both pull requests are open
    record["refused"]["xaibench/occlusion/x/y"] = "refused"  # it is closed now (here: refused)
    calls.clear()
    assert B._resubmit(work, record, calls.append, lambda line: None)
    assert [c[:2] for c in calls] == [["submit", "occlusion"]] and record["resubmitted"] == {"aixi/occlusion": 1}
