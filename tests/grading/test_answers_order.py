"""A grading reads the reference's answers once its time limits are worked
out (orchestrate._after, run_graded's on_limits): the first worker waits
for the limits, and reading the answers alongside slowed that down and,
holding the GIL, made the machine look busier than it was."""

from __future__ import annotations

import threading
import time

from grader import REFERENCE
from grader.core.assignment import Assignment
from grader.grading.report import orchestrate
from grader.grading.run import expected
from grader.grading.run.config import RunConfig


def test_after_runs_once_the_event_is_set():
    event, calls = threading.Event(), []
    waiting = orchestrate._after(event, lambda x: calls.append(x) or x, most=30)
    thread = threading.Thread(target=waiting, args=(7,))
    thread.start()
    time.sleep(0.1)
    assert calls == [] and thread.is_alive()
    event.set()
    thread.join(5)
    assert calls == [7]


def test_after_stops_waiting_after_at_most_its_limit():
    start = time.monotonic()
    assert orchestrate._after(threading.Event(), lambda: "read", most=0.2)() == "read"
    assert 0.2 <= time.monotonic() - start < 5


def test_the_limits_are_known_before_any_question_ends():
    events = []
    files = {rel: REFERENCE / rel for rel in Assignment.hw1().student_files}
    expected.run_graded(
        files,
        RunConfig(),
        questions=["topo_sort", "forward"],
        on_limits=lambda: events.append("limits"),
        on_done=lambda q, run: events.append(q),
    )
    assert events[0] == "limits" and sorted(events[1:]) == ["forward", "topo_sort"]
