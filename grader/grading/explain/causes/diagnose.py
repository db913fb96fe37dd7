"""Name a failing case's likely cause: the one known bug that gives the
student's result on the same inputs.

The rule itself (which bugs reach a case, which match the student's
result, the shape-only match, the bugs a passed case rules out) lives in
grader/shipped/likely_cause.py, which the handout's `make test` shares on
the public inputs; this module feeds it the grader's outcomes: the student's,
the expected answers and the catalogue mutants' values on the grading seed
(store.py). E.g. a DivScalar.compute that multiplies gives the same Q2
values as a DivScalar.gradient that multiplies, but a student passing Q1's
DivScalar case has only the second.

Hidden cases get the line too: it is a fixed sentence chosen among the
catalogue's few dozen, naming a kind of mistake, and holds no value, count
or position of the expected answer. Repeated submissions learn from it at
most which of those sentences their own result fits, of the same order as
the pass/fail bit every case already gives.

Advisory cases (beyond the contract) get none: a correct solution may fail
them on purpose, and must never be told it has a bug.
"""

from functools import lru_cache

from grader.grading.explain.causes import catalogue, store
from grader.shipped import checks, likely_cause

PREFIX = likely_cause.PREFIX
VALUE_CHECKS = likely_cause.VALUE_CHECKS
COVERED = frozenset(q for m in catalogue.MUTANTS for q in m.questions)  # questions the catalogue has bugs of


def result(outcome):
    """An Outcome as the shared rule reads it: the error's text without its place."""
    if outcome is None:
        return None
    error = likely_cause.error_text(outcome.problem.split(" (at ", 1)[0]) if outcome.error_type else ""
    return likely_cause.Result(outcome.ok, outcome.value, error)


def eligible(case, outcome) -> bool:
    """A scored value case of a question the catalogue covers, failed with a
    value or an exception of the student's code (not a stub, not a timeout)."""
    return case.question in COVERED and likely_cause.eligible(case, result(outcome))


def agreeing(case):
    """The case's own check, the first value standing in for the reference's."""
    return lambda want, got: checks.check(case, want, got).passed


def known(case, mutant_outcomes: dict) -> list:
    """Each catalogue bug's result on `case` (None where it has none)."""
    return [
        likely_cause.Known(
            m.name, m.message, result(mutant_outcomes.get(m.name, {}).get(case.value_key)), m.shape_tells
        )
        for m in catalogue.MUTANTS
    ]


def reaching(case, reference, mutant_outcomes: dict, table=None) -> frozenset:
    """Names of the known bugs whose result on `case` is not the reference's
    (likely_cause.reaches). It depends on neither the student nor the
    submission: `table` (reach_table()) keeps it for the process."""
    if table is not None and case.name in table:
        return table[case.name]
    agree, want = agreeing(case), result(reference)
    found = frozenset(k.name for k in known(case, mutant_outcomes) if likely_cause.reaches(agree, want, k.result))
    if table is not None:
        table[case.name] = found
    return found


@lru_cache(maxsize=2)
def reach_table(folder) -> dict:
    """case name -> reaching() (cases sharing a value may check it apart),
    filled as cases ask, for the known bugs' values in `folder` (their
    seed, hence the course's answers): comparing every bug's value with the
    reference's on every case a student passed took each failing grading
    0.25 s anew."""
    return {}


def refuted(cases, student: dict, answers, mutant_outcomes: dict, table=None) -> frozenset:
    """Names of the known bugs that break a case the student passed: the
    student's code does not have them (likely_cause.ruled_out). student:
    case name -> Outcome."""
    passed = [
        c
        for c in cases
        if c.check in VALUE_CHECKS
        and c.value_key in student
        and c.value_key in answers
        and likely_cause.same(agreeing(c), result(answers[c.value_key]), result(student[c.value_key]))
    ]
    return frozenset().union(*(reaching(c, answers[c.value_key], mutant_outcomes, table) for c in passed))


def cause_of(case, student, reference, mutant_outcomes: dict, ruled_out=frozenset(), table=None) -> str:
    """The message of the one known bug that explains `student`'s result, or "".
    mutant_outcomes: mutant name -> {case name -> Outcome}; `ruled_out`: bugs
    the student's passed cases exclude (refuted()). The bugs that do not
    reach the case are left out before the rule looks (it would find so)."""
    known_here = known(case, mutant_outcomes)
    unreached = {k.name for k in known_here} - reaching(case, reference, mutant_outcomes, table)
    return likely_cause.cause(agreeing(case), result(student), result(reference), known_here, ruled_out | unreached)


def diagnoser(config, answers, runs, rerun=None):
    """case, outcome -> the `Likely cause: ...` line or "". The mutants'
    values are loaded (built, the first time on a seed) only when a case
    first needs them: a correct submission costs nothing. They are on the
    course's inputs (config's); when the grading drew the submission's own,
    `rerun()` gives (the course's answers, the student's runs on the course's
    inputs), called once, when a case first needs it, and a failed case is
    diagnosed from its result there."""
    if not catalogue.covers(config.assignment):
        return None
    loaded = {}

    def diagnose(case, outcome) -> str:
        if not eligible(case, outcome):
            return ""
        if "values" not in loaded:
            loaded["values"] = store.load(config)
            loaded["table"] = reach_table(store.causes_dir(config))
            loaded["answers"], loaded["runs"] = rerun() if rerun else (answers, runs)
            student = {name: o for run in loaded["runs"].values() for name, o in run.outcomes.items()}
            loaded["ruled_out"] = refuted(
                config.assignment.registry().cases, student, loaded["answers"], loaded["values"], loaded["table"]
            )
        if rerun:
            outcome = loaded["runs"][case.question].outcomes.get(case.value_key)
            if outcome is None or not eligible(case, outcome):
                return ""
        cause = cause_of(
            case, outcome, loaded["answers"][case.value_key], loaded["values"], loaded["ruled_out"], loaded["table"]
        )
        return PREFIX + cause if cause else ""

    return diagnose


def with_cause(output: str, line: str) -> str:
    """The case's feedback, with the cause on a line of its own below it."""
    return f"{output}\n{line}" if line else output
