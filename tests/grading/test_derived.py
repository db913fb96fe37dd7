"""A first-order gradient earns points only when its op's second-order case
shows it is a needle expression (grading/derived.py)."""

import numpy as np

from grader.grading.run import derived
from grader.shipped.cases import CASES

REFERENCE = [[np.array([[0.5, -1.0]]), np.array([2.0, 0.0])]]


def test_every_scored_first_order_gradient_has_second_order_evidence():
    pairs = derived.evidence(CASES)
    first = [c.name for c in CASES if c.call is not None and c.call.kind == "grad1" and not c.advisory]
    assert first and sorted(pairs) == sorted(first)
    by_name = {c.name: c for c in CASES}
    for name, evidence in pairs.items():
        assert evidence and all(by_name[e].call.op == by_name[name].call.op for e in evidence)


def test_a_gradient_autodiff_sees_as_a_constant_is_caught_and_a_wrong_one_is_not():
    zeros = [[np.zeros((1, 2)), np.zeros(2)]]
    assert derived.constant(REFERENCE, zeros)
    assert derived.constant(REFERENCE, [[np.full((1, 2), 1e-12), np.zeros(2)]])  # x - x rounding
    assert not derived.constant(REFERENCE, [[np.array([[0.5, 1.0]]), np.zeros(2)]])  # wrong, not constant
    assert not derived.constant([[np.zeros((1, 2)), np.zeros(2)]], zeros)  # nothing to tell (a linear op's zero)
    assert not derived.constant(REFERENCE, [[np.zeros((1, 2))]])  # another structure: its own case says so


def test_unearned_names_the_second_order_case():
    pairs = {"backward_log": ("backward_second_order_log",)}
    assert derived.unearned("backward_log", {"backward_second_order_log": False}, pairs) == ""
    why = derived.unearned("backward_log", {"backward_second_order_log": True}, pairs)
    assert "backward_second_order_log" in why and "constant to autodiff" in why
    assert derived.unearned("backward_negate", {"backward_second_order_log": True}, pairs) == ""
