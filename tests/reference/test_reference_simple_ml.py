"""apps/simple_ml.py of the reference: MNIST parsing, softmax_loss, nn_epoch
on a small problem, loss_err."""
import gzip
import struct

import numpy as np
import pytest

from grader import DATA
from benchmarks.bench_epoch import numpy_epoch


def idx_bytes(magic, dims, payload):
    return struct.pack(">" + "I" * (1 + len(dims)), magic, *dims) + bytes(payload)


def write_gz(path, data):
    with gzip.open(path, "wb") as f:
        f.write(data)
    return str(path)


@pytest.fixture
def tiny_mnist(tmp_path):
    """Two 28x28 images and their labels, as valid gzipped idx files."""
    pixels = [0] * 784 + [255] * 784
    pixels[5] = 51
    images = write_gz(tmp_path / "images.gz", idx_bytes(2051, (2, 28, 28), pixels))
    labels = write_gz(tmp_path / "labels.gz", idx_bytes(2049, (2,), [7, 3]))
    return images, labels


# parse_mnist

def test_parse_mnist_test_set(simple_ml):
    X, y = simple_ml.parse_mnist(str(DATA / "t10k-images-idx3-ubyte.gz"), str(DATA / "t10k-labels-idx1-ubyte.gz"))
    assert X.shape == (10000, 784) and X.dtype == np.float32
    assert y.shape == (10000,) and y.dtype == np.uint8
    assert X.min() == 0.0 and X.max() == 1.0
    assert set(np.unique(y)) == set(range(10))
    assert y[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]  # the well-known first test labels


@pytest.mark.slow
def test_parse_mnist_training_set(mnist_train):
    X, y = mnist_train
    assert X.shape == (60000, 784) and X.dtype == np.float32
    assert y.shape == (60000,) and y.dtype == np.uint8
    assert 0.0 <= X.min() and X.max() <= 1.0
    assert y[:5].tolist() == [5, 0, 4, 1, 9]


def test_parse_mnist_scales_pixels_to_unit_interval(simple_ml, tiny_mnist):
    X, y = simple_ml.parse_mnist(*tiny_mnist)
    assert X.shape == (2, 784) and X.dtype == np.float32
    assert X[0, 5] == np.float32(51 / 255) and X[0, 0] == 0.0 and np.all(X[1] == 1.0)
    assert y.tolist() == [7, 3] and y.dtype == np.uint8


# softmax_loss

def numpy_softmax_loss(Z, y):
    Z = Z.astype(np.float64)
    shifted = Z - Z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=1))
    return np.mean(lse - shifted[np.arange(len(y)), y])


def one_hot(y, k, dtype):
    out = np.zeros((len(y), k), dtype=dtype)
    out[np.arange(len(y)), y] = 1
    return out


def test_softmax_loss_matches_numpy(ndl, simple_ml):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 10)).astype(np.float32)
    y = rng.integers(0, 10, 50)
    loss = simple_ml.softmax_loss(ndl.Tensor(Z), ndl.Tensor(one_hot(y, 10, np.int8)))
    assert loss.shape == () and loss.dtype == np.float32
    np.testing.assert_allclose(float(loss.numpy()), numpy_softmax_loss(Z, y), rtol=1e-6)


def test_softmax_loss_of_huge_logits_does_not_overflow(ndl, simple_ml):
    Z = np.array([[1000.0, 0.0, -1000.0], [0.0, 2000.0, 0.0]], np.float32)
    loss = simple_ml.softmax_loss(ndl.Tensor(Z), ndl.Tensor(one_hot([0, 0], 3, np.int8)))
    np.testing.assert_allclose(float(loss.numpy()), (0.0 + 2000.0) / 2, rtol=1e-6)


def test_softmax_loss_of_uniform_logits_is_log_k(ndl, simple_ml):
    loss = simple_ml.softmax_loss(ndl.Tensor(np.zeros((4, 10), np.float32)),
                                  ndl.Tensor(one_hot([1, 2, 3, 4], 10, np.int8)))
    np.testing.assert_allclose(float(loss.numpy()), np.log(10), rtol=1e-6)


# nn_epoch

def small_problem(seed=0, n=250, d=20, h=8, k=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, k, n).astype(np.uint8)
    W1 = (rng.standard_normal((d, h)) / np.sqrt(h)).astype(np.float32)
    W2 = (rng.standard_normal((h, k)) / np.sqrt(k)).astype(np.float32)
    return X, y, W1, W2


@pytest.mark.parametrize("batch", [50, 100, 64])  # 64 leaves a partial last batch
def test_nn_epoch_matches_a_plain_numpy_epoch(ndl, simple_ml, batch):
    X, y, W1, W2 = small_problem()
    want1, want2 = numpy_epoch(X, y, W1, W2, 0.1, batch)
    got1, got2 = simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=0.1, batch=batch)
    assert isinstance(got1, ndl.Tensor) and got1.dtype == np.float32 and got2.dtype == np.float32
    np.testing.assert_allclose(got1.numpy(), want1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got2.numpy(), want2, rtol=1e-5, atol=1e-6)


def test_nn_epoch_leaves_the_callers_weights_alone(ndl, simple_ml):
    X, y, W1, W2 = small_problem(seed=1)
    T1, T2 = ndl.Tensor(W1), ndl.Tensor(W2)
    simple_ml.nn_epoch(X, y, T1, T2, lr=0.5, batch=50)
    np.testing.assert_array_equal(T1.numpy(), W1)
    np.testing.assert_array_equal(T2.numpy(), W2)


def test_nn_epoch_lowers_the_training_loss(ndl, simple_ml):
    X, y, W1, W2 = small_problem(seed=2)
    before = numpy_softmax_loss(np.maximum(X @ W1, 0) @ W2, y)
    T1, T2 = simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=0.2, batch=25)
    after = numpy_softmax_loss(np.maximum(X @ T1.numpy(), 0) @ T2.numpy(), y)
    assert after < before


# loss_err

def test_loss_err(ndl, simple_ml):
    h = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 5.0], [0.0, 0.0, 1.0]], np.float32)
    y = np.array([0, 1, 0, 0], np.uint8)
    loss, err = simple_ml.loss_err(ndl.Tensor(h), y)
    np.testing.assert_allclose(float(loss), numpy_softmax_loss(h, y), rtol=1e-6)
    assert err == 0.5

