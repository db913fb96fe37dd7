"""`grader grade-batch DIR --jobs N --out OUTDIR`: grade every submission in
DIR (each immediate subfolder or .zip is one) into OUTDIR/<name>/ and
OUTDIR/gradebook.csv.

The batch is a map of one pure function (`grade_one`: paths in, a small
summary out, reports written to its own folder) over an executor: a local
process pool here, Dask distributed later with the same function. Each
submission grades its questions one at a time (`RunConfig(jobs=1)`), so N
submissions at once use N cores. Resumable: a submission whose results.json
already exists is skipped unless --force. A submission the grader chokes on
gets a results.json with score 0 and the reason; the batch goes on.
"""
import csv
import io
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from grader import report
from grader.grade import failed_report, grade_to, write_atomic, write_reports
from grader.workers import RunConfig, add_limit_arguments, config_from_args

GRADEBOOK = "gradebook.csv"
RESULTS = "results.json"


@dataclass(frozen=True)
class Job:
    name: str            # result folder name under OUTDIR
    submission: Path
    out_dir: Path
    config: RunConfig = RunConfig(jobs=1)


@dataclass(frozen=True)
class Done:
    name: str
    score: float
    ok: bool             # False: the grader failed on this submission
    seconds: float
    error: str = ""


def find_submissions(folder: Path, exclude=()) -> list:
    """(name, path) of each immediate subfolder or .zip of `folder`, sorted."""
    exclude = {Path(p).resolve() for p in exclude}
    entries = [p for p in sorted(folder.iterdir()) if not p.name.startswith(".")
               and p.resolve() not in exclude and (p.is_dir() or p.suffix.lower() == ".zip")]
    folders = {p.name for p in entries if p.is_dir()}
    found = []
    for path in entries:
        stem = path.stem if path.is_file() and path.stem not in folders else path.name
        found.append((stem, path))
    return found


def already_graded(out_dir: Path) -> bool:
    """A readable results.json with a score: nothing to redo."""
    try:
        return "score" in json.loads((out_dir / RESULTS).read_text(encoding="utf-8"))
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
        write_reports(failed_report(job.submission, reason, elapsed), job.out_dir)
    except Exception as exc:
        reason += f" (and its results.json could not be written: {exc})"
    return Done(job.name, 0.0, False, elapsed, reason)


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
        last = f"{done.name}: {report._fmt(done.score)}" + ("" if done.ok else " (grader error)")
        return (f"[{bar}] {self.done}/{self.total}  elapsed {_clock(elapsed)}  "
                f"ETA {_clock(eta)}  last {last}")

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


def run_jobs(jobs: list, workers: int, grade_fn=grade_one, progress=None) -> list:
    """Map grade_fn over jobs in a process pool. A job whose worker process
    died (the pool breaks) is retried alone, so it cannot take others down."""
    if not jobs:
        return []
    results, retry = _pool_round(jobs, min(workers, len(jobs)), grade_fn, progress)
    for job in retry:
        again, failed = _pool_round([job], 1, grade_fn, progress)
        results += again
        for lost in failed:
            done = record_failure(lost, "grader error: the grading process died on this submission",
                                  time.monotonic())
            results.append(done)
            if progress:
                progress.update(done)
    return results


def _pool_round(jobs, workers, grade_fn, progress):
    results, broken = [], []
    context = multiprocessing.get_context("spawn")  # no fork of a threaded parent
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=context) as pool:
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
            if progress:
                progress.update(done)
    return results, broken


def gradebook_rows(out_root: Path) -> list:
    """One CSV row per result folder under out_root that holds a results.json."""
    rows = []
    for folder in sorted(p for p in out_root.iterdir() if p.is_dir()):
        try:
            doc = json.loads((folder / RESULTS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        questions = doc.get("extra_data", {}).get("questions", {})
        rows.append([folder.name, *(report._fmt(float(questions.get(key, {}).get("score", 0.0)))
                                    for key in report.csv_header()[1:-1]),
                     report._fmt(float(doc.get("score", 0.0)))])
    return rows


def write_gradebook(out_root: Path) -> Path:
    """OUTDIR/gradebook.csv rebuilt from every results.json there, atomically."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(report.csv_header())
    writer.writerows(gradebook_rows(out_root))
    path = out_root / GRADEBOOK
    write_atomic(path, buffer.getvalue())
    return path


def grade_batch(folder, out_root, jobs=None, force=False, grade_fn=grade_one, stream=None,
                config=RunConfig(jobs=1)):
    """Grade everything under folder; returns (graded Done list, skipped names)."""
    folder, out_root = Path(folder), Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    todo, skipped = [], []
    for name, path in find_submissions(folder, exclude=[out_root]):
        job = Job(name, path.resolve(), (out_root / name).resolve(), config)
        (skipped if not force and already_graded(job.out_dir) else todo).append(job)
    progress = Progress(len(todo), stream) if todo else None
    results = run_jobs(todo, jobs or os.cpu_count() or 1, grade_fn, progress)
    write_gradebook(out_root)
    return results, [job.name for job in skipped]


def add_arguments(parser, command):
    parser.add_argument("folder", help="folder holding one subfolder or .zip per submission")
    parser.add_argument("--out", required=True, help="folder for one result folder per submission "
                        "and gradebook.csv")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at once (default: number of cores)")
    parser.add_argument("--force", action="store_true", help="regrade submissions already graded")
    add_limit_arguments(parser)


def run(args, command):
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"grader grade-batch: {folder}: not a folder; pass the folder holding one subfolder "
              "or .zip per submission", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"grader grade-batch: --jobs {args.jobs}: must be at least 1", file=sys.stderr)
        return 2
    if not find_submissions(folder, exclude=[args.out]):
        print(f"grader grade-batch: {folder}: no subfolder or .zip in it; put one per submission there",
              file=sys.stderr)
        return 2
    try:
        config = config_from_args(args, 1)  # one question at a time: N submissions use N cores
    except ValueError as exc:
        print(f"grader grade-batch: {exc}", file=sys.stderr)
        return 2
    start = time.monotonic()
    results, skipped = grade_batch(folder, args.out, args.jobs, args.force, config=config)
    if skipped:
        print(f"skipped {len(skipped)} already graded (use --force to regrade them)", file=sys.stderr)
    failed = [d for d in results if not d.ok]
    for done in failed:
        print(f"{done.name}: {done.error}", file=sys.stderr)
    print(f"graded {len(results)} submission(s) in {time.monotonic() - start:.1f} s"
          f"{f', {len(failed)} with a grader error' if failed else ''}; "
          f"gradebook: {Path(args.out) / GRADEBOOK}")
    return 0
