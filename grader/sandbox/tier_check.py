"""Probing a sandbox tier: really run a tiny worker under it and check it.

A tier works when its worker imports numpy, writes a value the parent reads
back, runs as a non-root uid (when we are root), and none of the ways out
that the sandbox closes is open: a TCP connection or a UDP datagram to a
socket listening on the host's 127.0.0.1 (network namespace, Landlock,
seccomp), a SysV shared memory segment or a kernel key that would outlive
the run (IPC namespace, seccomp).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from pathlib import Path

from grader.sandbox.io import read_npy_safe
from grader.sandbox.limits import OUT, Limits, SandboxError, make_out_dir
from grader.sandbox.result import RunResult
from grader.sandbox.seccomp import syscall_number

PROBE_SCRIPT = """\
import ctypes, os, socket, sys
import numpy as np
tcp, udp, add_key, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
try:
    with socket.create_connection(("127.0.0.1", tcp), timeout=2):
        print("TCP-OPEN")
except OSError:
    pass
try:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"probe", ("127.0.0.1", udp))
        print("UDP-OPEN")
except OSError:
    pass
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
shm = libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT
if shm >= 0:
    libc.shmctl(shm, 0, None)  # IPC_RMID: the probe leaves nothing behind
    print("IPC-OPEN")
key = libc.syscall(add_key, b"user", b"needle-probe", b"x", 1, -2)  # the process keyring
if key >= 0:
    print("KEYS-OPEN")
print("UID", os.getuid())
np.save(os.path.join(out, "probe.npy"), np.arange(3))
"""
LEAKS = {
    "TCP-OPEN": "reached a TCP socket on the host",
    "UDP-OPEN": "sent a UDP datagram to the host",
    "IPC-OPEN": "made a SysV shared memory segment",
    "KEYS-OPEN": "added a kernel key",
}


def try_tier(tier: str, run) -> str:
    """Run a tiny worker under `tier` with `run` (the package's own, passed in
    so this module does not import the package); "" if it imported numpy, wrote a value,
    ran as a non-root uid (when we are root) and found every way out above
    closed. Else the reason."""
    with (
        tempfile.TemporaryDirectory(prefix="sandbox-probe-") as tmp,
        socket.socket() as tcp,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
    ):
        work = Path(tmp)
        (work / "runner").mkdir()
        (work / "runner" / "probe.py").write_text(PROBE_SCRIPT)
        (work / "student").mkdir()
        out = make_out_dir(work)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(1)
        udp.bind(("127.0.0.1", 0))
        ports = [str(s.getsockname()[1]) for s in (tcp, udp)]
        try:
            res = run(
                work / "runner" / "probe.py",
                [*ports, str(syscall_number("add_key")), OUT],
                student_dir=work / "student",
                out_dir=out,
                limits=Limits(wall_seconds=20),
                tier=tier,
            )
        except (OSError, subprocess.SubprocessError, ValueError, SandboxError) as exc:
            return f"could not start ({exc})"
        return _probe_problem(res, tier, out) or _received(udp)


def _received(udp: socket.socket) -> str:
    """A datagram that reached our listener (whatever the worker printed)."""
    udp.setblocking(False)
    try:
        udp.recv(64)
    except BlockingIOError:
        return ""
    return "worker sent a UDP datagram to the host"


def _probe_problem(res: RunResult, tier: str, out: Path) -> str:
    if not res.ok:
        return f"probe worker failed: {res.reason}: {res.log.strip()[-300:]}"
    try:
        if read_npy_safe(out / "probe.npy", 4096).tolist() != [0, 1, 2]:
            return "probe value came back wrong"
    except ValueError as exc:
        return f"probe value unreadable: {exc}"
    if os.geteuid() == 0 and "UID 0" in res.log:
        return "worker ran as root"
    leaks = [what for mark, what in LEAKS.items() if mark in res.log]
    if leaks:
        return "worker " + ", ".join(leaks)
    return ""
