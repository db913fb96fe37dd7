"""The words a student reads when a case has no value: not run, not
implemented (a handout stub), or the error, cut down for hidden cases.

Pure functions of a case, its worker outcome and its question's run (the
trusted parent's records of what the worker sent back), and of the stubs
the handout really has (`stubs_in`).

A hidden case shows only what the grader chose to say: the name of a
built-in exception from a fixed list (else "an exception"), a handout stub
by its name when it is one of the handout's, and the kind of a worker's
stop; never a message, a class or stub name, a length or a count the
student's code picked, which could carry out what the case looks like.
"""

import re

NOT_IMPLEMENTED = "NotImplementedError: "
# The handout's stubs raise NotImplementedError("Q2: EWiseDiv.gradient").
STUB = re.compile(r"^NotImplementedError: (Q\d{1,2}: [A-Za-z_][\w.]{0,60})$")
STUB_LINE = re.compile(r"""raise NotImplementedError\(["'](Q\d{1,2}: [A-Za-z_][\w.]{0,60})["']\)""")
# What a hidden case may name: built-in exceptions (a student's own class is "an exception").
SHOWN_ERRORS = frozenset(
    (
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "FloatingPointError",
        "ImportError",
        "IndexError",
        "KeyError",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "RecursionError",
        "RuntimeError",
        "StopIteration",
        "SystemExit",
        "TypeError",
        "UnboundLocalError",
        "ValueError",
        "ZeroDivisionError",
    )
)
HIDDEN_NOTE = "messages are shown for public cases only"
# A worker's stop, as a hidden case may say it: the grader's limits by name;
# an exit status or a signal number the student's code chose, never.
STOPS = (
    ("timeout", "timeout"),
    ("CPU time limit", "CPU time limit"),
    ("memory limit", "memory limit"),
    ("file size limit", "file size limit"),
    ("output directory over its limit", "output limit"),
    ("crashed", "crashed"),
)


def stubs_in(texts) -> frozenset:
    """The stubs ("Q2: EWiseDiv.gradient") the handout's student files raise."""
    return frozenset(m.group(1) for text in texts for m in STUB_LINE.finditer(text))


def stub_of(outcome, run, stubs=None) -> str:
    """ "Q2 EWiseDiv.gradient" when the case stopped at one of the handout's
    `stubs` (None: any stub-shaped message), else "" (the worker's `(at ...)`
    after it says nothing the stub's name does not)."""
    error = "" if run.import_error or outcome.ok else outcome.problem.split(" (at ", 1)[0]
    found = STUB.match(error)
    if not found or (stubs is not None and found.group(1) not in stubs):
        return ""
    return found.group(1).replace(": ", " ", 1)


def worker_stop(problem: str) -> str:
    """Why a worker stopped, in the grader's words only."""
    return next((said for start, said in STOPS if problem.startswith(start)), "it stopped early")


def _hidden(outcome) -> str:
    if outcome.error_type:
        shown = outcome.error_type if outcome.error_type in SHOWN_ERRORS else "an exception"
        return f"raised {shown} ({HIDDEN_NOTE})"
    if outcome.problem.startswith("unreadable value"):
        return f"unreadable value ({HIDDEN_NOTE})"
    return outcome.problem.split(":", 1)[0]  # "no value": the grader's own words


def feedback(case, outcome, run, stubs=None):
    """Why a case has no value, in words a student can act on (a hidden
    case: only what the grader chose to say, see the module doc)."""
    if run.import_error:
        return f"{case.description}: not run: {run.import_error}"
    if stub_of(outcome, run, stubs):  # one line per question in report.md
        return f"{case.description}: not implemented: {stub_of(outcome, run, stubs)}"
    problem = _hidden(outcome) if case.hidden else outcome.problem
    if problem.startswith(NOT_IMPLEMENTED):
        problem = "not implemented: " + problem[len(NOT_IMPLEMENTED) :].replace(": ", " ", 1)
    if run.problem and problem.startswith("no value"):
        stop = worker_stop(run.problem) if case.hidden else run.problem
        problem = f"no value: the {case.question} worker stopped ({stop})"
    return f"{case.description}: {problem}"


def import_notes(runs, registry):
    """Each distinct import failure once, with the questions it cost."""
    failures = {}
    for run in runs.values():
        if run.import_error:
            failures.setdefault(run.import_error, []).append(registry.question[run.question].label)
    return [f"{error} (costs {', '.join(sorted(labels))})" for error, labels in failures.items()]
