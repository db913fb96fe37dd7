"""Resources by use, per submission: memory counted over all of a run's
processes by what they really use (a control group), CPU shared fairly
between submissions however many processes one starts."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

import baseline
import pytest

from grader import sandbox
from grader.grading.run import config as run_config
from grader.sandbox.cgroup import Group, layout

pytestmark = [pytest.mark.sandbox, pytest.mark.exclusive]  # spinning neighbours starve the machine

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sandbox"
needs_cgroups = pytest.mark.skipif(layout() is None, reason="no control group the grader can make here")


@pytest.fixture
def student():
    root = Path(tempfile.mkdtemp(prefix="sandbox-res-"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def run(name, args, student, limits, group=None):
    out = sandbox.make_out_dir(student)
    try:
        return sandbox.run(
            FIXTURES / name, [str(a) for a in args], student_dir=student, out_dir=out, limits=limits, group=group
        )
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.mark.slow
def test_q6_default_lets_a_solution_hold_1500_mb(student):
    memory_mb = run_config.RunConfig().memory_mb("nn_epoch_ndl")
    res = run("resident.py", [1, 1500], student, baseline.limits(200, memory_mb=memory_mb))  # ~60 s here
    assert res.ok and "all done" in res.log, (res.reason, res.log[-500:])


@needs_cgroups
def test_memory_counts_all_processes_together(student):
    # 4 x 200 MB: each process is far under 512 MB, together they are not.
    res = run("resident.py", [4, 200], student, baseline.limits(100, memory_mb=512))
    assert not res.ok
    assert res.reason == "memory limit (512 MB for all the worker's processes together): killed"


@needs_cgroups
def test_memory_under_the_limit_together_passes(student):
    """Control: the same processes, fewer of them, fit."""
    res = run("resident.py", [2, 100], student, baseline.limits(100, memory_mb=512))
    assert res.ok, res.reason


CPU_SECONDS = 0.5
HONEST = 20  # x the sandbox's start-up now (tests/baseline.py): the honest run's limit, about 6 s here


def honest(student, group=None) -> float:
    """Wall seconds the honest neighbour takes for CPU_SECONDS of work (inf on timeout)."""
    res = run("cpu_task.py", [CPU_SECONDS], student, baseline.limits(HONEST), group)
    return res.wall_seconds if res.ok else float("inf")


def starve(student, use_groups: bool) -> tuple[float, float]:
    """(alone, beside a submission spinning 24 setsid() loops): the honest one's wall times."""
    alone = honest(student)
    groups = [Group.create() if use_groups else None for _ in range(2)]
    # The hog spins until its limit: past the second below and all of the honest run's.
    hog = threading.Thread(
        target=run, args=("spin_many.py", [24], student, baseline.limits(1.5 * HONEST, processes=40), groups[0])
    )
    hog.start()
    try:
        time.sleep(1.0)  # the loops are running
        return alone, honest(student, groups[1])
    finally:
        hog.join()
        for group in groups:
            if group is not None:
                group.remove()


# Fair shares: the hog's 25 processes get one submission's share, so the
# honest run keeps about a core of two (no slower than alone, give or take
# the machine's other load). Without groups it gets 2/26 of the CPU: ~13x.
@needs_cgroups
@pytest.mark.slow
def test_a_neighbour_spinning_many_processes_cannot_starve_a_submission(student):
    alone, beside = starve(student, use_groups=True)
    assert beside < 3 * alone + 1.0, (alone, beside)


@needs_cgroups
@pytest.mark.slow
def test_without_groups_the_neighbour_starves_it(student, monkeypatch):
    """Control: with no control groups (rlimits only), the same neighbour wins."""
    monkeypatch.setattr(sandbox, "Group", type("NoGroup", (), {"create": staticmethod(lambda *a, **k: None)}))
    alone, beside = starve(student, use_groups=False)
    assert beside > 3 * alone + 1.0, (alone, beside)


def _fork_in(group) -> int:
    code = "import os\ntry:\n    pid = os.fork()\nexcept OSError:\n    raise SystemExit(3)\nif pid == 0:\n    os._exit(0)\nos.wait()"
    import subprocess
    import sys

    from grader.sandbox.cgroup import join

    return subprocess.run([sys.executable, "-c", code], preexec_fn=lambda: join(group.procs_files())).returncode


@needs_cgroups
@pytest.mark.parametrize("cap, refused", [(1, True), (5, False)])
def test_a_refused_fork_is_seen_by_the_group(cap, refused):
    group = Group.create(pids=cap)
    try:
        assert (_fork_in(group) == 3) == refused
        assert group.pids_exhausted() == refused
    finally:
        group.remove()


def test_pauses_start_short_and_grow_to_a_cap():
    from grader.sandbox.pauses import pauses

    first = [p for p, _ in zip(pauses(0.001, 0.005), range(6))]
    assert first == [0.001, 0.002, 0.004, 0.005, 0.005, 0.005]


@needs_cgroups
def test_a_killed_groups_end_is_looked_for_within_a_millisecond(monkeypatch):
    """A killed worker's exit takes about a millisecond: kill_all's first
    look after the kill comes that soon, not after a fixed 10 ms."""
    import subprocess

    from grader.sandbox import cgroup
    from grader.sandbox.cgroup import join
    from grader.sandbox.pauses import FIRST_SECONDS, LONGEST_SECONDS

    asked, real_sleep = [], time.sleep
    monkeypatch.setattr(cgroup.time, "sleep", lambda s: (asked.append(s), real_sleep(s)))
    group = Group.create(pids=5)
    try:
        proc = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: join(group.procs_files()))
        assert group.pids() == [proc.pid]
        proc_reaper = threading.Thread(target=proc.wait)  # the zombie leaves the group once reaped
        proc_reaper.start()
        assert group.kill_all() == []
        proc_reaper.join()
        assert proc.returncode == -9
        assert asked and asked[0] == FIRST_SECONDS and max(asked) <= LONGEST_SECONDS, asked
    finally:
        group.remove()
