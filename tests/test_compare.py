"""The parent's comparisons pass right values and fail wrong ones."""
import numpy as np
import pytest

from grader.cases.registry import Case
from grader.checks import check, topo_problem
from grader.compare import compare_close


def _case(**kw):
    return Case(name="forward_x", question="forward", fn="m.f", description="d", **kw)


@pytest.mark.parametrize("actual", [
    np.array([1.0, 2.0]) * (1 + 1e-7),
    [np.array([1.0, 2.0])][0].astype(np.float32),
])
def test_close_values_pass(actual):
    assert compare_close(_case(), np.array([1.0, 2.0]), actual).passed


@pytest.mark.parametrize("actual, fragment", [
    (np.array([1.0, 2.001]), "wrong values"),
    (np.array([1.0, 2.0, 3.0]), "wrong shape"),
    (np.array([[1.0, 2.0]]), "wrong shape"),
    (np.array([1, 2]), "wrong dtype"),
    (np.array([1.0, np.nan]), "non-finite"),
    ([1.0, 2.0], "expected an array"),
    (3.0, "expected an array"),
])
def test_wrong_values_fail_with_reason(actual, fragment):
    verdict = compare_close(_case(), np.array([1.0, 2.0]), actual)
    assert not verdict.passed and fragment in verdict.message


def test_exact_dtype_and_hidden_feedback():
    case = _case(exact_dtype=True, hidden=True)
    verdict = compare_close(case, np.zeros(3, np.float32), np.zeros(3, np.float64))
    assert not verdict.passed and "float64" in verdict.message
    verdict = compare_close(case, np.array([1.5, 2.5]), np.array([1.5, 9.0]))
    assert not verdict.passed and "expected 2.5" not in verdict.message and "2.5" not in verdict.message


def test_structure_mismatches():
    assert not compare_close(_case(), [np.zeros(2), np.zeros(2)], [np.zeros(2)]).passed
    assert not compare_close(_case(), {"a": 1.0}, {"b": 1.0}).passed
    assert not compare_close(_case(), 1.0, True).passed
    assert compare_close(_case(), np.array(2.0), 2.0).passed  # 0-d as a plain number


def test_topo_feedback_names_the_property():
    inputs = [[], [0], [1], [0, 2]]
    want = [0, 1, 2, 3]
    assert "twice" in topo_problem(want, inputs, [0, 1, 1, 2, 3], False)
    assert "before its input" in topo_problem(want, inputs, [1, 0, 2, 3], False)
    assert "missing" in topo_problem(want, inputs, [0, 1, 3], False)
    case = _case(check="topo")
    expected = {"order": want, "inputs": inputs}
    assert check(case, expected, {"order": want, "inputs": inputs}).passed
    assert not check(case, expected, {"order": [3, 2, 1, 0], "inputs": inputs}).passed


def test_norms_and_test_error_checks_fail_on_wrong_weights():
    rng = np.random.RandomState(0)
    W1, W2 = rng.randn(784, 10).astype(np.float32), rng.randn(10, 10).astype(np.float32)
    norms = _case(check="norms", rtol=1e-3)
    assert check(norms, [W1, W2], [W1 * (1 + 1e-5), W2]).passed
    assert not check(norms, [W1, W2], [W1 * 1.01, W2]).passed
    err = _case(check="test_error", threshold=0.07)
    verdict = check(err, None, [W1, W2])  # random weights: about 90% error
    assert not verdict.passed and "test error" in verdict.message
