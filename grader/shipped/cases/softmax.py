"""Q5: parse_mnist on the real MNIST test files (the train files would add
300 MB and half a second to every grading and test nothing more), softmax_loss
values for one-hot labels of several dtypes, and its gradient with respect to
both arguments (through our own reverse pass, so Q4 code is not involved)."""
import numpy as np

from .registry import case
from .util import TEST, reverse_walk, rng, tensor_check


def _logits_and_labels(seed, n, k, scale, label_dtype=np.float32):
    r = rng(seed)
    Z = (r.randn(n, k) * scale).astype(np.float32)
    y = r.randint(0, k, size=n)
    one_hot = np.zeros((n, k), dtype=label_dtype)
    one_hot[np.arange(n), y] = 1
    return Z, one_hot


def loss_value(seed, n, k, scale, label_dtype=np.float32):
    def value(ndl, sm):
        Z, one_hot = _logits_and_labels(seed, n, k, scale, label_dtype)
        loss = sm.softmax_loss(ndl.Tensor(Z), ndl.Tensor(one_hot))
        return tensor_check(ndl, loss, "softmax_loss").numpy()
    return value


def loss_gradient(seed, n, k, scale, wrt):
    """The adjoint of argument `wrt` (0: Z, 1: y_one_hot) of the loss.

    Correct formulations (log-sum-exp minus the true logit, with or without
    a max shift, or -sum(y * log softmax)) agree on one-hot labels but
    differ off them by a constant per row, so their gradients w.r.t. the
    labels differ by a constant per row: that part is removed.
    """
    def gradient(ndl, sm):
        Z, one_hot = _logits_and_labels(seed, n, k, scale)
        args = [ndl.Tensor(Z), ndl.Tensor(one_hot)]
        loss = tensor_check(ndl, sm.softmax_loss(*args), "softmax_loss")
        adjoints = reverse_walk(ndl, loss, ndl.Tensor(np.ones(loss.shape, dtype=np.float32)))
        if id(args[wrt]) not in adjoints:
            name = ("Z", "y_one_hot")[wrt]
            raise ValueError(f"softmax_loss is not differentiable w.r.t. {name} (no gradient reached it)")
        grad = np.asarray(adjoints[id(args[wrt])].numpy(), dtype=np.float64)
        return grad - grad.mean(axis=-1, keepdims=True) if wrt == 1 and grad.ndim == 2 else grad
    return gradient


def parse_test_set(ndl, sm):
    """Shapes, every row's sum and label, and a few whole rows drawn from the seed."""
    X, y = sm.parse_mnist(*TEST)
    X, y = np.asarray(X), np.asarray(y)
    rows = rng(307).choice(len(X), size=3, replace=False) if len(X) else []
    return {"shape": [list(X.shape), list(y.shape)], "rows": X[rows], "row_sums": X.sum(axis=1, dtype=np.float64),
            "y": y}


def parse_test_set_dtypes(ndl, sm):
    X, y = sm.parse_mnist(*TEST)
    rows = rng(308).choice(len(X), size=2, replace=False) if len(X) else []
    return [np.asarray(X)[rows], np.asarray(y)[rows]]


def q5(name, contract, description, fn=None, **options):
    return case("softmax_loss_ndl", name, contract, description, fn, **options)


CASES = [
    q5("parse_mnist_test", "parse_mnist_values", "parse_mnist on the t10k files: shapes and values",
       parse_test_set),
    q5("parse_mnist_dtypes", "parse_mnist_dtypes", "parse_mnist on the t10k files: X float32, y integer labels",
       parse_test_set_dtypes, check="dtype"),
    q5("value", "softmax_loss_value", "softmax_loss of (8,10) float32 logits, float32 one-hot labels",
       loss_value(301, 8, 10, 1.0)),
    q5("value_large_logits", "softmax_loss_value", "softmax_loss of (5,3) logits of scale 20",
       loss_value(302, 5, 3, 20.0)),
    q5("value_float64_labels", "softmax_loss_value", "softmax_loss with float64 one-hot labels",
       loss_value(305, 6, 5, 1.0, np.float64)),
    q5("gradient", "softmax_loss_gradient", "gradient of softmax_loss w.r.t. (6,4) logits Z",
       loss_gradient(304, 6, 4, 1.5, 0)),
    ### BEGIN HIDDEN TESTS
    q5("value_int_labels", "softmax_loss_value", "softmax_loss with int8 one-hot labels",
       loss_value(306, 6, 5, 1.0, np.int8), hidden=True),
    q5("value_one_example", "softmax_loss_value", "softmax_loss of a single (1,7) example",
       loss_value(303, 1, 7, 2.0), hidden=True),
    ### END HIDDEN TESTS
    q5("gradient_labels", "label_gradient", "gradient of softmax_loss w.r.t. the (6,4) one-hot labels",
       loss_gradient(304, 6, 4, 1.5, 1), advisory=True),
    q5("value_float32", "float_width", "softmax_loss of float32 logits and labels is float32",
       source="softmax_loss_ndl_value", check="dtype", advisory=True),
]
