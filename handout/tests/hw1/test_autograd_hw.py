"""Public tests of hw1. Run them from the handout root:

    python -m pytest tests/hw1 -k forward      (or: make test Q=forward)

Each test's name carries exactly one question keyword: forward (Q1),
backward (Q2), topo_sort (Q3), compute_gradient (Q4), softmax_loss_ndl (Q5),
nn_epoch_ndl (Q6). Forward results are compared with numbers written below;
gradients with central differences computed here in float64.

The submit_* functions at the end are not tests: `make submit` runs them
and sends what your code computes to the grading server.
"""
import sys

sys.path.append("./python")
sys.path.append("./apps")

import numpy as np
import pytest

import mugrade
import needle as ndl
from simple_ml import loss_err, nn_epoch, parse_mnist, softmax_loss

TEST_IMAGES = "data/t10k-images-idx3-ubyte.gz"
TEST_LABELS = "data/t10k-labels-idx1-ubyte.gz"


# ---------------------------------------------------------------- inputs

def ints(shape, seed, low=-4, high=5):
    """Small integers as float32: forward results stay short and exact."""
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(np.float32)


def positive(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).uniform(0.5, 2.0, size=shape).astype(dtype)


def normal(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def T(array):
    return ndl.Tensor(array)


# ---------------------------------------------------------------- Q1 forward

# name -> function computing the op with needle on fixed inputs.
FORWARD_CASES = {
    "power_scalar": lambda: ndl.power_scalar(T(ints((2, 3), 11)), 3),
    "ewise_pow": lambda: ndl.power(T(positive((3, 2), 12)), T(ints((3, 2), 13, 0, 3))),
    "ewise_pow_broadcast": lambda: ndl.power(T(positive((2, 3), 14)), T(positive((3,), 15))),
    "divide": lambda: ndl.divide(T(ints((2, 3), 16)), T(np.array([[1, 2, 4], [-2, 4, 8]], np.float32))),
    "divide_scalar": lambda: ndl.divide_scalar(T(ints((2, 2, 2), 17)), 8.0),
    "matmul_2d": lambda: ndl.matmul(T(ints((3, 2), 18)), T(ints((2, 4), 19))),
    "matmul_3d_2d": lambda: ndl.matmul(T(ints((2, 3, 2), 20)), T(ints((2, 2), 21))),
    "matmul_batch_broadcast": lambda: ndl.matmul(T(ints((2, 1, 2, 3), 22)), T(ints((3, 3, 2), 23))),
    "summation_all": lambda: ndl.summation(T(ints((3, 4), 24))),
    "summation_int_axis": lambda: ndl.summation(T(ints((2, 3, 4), 25)), axes=1),
    "summation_tuple_axes": lambda: ndl.summation(T(ints((2, 3, 4), 26)), axes=(0, 2)),
    "summation_negative_axis": lambda: ndl.summation(T(ints((2, 3), 27)), axes=-1),
    "broadcast_to_column": lambda: ndl.broadcast_to(T(ints((3, 1), 28)), (3, 4)),
    "broadcast_to_from_scalar": lambda: ndl.broadcast_to(T(np.array(2.5, np.float32)), (2, 3)),
    "broadcast_to_new_axes": lambda: ndl.broadcast_to(T(ints((1, 3), 29)), (2, 4, 3)),
    "reshape": lambda: ndl.reshape(T(ints((2, 6), 30)), (3, 4)),
    "reshape_flatten": lambda: ndl.reshape(T(ints((2, 3, 2), 31)), (12,)),
    "negate": lambda: ndl.negate(T(ints((2, 3), 32))),
    "transpose_default": lambda: ndl.transpose(T(ints((2, 3), 33))),
    "transpose_default_3d": lambda: ndl.transpose(T(ints((2, 3, 2), 34))),
    "transpose_axes": lambda: ndl.transpose(T(ints((2, 3, 4), 35)), axes=(0, 2)),
    "log": lambda: ndl.log(T(positive((2, 3), 36))),
    "exp": lambda: ndl.exp(T(ints((2, 3), 37) / 4)),
}

FORWARD_EXPECTED = {
    "broadcast_to_column": [[1, 1, 1, 1], [3, 3, 3, 3], [-3, -3, -3, -3]],
    "broadcast_to_from_scalar": [[2.5, 2.5, 2.5], [2.5, 2.5, 2.5]],
    "broadcast_to_new_axes": [
        [[4, -4, 1], [4, -4, 1], [4, -4, 1], [4, -4, 1]],
        [[4, -4, 1], [4, -4, 1], [4, -4, 1], [4, -4, 1]],
    ],
    "divide": [[0, 0.5, 0.75], [0.5, 0.5, -0.5]],
    "divide_scalar": [[[0.25, 0.375], [-0.5, -0.375]], [[0, 0.125], [0.25, -0.125]]],
    "ewise_pow": [[0.7677907, 3.686897], [0.6146255, 0.5912642], [1, 0.7153977]],
    "ewise_pow_broadcast": [[2.3589337, 1.0724627, 1.5655322], [2.4503968, 1.9244729, 1.3287004]],
    "exp": [[0.4723665, 1.6487212, 1.2840255], [1.2840255, 0.6065307, 0.3678794]],
    "log": [[-0.2601322, 0.0929029, 0.6101723], [0.0999169, 0.421671, 0.236353]],
    "matmul_2d": [[5, -2, -7, 20], [-5, -1, 9, -20], [5, 1, -9, 20]],
    "matmul_3d_2d": [[[-6, 10], [4, -6], [-5, 9]], [[4, -6], [5, -7], [6, -7]]],
    "matmul_batch_broadcast": [
        [[[-9, 0], [16, 10]], [[6, -4], [-19, 1]], [[-3, -1], [7, -11]]],
        [[[15, 9], [-5, -15]], [[-9, -5], [13, 9]], [[15, -5], [-7, 17]]],
    ],
    "negate": [[-3, 3, -3], [-1, 1, 1]],
    "power_scalar": [[-27, -27, 27], [0, 1, 1]],
    "reshape": [[-4, -2, 2, -1], [-1, -4, 1, 1], [-2, 3, -3, 3]],
    "reshape_flatten": [0, 4, 0, -4, 1, 2, -4, 0, -1, 2, 2, -4],
    "summation_all": 1,
    "summation_int_axis": [[-5, -10, 4, -8], [-4, 3, -7, 5]],
    "summation_negative_axis": [-5, -1],
    "summation_tuple_axes": [5, -7, 11],
    "transpose_axes": [
        [[-4, -1], [4, -2], [-4, 2]],
        [[-1, 0], [4, 3], [-4, 3]],
        [[3, -2], [-2, 1], [0, 4]],
        [[0, 4], [4, 4], [-4, -3]],
    ],
    "transpose_default": [[3, 1], [-1, 3], [-1, 4]],
    "transpose_default_3d": [[[-4, -3, -3], [-4, 3, -2]], [[-4, -4, -2], [1, 0, 3]]],
}


@pytest.mark.parametrize("name", sorted(FORWARD_CASES))
def test_op_forward(name):
    result = FORWARD_CASES[name]()
    assert isinstance(result, ndl.Tensor), f"{name}: expected a needle Tensor, got {type(result)}"
    np.testing.assert_allclose(result.numpy(), np.array(FORWARD_EXPECTED[name]),
                               rtol=1e-5, atol=1e-5, err_msg=f"forward of {name}")




# ---------------------------------------------------------------- Q2 backward

def numeric_gradients(fn, arrays, out_grad, eps=1e-6):
    """Central differences of sum(fn(*arrays) * out_grad) for each input (float64)."""
    grads = []
    for x in arrays:
        grad = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            saved = x[index]
            x[index] = saved + eps
            plus = np.sum(fn(*arrays) * out_grad)
            x[index] = saved - eps
            minus = np.sum(fn(*arrays) * out_grad)
            x[index] = saved
            grad[index] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def check_gradient(op, fn, *arrays, seed=0):
    """Compare op.gradient with central differences of the numpy function fn.

    The output node gets its value from fn, so this checks your gradient
    whatever state your forward is in.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    inputs = [ndl.Tensor(a) for a in arrays]
    value = np.asarray(fn(*arrays), dtype=np.float64)
    node = ndl.Tensor.__new__(ndl.Tensor)
    node._init(op, inputs, cached_data=value)
    out_grad = normal(value.shape, seed)
    grads = op.gradient_as_tuple(ndl.Tensor(out_grad), node)
    expected = numeric_gradients(fn, arrays, out_grad)
    assert len(grads) == len(arrays), f"{type(op).__name__}: {len(grads)} gradients for {len(arrays)} inputs"
    for i, (grad, want) in enumerate(zip(grads, expected)):
        assert isinstance(grad, ndl.Tensor), f"{type(op).__name__} input {i}: gradient must be a needle Tensor"
        got = grad.numpy()
        assert got.shape == want.shape, (f"{type(op).__name__} input {i}: gradient shape {got.shape}, "
                                         f"input shape {want.shape}")
        error = np.max(np.abs(got - want)) if want.size else 0.0
        assert error < 1e-6 + 1e-5 * np.max(np.abs(want), initial=0), (
            f"{type(op).__name__} input {i} of shape {want.shape}: max error {error:.3g}")


# name -> (op, numpy function, inputs)
BACKWARD_CASES = {
    "power_scalar": (ndl.PowerScalar(3), lambda a: a ** 3, [normal((2, 3), 41)]),
    "ewise_pow": (ndl.EWisePow(), np.power, [positive((2, 3), 42), normal((2, 3), 43)]),
    "ewise_pow_broadcast": (ndl.EWisePow(), np.power, [positive((2, 3), 44), normal((3,), 45)]),
    "divide": (ndl.EWiseDiv(), np.divide, [normal((3, 2), 46), positive((3, 2), 47)]),
    "divide_scalar": (ndl.DivScalar(1.7), lambda a: a / 1.7, [normal((2, 4), 48)]),
    "matmul_2d": (ndl.MatMul(), np.matmul, [normal((3, 4), 49), normal((4, 2), 50)]),
    "matmul_3d_2d": (ndl.MatMul(), np.matmul, [normal((2, 3, 4), 51), normal((4, 2), 52)]),
    "matmul_2d_3d": (ndl.MatMul(), np.matmul, [normal((4, 3), 53), normal((2, 3, 5), 54)]),
    "matmul_batch_broadcast": (ndl.MatMul(), np.matmul, [normal((2, 1, 3, 2), 55), normal((3, 2, 4), 56)]),
    "summation_all": (ndl.Summation(), np.sum, [normal((3, 4), 57)]),
    "summation_int_axis": (ndl.Summation(1), lambda a: np.sum(a, axis=1), [normal((2, 3, 4), 58)]),
    "summation_tuple_axes": (ndl.Summation((0, 2)), lambda a: np.sum(a, axis=(0, 2)), [normal((2, 3, 4), 59)]),
    "summation_negative_axis": (ndl.Summation(-1), lambda a: np.sum(a, axis=-1), [normal((3, 2), 60)]),
    "broadcast_to_column": (ndl.BroadcastTo((3, 4)), lambda a: np.broadcast_to(a, (3, 4)), [normal((3, 1), 61)]),
    "broadcast_to_from_scalar": (ndl.BroadcastTo((2, 3)), lambda a: np.broadcast_to(a, (2, 3)), [normal((), 62)]),
    "broadcast_to_new_axes": (ndl.BroadcastTo((2, 4, 3)), lambda a: np.broadcast_to(a, (2, 4, 3)),
                              [normal((1, 3), 63)]),
    "reshape": (ndl.Reshape((4, 3)), lambda a: np.reshape(a, (4, 3)), [normal((2, 6), 64)]),
    "negate": (ndl.Negate(), np.negative, [normal((2, 3), 65)]),
    "transpose_default": (ndl.Transpose(), lambda a: np.swapaxes(a, -1, -2), [normal((2, 3, 4), 66)]),
    "transpose_axes": (ndl.Transpose((0, 2)), lambda a: np.swapaxes(a, 0, 2), [normal((2, 3, 4), 67)]),
    "log": (ndl.Log(), np.log, [positive((2, 3), 68, np.float64)]),
    "exp": (ndl.Exp(), np.exp, [normal((2, 3), 69)]),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_CASES))
def test_op_backward(name):
    op, fn, arrays = BACKWARD_CASES[name]
    check_gradient(op, fn, *arrays, seed=len(name))


# ---------------------------------------------------------------- Q3 topo_sort
# Graphs here use only the ops given to you (+, * with tensors or scalars).

def positions(order, named):
    """The names of the nodes in `order`, so failures read well."""
    names = {id(node): name for name, node in named.items()}
    return [names.get(id(node), "?") for node in order]


def test_topo_sort_chain():
    a = T(np.array([1.0, -2.0]))
    b = a + 1.0
    c = b * 3.0
    d = c + b
    order = ndl.autograd.find_topo_sort([d])
    assert positions(order, dict(a=a, b=b, c=c, d=d)) == ["a", "b", "c", "d"]


def test_topo_sort_diamond():
    x, y = T(np.array([2.0])), T(np.array([5.0]))
    p = x * y
    q = x + 2.0
    r = p * q
    s = r + y
    order = ndl.autograd.find_topo_sort([s])
    assert positions(order, dict(x=x, y=y, p=p, q=q, r=r, s=s)) == ["x", "y", "p", "q", "r", "s"]


def test_topo_sort_several_outputs():
    x, y = T(np.array([1.0, 2.0])), T(np.array([3.0, 4.0]))
    u = x * 2.0
    v = u + x
    w = y * x
    order = ndl.autograd.find_topo_sort([w, v])
    assert positions(order, dict(x=x, y=y, u=u, v=v, w=w)) == ["y", "x", "w", "u", "v"]


def test_topo_sort_dfs_appends_in_post_order():
    x = T(np.array([1.0]))
    y = x * x
    z = y + x
    visited, order = set(), []
    ndl.autograd.topo_sort_dfs(z, visited, order)
    ndl.autograd.topo_sort_dfs(y, visited, order)  # already visited: adds nothing
    assert positions(order, dict(x=x, y=y, z=z)) == ["x", "y", "z"]


def test_topo_sort_random_graph():
    rng = np.random.default_rng(71)
    nodes = [T(np.array([float(i)])) for i in range(3)]
    for _ in range(40):
        a, b = (nodes[i] for i in rng.integers(0, len(nodes), 2))
        nodes.append(a * b if rng.random() < 0.5 else a + b)
    order = ndl.autograd.find_topo_sort([nodes[-1], nodes[-2]])
    seen = set()
    for node in order:
        assert id(node) not in seen, "a node appears twice"
        assert all(id(i) in seen for i in node.inputs), "a node comes before one of its inputs"
        seen.add(id(node))
    reachable, stack = set(), [nodes[-1], nodes[-2]]
    while stack:
        node = stack.pop()
        if id(node) not in reachable:
            reachable.add(id(node))
            stack.extend(node.inputs)
    assert seen == reachable


# ---------------------------------------------------------------- Q4 compute_gradient

def test_compute_gradient_shared_node():
    x = T(np.array([1.5, -2.0, 0.25]))
    y = x * x + x * 3.0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3)


def test_compute_gradient_out_grad_and_intermediate():
    x = T(np.array([[1.0, 2.0], [-1.0, 0.5]]))
    u = x * 2.0 + 1.0
    y = u * x
    g = np.array([[1.0, -1.0], [2.0, 0.5]])
    y.backward(T(g))
    np.testing.assert_allclose(u.grad.numpy(), g * x.numpy())
    np.testing.assert_allclose(x.grad.numpy(), g * (4 * x.numpy() + 1))


def test_compute_gradient_twice_replaces_grads():
    x = T(np.array([3.0, -1.0]))
    y = x * x * x
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)


def test_compute_gradient_of_gradient():
    x, z = T(np.array([2.0, -0.5, 1.0])), T(np.array([4.0, 1.0, -3.0]))
    y = x * x * x + x * z
    y.backward()
    g = x.grad
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2 + z.numpy())
    g.backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy())
    np.testing.assert_allclose(z.grad.numpy(), np.ones(3))


def test_compute_gradient_through_ops():
    a, b = normal((3, 4), 81), normal((4, 2), 82)

    def loss(a, b):
        return np.sum(np.log(np.exp(a @ b) + 1.0) / 3.0)

    A, B = T(a), T(b)
    ndl.summation(ndl.divide_scalar(ndl.log(ndl.add_scalar(ndl.exp(ndl.matmul(A, B)), 1.0)), 3.0)).backward()
    want_a, want_b = numeric_gradients(loss, [a, b], 1.0)
    np.testing.assert_allclose(A.grad.numpy(), want_a, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(B.grad.numpy(), want_b, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- Q5 softmax_loss_ndl

def one_hot(labels, classes, dtype=np.float32):
    out = np.zeros((labels.shape[0], classes), dtype=dtype)
    out[np.arange(labels.shape[0]), labels] = 1
    return out


def numpy_softmax_loss(z, y_one_hot):
    shifted = z - z.max(axis=1, keepdims=True)
    return np.mean(np.log(np.exp(shifted).sum(axis=1)) - (shifted * y_one_hot).sum(axis=1))


def test_softmax_loss_ndl_parse_mnist():
    X, y = parse_mnist(TEST_IMAGES, TEST_LABELS)
    assert X.dtype == np.float32 and y.dtype == np.uint8
    assert X.shape == (10000, 784) and y.shape == (10000,)
    assert X.min() == 0.0 and X.max() == 1.0
    np.testing.assert_allclose(X.sum(dtype=np.float64), MNIST_TEST_PIXEL_SUM, rtol=1e-6)
    np.testing.assert_array_equal(y[:12], MNIST_TEST_FIRST_LABELS)


def test_softmax_loss_ndl_value():
    z = normal((6, 5), 91, np.float32) * 2
    y = np.array([0, 4, 2, 2, 1, 3])
    loss = softmax_loss(T(z), T(one_hot(y, 5)))
    assert isinstance(loss, ndl.Tensor)
    np.testing.assert_allclose(loss.numpy(), SOFTMAX_LOSS_VALUE, rtol=1e-5)


def test_softmax_loss_ndl_uniform_logits():
    loss = softmax_loss(T(np.zeros((4, 10), np.float32)), T(one_hot(np.array([1, 5, 9, 0]), 10)))
    np.testing.assert_allclose(loss.numpy(), np.log(10), rtol=1e-6)


def test_softmax_loss_ndl_gradient():
    z = normal((4, 3), 92)
    y = one_hot(np.array([2, 0, 1, 1]), 3, np.float64)
    Z = T(z)
    softmax_loss(Z, T(y)).backward()
    (want,) = numeric_gradients(lambda z: numpy_softmax_loss(z, y), [z], 1.0)
    np.testing.assert_allclose(Z.grad.numpy(), want, rtol=1e-5, atol=1e-8)


MNIST_TEST_PIXEL_SUM = 1038914.5186
MNIST_TEST_FIRST_LABELS = [7, 2, 1, 0, 4, 1, 4, 9, 5, 9, 0, 6]
SOFTMAX_LOSS_VALUE = 2.1572649


# ---------------------------------------------------------------- Q6 nn_epoch_ndl

def test_nn_epoch_ndl_relu_compute():
    result = ndl.relu(T(ints((3, 4), 101)))
    np.testing.assert_array_equal(result.numpy(), RELU_EXPECTED)


def test_nn_epoch_ndl_relu_gradient():
    x = normal((3, 4), 102)
    x[np.abs(x) < 1e-3] = 0.5  # keep clear of the kink at 0
    check_gradient(ndl.ReLU(), lambda a: np.maximum(a, 0), x)


def small_network(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=10).astype(np.uint8)
    W1 = ndl.Tensor(rng.standard_normal((5, 4)).astype(np.float32) / 2)
    W2 = ndl.Tensor(rng.standard_normal((4, 3)).astype(np.float32) / 2)
    return X, y, W1, W2


def test_nn_epoch_ndl_small_batches():
    X, y, W1, W2 = small_network(103)
    W1, W2 = nn_epoch(X, y, W1, W2, lr=0.5, batch=4)  # batches of 4, 4, then 2
    assert W1.dtype == np.float32 and W2.dtype == np.float32
    np.testing.assert_allclose(W1.numpy(), NN_SMALL_W1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(W2.numpy(), NN_SMALL_W2, rtol=1e-4, atol=1e-5)


def test_nn_epoch_ndl_mnist():
    X, y = parse_mnist(TEST_IMAGES, TEST_LABELS)
    rng = np.random.default_rng(104)
    W1 = ndl.Tensor(rng.standard_normal((784, 60)).astype(np.float32) / np.sqrt(60))
    W2 = ndl.Tensor(rng.standard_normal((60, 10)).astype(np.float32) / np.sqrt(10))
    W1, W2 = nn_epoch(X[:5000], y[:5000], W1, W2, lr=0.15, batch=50)
    np.testing.assert_allclose(np.linalg.norm(W1.numpy()), NN_MNIST_NORMS[0], rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(W2.numpy()), NN_MNIST_NORMS[1], rtol=1e-5)
    logits = ndl.relu(ndl.Tensor(X[5000:]) @ W1) @ W2
    loss, err = loss_err(logits, y[5000:])
    np.testing.assert_allclose([loss, err], NN_MNIST_LOSS_ERR, rtol=1e-4)


RELU_EXPECTED = [[0, 4, 2, 0], [0, 3, 0, 1], [1, 0, 0, 4]]
NN_SMALL_W1 = [
    [0.3486489, 0.3481134, -1.0840007, 0.5723897],
    [0.1066579, 0.2760847, -0.2417057, -0.0179617],
    [1.0700853, 0.0318406, -0.253247, -0.2508701],
    [0.5410281, -0.7543446, -0.3466453, -0.4707789],
    [1.323252, 0.7797401, -0.05191, 0.1340025],
]
NN_SMALL_W2 = [
    [0.3355983, -0.4759001, -0.2725869],
    [0.9137508, -0.063285, -0.2390169],
    [0.1190368, 0.9277244, 0.0955191],
    [-0.2770892, -0.1065097, -0.1007505],
]
NN_MNIST_NORMS = [28.177823, 8.153686]
NN_MNIST_LOSS_ERR = [0.537815, 0.1758]


# ---------------------------------------------------------------- submission
# Not tests: `make submit KEY=... Q=forward` runs submit_forward and sends
# each value to the server, which compares it with the instructor's answer.
# The inputs differ from the tests above.

def submit_forward():
    mugrade.submit(ndl.power_scalar(T(ints((3, 2), 201)), 2).numpy())
    mugrade.submit(ndl.power(T(positive((2, 2), 202)), T(positive((2, 2), 203))).numpy())
    mugrade.submit(ndl.divide(T(ints((2, 3), 204)), T(positive((2, 3), 205))).numpy())
    mugrade.submit(ndl.divide_scalar(T(ints((4,), 206)), 3.0).numpy())
    mugrade.submit(ndl.matmul(T(ints((2, 2, 3), 207)), T(ints((1, 3, 2), 208))).numpy())
    mugrade.submit(ndl.summation(T(ints((2, 3, 2), 209)), axes=(1, 2)).numpy())
    mugrade.submit(ndl.broadcast_to(T(ints((2, 1), 210)), (3, 2, 2)).numpy())
    mugrade.submit(ndl.reshape(T(ints((3, 4), 211)), (2, 2, 3)).numpy())
    mugrade.submit(ndl.negate(T(ints((5,), 212))).numpy())
    mugrade.submit(ndl.transpose(T(ints((2, 2, 3), 213)), axes=(1, 2)).numpy())
    mugrade.submit(ndl.log(T(positive((3,), 214))).numpy())
    mugrade.submit(ndl.exp(T(ints((2, 2), 215) / 3)).numpy())


def _gradients(op, *arrays, seed):
    inputs = [ndl.Tensor(np.array(a, dtype=np.float64)) for a in arrays]
    node = op(*inputs)
    out_grad = ndl.Tensor(normal(node.shape, seed))
    return [g.numpy() for g in op.gradient_as_tuple(out_grad, node)]


def submit_backward():
    mugrade.submit(_gradients(ndl.PowerScalar(4), normal((2, 2), 221), seed=1))
    mugrade.submit(_gradients(ndl.EWisePow(), positive((2, 3), 222), normal((3,), 223), seed=2))
    mugrade.submit(_gradients(ndl.EWiseDiv(), normal((3,), 224), positive((3,), 225), seed=3))
    mugrade.submit(_gradients(ndl.DivScalar(0.6), normal((2, 2), 226), seed=4))
    mugrade.submit(_gradients(ndl.MatMul(), normal((3, 2, 4), 227), normal((4, 3), 228), seed=5))
    mugrade.submit(_gradients(ndl.Summation((1,)), normal((3, 4), 229), seed=6))
    mugrade.submit(_gradients(ndl.BroadcastTo((2, 3, 3)), normal((3, 1), 230), seed=7))
    mugrade.submit(_gradients(ndl.Reshape((6,)), normal((3, 2), 231), seed=8))
    mugrade.submit(_gradients(ndl.Negate(), normal((4,), 232), seed=9))
    mugrade.submit(_gradients(ndl.Transpose((1, 2)), normal((2, 3, 4), 233), seed=10))
    mugrade.submit(_gradients(ndl.Log(), positive((2, 2), 234, np.float64), seed=11))
    mugrade.submit(_gradients(ndl.Exp(), normal((3,), 235), seed=12))


def submit_topo_sort():
    rng = np.random.default_rng(241)
    for size in (5, 12, 30):
        nodes = [T(np.array([float(i)])) for i in range(3)]
        for _ in range(size):
            a, b = (nodes[i] for i in rng.integers(0, len(nodes), 2))
            nodes.append(a * b if rng.random() < 0.5 else a + 1.0)
        index = {id(node): i for i, node in enumerate(nodes)}
        order = ndl.autograd.find_topo_sort([nodes[-1]])
        mugrade.submit([index[id(node)] for node in order])


def submit_compute_gradient():
    x, z = T(normal((3,), 251)), T(normal((3,), 252))
    y = x * x * z + z * 2.0
    y.backward()
    mugrade.submit([x.grad.numpy(), z.grad.numpy()])
    g = x.grad
    g.backward()
    mugrade.submit([x.grad.numpy(), z.grad.numpy()])
    A, B = T(normal((2, 3), 253)), T(normal((3, 2), 254))
    ndl.summation(ndl.exp(ndl.matmul(A, B)) / 2.0).backward()
    mugrade.submit([A.grad.numpy(), B.grad.numpy()])


def submit_softmax_loss_ndl():
    X, y = parse_mnist(TEST_IMAGES, TEST_LABELS)
    mugrade.submit([X.shape[0], X.shape[1], float(X[100:200].sum()), y[:50].tolist()])
    z = normal((8, 10), 261, np.float32)
    mugrade.submit(float(softmax_loss(T(z), T(one_hot(y[:8], 10))).numpy()))
    Z = T(normal((3, 4), 262))
    softmax_loss(Z, T(one_hot(np.array([3, 0, 1]), 4, np.float64))).backward()
    mugrade.submit(Z.grad.numpy())


def submit_nn_epoch_ndl():
    mugrade.submit(ndl.relu(T(ints((4, 3), 271))).numpy())
    X, y, W1, W2 = small_network(272)
    W1, W2 = nn_epoch(X, y, W1, W2, lr=0.3, batch=3)
    mugrade.submit([W1.numpy(), W2.numpy()])
    X, y = parse_mnist(TEST_IMAGES, TEST_LABELS)
    rng = np.random.default_rng(273)
    W1 = ndl.Tensor(rng.standard_normal((784, 30)).astype(np.float32) / np.sqrt(30))
    W2 = ndl.Tensor(rng.standard_normal((30, 10)).astype(np.float32) / np.sqrt(10))
    W1, W2 = nn_epoch(X[-2000:], y[-2000:], W1, W2, lr=0.1, batch=40)
    mugrade.submit([float(np.linalg.norm(W1.numpy())), float(np.linalg.norm(W2.numpy()))])
