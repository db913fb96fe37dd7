"""`grader demo`: train one MNIST epoch with the reference and print loss and
error, the quickest check that the reference and the data are in place."""
import subprocess
import sys

from grader import REFERENCE
from grader.core.blas import one_thread_env

SCRIPT = """
import sys, time
sys.path += ["python", "apps"]
import numpy as np
import needle as ndl
from simple_ml import parse_mnist, nn_epoch, loss_err
X, y = parse_mnist("data/train-images-idx3-ubyte.gz", "data/train-labels-idx1-ubyte.gz")
Xt, yt = parse_mnist("data/t10k-images-idx3-ubyte.gz", "data/t10k-labels-idx1-ubyte.gz")
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
    env = one_thread_env()
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=REFERENCE, env=env).returncode
