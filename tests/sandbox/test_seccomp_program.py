"""The seccomp program is built once per rule set and process, also when a
grading's first workers ask for it at the same moment (grader/sandbox/seccomp.py)."""

import threading
import time

from grader.sandbox import seccomp


def test_threads_asking_together_build_the_program_once(monkeypatch):
    built = []

    def slow_build(key):
        built.append(key)
        time.sleep(0.05)  # long enough for every thread to ask before it ends
        return b"\0" * 8

    monkeypatch.setattr(seccomp, "_PROGRAMS", {})
    monkeypatch.setattr(seccomp, "_build", slow_build)
    got = []
    threads = [threading.Thread(target=lambda: got.append(seccomp.program("bwrap"))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == [b"\0" * 8] * 3 and len(built) == 1
    seccomp.program("bwrap", disk_capped=False)  # another rule set: its own program
    assert len(built) == 2
