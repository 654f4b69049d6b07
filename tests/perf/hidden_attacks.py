"""Attacks on the hidden copies' constructions (issue #58): do the public rules give the copies' ground truth away?

On a board's published model and on `--draws` hidden copies of it (a fixed round, built once and cached under
$XAIBENCH_HOME/hidden), every listed built-in method and data prior and the attacks of `tests/construction_attacks.py`
explain the first `--limit` evaluated instances in this process (no sandbox); the track scores them. Printed: each
row's score on the published model and on the copies (the mean over copies of the track's estimate, as the boards
rank them), with the 95 % interval of a paired bootstrap over instances and copies (`leaderboard.hidden`'s scheme:
1,000 draws, instances resampled within each copy, copies resampled), and the paired difference of every row
against the best method and against occlusion.

IDC (`--track idc`, after `xaibench generate idc --pgt wga --no-han --epochs 4`): `--set key=value` overrides a field
of `IdcHiddenConfig` (its own cache folder). Attacks: candidate-prober (occlusion restricted to the listable
candidates and the lexicon's words of the predicted class), lexicon-gated-occlusion (the same without the
candidates), common-word-occlusion (occlusion on every word but the most frequent, no lexicon: the same mask without
the construction's rules), candidate-prior (the lexicon + every candidate marked, no probing),
published-answers (the published `gt`), answers-plus-probe (with the candidates whose deletion moves the output).
RCNN (`--track rcnn`, after the demo's `generate rcnn`): published-answers (the published N / SDK / SR of the
verified reviews, and the published generator's selection on the rest of the pool), answers-demote-candidates (the
same with the listable veto candidates ranked last: a prior that knows the rule) and answers-probe-demote (only the
candidates whose deletion does not move the copy's output demoted).

    XAIBENCH_HOME=... python tests/perf/hidden_attacks.py --track idc --draws 3 --limit 100 [--set insert_rate=0.1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: construction_attacks

IDC_METHODS = ("occlusion", "integrated-gradients", "input-x-gradient", "lime-text", "predicted-class-lexicon",
               "corpus-lexicon")
RCNN_METHODS = ("occlusion", "integrated-gradients", "input-x-gradient", "saliency", "position",
                "predicted-class-lexicon", "corpus-lexicon")
PRIORS = {"predicted-class-lexicon", "corpus-lexicon", "position", "candidate-prior", "published-answers",
          "answers-demote-candidates"}


def _value(track, scores: dict[str, np.ndarray], weights: np.ndarray, metric: str) -> np.ndarray:
    """The track's estimate of `metric` under (B, n) instance weights (a row of ones: the point value)."""
    weights = np.atleast_2d(weights)
    return track.estimate(scores, np.ones(weights.shape[1], dtype=bool), weights)[metric]


def _explain(explainer, model, inst, batch_size: int) -> list[np.ndarray]:
    from benchmark.contracts import Batch

    out: list[np.ndarray] = []
    for s in range(0, len(inst.ids), batch_size):
        pos = list(range(s, min(s + batch_size, len(inst.ids))))
        out += list(explainer.explain(model, Batch.of(inst.ids, inst.inputs, None, pos, seed=0)))
    return out


def _rows(track_name: str, res, stage_dir: Path, config) -> dict[str, tuple[Path, dict]]:
    """{row name: (submission folder, parameter overrides)} of the attacks."""
    import construction_attacks as ca

    if track_name == "idc":
        cands = ca.idc_candidates(res, config)
        prober = ca.stage("candidate_prober", stage_dir / "prober", candidates=cands)
        gated = ca.stage("candidate_prober", stage_dir / "gated", candidates=[])
        common = ca.stage("candidate_prober", stage_dir / "common", candidates=ca.idc_common_words(res, config.max_df))
        answers = ca.stage("published_answers", stage_dir / "answers", candidates=cands, answers=ca.idc_answers(res))
        print(f"listable candidates: {len(cands)}")
        return {"candidate-prober": (prober, {}), "candidate-prober-0.75": (prober, {"lexicon_min": 0.75}),
                "lexicon-gated-occlusion": (gated, {}), "common-word-occlusion": (common, {"lexicon_min": 1e9}),
                "candidate-prior": (prober, {"probe": False}),
                "published-answers": (answers, {}), "answers-plus-probe": (answers, {"probe": True})}
    from generators.rcnn.hidden import listable_candidates

    cands = listable_candidates(res, config)
    answers = ca.stage("published_answers", stage_dir / "answers", candidates=cands, answers=ca.rcnn_answers(res))
    print(f"listable veto candidates: {len(cands)}")
    return {"published-answers": (answers, {}), "answers-demote-candidates": (answers, {"demote": True}),
            "answers-probe-demote": (answers, {"demote": True, "probe": True, "min_drop": 1e-6})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--track", choices=("idc", "rcnn"), default="idc")
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--first-draw", type=int, default=0)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--methods", default=None, help="comma-separated built-ins (default: the track's list)")
    parser.add_argument("--set", action="append", default=[], help="construction config key=value")
    parser.add_argument("--batch-size", type=int, default=25)
    parser.add_argument("--save", default=None, help="write the per-instance scores here (.npz)")
    parser.add_argument("--load", default=None, help="read the per-instance scores of an earlier --save instead "
                        "of explaining (the copies are still built or read from the cache)")
    args = parser.parse_args()

    import torch

    from benchmark.bootstrap import draw_seed_weights, draw_weights
    from benchmark.models.variants.hidden import Round, build_cached, read_stats
    from benchmark.resources.store import load_resource
    from benchmark.submission.folder import get_submission, load_submission
    from benchmark.tracks.base import lexicon_asset
    from benchmark.tracks.idc import IdcTrack
    from benchmark.tracks.rcnn import RcnnTrack

    torch.set_num_threads(1)
    overrides = {}
    for kv in args.set:
        k, _, v = kv.partition("=")
        overrides[k] = json.loads(v) if v[:1] in "0123456789-[{tfn\"" else v
    if args.track == "idc":
        from generators.idc.hidden import IdcConstruction, IdcHiddenConfig

        track, res = IdcTrack(), load_resource("idc/mr-wga", hub=False)
        config = IdcHiddenConfig(**overrides)
        construction, model_name = IdcConstruction(config), "cnn"
        methods = args.methods.split(",") if args.methods else list(IDC_METHODS)
    else:
        from dataclasses import replace

        from generators.rcnn.hidden import CONSTRUCTION as RC
        from generators.rcnn.hidden import RcnnConstruction

        track, res = RcnnTrack(), load_resource("rcnn/beer-appearance", hub=False)
        config = replace(RC.config, **overrides)
        construction, model_name = RcnnConstruction(config), "rcnn"
        methods = args.methods.split(",") if args.methods else list(RCNN_METHODS)
    metric = track.metadata.main_score
    os.environ["XAIBENCH_ASSET_LEXICON"] = str(lexicon_asset(res).get("lexicon", ""))
    rnd = Round("perf-attacks", b"tests/perf/hidden_attacks.py fixed secret")
    print(f"construction {construction.version}; load average {os.getloadavg()}")
    roots = []
    for k in range(args.first_draw, args.first_draw + args.draws):
        t, c = time.perf_counter(), time.process_time()
        roots.append(build_cached(construction, res, rnd.draw(args.track, res.name, res.revision, k)))
        stats = read_stats(roots[-1])
        print(f"draw {k}: {time.perf_counter() - t:.0f} s wall, {time.process_time() - c:.0f} s CPU here; "
              + json.dumps({x: stats.get(x) for x in stats if x not in ("accuracy", "median_shift")}))

    stage_dir = Path(tempfile.mkdtemp(prefix="hidden-attacks-"))
    rows: dict[str, tuple] = {m: (get_submission(m), {}) for m in methods}
    rows.update({n: (load_submission(f), p) for n, (f, p) in _rows(args.track, res, stage_dir, config).items()})
    explainers = {} if args.load else {name: sub.instantiate(params) for name, (sub, params) in rows.items()}

    boards = [("published", track.instances(res, "test", args.limit), track.build_model(res, model_name, None)[0])]
    for k, root in zip(range(args.first_draw, args.first_draw + args.draws), roots):
        # the derived resource of this construction (`Track.hidden_copy` would build the registered default's)
        derived = load_resource(res.name, root=root, hub=False)
        inst = track._instances(derived, "test", args.limit, drop=f"inert_{model_name}") if args.track == "idc" \
            else track.instances(derived, "test", args.limit)
        boards.append((f"copy {k}", inst, track.build_model(derived, model_name, None)[0]))
    scores: dict[str, dict[str, dict]] = {}
    seconds: dict[str, float] = {n: 0.0 for n in rows}
    saved: dict[str, np.ndarray] = dict(np.load(args.load)) if args.load else {}
    for label, inst, spec in boards:
        if saved:
            scores[label] = {}
            for key, value in saved.items():
                b, n, m = key.split("|")
                if b == label:
                    scores[label].setdefault(n, {})[m] = value
            rows = {n: r for n, r in rows.items() if n in scores[label]}
            continue
        model = spec.load()
        print(f"{label}: {len(inst.ids)} instances, excluded {inst.excluded}", flush=True)
        scores[label] = {}
        for name, ex in explainers.items():
            t = time.process_time()
            maps = _explain(ex, model, inst, args.batch_size)
            seconds[name] += time.process_time() - t
            scores[label][name] = track.score(maps, inst.truths, list(range(len(inst.ids))))
    if args.save and not saved:
        np.savez_compressed(args.save, **{f"{b}|{n}|{m}": v for b, per in scores.items() for n, sc in per.items()
                                           for m, v in sc.items()})

    copies = [b for b, *_ in boards if b != "published"]
    est: dict[str, dict[str, np.ndarray]] = {"published": {}, "copies": {}}
    point: dict[str, dict[str, float]] = {"published": {}, "copies": {}}
    pub_n = len(boards[0][1].ids)
    w_pub = draw_weights(np.arange(pub_n), seed=101)
    v = draw_seed_weights(len(copies), seed=7)
    w_copy = {b: draw_weights(np.arange(len(inst.ids)), seed=102 + j) for j, (b, inst, _) in enumerate(boards[1:])}
    for name in rows:
        sc = scores["published"][name]
        point["published"][name] = float(_value(track, sc, np.ones(pub_n), metric)[0])
        est["published"][name] = _value(track, sc, w_pub, metric)
        per = [_value(track, scores[b][name], np.ones(w_copy[b].shape[1]), metric)[0] for b in copies]
        point["copies"][name] = float(np.mean(per))
        draws = np.stack([_value(track, scores[b][name], w_copy[b], metric) for b in copies], 1)
        est["copies"][name] = (v * draws).sum(1) / v.sum(1)
    sign = 1.0 if next(m for m in track.metric_objects() if m.name == metric).direction == "higher" else -1.0
    methods_only = [n for n in methods if n not in PRIORS and n in rows]
    for where in ("published", "copies"):
        best = max(methods_only, key=lambda n: sign * point[where][n])
        print(f"\n{where} ({metric}; best method {best}):")
        refs = [best] + [r for r in ("occlusion", "common-word-occlusion") if r in rows]
        print(f"{'row':28s} {'value [95 %]':>24s} " + " ".join(f"{'Δ vs ' + r:>32s}" for r in refs))
        for name in sorted(rows, key=lambda n: -sign * point[where][n]):
            lo, hi = np.nanpercentile(est[where][name], [2.5, 97.5])
            line = f"{name:28s} {point[where][name]:8.3f} [{lo:+.3f}, {hi:+.3f}]"
            for ref in refs:
                if ref in rows and ref != name:
                    d = est[where][name] - est[where][ref]
                    dl, dh = np.nanpercentile(d, [2.5, 97.5])
                    line += f"     {point[where][name] - point[where][ref]:+.3f} [{dl:+.3f}, {dh:+.3f}]"
                else:
                    line += " " * 33
            print(line)
    print("\nCPU seconds per row (all boards):", json.dumps({n: round(s, 1) for n, s in seconds.items()}))


if __name__ == "__main__":
    main()
