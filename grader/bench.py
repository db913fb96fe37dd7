"""`grader bench`: speed figures, each a ratio of two timings taken side by
side in one run (absolute times on these shared 2-core machines are noisy).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from grader import REFERENCE

EPOCH_TARGET = 1.3  # issue 2: reference nn_epoch at most 1.3x a numpy epoch


def bench_env():
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"  # one BLAS thread: 5x faster than the default here
    return env


def epoch_ratio(rounds):
    """Reference nn_epoch over full MNIST vs plain numpy; True if on target."""
    script = Path(__file__).with_name("bench_epoch.py")
    out = subprocess.run([sys.executable, str(script), str(REFERENCE), str(rounds)],
                         env=bench_env(), capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    ok = figures["ratio"] <= EPOCH_TARGET
    print(f"nn_epoch, full MNIST: numpy {figures['numpy_s']:.3f} s, needle reference "
          f"{figures['needle_s']:.3f} s, ratio {figures['ratio']:.2f} "
          f"(target <= {EPOCH_TARGET}) {'ok' if ok else 'MISSED'}")
    return ok


BENCHES = {
    "epoch": lambda args: epoch_ratio(args.rounds),
}


def add_arguments(parser, command):
    parser.add_argument("--only", choices=sorted(BENCHES), action="append",
                        help="run only this benchmark (repeatable)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per comparison (default 5)")


def run(args, command):
    results = [BENCHES[name](args) for name in (args.only or BENCHES)]
    return 0 if all(results) else 1
