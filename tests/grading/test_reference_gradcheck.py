"""The numeric gradient checker (grader/grading/run/gradcheck.py) catches what it must:
a checker that cannot fail would bless a wrong reference gradient."""

import numpy as np
import pytest

from grader.grading.run.gradcheck import (
    COUNT_MISMATCH,
    SHAPE_MISMATCH,
    GradientCheckError,
    check_gradients,
    compare,
    numeric_gradients,
)


def product(a, b):
    return np.sin(a) * b


def product_grads(a, b, out_grad):
    return [np.cos(a) * b * out_grad, np.sin(a) * out_grad]


def inputs():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]


def test_numeric_gradients_of_a_quadratic_are_exact_enough():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    out_grad = np.array([[1.0, 2.0], [-1.0, 0.5]])
    (grad,) = numeric_gradients(lambda a: a * a, [x], out_grad)
    np.testing.assert_allclose(grad, 2 * x * out_grad, rtol=1e-9, atol=1e-9)


def test_numeric_gradients_leave_the_callers_arrays_alone():
    x = np.array([1.0, 2.0, 3.0])
    numeric_gradients(np.exp, [x], np.ones(3))
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def test_a_correct_gradient_passes_with_small_errors():
    checks = check_gradients("product", product, product_grads, inputs())
    assert [c.index for c in checks] == [0, 1]
    assert all(c.ok and c.max_rel_error < 1e-6 for c in checks)
    assert checks[0].shape == (3, 4)


def test_a_gradient_one_tenth_of_a_percent_off_fails_with_a_full_report():
    def slightly_wrong(a, b, out_grad):
        good = product_grads(a, b, out_grad)
        return [good[0], good[1] * 1.001]

    with pytest.raises(GradientCheckError) as info:
        check_gradients("product", product, slightly_wrong, inputs())
    message = str(info.value)
    assert message.startswith("product (input shapes [(3, 4), (3, 4)]): gradient of input 1")
    assert "analytic" in message and "numeric" in message
    assert "max abs error" in message and "max rel error" in message


def test_a_gradient_with_the_wrong_shape_fails():
    with pytest.raises(GradientCheckError) as info:
        check_gradients("sum", lambda a: a.sum(axis=0), lambda a, g: [g], [np.ones((2, 3))])
    assert str(info.value) == SHAPE_MISMATCH.format(op="sum", index=0, got=(3,), want=(2, 3))


def test_a_missing_gradient_fails():
    with pytest.raises(GradientCheckError) as info:
        check_gradients("product", product, lambda a, b, g: [g], inputs())
    assert str(info.value) == COUNT_MISMATCH.format(op="product", got=1, want=2)


def test_nan_never_passes():
    check = compare(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), 0)
    assert not check.ok


def test_compare_reports_the_worst_element():
    check = compare(np.array([1.0, 2.5, 3.0]), np.array([1.0, 2.0, 3.0]), 0)
    assert not check.ok
    assert check.where == (1,) and check.analytic == 2.5 and check.numeric == 2.0
    assert check.max_abs_error == pytest.approx(0.5) and check.max_rel_error == pytest.approx(0.25)
