"""Probing a sandbox tier: really run a tiny worker under it and check it.

A tier works when its worker imports numpy, writes a value the parent reads
back, runs as a non-root uid (when we are root) and cannot reach a socket
listening on the host's 127.0.0.1 (a network namespace, or Landlock in the
rlimit tier).
"""
from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from pathlib import Path

from grader.sandbox.limits import OUT, Limits, SandboxError, make_out_dir
from grader.sandbox.result import RunResult
from grader.sandbox.io import read_npy_safe

PROBE_SCRIPT = """\
import os, socket, sys
import numpy as np
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    print("NET-OPEN")
except OSError:
    print("NET-BLOCKED")
print("UID", os.getuid())
np.save(os.path.join(sys.argv[2], "probe.npy"), np.arange(3))
"""


def try_tier(tier: str, run) -> str:
    """Run a tiny worker under `tier` with `run` (the package's own, passed in
    so this module does not import the package); "" if it imported numpy, wrote a value,
    ran as a non-root uid (when we are root) and could not reach a socket
    listening on 127.0.0.1. Else the reason."""
    with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as tmp, socket.socket() as listener:
        work = Path(tmp)
        (work / "runner").mkdir()
        (work / "runner" / "probe.py").write_text(PROBE_SCRIPT)
        (work / "student").mkdir()
        out = make_out_dir(work)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        try:
            res = run(work / "runner" / "probe.py", [str(listener.getsockname()[1]), OUT], student_dir=work / "student",
                      out_dir=out, limits=Limits(wall_seconds=20), tier=tier)
        except (OSError, subprocess.SubprocessError, ValueError, SandboxError) as exc:
            return f"could not start ({exc})"
        return _probe_problem(res, tier, out)


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
    if "NET-BLOCKED" not in res.log:  # rlimit: Landlock blocks TCP
        return "worker reached the network"
    return ""
