"""Attacks that leave state behind for a later run, or send what a worker
knows out of the sandbox, each in every tier this machine offers: bwrap,
unshare and rlimit as root, and rlimit as root without CAP_SYS_ADMIN (as in
Docker, so likely Gradescope), where the probe picks it.

The attacks run through tests/fixtures/sandbox/attack_scenario.py, all of
a place's in one process (started under setpriv for the last setting), with
the worker fixtures leave_state.py, fill_parallel.py and syscalls.py.
Every attack has a control: the same attack with the defence that stops it
turned off succeeds, through the same channel the test reads.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import sandbox
from grader.sandbox import cached, seccomp

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.exclusive,  # fork bombs and floods of writers load the machine
    pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids need root"),
]

SCENARIO = Path(__file__).parents[1] / "fixtures" / "sandbox" / "attack_scenario.py"
NO_SYS_ADMIN = ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"]
# (setting, tier): every tier as root, and what the probe picks without CAP_SYS_ADMIN.
PLACES = [("root", "bwrap"), ("root", "unshare"), ("root", "rlimit"), ("no CAP_SYS_ADMIN", "rlimit")]
IDS = [f"{tier} as {setting}" for setting, tier in PLACES]
# The weakest place: no namespaces, no mounts; only seccomp, the teardown and Landlock hold.
WEAKEST = ("no CAP_SYS_ADMIN", "rlimit")


def attack(place: tuple[str, str], names: str, weaken: str = "") -> dict:
    """What each attack in `names` (comma-separated) got in `place`."""
    setting, tier = place
    prefix = NO_SYS_ADMIN if setting == "no CAP_SYS_ADMIN" else []
    proc = subprocess.run(
        [*prefix, sys.executable, str(SCENARIO), tier, names, *([weaken] if weaken else [])],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=SCENARIO.parent,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if not report["available"]:
        pytest.skip(f"tier {tier} unavailable as {setting}: {report['why']}")
    return report


@pytest.fixture(scope="module", params=PLACES, ids=IDS)
def attacked(request) -> tuple[tuple[str, str], dict]:
    """Every attack, once per place (one process each)."""
    return request.param, attack(request.param, "syscalls,keyring,shm,udp,cmdline,fill")


def logs(report: dict) -> list[str]:
    return [run["log"] for run in report["runs"]]


def same_uid(report: dict) -> None:
    """Both runs had the same sandbox uid: else reading nothing back proves nothing."""
    uids = {re.search(r"UID (\d+)", log)[1] for log in logs(report)}
    assert len(uids) == 1 and "0" not in uids, logs(report)


# ---------------------------------------------------------------- the attacks fail


def test_the_filter_refuses_each_family_and_keeps_what_a_worker_needs(attacked):
    log = logs(attacked[1]["syscalls"])[0]
    refused = re.findall(r"DENIED (\S+) EPERM", log)
    assert "ALLOWED" not in log.replace("ALLOWED unix", ""), log
    assert len(refused) == 17, log  # every family tried (see syscalls.py)
    assert "ALLOWED unix" in log and "NEEDED ok" in log, log


def test_a_key_stashed_in_the_keyring_is_not_found_by_the_next_run(attacked):
    report = attacked[1]["keyring"]
    same_uid(report)
    stash, read = logs(report)
    assert "REFUSED EPERM" in stash and "NOTFOUND" in read and report["payload"] not in read


def test_shared_memory_left_by_a_run_is_not_there_for_the_next(attacked):
    report = attacked[1]["shm"]
    same_uid(report)
    stash, read = logs(report)
    assert "REFUSED EPERM" in stash and report["left"] == []
    assert "NOTFOUND" in read and report["payload"] not in read


def test_a_udp_datagram_does_not_reach_the_host(attacked):
    report = attacked[1]["udp"]
    assert report["received"] == "" and "SENT" not in logs(report)[0], report


def test_another_process_command_line_is_not_readable(attacked):
    log = logs(attacked[1]["cmdline"])[0]
    assert "FOUND" not in log, log
    assert "REFUSED cmdline" in log, log  # its /proc entry is hidden or unreadable


def test_sixteen_parallel_writers_stay_within_the_output_limit(attacked):
    place, report = attacked[0], attacked[1]["fill"]
    log, reason = report["runs"][0]["log"], report["runs"][0]["reason"]
    got = sum(int(n) for n in re.findall(r"ALLOCATED (\d+)", log))
    assert report["stages_left"] == []  # every byte written is gone with the run
    if place == WEAKEST:
        # No mount without CAP_SYS_ADMIN: polling stops the run, it cannot refuse the bytes (disk.py).
        assert reason.startswith("output directory over its limit"), reason
        pytest.xfail(f"polled, not capped, without CAP_SYS_ADMIN: {got >> 20} MB against 16 MB")
    # The file system refused the rest (ENOSPC): the writers either saw it, or were
    # stopped first by the supervisor seeing the folder full (a race either way).
    assert got <= report["limit"], (got, reason, log[-500:])
    assert "REFUSED" in log or reason.startswith("output directory over its limit"), (reason, log[-500:])


# ---------------------------------------------------------------- controls: each defence is what stops its attack


def test_control_a_stashed_key_is_read_back_without_filter_and_teardown():
    report = attack(WEAKEST, "keyring", "seccomp,teardown")["keyring"]
    same_uid(report)
    assert f"FOUND {report['payload']}" in logs(report)[1]


def test_control_the_teardown_alone_clears_the_keyring():
    report = attack(WEAKEST, "keyring", "seccomp")["keyring"]
    same_uid(report)
    stash, read = logs(report)
    assert "STASHED" in stash and "NOTFOUND" in read


def test_control_shared_memory_outlives_a_run_without_filter_and_teardown():
    report = attack(WEAKEST, "shm", "seccomp,teardown")["shm"]
    same_uid(report)
    assert report["left"] and f"FOUND {report['payload']}" in logs(report)[1]


def test_control_the_teardown_alone_removes_shared_memory():
    report = attack(WEAKEST, "shm", "seccomp")["shm"]
    same_uid(report)
    stash, read = logs(report)
    assert "STASHED" in stash and report["left"] == [] and "NOTFOUND" in read


def test_control_udp_reaches_the_host_without_the_filter():
    report = attack(WEAKEST, "udp", "seccomp")["udp"]
    assert report["received"] == report["payload"]


def test_control_a_command_line_is_readable_without_the_proc_rules():
    log = logs(attack(WEAKEST, "cmdline", "proc")["cmdline"])[0]
    assert "READ cmdline FOUND" in log and "READ scan FOUND" in log, log


def test_control_parallel_writers_overshoot_a_polled_output_folder():
    """A race the writers win when they allocate faster than the folder is
    polled: usually the first time, but a busy machine may delay them until
    a poll sees the limit exactly (it did once in a full run, with the stage
    in memory); winning it once shows what the capped folder prevents."""
    got = []
    for _ in range(3):
        report = attack(("root", "bwrap"), "fill", "disk")["fill"]
        got.append(sum(int(n) for n in re.findall(r"ALLOCATED (\d+)", report["runs"][0]["log"])))
        if got[-1] > report["limit"]:
            break
    assert max(got) > report["limit"], got


def test_the_probe_fails_a_tier_that_leaks(monkeypatch):
    """The tier check tries UDP, SysV IPC and keyrings, not only TCP (Landlock blocks that one here)."""
    assert sandbox.check_tier("rlimit") == ""
    monkeypatch.setattr(seccomp, "rules", lambda tier, disk_capped=True: [])
    problem = sandbox.check_tier("rlimit")
    for leak in ("sent a UDP datagram to the host", "made a SysV shared memory segment", "added a kernel key"):
        assert leak in problem, problem


def test_no_bit_leaves_through_the_page_cache_of_a_shared_file(attacked):
    report = attack(attacked[0], "pagecache")["pagecache"]
    log = logs(report)[0]
    assert "SENT" not in log and report["received"] != report["payload"], (log, report)
    for name in ("fadvise", "readahead", "madvise-willneed", "mincore"):
        assert f"REFUSED {name} EPERM" in log, log
    entry = Path(report["entry"])  # the shared file's sandbox copy: removed with the attack's own file
    assert not entry.exists() and not cached.lock_file(entry).exists()


def test_control_the_page_cache_calls_reach_the_kernel_without_the_filter():
    # Whether the dropped pages then show outside depends on the kernel's LRU batching (here they
    # did not, in any tier); that the calls go through is what the filter changes.
    log = logs(attack(WEAKEST, "pagecache", "seccomp")["pagecache"])[0]
    for name in ("fadvise", "readahead", "madvise-willneed", "mincore"):
        assert f"ALLOWED {name}" in log, log
    assert "SENT" in log, log
