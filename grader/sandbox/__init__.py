"""Run one untrusted Python worker and report what happened.

Generic: knows nothing about needle. The parent calls `run(script, args,
student_dir=..., out_dir=..., shared=..., limits=...)`; the worker runs as
`python -I -S script args...` from a copy of the interpreter, its standard
library and the packages the caller names (env.py: `environment(packages)`;
none: the grader's numpy), in a per-run stage of copies (regular files only), under a
uid of its own (root) or a user namespace, with rlimits, a control group
per run (memory by real use, pids) inside the submission's (fair CPU), a
wall-clock timeout that kills its whole process tree, stdout+stderr captured
to a capped log, Landlock (where the kernel has it) limiting its file
access to what it was given, and a seccomp filter (seccomp.py) in every
tier. Its output folder and working directory are capped by the file system
where we may mount (disk.py), and its uid is torn down after the run:
processes, temp files, keyrings, SysV IPC (leftovers.py). Only plain files
in its output folder come back; the parent reads them with `read_npy_safe`
/ `read_json_safe`.

The isolation tier is probed once (`probe()`): "bwrap", else "unshare", else
"rlimit" (see launch.py); every RunResult records it, and
`security_problem(tier)` says when a tier cannot keep our files from the
student (then grade only on request: --insecure).

`run` may be called from several threads or processes at once: each run
claims its own uid; the child setup before exec takes no locks.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

from grader.sandbox import launch as launch
from grader.sandbox.cgroup import Group
from grader.sandbox.env import PackageError, environment, shared_copy
from grader.sandbox.io import read_json_safe, read_npy_safe
from grader.sandbox.leftovers import clear_uid_state
from grader.sandbox.limits import MB, OUT, Limits, SandboxError, make_out_dir
from grader.sandbox.procs import CappedLog, claim_uid, kill_group, kill_uid, remove_uid_files
from grader.sandbox.result import RunResult, make_result
from grader.sandbox.security import security_problem
from grader.sandbox.stage import collect_out, make_stage, remove_stage
from grader.sandbox.start import WORKER_ENV, open_gate, start_worker
from grader.sandbox.tier_check import try_tier

__all__ = [
    "Limits",
    "RunResult",
    "SandboxError",
    "TIERS",
    "TIER_NOTES",
    "WORKER_ENV",
    "OUT",
    "probe",
    "check_tier",
    "run",
    "make_out_dir",
    "security_problem",
    "read_npy_safe",
    "read_json_safe",
    "Group",
    "environment",
    "PackageError",
]

TIERS = ("bwrap", "unshare", "rlimit")
_SEES = (
    "sees a copied interpreter, the case code, the data and a copy of the submission (regular files "
    "only) as its 64 MB writable working directory; rlimits; a control group per run where one can be made; "
    "a seccomp filter (no sockets but AF_UNIX, no keyrings, SysV IPC, message queues or ptrace); its uid's "
    "keyrings and IPC objects cleared after the run"
)
# One line per tier for reports: what the worker was up against.
TIER_NOTES = {
    "bwrap": "bubblewrap: " + _SEES + "; own root file system at fixed paths, no network, own PID and IPC "
    "namespaces, a uid of its own (root) or a user namespace, Landlock where the kernel has it, "
    "an output folder capped by a tmpfs (root)",
    "unshare": "unshare: " + _SEES + "; no network, own PID and IPC namespaces; as root a uid of its own, every "
    "private folder hidden by mounts and its folders capped by tmpfs mounts, else Landlock alone",
    "rlimit": "no namespaces: " + _SEES + "; as root a uid of its own; Landlock where the kernel has it (files "
    "limited to the above, TCP blocked, of /proc only its own process), else file modes; host processes "
    "hidden where a mount namespace can be made; folders capped by tmpfs mounts there, else polled",
}
WATCH_SECONDS = 0.1  # how often run()'s `watch` is asked


# ---------------------------------------------------------------- run


def run(
    script: Path,
    args: list[str],
    *,
    student_dir: Path,
    out_dir: Path,
    shared: dict | None = None,
    limits: Limits = Limits(),
    tier: str | None = None,
    group=None,
    packages: tuple = (),
    watch=None,
    turn=None,
) -> RunResult:
    """Run `python -I -S script args...` in the sandbox; wait, kill, report.

    The worker sees a copy of `student_dir` (regular files only) as its
    working directory, writable up to Limits.tmp_mb; a copy of the script's
    folder; each `shared` folder read-only in the working directory under its
    name; and its output folder: an argument equal to `out_dir` (or OUT), or
    a path in it, is replaced by the path the worker sees. When this returns, no process the
    worker started is alive, and the plain files it wrote to its output
    folder are in `out_dir` (read them with read_npy_safe/read_json_safe).
    `group`: the submission's control group (Group), for fair CPU.
    `packages`: what the worker's Python has in its site-packages, as pip
    requirements ("numpy==1.26.4"); none: the grader's own numpy.
    `watch(names)`, asked every WATCH_SECONDS with the names in the output
    folder so far (untrusted), stops the worker if it answers a reason.
    `turn`: a batch's turn in two steps (grading/run/slots.py's Slots):
    `turn.staged()` is held from before the uid claim until the worker may
    run, `turn.held()` while it runs, let go before the teardown. In the
    bwrap tier the sandbox is set up under the first alone (bwrap waits at
    its --block-fd until the second is held); in the others under both.
    """
    tier = tier or probe()
    if tier not in TIERS:
        raise ValueError(f"sandbox: unknown tier {tier!r}; use one of {', '.join(TIERS)}")
    script, student_dir, out_dir = (Path(p).resolve() for p in (script, student_dir, out_dir))
    shared = {name: Path(p).resolve() for name, p in (shared or {}).items()}
    for path in (script, student_dir, out_dir, *shared.values()):
        if not path.exists():
            raise ValueError(f"sandbox: {path} does not exist")
    if any(out_dir.iterdir()):  # a stale value must never pass for this worker's
        raise ValueError(f"sandbox: out_dir {out_dir} is not empty; use a fresh sandbox.make_out_dir()")
    env = environment(packages)
    shared = {name: shared_copy(p) for name, p in shared.items()}
    gated = turn is not None and tier == "bwrap"
    with contextlib.ExitStack() as staged, contextlib.ExitStack() as running:

        def take_turn() -> None:
            if turn is not None:
                running.enter_context(turn.held())
                staged.close()

        if turn is not None:
            staged.enter_context(turn.staged())  # first: waiting for it holds no uid
        with claim_uid() as slot:
            dedicated = slot.uid != os.getuid()
            if dedicated and not slot.left_clean():
                _reset_uid(slot.uid)
            slot.mark(clean=False)
            stage = make_stage(slot.uid, script.parent, student_dir, limits, own_cwd=tier == "bwrap")
            view = launch.View(env, stage.runner, stage.submission, stage.out.path, shared, tier == "bwrap")
            # pids: the worker's processes plus the tier's wrappers (bwrap, unshare, setpriv).
            cg = Group.create(group, memory_bytes=limits.memory_mb * MB, pids=limits.processes + 4)
            popen, gate = None, None
            try:
                if tier != "bwrap":  # the shared folders, as links our uid owns in the working directory
                    for name, path in shared.items():
                        (view.host_cwd / name).symlink_to(path)
                argv = [_map_out(str(a), out_dir, view.out) for a in args]
                if not gated:
                    take_turn()
                popen, gate = start_worker(tier, slot.uid, view, script.name, argv, limits, cg, stage.capped, gated)
                if gated:
                    take_turn()
                    opening, gate = gate, None  # closed by open_gate, whatever happens
                    open_gate(opening)
                result = _supervise(popen, tier, slot.uid if dedicated else None, stage, limits, cg, watch)
                running.close()  # the worker is gone: its turn is free while we tear down
                return result
            finally:
                try:
                    _teardown(popen, slot.uid if dedicated else None, cg, shared_tmp=tier != "bwrap")
                finally:
                    if gate is not None:  # after the kill: a closed gate lets bwrap go on
                        os.close(gate)
                slot.mark(clean=True)  # not reached if the teardown raised
                collect_out(stage.out.path, out_dir)
                remove_stage(stage.path)


def _map_out(arg: str, out_dir: Path, seen: str) -> str:
    """OUT, out_dir, or a path in it, as the worker sees it."""
    for prefix in (OUT, str(out_dir)):
        if arg == prefix or arg.startswith(prefix + "/"):
            return seen + arg[len(prefix) :]
    return arg


def _teardown(popen: subprocess.Popen | None, uid: int | None, cg, shared_tmp: bool = True) -> None:
    """Whatever happened (an exception included): kill, reap, remove the group.
    `shared_tmp`: the worker could reach the machine's shared temp folders (a
    bwrap worker cannot: its /tmp, /var and /dev are its own)."""
    if cg is not None:
        cg.kill_all()
    if popen is not None and popen.returncode is None:
        kill_group(popen.pid)
        popen.wait()
    if popen is not None and popen.stdout is not None:
        popen.stdout.close()  # left open when the run stopped before _supervise (a slot wait cut short)
    if uid is not None:
        _reset_uid(uid, shared_tmp)
    if cg is not None:
        cg.remove()


def _reset_uid(uid: int, shared_tmp: bool = True) -> None:
    """No process, temp file, kernel key or IPC object of this uid may
    outlive (or predate) a run: the next run on the uid must find nothing.
    The shared temp folders are looked through only if the run could reach
    them (a few ms a run: they hold hundreds of entries on a busy machine);
    a slot left unclean is reset whole, whatever tier it last ran."""
    _kill_uid(uid)
    if shared_tmp:
        remove_uid_files(uid)
    clear_uid_state(uid)


def _kill_uid(uid: int) -> None:
    survivors = kill_uid(uid)
    if survivors:
        raise SandboxError(f"sandbox: processes {survivors} of uid {uid} survived SIGKILL")


def _supervise(popen: subprocess.Popen, tier: str, uid: int | None, stage, limits: Limits, cg, watch) -> RunResult:
    """Pump the log, enforce wall time and folder sizes, ask `watch`, then kill everything."""
    log = CappedLog(popen.stdout.fileno(), limits.log_bytes)
    start = time.monotonic()
    reason, next_check, next_watch = "", start, start + WATCH_SECONDS
    while popen.poll() is None:
        if log.closed:  # output closed: wait on the process instead of the pipe
            try:
                popen.wait(0.05)
            except subprocess.TimeoutExpired:
                pass
        log.pump(0.05)
        now = time.monotonic()
        if now - start > limits.wall_seconds:
            reason = f"timeout after {limits.wall_seconds:g} s"
            break
        if now >= next_check:
            reason = stage.problem(limits)
            next_check = now + 0.05  # without a capped mount, the overshoot is what the worker writes meanwhile
            if reason:
                break
        if watch is not None and now >= next_watch:
            reason, next_watch = watch(stage.out_names(limits.out_dir_files + 1)), now + WATCH_SECONDS
            if reason:
                break
    wall = time.monotonic() - start
    if cg is not None:
        cg.kill_all()
    kill_group(popen.pid)
    if uid is not None:
        _kill_uid(uid)  # before draining: a daemon may hold the pipe
    popen.wait()
    log.drain(2.0 if uid is not None else 0.5)  # a dead tree closes the pipe at once
    log.close()
    popen.stdout.close()
    reason = reason or stage.problem(limits)  # filled between two checks, then exited
    if not reason and cg is not None and cg.oom_killed():
        reason = f"memory limit ({limits.memory_mb} MB for all the worker's processes together): killed"
    elif not reason and popen.returncode and cg is not None and cg.pids_exhausted():
        reason = f"process limit ({limits.processes} processes, and the sandbox's own): a fork was refused"
    return make_result(popen.returncode, tier, reason, wall, log, limits)


# ---------------------------------------------------------------- probe

_PROBED: dict[str, str] = {}


def probe(refresh: bool = False) -> str:
    """The strongest tier that really works here (cached for the process)."""
    if "tier" in _PROBED and not refresh:
        return _PROBED["tier"]
    problems = []
    for tier in TIERS:
        problem = check_tier(tier)
        if not problem:
            _PROBED["tier"] = tier
            return tier
        problems.append(f"{tier}: {problem}")
    raise SandboxError("sandbox: no tier works here; " + "; ".join(problems))


def check_tier(tier: str) -> str:
    """ "" if `tier` really works here, else why not (see tier_check.py)."""
    return try_tier(tier, run)
