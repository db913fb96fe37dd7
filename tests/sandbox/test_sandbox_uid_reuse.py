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
    monkeypatch.setattr(sandbox, "_reset_uid", lambda uid, *rest: (resets.append(uid), reset(uid, *rest)))
    return lock, resets


def run_once(tmp_path, tier=None):
    (tmp_path / "student").mkdir(exist_ok=True)
    (tmp_path / "worker.py").write_text("print('ran')\n")
    out = sandbox.make_out_dir(tmp_path)
    res = sandbox.run(tmp_path / "worker.py", [], student_dir=tmp_path / "student", out_dir=out, tier=tier)
    assert res.ok, res.log
    return res


def plant(uid: int) -> Path:
    """A file of the uid's in /tmp, as a run that was never torn down leaves."""
    path = Path("/tmp") / f"left-by-{uid}-{uuid.uuid4().hex}"
    path.write_text("answers\n")
    os.chown(path, uid, uid)
    return path


@pytest.mark.parametrize("tier", ["unshare", "bwrap"])
def test_a_run_marks_its_slot_torn_down_and_the_next_skips_the_teardown_before(pinned, tmp_path, tier):
    problem = sandbox.check_tier(tier)
    if problem:
        pytest.skip(f"tier {tier} unavailable here: {problem}")
    lock, resets = pinned
    run_once(tmp_path, tier)
    assert lock.read_bytes() == procs.CLEAN
    resets.clear()
    left = plant(procs.UID_BASE + SLOT)
    try:
        run_once(tmp_path, tier)
        assert resets == [procs.UID_BASE + SLOT]  # after the run only
        # The teardown after the run removes what the uid owns in the shared
        # temp folders if the run could reach them: a bwrap worker cannot
        # (its /tmp, /var and /dev are its own), so they are not looked through.
        assert left.exists() == (tier == "bwrap")
    finally:
        left.unlink(missing_ok=True)


def test_a_slot_left_in_use_is_reset_whole_before_a_bwrap_run(pinned, tmp_path):
    """What a run of another tier may have left in /tmp goes before the next
    run on the uid, whatever tier that one is."""
    problem = sandbox.check_tier("bwrap")
    if problem:
        pytest.skip(f"tier bwrap unavailable here: {problem}")
    lock, _ = pinned
    run_once(tmp_path, "bwrap")
    lock.write_bytes(b"")  # as a grader killed mid-run leaves it
    left = plant(procs.UID_BASE + SLOT)
    try:
        run_once(tmp_path, "bwrap")
        assert not left.exists()
    finally:
        left.unlink(missing_ok=True)


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

    def fails(uid, *rest):
        raise sandbox.SandboxError("a process survived")

    monkeypatch.setattr(sandbox, "_reset_uid", fails)
    with pytest.raises(sandbox.SandboxError):
        run_once(tmp_path)
    assert lock.read_bytes() == b""  # the next run on the uid tears it down first
