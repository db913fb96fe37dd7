"""A case that hangs or kills its worker costs that case, not its question.

A question's cases run one after the other in one sandboxed worker, each
value written as soon as it is computed, and each case marked while it runs
(NAME.started, removed once its value is written). Two limits hold:

- the question's limit L (TimeLimit.seconds, time_limits.py) is the budget
  of all its runs together; the sandbox's wall-clock and CPU limits on each
  run keep it (the backstop, whatever the worker does);
- each case has its own (TimeLimit.cases: its share of L by the reference's
  time for it, at least time_limits.CASE_FLOOR_SECONDS): the parent watches
  the markers while the worker runs (CaseWatch, on the parent's own clock,
  from when it first saw a marker) and stops the worker when a case has run
  longer than its own limit.

When a worker is stopped (a case's limit, the question's, memory, a crash),
the cases that wrote a value keep it, and the case it was in is blamed: the
case the parent stopped, else the last case still marked as running, else
(no marker: the worker could not write one) the first case without a value,
once a case of the run reported. The markers are the untrusted worker's:
they only say which of its own cases a stop is blamed on, never a value. A
stop before any case started (a hang at import) costs the question. The
blamed case gets its own problem (naming the limit); the question's cases
without a value run again in a new worker (QUESTION@case,...), those of
another op than the stopped cases' first, the shorter limits first. Once
every other case has run, the cases stopped by their own limits run again,
in a worker without limits of their own (only what is left of L): a case's
own limit decides only when it waits for the others, so an honest but slow
case loses nothing the question's limit would not have cost it.

The budget: a restarted worker's limit is what is left of L plus a restart
allowance A (TimeLimit.restart: twice the worker's start on this machine, at
least time_limits.RESTART_FLOOR_SECONDS), and its run is charged its wall
time beyond A (the first run: all of it). Workers are restarted while at
least MIN_LEFT_SECONDS of L are left, at most MAX_RESTARTS times. So a
question's workers take at most L + MAX_RESTARTS x A of wall time in all
(plus each stop's teardown, about sandbox.WATCH_SECONDS), and a hung op
costs each case that calls it its own limit and a restart, not the question.
"""

import dataclasses
import math
import time as clock

from grader.grading.run.outcomes import Outcome
from grader.grading.run.time_limits import TimeLimit

MAX_RESTARTS = 16
MIN_LEFT_SECONDS = 1.0
STARTED = ".started"  # the worker's STARTED: NAME.started while case NAME runs
NO_VALUE = "no value"  # outcomes.read_outcome's words for a case the worker never reached
OUT_OF_TIME = ("timeout", "CPU time limit")
CASE_STOP = "case time limit"  # CaseWatch's reason: the run's problem when it stopped a case


class CaseWatch:
    """sandbox.run's `watch` for one worker run under `limit`: stops it when
    a case has been marked as running longer than its own limit, timed from
    when the parent first saw the marker. `stopped_in`: the case it stopped."""

    def __init__(self, limit: TimeLimit, now=clock.monotonic):
        self.limit, self.now, self.seen, self.stopped_in = limit, now, {}, ""

    def __call__(self, names) -> str:
        now = self.now()
        for name in sorted(n[: -len(STARTED)] for n in names if n.endswith(STARTED)):
            if name + ".json" in names:  # reported: its marker is about to go
                continue
            since = self.seen.setdefault(name, now)
            if now - since > self.limit.case_seconds(name):
                self.stopped_in = name
                return f"{CASE_STOP}: {name} ran past its own {self.limit.case_seconds(name):g} s"
        return ""


def stopped(run) -> bool:
    """The worker ended badly after importing the library (a case may be the cause)."""
    return bool(run.problem) and not run.import_error


def missing(outcomes, names) -> list:
    """`names` (in the order the worker ran them) that have no value: the worker never reported them."""
    return [n for n in names if not outcomes[n].ok and outcomes[n].problem.startswith(NO_VALUE)]


def blamed(run, names, stopped_in: str = "") -> str:
    """The case of `names` (the run's, in its order) a stopped worker was in:
    `stopped_in` (the case the parent stopped), else the last case the
    worker marked as running without a value, else the first case without a
    value once another reported; "" when no case can be told (a stop
    before any case started)."""
    if stopped_in in names:
        return stopped_in
    unreported = missing(run.outcomes, names)
    marked = [n for n in unreported if n in run.started]
    if marked:
        return marked[-1]
    return unreported[0] if unreported and len(unreported) < len(names) else ""


def hung_problem(run, name: str, stopped_in: str) -> str:
    """The hung case's own words: what stopped the worker, while it ran this case."""
    rest = "its question's other cases ran without it"
    if name == stopped_in:
        seconds = run.limit.case_seconds(name)
        how = run.limit.cases.why if run.limit.cases is not None else "its question's limit"
        return (
            f"did not finish in time ({seconds:g} s, this case's own limit): the worker was stopped while "
            f"running this case (timeout after {seconds:g} s, {how}); {rest}, and the time they left was "
            f"not enough to run it again"
        )
    if run.problem.startswith(OUT_OF_TIME):
        seconds = f"{run.limit.seconds:g} s" if run.limit is not None else "its limit"
        return (
            f"did not finish in time ({seconds}): the worker was stopped while running this case "
            f"({run.problem}); {rest}"
        )
    return f"the worker stopped while running this case: {run.problem}; {rest}"


def rerun_order(names, hung, cases, limit: TimeLimit) -> list:
    """`names` to run again: the cases of another op than the `hung` cases'
    first, those calling a hung case's op last (the likeliest to hang too);
    within each, those with the shorter limits of their own first (a long
    case that hangs too then costs the question's rest of the time last)."""

    def op(name):
        call = cases[name].call if name in cases else None
        return call.op if call is not None else None

    hung_ops = {op(n) for n in hung} - {None}
    return sorted(names, key=lambda n: (op(n) in hung_ops, limit.case_seconds(n)))


def restart_limit(time: TimeLimit, left: float, own: bool) -> TimeLimit:
    """A restarted worker's limit: what is left of the question's, plus the
    restart allowance; `own`: each case keeps its own limit (else none)."""
    return dataclasses.replace(
        time,
        seconds=math.floor((left + time.restart) * 10) / 10,  # down: the bound holds
        why=f"limit: the {left:.1f} s left of its question's {time.seconds:g} s, plus {time.restart:g} s to "
        f"restart; the question's {time.why}",
        cases=time.cases if own else None,
    )


def spent_problem(time: TimeLimit, seconds: float, hung: int, restarts: int, last: str = "") -> str:
    """Why the cases left had no run: the question's limit, or its restarts,
    were spent; `last`: what stopped the last worker (said, so that the
    student learns the cause, not only the count)."""
    if restarts >= MAX_RESTARTS:
        cause = f", the last one by: {last}" if last else ""
        return f"{restarts} restarts, the most a question gets: {hung} of its cases stopped its workers{cause}"
    return (
        f"timeout after {seconds:.0f} s in all its workers, its limit spent once {hung} of its cases had "
        f"stopped them; {time.why}"
    )


def isolate(names, time: TimeLimit, run, cases):
    """The question's QuestionRun, each hung case costing itself alone:
    `names` its cases in the worker's order; `time` its TimeLimit;
    `run(chosen, limit, watch)` a worker run of `chosen` (None: the whole
    question) under TimeLimit `limit`, watched by `watch` (a CaseWatch);
    `cases` name -> Case (their ops). The result's `hung` names the cases
    a worker was stopped in and that got no value after, in that order."""
    watch = CaseWatch(time)
    first = current = run(None, time, watch)
    if not stopped(first):
        return first
    outcomes, pending, stops, set_aside, cleared = dict(first.outcomes), list(names), [], [], set()
    seconds, log, spent, restarts, problem, spent_out = first.seconds, first.log, first.seconds, 0, "", False
    while True:
        blame = blamed(current, pending, watch.stopped_in) if stopped(current) else ""
        if blame:
            outcomes[blame] = Outcome(False, problem=hung_problem(current, blame, watch.stopped_in))
            stops += [blame] if blame not in stops else []
            set_aside += [blame] if blame == watch.stopped_in and watch.limit.cases is not None else []
            pending = [n for n in missing(current.outcomes, pending) if n != blame]
        else:  # a clean end, or a stop before any case started: what has no value stays so
            problem, pending = problem or (current.problem if missing(current.outcomes, pending) else ""), []
        retrying = not pending and watch.limit.cases is not None and bool(set_aside)
        pending = list(set_aside) if retrying else pending  # stopped by their own limits: the rest of the time
        left = time.seconds - spent
        spent_out = bool(pending) and (left < MIN_LEFT_SECONDS or restarts >= MAX_RESTARTS)
        if not pending or spent_out:
            break
        own = watch.limit.cases is not None and not retrying
        pending = rerun_order(pending, stops, cases, time) if own else pending
        watch = CaseWatch(restart_limit(time, left, own))
        current = run(pending, watch.limit, watch)
        restarts, seconds, log = restarts + 1, seconds + current.seconds, log + current.log
        spent += max(0.0, current.seconds - time.restart)
        reported = {n: o for n, o in current.outcomes.items() if n in pending and not missing(current.outcomes, [n])}
        cleared |= set(reported) & set(set_aside)
        outcomes.update({n: o for n, o in current.outcomes.items() if n in pending and n not in set_aside})
        outcomes.update(reported)
    if spent_out and missing(outcomes, pending):
        problem = spent_problem(time, seconds, len(stops), restarts, current.problem)
    return dataclasses.replace(
        first,
        outcomes=outcomes,
        problem=problem if missing(outcomes, names) else "",
        hung=tuple(n for n in stops if n not in cleared),
        seconds=round(seconds, 3),
        log=log,
        import_error=first.import_error or current.import_error,
    )


def notes(runs, registry) -> list:
    """One line per hung case, for the report's notes."""
    return [
        f"{registry.question[q].label} {name}: {runs[q].outcomes[name].problem.split(':', 1)[0]}; "
        f"its question's other cases ran without it"
        for q in runs
        for name in getattr(runs[q], "hung", ())
    ]
