"""Builders of the `robustness` resources (SPECS §2): MR's models under test attacked through an explainer.

`train` (the models), `counterfit` (the counter-fitted synonym space), `build` (the attacks and the
resource), `policies` (the semi-universal attack), `table4` and `experiments` (the papers' tables), `cli`.
"""
