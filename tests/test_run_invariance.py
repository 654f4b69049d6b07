"""Numbers that do not depend on how a run was made (issue: run invariance).

* Through the runner (sandboxed worker, cache, scoring): on AIXI-Shape and AIXI-Color with the
  function model, every built-in explainer that runs on it gives identical metrics at batch sizes 1
  and 16. (Before the function model was told the explained instance, lime-exhaustive's KL differed
  by 10 %, lime-image's by 24 %.)
* Every (model, built-in explainer) pair: outputs at batch sizes 1, 7 and 16 agree to float
  tolerance — image models: a white-box CNN and the function model; text models: a Kim CNN and a
  HAN — on 16 instances, called the way the worker calls them (`run_explainer`).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmark.check import TEXTS, draw_images
from benchmark.contracts import Batch
from benchmark.models.aixi_function import FunctionModel, Reference, get_function
from benchmark.models.architectures import AixiCNN
from benchmark.models.base import ImageModel
from benchmark.models.text import KimCNN, WordAttention, WordModel, build_vocab
from benchmark.runner import evaluate
from benchmark.submission import discover
from benchmark.isolation.worker import run_explainer

EXPLAINERS = {n: s for n, s in discover().items() if s.kind == "explainer"}
BLACK_BOX_IMAGE = sorted(n for n, s in EXPLAINERS.items() if "image" in s.modalities and not s.needs_gradients)


@pytest.mark.parametrize("resource", ["aixi/shape-ssin", "aixi/color-ssin"])
@pytest.mark.parametrize("name", BLACK_BOX_IMAGE)
def test_function_model_metrics_do_not_depend_on_batch_size(home, tmp_path, resource, name):
    runs = [evaluate(name, track="aixi", resource=resource, model="function", limit=16, batch_size=bs,
                     results_dir=tmp_path / str(bs), overwrite=True) for bs in (1, 16)]
    a, b = runs
    assert a.n_failed == b.n_failed == 0
    for metric in a.metrics:
        assert a.metrics[metric].mean == b.metrics[metric].mean, (metric, a.metrics[metric], b.metrics[metric])
    assert a.integrity["outputs_sha256"] == b.integrity["outputs_sha256"]  # the very same outputs


# -- every (model, explainer) pair at batch sizes 1, 7, 16 ----------------------------------------


def image_models():
    images, objects, patterns = draw_images()
    ids = [f"img-{k:02d}" for k in range(len(images))]
    with torch.random.fork_rng():
        torch.manual_seed(0)
        cnn = ImageModel(AixiCNN(size=images.shape[1]), name="cnn", task="regression", gradcam_layer="conv2")
    refs = {i: Reference(images[n], objects[n], patterns[n]) for n, i in enumerate(ids)}
    function = FunctionModel(get_function("ssin"), "shape", refs)
    return ids, images, objects, {"cnn": cnn, "function": function}


def text_models():
    docs = [t.split() for t in TEXTS]
    vocab = build_vocab(docs)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        cnn = WordModel(KimCNN(len(vocab), max_len=16, embed_dim=16, filters=6), vocab, name="kim-cnn")
        han = WordModel(WordAttention(len(vocab), embed_dim=16, hidden=8), vocab, name="han")
    return [f"doc-{k:02d}" for k in range(len(docs))], docs, {"kim-cnn": cnn, "han": han}


IMAGE, TEXT = image_models(), text_models()
PAIRS = ([(n, m) for n in sorted(EXPLAINERS) if "image" in EXPLAINERS[n].modalities for m in IMAGE[3]]
         + [(n, m) for n in sorted(EXPLAINERS) if "text" in EXPLAINERS[n].modalities for m in TEXT[2]])


def explain(name, model, ids, inputs, segments, batch_size):
    explainer = EXPLAINERS[name].instantiate()
    out = []
    for s in range(0, len(ids), batch_size):
        sl = slice(s, s + batch_size)
        b = Batch(ids=ids[sl], inputs=inputs[sl], segments=None if segments is None else segments[sl], seed=3)
        out += run_explainer(explainer, model, b, per_instance=isinstance(model, FunctionModel))
    return out


@pytest.mark.parametrize("name,model_name", PAIRS)
def test_every_pair_is_batch_invariant(name, model_name, one_torch_thread):
    sub = EXPLAINERS[name]
    if model_name in IMAGE[3]:
        ids, inputs, segments, models = IMAGE
    else:
        (ids, inputs, models), segments = TEXT, None
    model = models[model_name]
    why = sub.supports(model.modality, model.white_box, segments is not None)
    if why is None:
        refuse = getattr(sub.instantiate(), "unsupported", None)
        why = refuse(model) if callable(refuse) else None
    if why:
        pytest.skip(why)
    runs = {bs: explain(name, model, ids, inputs, segments, bs) for bs in (16, 7, 1)}
    for k, ref in enumerate(runs[16]):
        assert isinstance(ref, np.ndarray), f"{name} failed on {ids[k]}: {ref}"
        scale = float(np.abs(ref).max()) + 1e-12
        for bs in (7, 1):
            np.testing.assert_allclose(runs[bs][k], ref, rtol=1e-3, atol=1e-4 * scale,
                                       err_msg=f"{name} on {model_name}: batch {bs} differs for {ids[k]}")


def test_a_partial_run_never_replaces_a_full_one(home, tmp_path):
    """--limit after a full run: the full Result file is untouched, the partial one is kept beside it
    under its own coverage, and the board ranks the full split."""
    from benchmark.store.results import load_results
    from leaderboard.boards import boards

    full = evaluate("uniform", track="aixi", resource="aixi/shape-ssin", model="function", results_dir=tmp_path)
    (full_path,) = list(tmp_path.rglob("*.json"))
    before = full_path.read_bytes()
    assert full.coverage["complete"] and full_path.name == "uniform.json"
    part = evaluate("uniform", track="aixi", resource="aixi/shape-ssin", model="function", limit=10,
                    results_dir=tmp_path)
    assert full_path.read_bytes() == before
    assert not part.coverage["complete"] and part.coverage["n"] == 10
    paths = sorted(p.name for p in tmp_path.rglob("*.json"))
    assert paths == ["uniform.json", f"uniform@10-{part.coverage['ids_sha256'][:8]}.json"]
    results, problems = load_results(tmp_path)
    (board,) = boards(results)
    assert not problems and [r.n_instances for r in board.rows] == [full.n_instances]
