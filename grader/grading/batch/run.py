"""Grading a batch (`grader grade-batch DIR --jobs N --out OUTDIR [--cluster
tcp://HOST:8786]`, in commands.py): grade every submission in DIR (each immediate subfolder or .zip is one) into
OUTDIR/<name>/ and OUTDIR/gradebook.csv.

The batch is a map of one pure function (`grade_one`: paths in, a small
summary out, reports written to its own folder) over an executor: a local
process pool, or one Dask distributed task per submission (grader/grading/batch/cluster.py)
with the same function. Locally, each submission may run --jobs questions at
once, in --jobs question slots the whole batch shares, the earliest
submission first (grading/run/slots.py): the cores stay busy to the end and
the first result comes about as soon as a single grade's would. On a
cluster, each submission grades its questions one at a time
(`RunConfig(jobs=1)`), so N submissions at once use N cores. Results stream
in: each finished submission updates gradebook.csv (atomically) at once.
Resumable: a submission whose results.json already exists is skipped unless
--force. The setup (the reference's answers and the feedback values on the
course's inputs) is cached across batches and built alongside the first
submissions (batch/setup.py). A submission the grader chokes on gets a results.json with score 0
and the reason; the batch goes on.
"""

import dataclasses
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from grader.grading.batch import cluster
from grader.grading.batch import pool as pool_server
from grader.grading.batch import record as batch_record
from grader.grading.batch import setup as batch_setup
from grader.grading.batch.book import BatchGradebook
from grader.grading.batch.jobs import Done, Job, already_graded, grade_one, record_failure
from grader.grading.batch.names import find_submissions
from grader.grading.report import results as report
from grader.grading.run import cache, expected, seeds, slots
from grader.grading.run.config import RunConfig

__all__ = ["Done", "Job", "grade_one", "grade_batch", "run_jobs", "find_submissions"]


class Progress:
    """A one-line `\\r` bar with ETA on a TTY, else one line per submission."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def line(self, done: Done) -> str:
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        width = 24
        filled = width * self.done // max(1, self.total)
        bar = "#" * filled + "-" * (width - filled)
        last = (
            "not graded" if not done.graded else report.fmt_points(done.score) + ("" if done.ok else " (grader error)")
        )
        return (
            f"[{bar}] {self.done}/{self.total}  elapsed {_clock(elapsed)}  ETA {_clock(eta)}  last {done.name}: {last}"
        )

    def update(self, done: Done) -> None:
        self.done += 1
        text = self.line(done)
        if self.tty:
            self.stream.write("\r" + text + "\033[K" + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def run_jobs(jobs: list, workers: int, grade_fn=grade_one, on_done=None) -> list:
    """Map grade_fn over jobs in a local process pool, calling on_done(Done)
    as each finishes. A job whose worker process died (the pool breaks) is
    retried alone, so it cannot take others down."""
    on_done = on_done or (lambda done: None)
    if not jobs:
        return []
    results, retry = _pool_round(jobs, min(workers, len(jobs)), grade_fn, on_done)
    for job in retry:
        again, failed = _pool_round([job], 1, grade_fn, on_done)
        results += again
        for lost in failed:
            done = record_failure(lost, "grader error: the grading process died on this submission", time.monotonic())
            results.append(done)
            on_done(done)
    return results


def _pool_round(jobs, workers, grade_fn, on_done):
    results, broken = [], []
    # Forked from a process of its own that has imported the grader once (pool.py)
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=pool_server.context()) as pool:
        futures = {pool.submit(grade_fn, job): job for job in jobs}
        for future in as_completed(futures):
            job = futures[future]
            try:
                done = future.result()
            except BrokenProcessPool:
                broken.append(job)
                continue
            except Exception as exc:  # grade_fn itself raised
                done = record_failure(job, f"grader error: {type(exc).__name__}: {exc}", time.monotonic())
            results.append(done)
            on_done(done)
    return results, broken


def plan(folder: Path, out_root: Path, force: bool, config: RunConfig):
    """(jobs to grade, names skipped as already graded)."""
    todo, skipped = [], []
    for name, path in find_submissions(folder, exclude=[out_root]):
        job = Job(name, path.resolve(), (out_root / name).resolve(), config)
        (skipped if not force and already_graded(job.out_dir) else todo).append(job)
    return todo, [job.name for job in skipped]


def grade_batch(
    folder,
    out_root,
    jobs=None,
    force=False,
    grade_fn=grade_one,
    stream=None,
    config=None,
    address=None,
    patience=cluster.PATIENCE,
    setup_fn=None,
):
    """Grade everything under folder, locally or on the Dask scheduler at
    `address`; returns (Done list, skipped names). No config: the defaults,
    read now, one question at a time per submission. `setup_fn(config, width)`
    builds the setup alongside the pool (default: batch/setup.build, when
    grading for real)."""
    folder, out_root, config = Path(folder), Path(out_root), config or RunConfig(jobs=1)
    todo, skipped = plan(folder, out_root, force, config)
    client = None
    if address and todo:  # reach the scheduler before writing anything
        client = cluster.connect(address)
    out_root.mkdir(parents=True, exist_ok=True)
    batch_record.write(out_root, batch_record.from_config(folder, config))  # what `grader regrade` grades again
    if config.seed is None:  # the course secret (or the seed an earlier grader kept in OUTDIR)
        config = dataclasses.replace(config, seed=seeds.batch_seed(out_root, cache.cache_root()))
    workers = jobs or os.cpu_count() or 1
    setup = None
    setup_fn = setup_fn or (batch_setup.build if grade_fn is grade_one else None)
    if todo and client is None and setup_fn is not None:
        # the course's inputs, drawn once here; answers and feedback values
        # built --jobs wide alongside the first submissions (batch/setup.py)
        wide = expected.settled(dataclasses.replace(config, jobs=workers))  # public answers --jobs wide if missing
        config = dataclasses.replace(wide, jobs=config.jobs)
        setup = batch_setup.start(config, workers, setup_fn)
    slots_dir, ranked = None, [None] * len(todo)
    if client is None and workers > 1 and len(todo) > 1:
        # every submission may run --jobs questions at once, in slots the
        # batch shares, earliest submission first (grading/run/slots.py)
        slots_dir = Path(tempfile.mkdtemp(prefix="grader-slots-"))
        shared = slots.make(slots_dir, workers)
        ranked = [shared.for_rank(rank) for rank in range(len(todo))]
    if client is None:  # a submission alone, or in the shared slots: --jobs questions at once
        config = dataclasses.replace(config, jobs=workers)
    todo = [dataclasses.replace(job, config=dataclasses.replace(config, slots=s)) for job, s in zip(todo, ranked)]
    book = BatchGradebook(out_root, config.assignment.registry().questions)
    book.pending(job.name for job in todo)
    book.write()
    progress = Progress(len(todo), stream) if todo else None

    def on_done(done):  # runs in this process only: the single writer of the gradebook
        if done.graded:
            book.graded(done.name)
        else:
            book.ungraded(done.name, done.error)
        book.write()
        progress.update(done)

    try:
        if client is not None:
            results = cluster.run_jobs(client, todo, grade_fn, on_done, patience)
        else:
            results = run_jobs(todo, workers, grade_fn, on_done)
    finally:
        if slots_dir is not None:
            shutil.rmtree(slots_dir, ignore_errors=True)
        if setup is not None:
            setup.finish()  # its error (a reference failing its own cases) is the batch's
    return results, skipped
