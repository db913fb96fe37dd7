"""A case that hangs or kills its worker costs that case, not its question.

A question's cases run in one sandboxed worker under the question's time
limit, one after the other, each value written as soon as it is computed.
When the worker is stopped (out of time, out of memory, crashed), the cases
that already wrote a value keep it; the first case without one is the case
the worker was in: it gets its own problem, naming the limit. The cases
after it run again, in a worker of their own (the worker's QUESTION@case,...
option) under the same limit, the cases of another op first and those
calling the hung case's op last (they are the likeliest to hang too). At
most MAX_RERUNS such runs: the question's cost stays bounded, at most
(1 + MAX_RERUNS) x its limit, and each run keeps the question's whole limit.
"""

import dataclasses

from grader.grading.run.outcomes import Outcome

MAX_RERUNS = 2
NO_VALUE = "no value"  # outcomes.read_outcome's words for a case the worker never reached
OUT_OF_TIME = ("timeout", "CPU time limit")


def stopped(run) -> bool:
    """The worker ended badly after importing the library (a case may be the cause)."""
    return bool(run.problem) and not run.import_error


def hung_problem(run) -> str:
    """The hung case's own words: what stopped the worker, while it ran this case."""
    if run.problem.startswith(OUT_OF_TIME):
        seconds = f"{run.limit.seconds:g} s" if run.limit is not None else "its limit"
        return (
            f"did not finish in time ({seconds}): the worker was stopped while running this case "
            f"({run.problem}); the question's other cases ran again without it"
        )
    return f"the worker stopped while running this case: {run.problem}; the question's other cases ran again without it"


def missing(run, names) -> list:
    """`names` (in the order the worker ran them) that have no value: the worker never reported them."""
    return [n for n in names if not run.outcomes[n].ok and run.outcomes[n].problem.startswith(NO_VALUE)]


def rerun_order(names, hung, cases) -> list:
    """The rest after `hung`: the cases of another op first, those calling the hung case's op last."""

    def op(name):
        call = cases[name].call if name in cases else None
        return call.op if call is not None else None

    hung_op = op(hung)
    if hung_op is None:
        return list(names)
    return [n for n in names if op(n) != hung_op] + [n for n in names if op(n) == hung_op]


def isolate(run, names, rerun, cases, max_reruns: int = MAX_RERUNS):
    """The question's run with each hung case isolated: `names` the cases the
    first worker ran, in its order; `rerun(names)` runs only those, in that
    order, under the question's limit; `cases` name -> Case (for their op).
    The result's `hung` names the cases the worker was stopped in."""
    if not stopped(run):
        return run
    outcomes, hung, current, pending, seconds, log = dict(run.outcomes), [], run, list(names), run.seconds, run.log
    for attempt in range(max_reruns + 1):
        if not stopped(current):
            break
        unreported = missing(current, pending)
        if not unreported:
            break
        first, rest = unreported[0], unreported[1:]
        hung.append(first)
        outcomes[first] = Outcome(False, problem=hung_problem(current))
        if not rest or attempt == max_reruns:
            break
        pending = rerun_order(rest, first, cases)
        current = rerun(pending)
        outcomes.update({n: current.outcomes[n] for n in pending})
        seconds, log = seconds + current.seconds, log + current.log
    problem = current.problem if missing(current, pending) and stopped(current) else ""
    return dataclasses.replace(
        run,
        outcomes=outcomes,
        problem=problem,
        hung=tuple(hung),
        seconds=seconds,
        log=log,
        import_error=run.import_error or current.import_error,
    )


def notes(runs, registry) -> list:
    """One line per hung case, for the report's notes."""
    return [
        f"{registry.question[q].label} {name}: {runs[q].outcomes[name].problem.split(':', 1)[0]}; "
        f"its question's other cases were run again without it"
        for q in runs
        for name in getattr(runs[q], "hung", ())
    ]
