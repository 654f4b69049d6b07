"""Issue #12: library warnings are handled where they arise, not shown to the user. captum's
IntegratedGradients warned ("Internal batch size cannot be less than the number of input examples")
on every call with more documents than `internal_batch_size` (16 in submission.toml): once per document
in `xaibench agreement`. The explainer now asks captum for the pass size captum would use anyway."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from benchmark.contracts import Batch
from benchmark.submission import get_submission
from tests.test_text_conformance import DOCS, kim_cnn


def _explain_recording(explainer, model, batch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # show every warning, even ones already shown once
        out = explainer.explain(model, batch)
    return out, [f"{w.category.__name__}: {w.message}" for w in caught]


def test_integrated_gradients_on_more_documents_than_its_pass_size_warns_nothing():
    torch.set_num_threads(1)
    model = kim_cnn()
    texts = [d for d in DOCS.values() if d]
    docs = [list(texts[i % len(texts)]) for i in range(20)]
    batch = Batch(ids=[str(i) for i in range(len(docs))], inputs=docs, seed=0)
    sub = get_submission("integrated-gradients")
    ig = sub.instantiate({"internal_batch_size": 4})  # 20 documents > 4
    out, shown = _explain_recording(ig, model, batch)
    assert shown == []
    assert [len(o) for o in out] == [len(d) for d in docs]
    # the same scores as one document at a time (where 4 ≥ 1 never triggered captum's correction)
    for i in (0, 7, 19):
        one, shown_one = _explain_recording(ig, model, Batch(ids=[str(i)], inputs=[docs[i]], seed=0))
        assert shown_one == []
        np.testing.assert_allclose(out[i], one[0], rtol=1e-4, atol=1e-6)


def test_integrated_gradients_on_images_warns_nothing():
    from benchmark.models.architectures import AixiCNN

    torch.manual_seed(0)
    module = AixiCNN(size=32).eval()

    class Model:  # the image-model surface IG uses: the torch module and the explained output
        modality = "image"

        def __init__(self, m):
            self.module = m

        def predict(self, x):
            with torch.no_grad():
                return self.module(torch.as_tensor(np.asarray(x, np.float32))[:, None]).numpy()

        def target(self, x):
            return np.zeros(len(x), dtype=np.int64)

    images = np.random.default_rng(0).random((6, 32, 32), dtype=np.float32)
    ig = get_submission("integrated-gradients").instantiate({"internal_batch_size": 2, "n_steps": 8})
    out, shown = _explain_recording(ig, Model(module), Batch(ids=[str(i) for i in range(6)], inputs=images))
    assert shown == [] and len(out) == 6 and out[0].shape == (32, 32)
