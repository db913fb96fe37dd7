"""A value worked out in a thread while the caller does something else."""

from __future__ import annotations

import threading


class Background:
    """compute() in a daemon thread started now. value() waits for it and
    gives what it returned, or raises, in the caller's thread, what it raised."""

    def __init__(self, compute, name: str = "background"):
        self._done, self._value, self._error = threading.Event(), None, None
        threading.Thread(target=self._run, args=(compute,), name=name, daemon=True).start()

    def _run(self, compute):
        try:
            self._value = compute()
        except BaseException as exc:  # noqa: B036  (raised again in the reader's thread)
            self._error = exc
        finally:
            self._done.set()

    def wait(self) -> None:
        """Until compute() is over, whatever it gave: nothing is raised here
        (value() gives it, or raises what it raised)."""
        self._done.wait()

    def value(self):
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value
