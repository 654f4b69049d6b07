"""IDC hidden copies (issue #50; docs/idc.md, "Hidden copies"): what one copy costs, what a diff against the published
weights shows, and how a model-reading method and data priors score on the copy.

1. Cost: draw `--draw` of a fixed round on `idc/mr-wga` of $XAIBENCH_HOME, built once (`build_cached`, into a
   scratch data home); wall and CPU seconds, the construction's statistics.
2. Weight diff, per word type w of the vocabulary (the copies keep the published vocabulary, so rows align):
   the distance of embedding rows ||E_X[w] − E_pub[w]||, the change of the first-layer response
   |max_{r,q,i} e_w·W_X[r,q,i] − max e_w·W_pub[r,q,i]| and of the one-word document's evidence
   |(logit₁ − logit₀)_X([w]) − (logit₁ − logit₀)_pub([w])|, for X = the hidden copy (trained from the draw's seed on
   planted data), a control copy (the same recipe from another seed on the unplanted data) and the alternative the
   construction rejects: the published weights fine-tuned for one epoch on the planted data. For each, the ROC AUC
   of the planted words against every other word and against the other candidates (the words the public rules
   allow: an attacker knows them), and of the same quantities read off the copy alone (norm, response,
   evidence): what a diff shows beyond what the copy's own weights show.
3. κ (pooled, α = 0.3) on the published board and on the copy (inert documents dropped): leave-one-out occlusion
   (reads the model), the class log-odds prior turned toward the predicted class, the published `gt` switch, and
   the candidates (score 1 for every word the public rules allow) on their own and over the log-odds prior.

    XAIBENCH_HOME=... python tests/perf/hidden_idc.py [--draw 0]      (after the demo's generate idc)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch


def _fine_tune(public_dir: Path, out: Path, train, seed: int) -> None:
    """The published CNN trained one more epoch on the planted training documents (Adam 1e-3, batch 32)."""
    from benchmark.models.base import save_model
    from benchmark.models.text import load_word_model
    from generators.text_trainer import encode

    model = load_word_model(public_dir, "cnn")
    module = model.module.train()
    ids = encode(model.index, train[0], model.max_len)
    labels = np.asarray(train[1])
    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    torch.manual_seed(seed)
    perm = np.random.default_rng(seed).permutation(len(ids))
    for s in range(0, len(ids), 32):
        idx = perm[s:s + 32]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(module(torch.from_numpy(ids[idx])), torch.from_numpy(labels[idx])).backward()
        opt.step()
    cfg = json.loads((public_dir / "config.json").read_text())
    save_model(module.eval(), out, cfg["architecture"], cfg["kwargs"],
               extra={k: v for k, v in cfg.items() if k not in ("architecture", "kwargs", "sha256")})


def _word_table(directory: Path) -> dict[str, np.ndarray]:
    """Per vocabulary row: embedding, first-layer response max_{r,q,i} e·W, one-word evidence logit₁ − logit₀."""
    from benchmark.models.text import load_word_model

    model = load_word_model(directory, "cnn")
    m = model.module
    with torch.no_grad():
        emb = m.embedding.weight.detach().double()
        response = torch.stack([torch.einsum("ud,qid->uqi", emb, c.weight.detach().double().squeeze(1))
                                .flatten(1).max(1).values for c in m.convs], 1).max(1).values
        logits = m.forward_ids(torch.arange(len(model.vocab))[:, None], torch.ones(len(model.vocab), 1, dtype=bool))
    return {"embedding": emb.numpy(), "response": response.numpy(),
            "evidence": (logits[:, 1] - logits[:, 0]).double().numpy()}


def _weight_diff(public: dict, other: dict, vocab: list[str], planted: set[str], pool: set[str]) -> dict:
    """ROC AUC (planted words vs all other words, vs the other candidates) of each signal: the diffs against the
    published weights, and the same quantities read off the copy alone (what any white-box method can read)."""
    from sklearn.metrics import roc_auc_score

    words = np.arange(2, len(vocab))
    signals = {"embedding row distance": np.linalg.norm(other["embedding"] - public["embedding"], axis=1),
               "first-layer response change": np.abs(other["response"] - public["response"]),
               "one-word evidence change": np.abs(other["evidence"] - public["evidence"]),
               "copy alone: |embedding row|": np.linalg.norm(other["embedding"], axis=1),
               "copy alone: first-layer response": other["response"],
               "copy alone: |one-word evidence|": np.abs(other["evidence"])}
    is_planted = np.array([vocab[i] in planted for i in words])
    in_pool = np.array([vocab[i] in pool for i in words])
    out = {}
    for name, d in signals.items():
        d = d[words]
        out[name] = {"auc_vs_all": round(float(roc_auc_score(is_planted, d)), 3),
                     "auc_vs_candidates": round(float(roc_auc_score(is_planted[in_pool], d[in_pool])), 3),
                     "median_planted_rank": 1 + int(np.sum(d > np.median(d[is_planted])))}
    return out


def _kappas(resource, public_resource, lo: dict[str, float], pool: set[str]) -> dict:
    from benchmark.metrics.interpretation import statistic
    from benchmark.models.text import load_word_model
    from benchmark.tracks.idc import IdcTrack

    track = IdcTrack()
    hidden = "hidden" in resource.params
    inst = track._instances(resource, "test", None, drop="inert_cnn" if hidden else None)
    model = load_word_model(resource.root / "model" / resource.params["models"]["cnn"], "cnn")
    docs = inst.inputs
    pred = model.predict(docs).argmax(1)
    occlusion = []
    for d, c in zip(docs, pred):
        p = model.predict([d] + [d[:k] + d[k + 1:] for k in range(len(d))])[:, c]
        occlusion.append((p[0] - p[1:]).astype(np.float32))
    prior = [np.array([max(0.0, lo.get(w, 0.0) * (1 if c == 1 else -1)) for w in d], np.float32)
             for d, c in zip(docs, pred)]
    pub = public_resource.table("test", columns=["id", "gt"]).to_pydict()
    published = dict(zip(pub["id"], pub["gt"]))
    switch = [np.asarray(published[i][: len(d)], np.float32) for i, d in zip(inst.ids, docs)]
    cand = [np.array([float(w in pool) for w in d], np.float32) for d in docs]
    both = [np.where(c > 0, 10.0, p).astype(np.float32) for c, p in zip(cand, prior)]
    out: dict = {"documents": len(docs), "excluded": inst.excluded}
    for name, maps in (("occlusion", occlusion), ("log-odds prior", prior), ("published-gt switch", switch),
                       ("candidates", cand), ("candidates + log-odds prior", both)):
        counts = track.score(maps, inst.truths, list(range(len(docs))))["counts"].sum(0).astype(float)
        out[name] = round(float(statistic(counts, "kappa")), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draw", type=int, default=0)
    args = parser.parse_args()
    from benchmark.models.variants.hidden import Round, build_cached
    from benchmark.resources.store import load_resource
    from generators.idc.hidden import CONSTRUCTION, _public, candidates, plant, planted_words
    from generators.text_trainer import TextTrainConfig, train_text_classifier

    res = load_resource("idc/mr-wga", hub=False)
    rnd = Round("perf", b"tests/perf/hidden_idc.py fixed secret")
    draw = rnd.draw("idc", res.name, res.revision, args.draw)
    scratch = Path(tempfile.mkdtemp(prefix="hidden-idc-"))
    os.environ["XAIBENCH_HOME"] = str(scratch)  # the copy's cache (resources are found by `res.root`)
    print(f"load average before: {os.getloadavg()}")
    t, c = time.perf_counter(), time.process_time()
    root = build_cached(CONSTRUCTION, res, draw)
    print(f"1. one copy: {time.perf_counter() - t:.1f} s wall, {time.process_time() - c:.1f} s CPU; "
          f"load average after: {os.getloadavg()}")
    stats = json.loads((root / "hidden.json").read_text())["stats"]
    print(json.dumps(stats, indent=1))

    pub = _public(res)
    planted = planted_words(res, draw)
    train = pub.splits["train"]
    pool = set(candidates([d.tokens for d in train], [d.label for d in train], [d.tokens for d in pub.splits["test"]],
                          pub.features, len(pub.classes), CONSTRUCTION.config))
    folder = res.root / "model" / "mr-cnn"
    public_cfg = json.loads((folder / "config.json").read_text())
    xy = {s: ([d.tokens for d in pub.splits[s]], [d.label for d in pub.splits[s]]) for s in ("train", "validation")}
    control = scratch / "control-cnn"
    recipe = TextTrainConfig(**{k: v for k, v in public_cfg["recipe"].items()})
    recipe.seed = draw.torch_seed("control")
    train_text_classifier(xy["train"], xy["validation"], control, recipe, name="control",
                          vocab=public_cfg["vocab"], max_len=public_cfg["max_len"])
    planted_train, labels, _ = plant(xy["train"][0], xy["train"][1], planted, draw.rng("plant"),
                                     CONSTRUCTION.config.insert_rate, public_cfg["max_len"])
    tuned = scratch / "fine-tuned-cnn"
    _fine_tune(folder, tuned, (planted_train, labels), seed=1)
    table = _word_table(folder)
    print(f"2. weight diff against the published CNN ({len(planted)} planted words, {len(pool)} candidates, "
          f"{len(public_cfg['vocab']) - 2} words)")
    for name, directory in (("hidden copy (seed, planted)", root / "model" / "mr-cnn"),
                            ("control (other seed, not planted)", control),
                            ("published + 1 epoch on planted data", tuned)):
        diff = _weight_diff(table, _word_table(directory), public_cfg["vocab"], set(planted), pool)
        print(f"  {name}: {json.dumps(diff)}")

    counts = [Counter[str](), Counter[str]()]
    for d in train:
        counts[d.label].update(d.tokens)
    size, n = len(counts[0] | counts[1]), [sum(c.values()) for c in counts]
    lo = {w: math.log((counts[1][w] + 1) / (n[1] + size)) - math.log((counts[0][w] + 1) / (n[0] + size))
          for w in counts[0] | counts[1]}
    print("3. κ (pooled)")
    print(f"  published: {json.dumps(_kappas(res, res, lo, pool))}")
    print(f"  hidden copy: {json.dumps(_kappas(load_resource(res.name, root=root, hub=False), res, lo, pool))}")


if __name__ == "__main__":
    main()
