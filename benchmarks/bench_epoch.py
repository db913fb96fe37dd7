"""Time one reference nn_epoch against a plain-numpy epoch of the same math.

Run as a script from any directory: `python benchmarks/bench_epoch.py REFERENCE_DIR
[ROUNDS]`. The two epochs alternate, round after round, in this one process so
that machine noise hits both alike; it prints one JSON line of timings
(CPU seconds, and the same figures in wall seconds as wall_*).
It imports the needle found under REFERENCE_DIR, so the grading parent never
imports it.
"""

import json
import os
import statistics
import sys
import time

import numpy as np


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


def main(reference, rounds):
    os.chdir(reference)
    sys.path += ["python", "apps"]
    import needle as ndl
    import simple_ml

    X, y = simple_ml.parse_mnist("data/train-images-idx3-ubyte.gz", "data/train-labels-idx1-ubyte.gz")
    W1, W2 = initial_weights()
    # CPU seconds of this process (BLAS runs on this one thread) as well as
    # wall seconds: on a shared machine the wall clock also counts the time
    # spent waiting for a core, which hits the two epochs unevenly.
    cpu = {"numpy": [], "needle": []}
    wall = {"numpy": [], "needle": []}
    for _ in range(rounds + 1):  # the first round warms caches and is dropped
        marks = [(time.process_time(), time.perf_counter())]
        numpy_epoch(X, y, W1, W2, 0.2, 100)
        marks.append((time.process_time(), time.perf_counter()))
        simple_ml.nn_epoch(X, y, ndl.Tensor(W1), ndl.Tensor(W2), lr=0.2, batch=100)
        marks.append((time.process_time(), time.perf_counter()))
        for clock, times in ((0, cpu), (1, wall)):
            times["numpy"].append(marks[1][clock] - marks[0][clock])
            times["needle"].append(marks[2][clock] - marks[1][clock])
    print(json.dumps({**summary(cpu), **{"wall_" + k: v for k, v in summary(wall).items()}}))


def summary(times):
    """Medians over the timed rounds (the first, warm-up round dropped), and the
    spread of the per-round ratios."""
    numpy_s, needle_s = times["numpy"][1:], times["needle"][1:]
    ratios = [b / a for a, b in zip(numpy_s, needle_s)]
    return {
        "numpy_s": statistics.median(numpy_s),
        "needle_s": statistics.median(needle_s),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
    }


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
