"""The parent's comparisons pass right values and fail wrong ones."""

import numpy as np
import pytest

from grader import DATA
from grader.shipped.cases import read_test_set
from grader.shipped.cases.registry import Case
from grader.shipped.checks import check, topo_problem
from grader.shipped.compare import compare_close, compare_dtypes


def mnist_test_set():
    return read_test_set(DATA)


def _case(**kw):
    return Case(name="forward_x", question="forward", contract="negate", description="d", fn=lambda ndl, sm: None, **kw)


@pytest.mark.parametrize(
    "actual",
    [
        np.array([1.0, 2.0]) * (1 + 1e-7),
        np.array([1.0, 2.0], dtype=np.float32),  # float width never matters, as in the course
        np.array([1, 2]),  # nor the kind, when the values are right
    ],
)
def test_close_values_pass(actual):
    assert compare_close(_case(), np.array([1.0, 2.0]), actual).passed


@pytest.mark.parametrize(
    "expected, actual",
    [
        (np.array(2.0), 2.0),  # 0-d given as a plain number
        (np.array(2.0), np.array([2.0])),  # 0-d and one-element arrays compare as scalars
        (np.array([2.0]), np.array(2.0)),
        (2.0, np.array([2.0], dtype=np.float32)),  # a number given as a one-element array
    ],
)
def test_scalars_compare_like_assert_allclose(expected, actual):
    assert compare_close(_case(), expected, actual).passed


def test_scalar_like_values_still_fail_when_wrong():
    assert not compare_close(_case(), np.array(2.0), np.array([2.5])).passed
    assert not compare_close(_case(), np.array(2.0), np.array([2.0, 2.0])).passed


@pytest.mark.parametrize(
    "actual, fragment",
    [
        (np.array([1.0, 2.001]), "wrong values"),
        (np.array([1.0, 2.0, 3.0]), "wrong shape"),
        (np.array([[1.0, 2.0]]), "wrong shape"),
        (np.array([1.0 + 0j, 2.0]), "expected numbers"),
        (np.array([1.0, np.nan]), "non-finite"),
        ([1.0, 2.0], "expected an array"),
        (3.0, "wrong shape"),
    ],
)
def test_wrong_values_fail_with_reason(actual, fragment):
    verdict = compare_close(_case(), np.array([1.0, 2.0]), actual)
    assert not verdict.passed and fragment in verdict.message


def test_dtype_check_sees_float_width_and_structure():
    case = _case(check="dtype")
    assert compare_dtypes(case, [np.zeros(3, np.float32)], [np.zeros(3, np.float32)]).passed
    verdict = compare_dtypes(case, [np.zeros(3, np.float32)], [np.zeros(3, np.float64)])
    assert not verdict.passed and "float64" in verdict.message and "float32" in verdict.message
    assert not compare_dtypes(case, [np.zeros(3, np.float32)], [np.zeros(3, np.int64)]).passed
    assert not compare_dtypes(case, [np.zeros(2)], 3.0).passed
    assert not check(case, {"a": np.zeros(2)}, {"b": np.zeros(2)}).passed


def test_hidden_feedback_shows_no_expected_value():
    case = _case(hidden=True)
    verdict = compare_close(case, np.array([1.5, 2.5]), np.array([1.5, 9.0]))
    assert not verdict.passed and "2.5" not in verdict.message
    verdict = compare_close(case, np.zeros((2, 7)), np.zeros((3, 7)))
    assert not verdict.passed and "(2, 7)" not in verdict.message


def test_hidden_feedback_has_no_magnitudes_counts_or_positions():
    verdict = compare_close(_case(hidden=True), np.array([1.5, 2.5, 3.5]), np.array([1.5, 9.0, 3.5]))
    assert not verdict.passed and "wrong values" in verdict.message
    for leak in ("6.5", "1 of 3", "index", "max abs"):
        assert leak not in verdict.message


def test_drawn_inputs_show_the_error_but_not_the_answer():
    expected, actual = np.array([1.5, 2.5, 3.5]), np.array([1.5, 9.0, 3.5])
    public = compare_close(_case(), expected, actual)
    drawn = compare_close(_case(), expected, actual, drawn=True)
    assert "expected 2.5" in public.message and "got 9" in public.message
    assert "2.5" not in drawn.message and "got 9" in drawn.message and "1 of 3" in drawn.message


def test_hidden_topo_feedback_names_the_property_only():
    inputs, want = [[], [0], [1], [0, 2]], [0, 1, 2, 3]
    for order, kind in (([0, 1, 1, 2, 3], "twice"), ([1, 0, 2, 3], "before one of its inputs"), ([0, 1, 3], "missing")):
        message = topo_problem(want, inputs, order, "hidden")
        assert kind in message and not any(ch.isdigit() for ch in message), message
    for order, kind in (([1, 0, 2], "not the post-order"),):  # two leaves, then their sum
        message = topo_problem([0, 1, 2], [[], [], [0, 1]], order, "hidden")
        assert kind in message and not any(ch.isdigit() for ch in message), message


def test_exact_gradients_refuse_central_differences_in_float64():
    """A float64 gradient must match to 1e-13 of its scale: central
    differences of the forward (what patched case code could send) miss."""
    rng = np.random.RandomState(3)
    x, g = rng.randn(3, 4), rng.randn(3, 4)
    analytic = g * np.exp(x)
    h = 1e-5
    numeric = g * (np.exp(x + h) - np.exp(x - h)) / (2 * h)
    case = _case(exact=1e-13)
    assert compare_close(case, analytic, g * np.exp(x) * (1 + 1e-16)).passed
    assert compare_close(case, analytic, np.exp(x) * g).passed  # another operation order
    assert not compare_close(case, analytic, numeric).passed
    assert compare_close(_case(), analytic, numeric).passed  # the usual tolerance would pass it
    assert compare_close(case, analytic, numeric.astype(np.float32)).passed  # float32: the usual tolerance


def test_structure_mismatches():
    assert not compare_close(_case(), [np.zeros(2), np.zeros(2)], [np.zeros(2)]).passed
    assert not compare_close(_case(), {"a": 1.0}, {"b": 1.0}).passed
    assert not compare_close(_case(), 1.0, True).passed
    assert compare_close(_case(), np.array(2.0), 2.0).passed  # 0-d as a plain number


def test_topo_feedback_names_the_property():
    inputs = [[], [0], [1], [0, 2]]
    want = [0, 1, 2, 3]
    assert "twice" in topo_problem(want, inputs, [0, 1, 1, 2, 3])
    assert "before its input" in topo_problem(want, inputs, [1, 0, 2, 3])
    assert "missing" in topo_problem(want, inputs, [0, 1, 3])
    case = _case(check="topo")
    expected = {"order": want, "inputs": inputs}
    assert check(case, expected, {"order": want, "inputs": inputs}).passed
    assert not check(case, expected, {"order": [3, 2, 1, 0], "inputs": inputs}).passed


def test_weights_and_test_error_checks_fail_on_wrong_weights():
    rng = np.random.RandomState(0)
    W1, W2 = rng.randn(784, 10).astype(np.float32), rng.randn(10, 10).astype(np.float32)
    weights = _case(check="weights", rtol=1e-2)
    drift = (W1 + 0.005 * rng.randn(*W1.shape) * np.abs(W1).mean()).astype(np.float32)  # 0.5% of the norm
    assert check(weights, [W1, W2], [drift, W2]).passed
    assert check(weights, [W1, W2], [W1, W2.astype(np.float64)]).passed
    assert not check(weights, [W1, W2], [W1 * 1.02, W2]).passed
    # the same norms, other weights: what a forger rescaling any learning run would send
    permuted = rng.permutation(W1.ravel()).reshape(W1.shape)
    assert abs(np.linalg.norm(permuted) - np.linalg.norm(W1)) < 1e-3
    assert not check(weights, [W1, W2], [permuted, W2]).passed
    err = _case(check="test_error", threshold=0.07)
    verdict = check(err, [W1, W2], [W1, W2], mnist_test_set)  # random weights: about 90% error
    assert not verdict.passed and "test error" in verdict.message
    # weights from another start (an earlier run's, the handout's) never reach the test set
    other = [rng.randn(784, 10).astype(np.float32), rng.randn(10, 10).astype(np.float32)]
    verdict = check(err, [W1, W2], other, lambda: pytest.fail("the test set was read"))
    assert not verdict.passed and "not trained from the given starting weights" in verdict.message


@pytest.mark.parametrize(
    "actual",
    [
        [np.zeros((784, 10), np.float32), np.array(1.5, np.float32)],  # the 0-d loss returned as W2
        [np.zeros((784, 100000), np.float32), np.zeros((100000, 10))],  # shapes that would allocate GBs
        [np.zeros((784, 10), complex), np.zeros((10, 10))],
        [np.zeros((784, 10))],
        "W1",
        [np.full((784, 10), 1e300), np.zeros((10, 10))],  # float64, diverged past float32's range
    ],
)
def test_test_error_refuses_unexpected_weights_before_any_arithmetic(actual):
    W1, W2 = np.zeros((784, 10), np.float32), np.zeros((10, 10), np.float32)
    verdict = check(_case(check="test_error", threshold=0.07), [W1, W2], actual, mnist_test_set)
    assert not verdict.passed


@pytest.mark.parametrize("check_kind", ["close", "weights", "analytic", "topo", "dtype"])
@pytest.mark.parametrize(
    "actual",
    [
        np.array(1.0),
        10**30,
        float("nan"),
        float("inf"),
        True,
        [],
        {},
        [[[[]]]],
        {"analytic": np.zeros((2, 2)), "order": [10**30]},
        [np.zeros((2, 2))] * 4000,
    ],
)
def test_hostile_values_fail_their_case_never_the_parent(check_kind, actual):
    expected = {
        "close": [np.zeros((2, 2)), np.zeros(3)],
        "weights": [np.zeros((2, 2)), np.ones(3)],
        "analytic": {"analytic": [np.zeros((2, 2))], "numeric": [np.zeros((2, 2))]},
        "topo": {"order": [0, 1], "inputs": [[], [0]]},
        "dtype": [np.zeros((2, 2))],
    }[check_kind]
    verdict = check(_case(check=check_kind), expected, actual)
    assert not verdict.passed and verdict.message
