"""Models under test, as the thin wrappers submissions see (DESIGN §4).

Architectures live here because the harness must rebuild them from a resource's `model/` folder;
their training lives in `generators/`.
"""

from benchmark.models.base import ImageModel, Model, TextModel, load_model, save_model
from benchmark.models.architectures import ARCHITECTURES

__all__ = ["ARCHITECTURES", "ImageModel", "Model", "TextModel", "load_model", "save_model"]
