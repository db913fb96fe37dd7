"""Grade one submission: read its files, run the workers, score, report.

grade_submission() is a pure map from a submission path to a Report (no
shared state), so grade-batch can run it over any executor. The parent only
compares values the workers wrote; it never imports student code or needle.
"""

import dataclasses
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from grader import ROOT, sandbox
from grader.core.assignment import Assignment
from grader.grading.explain.causes import diagnose as causes
from grader.grading.explain.causes import rerun
from grader.grading.explain.feedback import import_notes
from grader.grading.explain.shrink import run as shrink
from grader.grading.report import case_results, provenance
from grader.grading.report import results as report
from grader.grading.report.case_results import grade_cases
from grader.grading.report.writing import write_reports
from grader.grading.run import cache, expected, hangs, seeds, slots
from grader.grading.run.config import RunConfig
from grader.grading.run.submission import SubmissionError, extract_zip, locate
from grader.sandbox.scratch import scratch_dir

REFUSED = "none"  # the tier recorded for a submission that could not be read: nothing ran


def _student_files(submission: Path, scratch: Path, assignment: Assignment):
    """(files to grade, notes, {student file: its path in the submission},
    sha256 of the student's own files)."""
    if submission.is_file() and submission.suffix.lower() == ".zip":  # ALICE.ZIP too
        submission = extract_zip(submission, scratch / "unzipped")
    elif not submission.is_dir():
        raise SubmissionError(
            f"{submission}: not a folder or a .zip; pass a handout folder, "
            "a zip of one, or a folder with the student files"
        )
    located = locate(submission, assignment.student_files)
    pristine = {rel: assignment.handout / rel for rel in assignment.student_files}
    root = submission.resolve()
    display = {rel: path.relative_to(root).as_posix() for rel, path in located.files.items()}
    digest = provenance.submission_sha256(located.files, assignment.student_files)
    return {**pristine, **located.files}, located.notes, display, digest


def _sources(files):
    """The student files' text, read once (locate() capped their size) for
    student_lines; a file that cannot be read as text names no line."""
    texts = {}
    for rel, path in files.items():
        try:
            texts[rel] = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
    return texts


def _after(event, fn, most: float = 2.0):
    """fn, called once `event` is set (or after `most` seconds, whatever kept it unset)."""

    def wait_then(*args):
        event.wait(most)
        return fn(*args)

    return wait_then


def submission_digest(submission, assignment: Assignment) -> str:
    """The submission_sha256 grading `submission` now would record (the
    student files, or the raw file of one that cannot be read)."""
    with tempfile.TemporaryDirectory(prefix="submission-", dir=scratch_dir()) as scratch:
        try:
            return _student_files(Path(submission), Path(scratch), assignment)[3]
        except SubmissionError:
            return provenance.raw_sha256(Path(submission))


def _scoring(config: RunConfig) -> str:
    return report.STRICT_MODE if config.score_advisories else report.CONTRACT_MODE


def _security_notes(config: RunConfig) -> tuple:
    """Refuse a tier that cannot hide our files, unless --insecure (then say so)."""
    problem = sandbox.security_problem(config.tier or sandbox.probe(), secrets=[ROOT, cache.cache_root()])
    if problem and not config.insecure:
        raise sandbox.SandboxError(
            f"sandbox: {problem}: student code could read the reference and the "
            "answers; run as root or where user namespaces work, or pass --insecure"
        )
    return (f"INSECURE: graded with --insecure: {problem}",) if problem else ()


def grade_submission(submission, config: RunConfig | None = None) -> report.Report:
    """Grade one submission; a bad submission is graded 0 with the reason
    (`refusal(report)` gives it). `config.score_advisories` scores the
    advisory cases too (an instructor's choice). No config: the defaults,
    read now (the repository's assignment.toml)."""
    start, submission = time.monotonic(), Path(submission)
    config = expected.settled(config or RunConfig())  # the inputs this grading draws
    if config.tier is None:  # the last probe's on this boot, if recent: no sandbox started only to probe
        config = dataclasses.replace(config, tier=cache.probed_tier())
    assignment = config.assignment
    questions = assignment.registry().questions
    warnings = _security_notes(config)
    seed_id, mode = seeds.seed_id(config.seed), _scoring(config)
    with tempfile.TemporaryDirectory(prefix="submission-", dir=scratch_dir()) as scratch, ExitStack() as pending:
        try:
            files, notes, display, digest = _student_files(submission, Path(scratch), assignment)
        except SubmissionError as exc:  # refused: 0, nothing of it runs
            made = provenance.make(
                assignment, submission, provenance.raw_sha256(submission), seed_id, REFUSED, mode, provenance.REFUSED
            )
            return report.Report(
                str(submission),
                (),
                report.question_scores((), questions),
                REFUSED,
                time.monotonic() - start,
                (str(exc),),
                assignment=assignment.name,
                provenance=made,
            )
        own = expected.for_submission(config, digest)  # this submission's own inputs
        if own.slots is None and own.jobs > 1:  # one grade's slots, shared by all its runs (a batch's are given)
            own = dataclasses.replace(own, slots=slots.local(own.jobs))
        # The reference's answers on them (built on a first grade: a sandbox
        # run) and the MNIST test set (Q6's test error) are read meanwhile;
        # the answers once the time limits are worked out, which the first
        # worker waits for (reading them sooner slowed it down and, holding
        # the GIL, made the machine look busier than it was).
        limits_known = threading.Event()
        with ThreadPoolExecutor(2) as side:
            reading = side.submit(_after(limits_known, expected.load), own)
            side.submit(case_results.prefetch_test_set, assignment)
            early = shrink.Early(own, reading.result, files, drawn=config.seed != seeds.PUBLIC)
            course_runs = rerun.Early(files, own, reading.result)  # the likely-cause step's
            for step in (course_runs, early):  # they read the student's files in scratch: over before they go
                pending.callback(step.wait)
            runs = expected.run_graded(files, own, on_done=_each(course_runs, early), on_limits=limits_known.set)
            answers = reading.result()
        sources = _sources(files)
        smallest = early.result(runs)
        explain = shrink.with_smallest(
            causes.diagnoser(expected.course(config), answers, runs, course_runs.rerun(runs)), smallest
        )
        cases = grade_cases(
            runs,
            answers,
            config.score_advisories,
            assignment,
            drawn=config.seed != seeds.PUBLIC,
            sources=sources,
            display=display,
            diagnose=explain,
        )
    tier = next(iter(runs.values())).tier
    notes = (*warnings, *notes, *import_notes(runs, assignment.registry()), *hangs.notes(runs, assignment.registry()))
    made = provenance.make(
        assignment, submission, digest, seed_id, tier, mode, inputs=own.inputs.derivation if own.inputs else "public"
    )
    return report.Report(
        str(submission),
        cases,
        report.question_scores(cases, questions),
        tier,
        time.monotonic() - start,
        notes,
        mode=mode,
        assignment=assignment.name,
        provenance=made,
    )


def _each(*hooks):
    """run_all's on_done calling each hook in turn (each starts its run in a
    thread of its own)."""

    def on_done(question, run):
        for hook in hooks:
            hook(question, run)

    return on_done


def refusal(rep: report.Report) -> str:
    """Why the submission could not be read ("" when it was graded)."""
    return rep.notes[0] if rep.tier == REFUSED and not rep.error and rep.notes else ""


def failed_report(submission, reason, elapsed, assignment: Assignment, config: RunConfig | None = None):
    """Score 0 with the reason, for when the grader itself broke (its
    provenance says so: a regrade grades it again)."""
    questions = assignment.registry().questions
    seed_id = seeds.seed_id(config.seed) if config is not None and config.seed is not None else ""
    try:
        made = provenance.make(
            assignment,
            Path(submission),
            provenance.raw_sha256(Path(submission)),
            seed_id,
            "none",
            _scoring(config) if config is not None else report.CONTRACT_MODE,
            provenance.GRADER_ERROR,
        )
    except Exception:  # what broke the grader may break this too: the reason matters more
        made = None
    return report.Report(
        str(submission),
        (),
        report.question_scores((), questions),
        "none",
        elapsed,
        (),
        reason,
        assignment=assignment.name,
        provenance=made,
    )


def grade_to(submission, out_dir, config: RunConfig | None = None):
    """Grade and write the three reports; returns (report, grader_ok)."""
    start, config = time.monotonic(), config or RunConfig()
    try:
        rep, ok = grade_submission(submission, config), True
    except Exception as exc:  # the grader broke: still leave a results.json
        rep, ok = (
            failed_report(
                submission,
                f"grader error: {type(exc).__name__}: {exc}",
                time.monotonic() - start,
                config.assignment,
                config,
            ),
            False,
        )
    write_reports(rep, Path(out_dir))
    return rep, ok
