"""The system-call filter every worker runs under, in every tier.

Docker's default profile is the reference point: what it refuses a
container without capabilities (kernel keyrings, ptrace, namespaces,
mounts, modules, clocks, BPF, ...) is refused here too, plus what Docker
leaves to its IPC and network namespaces, because the rlimit tier has
neither: SysV IPC, POSIX message queues, and every socket that is not
AF_UNIX. Refused calls fail with EPERM (clone3 with ENOSYS, so that glibc
falls back to clone, whose flags the filter can see), never a kill: Python
raises a clean PermissionError the report can show.

How it is built and loaded, and why:

- Built here, in the trusted grader, by libseccomp through PyPI's
  `pyseccomp` (a ctypes binding to libseccomp2), and exported as a BPF
  program. Nothing needs copying into the sandbox's interpreter, and the
  filter is in place before the worker's interpreter runs its first line.
- bwrap tier: passed with `bwrap --seccomp FD`, which loads it after all
  of bwrap's own setup (network, mounts), just before it execs the worker
  (through setpriv, which the filter allows).
- unshare and rlimit tiers: loaded by the child setup (launch.child_setup)
  right before exec, with no_new_privs set first, so that it also works as
  root without CAP_SYS_ADMIN. The loader only makes two prctl calls on a
  buffer prepared before the fork: safe in a child forked from a threaded
  grader. In the unshare tier the filter also covers the `unshare` wrapper,
  so there it lets namespace and mount calls through (the worker itself
  runs as a uid with no capabilities and no_new_privs, which the kernel
  refuses them anyway, Landlock forbids mounts too).
"""

from __future__ import annotations

import ctypes
import errno
import os
import tempfile
import threading

from grader.sandbox.limits import SandboxError

# Docker's refusals for a container without capabilities, and the calls a
# worker could use to leave state behind or look beyond its own processes.
DENIED = (
    "add_key",
    "keyctl",
    "request_key",  # kernel keyrings outlive the run
    "shmget",
    "shmat",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",  # SysV IPC outlives it too
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "ipc",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",  # other processes' memory
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",  # sockets and files past this filter
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "fanotify_init",
    "lookup_dcookie",
    "open_by_handle_at",
    "name_to_handle_at",  # files past Landlock and mounts
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "iopl",
    "ioperm",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "nfsservctl",
    "vm86",
    "vm86old",
    "setns",
    "pivot_root",
    "chroot",
    # The page cache of the files a run shares with the host (the interpreter, the data): a run that
    # could drop, preload or probe pages of them would signal bits to a local user who looks with
    # mincore(), or hear from one. Nothing a worker needs asks for these.
    "fadvise64",
    "fadvise64_64",
    "arm_fadvise64_64",
    "readahead",
    "mincore",
    "cachestat",
)
# madvise() hints that preload or evict a file mapping's pages (the same channel as fadvise): WILLNEED,
# COLD, PAGEOUT, POPULATE_READ. The advice allocators use (DONTNEED, FREE, HUGEPAGE, ...) stays allowed.
PAGE_CACHE_ADVICE = (3, 20, 21, 22)
# Namespace and mount calls: refused except in the unshare tier, whose
# wrapper runs under the filter and needs unshare() and mount(); there only
# a new user namespace (the one a process without capabilities may make) is refused.
NAMESPACE_CALLS = (
    "unshare",
    "mount",
    "umount",
    "umount2",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
)
CLONE_NEWUSER = 0x10000000
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, CLONE_NEWUSER, 0x20000000, 0x40000000)
AF_UNIX = 1
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
_PROGRAMS: dict[tuple, bytes] = {}
_BUILDING = threading.Lock()  # a grading's first workers start together: one builds, the others wait


def rules(tier: str, disk_capped: bool = True) -> list[tuple]:
    """(syscall, errno, ((arg, op, value, mask), ...)) for each refusal in
    `tier`. Where the worker's folders are only polled (`disk_capped`
    false: disk.py), fallocate() is refused with EOPNOTSUPP, as by a file
    system without it (glibc's posix_fallocate then writes instead): it
    reserves gigabytes between two checks, writing takes ten times longer."""
    found = [(name, errno.EPERM, ()) for name in DENIED]
    if not disk_capped:
        found.append(("fallocate", errno.EOPNOTSUPP, ()))
    if tier != "unshare":
        found += [(name, errno.EPERM, ()) for name in NAMESPACE_CALLS]
    else:
        found.append(("unshare", errno.EPERM, ((0, "MASKED_EQ", CLONE_NEWUSER, CLONE_NEWUSER),)))
    # Sockets: AF_UNIX only (no UDP, raw or netlink to the host in the rlimit tier).
    found += [(name, errno.EPERM, ((0, "NE", AF_UNIX, 0),)) for name in ("socket", "socketpair")]
    # New namespaces through clone's flags; clone3 hides its flags in memory.
    found += [("clone", errno.EPERM, ((0, "MASKED_EQ", flag, flag),)) for flag in CLONE_NAMESPACES]
    found.append(("clone3", errno.ENOSYS, ()))
    found += [("madvise", errno.EPERM, ((2, "EQ", advice, 0),)) for advice in PAGE_CACHE_ADVICE]
    return found


def program(tier: str, disk_capped: bool = True) -> bytes:
    """The BPF program for `tier`, built once per rule set."""
    key = tuple(rules(tier, disk_capped))
    with _BUILDING:
        if key not in _PROGRAMS:
            _PROGRAMS[key] = _build(key)
        return _PROGRAMS[key]


def _libseccomp():
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:  # RuntimeError: libseccomp2 not found
        raise SandboxError(
            f"sandbox: cannot build the seccomp filter ({exc}); install libseccomp2 "
            "(apt-get install libseccomp2) and this package's dependencies (pip install -e .)"
        ) from exc
    return pyseccomp


def _build(key: tuple) -> bytes:
    lib = _libseccomp()
    filt = lib.SyscallFilter(lib.ALLOW)
    filt.set_attr(lib.Attr.ACT_BADARCH, lib.KILL_PROCESS)  # 32-bit or x32 calls would dodge the rules
    for name, err, args in key:
        if lib.resolve_syscall(lib.Arch.NATIVE, name) == -1:
            continue  # unknown to this libseccomp (too new, or another architecture's)
        conditions = [
            lib.Arg(arg, getattr(lib, op), value, mask) if op == "MASKED_EQ" else lib.Arg(arg, getattr(lib, op), value)
            for arg, op, value, mask in args
        ]
        filt.add_rule(lib.ERRNO(err), name, *conditions)
    with tempfile.TemporaryFile() as out:
        filt.export_bpf(out)
        out.seek(0)
        return out.read()


def syscall_number(name: str) -> int:
    """This machine's number for a system call (for tests and probes)."""
    return _libseccomp().resolve_syscall(_libseccomp().Arch.NATIVE, name)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def child_loader(bpf: bytes):
    """A function for the child before exec: no_new_privs, then load `bpf`.

    Everything it touches is allocated here, before the fork."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.addressof(buf))

    def load() -> None:
        if (
            libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            or libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0
        ):
            err = ctypes.get_errno()
            raise OSError(err, f"sandbox: the kernel refused the seccomp filter: {os.strerror(err)}")

    load.keep = (buf, prog)  # alive as long as the loader
    return load


def bwrap_fd(bpf: bytes) -> int:
    """A file descriptor holding `bpf`, for `bwrap --seccomp FD` (the caller closes it)."""
    fd = os.memfd_create("needle-seccomp", os.MFD_CLOEXEC)
    os.write(fd, bpf)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
