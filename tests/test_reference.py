"""The reference leaderboard as shipped (issue #57): it reads and renders offline, `--reference --format csv` equals
`--from` on the same files, every shipped Result verifies against its record under the shipped public key, every
board with hidden copies has its verdict from them, the revealed round audits, and a file edited by hand shows
MODIFIED and is named by the audit. Nothing here builds a reference.

The reference the package ships (`leaderboard/reference/shipped/`, built by `make reference`) is checked; each test
is skipped, saying so, while none is shipped."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.cli import main
from leaderboard.reference import SHIPPED, check, load

REFERENCES = [pytest.param(SHIPPED, id="shipped")]


@pytest.fixture(params=REFERENCES)
def ref(request, monkeypatch) -> Path:
    where = request.param
    if not (where / "tree" / "xaibench-results.json").is_file():
        pytest.skip(f"no reference at {where}: nothing is shipped yet (the lead's `make reference` builds it)")
    monkeypatch.setenv("XAIBENCH_REFERENCE", str(where))
    return where


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _no_times(text: str) -> list[dict[str, str]]:
    """The CSV's rows without wall times (a verified row shows its re-run's: the same on any reader)."""
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in _csv(text)]


def test_it_reads_and_renders_in_every_format(ref, capsys, tmp_path):
    code, out, err = cli(["leaderboard", "--reference", "--format", "csv"], capsys)
    assert code == 0, err
    rows = _csv(out)
    tracks = sorted({r["track"] for r in rows})
    assert rows and all(r["status"] == "verified" for r in rows)
    for fmt in ("rich", "md", "html"):
        code, _, err = cli(["leaderboard", "--reference", "--format", fmt, "--output", str(tmp_path / fmt)], capsys)
        assert code == 0, err
        text = (tmp_path / fmt).read_text()
        assert all(r["submission"] in text for r in rows[:5])
    code, out, _ = cli(["leaderboard", "--reference", "--format", "csv", "--track", tracks[0]], capsys)
    assert code == 0 and {r["track"] for r in _csv(out)} == {tracks[0]}
    code, _, err = cli(["site", "--reference", "--out", str(tmp_path / "site"), "--no-figures"], capsys)
    assert code == 0, err
    assert (tmp_path / "site" / "index.html").is_file() and list((tmp_path / "site" / "board").glob("*.html"))
    code, _, err = cli(["leaderboard", "--reference", "--from", str(tmp_path)], capsys)
    assert code == 2 and "without --from" in err


def test_reference_csv_equals_from_on_the_same_files(ref, capsys, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ref / "tree", repo)
    for args in (["init", "--quiet", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "the shipped tree"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    code, mine, err = cli(["leaderboard", "--reference", "--format", "csv"], capsys)
    assert code == 0, err
    code, theirs, err = cli(["leaderboard", "--from", str(repo), "--public-key", str(ref / "maintainers.pub"),
                             "--format", "csv"], capsys)
    assert code == 0, err
    assert mine == theirs


def test_every_shipped_result_verifies_under_the_shipped_key(ref):
    found, problems, _ = load(ref)
    results = [p for p in (ref / "tree" / "results").rglob("*.json")
               if len(p.relative_to(ref / "tree").parts) == 6]
    assert len(found) == len(results) > 0
    assert all(r.status == "verified" for r in found), [p for p in problems if "MODIFIED" in p]
    lines, n = check(ref)
    assert lines == [] and n == len(results)


def test_every_board_with_hidden_copies_has_its_verdict_from_them(ref, capsys):
    from benchmark.tracks import get_track

    code, out, _ = cli(["leaderboard", "--reference", "--format", "csv"], capsys)
    manifest = json.loads((ref / "manifest.json").read_text())
    boards: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in _csv(out):
        boards.setdefault((r["track"], r["resource"], r["model"]), []).append(r)
    with_copies = [k for k in boards if not get_track(k[0]).no_hidden_copy_of(k[2])]
    assert with_copies, "the reference holds no board with hidden copies"
    for key in with_copies:
        rows = boards[key]
        # one round per board: its track's (a build adds tracks in new rounds, `generators.reference.build`)
        names = [r["name"] for r in manifest["rounds"]] if "rounds" in manifest else [manifest["round"]]
        assert len({r["hidden_round"] for r in rows}) == 1 and rows[0]["hidden_round"] in names, key
        assert rows[0]["board_verdict"] in ("discriminates", "does not discriminate"), (key, rows[0]["board_verdict"])
        assert rows[0]["public_verdict"], key  # the published model's verdict is printed under it
        assert all(r["hidden_draws"] == str(manifest["options"]["draws"]) for r in rows if r["hidden_mean"]), key


def test_a_board_without_a_verdict_from_its_round_s_copies_is_named(ref, capsys):
    """`hidden_gaps`, which the build asks before it reveals a round: none on the shipped reference; every board with
    copies under a round that did not run them; exactly the board whose copies' verdict is missing."""
    from generators.reference.build import hidden_gaps

    code, out, _ = cli(["leaderboard", "--reference", "--format", "csv"], capsys)
    manifest = json.loads((ref / "manifest.json").read_text())
    rounds = manifest.get("rounds") or [{"name": manifest["round"], "tracks": [t["track"] for t in manifest["tracks"]]}]
    for rnd in rounds:
        assert hidden_gaps(out, rnd["name"], rnd["tracks"]) == [], rnd["name"]
    rows = _csv(out)
    tracks = sorted({r["track"] for r in rows})
    with_copies = sorted({(r["track"], r["resource"], r["model"]) for r in rows if r["public_verdict"]})
    assert len(hidden_gaps(out, "a-round-never-run", tracks)) == len(with_copies) > 0
    blank = with_copies[0]
    for r in rows:
        if (r["track"], r["resource"], r["model"]) == blank:
            r["public_verdict"] = ""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    gaps = hidden_gaps(buf.getvalue(), rows[0]["hidden_round"] or rounds[0]["name"], tracks)
    assert [g.split(":")[0] for g in gaps] == [f"{blank[0]} {blank[1]}/{blank[2]}"]


def test_the_revealed_round_audits_on_a_sample(ref, capsys):
    from leaderboard.reference.audit import audit_reference

    lines, counts = audit_reference(ref)
    assert lines == [] and counts["runs"] > 0
    code, _, err = cli(["reference", "audit", "--sample", "1"], capsys)
    assert code == 0 and "0 mismatch(es)" in err, err


@pytest.mark.slow(reason="generates the reference's AIXI resources (no training) and rebuilds a hidden copy of a row")
def test_the_copies_rebuild_from_the_revealed_secret(ref, monkeypatch, tmp_path):
    """`reference audit --rebuild` on a sample: the AIXI resources rebuilt by the manifest's own command (images
    and exact maps, the same revisions on any CPU), then one row's hidden copies drawn again from the revealed
    secret and its signed hidden scores re-checked."""
    from leaderboard.reference.audit import audit_reference

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    manifest = json.loads((ref / "manifest.json").read_text())
    generate = manifest["commands"]["aixi"][0].split()  # `xaibench generate aixi ...`: the reference's resources
    assert generate[:3] == ["xaibench", "generate", "aixi"], generate
    code = subprocess.run([sys.executable, "-m", "benchmark.cli", *generate[1:]], capture_output=True, text=True)
    assert code.returncode == 0, code.stderr[-500:]
    lines, counts = audit_reference(ref, rebuild=True, sample=1, track="aixi")
    assert lines == [] and counts["rebuilt"] > 0


def _edit_one(tree: Path, part: str) -> str:
    """Change one number of a shipped file of `part` (a Result or a round record), keeping it valid JSON."""
    pattern = "*.rounds/*.json" if part == "round record" else "*.json"
    root = tree / ("verifications" if part == "round record" else "results")
    path = next(p for p in sorted(root.rglob(pattern))
                if part == "round record" or len(p.relative_to(tree).parts) == 6)
    d = json.loads(path.read_text())
    if part == "round record":
        d["round_commitment"] = "0" * 64
    else:
        m = d["metrics"][d["primary_metric"]]
        m["mean"] = (m["mean"] or 0.0) + 0.5
    path.write_text(json.dumps(d, indent=1))
    return path.relative_to(tree).as_posix()


def test_a_file_edited_by_hand_shows_modified_and_the_audit_names_it(ref, capsys, monkeypatch, tmp_path):
    copy = tmp_path / "reference"
    shutil.copytree(ref, copy)
    monkeypatch.setenv("XAIBENCH_REFERENCE", str(copy))
    edited = _edit_one(copy / "tree", "Result")
    code, out, err = cli(["leaderboard", "--reference", "--format", "csv"], capsys)
    assert code == 0
    modified = [r for r in _csv(out) if r["status"] == "modified"]
    assert len(modified) == 1 and modified[0]["rank"] == ""
    assert f"{edited}: MODIFIED" in err
    code, out, err = cli(["reference", "audit"], capsys)
    assert code == 1 and f"{edited}: MODIFIED — the file was changed after the maintainers signed it" in out
    record = _edit_one(copy / "tree", "round record")
    code, out, _ = cli(["reference", "audit"], capsys)
    assert code == 1 and record in out
