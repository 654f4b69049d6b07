"""The AIXI function model served in two parts (issue #47: isolation of a served model at ≤ 1.1×).

The worker runs the part that needs no ground truth — which objects of the instance in focus an image
still shows (`ObjectView`, from the image and object map every explainer is given) — and sends K
booleans per image; the harness keeps the objects' patterns and the function (`predict_visible`).
Checked here:
* the two parts together give the bits `predict` gives on the images, for perturbations that hide
  objects, hide part of an object, repaint the background or change the image's shape (refused alike);
* a worker explaining with the function model sends no image across the channel, and its outputs are
  the in-process explainer's, bit for bit;
* what a hostile worker can send instead: any visibility vector is one some image produces (no answer
  an image could not get), and malformed ones are refused with the reason.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchmark.check import draw_images
from benchmark.contracts import Batch
from benchmark.isolation import Worker, WorkerConfig
from benchmark.isolation.worker import run_explainer
from benchmark.models.aixi_function import FunctionModel, ObjectView, Reference, get_function
from benchmark.models.spec import ModelSpec
from benchmark.submission import get_submission


@pytest.fixture(scope="module")
def served():
    images, objects, patterns = draw_images(n=6)
    ids = [f"img-{k}" for k in range(len(images))]
    model = FunctionModel(get_function("ssin"), "shape",
                          {i: Reference(images[n], objects[n], patterns[n]) for n, i in enumerate(ids)})
    return ids, images, objects, model


def perturbations(image: np.ndarray, objects: np.ndarray, seed: int = 0) -> np.ndarray:
    """Every keep/hide choice of the objects, then a third of each object hidden, then the background
    repainted (which hides nothing)."""
    k = int(objects.max())
    out = [np.where(np.isin(objects, [j + 1 for j in range(k) if not keep[j]]), 0.0, image)
           for keep in itertools.product([True, False], repeat=k)]
    rng = np.random.default_rng(seed)
    part = image.copy()
    for j in range(1, k + 1):
        pixels = np.flatnonzero(objects.ravel() == j)
        part.ravel()[rng.choice(pixels, size=len(pixels) // 3, replace=False)] = 0.0
    out.append(part)
    out.append(np.where(objects == 0, rng.random(image.shape), image))
    return np.asarray(out, dtype=np.float32)


def test_the_two_parts_give_the_bits_predict_gives(served):
    ids, images, objects, model = served
    for i, image, obj in zip(ids, images, objects):
        model.focus(i)
        x = perturbations(image, obj)
        visible = ObjectView(image, obj).visible(x, model.visible_fraction)
        assert visible.dtype == np.bool_ and visible.shape == (len(x), int(obj.max()))
        assert model.predict_visible(visible).tobytes() == model.predict(x).tobytes()
    with pytest.raises(ValueError, match="inputs must be"):
        ObjectView(images[0], objects[0]).visible(np.zeros((2, 5, 5), np.float32), 0.5)


def test_a_worker_sends_which_objects_show_never_the_images(served, monkeypatch):
    ids, images, objects, model = served
    spec = ModelSpec("function", "image", False, served=model, per_instance=True)
    sub = get_submission("lime-exhaustive")
    explainer = sub.instantiate({})
    batch = Batch(ids=ids, inputs=images, segments=objects, seed=0)
    reference = run_explainer(explainer, model, batch, per_instance=True)
    seen: list[set] = []
    original = Worker._serve_predict

    def spy(self, msg, batch_ids):
        seen.append(set(msg))
        return original(self, msg, batch_ids)

    monkeypatch.setattr(Worker, "_serve_predict", spy)
    with Worker(sub, {}, spec, WorkerConfig(sandbox="none")) as worker:
        assert worker.start() is None
        entries = worker.explain(ids, images, objects, 0, [im.shape for im in images], 0)
    assert len(seen) == len(ids) and all("visible" in keys and "inputs" not in keys for keys in seen)
    for e, ref in zip(entries, reference):
        assert e.ok and e.array.tobytes() == np.asarray(ref, dtype=np.float32).tobytes()


def test_any_visibility_a_worker_sends_is_one_an_image_gets(served):
    ids, images, objects, model = served
    i, image, obj = ids[0], images[0], objects[0]
    model.focus(i)
    k = int(obj.max())
    every = np.array(list(itertools.product([False, True], repeat=k)))
    hide = [np.where(np.isin(obj, [j + 1 for j in range(k) if not v[j]]), 0.0, image) for v in every]
    assert model.predict_visible(every).tobytes() == model.predict(np.asarray(hide, np.float32)).tobytes()
    # columns past the instance's objects are ignored; missing ones are objects not shown
    wide = np.concatenate([every, np.ones((len(every), 50), bool)], axis=1)
    assert model.predict_visible(wide).tobytes() == model.predict_visible(every).tobytes()
    narrow = every[:, :1]
    padded = np.concatenate([narrow, np.zeros((len(every), k - 1), bool)], axis=1)
    assert model.predict_visible(narrow).tobytes() == model.predict_visible(padded).tobytes()
    for bad in (every.astype(np.float32), every[0], np.zeros((2, 2, 2), bool)):
        with pytest.raises(ValueError, match="bool array"):
            model.predict_visible(bad)
