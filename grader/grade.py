"""`grader grade`: grade one submission in the sandbox and write its reports.

grade_submission() is a pure map from a submission path to a Report (no
shared state), so grade-batch can run it over any executor. The parent only
compares values the workers wrote; it never imports student code or needle.
"""
import os
import sys
import tempfile
import time
from pathlib import Path

from grader import HANDOUT, REFERENCE, expected, report
from grader.cases import CASES, QUESTIONS
from grader.checks import check
from grader.submission import STUDENT_FILES, SubmissionError, extract_zip, locate
from grader.workers import RunConfig, add_limit_arguments, config_from_args, run_all

NOT_IMPLEMENTED = "NotImplementedError: "


def feedback(case, outcome, run):
    """Why a case has no value, in words a student can act on."""
    problem = outcome.problem
    if problem.startswith(NOT_IMPLEMENTED):
        problem = "not implemented: " + problem[len(NOT_IMPLEMENTED):].replace(": ", " ", 1)
    if run.problem and problem.startswith("no value"):
        problem = f"no value: the {case.question} worker stopped ({run.problem})"
    return f"{case.description}: {problem}"


def grade_cases(runs, answers):
    """One CaseResult per registered case; points split by case weight."""
    results, counters = [], {q: 0 for q in QUESTIONS}
    weights = {q: sum(c.weight for c in CASES if c.question == q) for q in QUESTIONS}
    for case in CASES:
        label, points = QUESTIONS[case.question]
        max_score = points * case.weight / weights[case.question]
        counters[case.question] += 1
        outcome, run = runs[case.question].outcomes[case.fn], runs[case.question]
        if outcome.ok:
            verdict = check(case, answers[case.fn].value, outcome.value)
            passed, output = verdict.passed, (case.description if verdict.passed
                                              else f"{case.description}: {verdict.message}")
        else:
            passed, output = False, feedback(case, outcome, run)
        results.append(report.CaseResult(case.name, case.question, f"{label}.{counters[case.question]}",
                                         max_score if passed else 0.0, max_score, passed, output,
                                         case.hidden))
    return tuple(results)


def _student_files(submission: Path, scratch: Path):
    if submission.is_file() and submission.suffix.lower() == ".zip":  # ALICE.ZIP too
        submission = extract_zip(submission, scratch / "unzipped")
    elif not submission.is_dir():
        raise SubmissionError(f"{submission}: not a folder or a .zip; pass a handout folder, "
                              "a zip of one, or a folder with the three files")
    located = locate(submission)
    return {**{rel: HANDOUT / rel for rel in STUDENT_FILES}, **located.files}, located.notes


def grade_submission(submission, config: RunConfig = RunConfig()) -> report.Report:
    """Grade one submission; a bad submission is graded 0 with the reason."""
    start, submission = time.monotonic(), Path(submission)
    answers = expected.load(config)
    with tempfile.TemporaryDirectory(prefix="submission-") as scratch:
        try:
            files, notes = _student_files(submission, Path(scratch))
        except SubmissionError as exc:  # refused: 0, nothing of it runs
            return report.Report(str(submission), (), report.question_scores(()), "none",
                                 time.monotonic() - start, (str(exc),))
        runs = run_all(files, config)
    cases = grade_cases(runs, answers)
    tier = next(iter(runs.values())).tier
    return report.Report(str(submission), cases, report.question_scores(cases), tier,
                         time.monotonic() - start, tuple(notes))


def failed_report(submission, reason, elapsed):
    """Score 0 with the reason, for when the grader itself broke."""
    return report.Report(str(submission), (), report.question_scores(()), "none", elapsed, (), reason)


def write_atomic(path: Path, text: str):
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


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
                                time.monotonic() - start), False
    write_reports(rep, Path(out_dir))
    return rep, ok


def add_arguments(parser, command):
    parser.add_argument("submission", nargs="?", help="handout folder, .zip of one, or folder with the "
                        "three student files (omitted: grade the reference and the empty handout)")
    parser.add_argument("--out", default="out", help="folder for results.json, junit.xml, report.md")
    parser.add_argument("--jobs", type=int, default=2, help="questions graded at once (default 2)")
    add_limit_arguments(parser)


def run(args, command):
    try:
        config = config_from_args(args, max(1, args.jobs))
    except ValueError as exc:
        print(f"grader grade: {exc}", file=sys.stderr)
        return 2
    if args.submission is None:  # the demo: 100 for the reference, 0 for the handout
        targets = [(REFERENCE, Path(args.out) / "reference"), (HANDOUT, Path(args.out) / "handout")]
    elif not Path(args.submission).exists():
        print(f"grader grade: {args.submission}: no such file or folder", file=sys.stderr)
        return 2
    else:
        targets = [(Path(args.submission), Path(args.out))]
    status = 0
    for submission, out in targets:
        rep, ok = grade_to(submission, out, config)
        print(f"{submission}: {report._fmt(rep.score)}/{rep.max_score}  (sandbox {rep.tier}, "
              f"{rep.execution_time:.1f} s, reports in {out}/)")
        print(report.score_table(rep))
        if not ok:
            print(rep.error, file=sys.stderr)
            status = 1
    return status
