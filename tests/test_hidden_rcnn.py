"""RCNN hidden copies (issue #50, generators/rcnn/hidden.py) on a tiny resource: Lei-format reviews whose
appearance rating is set by one or two signal words among fillers, an RCNN trained on them with a tiny recipe in a
few seconds, and copies of it: a generator from the draw's seed distilled beside the published encoder (the default)
and, for the drop check, both modules trained by the recipe."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from benchmark.metrics.zero_contribution import N
from benchmark.models.base import read_texts
from benchmark.models.variants.hidden import NoHiddenCopy, Round, copy_folder
from benchmark.models.rcnn import RCNNRationale
from benchmark.models.text import PAD, UNK
from benchmark.resources import load_resource
from benchmark.tracks.rcnn import RcnnTrack
from generators.rcnn.build import RCNNBuildConfig, build_rcnn, quick_train_config
from generators.rcnn.hidden import CONSTRUCTION, HiddenRcnnConfig, RcnnConstruction, draw_veto

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SIGNAL = {"black": 0.0, "dark": 0.2, "hazy": 0.4, "amber": 0.6, "golden": 0.8, "pale": 1.0}
FILLER = [f"f{i}" for i in range(24)]
VOCAB = [PAD, UNK, *SIGNAL, *FILLER]


def write_signal_folder(folder, n: int = 400, seed: int = 0):
    """Lei-format reviews: 4–10 fillers and one or two signal words; the appearance rating is the mean of their
    values (rounded to 0.1), the other four ratings random."""
    rng = np.random.default_rng(seed)
    words = list(SIGNAL)
    lines = []
    for _ in range(n):
        doc = [str(w) for w in rng.choice(FILLER, rng.integers(4, 11))]
        keys = [str(w) for w in rng.choice(words, rng.integers(1, 3), replace=False)]
        for k in keys:
            doc.insert(int(rng.integers(len(doc) + 1)), k)
        ratings = [round(float(np.mean([SIGNAL[k] for k in keys])), 1), *(rng.integers(0, 11, 4) / 10)]
        lines.append(" ".join(f"{r:.1f}" for r in ratings) + "\t" + " ".join(doc))
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / "reviews.aspect0.heldout.txt.gz", "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    # unit-scale random word vectors in Lei's text format (word2vec on 400 short reviews leaves them near 0)
    vectors = rng.normal(size=(len(VOCAB) - 2, 8))
    (folder / "vectors.txt").write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in row)}\n"
                                                for w, row in zip(VOCAB[2:], vectors)))
    return folder


# the public recipe (in the published model's config.json), sized for seconds: the encoder learns on every
# token for two epochs first (without it, REINFORCE on 216 reviews collapses to ∅ for some seeds)
TINY = quick_train_config(hidden=8, batch_size=16, lr=0.02, max_epochs=8, patience=8, encoder_warmup=2, min_epoch=0,
                          keep_band=None, select_on="objective", baseline="batch", sparsity_target=0.3, sparsity=3e-3)
SECRET_A, SECRET_B = b"hidden-rcnn-test-secret-A", b"hidden-rcnn-test-secret-B"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """rcnn/beer-appearance built from the signal reviews with the tiny recipe, and three copies of draw 0 of
    round A: through the track (cached in the data home), once more into a folder, and one trained by the public
    recipe (REINFORCE) with the vetoed words only masked (veto_weight 0)."""
    base = tmp_path_factory.mktemp("hidden-rcnn")
    data = write_signal_folder(base / "beer")
    home = base / "home"
    threads = torch.get_num_threads()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XAIBENCH_HOME", str(home))
        torch.set_num_threads(1)
        try:
            build_rcnn("appearance", data, home / "resources" / "rcnn", train_config=TINY, accept_below_target=True,
                       vectors_path=data / "vectors.txt", config=RCNNBuildConfig(pool_fraction=0.4))
            res = load_resource("rcnn/beer-appearance")
            draw = Round("a", SECRET_A).draw("rcnn", res.name, res.revision, 0)
            spec, info, inst, stats = RcnnTrack().hidden_copy(res, "rcnn", draw, "test")
            again = CONSTRUCTION.build(res, draw, base / "again")
            unweighted = RcnnConstruction(replace(CONSTRUCTION.config, generator="recipe", veto_weight=0.0))
            stats0 = unweighted.build(res, draw, base / "w0")
            root = copy_folder(draw, res, CONSTRUCTION.version)
        finally:
            torch.set_num_threads(threads)
    veto = draw_veto(res, draw, VOCAB, CONSTRUCTION.config).words
    return {"home": home, "res": res, "draw": draw, "veto": veto, "spec": spec, "info": info, "inst": inst,
            "stats": stats, "root": root, "again": base / "again", "again_stats": again, "w0": base / "w0",
            "stats0": stats0}


def _digest(root) -> str:
    return hashlib.sha256((root / "model" / "beer-appearance" / "model.safetensors").read_bytes()).hexdigest()


def _table(root):
    return load_resource("rcnn/beer-appearance", root=root, hub=False).table("test").to_pydict()


def _same_tables(a, b) -> bool:
    """Equal splits (Δ_s compared with NaN equal to NaN: it is NaN on N tokens)."""
    same_delta = len(a["delta"]) == len(b["delta"]) and all(
        np.array_equal(np.array(x, float), np.array(y, float), equal_nan=True) for x, y in zip(a["delta"], b["delta"]))
    return same_delta and {k: v for k, v in a.items() if k != "delta"} == {k: v for k, v in b.items() if k != "delta"}


def test_veto_term_masks_and_penalises_vetoed_positions():
    """`batch_costs` with a veto: z = 0 on vetoed positions even when given, those positions leave Σ log p, and the
    generator's cost gains weight · Σ_{t ∈ V} softplus(l_t − l̄) per review (l̄: the mean logit of the review's other
    tokens), batch-averaged — a term whose gradients sum to zero over each review (no pull on the shared bias)."""
    from torch.nn import functional as F

    from generators.rcnn.train import batch_costs, generator_log_prob

    torch.manual_seed(0)
    module = RCNNRationale(len(VOCAB), 8, 8).eval()
    ids = torch.tensor([[2, 3, 4, 5], [6, 2, 7, 0]])
    mask = ids > 0
    veto = torch.tensor([[True, False, False, False], [False, True, False, False]])
    y = torch.tensor([0.2, 0.8])
    cfg = replace(TINY, baseline="none")
    plain = batch_costs(module, ids, mask, y, cfg, z=mask)
    vetoed = batch_costs(module, ids, mask, y, cfg, z=mask, veto=veto, veto_weight=2.0)
    assert not (vetoed["z"] & veto).any() and (vetoed["z"] == (mask & ~veto)).all()
    logits = module.logits(module.embedding(ids), mask)
    assert torch.allclose(vetoed["logpz"], generator_log_prob(logits, mask & ~veto, mask & ~veto))
    expected = torch.stack([F.softplus(logits[0, 0] - logits[0, 1:].mean()),
                            F.softplus(logits[1, 1] - logits[1, [0, 2]].mean())])  # position 3 of review 1: padding
    assert torch.allclose(vetoed["veto"], expected)
    grad = torch.autograd.grad(vetoed["veto"].sum(), module.gen_out.bias)[0]
    assert abs(float(grad)) < 1e-6  # shifting every logit of a review leaves the term unchanged
    # the generator's cost: its REINFORCE part on the masked z, plus 2 · the mean veto cost
    reinforce = cfg.cost_scale * (vetoed["omega"] * vetoed["logpz"]).mean()
    l2 = cfg.l2 * sum((p ** 2).sum() for p in module.generator_parameters())
    assert torch.allclose(vetoed["cost_g"], reinforce + l2 + 2.0 * expected.mean())
    assert "veto" not in plain and not torch.allclose(plain["cost_g"], vetoed["cost_g"])


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_vetoed_words_are_drawn_from_the_published_selection_by_the_secret(built):
    res = built["res"]
    t = res.table("test").to_pydict()
    counts = Counter(w for toks, p in zip(t["tokens"], t["partition"]) for w, x in zip(toks, p) if x != N)
    seen = Counter(w for toks in t["tokens"] for w in toks)
    cfg = CONSTRUCTION.config
    often = [w for w, c in counts.items() if c >= cfg.min_count and c / seen[w] >= cfg.min_rate]
    top = set(sorted(often, key=lambda w: (-counts[w] / seen[w], -counts[w], w))[:cfg.candidates])
    a, b = (Round(n, s).draw("rcnn", res.name, res.revision, 0) for n, s in (("a", SECRET_A), ("b", SECRET_B)))
    va, vb = draw_veto(res, a, VOCAB, cfg), draw_veto(res, b, VOCAB, cfg)
    assert va.words == built["veto"] and va.words != vb.words  # the secret decides the set
    assert draw_veto(res, a, VOCAB, cfg) == va  # and only the secret (and the public resource)
    for v in (va, vb):
        assert v.words <= top and 1 <= len(v.words) <= cfg.max_words
        holds = np.mean([any(w in v.words for w in toks) for toks in t["tokens"]])
        assert v.coverage == pytest.approx(holds) and holds >= cfg.min_coverage


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_the_same_draw_gives_the_same_copy(built):
    assert _digest(built["root"]) == _digest(built["again"])
    assert _same_tables(_table(built["root"]), _table(built["again"]))
    assert _digest(built["root"]) != _digest(built["res"].root)
    drop = ("build_seconds", "train_seconds")
    assert {k: v for k, v in built["stats"].items() if k not in drop} == \
        {k: v for k, v in built["again_stats"].items() if k not in drop}


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_kept_instances_hold_vetoed_tokens_only_as_n(built):
    veto, inst, stats = built["veto"], built["inst"], built["stats"]
    with_veto = 0
    for toks, part in zip(inst.inputs, inst.truths["partition"]):
        marks = [p for w, p in zip(toks, part) if w in veto]
        assert all(p == N for p in marks)
        with_veto += bool(marks)
    # the vetoed words became zero-contribution tokens in many kept reviews; the counts say so
    assert with_veto == stats["veto_instances"] > 10
    assert stats["veto_tokens_n"] == sum(w in veto for toks in inst.inputs for w in toks)
    # the veto is learnt (a penalty), so a trained copy may still select a vetoed token in a review on some CPU: the
    # construction drops that review (counted), which is what keeps the ground truth exact — never a kept one
    assert stats["veto_instances_dropped"] <= stats["veto_tokens_selected"] <= 3
    assert (stats["veto_tokens_selected"] == 0) == (stats["veto_instances_dropped"] == 0)
    assert inst.excluded.get("veto_selected", 0) == stats["veto_instances_dropped"]
    model = built["spec"].load()
    assert not any(z[i] for toks, z in zip(inst.inputs, model.selections(inst.inputs))
                   for i, w in enumerate(toks) if w in veto)


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_reviews_where_the_copy_selects_a_vetoed_word_are_dropped_and_counted(built):
    """The public recipe with veto_weight 0 masks the vetoed words while training but does not push their
    probability down: the copy selects some of them, and those reviews are flagged, dropped by the track and
    counted."""
    veto, st = built["veto"], built["stats0"]
    t = _table(built["w0"])
    selects = [any(w in veto and p != N for w, p in zip(toks, part)) for toks, part in zip(t["tokens"], t["partition"])]
    assert t["veto_selected"] == selects and sum(selects) > 0
    assert st["veto_instances_dropped"] == sum(selects) and st["verified"] == len(selects) - sum(selects)
    assert st["veto_tokens_selected"] == sum(w in veto and p != N for toks, part in zip(t["tokens"], t["partition"])
                                             for w, p in zip(toks, part))
    inst = RcnnTrack().instances(load_resource("rcnn/beer-appearance", root=built["w0"], hub=False), "test")
    assert inst.excluded["veto_selected"] == sum(selects)
    assert inst.ids == [i for i, s in zip(t["id"], selects) if not s]
    limited = RcnnTrack().instances(load_resource("rcnn/beer-appearance", root=built["w0"], hub=False), "test", 3)
    assert limited.ids == inst.ids[:3]  # dropped before the limit applies


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_a_draw_short_of_the_coverage_is_refused_in_one_line(built, tmp_path):
    res, draw = built["res"], built["draw"]
    narrow = RcnnConstruction(HiddenRcnnConfig(min_coverage=1.0, max_words=1))
    with pytest.raises(NoHiddenCopy) as err:
        narrow.build(res, draw, tmp_path / "x")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("hidden copy 0 of rcnn/beer-appearance: 1 vetoed word(s) of ")
    assert "evaluation instances" in msg and "below the 100 % needed" in msg
    assert not any(w in msg for w in VOCAB[2:])  # the words stay secret
    with pytest.raises(NoHiddenCopy, match="selects no word 10000 times or more and in 50 % of its occurrences"):
        draw_veto(res, draw, VOCAB, HiddenRcnnConfig(min_count=10_000))
    assert not (tmp_path / "x" / "model").exists()  # refused before any training


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_the_copys_model_folder_names_neither_the_vetoed_words_nor_the_draw(built):
    draw, folder = built["draw"], built["root"] / "model" / "beer-appearance"
    config = json.loads((folder / "config.json").read_text())
    assert set(config) == {"architecture", "kwargs", "sha256", "name", "aspect", "validation", "task", "n_outputs",
                           "vocab"}
    assert config["vocab"] == VOCAB  # the published vocabulary, in its order
    rest = json.dumps({k: v for k, v in config.items() if k != "vocab"})
    assert not any(f'"{w}"' in rest for w in built["veto"])
    secrets = [draw.material, draw.commitment, str(draw.seed), str(draw.torch_seed("rcnn-init")),
               str(draw.torch_seed("rcnn-batches")), *(str(draw.torch_seed("rcnn-init") + 1),)]
    for f in folder.iterdir():
        data = f.read_bytes()
        assert not any(s.encode() in data for s in secrets), f.name
    pub_texts = built["res"].root / "model" / "beer-appearance" / "texts.parquet"
    assert read_texts(folder / "texts.parquet") == read_texts(pub_texts)  # the same training texts
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "texts.parquet"]
    # the weight diff against the published model: the encoder is the published one exactly, the generator new
    copy, pub = (load_file(str(f / "model.safetensors"))
                 for f in (folder, built["res"].root / "model" / "beer-appearance"))
    assert all(torch.equal(copy[k], pub[k]) for k in pub if k.startswith(("enc_", "embedding.")))
    assert not any(torch.equal(copy[k], pub[k]) for k in pub if k.startswith("gen_"))
    assert not (built["root"] / ".train").exists()


@pytest.mark.slow(reason="the module's fixture trains an RCNN and three hidden copies of it (about 15 s idle)")
def test_the_track_reads_the_copy_with_its_own_ground_truth(built):
    res, inst, info, draw = built["res"], built["inst"], built["info"], built["draw"]
    public = RcnnTrack().instances(res, "test")
    truth = dict(zip(public.ids, public.truths["partition"]))
    common = [(i, p) for i, p in zip(inst.ids, inst.truths["partition"]) if i in truth]
    assert len(inst) > 20 and any(not np.array_equal(p, truth[i]) for i, p in common)
    assert info["hash"] != RcnnTrack().build_model(res, "rcnn", public)[1]["hash"]
    derived = load_resource("rcnn/beer-appearance", root=built["root"], hub=False)
    assert derived.params["hidden"] == {"construction": f"rcnn:{CONSTRUCTION.version}",
                                        "version": CONSTRUCTION.version, "draw": draw.public()}
    assert info["selection"] == derived.stats["selection"]  # the copy's own figures against Lei's targets
    st = built["stats"]
    assert st["veto_words"] == len(built["veto"]) and st["verified"] == len(inst)
    assert st["verified_public"] == len(public) and 0.0 < st["dev_selection_rate"] < 1.0
    assert not any(f'"{w}"' in json.dumps(st) for w in built["veto"])  # counts and rates only
