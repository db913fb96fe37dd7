"""`make bench --only inputs`: what drawing each submission's own inputs
costs a grading. A new submission's grading draws its inputs and runs the
reference on them (Q1-Q4, one sandboxed run) before grading it; the same
files graded again find those answers cached, which is what every grading
cost when all inputs were the course's. Both timed side by side, one worker
at a time (as in a batch, where each core grades its own submission)."""

import os
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from grader import REFERENCE

TARGET = 1.25  # a batch may grow at most a quarter slower per submission


def _variant(root: Path, assignment) -> Path:
    """The reference's student files plus a comment of its own: a new submission to the grader."""
    dest = root / uuid.uuid4().hex[:12]
    for rel in assignment.student_files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REFERENCE / rel, dest / rel)
    with open(dest / assignment.student_files[-1], "a", encoding="utf-8") as f:
        f.write(f"\n# {uuid.uuid4().hex}\n")
    return dest


def _timed(submission, config) -> float:
    from grader.grading.report.orchestrate import grade_submission  # lazy: `make bench --only epoch` stays light

    start = time.perf_counter()
    rep = grade_submission(submission, config)
    if rep.score != rep.max_score:
        raise RuntimeError(f"grading the reference gave {rep.score}, not {rep.max_score}: run grader grade reference")
    return time.perf_counter() - start


def measure(rounds: int) -> bool:
    from grader.grading.run import expected
    from grader.grading.run.config import RunConfig

    config = RunConfig(jobs=1)
    expected.load(expected.settled(config))  # the course's answers: once per secret, not what is measured
    new, again = [], []
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as tmp:
        _timed(_variant(Path(tmp), config.assignment), config)  # warm: imports, environment
        for _ in range(max(2, rounds)):
            submission = _variant(Path(tmp), config.assignment)
            new.append(_timed(submission, config))
            again.append(_timed(submission, config))
    n, a = statistics.median(new), statistics.median(again)
    ok = n / a <= TARGET
    print(
        f"inputs drawn per submission: a new submission {n:.2f} s (its inputs drawn, the reference run on "
        f"them), the same graded again {a:.2f} s (answers cached: the cost with the course's inputs only), "
        f"ratio {n / a:.2f} over {max(2, rounds)} rounds (target <= {TARGET}) {'ok' if ok else 'MISSED'} "
        f"(load {os.getloadavg()[0]:.1f})"
    )
    return ok
