"""A batch's question slots (grader/grading/run/slots.py): never more than
`width` held at once across processes, a free slot goes to the submission
ranked first, waiting or setting a question up (for a grace at most), and
a dead process neither keeps a slot nor blocks others.
Each submission sets one question up at a time (its stage pass), apart
from the slots and from other submissions, the question first in its run
order first; a single grade's slots (slots.local) bound its workers in one
process, with no stage pass."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader.grading.run import slots

HOLD = """\
import json, sys, time
from grader.grading.run.slots import Slots
folder, width, rank, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for _ in range(3):
    with Slots(folder, width, rank).held():
        with open(log, "a") as f:
            f.write(json.dumps(["in", rank, time.monotonic()]) + "\\n")
        time.sleep(0.05)
        with open(log, "a") as f:
            f.write(json.dumps(["out", rank, time.monotonic()]) + "\\n")
"""


def test_never_more_than_width_held_across_processes(tmp_path):
    pool = slots.make(tmp_path / "slots", 2)
    log = tmp_path / "log"
    procs = [subprocess.Popen([sys.executable, "-c", HOLD, pool.folder, "2", str(rank), str(log)]) for rank in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    events = sorted((json.loads(line) for line in log.read_text().splitlines()), key=lambda e: (e[2], e[0] == "in"))
    assert len(events) == 24
    held, most = 0, 0
    for kind, _, _ in events:
        held += 1 if kind == "in" else -1
        most = max(most, held)
    assert most <= 2


def test_a_stage_pass_and_a_slot_are_apart(tmp_path):
    """A later submission setting a question up does not keep an earlier one
    from its slot, nor a running question another submission from its pass
    (width 1)."""
    pool = slots.make(tmp_path / "slots", 1)
    took = []
    start = time.monotonic()
    with pool.for_rank(1).staged():
        with pool.for_rank(0).held():
            took.append("slot")
    with pool.for_rank(0).held():
        with pool.for_rank(1).staged():
            took.append("pass")
    assert took == ["slot", "pass"] and time.monotonic() - start < slots.STAGE_GRACE


def _staging_markers(pool):
    return [n for n in os.listdir(pool.folder) if n.startswith(slots.WAITING) and n.endswith(slots.STAGING)]


def test_a_free_slot_waits_for_an_earlier_submission_setting_a_question_up(tmp_path):
    """While the first submission sets a question up, a later one that is
    ready leaves the free slot to it: the set-up is short, the later
    question (its longest first) would keep the slot for a whole run."""
    pool = slots.make(tmp_path / "slots", 1)
    order, setting_up, set_up = [], threading.Event(), threading.Event()

    def first():
        with pool.for_rank(0).staged():
            setting_up.set()
            set_up.wait(30)
            with pool.for_rank(0).held():
                order.append(0)

    def later():
        with pool.for_rank(1).held():
            order.append(1)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    assert setting_up.wait(30)
    threads.append(threading.Thread(target=later))
    threads[1].start()
    time.sleep(0.5)
    assert order == [], "the later submission took the slot while the first one set a question up"
    set_up.set()
    for thread in threads:
        thread.join(30)
    assert order == [0, 1] and not _staging_markers(pool)


def test_a_slot_left_free_for_a_set_up_is_taken_once_the_set_up_ends(tmp_path, monkeypatch):
    """When nobody holds or asks for the first submission's pass any more,
    the later ones' bells ring: with a look every 60 s, the slot it left
    free is still taken in seconds."""
    monkeypatch.setattr(slots, "POLL_SECONDS", 60)
    pool = slots.make(tmp_path / "slots", 1)
    got = []

    def later():
        with pool.for_rank(1).held():
            got.append(time.monotonic())

    with pool.for_rank(0).staged():
        thread = threading.Thread(target=later, daemon=True)
        thread.start()
        _bells(pool, 1)
        time.sleep(0.2)  # it has looked, found the slot free and left it to the set-up
        assert got == []
        ended = time.monotonic()
    thread.join(30)
    assert got and got[0] - ended < 20


def test_a_set_up_slower_than_the_grace_keeps_no_slot_waiting(tmp_path, monkeypatch):
    monkeypatch.setattr(slots, "STAGE_GRACE", 0.3)
    pool = slots.make(tmp_path / "slots", 1)
    with pool.for_rank(0).staged():
        start = time.monotonic()
        with pool.for_rank(1).held():
            waited = time.monotonic() - start
    assert 0.2 < waited < 10


def test_the_staging_marker_lasts_while_the_pass_is_held_or_asked_for(tmp_path):
    """Handed from one question to the next, the pass keeps the marker (no
    moment for a later submission to take the slot); it goes when nobody
    holds or asks for the pass, a wait cut short included."""
    turns = slots.make(tmp_path / "slots", 2).for_rank(3)
    seen = []

    def second():
        with turns.for_question(1).staged():
            seen.append(_staging_markers(turns))

    assert _staging_markers(turns) == []
    with turns.for_question(0).staged():
        assert _staging_markers(turns) == [f"{slots.WAITING}00000003-{os.getpid()}{slots.STAGING}"]
        waiter = threading.Thread(target=second)
        waiter.start()
        time.sleep(0.1)
    waiter.join(30)
    assert seen == [[f"{slots.WAITING}00000003-{os.getpid()}{slots.STAGING}"]]
    assert _staging_markers(turns) == []


def test_a_submission_sets_one_question_up_at_a_time(tmp_path):
    """A submission's stage pass is one: its second question waits for it;
    another submission's pass is its own."""
    pool = slots.make(tmp_path / "slots", 2)
    assert pool.for_rank(3).stage_pass() is pool.for_rank(3).for_question(4).stage_pass()
    assert pool.for_rank(3).stage_pass() is not pool.for_rank(4).stage_pass()
    got = []

    def second():
        with pool.for_rank(3).for_question(1).staged():
            got.append("second")

    with pool.for_rank(3).staged():
        waiter = threading.Thread(target=second)
        waiter.start()
        with pool.for_rank(4).staged():
            got.append("other")
        waiter.join(0.3)
        assert got == ["other"] and waiter.is_alive()
    waiter.join(30)
    assert got == ["other", "second"]


def _takers(turns, orders, log):
    """One thread per order, each waiting for its turn's stage pass; returns them started."""

    def take(order):
        with turns.for_question(order).staged():
            log.append(order)

    threads = [threading.Thread(target=take, args=(order,), daemon=True) for order in orders]
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # each asks in the order given
    return threads


def test_the_stage_pass_goes_to_the_question_first_in_the_run_order(tmp_path):
    """Questions that ask for the pass while it is held get it by their
    place in the run order (the longest first), not by who asked first."""
    turns = slots.make(tmp_path / "slots", 2).for_rank(1)
    log = []
    with turns.for_question(0).staged():
        threads = _takers(turns, [5, 3, 4, 1], log)
        assert log == []
    for thread in threads:
        thread.join(30)
    assert log == [1, 3, 4, 5]


def test_a_wait_for_the_stage_pass_cut_short_blocks_nobody(tmp_path, monkeypatch):
    """A question whose wait ends in an exception (Ctrl-C) leaves the pass
    to the next one in the order, though it came first."""
    turns = slots.make(tmp_path / "slots", 2).for_rank(2)
    stage, log, stopped = turns.stage_pass(), [], []
    wait_for = stage._free.wait_for

    def cut_short(predicate, timeout=None):
        if threading.current_thread().name == "cut":
            raise KeyboardInterrupt
        return wait_for(predicate, timeout)

    monkeypatch.setattr(stage._free, "wait_for", cut_short)

    def first_in_order():
        try:
            with turns.for_question(0).staged():
                log.append(0)
        except KeyboardInterrupt:
            stopped.append(0)

    with turns.for_question(9).staged():
        waiter = _takers(turns, [2], log)[0]
        cut = threading.Thread(target=first_in_order, name="cut", daemon=True)
        cut.start()
        cut.join(30)
    waiter.join(5)
    assert stopped == [0] and log == [2] and not waiter.is_alive() and _staging_markers(turns) == []


def test_a_single_grades_slots_bound_its_running_workers():
    """slots.local(width): never more than `width` held at once, in one
    process; no stage pass (a grade's width + 1 questions set up at once)."""
    turns = slots.local(2)
    with turns.for_question(0).staged(), turns.for_question(1).staged():
        pass  # both at once: it would block here with a pass
    now, most, lock = [0], [0], threading.Lock()

    def hold(order):
        with turns.for_question(order).held():
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            time.sleep(0.05)
            with lock:
                now[0] -= 1

    threads = [threading.Thread(target=hold, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert most[0] == 2


def test_a_free_slot_goes_to_the_submission_ranked_first(tmp_path):
    pool = slots.make(tmp_path / "slots", 1)
    order, release = [], threading.Event()

    def holder():
        with pool.for_rank(0).held():
            release.wait(30)

    def waiter(rank):
        with pool.for_rank(rank).held():
            order.append(rank)

    first = threading.Thread(target=holder)
    first.start()
    time.sleep(0.1)
    late = threading.Thread(target=waiter, args=(5,))
    late.start()
    time.sleep(0.1)
    early = threading.Thread(target=waiter, args=(1,))
    early.start()
    time.sleep(0.1)  # both wait now, rank 5 since longer
    release.set()
    for t in (first, late, early):
        t.join(30)
    assert order == [1, 5]


def test_what_a_dead_process_left_blocks_nobody(tmp_path):
    pool = slots.make(tmp_path / "slots", 1)
    # a waiting marker nobody holds (its process died waiting), ranked first, and its bell nobody reads
    (Path(pool.folder) / f"{slots.WAITING}00000000-1-1").write_text("")
    os.mkfifo(Path(pool.folder) / f"{slots.BELL}1-1")
    # a process that dies holding the only slot
    died = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys\nfrom grader.grading.run.slots import Slots\n"
            "with Slots(sys.argv[1], 1, 0).held():\n    os._exit(3)\n",
            pool.folder,
        ],
        timeout=60,
    )
    assert died.returncode == 3
    start = time.monotonic()
    with pool.for_rank(7).held():
        pass
    assert time.monotonic() - start < 5


def test_a_wait_cut_short_holds_no_slot_and_leaves_no_marker(tmp_path, monkeypatch):
    """Interrupted just as it got the slot (Ctrl-C), a waiter lets go of it."""
    pool = slots.make(tmp_path / "slots", 1)
    real = slots._lock_one

    def lock_then_interrupt(fds):
        real(fds)
        raise KeyboardInterrupt

    monkeypatch.setattr(slots, "_lock_one", lock_then_interrupt)
    with pytest.raises(KeyboardInterrupt), pool.held():
        pass
    monkeypatch.undo()
    assert not [p for p in Path(pool.folder).iterdir() if p.name.startswith((slots.WAITING, slots.BELL))]
    fd = os.open(Path(pool.folder) / "slot-0", os.O_RDWR)
    try:
        assert slots._lock_one([fd]) == fd  # free: nobody kept it locked
    finally:
        os.close(fd)


def _bells(pool, count):
    deadline = time.monotonic() + 30
    while len([n for n in os.listdir(pool.folder) if n.startswith(slots.BELL)]) < count:
        assert time.monotonic() < deadline, "the waiters never rang in"
        time.sleep(0.01)


def test_a_slot_let_go_is_taken_at_once_not_at_the_next_look(tmp_path, monkeypatch):
    """Whoever lets a slot go rings the waiters' bells: with a look every
    60 s, two waiters still get the slot one after the other in seconds,
    the one ranked first first (a later one that took it gives way and
    rings again)."""
    monkeypatch.setattr(slots, "POLL_SECONDS", 60)
    pool = slots.make(tmp_path / "slots", 1)
    order, holding, release = [], threading.Event(), threading.Event()

    def holder():
        with pool.for_rank(0).held():
            holding.set()
            release.wait(30)

    def waiter(rank):
        with pool.for_rank(rank).held():
            order.append(rank)

    threads = [threading.Thread(target=holder)]
    threads[0].start()
    assert holding.wait(30)
    for rank in (2, 1):
        threads.append(threading.Thread(target=waiter, args=(rank,)))
        threads[-1].start()
    _bells(pool, 2)
    start = time.monotonic()
    release.set()
    for thread in threads:
        thread.join(30)
    assert order == [1, 2] and time.monotonic() - start < 20, (order, time.monotonic() - start)


def test_a_slot_let_go_after_the_batch_removed_its_folder_rings_nobody(tmp_path):
    """A stopped batch removes the slots' folder while a question may still
    hold a slot: letting it go then raises nothing."""
    pool = slots.make(tmp_path / "slots", 1)
    with pool.held():
        shutil.rmtree(pool.folder)
    assert not Path(pool.folder).exists()
