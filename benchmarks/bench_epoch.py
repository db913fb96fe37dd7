"""Time the reference nn_epoch against a plain-numpy epoch of the same math.

Run as a script from any directory: `python benchmarks/bench_epoch.py REFERENCE_DIR
[PAIRS]`. It prints one JSON line of timings (CPU seconds per epoch of 60,000
examples, and the same figures in wall seconds as wall_*). It imports the needle
found under REFERENCE_DIR, so the grading parent never imports it.

How it measures, on a shared machine whose load changes by the second: both
epochs train on the same first CHUNK examples, from the same weights, in PAIRS
rounds that alternate which goes first, each round a twentieth of a second or
so. The figure is the ratio of each side's fastest round: a neighbour's load
only ever adds time, and it adds more to the interpreter's work (the needle
side) than to the matrix products both sides share, so a median ratio drifts
up with the load while the fastest rounds stay put. The median of the
per-round ratios is reported beside it.
"""

import json
import os
import statistics
import sys
import time

import numpy as np

EXAMPLES = 60_000  # one epoch of MNIST: the figures are per epoch
CHUNK = 6_000  # examples per timed round: 60 batches of 100
BATCH = 100
LR = 0.2


def numpy_epoch(X, y, W1, W2, lr, batch):
    """The hw0-style epoch: forward, hand-written softmax gradient, SGD step."""
    for start in range(0, X.shape[0], batch):
        Xb, yb = X[start : start + batch], y[start : start + batch]
        Z1 = np.maximum(Xb @ W1, 0)
        logits = Z1 @ W2
        E = np.exp(logits - logits.max(axis=1, keepdims=True))
        G2 = E / E.sum(axis=1, keepdims=True)
        G2[np.arange(yb.shape[0]), yb] -= 1
        G2 /= yb.shape[0]
        G1 = (Z1 > 0) * (G2 @ W2.T)
        W1 = W1 - lr * (Xb.T @ G1)
        W2 = W2 - lr * (Z1.T @ G2)
    return W1, W2


def initial_weights():
    rng = np.random.RandomState(0)
    W1 = rng.randn(784, 100).astype(np.float32) / np.float32(10)
    W2 = rng.randn(100, 10).astype(np.float32) / np.float32(np.sqrt(10))
    return W1, W2


def main(reference, pairs):
    os.chdir(reference)
    sys.path += ["python", "apps"]
    import needle as ndl
    import simple_ml

    X, y = simple_ml.parse_mnist("data/train-images-idx3-ubyte.gz", "data/train-labels-idx1-ubyte.gz")
    X, y = X[:CHUNK], y[:CHUNK]
    W1, W2 = initial_weights()
    sides = {
        "numpy": lambda: numpy_epoch(X, y, W1, W2, LR, BATCH),
        "needle": lambda: simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=LR, batch=BATCH),
    }
    # CPU seconds of this process (BLAS runs on this one thread) as well as
    # wall seconds: the wall clock also counts the time spent waiting for a core.
    cpu = {"numpy": [], "needle": []}
    wall = {"numpy": [], "needle": []}
    for side in sides.values():  # warm caches and allocator once, untimed
        side()
    for round_ in range(pairs):
        order = ("numpy", "needle") if round_ % 2 == 0 else ("needle", "numpy")
        for name in order:
            start = (time.process_time(), time.perf_counter())
            sides[name]()
            cpu[name].append(time.process_time() - start[0])
            wall[name].append(time.perf_counter() - start[1])
    print(json.dumps({**summary(cpu), **{"wall_" + k: v for k, v in summary(wall).items()}}))


def summary(times, scale=EXAMPLES / CHUNK):
    """Per epoch (`scale` rounds' worth): each side's fastest round, their
    ratio, and the median and spread of the per-round ratios."""
    numpy_s, needle_s = times["numpy"], times["needle"]
    ratios = [b / a for a, b in zip(numpy_s, needle_s)]
    return {
        "numpy_s": min(numpy_s) * scale,
        "needle_s": min(needle_s) * scale,
        "ratio": min(needle_s) / min(numpy_s),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
    }


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40)
