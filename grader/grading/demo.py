"""`grader demo`: train one MNIST epoch with the reference and print loss and
error, the quickest check that the reference and the data are in place
(hw1's data folder, filled first when empty: grader/core/datadir.py)."""

import subprocess
import sys

from grader.core import datadir
from grader.core.assignment import Assignment
from grader.core.blas import one_thread_env

SCRIPT = """
import sys, time
sys.path += ["python", "apps"]
import numpy as np
import needle as ndl
from simple_ml import parse_mnist, nn_epoch, loss_err
data = sys.argv[1]
X, y = parse_mnist(f"{data}/train-images-idx3-ubyte.gz", f"{data}/train-labels-idx1-ubyte.gz")
Xt, yt = parse_mnist(f"{data}/t10k-images-idx3-ubyte.gz", f"{data}/t10k-labels-idx1-ubyte.gz")
rng = np.random.RandomState(0)
W1 = ndl.Tensor(rng.randn(784, 100).astype(np.float32) / np.float32(10))
W2 = ndl.Tensor(rng.randn(100, 10).astype(np.float32) / np.float32(np.sqrt(10)))
start = time.perf_counter()
W1, W2 = nn_epoch(X, y, W1, W2, lr=0.2, batch=100)
took = time.perf_counter() - start
for name, (A, b) in (("train", (X, y)), ("test", (Xt, yt))):
    loss, err = loss_err(ndl.relu(ndl.Tensor(A) @ W1) @ W2, b)
    print(f"{name}: loss {float(loss):.4f}, error {float(err):.4f}")
print(f"one epoch of 60000 examples in {took:.2f} s")
"""


def demo_command(args) -> int:
    hw1 = Assignment.hw1()
    try:
        datadir.ensure(hw1)
    except ValueError as exc:
        print(f"grader demo: {exc}", file=sys.stderr)
        return 1
    env = one_thread_env()
    return subprocess.run([sys.executable, "-c", SCRIPT, str(hw1.data)], cwd=hw1.reference, env=env).returncode
