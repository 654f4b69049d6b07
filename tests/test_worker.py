"""The worker's model wrappers (benchmark.isolation.worker), without starting a worker."""

from __future__ import annotations

import pytest


def test_fixed_targets_answer_for_the_instance_in_focus():
    from benchmark.isolation.worker import FixedTargets

    class Model:
        focused = None

        def focus(self, instance):
            self.focused = instance

    model = FixedTargets(Model(), {"a": 2, "b": 0})
    with pytest.raises(KeyError, match="no instance in focus"):
        model.target([0, 0])
    model.focus("a")
    assert model.target([0, 0, 0]).tolist() == [2, 2, 2] and model.focused == "a"
