"""The words a student reads when a case has no value: not run, not
implemented (a handout stub), or the error, cut down for hidden cases.

Pure functions of a case, its worker outcome and its question's run (the
trusted parent's records of what the worker sent back).
"""
import re

NOT_IMPLEMENTED = "NotImplementedError: "
# The handout's stubs raise NotImplementedError("Q2: EWiseDiv.gradient"): a
# hidden case may say that much of a student's text, and no more.
STUB = re.compile(r"^NotImplementedError: Q\d{1,2}: [A-Za-z_][\w.]{0,60}$")


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


def import_notes(runs, registry):
    """Each distinct import failure once, with the questions it cost."""
    failures = {}
    for run in runs.values():
        if run.import_error:
            failures.setdefault(run.import_error, []).append(registry.question[run.question].label)
    return [f"{error} (costs {', '.join(sorted(labels))})" for error, labels in failures.items()]
