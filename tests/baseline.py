"""How long starting a sandboxed worker takes on this machine now: the
yardstick for the time limits tests give to hostile or never-ending code.

A fixed number of seconds fails on a busy machine (`make test` once failed a
hostile case on an 8 s limit at load 10); a multiple of this baseline grows
with the load, as the grader's own limits do (grader/grading/run/time_limits.py).
"""

import functools
import math
import shutil
import tempfile
import time
from pathlib import Path

from grader import sandbox

WORKER = Path(__file__).resolve().parent / "fixtures" / "sandbox" / "ok_numpy.py"


def measure(tier: str | None = None) -> float:
    """Wall seconds of one sandbox.run of a worker that imports numpy and
    writes one value (about 0.3 s on a quiet 2-core machine), measured now."""
    root = Path(tempfile.mkdtemp(prefix="baseline-"))
    try:
        root.chmod(0o755)
        (root / "student").mkdir(mode=0o755)
        out = sandbox.make_out_dir(root)
        tier = tier or sandbox.probe()  # probed once per process: not part of a run
        start = time.monotonic()
        res = sandbox.run(WORKER, [str(out)], student_dir=root / "student", out_dir=out, tier=tier)
        took = time.monotonic() - start
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if not res.ok:
        raise RuntimeError(f"the baseline worker failed: {res.reason}\n{res.log[-2000:]}")
    return took


@functools.cache
def startup_seconds() -> float:
    """measure(), once per test process: for the many short runs of one file."""
    return measure()


def limits(multiple: float, **others) -> sandbox.Limits:
    """sandbox.Limits whose wall clock (and CPU time, unless given) is
    `multiple` x the baseline."""
    seconds = round(multiple * startup_seconds(), 1)
    return sandbox.Limits(**{"wall_seconds": seconds, "cpu_seconds": math.ceil(seconds), **others})
