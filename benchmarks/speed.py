"""`make bench`: speed figures, each a ratio of two timings taken side by
side in one run (absolute times on these shared 2-core machines are noisy).
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import batch as bench_batch
from benchmarks import similarity as bench_similarity
from benchmarks import similarity_levels as bench_similarity_levels
from grader import REFERENCE, Assignment
from grader.core.blas import one_thread_env

EPOCH_TARGET = 1.5  # reference nn_epoch (a model answer, not tuned) at most 1.5x a plain-numpy epoch (CPU seconds)
EPOCH_PAIRS = 8  # short interleaved rounds of each epoch per --rounds (40 by default: about 5 s)


def bench_env():
    return one_thread_env()


def epoch_ratio(rounds):
    """Reference nn_epoch vs plain numpy, `EPOCH_PAIRS` x rounds short rounds
    each, interleaved (bench_epoch.py says why); True if on target."""
    script = Path(__file__).with_name("bench_epoch.py")
    pairs = EPOCH_PAIRS * rounds
    out = subprocess.run(
        [sys.executable, str(script), str(REFERENCE), str(pairs)],
        env=bench_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    ok = figures["ratio"] <= EPOCH_TARGET
    print(
        f"nn_epoch, MNIST: numpy {figures['numpy_s']:.3f} s, needle reference {figures['needle_s']:.3f} s "
        f"an epoch, ratio {figures['ratio']:.3f} (each side's fastest of {pairs} interleaved rounds; "
        f"median of the rounds' ratios {figures['ratio_median']:.3f}, spread {figures['ratio_min']:.3f}-"
        f"{figures['ratio_max']:.3f}; target <= {EPOCH_TARGET}) {'ok' if ok else 'MISSED'}"
    )
    return ok


OVERHEAD_TARGET = 1.3  # grading (sandbox included) vs the same cases in-process


def _in_process_cases(library=REFERENCE):
    """Wall seconds of one plain process running every case on `library` (the reference)."""
    script = Path(__file__).with_name("bench_cases.py")
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(script), str(library), str(Assignment.hw1().cases_dir)],
        cwd=REFERENCE.parent,
        env=bench_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    if figures["failed"]:
        raise RuntimeError(f"bench_cases.py: {figures['failed']} case(s) raised on {library}; run grader grade on it")
    return seconds


def _graded(config):
    from grader.grading.report.orchestrate import grade_submission  # lazy: `make bench --only epoch` stays light

    start = time.perf_counter()
    rep = grade_submission(REFERENCE, config)
    if rep.score != rep.max_score:
        raise RuntimeError(f"grading the reference gave {rep.score}, not {rep.max_score}: run grader grade reference")
    return time.perf_counter() - start


def grading_overhead(rounds):
    """Reference graded end to end (sandbox, default 2 workers; expected values
    cached) vs the same case functions in one plain process; True if on target."""
    from grader.grading.run import expected
    from grader.grading.run.config import RunConfig

    os.environ.update({k: v for k, v in bench_env().items() if k.endswith("_NUM_THREADS")})
    expected.load(RunConfig())  # cached answers, as for every submission after the first
    plain, graded, serial = [], [], []
    for _ in range(max(1, min(rounds, 4))):  # interleaved, so noise hits all alike
        plain.append(_in_process_cases())
        graded.append(_graded(RunConfig()))
        serial.append(_graded(RunConfig(jobs=1)))
    p, g, s = (statistics.median(x) for x in (plain, graded, serial))
    ok = g / p <= OVERHEAD_TARGET
    print(
        f"grading overhead, reference: in-process cases {p:.2f} s, graded in the sandbox {g:.2f} s "
        f"(2 workers), ratio {g / p:.2f} (target <= {OVERHEAD_TARGET}) {'ok' if ok else 'MISSED'}; "
        f"one worker at a time {s:.2f} s, ratio {s / p:.2f} (load {os.getloadavg()[0]:.1f})"
    )
    return ok


def server_load():
    """submit_test load against real servers on loopback: SQLite and PostgreSQL, 1 and 2
    processes, with and without an attacker (benchmarks/server_matrix.py)."""
    from benchmarks import server_matrix as bench_server_matrix

    return bench_server_matrix.main()


def feedback_cost(rounds):
    """Grading time with and without the likely-cause and smallest-input steps (benchmarks/feedback.py)."""
    from benchmarks import feedback as bench_feedback  # lazy, like the others: `--only epoch` stays light

    return bench_feedback.measure(max(1, rounds))


def inputs_cost(rounds):
    """Grading a new submission (its own inputs drawn, the reference run on them) vs the same again."""
    from benchmarks import inputs as bench_inputs  # lazy, like the others

    return bench_inputs.measure(rounds)


def grade_vs_suite(rounds):
    """`grader grade` vs the course's own suite on one correct submission (benchmarks/grade_vs_suite.py)."""
    from benchmarks import grade_vs_suite as bench_grade  # lazy, like the others

    return bench_grade.measure(rounds)


def first_result():
    """grade-batch's first result, batches of 1 and 2, cold and warm cache (benchmarks/first_result.py)."""
    from benchmarks import first_result as bench_first  # lazy, like the others

    return bench_first.measure()


BENCHES = {
    "epoch": lambda args: epoch_ratio(args.rounds),
    "grade": lambda args: grade_vs_suite(args.rounds),
    "first-result": lambda args: first_result(),
    "grading": lambda args: grading_overhead(args.rounds),
    "batch": lambda args: bench_batch.local_speedup(),
    "dask": lambda args: bench_batch.dask_speedup(),
    "server": lambda args: server_load(),
    "feedback": lambda args: feedback_cost(args.rounds),
    "inputs": lambda args: inputs_cost(args.rounds),
    "similarity": lambda args: bench_similarity.speed(),
    "similarity-levels": lambda args: bench_similarity_levels.levels(),
}


def bench_command(args) -> int:
    results = [BENCHES[name](args) for name in (args.only or BENCHES)]
    return 0 if all(results) else 1
