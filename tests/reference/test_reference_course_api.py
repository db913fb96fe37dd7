"""The reference is a drop-in for the course's needle API: what the course's
public tests and a correct student autograd rely on holds on reference/.

The course's gradient check with backward=True differentiates a function
with respect to every argument and reads each argument's `.grad`; the
course's reverse pass gives every node of the topological order an adjoint
(constants included), and every op's `gradient` returns one Tensor per input.
"""
import numpy as np
import pytest


def course_gradient_check(ndl, f, *args, tol=1e-6, backward=False, **kwargs):
    """The course's tests/hw1 gradient_check, line for line in behaviour:
    central differences of f perturbing each entry of every argument in
    place, against the op's gradient_as_tuple or against `.grad` of each
    argument after backward()."""
    eps = 1e-4
    numerical_grads = [np.zeros(a.shape) for a in args]
    for i in range(len(args)):
        for j in range(args[i].realize_cached_data().size):
            args[i].realize_cached_data().flat[j] += eps
            f1 = float(f(*args, **kwargs).numpy().sum())
            args[i].realize_cached_data().flat[j] -= 2 * eps
            f2 = float(f(*args, **kwargs).numpy().sum())
            args[i].realize_cached_data().flat[j] += eps
            numerical_grads[i].flat[j] = (f1 - f2) / (2 * eps)
    if not backward:
        out = f(*args, **kwargs)
        computed_grads = [x.numpy() for x in out.op.gradient_as_tuple(ndl.Tensor(np.ones(out.shape)), out)]
    else:
        out = f(*args, **kwargs).sum()
        out.backward()
        computed_grads = [a.grad.numpy() for a in args]
    error = sum(np.linalg.norm(computed_grads[i] - numerical_grads[i]) for i in range(len(args)))
    assert error < tol
    return computed_grads


def one_hot(labels, k, dtype):
    out = np.zeros((len(labels), k), dtype=dtype)
    out[np.arange(len(labels)), labels] = 1
    return out


# softmax_loss, as the course's test_softmax_loss_ndl checks it.

def test_course_gradient_check_of_softmax_loss_wrt_both_arguments(ndl, simple_ml):
    rng = np.random.default_rng(5)
    Zsmall = ndl.Tensor(rng.standard_normal((16, 10)).astype(np.float32))
    ysmall = ndl.Tensor(one_hot(rng.integers(0, 10, 16), 10, np.float64))  # np.zeros' float64, as the course
    grad_z, grad_y = course_gradient_check(ndl, simple_ml.softmax_loss, Zsmall, ysmall, tol=0.01, backward=True)
    # The loss is linear in the labels: d loss / d y = -Z / batch exactly.
    np.testing.assert_allclose(grad_y, -Zsmall.numpy() / 16, rtol=1e-6)
    assert grad_z.shape == (16, 10)


def label_loss(ndl, label_term):
    """softmax_loss with its true-logit term computed by label_term(Z, y)."""
    def loss(Z, y):
        lse = ndl.log(ndl.summation(ndl.exp(Z), axes=(1,)))
        return (ndl.summation(lse) - ndl.summation(label_term(Z, y))) / Z.shape[0]
    return loss


def test_course_gradient_check_fails_on_a_wrong_label_gradient(ndl):
    """The check above can fail: a label adjoint 1% off does."""
    class OffMultiply(ndl.autograd.TensorOp):
        def compute(self, a, b):
            return a * b

        def gradient(self, out_grad, node):
            a, b = node.inputs
            return out_grad * b, out_grad * a * 1.01

    rng = np.random.default_rng(5)
    Z = ndl.Tensor(rng.standard_normal((16, 10)).astype(np.float32))
    y = ndl.Tensor(one_hot(rng.integers(0, 10, 16), 10, np.float64))
    with pytest.raises(AssertionError):
        course_gradient_check(ndl, label_loss(ndl, lambda z, t: OffMultiply()(z, t)), Z, y, tol=0.01, backward=True)
    course_gradient_check(ndl, label_loss(ndl, lambda z, t: z * t), Z, y, tol=0.01, backward=True)


def test_course_gradient_check_fails_on_labels_taken_out_of_the_graph(ndl):
    rng = np.random.default_rng(5)
    Z = ndl.Tensor(rng.standard_normal((16, 10)).astype(np.float32))
    y = ndl.Tensor(one_hot(rng.integers(0, 10, 16), 10, np.float64))
    detached = label_loss(ndl, lambda z, t: z * ndl.Tensor.make_const(t.numpy()))
    with pytest.raises(AttributeError, match="grad"):
        course_gradient_check(ndl, detached, Z, y, tol=0.01, backward=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64])
def test_softmax_loss_takes_float_or_int_labels(ndl, simple_ml, dtype):
    rng = np.random.default_rng(6)
    Z = rng.standard_normal((8, 5)).astype(np.float32)
    labels = rng.integers(0, 5, 8)
    z, y = ndl.Tensor(Z), ndl.Tensor(one_hot(labels, 5, dtype))
    loss = simple_ml.softmax_loss(z, y)
    shifted = Z.astype(np.float64) - Z.max(axis=1, keepdims=True)
    want = np.mean(np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(8), labels])
    np.testing.assert_allclose(float(loss.numpy()), want, rtol=1e-6)
    loss.backward()
    softmax = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(z.grad.numpy(), (softmax - one_hot(labels, 5, np.float64)) / 8, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(y.grad.numpy(), -Z / 8, rtol=1e-6)


def test_course_softmax_loss_values(ndl, simple_ml, mnist_train):
    """The two loss values the course's test_softmax_loss_ndl asserts."""
    _, y = mnist_train
    np.random.seed(0)
    labels = ndl.Tensor(one_hot(y, 10, np.float64))
    Z = ndl.Tensor(np.zeros((y.shape[0], 10)).astype(np.float32))
    np.testing.assert_allclose(simple_ml.softmax_loss(Z, labels).numpy(), 2.3025850, rtol=1e-6, atol=1e-6)
    Z = ndl.Tensor(np.random.randn(y.shape[0], 10).astype(np.float32))
    np.testing.assert_allclose(simple_ml.softmax_loss(Z, labels).numpy(), 2.7291998, rtol=1e-6, atol=1e-6)


# Every op: one Tensor per input from `gradient`, and a `.grad` on every
# argument after backward, whether or not the argument requires a gradient.

def positive(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


# name -> (function of Tensors, input arrays); float64, so that the course's
# default tolerance of 1e-6 applies.
OPS = {
    "add": (lambda ndl, a, b: ndl.add(a, b), [normal((3, 4), 1), normal((3, 4), 2)]),
    "add_scalar": (lambda ndl, a: ndl.add_scalar(a, 1.5), [normal((3, 4), 3)]),
    "multiply": (lambda ndl, a, b: ndl.multiply(a, b), [normal((3, 4), 4), normal((3, 4), 5)]),
    "mul_scalar": (lambda ndl, a: ndl.mul_scalar(a, -2.5), [normal((3, 4), 6)]),
    "divide": (lambda ndl, a, b: ndl.divide(a, b), [normal((3, 4), 7), positive((3, 4), 8)]),
    "divide_scalar": (lambda ndl, a: ndl.divide_scalar(a, 4.0), [normal((3, 4), 9)]),
    "power_scalar": (lambda ndl, a: ndl.power_scalar(a, 3), [normal((3, 4), 10)]),
    "power": (lambda ndl, a, b: ndl.power(a, b), [positive((3, 4), 11), normal((3, 4), 12)]),
    "matmul": (lambda ndl, a, b: ndl.matmul(a, b), [normal((4, 3), 13), normal((3, 5), 14)]),
    "matmul_batched": (lambda ndl, a, b: ndl.matmul(a, b), [normal((2, 4, 3), 15), normal((2, 3, 5), 16)]),
    "matmul_2d_by_batched": (lambda ndl, a, b: ndl.matmul(a, b), [normal((4, 3), 17), normal((2, 3, 5), 18)]),
    "summation_axes": (lambda ndl, a: ndl.summation(a, axes=(1,)), [normal((3, 4, 2), 19)]),
    "summation_all": (lambda ndl, a: ndl.summation(a), [normal((3, 4), 20)]),
    "broadcast_to": (lambda ndl, a: ndl.broadcast_to(a, (3, 4)), [normal((3, 1), 21)]),
    "reshape": (lambda ndl, a: ndl.reshape(a, (2, 6)), [normal((3, 4), 22)]),
    "transpose": (lambda ndl, a: ndl.transpose(a), [normal((2, 3, 4), 23)]),
    "transpose_axes": (lambda ndl, a: ndl.transpose(a, axes=(0, 2)), [normal((2, 3, 4), 24)]),
    "negate": (lambda ndl, a: ndl.negate(a), [normal((3, 4), 25)]),
    "log": (lambda ndl, a: ndl.log(a), [positive((3, 4), 26)]),
    "exp": (lambda ndl, a: ndl.exp(a), [normal((3, 4), 27)]),
    "relu": (lambda ndl, a: ndl.relu(a), [normal((3, 4), 28)]),
}


def requires_grad_patterns():
    """(op, which inputs require a gradient): one constant input at a time,
    as long as another input keeps the result in the graph."""
    for name, (_, arrays) in sorted(OPS.items()):
        yield name, (True,) * len(arrays)
        if len(arrays) == 2:
            yield name, (False, True)
            yield name, (True, False)


PATTERNS = list(requires_grad_patterns())
PATTERN_IDS = [f"{name}-{''.join('v' if r else 'c' for r in flags)}" for name, flags in PATTERNS]


def tensors(ndl, name, flags):
    return [ndl.Tensor(a.copy(), requires_grad=r) for a, r in zip(OPS[name][1], flags)]


@pytest.mark.parametrize("name,flags", PATTERNS, ids=PATTERN_IDS)
def test_gradient_returns_one_tensor_per_input(ndl, name, flags):
    fn = OPS[name][0]
    args = tensors(ndl, name, flags)
    out = fn(ndl, *args)
    grads = out.op.gradient_as_tuple(ndl.Tensor(np.ones(out.shape)), out)
    assert len(grads) == len(args)
    for arg, grad in zip(args, grads):
        assert isinstance(grad, ndl.Tensor), f"{name}: gradient gave {type(grad).__name__}, not a Tensor"
        assert grad.shape == arg.shape
    course_gradient_check(ndl, lambda *ts: fn(ndl, *ts), *args)


@pytest.mark.parametrize("name,flags", PATTERNS, ids=PATTERN_IDS)
def test_backward_gives_every_argument_a_grad(ndl, name, flags):
    fn = OPS[name][0]
    course_gradient_check(ndl, lambda *ts: fn(ndl, *ts), *tensors(ndl, name, flags), backward=True)


def test_a_constant_data_batch_gets_its_grad_when_read(ndl, simple_ml):
    """As in a training step: the batch is a constant leaf; its adjoint is
    there after backward and right, although training never reads it."""
    X = normal((6, 4), 30)
    W1, W2 = ndl.Tensor(normal((4, 5), 31)), ndl.Tensor(normal((5, 3), 32))
    batch = ndl.Tensor.make_const(X.copy())
    labels = ndl.Tensor.make_const(one_hot([0, 2, 1, 1, 0, 2], 3, np.float64))
    loss = simple_ml.softmax_loss(ndl.relu(batch @ W1) @ W2, labels)
    loss.backward()

    def loss_of(x):
        return simple_ml.softmax_loss(ndl.relu(ndl.Tensor(x) @ W1) @ W2, labels).numpy()

    numeric = np.zeros_like(X)
    for j in range(X.size):
        up, down = X.copy(), X.copy()
        up.flat[j] += 1e-6
        down.flat[j] -= 1e-6
        numeric.flat[j] = (loss_of(up) - loss_of(down)) / 2e-6
    np.testing.assert_allclose(batch.grad.numpy(), numeric, rtol=1e-5, atol=1e-8)
    assert labels.grad.shape == (6, 3)


# A student's reverse pass, written as many do: Python's built-in sum of the
# partial adjoints, and gradient_as_tuple for every node of the order.

def student_backward(ndl, output, out_grad):
    grads = {output: [out_grad]}
    for node in reversed(ndl.autograd.find_topo_sort([output])):
        node.grad = sum(grads[node])  # 0 + first + ...: needs Tensors, never None
        if node.op is None:
            continue
        for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(node.grad, node)):
            grads.setdefault(inp, []).append(partial)


def test_a_student_autograd_summing_with_builtin_sum_runs_on_the_reference_ops(ndl):
    x = ndl.Tensor(normal((4, 3), 40), requires_grad=False)  # a data batch
    w = ndl.Tensor(normal((3, 2), 41))
    v = ndl.Tensor(normal((3, 2), 42))
    out = ndl.summation(ndl.relu(x @ w) * (x @ v) + x @ w)  # x feeds three MatMuls
    student_backward(ndl, out, ndl.Tensor(np.array(1.0)))
    X, W, V = x.numpy(), w.numpy(), v.numpy()
    mask = (X @ W > 0).astype(float)
    np.testing.assert_allclose(w.grad.numpy(), X.T @ (mask * (X @ V) + 1), rtol=1e-10)
    np.testing.assert_allclose(v.grad.numpy(), X.T @ np.maximum(X @ W, 0), rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), (mask * (X @ V) + 1) @ W.T + np.maximum(X @ W, 0) @ V.T,
                               rtol=1e-10)


def test_builtin_sum_fails_on_a_none_partial(ndl):
    """Why the gradients must be Tensors: the student pass above breaks on None."""
    with pytest.raises(TypeError):
        sum([None])


# The Tensor API the course's tests and notebook use.

def leaf(ndl, *values, requires_grad=True):
    return ndl.Tensor(np.array(values, dtype=np.float64), requires_grad=requires_grad)


# expression -> the same in numpy, for Tensors and for arrays alike.
BINARY = ["a + b", "a - b", "a * b", "a / b", "a ** b", "3 * a * a + b"]
UNARY = ["a + 2", "2 + a", "a - 2", "a * 3",  # no "2 - a": the course's Tensor has no __rsub__
         "3 * a", "a / 4", "a ** 2", "-a"]


@pytest.mark.parametrize("expr", BINARY + UNARY)
def test_tensor_operators_compute_and_differentiate(ndl, expr):
    if expr in BINARY:
        fn = eval(f"lambda a, b: {expr}")  # noqa: S307 (a fixed table of expressions)
        args = [ndl.Tensor(positive((2, 3), 50)), ndl.Tensor(positive((2, 3), 51))]
    else:
        fn = eval(f"lambda a: {expr}")  # noqa: S307
        args = [ndl.Tensor(positive((2, 3), 50))]
    out = fn(*args)
    assert isinstance(out, ndl.Tensor) and out.requires_grad
    np.testing.assert_allclose(out.numpy(), fn(*[t.numpy() for t in args]), rtol=1e-12)
    course_gradient_check(ndl, fn, *args, backward=True)


def test_matmul_operator_and_methods(ndl):
    a, b = ndl.Tensor(normal((3, 4), 52)), ndl.Tensor(normal((4, 2), 53))
    np.testing.assert_allclose((a @ b).numpy(), a.numpy() @ b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.matmul(b).numpy(), a.numpy() @ b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.sum((1,)).numpy(), a.numpy().sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(a.sum().numpy(), a.numpy().sum(), rtol=1e-12)
    np.testing.assert_array_equal(a.reshape((2, 6)).numpy(), a.numpy().reshape(2, 6))
    np.testing.assert_array_equal(a.transpose().numpy(), a.numpy().T)
    np.testing.assert_array_equal(a.transpose((0, 1)).numpy(), a.numpy().T)
    row = ndl.Tensor(normal((1, 4), 54))
    np.testing.assert_array_equal(row.broadcast_to((3, 4)).numpy(), np.repeat(row.numpy(), 3, axis=0))
    course_gradient_check(ndl, lambda x, y: (x @ y).sum((0,)).reshape((1, 2)).broadcast_to((3, 2)).transpose(),
                          a, b, backward=True)


def test_backward_without_out_grad_differentiates_the_sum(ndl):
    a = leaf(ndl, 1.0, 2.0, 3.0)
    (a * a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 4.0, 6.0])


def test_backward_with_out_grad_weights_the_entries(ndl):
    a = leaf(ndl, 1.0, 2.0, 3.0)
    (a * a).backward(ndl.Tensor(np.array([1.0, 0.5, -1.0])))
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0, -6.0])


def test_every_node_of_the_graph_gets_a_grad(ndl):
    """The course's reverse pass walks the whole topological order: constants
    and intermediate nodes have adjoints too."""
    a, c = leaf(ndl, 1.0, 2.0), leaf(ndl, 5.0, 7.0, requires_grad=False)
    b = a * c
    out = ndl.summation(b + c)
    out.backward()
    for node, want in ((a, [5.0, 7.0]), (c, [2.0, 3.0]), (b, [1.0, 1.0]), (out, 1.0)):
        np.testing.assert_allclose(node.grad.numpy(), want)


def test_data_and_detach(ndl):
    a = leaf(ndl, 1.0, 2.0)
    b = a * 2.0
    for copy in (b.data, b.detach()):
        assert isinstance(copy, ndl.Tensor) and copy.is_leaf() and not copy.requires_grad
        assert copy.numpy() is b.numpy()
    a.data = ndl.Tensor(np.array([3.0, 4.0]))
    np.testing.assert_array_equal(a.numpy(), [3.0, 4.0])
    assert a.requires_grad


def test_requires_grad_propagates(ndl):
    v, c = leaf(ndl, 1.0, 2.0), leaf(ndl, 3.0, 4.0, requires_grad=False)
    assert (v * c).requires_grad and (c * v).requires_grad and (v + 1).requires_grad
    const = c * c + 1
    assert not const.requires_grad and const.is_leaf()
    assert ndl.Tensor([1.0]).requires_grad  # the constructor's default


# nn_epoch, as the course's test_nn_epoch_ndl checks it.

def test_course_nn_epoch_step_is_the_loss_gradient(ndl, simple_ml):
    np.random.seed(0)
    X = np.random.randn(50, 5).astype(np.float32)
    y = np.random.randint(3, size=(50,)).astype(np.uint8)
    W1_0 = np.random.randn(5, 10).astype(np.float32) / np.sqrt(10)
    W2_0 = np.random.randn(10, 3).astype(np.float32) / np.sqrt(3)
    labels = ndl.Tensor(one_hot(y, 3, np.float64))

    def loss(W1, W2):
        return float(simple_ml.softmax_loss(ndl.relu(ndl.Tensor(X) @ ndl.Tensor(W1)) @ ndl.Tensor(W2), labels).numpy())

    def numeric(W, of):
        grad = np.zeros(W.shape)
        for j in range(W.size):
            up, down = W.astype(np.float64), W.astype(np.float64)
            up.flat[j] += 1e-5
            down.flat[j] -= 1e-5
            grad.flat[j] = (of(up) - of(down)) / 2e-5
        return grad

    dW1 = numeric(W1_0, lambda w: loss(w, W2_0))
    dW2 = numeric(W2_0, lambda w: loss(W1_0, w))
    W1, W2 = simple_ml.nn_epoch(X, y, ndl.Tensor(W1_0), ndl.Tensor(W2_0), lr=1.0, batch=50)
    assert isinstance(W1, ndl.Tensor) and isinstance(W2, ndl.Tensor)
    np.testing.assert_allclose(dW1, W1_0 - W1.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dW2, W2_0 - W2.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_course_full_epoch_figures(ndl, simple_ml, mnist_train):
    """The course's full-epoch check, with its weights as written there: a
    float32 array divided by np.sqrt(n) is float64 under numpy 2."""
    X, y = mnist_train
    np.random.seed(0)
    W1 = ndl.Tensor(np.random.randn(X.shape[1], 100).astype(np.float32) / np.sqrt(100))
    W2 = ndl.Tensor(np.random.randn(100, 10).astype(np.float32) / np.sqrt(10))
    W1, W2 = simple_ml.nn_epoch(X, y, W1, W2, lr=0.2, batch=100)
    assert isinstance(W1, ndl.Tensor) and isinstance(W2, ndl.Tensor)
    np.testing.assert_allclose(np.linalg.norm(W1.numpy()), 28.437788, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(W2.numpy()), 10.455095, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(simple_ml.loss_err(ndl.relu(ndl.Tensor(X) @ W1) @ W2, y),
                               (0.19770025, 0.06006667), rtol=1e-4, atol=1e-4)


def test_a_deferred_adjoint_can_be_differentiated_again(ndl):
    """The constant's adjoint is built lazily, yet it is a graph node like any
    other: its own gradient with respect to the weights comes out right."""
    x = ndl.Tensor(normal((4, 3), 60), requires_grad=False)
    w = ndl.Tensor(normal((3, 2), 61))
    ndl.summation(x @ w).backward()
    assert x.grad.requires_grad
    np.testing.assert_allclose(x.grad.numpy(), np.ones((4, 2)) @ w.numpy().T, rtol=1e-12)
    ndl.summation(x.grad * ndl.Tensor(normal((4, 3), 62), requires_grad=False)).backward()
    # sum(V * (1 @ w^T)) = sum_ij V_ij sum_k w_jk: d/dw_jk = sum_i V_ij
    np.testing.assert_allclose(w.grad.numpy(), np.repeat(normal((4, 3), 62).sum(0)[:, None], 2, axis=1),
                               rtol=1e-12)
