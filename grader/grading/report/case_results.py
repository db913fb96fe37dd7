"""One CaseResult per registered case, from the workers' runs and the
expected answers: verdict, points, feedback, contract line and the
student's line a failure points at."""

from functools import lru_cache
from pathlib import Path

from grader import sandbox
from grader.core.assignment import Assignment
from grader.grading.explain import student_lines
from grader.grading.explain.causes import diagnose as causes
from grader.grading.explain.feedback import feedback, stub_of, stubs_in
from grader.grading.report.results import CaseResult
from grader.grading.report.scoring import max_scores
from grader.grading.run import derived
from grader.shipped.checks import check


@lru_cache(maxsize=4)
def _test_set(reader, data: Path):
    """Read once per process: a batch grades many submissions against it.
    From the sandbox's copy of the data folder (our own, as the workers see
    it), which keeps gzip files decompressed too; the folder itself if that
    copy cannot be made (the check then says what is wrong)."""
    try:
        data = sandbox.shared_copy(data)
    except (OSError, sandbox.SandboxError):
        pass
    return reader(data)


def prefetch_test_set(assignment) -> None:
    """Read the test set now (in a thread, while the questions run), if a case checks a test error."""
    reader = assignment.registry().read_test_set
    if reader is not None:
        try:
            _test_set(reader, assignment.data)
        except Exception:  # the check says why, when it runs
            pass


@lru_cache(maxsize=4)
def handout_stubs(handout: Path, student_files: tuple) -> frozenset:
    """The stubs the pristine handout's student files raise (feedback.stubs_in)."""
    texts = []
    for rel in student_files:
        try:
            texts.append((handout / rel).read_text(encoding="utf-8"))
        except OSError:
            pass
    return stubs_in(texts)


def _verdict(case, runs, answers, test_set, drawn, stubs):
    run = runs[case.question]
    outcome = run.outcomes[case.value_key]
    if not outcome.ok:
        return False, feedback(case, outcome, run, stubs)
    verdict = check(case, answers[case.value_key].value, outcome.value, test_set, drawn)
    return verdict.passed, case.description if verdict.passed else f"{case.description}: {verdict.message}"


def _constant(case, runs, answers) -> bool:
    """derived.constant() of a second-order case's value (False when it has none)."""
    outcome = runs[case.question].outcomes.get(case.value_key)
    want = answers.get(case.value_key)
    return bool(outcome and outcome.ok and want and want.ok and derived.constant(want.value, outcome.value))


def grade_cases(
    runs,
    answers,
    strict=False,
    assignment: Assignment | None = None,
    drawn=True,
    sources=None,
    display=None,
    diagnose=None,
):
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
    stubs = handout_stubs(assignment.handout, tuple(assignment.student_files))
    verdicts = {case.name: _verdict(case, runs, answers, test_set, drawn, stubs) for case in registry.cases}
    pairs = derived.evidence(registry.cases)
    constants = {
        name: _constant(registry.by_name[name], runs, answers)
        for name in {n for names in pairs.values() for n in names}
    }
    for case in registry.cases:
        kind = "a" if case.advisory else ""
        counters[(case.question, kind)] = counters.get((case.question, kind), 0) + 1
        number = f"{labels[case.question].label}.{kind}{counters[(case.question, kind)]}"
        passed, output = verdicts[case.name]
        why = derived.unearned(case.name, constants, pairs) if passed else ""
        if why:
            passed, output = False, f"{output}: {why}"
        if not passed and diagnose:
            output = causes.with_cause(output, diagnose(case, runs[case.question].outcomes[case.value_key]))
        contract = registry.beyond[case.contract] if case.advisory else registry.contract[case.contract]
        blocked = bool(runs[case.question].import_error)
        run = runs[case.question]
        stub = stub_of(run.outcomes[case.value_key], run, stubs)
        where = (
            ""
            if passed
            else student_lines.case_where(case, run.outcomes[case.value_key], run, sources or {}, display or {})
        )
        results.append(
            CaseResult(
                case.name,
                case.question,
                number,
                points[case.name] if passed else 0.0,
                points[case.name],
                passed,
                output,
                case.hidden,
                case.advisory,
                contract,
                blocked,
                stub,
                where,
            )
        )
    return tuple(results)
