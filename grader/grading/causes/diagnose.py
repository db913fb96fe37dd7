"""Name a failing case's likely cause: the one known bug that gives the
student's result on the same inputs.

For a scored value case that failed, each catalogue mutant whose result on
that case differs from the reference's (the bug reaches it) is compared with
the student's: values by the case's own rule and tolerance (checks.py, the
mutant standing in for the reference), errors by their exact text (the place
aside). When the matches name exactly one cause, the case gets a line
`Likely cause: ...`; none or several, no line: never a guess. When no value
matches but the student's gradient has the wrong shape, a mutant flagged
`shape_tells` with that very shape names it (e.g. a BroadcastTo adjoint of
the output's shape was not summed back). A bug is ruled out when the
student passes a case it breaks: a DivScalar.compute that multiplies gives
the same Q2 values as a DivScalar.gradient that multiplies, but a student
passing Q1's DivScalar case has only the second.

Hidden cases get the line too: it is a fixed sentence chosen among the
catalogue's few dozen, naming a kind of mistake, and holds no value, count
or position of the expected answer. Repeated submissions learn from it at
most which of those sentences their own result fits, of the same order as
the pass/fail bit every case already gives.

Advisory cases (beyond the contract) get none: a correct solution may fail
them on purpose, and must never be told it has a bug.
"""
import numpy as np

from grader.grading import checks
from grader.grading.causes import catalogue, store

PREFIX = "Likely cause: "
VALUE_CHECKS = ("close", "analytic")   # a value of its own, compared entry by entry
NOT_IMPLEMENTED = "NotImplementedError"


def eligible(case, outcome) -> bool:
    """A scored value case of a question the catalogue covers, failed with a
    value or an exception of the student's code (not a stub, not a timeout)."""
    questions = {q for m in catalogue.MUTANTS for q in m.questions}
    if case.advisory or case.check not in VALUE_CHECKS or case.question not in questions:
        return False
    return outcome.ok or (bool(outcome.error_type) and outcome.error_type != NOT_IMPLEMENTED)


def _error_text(outcome) -> str:
    return outcome.problem.split(" (at ", 1)[0]


def _same(case, first, second) -> bool:
    """Two results of a case agree: values by the case's check, errors by their text."""
    if first.ok and second.ok:
        return checks.check(case, first.value, second.value).passed
    if first.ok or second.ok:
        return False
    return bool(first.error_type) and _error_text(first) == _error_text(second)


def _shapes(value):
    """The shapes of the arrays in a value, in order (the gradient of a case)."""
    if isinstance(value, dict):
        value = value.get("analytic", [value[k] for k in sorted(value)])
    if isinstance(value, list):
        return tuple(s for v in value for s in _shapes(v))
    return (np.shape(value),)


def _reaches(case, reference, outcome) -> bool:
    """The bug changes this case's result (else it explains nothing there)."""
    return outcome is not None and (outcome.ok or bool(outcome.error_type)) and not _same(case, reference, outcome)


def refuted(cases, student: dict, answers, mutant_outcomes: dict) -> frozenset:
    """Names of the known bugs that break a case the student passed: the
    student's code does not have them. student: case name -> Outcome."""
    passed = [c for c in cases if c.check in VALUE_CHECKS and c.value_key in student
              and c.value_key in answers and _same(c, answers[c.value_key], student[c.value_key])]
    out = set()
    for mutant in catalogue.MUTANTS:
        values = mutant_outcomes.get(mutant.name, {})
        if any(_reaches(c, answers[c.value_key], values.get(c.value_key)) for c in passed):
            out.add(mutant.name)
    return frozenset(out)


def cause_of(case, student, reference, mutant_outcomes: dict, ruled_out=frozenset()) -> str:
    """The message of the one known bug that explains `student`'s result, or "".
    mutant_outcomes: mutant name -> {case name -> Outcome}; `ruled_out`: bugs
    the student's passed cases exclude (refuted())."""
    reached = []
    for mutant in catalogue.MUTANTS:
        outcome = mutant_outcomes.get(mutant.name, {}).get(case.value_key)
        if mutant.name not in ruled_out and _reaches(case, reference, outcome):
            reached.append((mutant, outcome))
    causes = {m.message for m, outcome in reached if _same(case, outcome, student)}
    if not causes and student.ok and reference.ok and _shapes(student.value) != _shapes(reference.value):
        causes = {m.message for m, outcome in reached
                  if m.shape_tells and outcome.ok and _shapes(outcome.value) == _shapes(student.value)}
    return next(iter(causes)) if len(causes) == 1 else ""


def diagnoser(config, answers, runs):
    """case, outcome -> the `Likely cause: ...` line or "". The mutants'
    values are loaded (built, the first time on a seed) only when a case
    first needs them: a correct submission costs nothing."""
    if config.assignment.name != catalogue.ASSIGNMENT:  # the catalogue knows hw1's bugs only
        return None
    loaded = {}

    def diagnose(case, outcome) -> str:
        if not eligible(case, outcome):
            return ""
        if "values" not in loaded:
            loaded["values"] = store.load(config)
            student = {name: o for run in runs.values() for name, o in run.outcomes.items()}
            loaded["ruled_out"] = refuted(config.assignment.registry().cases, student, answers, loaded["values"])
        cause = cause_of(case, outcome, answers[case.value_key], loaded["values"], loaded["ruled_out"])
        return PREFIX + cause if cause else ""

    return diagnose


def with_cause(output: str, line: str) -> str:
    """The case's feedback, with the cause on a line of its own below it."""
    return f"{output}\n{line}" if line else output
