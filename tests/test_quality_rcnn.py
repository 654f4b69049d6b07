"""Issue #12, aroma and palate: the RCNN can start from another aspect's trained model (`init_from`, the
warm-start path) and ramp its selection costs in (`sparsity_warmup`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from benchmark.models.rcnn import RCNNRationale
from generators.rcnn.data import BeerData, Reviews
from generators.rcnn.train import RCNNTrainConfig, batch_costs, pad, to_ids, train_rcnn, warm_start
from tests.test_rcnn_model import _toy_data, _toy_vectors

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _as_aroma(data: BeerData) -> BeerData:
    """The toy reviews with the key word's rating moved to the aroma column (index 1)."""
    def move(r: Reviews) -> Reviews:
        return Reviews(r.ids, r.tokens, r.scores[:, [1, 0, 2, 3, 4]].copy(), {"kept": len(r.ids)})
    return BeerData("aroma", move(data.train), move(data.dev), None, {"source": "toy-aroma"})


def test_warm_start_copies_generator_and_encoder_and_training_starts_there(tmp_path):
    data = _toy_data()
    vectors = _toy_vectors(data)
    src = tmp_path / "appearance"
    train_rcnn(data, src, RCNNTrainConfig(hidden=8, batch_size=32, max_epochs=2), vectors=vectors)
    saved = load_file(str(src / "model.safetensors"))

    torch.manual_seed(123)
    fresh = RCNNRationale(len(saved["embedding.weight"]), 16, 8, 2, 2, 0.1, 0.5)
    assert warm_start(fresh, src) == {"copied": len(saved) - 1}  # everything but the embedding
    for name, t in fresh.state_dict().items():
        if not name.startswith("embedding."):
            assert torch.equal(t, saved[name]), name

    # a run that starts from the appearance model with a negligible learning rate ends (one epoch) where
    # it started; from its own random initialisation it would not
    aroma = _as_aroma(data)
    out = tmp_path / "aroma"
    res = train_rcnn(aroma, out, RCNNTrainConfig(aspect="aroma", hidden=8, batch_size=32, max_epochs=1, lr=1e-9,
                                                 init_from=str(src)), vectors=vectors)
    assert res["aspect"] == "aroma"
    trained = load_file(str(out / "model.safetensors"))
    for name in saved:
        if not name.startswith("embedding."):
            np.testing.assert_allclose(trained[name].numpy(), saved[name].numpy(), atol=1e-6, err_msg=name)
    assert json.loads((out / "config.json").read_text())["recipe"]["init_from"] == str(src)

    # a model of another shape is refused with the reason
    with pytest.raises(ValueError, match="does not fit"):
        warm_start(RCNNRationale(len(saved["embedding.weight"]), 16, 4, 2, 2, 0.1, 0.5), src)
    with pytest.raises(ValueError, match="no model.safetensors"):
        warm_start(fresh, tmp_path / "nowhere")


def test_sparsity_warmup_ramps_the_selection_costs():
    cfg = RCNNTrainConfig(sparsity_warmup=3)
    assert [cfg.cost_factor(e) for e in range(5)] == [0.25, 0.5, 0.75, 1.0, 1.0]
    assert RCNNTrainConfig().cost_factor(0) == 1.0
    data = _toy_data(n_train=16, n_dev=4)
    vocab, matrix = _toy_vectors(data).vocab_and_matrix()
    module = RCNNRationale(len(vocab), matrix.shape[1], 8, 2, 2, 0.0, 0.5)
    ids, mask = pad(to_ids(data.train.tokens, vocab), list(range(16)))
    y = torch.from_numpy(data.train.target(0))
    full = batch_costs(module, ids, mask, y, cfg, torch.Generator().manual_seed(0))
    none = batch_costs(module, ids, mask, y, cfg, z=full["z"], cost_factor=0.0)
    half = batch_costs(module, ids, mask, y, cfg, z=full["z"], cost_factor=0.5)
    assert torch.allclose(none["omega"], full["loss_vec"].detach())
    sel = cfg.lambda_s * full["zsum"] + cfg.lambda_c * full["zdiff"]
    assert torch.allclose(half["omega"], full["loss_vec"].detach() + 0.5 * sel)
    assert float(sel.sum()) > 0  # the check is not vacuous: something was selected


def test_encoder_warmup_trains_the_encoder_alone_and_never_keeps_a_warmup_epoch(tmp_path):
    """`encoder_warmup=N`: in the first N epochs the generator's weights do not move while the encoder's do,
    no warm-up epoch is the kept model, and the sparsity ramp starts after the warm-up."""
    cfg = RCNNTrainConfig(encoder_warmup=2, sparsity_warmup=1)
    assert [cfg.cost_factor(e) for e in range(4)] == [0.5, 0.5, 0.5, 1.0]  # epochs 0, 1 are the encoder's
    data = _toy_data()
    vectors = _toy_vectors(data)
    torch.manual_seed(0)
    init = tmp_path / "init"
    train_rcnn(data, init, RCNNTrainConfig(hidden=8, batch_size=32, max_epochs=1, lr=1e-12), vectors=vectors)
    start = load_file(str(init / "model.safetensors"))
    out = tmp_path / "warm"
    res = train_rcnn(data, out, RCNNTrainConfig(hidden=8, batch_size=32, max_epochs=2, encoder_warmup=2,
                                                init_from=str(init)), vectors=vectors)
    after = load_file(str(out / "model.safetensors"))  # max_epochs = warm-up: no epoch kept, the start stays
    gen = [n for n in after if n.startswith("gen_")]
    enc = [n for n in after if n.startswith("enc_")]
    assert gen and enc
    for n in gen:
        assert torch.equal(after[n], start[n]), n
    assert res["best_epoch"] == 0
    history = json.loads((out / "config.json").read_text())["history"]
    assert len(history) == 2
    # the encoder itself did learn during the warm-up (checkpoint of the last epoch, not the kept model)
    res3 = train_rcnn(data, tmp_path / "warm3", RCNNTrainConfig(hidden=8, batch_size=32, max_epochs=3,
                                                               encoder_warmup=2, init_from=str(init)), vectors=vectors)
    assert res3["best_epoch"] == 3
    moved = load_file(str(tmp_path / "warm3" / "model.safetensors"))
    assert any(not torch.equal(moved[n], start[n]) for n in enc)


def test_decorrelate_keeps_the_reviews_the_other_ratings_predict_worst():
    """`decorrelate`: on the mirror's file the kept share's aroma rating correlates less with taste than the
    whole file's; the kept reviews are those with the largest least-squares residuals, in file order."""
    from generators.rcnn.build import RCNNBuildConfig, decorrelated
    from generators.rcnn.data import mirror_dir, read_reviews

    folder = mirror_dir()
    if folder is None or not (folder / "reviews.aspect0.heldout.txt.gz").exists():
        pytest.skip("data mirror beer_advocate_lei2016/ absent")
    reviews = read_reviews(folder / "reviews.aspect0.heldout.txt.gz", limit=2000)
    kept = decorrelated(reviews, "aroma", 0.3)
    assert len(kept) == 600
    full, sub = np.corrcoef(np.asarray(reviews.scores).T), np.corrcoef(np.asarray(kept.scores).T)
    assert sub[1, 3] < full[1, 3] - 0.15  # aroma vs taste
    index = {r: i for i, r in enumerate(reviews.ids)}
    positions = [index[r] for r in kept.ids]
    assert positions == sorted(positions)
    s = np.asarray(reviews.scores, dtype=np.float64)
    design = np.column_stack([np.delete(s, 1, axis=1), np.ones(len(s))])
    resid = np.abs(s[:, 1] - design @ np.linalg.lstsq(design, s[:, 1], rcond=None)[0])
    assert resid[positions].min() >= np.sort(resid)[-600] - 1e-12
    with pytest.raises(ValueError, match="decorrelate"):
        RCNNBuildConfig(aspect="aroma", decorrelate=1.5)
    with pytest.raises(ValueError, match="not both"):
        RCNNBuildConfig(aspect="aroma", decorrelate=0.3, decorrelate_max_corr=0.3)


def test_decorrelate_to_a_correlation_keeps_the_most_reviews_that_reach_it():
    """`max_corr`: the longest prefix of the residual order at which the aspect correlates with no other
    rating by more than the bound — checked against np.corrcoef on the kept reviews and one more."""
    from generators.rcnn.build import decorrelated, prefix_correlations

    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 3000)
    scores = np.clip(np.column_stack([base + rng.normal(0, s, 3000) for s in (0.3, 0.25, 0.15, 0.05, 0.2)]), 0, 1)
    reviews = Reviews([f"r{i}" for i in range(3000)], [["w"]] * 3000, scores.astype(np.float32), {"kept": 3000})
    full = np.abs(np.corrcoef(scores.T)[1])
    assert np.delete(full, 1).max() > 0.6  # aroma follows the others closely
    kept = decorrelated(reviews, "aroma", max_corr=0.3)
    sub = np.asarray(kept.scores, dtype=np.float64)
    assert 100 <= len(kept) < 3000 and np.abs(np.delete(np.corrcoef(sub.T)[1], 1)).max() <= 0.3
    # one more review of the residual order would break the bound (or the prefix is the minimum size)
    order = np.argsort(-np.abs(scores[:, 1] - np.column_stack([np.delete(scores, 1, 1), np.ones(3000)])
                               @ np.linalg.lstsq(np.column_stack([np.delete(scores, 1, 1), np.ones(3000)]),
                                                 scores[:, 1], rcond=None)[0]), kind="stable")
    r = prefix_correlations(scores, 1, order)
    np.testing.assert_allclose(r[len(kept) - 1], np.corrcoef(scores[order[:len(kept)]].T)[1], atol=1e-9)
    assert np.abs(np.delete(r[len(kept)], 1)).max() > 0.3 or len(kept) == 100
    with pytest.raises(ValueError, match="exactly one"):
        decorrelated(reviews, "aroma")
    # a bound no prefix of at least `min_size` reviews reaches: the `min_size` least predictable ones
    assert len(decorrelated(reviews, "aroma", max_corr=0.01)) == 100


def test_decorrelated_build_trains_on_the_subset_and_verifies_the_rest(tmp_path):
    """With one review file and `decorrelate_max_corr`, training + dev = the decorrelated reviews and the
    pool = the file's other reviews (disjoint, together the file); the card records r before / after."""
    from generators.rcnn.build import RCNNBuildConfig, load_splits
    from tests.test_rcnn_track import write_lei_folder

    folder = write_lei_folder(tmp_path / "beer", n=400)
    cfg = RCNNBuildConfig(aspect="aroma", decorrelate=0.5)
    beer, pool, info = load_splits(cfg, folder)
    fit = set(beer.train.ids) | set(beer.dev.ids)
    assert len(fit) == round(0.5 * 398) and not fit & set(pool.ids) and len(fit) + len(pool) == 398
    d = info["decorrelation"]
    assert d["kept"] == len(fit) and d["of"] == 398 and set(d["r_before"]) == {"appearance", "palate", "taste",
                                                                                   "overall"}
    assert "decorrelated for aroma" in info["split"] and "pool = the file's other reviews" in info["split"]
    _, pool_all, _ = load_splits(RCNNBuildConfig(aspect="aroma", decorrelate=0.5, pool="all"), folder)
    assert len(pool_all) == 398
    # aroma from the appearance file: decorrelated to Lei's level by default; decorrelate=1.0 = every review
    # (the seeded 40 % pool, the rest for training); appearance is never decorrelated by default
    from generators.rcnn.build import DECORRELATE_MAX_CORR
    _, _, info = load_splits(RCNNBuildConfig(aspect="aroma"), folder)
    assert info["decorrelation"]["max_corr"] == DECORRELATE_MAX_CORR
    beer, pool, info = load_splits(RCNNBuildConfig(aspect="aroma", decorrelate=1.0), folder)
    assert "decorrelation" not in info and len(pool) == round(0.4 * 398)
    assert "decorrelation" not in load_splits(RCNNBuildConfig(), folder)[2]


# -- issue #29: a recipe that selects what Lei's model selects ------------------------------------------


def test_sparsity_target_cost_and_batch_baseline_by_hand():
    """`sparsity_target` α: Ω = ℓ + λ_s |Σz − α|x|| + λ_c Σ|Δz|; `baseline="batch"`: the generator's
    REINFORCE weight is Ω minus its batch mean (the encoder's cost is unchanged)."""
    from benchmark.models.rcnn import generator_log_prob
    from tests.test_rcnn_model import VOCAB, random_docs, random_rcnn

    m = random_rcnn()
    ids, mask = pad(to_ids(random_docs(3, seed=6, lo=4, hi=7), VOCAB), [0, 1, 2])
    y = torch.tensor([0.2, 0.9, 0.5])
    z = torch.zeros_like(mask)
    z[:, :2] = True
    z &= mask
    lengths = mask.sum(1).float()
    for target, baseline in ((0.25, "none"), (0.25, "batch"), (None, "batch")):
        cfg = RCNNTrainConfig(hidden=8, sparsity_target=target, baseline=baseline)
        c = batch_costs(m, ids, mask, y, cfg, z=z)
        loss = (m.encode(m.embedding(ids), z)[:, 0] - y) ** 2
        sparse = (2 - target * lengths).abs() if target is not None else torch.full((3,), 2.0)
        omega = (loss + 3e-4 * sparse + 6e-4 * 1).detach()
        torch.testing.assert_close(c["omega"], omega)
        weight = omega - omega.mean() if baseline == "batch" else omega
        logp = generator_log_prob(m.logits(m.embedding(ids), mask), z, mask)
        l2g = sum((q ** 2).sum() for q in m.generator_parameters())
        torch.testing.assert_close(c["cost_g"], 10 * (weight * logp).mean() + 1e-6 * l2g, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="sparsity_target"):
        RCNNTrainConfig(sparsity_target=1.5)
    with pytest.raises(ValueError, match="baseline"):
        RCNNTrainConfig(baseline="moving")


def test_keep_band_orders_epochs_and_holds_patience():
    """`keep_band`: any epoch in the band beats any outside it, the best criterion among them; outside, the
    nearer one; patience does not run out before an epoch reached the band."""
    cfg = RCNNTrainConfig(keep_band=(0.10, 0.13), patience=2)
    ep = lambda rate, obj: {"selection_rate": rate, "objective": obj, "mse": obj}  # noqa: E731
    assert cfg.epoch_key(ep(0.12, 0.05)) < cfg.epoch_key(ep(0.02, 0.01))  # in band beats a better objective
    assert cfg.epoch_key(ep(0.11, 0.03)) < cfg.epoch_key(ep(0.12, 0.04))
    assert cfg.epoch_key(ep(0.15, 0.09)) < cfg.epoch_key(ep(0.05, 0.01))  # 0.02 from the band vs 0.05
    assert RCNNTrainConfig().epoch_key(ep(0.5, 0.03)) == (0.0, 0.03)  # Lei: the criterion only
    out = {"epoch": 9, "best_epoch": 1, "best": {"key": [0.08, 0.1]}}
    assert not cfg.patience_over(out)  # never in the band yet: keep training
    assert cfg.patience_over({**out, "best": {"key": [0.0, 0.1]}})
    assert not cfg.patience_over({**out, "best_epoch": 8, "best": {"key": [0.0, 0.1]}})
    with pytest.raises(ValueError, match="keep_band"):
        RCNNTrainConfig(keep_band=(0.2, 0.1))


def test_training_keeps_the_epoch_the_band_rule_names(tmp_path):
    """On real (toy) training the kept epoch is the argmin of `epoch_key` over the recorded history."""
    data = _toy_data()
    cfg = RCNNTrainConfig(hidden=8, batch_size=32, max_epochs=4, sparsity_target=0.3, keep_band=(0.2, 0.6))
    res = train_rcnn(data, tmp_path / "b", cfg, vectors=_toy_vectors(data))
    history = json.loads((tmp_path / "b" / "config.json").read_text())["history"]
    keys = [cfg.epoch_key({"selection_rate": h["dev_selection_rate"], "objective": h["dev_objective"],
                           "mse": h["dev_mse"]}) for h in history]
    assert res["best_epoch"] == 1 + min(range(len(keys)), key=lambda i: (keys[i], i))
    assert res["kept_in_band"] == (keys[res["best_epoch"] - 1][0] == 0.0)
    # `min_epoch`: the same run never keeps its first epochs
    late = train_rcnn(data, tmp_path / "late", RCNNTrainConfig(**{**cfg.__dict__, "min_epoch": 3}),
                      vectors=_toy_vectors(data))
    assert late["best_epoch"] == 1 + min(range(3, len(keys)), key=lambda i: (keys[i], i))


def test_leakage_is_the_partial_correlation_with_the_other_ratings():
    """`leakage`: the mean over the other ratings of r(ŷ, y_k | y_a) — equal to the correlation of the
    residuals of ŷ and y_k after regressing each on y_a; ≈ 0 for a prediction made of y_a alone, large for
    one that follows taste."""
    from generators.rcnn.train import leakage

    rng = np.random.default_rng(0)
    base = rng.normal(size=2000)
    ratings = np.column_stack([base + rng.normal(0, s, 2000) for s in (1.0, 0.5, 0.6, 0.3, 0.4)])
    own = ratings[:, 0] + rng.normal(0, 0.2, 2000)
    taste = 0.5 * ratings[:, 0] + ratings[:, 3]

    def resid(v):
        a = np.column_stack([ratings[:, 0], np.ones(2000)])
        return v - a @ np.linalg.lstsq(a, v, rcond=None)[0]

    for pred in (own, taste):
        direct = np.mean([np.corrcoef(resid(pred), resid(ratings[:, k]))[0, 1] for k in (1, 2, 3, 4)])
        assert leakage(pred, ratings, 0) == pytest.approx(direct, abs=1e-9)
    assert abs(leakage(own, ratings, 0)) < 0.05 and leakage(taste, ratings, 0) > 0.5
    assert np.isnan(leakage(np.zeros(2000), ratings, 0))  # a constant prediction: undefined
