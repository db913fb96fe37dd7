"""Q6: ReLU, and nn_epoch on synthetic data, on a MNIST subset and on the
full training set (weights against the reference's, and the test error of
the returned weights, computed by the grading parent itself)."""
import numpy as np

from .backward import first_order
from .registry import also, table
from .util import TRAIN, randn, read_mnist, rng, tensor_check

F32 = np.float32


def _weights(seed, n_in, hidden, n_out):
    r = rng(seed)
    W1 = r.randn(n_in, hidden).astype(F32) / F32(np.sqrt(hidden))
    W2 = r.randn(hidden, n_out).astype(F32) / F32(np.sqrt(n_out))
    return W1, W2


def _epoch(ndl, sm, X, y, W1, W2, **kwargs):
    out = sm.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), **kwargs)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"nn_epoch returned {type(out).__name__}, expected a tuple (W1, W2)")
    return [tensor_check(ndl, w, f"nn_epoch's W{k + 1}").numpy() for k, w in enumerate(out)]


def relu_forward(ndl, sm):
    x = randn(401, 4, 5, dtype=F32)
    x[0, :2] = 0.0
    return [ndl.relu(ndl.Tensor(x)).numpy(), ndl.relu(ndl.Tensor(np.array(-1.5))).numpy()]


def relu_backward(ndl, sm):
    x = randn(402, 3, 4)
    x[np.abs(x) < 0.05] = 0.5  # stay away from the kink at 0
    return first_order(ndl, "relu", [x], 403)


def epoch_synthetic(ndl, sm):
    """50 examples in batches of 16: the last batch has 2."""
    r = rng(404)
    X = r.randn(50, 5).astype(F32)
    y = r.randint(0, 3, size=50).astype(np.uint8)
    W1, W2 = _weights(405, 5, 8, 3)
    return _epoch(ndl, sm, X, y, W1, W2, lr=0.1, batch=16)


def epoch_mnist_subset(ndl, sm):
    X, y = read_mnist(*TRAIN)
    W1, W2 = _weights(406, 784, 20, 10)
    return _epoch(ndl, sm, X[:1050], y[:1050], W1, W2, lr=0.1, batch=100)


def epoch_mnist_full(ndl, sm):
    X, y = read_mnist(*TRAIN)
    W1, W2 = _weights(407, 784, 100, 10)
    return _epoch(ndl, sm, X, y, W1, W2, lr=0.2, batch=100)


ROWS = [
    ("nn_epoch_ndl_relu_forward", "ReLU forward on (4,5) float32 with zeros, and a 0-d input", relu_forward),
    ("nn_epoch_ndl_synthetic", "nn_epoch on 50 synthetic examples, batch 16 (last batch partial)", epoch_synthetic),
    ("nn_epoch_ndl_mnist_full", "nn_epoch over all 60000 MNIST training images, lr 0.2, batch 100", epoch_mnist_full),
]
table("nn_epoch_ndl", globals(), ROWS[:1])
table("nn_epoch_ndl", globals(), ROWS[1:2], exact_dtype=True)
# One float32 epoch of 600 steps: weights from different but correct
# operation orders drift apart by ~1e-4 relative in norm; 1e-3 still fails
# a skipped batch or a wrong learning rate by a wide margin.
table("nn_epoch_ndl", globals(), ROWS[2:], check="norms", rtol=1e-3, exact_dtype=True)
table("nn_epoch_ndl", globals(), [
    ("nn_epoch_ndl_relu_backward", "ReLU.gradient on (3,4) away from 0", relu_backward),
], check="analytic", hidden=True)
table("nn_epoch_ndl", globals(), [
    ("nn_epoch_ndl_mnist_subset", "nn_epoch on the first 1050 MNIST images (last batch of 50)", epoch_mnist_subset),
], rtol=1e-4, atol=1e-5, exact_dtype=True, hidden=True)
# The reference reaches 0.0585 test error after this epoch.
also("nn_epoch_ndl", "nn_epoch_ndl_test_error", "MNIST test error of the weights after one full epoch <= 0.07",
     "nn_epoch_ndl_mnist_full", __name__.rsplit(".", 1)[-1], check="test_error", threshold=0.07)
