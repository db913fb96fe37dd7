"""The reference's epoch computes no adjoint nothing reads (issue 37): the
data X of a training step requires no gradient, so MatMul leaves its adjoint
unevaluated (computed if read, never in training), and an epoch makes the
five matrix products of the plain-numpy one. The values are unchanged: bit
for bit against an epoch that computes every adjoint, and to float32
rounding against the plain-numpy epoch."""
import numpy as np
import pytest

from benchmarks.bench_epoch import numpy_epoch


def problem(examples=300, features=20, hidden=8, classes=5, seed=3):
    rng = np.random.RandomState(seed)
    X = rng.rand(examples, features).astype(np.float32)
    y = rng.randint(0, classes, size=examples).astype(np.uint8)
    W1 = (rng.randn(features, hidden) / 5).astype(np.float32)
    W2 = (rng.randn(hidden, classes) / 3).astype(np.float32)
    return X, y, W1, W2


def step_grads(ndl, simple_ml, X, y, W1, W2, x_requires_grad):
    Xt = ndl.Tensor(X, requires_grad=x_requires_grad)
    w1, w2 = ndl.Tensor(W1), ndl.Tensor(W2)
    y_one_hot = ndl.Tensor(np.eye(W2.shape[1], dtype=np.float32)[y], requires_grad=False)
    simple_ml.softmax_loss(ndl.relu(Xt @ w1) @ w2, y_one_hot).backward()
    return Xt, w1, w2


def test_the_weights_gradients_are_the_same_bits_whether_x_needs_a_gradient_or_not(ndl, simple_ml):
    X, y, W1, W2 = problem()
    X_const, a1, a2 = step_grads(ndl, simple_ml, X[:100], y[:100], W1, W2, x_requires_grad=False)
    X_var, b1, b2 = step_grads(ndl, simple_ml, X[:100], y[:100], W1, W2, x_requires_grad=True)
    assert np.array_equal(a1.grad.numpy(), b1.grad.numpy())
    assert np.array_equal(a2.grad.numpy(), b2.grad.numpy())
    assert X_const.grad.cached_data is None  # not computed by backward()...
    assert np.array_equal(X_const.grad.numpy(), X_var.grad.numpy())  # ...but right when read


def test_a_lazy_adjoint_summed_back_over_a_broadcast_batch_is_right(ndl):
    a = ndl.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2), requires_grad=False)
    b = ndl.Tensor(np.ones((4, 2, 5), dtype=np.float32))
    node = a @ b
    grad_a, grad_b = ndl.ops.MatMul().gradient(ndl.Tensor(np.ones((4, 3, 5), dtype=np.float32)), node)
    assert np.array_equal(grad_a.numpy(), np.full((3, 2), 20.0, dtype=np.float32))
    assert grad_b.shape == (4, 2, 5)


def test_matmul_leaves_the_adjoint_of_a_side_that_needs_none_unevaluated(ndl):
    a = ndl.Tensor(np.ones((3, 4), dtype=np.float32), requires_grad=False)
    b = ndl.Tensor(np.ones((4, 2), dtype=np.float32))
    node = a @ b
    grad_a, grad_b = ndl.ops.MatMul().gradient(ndl.Tensor(np.ones((3, 2), dtype=np.float32)), node)
    assert isinstance(grad_a, ndl.Tensor) and grad_a.cached_data is None
    assert grad_b.cached_data is not None
    assert np.array_equal(grad_a.numpy(), np.full((3, 4), 2.0, dtype=np.float32))
    assert np.array_equal(grad_b.numpy(), np.full((4, 2), 3.0, dtype=np.float32))


def test_both_sides_that_need_gradients_still_get_them(ndl):
    a, b = ndl.Tensor(np.ones((3, 4), dtype=np.float32)), ndl.Tensor(np.ones((4, 2), dtype=np.float32))
    (a @ b).backward()
    assert np.array_equal(a.grad.numpy(), np.full((3, 4), 2.0, dtype=np.float32))
    assert np.array_equal(b.grad.numpy(), np.full((4, 2), 3.0, dtype=np.float32))


def test_an_epoch_makes_five_matrix_products_per_batch_as_numpy_does(ndl, simple_ml, monkeypatch):
    X, y, W1, W2 = problem()
    calls = []
    compute = ndl.ops.MatMul.compute
    monkeypatch.setattr(ndl.ops.MatMul, "compute", lambda self, a, b: calls.append(1) or compute(self, a, b))
    simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=0.1, batch=100)
    assert len(calls) == 5 * 3


@pytest.mark.parametrize("lr,batch", [(0.1, 100), (0.5, 50)])
def test_the_epoch_matches_the_plain_numpy_epoch(ndl, simple_ml, lr, batch):
    X, y, W1, W2 = problem()
    got1, got2 = simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=lr, batch=batch)
    want1, want2 = numpy_epoch(X, y, W1, W2, lr, batch)
    assert got1.dtype == np.float32 and got2.dtype == np.float32
    np.testing.assert_allclose(got1.numpy(), want1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got2.numpy(), want2, rtol=1e-5, atol=1e-6)


def test_the_epoch_is_the_same_bits_as_one_that_computes_every_adjoint(ndl, simple_ml, monkeypatch):
    """The walk before issue 37 (X's adjoint computed, then unused) gives the same weights."""
    X, y, W1, W2 = problem()
    fast = [w.numpy().copy() for w in simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=0.2)]
    made = ndl.Tensor.__init__

    def everything_needs_a_gradient(self, array, **kwargs):
        kwargs["requires_grad"] = True
        made(self, array, **kwargs)

    monkeypatch.setattr(ndl.Tensor, "__init__", everything_needs_a_gradient)
    slow = [w.numpy() for w in simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=0.2)]
    assert all(np.array_equal(a, b) for a, b in zip(fast, slow))
