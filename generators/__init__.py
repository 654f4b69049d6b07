"""Builders of ground truth: one package per track, what their text models share, the demo and publishing.

`aixi/`, `idc/`, `rcnn/`, `robustness/`, `trust/` build each track's resources and never import each
other; what several of them need lives below them: `corpora/` (the real text corpora and the transformer
model under test), `text_trainer` (the word-level classifiers) and `lexicon` (GloVe, WordNet). `cli`
registers the commands, `demo` runs every track end to end, `publish` puts resources on the Hub.
"""
