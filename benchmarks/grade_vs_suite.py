"""`grader grade` against the course's own suite on the same correct
submission (issue 37): the command an instructor runs (`python -m grader
grade SUB`, answers cached) and what a student runs (`python -m pytest
tests/hw1` in a handout with the same files), interleaved round by round,
as a ratio of medians; target at most GRADE_TARGET."""

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import DATA, HANDOUT, REFERENCE, ROOT
from grader.core.blas import one_thread_env

GRADE_TARGET = 0.5


def submission(root: Path) -> Path:
    """A correct submission: the reference's student files, in a folder of their own."""
    sub = root / "sub"
    for part in ("python", "apps"):
        shutil.copytree(REFERENCE / part, sub / part, ignore=shutil.ignore_patterns("__pycache__"))
    return sub


def suite_folder(root: Path, sub: Path) -> Path:
    """The handout with the submission's files in it and MNIST in data/, as a student's checkout."""
    folder = root / "suite"
    shutil.copytree(HANDOUT, folder, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    for part in ("python", "apps"):
        shutil.copytree(sub / part, folder / part, dirs_exist_ok=True)
    (folder / "data").symlink_to(DATA.resolve())
    return folder


def timed(args, cwd) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=one_thread_env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return seconds


def measure(rounds: int) -> bool:
    # Bytecode for the grader, as an installed grader has it (PYTHONDONTWRITEBYTECODE may be set here).
    compileall.compile_dir(ROOT / "grader", quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        tmp = Path(tmp)
        sub = submission(tmp)
        suite = suite_folder(tmp, sub)
        grade = [sys.executable, "-m", "grader", "grade", str(sub), "--out", str(tmp / "out")]
        course = [sys.executable, "-m", "pytest", "tests/hw1", "-q", "-p", "no:cacheprovider"]
        timed(grade, ROOT)  # answers on this submission's inputs, the probe: once, as after its first grade
        timed(course, suite)
        graded, suites, loads = [], [], []
        for _ in range(max(1, rounds)):
            loads.append(os.getloadavg()[0])
            graded.append(timed(grade, ROOT))
            suites.append(timed(course, suite))
    ratios = [g / s for g, s in zip(graded, suites)]
    ratio = statistics.median(ratios)
    ok = ratio <= GRADE_TARGET
    print(
        f"grader grade vs the course suite, one correct submission: grade {statistics.median(graded):.2f} s, "
        f"suite {statistics.median(suites):.2f} s, ratio {ratio:.2f} (spread {min(ratios):.2f}-{max(ratios):.2f}, "
        f"{len(ratios)} rounds; target <= {GRADE_TARGET}) {'ok' if ok else 'MISSED'} "
        f"(load {min(loads):.1f}-{max(loads):.1f})"
    )
    return ok
