"""How one worker is started in each tier: command lines and child setup.

Three tiers, strongest first; in each the worker runs the copied
interpreter (env.py) from the run's stage, as described by a View:

- "bwrap": bubblewrap builds a new root holding /usr and friends, the
  interpreter at /env, the case code at /runner, the working directory at
  /submission (a size-capped tmpfs holding read-only binds of the copy and
  the shared data), /out (writable) and a small private /tmp; new PID,
  network, IPC, UTS and cgroup namespaces. As root, bwrap runs without a
  user namespace (a user namespace would map the worker to host uid 0,
  which RLIMIT_NPROC exempts) and `setpriv` inside drops to the run's
  sandbox uid with no capabilities and no_new_privs. As non-root,
  `--unshare-all` (user namespace) keeps our uid.
- "unshare": util-linux `unshare` for PID/network/IPC/UTS namespaces, then
  `setpriv` to the sandbox uid; the file system is the host's, narrowed by
  the mount plumbing below (root) or by Landlock (sandbox.entry).
- "rlimit": no PID or network namespace: rlimits, a new session, the
  sandbox uid, Landlock; a tree is killed through its group, process group
  and uid.

Mount plumbing (unshare and rlimit tiers, root only, where a mount namespace
can be made): every top-level directory but the system ones (/root, /home,
/work, /var, /run, /opt, ...), the grader's repository and the shared temp
dirs are covered by fresh tmpfs mounts, and only the stage and the
interpreter are bound back, read-only except the working directory and
out/. Without a mount namespace the stage's modes (root:run-gid 0750) and
Landlock are the walls.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from dataclasses import dataclass
from pathlib import Path

from grader.core.paths import ROOT
from grader.sandbox.cgroup import join as join_cgroup
from grader.sandbox.mounts import MS_NODEV, MS_NOEXEC, MS_NOSUID, mount, mount_plumbing

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1
SETPRIV = "/usr/bin/setpriv"


@dataclass(frozen=True)
class View:
    """Where the worker's things are on the host, and where it sees them.

    In the bwrap tier it sees fixed paths (/env, /runner, /submission, /out);
    in the others the stage's own paths (same layout, same relative names).
    """

    host_env: Path
    host_runner: Path
    host_cwd: Path
    host_out: Path
    shared: dict  # name in the working directory -> host folder (read-only)
    neutral: bool

    def _at(self, fixed: str, host: Path) -> str:
        return fixed if self.neutral else str(host)

    @property
    def env(self) -> str:
        return self._at("/env", self.host_env)

    @property
    def runner(self) -> str:
        return self._at("/runner", self.host_runner)

    @property
    def cwd(self) -> str:
        return self._at("/submission", self.host_cwd)

    @property
    def out(self) -> str:
        return self._at("/out", self.host_out)

    def landlock_spec(self, required: bool, host_pids: bool = False) -> dict:
        """What the entry script lets the worker touch (see entry.py).
        `host_pids`: the worker shares the host's PID namespace (rlimit
        tier), so of /proc it may read only its own process and a few
        system-wide files, never another process's cmdline or environ."""
        shared = [f"/submission/{n}" for n in self.shared] if self.neutral else [str(p) for p in self.shared.values()]
        system = [p for p in SYSTEM_READ if p != "/proc"] + list(OWN_PROC if host_pids else ["/proc"])
        read = [*system, self.env, self.runner, *shared]
        write = [self.cwd, self.out, *DEVICES] + (["/tmp"] if self.neutral else [])
        return {"landlock": "required" if required else "off", "read": read, "write": write}


# Read-only system paths a worker may read under Landlock (nothing private:
# a sandbox uid or user namespace cannot read root-only files anyway).
SYSTEM_READ = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/proc",
    "/sys/devices/system/cpu",
)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# /proc for a worker in the host's PID namespace: /proc/self is resolved by
# the entry script to the worker's own /proc/PID (its children see none).
# Another process's cmdline is world-readable by design; only this Landlock
# rule or a hidepid mount hides it, so in the rlimit tier on a kernel without
# Landlock and without CAP_SYS_ADMIN (no mount) it stays readable (environ
# does not: it needs ptrace access, which another uid and seccomp deny).
OWN_PROC = ("/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat")


# Top-level dirs the unshare/rlimit tiers leave visible: the system, read-only
# to a non-root uid anyway. Every other top-level dir (/root, /home, /work,
# /var, /run, /opt, ...) is covered by an empty tmpfs.
SYSTEM_DIRS = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "sys", "tmp"}


def private_dirs() -> list[Path]:
    """Host directories hidden from the worker in the unshare/rlimit tiers."""
    tops = [Path("/", e.name) for e in os.scandir("/") if e.is_dir(follow_symlinks=False)]
    # the grader, its caches: even under /usr
    return [p for p in tops if p.name not in SYSTEM_DIRS] + ([ROOT] if ROOT != Path("/") else [])


# ---------------------------------------------------------------- bwrap


def bwrap_argv(
    cmd: list[str], *, uid: int, view: "View", tmp_bytes: int, seccomp_fd: int, block_fd: int | None = None
) -> list[str]:
    """The bwrap command line running `cmd` as `uid` in the view's fixed paths:
    /env (interpreter), /runner (case code), /submission (the working
    directory: a size-capped tmpfs holding read-only binds of the copy and
    the shared data), /out (writable), under the seccomp filter read from
    `seccomp_fd`. `block_fd`: once the sandbox is set up, bwrap waits to
    read a byte from it (or its end) before the seccomp filter and `cmd`."""
    root = os.geteuid() == 0
    argv = ["bwrap", "--die-with-parent", "--new-session", "--clearenv", "--seccomp", str(seccomp_fd)]
    if block_fd is not None:
        argv += ["--block-fd", str(block_fd)]
    if root:
        argv += [
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            "--cap-add",
            "CAP_SETPCAP",
        ]
    else:
        argv += ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    argv += _system_mounts()
    # /dev read-only: its tmpfs would otherwise take unbounded writes (RAM).
    argv += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/tmp",
    ]
    argv += [
        "--ro-bind",
        str(view.host_env),
        "/env",
        "--ro-bind",
        str(view.host_runner),
        "/runner",
        "--perms",
        "1777",
        "--size",
        str(tmp_bytes),
        "--tmpfs",
        "/submission",
    ]
    for entry in sorted(os.listdir(view.host_cwd)):
        argv += ["--ro-bind", str(view.host_cwd / entry), f"/submission/{entry}"]
    for name, path in sorted(view.shared.items()):
        argv += ["--ro-bind", str(path), f"/submission/{name}"]
    argv += ["--bind", str(view.host_out), "/out", "--chdir", "/submission"]
    if root:
        cmd = drop_to(uid) + cmd
    return argv + ["--"] + cmd


def drop_to(uid: int) -> list[str]:
    """`setpriv` prefix: become `uid`, no groups, no capabilities, no_new_privs.

    The parent-death signal is set again after the uid change (which clears
    it): if the wrapper above the worker is killed, the worker dies too.
    """
    return [
        SETPRIV,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--pdeathsig=KILL",
        "--",
    ]


def _system_mounts() -> list[str]:
    """/usr, /lib* and /bin as on the host (symlinks stay symlinks), ld.so config."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/", name)
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime"):
        if Path("/etc", name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


# ---------------------------------------------------------------- unshare


def unshare_argv(cmd: list[str], *, uid: int) -> list[str]:
    """PID/network/IPC/UTS namespaces around `cmd`; the worker is the namespace's init."""
    argv = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc", "--uts"]
    if os.geteuid() != 0:
        return argv + ["--user", "--map-current-user", "--"] + cmd  # namespaces need a user ns
    return argv + ["--"] + drop_to(uid) + cmd


# ---------------------------------------------------------------- child setup


def child_setup(
    *,
    limits: dict[int, tuple[int, int]],
    uid: int | None,
    chdir: Path,
    hide: list[Path],
    expose: list[tuple[Path, bool]],
    tmp_bytes: int,
    cgroup_files=(),
    hide_processes: bool = False,
    seccomp=None,
):
    """A preexec_fn: join the run's control group, mount plumbing (root),
    rlimits, chdir, the uid drop, then the seccomp filter (`seccomp`: a
    loader from grader.sandbox.seccomp, or None where bwrap loads it).
    `hide_processes`: mount a /proc showing the worker only its own uid's
    processes (the rlimit tier, where it shares the host's PID namespace).

    Runs in the forked child before exec, so it only makes system calls.
    """
    parent = os.getpid()  # the grader, as seen before the fork

    def setup() -> None:
        join_cgroup(cgroup_files)  # first: everything after, wrappers included, is counted
        # No mount namespace (e.g. an unprivileged container): the rlimit
        # tier goes on with the host's file permissions as its only wall.
        if hide and _libc.unshare(CLONE_NEWNS) == 0:
            mount_plumbing(hide, expose, tmp_bytes)
            if hide_processes:  # hidepid=2: other uids' /proc/PID are gone, not just unreadable
                mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
        for res, value in limits.items():
            resource.setrlimit(res, value)
        os.chdir(chdir)
        if uid is not None:
            _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        # If the grader dies, so does the worker (bwrap: --die-with-parent; unshare:
        # --kill-child). Set last: a change of uid clears it.
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the grader died before the line above: no signal will come
            os._exit(137)
        if seccomp is not None:
            seccomp()  # last: nothing above is refused by it, and it binds all that runs next

    return setup
