"""Starting one worker: its command line, environment and child setup in
each tier (launch.py), and the gate a batch's bwrap waits at until the
question holds its slot. Called by `sandbox.run` only."""

from __future__ import annotations

import json
import os
import subprocess

from grader.core.blas import ONE_THREAD
from grader.sandbox.launch import bwrap_argv, child_setup, private_dirs, unshare_argv
from grader.sandbox.limits import MB, SandboxError
from grader.sandbox.procs import rlimits
from grader.sandbox.seccomp import bwrap_fd, child_loader
from grader.sandbox.seccomp import program as seccomp_program
from grader.sandbox.security import landlock_abi

WORKER_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    **ONE_THREAD,
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
}


def open_gate(gate: int) -> None:
    """Let a gated bwrap go on to start the worker, and close the gate."""
    try:
        os.write(gate, b"go")
    except BrokenPipeError:  # bwrap ended during its setup: _supervise reports its exit and log
        pass
    finally:
        os.close(gate)


def start_worker(tier, uid, view, script_name, args, limits, cg, disk_capped: bool, gated: bool = False):
    """Start the worker (and its namespace wrappers) in a new session:
    (the process, the write end of its gate or None). `disk_capped`: its
    writable folders are capped mounts, not polled. `gated` (bwrap only):
    bwrap sets the sandbox up, then waits to read a byte from the gate
    before it starts the worker; the caller writes it (`open_gate`)."""
    spec = view.landlock_spec(required=landlock_abi() > 0, host_pids=tier == "rlimit")
    cmd = [
        f"{view.env}/bin/python3",
        "-I",
        "-S",
        f"{view.env}/entry.py",
        json.dumps(spec),
        f"{view.runner}/{script_name}",
        *args,
    ]
    env = {**WORKER_ENV, "LD_LIBRARY_PATH": f"{view.env}/lib"}
    root = os.geteuid() == 0
    tmp_bytes = limits.tmp_mb * MB
    bpf = seccomp_program(tier, disk_capped)
    hide, expose, pass_fds, loader, gate = [], [], (), None, None
    if tier == "bwrap":
        pass_fds = (bwrap_fd(bpf),)
        block_fd = None
        if gated:
            block_fd, gate = os.pipe()
            pass_fds += (block_fd,)
        argv = bwrap_argv(cmd, uid=uid, view=view, tmp_bytes=tmp_bytes, seccomp_fd=pass_fds[0], block_fd=block_fd)
        env_args = [a for k, v in env.items() for a in ("--setenv", k, v)]
        at = argv.index("--clearenv") + 1  # --setenv after --clearenv, or it is cleared
        argv = argv[:at] + env_args + argv[at:]
        drop_uid = None  # setpriv inside the sandbox drops it
    else:
        if root:
            hide = private_dirs()
            expose = [
                (view.host_env, False),
                (view.host_runner, False),
                (view.host_cwd, True),
                (view.host_out, True),
                *[(p, False) for p in view.shared.values()],
            ]
        argv = unshare_argv(cmd, uid=uid) if tier == "unshare" else cmd
        drop_uid = uid if (root and tier == "rlimit") else None
        loader = child_loader(bpf)
    setup = child_setup(
        limits=rlimits(limits, uid, cg is not None),
        uid=drop_uid,
        chdir=view.host_cwd,
        hide=hide,
        expose=expose,
        tmp_bytes=tmp_bytes,
        cgroup_files=cg.procs_files() if cg else (),
        hide_processes=tier == "rlimit",
        seccomp=loader,
    )
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=setup,
            pass_fds=pass_fds,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        if gate is not None:
            os.close(gate)
        raise SandboxError(f"sandbox: cannot start a worker in tier {tier}: {exc}") from exc
    finally:
        for fd in pass_fds:
            os.close(fd)
    return popen, gate
