"""The full-MNIST epoch case's criterion (issue 34): 600 float32 SGD steps
are chaotic, so a correct epoch computed in another float width ends up to
about 1% of the weights' norm from the reference's, depending on the
starting weights and on the BLAS kernel (numpy seeds 108 and 114 end 1.07%
and 1.10% away with OPENBLAS_CORETYPE=Haswell, of 72 drawn; 109 and 114
1.18% and 1.10% with this machine's default kernel, of 30: the former 1%
rejected them). The case accepts that and still refuses the real bugs of a
full epoch (shuffled batches, half the learning rate, W2 never updated).
Runs the reference's library in-process."""

import numpy as np
import pytest

from grader.shipped.cases import CASES
from grader.shipped.checks import check

CASE = next(c for c in CASES if c.name == "nn_epoch_ndl_mnist_full")
SEEDS = (108, 109, 114)  # the farthest draws, with either kernel


def weights(seed):
    r = np.random.RandomState(seed)
    W1 = r.randn(784, 100).astype(np.float32) / np.float32(np.sqrt(100))
    W2 = r.randn(100, 10).astype(np.float32) / np.float32(np.sqrt(10))
    return W1, W2


def epoch(ndl, sm, X, y, seed=SEEDS[0], lr=0.2, batch=100, one_hot_64=False, order=None, update_w2=True):
    """A student's nn_epoch, written the usual ways (the course's loss_err builds a float64 one-hot)."""
    W1, W2 = (ndl.Tensor(w) for w in weights(seed))
    order = np.arange(X.shape[0]) if order is None else order
    for start in range(0, X.shape[0], batch):
        rows = order[start : start + batch]
        if one_hot_64:
            y_one_hot = np.zeros((rows.size, 10))
            y_one_hot[np.arange(rows.size), y[rows]] = 1
        else:
            y_one_hot = np.eye(10, dtype=np.float32)[y[rows]]
        loss = sm.softmax_loss(ndl.relu(ndl.Tensor(X[rows]) @ W1) @ W2, ndl.Tensor(y_one_hot))
        loss.backward()
        W1, W2 = (
            ndl.Tensor(W1.numpy() - lr * W1.grad.numpy()),
            ndl.Tensor(W2.numpy() - lr * W2.grad.numpy()) if update_w2 else ndl.Tensor(W2.numpy()),
        )
    return [W1.numpy(), W2.numpy()]


@pytest.fixture(scope="module")
def reference_weights(ndl, simple_ml, mnist_train):
    return epoch(ndl, simple_ml, *mnist_train)


def test_a_correct_epoch_in_float64_passes(ndl, simple_ml, mnist_train):
    for seed in SEEDS:
        expected = epoch(ndl, simple_ml, *mnist_train, seed=seed)
        got = epoch(ndl, simple_ml, *mnist_train, seed=seed, one_hot_64=True)
        assert distance(got, expected) < CASE.rtol / 2, seed  # with room to spare
        assert check(CASE, expected, got).passed


def distance(a, b) -> float:
    return max(np.linalg.norm(np.float64(x) - y) / np.linalg.norm(y) for x, y in zip(a, b))


@pytest.mark.parametrize(
    "bug",
    [
        {"order": np.random.RandomState(0).permutation(60000)},  # shuffled batches
        {"lr": 0.1},  # half the learning rate
        {"update_w2": False},  # W2 never stepped
    ],
    ids=["shuffled", "half lr", "W2 frozen"],
)
def test_the_bugs_of_a_full_epoch_fail(ndl, simple_ml, mnist_train, reference_weights, bug):
    verdict = check(CASE, reference_weights, epoch(ndl, simple_ml, *mnist_train, **bug))
    assert not verdict.passed and "of their norm" in verdict.message
