"""The student's side: one extra sandboxed run over the candidates of every
failing shrinkable case, each checked with its case's own check.

Nothing runs for a submission without such a failure. A candidate counts
when the reference has a value for it and the student's result fails. The
smallest (fewest entries, then fewest axes) that fails the same way the
case did (a wrong value for a wrong value, the same exception type for an
exception) is shown, so the line explains the case's own failure rather
than another one a smaller input happens to trigger (a 0-d corner); only
when none does, the smallest that fails at all (a reshape that raises on
the case's shapes gives wrong values on smaller ones: the same bug).
"""

import threading

from grader.core.background import Background
from grader.grading.explain.shrink import candidates as cands
from grader.grading.explain.shrink import line, reference
from grader.shipped import checks, compare, likely_cause
from grader.shipped import smallest as smallest_rule


def _failure(case, outcome, expected):
    """How `outcome` fails the case: smallest.VALUE, an exception's type, or
    None (passes, a stub, or no result to compare)."""
    if not outcome.ok:
        return outcome.error_type if outcome.error_type and outcome.error_type != likely_cause.NOT_IMPLEMENTED else None
    return None if checks.check(case, expected.value, outcome.value).passed else smallest_rule.VALUE


def failing(registry, answers, runs) -> dict:
    """case -> how it failed, for each shrinkable case that failed."""
    out = {}
    for case in registry.cases:
        run = runs.get(case.question)
        if run is None or run.import_error or case.advisory or case.check not in likely_cause.VALUE_CHECKS:
            continue
        how = _failure(case, run.outcomes[case.value_key], answers[case.value_key])
        if how and reference.shrinkable(case):  # candidates only for a failure: a correct submission pays nothing
            out[case] = how
    return out


def smallest(case, how, chosen, expected: dict, got: dict):
    """The smallest of `chosen` (the case's candidates, smallest first) that
    fails like the case, else the smallest that fails at all, else None."""
    return smallest_rule.pick([(c, _failure(case, got[c.id], expected[c.id])) for c in chosen if c.id in got], how)


def lines(config, answers, runs, files, drawn=True) -> dict:
    """case name -> its `Smallest failing input:` line, for the failing
    shrinkable cases whose candidates fail like them; {} costs no run."""
    registry = config.assignment.registry()
    failed = failing(registry, answers, runs)
    if not failed:
        return {}
    expected = reference.load(config)
    chosen = [c for case in failed for c in cands.candidates(case) if c.id in expected]
    if not chosen:
        return {}
    run = reference.evaluate(files, config, chosen, reference.time_limit(runs, {c.question for c in failed}))
    out = {}
    for case, how in failed.items():
        best = smallest(case, how, [c for c in chosen if c.case == case.name], expected, run.outcomes)
        if best is not None:
            out[case.name] = line.text(
                best, expected[best.id].value, run.outcomes[best.id], compare.secrecy(case, drawn)
            )
    return out


class Early:
    """lines(), started as soon as it can be: passed to run_all as on_done,
    it runs the failing cases' candidates, in a thread of its own, once every
    question holding a shrinkable case has finished, in the questions'
    slots, while the longer questions (the MNIST epoch) still run and
    run_all goes on reporting the others (the likely-cause step's run on
    the course's inputs starts on them), so a submission with failures
    waits for the extra run only when it is the last to finish. result()
    gives the lines (computed then if they could not start early)."""

    def __init__(self, config, answers, files, drawn=True):
        """`answers`: the expected answers, or a function giving them (read
        while the questions run: they are needed only once one finishes)."""
        self._args = (config, answers, files, drawn)
        # the questions that may hold a shrinkable case (waiting for one that
        # turns out to hold none only starts the step later)
        self._wanted = {c.question for c in config.assignment.registry().cases if reference.of_shrinkable_kind(c)}
        self._runs, self._lock, self._job = {}, threading.Lock(), None

    def _lines(self, runs) -> dict:
        config, answers, files, drawn = self._args
        return lines(config, answers() if callable(answers) else answers, runs, files, drawn=drawn)

    def __call__(self, question, run):
        with self._lock:
            self._runs[question] = run
            if self._job is None and self._wanted <= self._runs.keys():
                ready = dict(self._runs)
                self._job = Background(lambda: self._lines(ready), name="smallest-inputs")

    def wait(self) -> None:
        """Until the early run (if one started) is over, whatever it gave:
        a grading that stopped on an error leaves no run behind."""
        with self._lock:
            job = self._job
        if job is not None:
            job.wait()  # what it raised is not this one's to raise: the grading's own error is

    def result(self, runs) -> dict:
        with self._lock:
            job = self._job
        return self._lines(runs) if job is None else job.value()


def with_smallest(diagnose, found: dict):
    """A failed case's extra lines: its `Likely cause:` (diagnose, or None)
    and then its `Smallest failing input:` (found: lines())."""

    def explain(case, outcome) -> str:
        cause = diagnose(case, outcome) if diagnose else ""
        return "\n".join(text for text in (cause, found.get(case.name, "")) if text)

    return explain
