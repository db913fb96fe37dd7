"""The unit of a batch: one submission graded by one pure function.

`grade_one` takes a Job (paths and limits, no shared state) and returns a
small Done summary, writing the reports into the job's own folder. Every
executor maps this same function: the local process pool and Dask workers.
"""

import json
import time
from dataclasses import dataclass
from pathlib import Path

from grader.grading.report.orchestrate import failed_report, grade_to
from grader.grading.report.writing import RESULTS, write_reports
from grader.grading.run.config import RunConfig


@dataclass(frozen=True)
class Job:
    name: str  # result folder name under OUTDIR
    submission: Path
    out_dir: Path
    config: RunConfig  # the run's settings (locally: --jobs wide in the batch's shared slots)


@dataclass(frozen=True)
class Done:
    name: str
    score: float
    ok: bool  # False: the grader failed on this submission
    seconds: float
    error: str = ""
    graded: bool = True  # False: no results at all (e.g. lost with the cluster); graded on a rerun


def already_graded(out_dir: Path) -> bool:
    """A readable results.json with a score: nothing to redo."""
    try:
        doc = json.loads((out_dir / RESULTS).read_text(encoding="utf-8"))
        return isinstance(doc, dict) and "score" in doc
    except (OSError, ValueError):
        return False


def grade_one(job: Job) -> Done:
    """Grade one submission into its folder; never raises for a bad submission."""
    start = time.monotonic()
    try:
        rep, ok = grade_to(job.submission, job.out_dir, job.config)
        return Done(job.name, rep.score, ok, time.monotonic() - start, rep.error)
    except Exception as exc:  # even writing the reports failed: try a bare results.json
        return record_failure(job, f"grader error: {type(exc).__name__}: {exc}", start)


def record_failure(job: Job, reason: str, start: float) -> Done:
    """Score 0 with the reason in the submission's results.json (best effort)."""
    elapsed = time.monotonic() - start
    try:
        write_reports(failed_report(job.submission, reason, elapsed, job.config.assignment, job.config), job.out_dir)
    except Exception as exc:
        reason += f" (and its results.json could not be written: {exc})"
    return Done(job.name, 0.0, False, elapsed, reason)
