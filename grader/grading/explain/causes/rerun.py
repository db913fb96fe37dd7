"""The student's runs on the course's inputs, for the likely-cause step.

The known bugs' values are on the course's inputs (store.py). A grading
that drew the submission's own inputs runs the questions that took them
again on the course's (`again`), once, for a submission with a failure a
known bug may explain, and diagnoses that failure there.

`Early` starts that run as soon as a finished question shows it is needed:
passed to run_all as on_done, in a thread of its own, its workers taking
turns with the grading's in the grading's slots while its other questions
still run. Made only when the diagnosis first asked for it, it came after
the whole grading and its smallest-input step. Without slots to share
(--jobs 1: one worker at a time) it is made then, as before.
"""

import threading

from grader.core.background import Background
from grader.grading.explain.causes import catalogue
from grader.grading.explain.causes.diagnose import eligible
from grader.grading.run import expected
from grader.shipped import checks


def again(files, own, runs) -> tuple:
    """(the course's answers, question -> the student's run on the course's
    inputs) for the questions that took their own inputs in `own`: in one
    worker under the longest of their limits, their hangs isolated, never
    split (only the diagnosis reads these values): a failing submission's
    grading starts one sandbox (and Python and numpy in it) for them.
    The cases the grading's workers were stopped in (`runs`' hung cases: a
    hang, a crash, memory) are left out, with no outcome: they would stop
    this run again, and a case without a value explains nothing."""
    course = expected.course(own)
    questions = list(own.inputs.own)
    stopped = frozenset(n for q in questions if q in runs for n in runs[q].hung)
    return expected.load(course), expected.run_graded(files, course, questions=questions, together=True, skip=stopped)


def runs_again(own) -> bool:
    """Did `own` draw inputs of the submission's own (so a diagnosis runs it again)?"""
    return own.inputs is not None and bool(own.inputs.own)


class Early:
    """`again()`, started as soon as a finished question failed a case a
    known bug may explain. `answers`: the expected answers on the
    submission's inputs, or a function giving them."""

    def __init__(self, files, own, answers):
        self._files, self._own, self._answers = files, own, answers
        self._on = runs_again(own) and own.slots is not None and catalogue.covers(own.assignment)
        self._lock, self._job, self._seen, self._wanted = threading.Lock(), None, {}, False

    def __call__(self, question, run) -> None:
        """Called as each question's run ends; starts once one shows the need
        and the other questions of its worker have ended too (run_all reports
        them one after the other), so their stopped cases are known."""
        if not self._on:
            return
        with self._lock:
            self._seen[question] = run
            self._wanted = self._wanted or self._explainable(question, run)
            unit = next((u for u in self._own.assignment.registry().workers() if question in u), (question,))
            if self._job is None and self._wanted and all(q in self._seen for q in unit):
                seen = dict(self._seen)
                self._job = Background(lambda: again(self._files, self._own, seen), name="course-rerun")

    def _explainable(self, question, run) -> bool:
        """`run` (of `question`) failed a case a known bug may explain."""
        answers = self._answers() if callable(self._answers) else self._answers
        for case in self._own.assignment.registry().cases_for(question):
            outcome, want = run.outcomes.get(case.value_key), answers.get(case.value_key)
            if outcome is None or want is None or not eligible(case, outcome):
                continue
            if not outcome.ok or not checks.check(case, want.value, outcome.value).passed:
                return True
        return False

    def wait(self) -> None:
        """Until the early run (if one started) is over, whatever it gave:
        a grading that stopped on an error leaves no run behind."""
        with self._lock:
            job = self._job
        if job is not None:
            job.wait()  # what it raised is not this one's to raise: the grading's own error is

    def rerun(self, runs):
        """What the diagnoser calls for the runs on the course's inputs (the
        early run's, else one made now), merged over `runs`; None when the
        grading drew no inputs of its own (nothing runs again)."""
        if not runs_again(self._own):
            return None

        def result():
            with self._lock:
                job = self._job
            answers, runs_there = job.value() if job is not None else again(self._files, self._own, runs)
            return answers, {**runs, **runs_there}

        return result
