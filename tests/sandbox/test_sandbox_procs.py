"""The uid scans of /proc the sandbox relies on (procs.uid_pids for the
teardown's kill, procs.uid_task_count for RLIMIT_NPROC): checked on real
processes of a uid no grader uses."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from grader import sandbox
from grader.sandbox import procs

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(os.geteuid() != 0, reason="another uid's processes need root")]
UID = procs.UID_BASE - 7  # below the sandbox's slots: no run claims it
THREADS = 3  # the live process's threads beside its main one


def _settled(predicate, seconds=10.0):
    end = time.monotonic() + seconds
    while not predicate() and time.monotonic() < end:
        time.sleep(0.05)
    return predicate()


def test_the_scans_see_a_uids_live_processes_threads_and_zombies():
    spin = (
        f"import threading, time\nfor _ in range({THREADS}): threading.Thread(target=time.sleep, args=(60,)).start()\n"
    )
    # The sandbox's own interpreter: another uid may run it (not this checkout's, in a 0700 folder on CI).
    python = sandbox.environment(())
    live = subprocess.Popen(
        [str(python / "bin" / "python3"), "-I", "-S", "-c", spin + "time.sleep(60)"],
        env={"LD_LIBRARY_PATH": str(python / "lib")},
        cwd="/",
        user=UID,
        group=UID,
    )
    zombie = subprocess.Popen(["/bin/true"], cwd="/", user=UID, group=UID)  # exits, not reaped: a zombie of ours
    try:
        assert _settled(lambda: procs.uid_task_count(UID) == 1 + THREADS + 1), procs.uid_task_count(UID)
        assert _settled(lambda: procs.uid_pids(UID) == [live.pid]), procs.uid_pids(UID)  # the zombie is not live
        assert procs.uid_pids(UID + 1) == [] and procs.uid_task_count(UID + 1) == 0
    finally:
        live.kill()
        live.wait()
        zombie.wait()
    assert procs.uid_pids(UID) == [] and procs.uid_task_count(UID) == 0
