"""The metric board (issue #39): GT-free metrics (benchmark.gtfree) and their agreement with ground truth
(leaderboard.metric_board) — constructed cases where a metric must agree and must not, failure codes,
the statistics against scipy, Quantus equivalences we rely on, and the command end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from scipy.stats import kendalltau, spearmanr

from benchmark.gtfree import GtFreeMetric, Scored, get_metric, metrics_for
from benchmark.models.variants.randomise import randomised
from benchmark.models.base import TextModel
from leaderboard.metric_board import _Cells, _row, spearman_columns, tau_b, verdict


# -- a model whose ground truth is known: a bag-of-words logistic classifier ---------------------------

class BagOfWords(TextModel):
    """p(y | x) = softmax(Σ_t W[t]): token t's exact contribution to class j's logit is W[t, j]."""

    def __init__(self, vocab: list[str], seed: int = 0) -> None:
        super().__init__("bag-of-words", "binary", n_outputs=2)
        torch.manual_seed(seed)
        self.vocab = {w: i for i, w in enumerate(vocab)}
        self.module = torch.nn.EmbeddingBag(len(vocab), 2, mode="sum")

    def _predict(self, inputs):
        rows = [torch.tensor([self.vocab[t] for t in doc], dtype=torch.long) for doc in inputs]
        offsets = torch.tensor([0] + [len(r) for r in rows[:-1]]).cumsum(0)
        flat = torch.cat(rows) if rows else torch.zeros(0, dtype=torch.long)
        with torch.no_grad():
            return torch.softmax(self.module(flat, offsets), dim=1).numpy().astype(np.float32)

    def truth(self, doc: list[str], j: int) -> np.ndarray:
        w = self.module.weight.detach().numpy()
        return np.array([w[self.vocab[t], j] - w[self.vocab[t], 1 - j] for t in doc])


@pytest.fixture(scope="module")
def text_case():
    rng = np.random.default_rng(0)
    # a large vocabulary: with few word types, a re-drawn model's weights correlate with the trained ones by
    # chance over the words that occur, and a metric on it can still rank the maps the same way
    vocab = [f"w{i}" for i in range(1000)]
    model = BagOfWords(vocab)
    docs = [[vocab[k] for k in rng.integers(0, 1000, size=int(rng.integers(12, 30)))] for _ in range(32)]
    targets = model.target(docs)
    truth = [model.truth(d, int(j)) for d, j in zip(docs, targets)]
    maps = {"truth": truth,
            "noisy": [t + rng.normal(0, 1.0 * np.std(t), t.shape) for t in truth],
            "random": [rng.normal(size=t.shape) for t in truth],
            "inverse": [-t for t in truth]}
    return model, docs, targets, maps


def _scores(metric, model, docs, targets, maps):
    return {name: metric(model, docs, m, targets).values for name, m in maps.items()}


def _oriented_mean(metric, values):
    return float(np.nanmean(values)) * (1 if metric.direction == "higher" else -1)


@pytest.mark.parametrize("name", ["comprehensiveness", "sufficiency", "deletion-aopc", "insertion-auc"])
def test_the_ground_truth_map_ranks_first_under_every_text_faithfulness_metric(text_case, name):
    model, docs, targets, maps = text_case
    metric = get_metric(name)
    scores = _scores(metric, model, docs, targets, maps)
    means = {k: _oriented_mean(metric, v) for k, v in scores.items()}
    assert max(means, key=means.get) == "truth", means
    assert min(means, key=means.get) == "inverse", means


def _gt(maps, truth):
    """The constructed ground-truth score: cosine similarity of each map with the exact contributions."""
    return np.stack([[float(np.dot(m, t) / (np.linalg.norm(m) * np.linalg.norm(t) + 1e-12))
                      for m, t in zip(maps[k], truth)] for k in maps])


@pytest.mark.parametrize("name", ["comprehensiveness", "sufficiency", "deletion-aopc", "insertion-auc"])
def test_a_metric_on_the_randomised_model_does_not_agree(text_case, name):
    model, docs, targets, maps = text_case
    gt = _gt(maps, maps["truth"])
    metric = get_metric(name)
    shuffled = randomised(model)
    assert not np.allclose(shuffled.module.weight.detach().numpy(), model.module.weight.detach().numpy())
    rows = {}
    sign = 1 if metric.direction == "higher" else -1
    for label, m in (("model", model), ("randomised", shuffled)):
        v = sign * np.stack([metric(m, docs, maps[k], targets).values for k in maps])
        rows[label] = _row("t/b", metric.name, "metric", "", metric.direction, _Cells(list(maps), v, gt, {}))
    assert rows["model"].verdict == "agrees" and rows["model"].tau == pytest.approx(1.0)
    assert rows["randomised"].verdict != "agrees", rows["randomised"]
    assert rows["randomised"].tau is None or rows["randomised"].tau < rows["model"].tau


def test_a_random_metric_cannot_tell():
    rng = np.random.default_rng(3)
    g = rng.normal(size=(6, 40)) + np.arange(6)[:, None]
    row = _row("t/b", "random-metric", "control", "", "higher", _Cells([str(i) for i in range(6)],
                                                                        rng.uniform(size=g.shape), g, {}))
    assert row.verdict == "cannot tell" and row.tau_ci[0] < 0 < row.tau_ci[1]


def test_too_few_cells_cannot_tell_and_say_why():
    g = np.ones((2, 3))
    row = _row("t/b", "m", "metric", "", "higher", _Cells(["a", "b"], g, g, {"nan": 4}))
    assert row.verdict == "cannot tell" and "2 explainers × 3 instances" in row.why and row.failures == {"nan": 4}


# -- statistics against scipy --------------------------------------------------------------------------

def test_tau_b_is_scipys_with_ties():
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 4, size=(50, 7)).astype(float), rng.integers(0, 3, size=(50, 7)).astype(float)
    ours = tau_b(x, y)
    for k in range(50):
        ref = kendalltau(x[k], y[k]).statistic
        assert (np.isnan(ours[k]) and np.isnan(ref)) or ours[k] == pytest.approx(ref, abs=1e-12)


def test_spearman_columns_is_scipys():
    rng = np.random.default_rng(2)
    m, g = rng.integers(0, 5, size=(6, 30)).astype(float), rng.normal(size=(6, 30))
    ours = spearman_columns(m, g)
    ref = [spearmanr(m[:, k], g[:, k]).statistic for k in range(30)]
    np.testing.assert_allclose(ours, ref, atol=1e-12)


def test_verdicts():
    assert verdict((0.1, 0.5)) == "agrees" and verdict((-0.5, -0.1)) == "disagrees"
    assert verdict((-0.1, 0.5)) == "cannot tell" and verdict(None) == "cannot tell"


# -- failure codes -------------------------------------------------------------------------------------

def test_bad_maps_and_broken_metrics_give_coded_cells(text_case):
    model, docs, targets, maps = text_case
    comp = get_metric("comprehensiveness")
    bad = [maps["truth"][0], np.zeros(len(docs[1])), np.arange(3.0), maps["truth"][3]]
    got = comp(model, docs[:4], bad, targets[:4])
    assert got.codes == ["", "constant-map", "shape", ""] and np.isnan(got.values[1:3]).all()

    def broken(*a, **k):
        raise RuntimeError("boom")

    def nan(model, inputs, maps, targets, **k):
        return Scored(np.full(len(maps), np.nan), [""] * len(maps))

    for fn, code in ((broken, "error"), (nan, "nan")):
        m = GtFreeMetric("x", "text", "", "higher", fn)
        assert m(model, docs[:2], maps["truth"][:2], targets[:2]).codes == [code, code]
    road = get_metric("road")
    regressor = BagOfWords(["a"])
    regressor.task = "regression"
    assert road(regressor, [np.zeros((4, 4))], [np.eye(4)], np.zeros(1)).codes == ["unsupported-task"]


# -- Quantus: what the image metrics rely on ------------------------------------------------------------

class _Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 16 * 16, 2)

    def forward(self, x):
        return torch.softmax(self.fc(torch.relu(self.conv(x)).flatten(1)), dim=1)


def test_infidelity_with_black_patches_is_deterministic_so_one_sample_is_quantus_ten():
    import quantus

    from benchmark.models.base import ImageModel

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(3, 1, 16, 16)).astype(np.float32)
    a = rng.normal(size=(3, 1, 16, 16)).astype(np.float32)
    model = ImageModel(_Tiny(), "tiny", "binary", n_outputs=2)
    y = model.target(x[:, 0])
    ours = get_metric("infidelity")(model, list(x[:, 0]), list(a[:, 0]), y, patch_size=4).values
    ten = quantus.Infidelity(perturb_patch_sizes=[4], n_perturb_samples=10, perturb_baseline="black",
                             disable_warnings=True)(model=model.module.eval(), x_batch=x, y_batch=y, a_batch=a,
                                                    channel_first=True, device="cpu", softmax=False)
    np.testing.assert_allclose(ours, np.asarray(ten, dtype=np.float64), rtol=1e-4)


# -- images: a linear model, whose exact contributions are W ⊙ x ----------------------------------------

class _Linear(torch.nn.Module):
    def __init__(self, side: int, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.fc = torch.nn.Linear(side * side, 1, bias=False)
        torch.nn.init.normal_(self.fc.weight)

    def forward(self, x):
        return self.fc(x.flatten(1))


@pytest.fixture(scope="module")
def image_case():
    """16 images on a 64×64 linear model, each drawn in its own 16×16 block (so that a re-drawn model's chance
    likeness to the trained one differs per image: under the null the control's interval then covers 0 in
    95 % of draws, as for any 95 % interval; with shared pixels one draw of the model would bias every image)."""
    from benchmark.models.base import ImageModel

    rng = np.random.default_rng(0)
    model = ImageModel(_Linear(64), "linear", "regression")
    x = np.zeros((16, 64, 64), dtype=np.float32)
    for k in range(16):
        r, c = divmod(k, 4)
        x[k, 16 * r : 16 * r + 16, 16 * c : 16 * c + 16] = rng.uniform(0.5, 1.0, size=(16, 16))
    w = model.module.fc.weight.detach().numpy().reshape(64, 64)
    truth = [w * xi for xi in x]
    maps = {"truth": truth,
            "noisy": [t + rng.normal(0, 1.0 * t.std(), t.shape).astype(np.float32) * (xi > 0)
                      for t, xi in zip(truth, x)],
            "random": [rng.normal(size=t.shape).astype(np.float32) * (xi > 0) for t, xi in zip(truth, x)],
            "inverse": [-t for t in truth]}
    return model, list(x), np.zeros(len(x), dtype=np.int64), maps


IMAGE_PARAMS = {"faithfulness-correlation": {"subset_size": 256}, "pixel-flipping": {"features_in_step": 16},
                "region-perturbation": {"patch_size": 4, "regions": 32}, "infidelity": {"patch_size": 8}}


@pytest.mark.parametrize("name", sorted(IMAGE_PARAMS))
def test_the_exact_map_ranks_first_under_every_image_faithfulness_metric(image_case, name):
    model, x, y, maps = image_case
    metric = get_metric(name)
    means = {k: _oriented_mean(metric, metric(model, x, m, y, **IMAGE_PARAMS[name]).values) for k, m in maps.items()}
    assert max(means, key=means.get) == "truth" and min(means, key=means.get) == "inverse", means


@pytest.mark.parametrize("name", sorted(IMAGE_PARAMS))
def test_an_image_metric_on_the_randomised_model_does_not_agree(image_case, name):
    model, x, y, maps = image_case
    metric = get_metric(name)
    sign = 1 if metric.direction == "higher" else -1
    gt = _gt({k: [m.ravel() for m in v] for k, v in maps.items()}, [m.ravel() for m in maps["truth"]])
    rows = {}
    for label, m in (("model", model), ("randomised", randomised(model))):
        v = sign * np.stack([metric(m, x, maps[k], y, **IMAGE_PARAMS[name]).values for k in maps])
        rows[label] = _row("t/b", name, "metric", "", metric.direction, _Cells(list(maps), v, gt, {}))
    assert rows["model"].verdict == "agrees", rows["model"]
    assert rows["randomised"].verdict != "agrees", rows["randomised"]


def test_every_registered_metric_names_its_reference_and_direction():
    for modality in ("image", "text"):
        for m in metrics_for(modality):
            assert m.reference and "20" in m.reference and m.direction in ("higher", "lower"), m.name


# -- the command, end to end on real results -----------------------------------------------------------

def test_metrics_board_command_computes_resumes_and_reports(site_results, aixi_home, tmp_path, monkeypatch):
    """On real Results (the site's: occlusion, random, uniform on the AIXI function model, 6 images, plus a
    tampered result and results whose cache is gone): cells are coded, the board says what it rests on,
    a second run recomputes nothing."""
    from typer.testing import CliRunner

    from benchmark.cli import load_plugins

    app = load_plugins()
    results, _made = site_results
    home = tmp_path / "home"
    home.mkdir()
    for d in ("resources", "cache", "keys"):  # the session's resources, outputs and signing key
        (home / d).symlink_to(aixi_home / d)
    monkeypatch.setenv("XAIBENCH_HOME", str(home))
    args = ["metrics-board", "--track", "aixi", "--resource", "aixi/shape-ssin", "--model", "function",
            "--results", str(results), "--metrics", "pixel-flipping,sparseness", "--format", "json"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "its output cache" in first.stderr  # the result whose cache is gone is named, not scored
    out = json.loads(first.stdout[first.stdout.index("{"):])
    rows = {r["metric"]: r for r in out["boards"] if r["board"] == "aixi/shape-ssin/function"}
    flip = rows["pixel-flipping"]
    assert flip["failures"] == {"constant-map": 6}  # uniform's map is constant on every image
    assert sorted(flip["explainers"]) == ["occlusion", "random"] and flip["n_instances"] == 6
    assert flip["verdict"] == "cannot tell" and "2 explainers × 6 instances" in flip["why"]
    assert rows["pixel-flipping@randomised-model"]["role"] == "control" and "random-metric" in rows
    assert rows["sparseness"]["model_blind"] and "sparseness@randomised-model" not in rows
    files = sorted((home / "metric-board").rglob("*.json"))
    assert [f.name for f in files] == ["occlusion.json", "random.json", "uniform.json"]
    stamps = [f.stat().st_mtime_ns for f in files]
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0 and [f.stat().st_mtime_ns for f in files] == stamps  # nothing recomputed
    # MetaQuantus's scores, where a board has them (benchmark.gtfree.meta), stand beside the metric's agreement
    from benchmark.gtfree.meta import FILENAME, FORMAT

    meta_file = home / "metric-board" / "aixi" / "aixi__shape-ssin" / "function" / FILENAME
    meta_file.write_text(json.dumps({"key": {"format": FORMAT}, "metrics": {"pixel-flipping": {
        "mc": 0.6, "noise_resilience": 0.5, "adversarial_reactivity": 0.7}}}))
    shown = CliRunner().invoke(app, [*args[:-2], "--no-compute", "--format", "csv"])
    assert shown.exit_code == 0, shown.output
    flip_row = next(line for line in shown.stdout.splitlines() if ",pixel-flipping,metric," in line)
    assert flip_row.endswith(",0.600,0.500,0.700")
    # the site gains the metric board page and its picture, linked from the overview
    from leaderboard.site import build_site

    report = build_site(tmp_path / "site", results, figures=False)
    assert "metrics.html" in report.pages and "img/metric-board.png" in report.images
    page = (tmp_path / "site" / "metrics.html").read_text()
    assert "aixi/shape-ssin/function" in page and "random-metric" in page
    assert 'href="metrics.html"' in (tmp_path / "site" / "index.html").read_text()
