"""The grader's time and memory limits, per question, in a student's `make test`.

The grader runs each question's cases in a process of its own, stopped at
the question's time limit (wall seconds) or memory limit (MB in use). The
handout's conftest.py registers `Limits` (this file, copied into
tests/hw1/hw1_cases/) with the numbers of limits.json beside it, which the
handout build writes from the grader's own declaration
(grader/grading/run/time_limits.py and RunConfig's memory). A question's
cases share its seconds, as in the grader's worker; when they are spent the
case running stops with the grader's words, and the question's remaining
cases are not run. Memory is the process's resident size grown since the
question started, checked every MEMORY_POLL seconds (Linux: /proc).

Standard library and pytest only: this file ships to students.
"""

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

LIMITS = Path(__file__).resolve().parent / "limits.json"
MEMORY_POLL = 0.2
MB = 1 << 20


class QuestionLimit(BaseException):
    """A question's limit was hit (BaseException: an `except Exception` in the code under test lets it through)."""


def resident_bytes() -> int:
    """This process's resident size (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Limits:
    """pytest plugin: each question's cases under the grader's limits; `said` holds the lines it printed."""

    def __init__(self, path: Path = LIMITS):
        self.questions = json.loads(Path(path).read_text())["questions"]
        self.spent, self.base, self.said = {}, {}, {}
        self._pending = None  # the message the signal handler raises

    def line(self, key: str, what: str) -> str:
        q = self.questions[key]
        return (
            f"{q['label']} {key}: {what}, the grader's limit: {q['seconds']:g} s and {q['memory_mb']} MB ({q['why']})"
        )

    def _key(self, item):
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        key = getattr(case, "question", None)
        return key if key in self.questions else None

    def _raise(self, signum, frame):
        raise QuestionLimit(self._pending)

    def _watch(self, key, done, main):
        limit = self.questions[key]["memory_mb"] * MB
        while not done.wait(MEMORY_POLL):
            used = resident_bytes() - self.base[key]
            if used > limit:
                self._pending = self.line(key, f"stopped at {used / MB:.0f} MB in use")
                signal.pthread_kill(main, signal.SIGUSR1)
                return

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        key = self._key(item)
        if key is None:
            yield
            return
        if key in self.said:
            raise QuestionLimit(f"not run: {self.said[key]}")
        self.base.setdefault(key, resident_bytes())
        left = self.questions[key]["seconds"] - self.spent.get(key, 0.0)
        self._pending = self.line(key, f"stopped after {self.questions[key]['seconds']:g} s")
        if left <= 0:  # spent by the question's cases before this one
            raise QuestionLimit(self._pending)
        old = {s: signal.signal(s, self._raise) for s in (signal.SIGALRM, signal.SIGUSR1)}
        done = threading.Event()
        threading.Thread(target=self._watch, args=(key, done, threading.get_ident()), daemon=True).start()
        start = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, max(left, 0.01))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            done.set()
            for s, handler in old.items():
                signal.signal(s, handler)
            self.spent[key] = self.spent.get(key, 0.0) + time.monotonic() - start

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(QuestionLimit):
            message = str(call.excinfo.value)
            key = self._key(item)
            if key is not None and not message.startswith("not run"):
                self.said[key] = message
            report.longrepr = message  # one line, no traceback: the grader's words

    def pytest_terminal_summary(self, terminalreporter):
        if self.said:
            terminalreporter.write_sep("=", "stopped at the grader's limits")
            for key in self.questions:
                if key in self.said:
                    terminalreporter.write_line(self.said[key])


def register(config, path: Path = LIMITS):
    """Register the plugin when limits.json is there (the handout's conftest calls this)."""
    if Path(path).is_file() and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        config.pluginmanager.register(Limits(path), "grader_limits")
