"""Captum `Occlusion` on `model.predict` (black box: the CNN or the function model).

Each pixel's score is the mean drop of the target output over the windows that cover it. All instances
of a batch are occluded together: one predict call carries `perturbations_per_eval` window positions
× B instances. Pixels no window covers (when (H − window) is not a multiple of the stride) score 0.

Text (word-level models): leave-one-out. Word p's score is p_t(x) − p_t(x with word p removed), the
drop of the target class probability (`model.predict`, `model.target`), where `text_removal` = "pad"
puts the padding token (`pad_token`; the models map it to the padding embedding) at position p and
"delete" drops the word from the list (SPECS §4.5 deletion). The unperturbed documents and all their
perturbations, for the whole batch, go to `model.predict` together, `text_batch_size` documents per
call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from submissions.common import blackbox_forward, image_tensor, targets, to_maps
from submissions.text_common import (PAD_TOKEN, delete_positions, documents, explain_nonempty, is_text,
                                     predict_in_chunks, replace_positions, text_targets)

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from benchmark.contracts import Attributions, Batch
    from benchmark.models.base import Model

TEXT_REMOVALS = ("pad", "delete")


class OcclusionExplainer:
    """Occlusion: the drop of the target output when a window of pixels (text: one word) is hidden.

    Zeiler & Fergus 2014, Visualizing and Understanding Convolutional Networks, ECCV,
    https://arxiv.org/abs/1311.2901 (captum's `Occlusion` on the black-box `model.predict`; text:
    leave-one-out, p_target(x) − p_target(x without word p)).

    Args:
        window (int, optional): side of the square occluding window (pixels). Default: 16
        stride (int, optional): step between window positions (pixels). Default: 8
        baseline (float, optional): value of the occluded pixels. Default: 0.0
        perturbations_per_eval (int, optional): window positions per predict call (× the batch's
            instances). Default: 64
        text_removal (str, optional): "pad" = put `pad_token` at the word (length kept); "delete" = drop
            it from the list. Default: "pad"
        pad_token (str, optional): the token the word-level models map to the padding embedding.
            Default: "<pad>"
        text_batch_size (int, optional): perturbed documents per `model.predict` call (0 = one call).
            Default: 4096
    """

    def __init__(self, window: int = 16, stride: int = 8, baseline: float = 0.0,
                 perturbations_per_eval: int = 64, text_removal: str = "pad", pad_token: str = PAD_TOKEN,
                 text_batch_size: int = 4096) -> None:
        if window < 1 or stride < 1:
            raise ValueError(f"window and stride must be ≥ 1, got {window}, {stride}")
        if text_removal not in TEXT_REMOVALS:
            raise ValueError(f"text_removal must be one of {TEXT_REMOVALS}, got {text_removal!r}")
        self.window = int(window)
        self.stride = int(stride)
        self.baseline = float(baseline)
        self.perturbations_per_eval = max(1, int(perturbations_per_eval))
        self.text_removal = text_removal
        self.pad_token = str(pad_token)
        self.text_batch_size = int(text_batch_size)

    def explain(self, model: Model, batch: Batch) -> Attributions:
        """One (H, W) map per image (mean drop over the covering windows), or one drop per word."""
        from captum.attr import Occlusion

        if is_text(model):
            return self._explain_text(model, batch)
        if len(batch) == 0:
            return []
        inputs = np.asarray(batch.inputs, dtype=np.float32)
        x = image_tensor(inputs)
        w = min(self.window, x.shape[-2], x.shape[-1])
        attr = Occlusion(blackbox_forward(model)).attribute(
            x, sliding_window_shapes=(1, w, w), strides=(1, self.stride, self.stride), baselines=self.baseline,
            target=targets(model, inputs), perturbations_per_eval=self.perturbations_per_eval,
        )
        return to_maps(attr)

    def _perturb(self, doc: list[str], p: int) -> list[str]:
        keep = [q != p for q in range(len(doc))]
        if self.text_removal == "delete":
            return delete_positions(doc, keep)
        return replace_positions(doc, keep, self.pad_token)

    def _explain_text(self, model, batch) -> list[np.ndarray]:
        docs = documents(batch)

        def run(idx: list[int]) -> list[np.ndarray]:
            sub = [docs[i] for i in idx]
            target = text_targets(model, sub)
            perturbed = [d for doc in sub for d in [doc] + [self._perturb(doc, p) for p in range(len(doc))]]
            probs = predict_in_chunks(model, perturbed, self.text_batch_size)
            scores, start = [], 0
            for doc, t in zip(sub, target):
                block = probs[start : start + len(doc) + 1, t]
                start += len(doc) + 1
                scores.append(block[0] - block[1:])
            return scores

        return explain_nonempty(docs, run)
