"""A sandbox uid's slot says whether its last run was torn down completely
(procs.UidSlot): then the next run skips the teardown before it starts;
a slot left in use (a grader killed mid-run) gets it, and every run is torn
down after, whatever the mark said."""

from __future__ import annotations

import fcntl
import os
import uuid
from pathlib import Path

import pytest

from grader import sandbox
from grader.sandbox import procs

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids need root")]
SLOT = procs.UID_SLOTS - 2  # not the attack scenarios' slot; other graders take the first free ones


@pytest.fixture
def pinned(monkeypatch):
    """Every run on the uid of SLOT; resets counted."""
    procs._ensure_lock_dir()
    lock = procs.LOCK_DIR / f"{SLOT}.lock"

    def claim():
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return procs.UidSlot(procs.UID_BASE + SLOT, fd)

    resets, reset = [], sandbox._reset_uid
    monkeypatch.setattr(sandbox, "claim_uid", claim)
    monkeypatch.setattr(sandbox, "_reset_uid", lambda uid: (resets.append(uid), reset(uid)))
    return lock, resets


def run_once(tmp_path):
    (tmp_path / "student").mkdir(exist_ok=True)
    (tmp_path / "worker.py").write_text("print('ran')\n")
    out = sandbox.make_out_dir(tmp_path)
    res = sandbox.run(tmp_path / "worker.py", [], student_dir=tmp_path / "student", out_dir=out)
    assert res.ok, res.log
    return res


def plant(uid: int) -> Path:
    """A file of the uid's in /tmp, as a run that was never torn down leaves."""
    path = Path("/tmp") / f"left-by-{uid}-{uuid.uuid4().hex}"
    path.write_text("answers\n")
    os.chown(path, uid, uid)
    return path


def test_a_run_marks_its_slot_torn_down_and_the_next_skips_the_teardown_before(pinned, tmp_path):
    lock, resets = pinned
    run_once(tmp_path)
    assert lock.read_bytes() == procs.CLEAN
    resets.clear()
    left = plant(procs.UID_BASE + SLOT)
    run_once(tmp_path)
    assert resets == [procs.UID_BASE + SLOT]  # after the run only
    assert not left.exists()  # the teardown after the run still removes what the uid owns


def test_a_slot_left_in_use_is_torn_down_before_the_run(pinned, tmp_path):
    lock, resets = pinned
    run_once(tmp_path)
    lock.write_bytes(b"")  # as a grader killed mid-run leaves it
    resets.clear()
    run_once(tmp_path)
    assert resets == [procs.UID_BASE + SLOT] * 2  # before and after
    assert lock.read_bytes() == procs.CLEAN


def test_a_teardown_that_fails_leaves_the_slot_in_use(pinned, tmp_path, monkeypatch):
    lock, _ = pinned
    run_once(tmp_path)

    def fails(uid):
        raise sandbox.SandboxError("a process survived")

    monkeypatch.setattr(sandbox, "_reset_uid", fails)
    with pytest.raises(sandbox.SandboxError):
        run_once(tmp_path)
    assert lock.read_bytes() == b""  # the next run on the uid tears it down first
