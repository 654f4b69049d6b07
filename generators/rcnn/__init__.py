"""Builders of the `rcnn` resources (SPECS §4): the rationale model and its verified zero contributions.

BeerAdvocate loaders (`data`), word vectors (`vectors`), RCNN rationale-model training (`train`), the
zero-contribution verification (`verify`) and the `generate rcnn` command (`cli`)."""
