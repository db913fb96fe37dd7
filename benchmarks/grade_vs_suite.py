"""`grader grade` against the course's own suite on the same correct
submission (issue 37): the command an instructor runs (`python -m grader
grade SUB`, answers cached) and the course's hw1 test file as the course
ships it (tests/course/hw1, its test_* functions under pytest, with the
numdifftools it imports), interleaved round by round, as a ratio of
medians; target at most GRADE_TARGET. Also beside them: the handout's own
public suite (what `make test` runs for a student), for scale.

numdifftools is not one of the grader's dependencies: the first run puts it
(and scipy, which it needs) in a cache folder of its own with pip."""

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
from grader.grading.run import cache

COURSE_SUITE = ROOT / "tests" / "course" / "hw1" / "tests" / "hw1" / "test_autograd_hw.py"
NUMDIFFTOOLS = "numdifftools"

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


def course_packages() -> Path:
    """A folder holding numdifftools (the course's suite imports it), installed once."""
    folder = cache.cache_root() / "bench-numdifftools"
    if not (folder / NUMDIFFTOOLS).is_dir():
        print("installing numdifftools for the course's suite (once)...", file=sys.stderr, flush=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".numdifftools-", dir=folder.parent))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
                str(scratch),
                NUMDIFFTOOLS,
            ],
            check=True,
        )
        shutil.rmtree(folder, ignore_errors=True)
        scratch.rename(folder)
    return folder


def timed(args, cwd, **env) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=one_thread_env(**env), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return seconds


def measure(rounds: int) -> bool:
    # Bytecode for the grader, as an installed grader has it (PYTHONDONTWRITEBYTECODE may be set here).
    compileall.compile_dir(ROOT / "grader", quiet=1)
    packages = str(course_packages())
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        tmp = Path(tmp)
        sub = submission(tmp)
        suite = suite_folder(tmp, sub)
        shutil.copyfile(COURSE_SUITE, suite / "tests" / "hw1" / "test_course_hw1.py")
        grade = [sys.executable, "-m", "grader", "grade", str(sub), "--out", str(tmp / "out")]
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        course = [*pytest, "tests/hw1/test_course_hw1.py"]
        public = [*pytest, "tests/hw1/test_autograd_hw.py", "tests/hw1/test_cases.py"]
        timed(grade, ROOT)  # answers on this submission's inputs, the probe: once, as after its first grade
        timed(course, suite, PYTHONPATH=packages)
        timed(public, suite)
        graded, courses, publics, loads = [], [], [], []
        for _ in range(max(1, rounds)):
            loads.append(os.getloadavg()[0])
            graded.append(timed(grade, ROOT))
            courses.append(timed(course, suite, PYTHONPATH=packages))
            publics.append(timed(public, suite))
    ratios = [g / s for g, s in zip(graded, courses)]
    ratio = statistics.median(ratios)
    ok = ratio <= GRADE_TARGET
    public_ratio = statistics.median(g / s for g, s in zip(graded, publics))
    print(
        f"grader grade vs the course's own suite, one correct submission: grade {statistics.median(graded):.2f} s, "
        f"course suite {statistics.median(courses):.2f} s, ratio {ratio:.2f} (spread {min(ratios):.2f}-"
        f"{max(ratios):.2f}, {len(ratios)} rounds; target <= {GRADE_TARGET}) {'ok' if ok else 'MISSED'}; "
        f"the handout's public suite {statistics.median(publics):.2f} s, ratio {public_ratio:.2f} "
        f"(load {min(loads):.1f}-{max(loads):.1f})"
    )
    return ok
