"""Q5: parse_mnist on the real MNIST test files (the train files would add
300 MB and half a second to every grading and test nothing more), softmax_loss values and its
gradient (through our own reverse pass, so Q4 code is not involved)."""
import numpy as np

from .registry import table
from .util import TEST, reverse_walk, rng, tensor_check


def _logits_and_labels(seed, n, k, scale):
    r = rng(seed)
    Z = (r.randn(n, k) * scale).astype(np.float32)
    y = r.randint(0, k, size=n)
    one_hot = np.zeros((n, k), dtype=np.float32)
    one_hot[np.arange(n), y] = 1
    return Z, one_hot


def loss_value(ndl, sm, seed, n, k, scale):
    Z, one_hot = _logits_and_labels(seed, n, k, scale)
    loss = sm.softmax_loss(ndl.Tensor(Z), ndl.Tensor(one_hot))
    return tensor_check(ndl, loss, "softmax_loss").numpy()


def loss_gradient(ndl, sm, seed, n, k, scale):
    Z, one_hot = _logits_and_labels(seed, n, k, scale)
    z = ndl.Tensor(Z)
    loss = tensor_check(ndl, sm.softmax_loss(z, ndl.Tensor(one_hot, requires_grad=False)), "softmax_loss")
    adjoints = reverse_walk(ndl, loss, ndl.Tensor(np.ones(loss.shape, dtype=np.float32)))
    if id(z) not in adjoints:
        raise ValueError("softmax_loss is not differentiable w.r.t. Z (no gradient reached the logits)")
    return adjoints[id(z)].numpy()


def parse_test_set(ndl, sm):
    X, y = sm.parse_mnist(*TEST)
    return {"shape": list(np.shape(X)), "head": X[:3], "row_sums": X.sum(axis=1), "y": y}


ROWS = [
    ("softmax_loss_ndl_parse_mnist_test", "parse_mnist on the t10k files: shape, dtypes, values",
     parse_test_set),
    ("softmax_loss_ndl_value", "softmax_loss of (8,10) float32 logits", lambda ndl, sm: loss_value(ndl, sm, 301, 8, 10, 1.0)),
    ("softmax_loss_ndl_value_large_logits", "softmax_loss of (5,3) logits of scale 20",
     lambda ndl, sm: loss_value(ndl, sm, 302, 5, 3, 20.0)),
]
HIDDEN = [
    ("softmax_loss_ndl_value_one_example", "softmax_loss of a single (1,7) example",
     lambda ndl, sm: loss_value(ndl, sm, 303, 1, 7, 2.0)),
    ("softmax_loss_ndl_gradient", "gradient of softmax_loss w.r.t. (6,4) logits",
     lambda ndl, sm: loss_gradient(ndl, sm, 304, 6, 4, 1.5)),
]
table("softmax_loss_ndl", globals(), ROWS[:1], exact_dtype=True)
table("softmax_loss_ndl", globals(), ROWS[1:], rtol=1e-5, atol=1e-6)
table("softmax_loss_ndl", globals(), HIDDEN, hidden=True)
