"""Run one untrusted Python worker and report what happened.

Generic: knows nothing about needle. The parent calls `run(script, args,
student_dir=..., out_dir=..., limits=...)`; the worker runs as
`python -I script args...` with a scrubbed environment, rlimits, a wall-clock
timeout that kills its whole process tree, stdout+stderr captured to a capped
log, and `out_dir` as the only place it can leave values. The parent then
reads those values with `read_npy_safe` / `read_json_safe`, never pickle.

The isolation tier is probed once (`probe()`): "bwrap", else "unshare", else
"rlimit" (see sandbox_launch for what each gives), and every RunResult
records the tier it ran under.

Notes for callers:
- As root the worker runs as a uid of its own, so student_dir, ro_paths and
  the script must be readable by others and every parent dir must be o+x
  (`share_readonly(student_copy)`; `mkdtemp` makes 0700 dirs: chmod 0755).
- `python -I` puts neither the script's dir nor the cwd on sys.path
  (Python >= 3.11): the worker script sets sys.path itself.
- `run` may be called from several threads or processes at once: each run
  claims its own uid; the child setup before exec takes no locks.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader import sandbox_launch as launch
from grader.sandbox_io import read_json_safe, read_npy_safe
from grader.sandbox_result import RunResult, make_result
from grader.sandbox_procs import (CappedLog, claim_uid, dir_usage, kill_group, kill_uid, remove_tree,
                                  remove_uid_files, uid_task_count)

__all__ = ["Limits", "RunResult", "SandboxError", "TIERS", "TIER_NOTES", "probe", "check_tier", "run", "make_out_dir",
           "share_readonly", "read_npy_safe", "read_json_safe"]

TIERS = ("bwrap", "unshare", "rlimit")
# One line per tier for reports: what the worker was up against.
TIER_NOTES = {
    "bwrap": "bubblewrap: own root file system (interpreter, student copy read-only, out_dir), "
             "no network, own PID namespace, non-root uid, rlimits",
    "unshare": "unshare: no network, own PID namespace, non-root uid, private dirs hidden, rlimits",
    "rlimit": "rlimits and a non-root uid only (network reachable, host processes visible)",
}
MB = 1 << 20
WORKER_ENV = {
    "PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
}



class SandboxError(RuntimeError):
    """The sandbox itself failed (not the worker): no tier works, a process survived, ..."""


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Defaults fit Gradescope (768 MB, a few minutes in all).
    Measured here: importing numpy (one OpenBLAS thread) peaks at 140 MB of
    address space; parsing MNIST and a plain-numpy nn_epoch at 467 MB."""
    memory_mb: int = 768          # RLIMIT_AS
    cpu_seconds: int = 60         # RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    wall_seconds: float = 60.0    # wall clock, then the whole tree is killed
    file_size_mb: int = 64        # RLIMIT_FSIZE: any one file the worker writes
    open_files: int = 128         # RLIMIT_NOFILE
    processes: int = 32           # RLIMIT_NPROC for the run's own uid
    log_bytes: int = 256 * 1024   # stdout+stderr kept; the rest is read and dropped
    out_dir_mb: int = 256         # total size of out_dir, checked while running
    out_dir_files: int = 1000     # entries in out_dir
    tmp_mb: int = 64              # the private /tmp (tmpfs) where there is one

    def __post_init__(self):
        for name, value in vars(self).items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"sandbox: Limits.{name} must be a positive number, not {value!r}")


# ---------------------------------------------------------------- helpers for callers

def make_out_dir(parent: Path | None = None) -> Path:
    """A fresh, empty output dir that `run` hands to the sandbox uid."""
    path = Path(tempfile.mkdtemp(prefix="sandbox-out-", dir=parent))
    path.chmod(0o700)  # run() chowns it to the run's uid, and takes it back after
    _check_reachable(path.parent)
    return path


def share_readonly(root: Path) -> None:
    """Make a tree readable (not writable) by the sandbox uid: dirs 0755, files 0644."""
    root = Path(root)
    root.chmod(0o755)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755, follow_symlinks=False)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644)


def _check_reachable(path: Path) -> None:
    """Every ancestor must let others through (o+x), or the sandbox uid cannot reach it."""
    if os.geteuid() != 0:
        return
    for part in [path, *path.parents]:
        if not os.stat(part).st_mode & 0o001:
            raise ValueError(f"sandbox: {path} is not reachable by the sandbox uid: "
                             f"{part} has mode {oct(os.stat(part).st_mode & 0o777)}; chmod o+x it "
                             "(or use sandbox.share_readonly on the student copy)")


# ---------------------------------------------------------------- run

def run(script: Path, args: list[str], *, student_dir: Path, out_dir: Path,
        ro_paths: list[Path] = (), limits: Limits = Limits(), tier: str | None = None) -> RunResult:
    """Run `python -I script args...` in the sandbox, cwd `student_dir`; wait, kill, report.

    When this returns, no process the worker started is alive, and out_dir
    belongs to the caller again (read it with read_npy_safe/read_json_safe).
    """
    tier = tier or probe()
    if tier not in TIERS:
        raise ValueError(f"sandbox: unknown tier {tier!r}; use one of {', '.join(TIERS)}")
    script, student_dir, out_dir = (Path(p).resolve() for p in (script, student_dir, out_dir))
    ro_paths = [Path(p).resolve() for p in ro_paths]
    for path in (script, student_dir, out_dir, *ro_paths):
        if not path.exists():
            raise ValueError(f"sandbox: {path} does not exist")
    if any(out_dir.iterdir()):  # a stale value must never pass for this worker's
        raise ValueError(f"sandbox: out_dir {out_dir} is not empty; use a fresh sandbox.make_out_dir()")
    for path in (script, student_dir, out_dir, *ro_paths):
        # out_dir itself is handed to the run's uid below; the rest must be readable.
        _check_reachable(path if path.is_dir() and path != out_dir else path.parent)
    with claim_uid() as slot:
        dedicated = slot.uid != os.getuid()
        if dedicated:
            _reset_uid(slot.uid, keep=out_dir)
            os.chown(out_dir, slot.uid, slot.uid)
        popen = None
        try:
            popen = _start(tier, slot.uid, script, args, student_dir, out_dir, ro_paths, limits)
            return _supervise(popen, tier, slot.uid if dedicated else None, out_dir, limits)
        finally:
            _teardown(popen, slot.uid if dedicated else None, out_dir)


def _teardown(popen: subprocess.Popen | None, uid: int | None, out_dir: Path) -> None:
    """Whatever happened (an exception included): kill, reap, take out_dir back."""
    if popen is not None and popen.returncode is None:
        kill_group(popen.pid)
        popen.wait()
    if uid is not None:
        _reset_uid(uid, keep=out_dir)
    _reclaim(out_dir)


def _reset_uid(uid: int, keep: Path) -> None:
    """No process or temp file of this uid may outlive (or predate) a run."""
    survivors = kill_uid(uid)
    if survivors:
        raise SandboxError(f"sandbox: processes {survivors} of uid {uid} survived SIGKILL")
    remove_uid_files(uid, keep=keep)


def _reclaim(out_dir: Path) -> None:
    """Give out_dir back to the parent so no later run (same uid) can touch it.

    Values are plain files at its top level; anything else the worker left
    (links, FIFOs, sockets, directories of any depth) is deleted.
    """
    me, root = os.getuid(), os.geteuid() == 0
    if root:
        os.chown(out_dir, me, me)
    os.chmod(out_dir, 0o700)
    for entry in list(os.scandir(out_dir)):
        if entry.is_file(follow_symlinks=False):
            if root:
                os.chown(entry.path, me, me, follow_symlinks=False)
            os.chmod(entry.path, 0o600)  # a regular file: the worker is dead, no race
        else:
            remove_tree(Path(entry.path))


def _rlimits(limits: Limits, uid: int) -> dict[int, tuple[int, int]]:
    nproc = limits.processes
    if uid == os.getuid() and uid != 0:
        nproc += uid_task_count(uid)  # RLIMIT_NPROC counts every task of our uid, not the run's
    return {
        resource.RLIMIT_AS: (limits.memory_mb * MB,) * 2,
        resource.RLIMIT_CPU: (limits.cpu_seconds, limits.cpu_seconds + 1),
        resource.RLIMIT_FSIZE: (limits.file_size_mb * MB,) * 2,
        resource.RLIMIT_NOFILE: (limits.open_files,) * 2,
        resource.RLIMIT_NPROC: (nproc,) * 2,
        resource.RLIMIT_CORE: (0, 0),  # no core dumps filling the disk
    }


def _start(tier, uid, script, args, student_dir, out_dir, ro_paths, limits) -> subprocess.Popen:
    """Start the worker (and its namespace wrappers) in a new session."""
    cmd = [os.path.abspath(sys.executable), "-I", str(script), *map(str, args)]
    root = os.geteuid() == 0
    tmp_bytes = limits.tmp_mb * MB
    hide, expose = [], []
    if tier == "bwrap":
        ro = ro_paths + [script]
        argv = launch.bwrap_argv(cmd, uid=uid, student_dir=student_dir, out_dir=out_dir,
                                 ro_paths=ro, tmp_bytes=tmp_bytes)
        env_args = [a for k, v in WORKER_ENV.items() for a in ("--setenv", k, v)]
        at = argv.index("--clearenv") + 1  # --setenv after --clearenv, or it is cleared
        argv = argv[:at] + env_args + argv[at:]
        drop_uid = None  # setpriv inside the sandbox drops it
    else:
        if root:
            hide = launch.private_dirs()
            expose = [(p, False) for p in launch.interpreter_paths() + ro_paths + [script, student_dir]]
            expose.append((out_dir, True))
        argv = launch.unshare_argv(cmd, uid=uid) if tier == "unshare" else cmd
        drop_uid = uid if (root and tier == "rlimit") else None
    setup = launch.child_setup(limits=_rlimits(limits, uid), uid=drop_uid, chdir=student_dir,
                               hide=hide, expose=expose, tmp_bytes=tmp_bytes)
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=dict(WORKER_ENV), start_new_session=True, preexec_fn=setup)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"sandbox: cannot start a worker in tier {tier}: {exc}") from exc


def _supervise(popen: subprocess.Popen, tier: str, uid: int | None, out_dir: Path, limits: Limits) -> RunResult:
    """Pump the log, enforce wall time and out_dir size, then kill everything."""
    log = CappedLog(popen.stdout.fileno(), limits.log_bytes)
    start = time.monotonic()
    reason, next_check = "", start
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
            reason = _out_dir_problem(out_dir, limits)
            next_check = now + 0.05  # the overshoot is what the worker writes in this time
            if reason:
                break
    wall = time.monotonic() - start
    kill_group(popen.pid)
    if uid is not None:
        _reset_uid(uid, keep=out_dir)  # before draining: a daemon may hold the pipe
    popen.wait()
    log.drain(2.0 if uid is not None else 0.5)  # a dead tree closes the pipe at once
    log.close()
    popen.stdout.close()
    return make_result(popen.returncode, tier, reason, wall, log, limits)


def _out_dir_problem(out_dir: Path, limits: Limits) -> str:
    size, count = dir_usage(out_dir, limits.out_dir_files)
    if size > limits.out_dir_mb * MB or count > limits.out_dir_files:
        return f"output directory over its limit ({limits.out_dir_mb} MB, {limits.out_dir_files} files)"
    return ""


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
    """"" if `tier` really works here, else why not (see sandbox_probe)."""
    from grader.sandbox_probe import check_tier as check

    return check(tier)
