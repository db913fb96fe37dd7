"""The reference reproduces the known-good one-epoch figures."""
import numpy as np
import pytest


@pytest.mark.slow
def test_nn_epoch_full_mnist_figures(ndl, simple_ml, mnist_train):
    X, y = mnist_train
    np.random.seed(0)
    W1 = ndl.Tensor(np.random.randn(784, 100).astype(np.float32) / np.float32(np.sqrt(100)))
    W2 = ndl.Tensor(np.random.randn(100, 10).astype(np.float32) / np.float32(np.sqrt(10)))
    W1, W2 = simple_ml.nn_epoch(X, y, W1, W2, lr=0.2, batch=100)
    assert W1.dtype == np.float32 and W2.dtype == np.float32
    assert abs(np.linalg.norm(W1.numpy()) - 28.437788) <= 1e-5 * 28.437788
    assert abs(np.linalg.norm(W2.numpy()) - 10.455095) <= 1e-5 * 10.455095
    logits = ndl.relu(ndl.Tensor(X) @ W1) @ W2
    _, err = simple_ml.loss_err(logits, y)
    assert round(float(err), 4) == 0.0601
