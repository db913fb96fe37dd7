"""`grader grade`: grade one submission in the sandbox and write its reports.

grade_submission() is a pure map from a submission path to a Report (no
shared state), so grade-batch can run it over any executor. The parent only
compares values the workers wrote; it never imports student code or needle.
"""
import re
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from grader import ROOT, sandbox
from grader.files import write_atomic
from grader.grading import ci, expected, provenance, report, seeds, student_lines
from grader.grading.causes import diagnose as causes
from grader.grading.shrink import run as shrink
from grader.assignment import Assignment
from grader.grading.checks import check
from grader.grading.submission import SubmissionError, extract_zip, locate
from grader.grading.workers import RunConfig, config_from_args

NOT_IMPLEMENTED = "NotImplementedError: "
# The handout's stubs raise NotImplementedError("Q2: EWiseDiv.gradient"): a
# hidden case may say that much of a student's text, and no more.
STUB = re.compile(r"^NotImplementedError: Q\d{1,2}: [A-Za-z_][\w.]{0,60}$")
REFUSED = "none"    # the tier recorded for a submission that could not be read: nothing ran
EXIT_REFUSED = 3    # `grader grade`: the submission cannot be read (the reason is one line on stderr)
UNIT = 10_000       # case scores are whole multiples of 1e-4 points, so totals add up exactly


def stub_of(outcome, run) -> str:
    """"Q2 EWiseDiv.gradient" when the case stopped at that handout stub, else ""
    (the worker's `(at ...)` after it says nothing the stub's name does not)."""
    error = "" if run.import_error or outcome.ok else outcome.problem.split(" (at ", 1)[0]
    return error[len(NOT_IMPLEMENTED):].replace(": ", " ", 1) if STUB.match(error) else ""


def feedback(case, outcome, run):
    """Why a case has no value, in words a student can act on. A hidden
    case says only the kind of error: the message and place are text the
    student's code chooses, which could carry out what the case looks like."""
    if run.import_error:
        return f"{case.description}: not run: {run.import_error}"
    if stub_of(outcome, run):  # one line per question in report.md
        return f"{case.description}: not implemented: {stub_of(outcome, run)}"
    problem = outcome.problem
    if case.hidden and outcome.error_type:  # the error alone, without the place the worker names
        problem = problem.split(" (at ", 1)[0]
        if not STUB.match(problem):
            problem = f"raised {outcome.error_type} (messages are shown for public cases only)"
    if problem.startswith(NOT_IMPLEMENTED):
        problem = "not implemented: " + problem[len(NOT_IMPLEMENTED):].replace(": ", " ", 1)
    if run.problem and problem.startswith("no value"):
        problem = f"no value: the {case.question} worker stopped ({run.problem})"
    return f"{case.description}: {problem}"


def split_points(points, weights):
    """Integer units (1e-4 points) per weight, summing exactly to `points`
    (largest remainder), so Gradescope's test scores add up to the total."""
    total, whole = sum(weights), points * UNIT
    shares = [whole * w / total for w in weights]
    units = [int(s) for s in shares]
    by_remainder = sorted(range(len(weights)), key=lambda i: units[i] - shares[i])
    for i in by_remainder[:round(whole - sum(units))]:
        units[i] += 1
    return units


def max_scores(registry, strict=False):
    """case name -> its points: each question's points split by weight over
    its scored cases (advisory cases too when `strict`); advisory ones 0."""
    out = {}
    for question in registry.questions:
        scored = [c for c in registry.cases_for(question.key) if strict or not c.advisory]
        for c, units in zip(scored, split_points(question.points, [c.weight for c in scored])):
            out[c.name] = units / UNIT
    return {c.name: out.get(c.name, 0.0) for c in registry.cases}


@lru_cache(maxsize=4)
def _test_set(reader, data: Path):
    """Read once per process: a batch grades many submissions against it."""
    return reader(data)


def _verdict(case, runs, answers, test_set, drawn):
    run = runs[case.question]
    outcome = run.outcomes[case.value_key]
    if not outcome.ok:
        return False, feedback(case, outcome, run)
    verdict = check(case, answers[case.value_key].value, outcome.value, test_set, drawn)
    return verdict.passed, case.description if verdict.passed else f"{case.description}: {verdict.message}"


def grade_cases(runs, answers, strict=False, assignment: Assignment | None = None, drawn=True,
                sources=None, display=None, diagnose=None):
    """One CaseResult per registered case, numbered within its question;
    `drawn`: the inputs came from a grading seed (feedback shows no answer);
    `sources` ({student file: its text}) and `display` ({student file: its
    path in the submission}) let a failed case name the student's line;
    `diagnose(case, outcome)`: a failed case's `Likely cause:` line or "" (causes/)."""
    assignment = assignment or Assignment.hw1()
    registry = assignment.registry()
    results, counters, points, labels = [], {}, max_scores(registry, strict), registry.question
    reader = registry.read_test_set
    test_set = reader and (lambda: _test_set(reader, assignment.data))
    for case in registry.cases:
        kind = "a" if case.advisory else ""
        counters[(case.question, kind)] = counters.get((case.question, kind), 0) + 1
        number = f"{labels[case.question].label}.{kind}{counters[(case.question, kind)]}"
        passed, output = _verdict(case, runs, answers, test_set, drawn)
        if not passed and diagnose:
            output = causes.with_cause(output, diagnose(case, runs[case.question].outcomes[case.value_key]))
        contract = registry.beyond[case.contract] if case.advisory else registry.contract[case.contract]
        blocked = bool(runs[case.question].import_error)
        run = runs[case.question]
        stub = stub_of(run.outcomes[case.value_key], run)
        where = "" if passed else student_lines.case_where(case, run.outcomes[case.value_key], run,
                                                           sources or {}, display or {})
        results.append(report.CaseResult(case.name, case.question, number,
                                         points[case.name] if passed else 0.0, points[case.name], passed,
                                         output, case.hidden, case.advisory, contract, blocked, stub, where))
    return tuple(results)


def import_notes(runs, registry):
    """Each distinct import failure once, with the questions it cost."""
    failures = {}
    for run in runs.values():
        if run.import_error:
            failures.setdefault(run.import_error, []).append(registry.question[run.question].label)
    return [f"{error} (costs {', '.join(sorted(labels))})" for error, labels in failures.items()]


def _student_files(submission: Path, scratch: Path, assignment: Assignment):
    """(files to grade, notes, {student file: its path in the submission},
    sha256 of the student's own files)."""
    if submission.is_file() and submission.suffix.lower() == ".zip":  # ALICE.ZIP too
        submission = extract_zip(submission, scratch / "unzipped")
    elif not submission.is_dir():
        raise SubmissionError(f"{submission}: not a folder or a .zip; pass a handout folder, "
                              "a zip of one, or a folder with the student files")
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


def submission_digest(submission, assignment: Assignment) -> str:
    """The submission_sha256 grading `submission` now would record (the
    student files, or the raw file of one that cannot be read)."""
    with tempfile.TemporaryDirectory(prefix="submission-") as scratch:
        try:
            return _student_files(Path(submission), Path(scratch), assignment)[3]
        except SubmissionError:
            return provenance.raw_sha256(Path(submission))


def _scoring(config: RunConfig) -> str:
    return report.STRICT_MODE if config.score_advisories else report.CONTRACT_MODE


def _security_notes(config: RunConfig) -> tuple:
    """Refuse a tier that cannot hide our files, unless --insecure (then say so)."""
    problem = sandbox.security_problem(config.tier or sandbox.probe(), secrets=[ROOT, expected.cache_root()])
    if problem and not config.insecure:
        raise sandbox.SandboxError(f"sandbox: {problem}: student code could read the reference and the "
                                   "answers; run as root or where user namespaces work, or pass --insecure")
    return (f"INSECURE: graded with --insecure: {problem}",) if problem else ()


def grade_submission(submission, config: RunConfig = RunConfig()) -> report.Report:
    """Grade one submission; a bad submission is graded 0 with the reason
    (`refusal(report)` gives it). `config.score_advisories` scores the
    advisory cases too (an instructor's choice)."""
    start, submission = time.monotonic(), Path(submission)
    config = expected.settled(config)  # the inputs this grading draws
    assignment = config.assignment
    questions = assignment.registry().questions
    warnings = _security_notes(config)
    seed_id, mode = seeds.seed_id(config.seed), _scoring(config)
    with tempfile.TemporaryDirectory(prefix="submission-") as scratch:
        try:
            files, notes, display, digest = _student_files(submission, Path(scratch), assignment)
        except SubmissionError as exc:  # refused: 0, nothing of it runs
            made = provenance.make(assignment, submission, provenance.raw_sha256(submission), seed_id, REFUSED,
                                   mode, provenance.REFUSED)
            return report.Report(str(submission), (), report.question_scores((), questions), REFUSED,
                                 time.monotonic() - start, (str(exc),), assignment=assignment.name,
                                 seed_id=seed_id, provenance=made)
        answers = expected.load(config)
        runs = expected.run_graded(files, config)
        sources = _sources(files)
        smallest = shrink.lines(config, answers, runs, files, drawn=config.seed != seeds.PUBLIC)
    explain = shrink.with_smallest(causes.diagnoser(config, answers, runs), smallest)
    cases = grade_cases(runs, answers, config.score_advisories, assignment, drawn=config.seed != seeds.PUBLIC,
                        sources=sources, display=display, diagnose=explain)
    tier = next(iter(runs.values())).tier
    notes = (*warnings, *notes, *import_notes(runs, assignment.registry()))
    return report.Report(str(submission), cases, report.question_scores(cases, questions), tier,
                         time.monotonic() - start, notes, mode=mode, assignment=assignment.name,
                         seed_id=seed_id, provenance=provenance.make(assignment, submission, digest, seed_id, tier,
                                                                     mode))


def refusal(rep: report.Report) -> str:
    """Why the submission could not be read ("" when it was graded)."""
    return rep.notes[0] if rep.tier == REFUSED and not rep.error and rep.notes else ""


def failed_report(submission, reason, elapsed, assignment: Assignment, config: RunConfig | None = None):
    """Score 0 with the reason, for when the grader itself broke (its
    provenance says so: a regrade grades it again)."""
    questions = assignment.registry().questions
    seed_id = seeds.seed_id(config.seed) if config is not None and config.seed is not None else ""
    try:
        made = provenance.make(assignment, Path(submission), provenance.raw_sha256(Path(submission)), seed_id, "none",
                               _scoring(config) if config is not None else report.CONTRACT_MODE,
                               provenance.GRADER_ERROR)
    except Exception:  # what broke the grader may break this too: the reason matters more
        made = None
    return report.Report(str(submission), (), report.question_scores((), questions), "none", elapsed, (), reason,
                         assignment=assignment.name, seed_id=seed_id, provenance=made)


def write_reports(rep, out_dir: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "results.json", report.gradescope_json(rep))
    write_atomic(out_dir / "junit.xml", report.junit_xml(rep))
    write_atomic(out_dir / "report.md", report.markdown(rep))


def grade_to(submission, out_dir, config=RunConfig()):
    """Grade and write the three reports; returns (report, grader_ok)."""
    start = time.monotonic()
    try:
        rep, ok = grade_submission(submission, config), True
    except Exception as exc:  # the grader broke: still leave a results.json
        rep, ok = failed_report(submission, f"grader error: {type(exc).__name__}: {exc}",
                                time.monotonic() - start, config.assignment, config), False
    write_reports(rep, Path(out_dir))
    return rep, ok


def grade_command(args) -> int:
    """`grader grade`: one submission (or, with none, the reference and the handout)."""
    try:
        config = config_from_args(args, max(1, args.jobs), Assignment.option(args.assignment))
    except ValueError as exc:
        print(f"grader grade: {exc}", file=sys.stderr)
        return 2
    if args.submission is None:  # the demo: 100 for the reference, 0 for the handout
        assignment = config.assignment
        targets = [(assignment.reference, Path(args.out) / "reference"),
                   (assignment.handout, Path(args.out) / "handout")]
    elif not Path(args.submission).exists():
        print(f"grader grade: {args.submission}: no such file or folder", file=sys.stderr)
        return 2
    else:
        targets = [(Path(args.submission), Path(args.out))]
    status = 0
    for submission, out in targets:
        rep, ok = grade_to(submission, out, config)
        status = max(status, _show(rep, ok, submission, out, args))
    return status


def _show(rep, ok, submission, out, args) -> int:
    """Print one submission's outcome (and its GitHub outputs); its exit status."""
    if not ci.wanted(getattr(args, "format", "auto")):
        return _print_outcome(rep, ok, submission, out, args)
    ci.emit_github(rep)  # our own lines, every message escaped
    with ci.commands_stopped():  # the rest quotes paths and reasons we do not control
        return _print_outcome(rep, ok, submission, out, args)


def _print_outcome(rep, ok, submission, out, args) -> int:
    if refusal(rep):
        print(f"grader grade: {refusal(rep)} (results in {out}/results.json)", file=sys.stderr)
        return EXIT_REFUSED
    print(f"{submission}: {report._fmt(rep.score)}/{rep.max_score}  (sandbox {rep.tier}, "
          f"{rep.execution_time:.1f} s, reports in {out}/)")
    print(report.score_table(rep))
    if not ok:
        print(rep.error, file=sys.stderr)
        return 1
    fail_under = getattr(args, "fail_under", None)
    if fail_under is not None and rep.score < fail_under:
        print(f"grader grade: score {report._fmt(rep.score)} is below --fail-under {report._fmt(fail_under)}",
              file=sys.stderr)
        return 1
    return 0
