"""How long an instructor waits for a batch's first result (issue 37): a
batch of 1 and of 2 correct submissions with a cold cache (a new course
secret: the reference's answers and the known bugs' values on its inputs not
built yet) and a warm one, each against a single `grade` of one of them
measured in the same run. Target: a warm 2-submission batch's first result
within FIRST_TARGET x a single grade's time."""

import io
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from grader import REFERENCE
from grader.core.blas import ONE_THREAD
from grader.grading.batch import run as batch
from grader.grading.run import cache, expected
from grader.grading.run.config import RunConfig

FIRST_TARGET = 2.0
SEED_FREE = ("expected-*-public", "shrink-*", "tier-*")  # kept in a cold cache: no course secret in them


class FirstLine(io.StringIO):
    """A progress stream that notes when the first result came."""

    def __init__(self):
        super().__init__()
        self.first = None

    def write(self, text):
        if self.first is None and text.strip():
            self.first = time.perf_counter()
        return super().write(text)


def _subs(root: Path, count: int) -> Path:
    folder = root / f"subs{count}"
    for k in range(count):
        for part in ("python", "apps"):
            shutil.copytree(
                REFERENCE / part, folder / f"student{k}" / part, ignore=shutil.ignore_patterns("__pycache__")
            )
    return folder


def _cold_cache(warm: Path, dest: Path) -> Path:
    """A cache with what no course secret keys (the public answers, the probe), and no secret."""
    dest.mkdir(mode=0o700)
    for pattern in SEED_FREE:
        for path in warm.glob(pattern):
            if path.name.endswith(cache.LOCK_SUFFIX):
                continue
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, dest / path.name)
    return dest


def first_result(subs: Path, out: Path, jobs: int) -> float:
    stream = FirstLine()
    start = time.perf_counter()
    done, _ = batch.grade_batch(subs, out, jobs=jobs, force=True, stream=stream)
    if any(d.score != 100 for d in done):
        raise RuntimeError(f"first-result bench: {[(d.name, d.score, d.error) for d in done]}")
    return stream.first - start


def single_grade(sub: Path) -> float:
    from grader.grading.report.orchestrate import grade_submission

    start = time.perf_counter()
    grade_submission(sub, RunConfig())
    return time.perf_counter() - start


def measure() -> bool:
    os.environ.update(ONE_THREAD)
    warm_root = cache.cache_root()
    expected.load(RunConfig())  # the machine's cache warm, as after a first grade
    figures, loads = {}, []
    with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp:
        tmp = Path(tmp)
        subs = {n: _subs(tmp, n) for n in (1, 2)}
        single_grade(subs[1] / "student0")  # its own answers and the probe, once
        for n in (1, 2):
            cold = _cold_cache(warm_root, tmp / f"cache{n}")
            os.environ["GRADER_CACHE"] = str(cold)
            try:
                loads.append(os.getloadavg()[0])
                figures[("cold", n)] = first_result(subs[n], tmp / f"cold{n}", jobs=2)
                loads.append(os.getloadavg()[0])
                figures[("warm", n)] = first_result(subs[n], tmp / f"warm{n}", jobs=2)
                figures[("single", n)] = statistics.median(single_grade(subs[n] / "student0") for _ in range(2))
            finally:
                os.environ["GRADER_CACHE"] = str(warm_root)
    single = statistics.median([figures[("single", 1)], figures[("single", 2)]])
    ratio = figures[("warm", 2)] / figures[("single", 2)]
    ok = ratio <= FIRST_TARGET
    cells = ", ".join(
        f"batch of {n} {state} {figures[(state, n)]:.1f} s ({figures[(state, n)] / single:.2f}x)"
        for state in ("cold", "warm")
        for n in (1, 2)
    )
    print(
        f"first result of grade-batch --jobs 2 vs a single grade ({single:.1f} s): {cells}; warm batch of 2: "
        f"{ratio:.2f}x (target <= {FIRST_TARGET}) {'ok' if ok else 'MISSED'} (load {min(loads):.1f}-{max(loads):.1f})"
    )
    return ok
