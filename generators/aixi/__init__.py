"""Builders of the `aixi` resources (SPECS §3): drawn images, their ground-truth maps, the CNN trained on them.

`draw` (the shapes and their maps), `build` (a resource), `train` (the AIXI CNN), `experiments` (the paper's).
"""
