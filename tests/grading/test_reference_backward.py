"""Every reference gradient against central differences in float64, through
the whole reverse pass (Tensor.backward), then gradients of gradients."""

import numpy as np
import pytest

from grader.grading.run.gradcheck import check_gradients


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def positive(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


def away_from_zero(shape, seed):
    """Normal values pushed at least 0.1 from relu's kink."""
    x = normal(shape, seed)
    return np.sign(x) * (np.abs(x) + 0.1)


def needle_callables(ndl, build):
    """(forward, gradients) on numpy arrays for the needle expression build(*tensors)."""

    def forward(*arrays):
        return build(*[ndl.Tensor(a) for a in arrays]).numpy()

    def gradients(*arrays_and_out_grad):
        *arrays, out_grad = arrays_and_out_grad
        tensors = [ndl.Tensor(a) for a in arrays]
        build(*tensors).backward(ndl.Tensor(out_grad))
        return [t.grad.numpy() for t in tensors]

    return forward, gradients


# name -> (build from needle tensors, inputs)
CASES = {
    "add": (lambda ndl, a, b: ndl.add(a, b), [normal((2, 3), 1), normal((2, 3), 2)]),
    "add_scalar": (lambda ndl, a: ndl.add_scalar(a, 2.0), [normal((3,), 3)]),
    "multiply": (lambda ndl, a, b: ndl.multiply(a, b), [normal((2, 3), 4), normal((2, 3), 5)]),
    "multiply_0d": (lambda ndl, a, b: ndl.multiply(a, b), [normal((), 6), normal((), 7)]),
    "mul_scalar": (lambda ndl, a: ndl.mul_scalar(a, -1.5), [normal((4,), 8)]),
    "power_scalar_3": (lambda ndl, a: ndl.power_scalar(a, 3), [normal((2, 3), 9)]),
    "power_scalar_negative": (lambda ndl, a: ndl.power_scalar(a, -2), [positive((3,), 10)]),
    "power_scalar_half": (lambda ndl, a: ndl.power_scalar(a, 0.5), [positive((2, 2), 11)]),
    "power": (lambda ndl, a, b: ndl.power(a, b), [positive((2, 3), 12), normal((2, 3), 13)]),
    "power_broadcast_exponent": (lambda ndl, a, b: ndl.power(a, b), [positive((2, 3), 14), normal((3,), 15)]),
    "power_broadcast_both": (lambda ndl, a, b: ndl.power(a, b), [positive((3, 1), 16), normal((1, 4), 17)]),
    "power_0d_exponent": (lambda ndl, a, b: ndl.power(a, b), [positive((4,), 18), normal((), 19)]),
    "divide": (lambda ndl, a, b: ndl.divide(a, b), [normal((2, 3), 20), positive((2, 3), 21)]),
    "divide_scalar": (lambda ndl, a: ndl.divide_scalar(a, 0.6), [normal((3, 2), 22)]),
    "matmul": (lambda ndl, a, b: ndl.matmul(a, b), [normal((3, 4), 23), normal((4, 2), 24)]),
    "matmul_batched": (lambda ndl, a, b: ndl.matmul(a, b), [normal((2, 3, 4), 25), normal((2, 4, 2), 26)]),
    "matmul_3d_2d": (lambda ndl, a, b: ndl.matmul(a, b), [normal((2, 3, 4), 27), normal((4, 2), 28)]),
    "matmul_2d_3d": (lambda ndl, a, b: ndl.matmul(a, b), [normal((3, 4), 29), normal((2, 4, 2), 30)]),
    "matmul_4d_2d": (lambda ndl, a, b: ndl.matmul(a, b), [normal((2, 2, 3, 2), 31), normal((2, 3), 32)]),
    "matmul_2d_4d": (lambda ndl, a, b: ndl.matmul(a, b), [normal((3, 2), 33), normal((2, 2, 2, 3), 34)]),
    "matmul_batch_dims_broadcast": (
        lambda ndl, a, b: ndl.matmul(a, b),
        [normal((2, 1, 3, 2), 35), normal((3, 2, 2), 36)],
    ),
    "summation_all": (lambda ndl, a: ndl.summation(a), [normal((2, 3, 4), 37)]),
    "summation_0d": (lambda ndl, a: ndl.summation(a), [normal((), 38)]),
    "summation_int": (lambda ndl, a: ndl.summation(a, axes=1), [normal((2, 3, 4), 39)]),
    "summation_tuple": (lambda ndl, a: ndl.summation(a, axes=(0, 2)), [normal((2, 3, 4), 40)]),
    "summation_negative": (lambda ndl, a: ndl.summation(a, axes=(-1,)), [normal((2, 3), 41)]),
    "summation_leading": (lambda ndl, a: ndl.summation(a, axes=(0,)), [normal((3, 2), 42)]),
    "broadcast_from_0d": (lambda ndl, a: ndl.broadcast_to(a, (2, 3)), [normal((), 43)]),
    "broadcast_from_size1": (lambda ndl, a: ndl.broadcast_to(a, (3, 4)), [normal((3, 1), 44)]),
    "broadcast_new_and_size1": (lambda ndl, a: ndl.broadcast_to(a, (2, 3, 4)), [normal((1, 4), 45)]),
    "broadcast_1d": (lambda ndl, a: ndl.broadcast_to(a, (2, 5)), [normal((5,), 46)]),
    "broadcast_noop": (lambda ndl, a: ndl.broadcast_to(a, (2, 3)), [normal((2, 3), 47)]),
    "reshape": (lambda ndl, a: ndl.reshape(a, (3, 4)), [normal((2, 6), 48)]),
    "reshape_0d": (lambda ndl, a: ndl.reshape(a, (1, 1)), [normal((), 49)]),
    "negate": (lambda ndl, a: ndl.negate(a), [normal((2, 3), 50)]),
    "transpose_default": (lambda ndl, a: ndl.transpose(a), [normal((2, 3, 4), 51)]),
    "transpose_axes": (lambda ndl, a: ndl.transpose(a, axes=(0, 2)), [normal((2, 3, 4), 52)]),
    "log": (lambda ndl, a: ndl.log(a), [positive((2, 3), 53)]),
    "exp": (lambda ndl, a: ndl.exp(a), [normal((2, 3), 54)]),
    "relu": (lambda ndl, a: ndl.relu(a), [away_from_zero((3, 4), 55)]),
    "shared_input": (lambda ndl, a: ndl.multiply(a, ndl.exp(a)) + a, [normal((3,), 56)]),
    "softmax_like": (lambda ndl, z: ndl.log(ndl.summation(ndl.exp(z), axes=(1,))), [normal((3, 4), 57)]),
    "two_layer_net": (
        lambda ndl, x, w1, w2: ndl.relu(x @ w1) @ w2,
        [away_from_zero((4, 3), 58), normal((3, 5), 59), normal((5, 2), 60)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_central_differences(ndl, name):
    build, arrays = CASES[name]
    forward, gradients = needle_callables(ndl, lambda *ts: build(ndl, *ts))
    checks = check_gradients(name, forward, gradients, arrays)
    assert len(checks) == len(arrays)


def test_softmax_loss_gradient_matches_central_differences(ndl, simple_ml):
    y = np.eye(5)[[0, 3, 1, 4]]
    forward, gradients = needle_callables(ndl, lambda z: simple_ml.softmax_loss(z, ndl.Tensor(y)))
    check_gradients("softmax_loss", forward, gradients, [normal((4, 5), 61)])


def test_gradients_keep_the_input_dtype(ndl):
    x = ndl.Tensor(np.ones((2, 3), np.float32))
    w = ndl.Tensor(np.ones((3, 4), np.float32))
    ndl.summation(ndl.exp(ndl.log(x @ w) / 2.0)).backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32


def test_matmul_sums_a_broadcast_constant_inputs_adjoint_now(ndl):
    x = ndl.Tensor(normal((3, 2), 64), requires_grad=False)
    w = ndl.Tensor(normal((4, 2, 5), 65))
    out = x @ w
    grads = out.op.gradient_as_tuple(ndl.Tensor(np.ones((4, 3, 5))), out)
    np.testing.assert_allclose(grads[0].numpy(), np.ones((3, 5)) @ w.numpy().sum(0).T)


# Second order: gradients are needle graphs, so they can be differentiated.


def test_gradient_of_gradient_from_the_issue(ndl):
    x = ndl.Tensor(np.array(3.0))
    z = ndl.Tensor(np.array(5.0))
    y = x * x + x * z
    y.backward()
    g = x.grad
    assert float(g.numpy()) == 2 * 3.0 + 5.0
    g.backward()
    assert float(x.grad.numpy()) == 2.0
    assert float(z.grad.numpy()) == 1.0


def test_gradient_of_gradient_of_a_cube(ndl):
    x = ndl.Tensor(np.array([1.0, -2.0, 0.5]))
    ndl.summation(x**3).backward()
    first = x.grad
    np.testing.assert_allclose(first.numpy(), 3 * x.numpy() ** 2)
    ndl.summation(first).backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([1.0, -2.0, 0.5]))


def hessian_vector_callables(ndl, build, vector_seed):
    """(f, grad f) where f(xs) = sum_i <grad_i sum(build(xs) * v), w_i>: its
    analytic gradient needs the gradient graph differentiated once more."""

    def first_order(tensors):
        out = build(*tensors)
        out.backward(ndl.Tensor(normal(out.shape, vector_seed)))
        return [t.grad for t in tensors]

    def objective(tensors):
        firsts = first_order(tensors)
        terms = [ndl.summation(g * ndl.Tensor(normal(g.shape, vector_seed + 1 + i))) for i, g in enumerate(firsts)]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward(*arrays):
        return objective([ndl.Tensor(a) for a in arrays]).numpy()

    def gradients(*arrays_and_out_grad):
        *arrays, out_grad = arrays_and_out_grad
        tensors = [ndl.Tensor(a) for a in arrays]
        total = objective(tensors)
        for t in tensors:
            t.grad = None  # an input the gradient graph does not reach has zero gradient
        total.backward(ndl.Tensor(out_grad))
        return [np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in tensors]

    return forward, gradients


SECOND_ORDER = sorted(CASES)  # linear ops too: their second derivative must come out zero


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_gradient_matches_central_differences(ndl, name):
    build, arrays = CASES[name]
    forward, gradients = hessian_vector_callables(ndl, lambda *ts: build(ndl, *ts), vector_seed=100)
    check_gradients(f"{name} (second order)", forward, gradients, arrays, rtol=1e-4, atol=1e-6)
