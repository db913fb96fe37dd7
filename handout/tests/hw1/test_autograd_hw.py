# Generated from reference/tests/hw1/test_autograd_hw.py by `make handout`; do not edit.
"""The submission cases of hw1: `make submit KEY=... Q=forward` runs the
submit_* functions of this file and sends what your code computes to the
grading server, which compares each value with the instructor's answer.

The public cases that `make test` runs, with your points, are the grader's
own: tests/hw1/test_cases.py.
"""
import sys

sys.path.append("./python")
sys.path.append("./apps")

import numpy as np

import mugrade
import needle as ndl
from simple_ml import nn_epoch, parse_mnist, softmax_loss

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


def one_hot(labels, classes, dtype=np.float32):
    out = np.zeros((labels.shape[0], classes), dtype=dtype)
    out[np.arange(labels.shape[0]), labels] = 1
    return out


def small_network(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=10).astype(np.uint8)
    W1 = ndl.Tensor(rng.standard_normal((5, 4)).astype(np.float32) / 2)
    W2 = ndl.Tensor(rng.standard_normal((4, 3)).astype(np.float32) / 2)
    return X, y, W1, W2


# ---------------------------------------------------------------- submission
# Not tests: `make submit KEY=... Q=forward` runs submit_forward and sends
# each value to the server, which compares it with the instructor's answer.

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
