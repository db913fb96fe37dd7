"""grader/core/background.py: a value worked out in a thread. wait() only
waits, whatever the work gave; value() gives it or raises what it raised."""

import threading

import pytest

from grader.core.background import Background


def test_wait_returns_once_the_work_is_over_and_raises_nothing_it_raised():
    release = threading.Event()

    def work():
        assert release.wait(10)
        raise ValueError("broke")

    job = Background(work)
    waiter = threading.Thread(target=job.wait)
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # still working: wait() waits
    release.set()
    waiter.join(10)
    assert not waiter.is_alive()
    job.wait()  # over: returns at once, raising nothing
    with pytest.raises(ValueError, match="broke"):
        job.value()


def test_value_gives_what_the_work_returned():
    assert Background(lambda: 42).value() == 42
