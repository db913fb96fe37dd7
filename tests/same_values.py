"""Equality of worker values and Outcomes, exact: dtype, shape and type included."""

import numpy as np


def same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def assert_same_outcomes(got: dict, want: dict) -> int:
    """mutant -> {case -> Outcome} equal in both; the number of values compared."""
    assert got.keys() == want.keys()
    compared = 0
    for mutant, cases in want.items():
        assert got[mutant].keys() == cases.keys(), mutant
        for name, one in cases.items():
            other = got[mutant][name]
            assert (other.ok, other.problem, other.error_type) == (one.ok, one.problem, one.error_type), (mutant, name)
            assert same(other.value, one.value), (mutant, name)
            compared += one.value is not None
    return compared
