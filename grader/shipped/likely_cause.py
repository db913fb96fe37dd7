"""The `Likely cause:` rule, for both sides: the grader
(grader/grading/explain/causes/diagnose.py, on a grading seed's inputs) and the
handout's `make test`, which ships a generated copy
(tests/hw1/hw1_cases/likely_cause.py) and applies it to the known bugs'
values on the public inputs, which the handout ships. numpy only, pure
functions; a case's own check comes in as `agree(want, got) -> bool`, so
that each side compares with its own copy of checks.py.

The rule, for a failing case: each known bug whose result on the case
differs from the reference's (the bug reaches it) is compared with the
student's result, values by the case's check (the bug's value standing in
for the reference's), errors by their text without the place. Exactly one
cause among the matches names it; none or several, no line: never a guess.
When no value matches but the student's gradient has the wrong shape, a bug
flagged `shape_tells` with that very shape names it. A bug is ruled out when
the student passes a case it breaks.
"""

from dataclasses import dataclass

import numpy as np

PREFIX = "Likely cause: "
VALUE_CHECKS = ("close", "analytic")  # a value of its own, compared entry by entry
NOT_IMPLEMENTED = "NotImplementedError"
MAX_ERROR = 300  # characters of an error's text compared (the grader keeps as many of the worker's)


@dataclass(frozen=True)
class Result:
    """A case's result: its value, or the text of the exception its code
    raised ("ValueError: ...", without where), or neither (it never
    finished: a timeout, a crash)."""

    ok: bool
    value: object = None
    error: str = ""

    @property
    def error_type(self) -> str:
        return self.error.split(":", 1)[0] if self.error else ""


@dataclass(frozen=True)
class Known:
    """A known bug's result on one case, with the words a student acts on."""

    name: str
    message: str
    result: object  # a Result, or None when the bug has none on this case
    shape_tells: bool = False


def error_text(text: str) -> str:
    """An exception's text as both sides compare it: one printable line, capped."""
    return "".join(ch if ch.isprintable() else " " for ch in str(text))[:MAX_ERROR]


def eligible(case, result) -> bool:
    """A scored value case, failed with a value or an exception of the
    student's code (not a stub, not a timeout). Advisory cases never: a
    correct solution may fail them on purpose."""
    if case.advisory or case.check not in VALUE_CHECKS:
        return False
    return result.ok or (bool(result.error) and result.error_type != NOT_IMPLEMENTED)


def same(agree, first, second) -> bool:
    """Two results of a case agree: values by the case's check, errors by their text."""
    if first.ok and second.ok:
        return agree(first.value, second.value)
    if first.ok or second.ok:
        return False
    return bool(first.error) and first.error == second.error


def reaches(agree, reference, result) -> bool:
    """The bug changes this case's result (else it explains nothing there)."""
    return result is not None and (result.ok or bool(result.error)) and not same(agree, reference, result)


def shapes(value) -> tuple:
    """The shapes of the arrays in a value, in order (the gradient of a case)."""
    if isinstance(value, dict):
        value = value.get("analytic", [value[k] for k in sorted(value)])
    if isinstance(value, list):
        return tuple(s for v in value for s in shapes(v))
    return (np.shape(value),)


def ruled_out(passed) -> frozenset:
    """Names of the known bugs that break a case the student passed.
    passed: (agree, reference Result, [Known]) per case the student passed."""
    return frozenset(k.name for agree, reference, known in passed for k in known if reaches(agree, reference, k.result))


def cause(agree, student, reference, known, excluded=frozenset()) -> str:
    """The message of the one known bug that explains `student`'s result, or "".
    known: a Known per bug of the catalogue; `excluded`: ruled_out()'s names."""
    reached = [k for k in known if k.name not in excluded and reaches(agree, reference, k.result)]
    causes = {k.message for k in reached if same(agree, k.result, student)}
    if not causes and student.ok and reference.ok and shapes(student.value) != shapes(reference.value):
        causes = {
            k.message
            for k in reached
            if k.shape_tells and k.result.ok and shapes(k.result.value) == shapes(student.value)
        }
    return next(iter(causes)) if len(causes) == 1 else ""
