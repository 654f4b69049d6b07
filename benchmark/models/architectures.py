"""Registry of model architectures the harness can rebuild from a resource's `model/` folder."""

from __future__ import annotations

import torch
from torch import nn

from benchmark.registry import Registry

ARCHITECTURES: Registry[type[nn.Module]] = Registry("architecture")


class EmbeddingForward(nn.Module):
    """A text classifier whose forward can start at the embedding layer (what the text wrappers of
    `benchmark.models.text` explain): `forward_embedded(emb (N, L, D), mask) -> logits (N, C)`; the
    mask's shape is the wrapper's (`mask(tokens)`: (N, L) bool for word models)."""

    def forward_embedded(self, emb: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The logits (N, C) of input embeddings `emb` under `mask` (True = a position of the document)."""
        raise NotImplementedError


class WordClassifier(EmbeddingForward):
    """A word-level text classifier: one `embedding` row per vocabulary word (row 0 = padding, the zero
    vector; row 1 = unknown word) and `forward(ids (N, L)) = forward_embedded(embedding(ids), ids != 0)`."""

    embedding: nn.Embedding
    # True when `forward_ids` on this float32 module is already batch-free (the Kim CNN's vocabulary tables):
    # `predict` then calls it there; otherwise on the float64 copy (`benchmark.models.exact`)
    forward_ids_batch_free = False

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """The logits (N, C) of word ids (N, L); id 0 is padding."""
        return self.forward_embedded(self.embedding(ids), ids != 0)

    def forward_ids(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The logits (N, C) of word ids (N, L) under the word mask (N, L) in eval mode: `forward_embedded(
        embedding(ids), mask)`. Architectures override it with a faster evaluation of the same function."""
        return self.forward_embedded(self.embedding(ids), mask)


@ARCHITECTURES.decorator("aixi-cnn")
class AixiCNN(nn.Module):
    """The AIXI authors' CNN (SPECS §3.5; miquelmn/aixi@1cfdfea `aixi_dataset/models/aixi.py`).

    conv3×3(25, same) → ReLU → maxpool2 → conv3×3(50, same) → ReLU → maxpool2 → flatten →
    linear 25 → dropout .5 → ReLU → linear 15 → dropout .5 → ReLU → linear 1 (+ sigmoid for Class).
    The unused batch-norm layers of the original file are omitted. `dropout` is the head's dropout rate
    (the authors' 0.5 by default; a training-recipe choice [I], inactive when the model is explained).
    """

    gradcam_layer = "conv2"

    def __init__(self, size: int = 128, classification: bool = False, dropout: float = 0.5) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 25, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(25, 50, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.fc1 = nn.Linear((size // 4) ** 2 * 50, 25)
        self.drop1 = nn.Dropout(dropout)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(25, 15)
        self.drop2 = nn.Dropout(dropout)
        self.relu4 = nn.ReLU()
        self.fc3 = nn.Linear(15, 1)
        self.classification = classification
        self.out = nn.Sigmoid() if classification else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Images (N, 1, size, size) in [0, 1] → outputs (N, 1)."""
        x = self.pool1(self.relu1(self.conv1(x)))
        x = self.pool2(self.relu2(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = self.relu3(self.drop1(self.fc1(x)))
        x = self.relu4(self.drop2(self.fc2(x)))
        return self.out(self.fc3(x))

    @torch.no_grad()
    def forward_eval(self, x: torch.Tensor) -> torch.Tensor:
        """`forward(x)` in eval mode, the same values by a faster route (what `predict` calls on the float64
        copy): each max-pool is the maximum of the four strided sub-grids (exact; torch's float64
        `max_pool2d` is ≈ 15× slower here) taken before the ReLU (max and ReLU commute exactly), and images
        go through in chunks whose first activation stays under 16 MB (below the allocator's mmap
        threshold, `benchmark.isolation.allocator`)."""
        per_image = self.conv1.out_channels * x.shape[-2] * x.shape[-1] * x.element_size()
        step = max(1, (16 << 20) // max(1, per_image))
        out = []
        for s in range(0, len(x), step):
            h = torch.relu(_max_pool2(self.conv1(x[s:s + step])))
            h = torch.relu(_max_pool2(self.conv2(h)))
            h = torch.relu(self.drop1(self.fc1(torch.flatten(h, 1))))
            h = torch.relu(self.drop2(self.fc2(h)))
            out.append(self.out(self.fc3(h)))
        return torch.cat(out) if out else x.new_zeros(0, 1)


def _max_pool2(x: torch.Tensor) -> torch.Tensor:
    """`max_pool2d(x, 2)` of (N, C, H, W) (odd edges dropped, as it does): the elementwise maximum of the
    four sub-grids x[.., i::2, j::2] — the same values (max is exact, NaN propagates alike)."""
    h, w = x.shape[-2] // 2 * 2, x.shape[-1] // 2 * 2
    x = x[..., :h, :w]
    rows = torch.maximum(x[..., 0::2, :], x[..., 1::2, :])
    return torch.maximum(rows[..., 0::2], rows[..., 1::2])
