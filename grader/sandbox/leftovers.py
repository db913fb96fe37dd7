"""Kernel state a run's uid could leave behind for the next run on that uid.

The seccomp filter (seccomp.py) refuses the calls that make it; this is the
second wall, run after every run on a dedicated sandbox uid (and before,
in case a grader died mid-run):

- kernel keyrings: the uid's user keyring, user session keyring and
  persistent keyring outlive its processes (since Linux 5.3 for as long as
  the machine runs), so a key linked there would reach the next run;
- SysV IPC (shared memory, semaphores, message queues) created by the uid
  or given to it, in the host's IPC namespace (the bwrap and unshare tiers
  have one of their own, which dies with the run).

Only the uid itself may clear its keyrings (root gets no override on
keys) and remove IPC objects without CAP_SYS_ADMIN, so the clearing runs in
a short child that becomes the uid first; the parent then checks, from
/proc/key-users and /proc/sysvipc, that nothing is left. Files in /dev/shm
and /dev/mqueue (POSIX shared memory and message queues) are removed with
the uid's other temp files (procs.remove_uid_files); where /dev/mqueue is
not mounted (Docker and systemd mount it) queues cannot be listed, and
the filter's refusal of mq_open is the only wall.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import time
from pathlib import Path

from grader.sandbox.limits import SandboxError
from grader.sandbox.pauses import pauses
from grader.sandbox.seccomp import syscall_number

KEYCTL_SETPERM, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 5, 7, 22
USER_KEYRING, USER_SESSION_KEYRING = -4, -5
# Possessor: all but setattr; owner: all. The kernel's own default for a user keyring.
USER_KEYRING_PERM = 0x1F3F0000
# What clearing itself leaves: the user, user session and persistent keyrings, empty.
KEYRINGS_KEPT = 3
IPC_RMID = 0
SYSVIPC = {"shm": "shmid", "sem": "semid", "msg": "msqid"}
GC_SECONDS = 5.0  # the kernel frees unlinked keys in the background


def clear_uid_state(uid: int) -> None:
    """Clear the keyrings and SysV IPC objects of sandbox uid `uid`; raise
    SandboxError if any survive (the uid must not be used again as it is)."""
    objects = sysv_objects(uid)
    _as_uid(uid, _clearer(objects))
    left = sysv_objects(uid)
    if left:
        ids = ", ".join(f"{kind} {ident}" for kind, ident in left)
        raise SandboxError(
            f"sandbox: SysV IPC objects of uid {uid} survived removal ({ids}); "
            f"remove them as root with `ipcrm` (-m, -s or -q ID) before grading again"
        )
    keys = _wait_for_keys(uid)
    if keys > KEYRINGS_KEPT:
        raise SandboxError(
            f"sandbox: uid {uid} still holds {keys - KEYRINGS_KEPT} kernel keys after its keyrings "
            f"were cleared (see /proc/key-users); reboot before grading again, or clear them "
            f"as that uid (`setpriv --reuid={uid} keyctl clear @u`)"
        )


def sysv_objects(uid: int) -> list[tuple[str, int]]:
    """(kind, id) of the SysV IPC objects that `uid` owns or created."""
    found = []
    for kind, id_column in SYSVIPC.items():
        try:
            lines = Path("/proc/sysvipc", kind).read_text().splitlines()
        except OSError:
            continue  # no SysV IPC in this kernel
        header = lines[0].split() if lines else []
        for line in lines[1:]:
            row = dict(zip(header, line.split()))
            if str(uid) in (row.get("uid"), row.get("cuid")):
                found.append((kind, int(row[id_column])))
    return found


def key_count(uid: int) -> int:
    """Keys (keyrings included) that `uid` owns, from /proc/key-users."""
    try:
        lines = Path("/proc/key-users").read_text().splitlines()
    except OSError:
        return 0  # no keys in this kernel
    for line in lines:
        owner, _, rest = line.partition(":")
        if owner.strip() == str(uid):
            return int(rest.split()[1].split("/")[0])
    return 0


def _wait_for_keys(uid: int) -> int:
    deadline, waits = time.monotonic() + GC_SECONDS, pauses()
    while (count := key_count(uid)) > KEYRINGS_KEPT and time.monotonic() < deadline:
        time.sleep(next(waits))
    return count


def _clearer(objects: list[tuple[str, int]]):
    """The work done as the uid: its keyrings emptied, its IPC objects removed.
    Every call may fail (nothing to clear, no persistent keyrings here): the
    parent checks the outcome, not the calls."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    keyctl = syscall_number("keyctl")
    remove = {
        "shm": lambda i: libc.shmctl(i, IPC_RMID, None),
        "sem": lambda i: libc.semctl(i, 0, IPC_RMID),
        "msg": lambda i: libc.msgctl(i, IPC_RMID, None),
    }

    def clear() -> None:
        # The persistent keyring is linked into the user keyring, which is cleared after it.
        persistent = libc.syscall(keyctl, KEYCTL_GET_PERSISTENT, -1, USER_KEYRING)
        for ring in (USER_KEYRING, USER_SESSION_KEYRING):
            libc.syscall(keyctl, KEYCTL_SETPERM, ring, USER_KEYRING_PERM)  # a run may have locked us out
        for ring in ([persistent] if persistent > 0 else []) + [USER_SESSION_KEYRING, USER_KEYRING]:
            libc.syscall(keyctl, KEYCTL_CLEAR, ring)
        for kind, ident in objects:
            remove[kind](ident)

    return clear


def _as_uid(uid: int, work) -> None:
    """Run `work` in a child that has become `uid` (no groups, no capabilities)."""

    def child() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        work()

    try:
        subprocess.run(
            ["/bin/true"], preexec_fn=child, stdin=subprocess.DEVNULL, check=True, env={"PATH": "/usr/bin:/bin"}
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"sandbox: cannot clear the keyrings and IPC objects of uid {uid}: {exc}") from exc
