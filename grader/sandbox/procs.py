"""Process bookkeeping for the sandbox: dedicated uids, tree kill, capped logs.

When the grader runs as root, every run gets a uid of its own from a small
pool (claimed with a file lock, so parallel graders never share one). That
makes "every process the worker started" a precise set, whatever `setsid()`
or double forks it did: the processes of that uid. They are killed with
`kill(-1, SIGKILL)` sent *as that uid*, which the kernel delivers to all of
them in one pass under the task list lock, so a fork bomb cannot outrun it.
"""

from __future__ import annotations

import fcntl
import os
import resource
import selectors
import signal
import stat
import subprocess
import time
from pathlib import Path

from grader.sandbox.limits import MB
from grader.sandbox.pauses import pauses

# 64 uids nobody else uses (no passwd entry, far from system and user ranges).
UID_BASE = 61000
UID_SLOTS = 64
LOCK_DIR = Path("/run/needle-grader-sandbox")
CLEAN = b"torn down\n"  # a uid slot's lock file after a complete teardown (UidSlot)
# World-writable places a worker outside a mount namespace can litter
# (/dev/shm: POSIX shared memory; /dev/mqueue: POSIX message queues, where mounted).
SHARED_TMP_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/dev/mqueue"))


class UidSlot:
    """A sandbox uid held for the duration of one run (a context manager).

    Its lock file (root's, in a 0700 folder) also says whether the last run
    on the uid ended with a teardown that left nothing of it (CLEAN): the
    next run then needs no teardown before it starts, which saves a fork
    and two scans of /proc and the temp folders a run. Nothing can add to a
    uid no process runs as; a grader killed mid-run leaves the mark unset.
    """

    def __init__(self, uid: int, lock_fd: int | None):
        self.uid = uid
        self._lock_fd = lock_fd

    def left_clean(self) -> bool:
        """The last run on this uid ended with a complete teardown."""
        return self._lock_fd is not None and os.pread(self._lock_fd, len(CLEAN) + 1, 0) == CLEAN

    def mark(self, clean: bool) -> None:
        """Say the uid is torn down (True), or in use (False: before anything runs as it)."""
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            if clean:
                os.pwrite(self._lock_fd, CLEAN, 0)

    def __enter__(self) -> "UidSlot":
        return self

    def __exit__(self, *exc) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None


def claim_uid() -> UidSlot:
    """Claim a free sandbox uid (root), or the current uid (non-root)."""
    if os.geteuid() != 0:
        return UidSlot(os.getuid(), None)
    _ensure_lock_dir()
    for slot in range(UID_SLOTS):
        fd = os.open(LOCK_DIR / f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidSlot(UID_BASE + slot, fd)
    raise RuntimeError(f"sandbox: all {UID_SLOTS} sandbox uids are busy; run fewer graders at once")


def _ensure_lock_dir() -> None:
    """Create the root-only lock dir; refuse one somebody else planted."""
    try:
        LOCK_DIR.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(LOCK_DIR)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o077:
        raise RuntimeError(f"sandbox: {LOCK_DIR} is not a root-owned 0700 directory; remove it and retry")


def _statuses():
    """(pid, the start of /proc/PID/status) of every process, those that
    exit meanwhile left out: one read of 4 KB each (the file is about
    1.5 KB, and the lines read here come first), not a read to its end."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/status", os.O_RDONLY | os.O_CLOEXEC)
            try:
                yield int(name), os.read(fd, 4096)
            finally:
                os.close(fd)
        except OSError:
            continue  # exited meanwhile


def uid_pids(uid: int) -> list[int]:
    """Live (non-zombie) processes whose real uid is `uid`, from /proc/*/status.

    (Not the owner of /proc/PID: a non-dumpable process shows up as root there.)
    """
    want = f"\nUid:\t{uid}\t".encode()
    return [
        pid for pid, text in _statuses() if want in text and b"\nState:\tZ" not in text and b"\nState:\tX" not in text
    ]


def uid_task_count(uid: int) -> int:
    """Tasks (threads) of `uid`: what RLIMIT_NPROC counts (zombies too)."""
    want = f"\nUid:\t{uid}\t".encode()
    return sum(int(text.split(b"\nThreads:\t", 1)[1].split(b"\n", 1)[0]) for _, text in _statuses() if want in text)


def kill_uid(uid: int, deadline_s: float = 5.0) -> list[int]:
    """Kill every process of a dedicated sandbox uid; return survivors (should be [])."""
    if uid == 0 or uid == os.getuid():
        raise ValueError(f"sandbox: refusing to kill all processes of uid {uid} (not a sandbox uid)")
    end, waits = time.monotonic() + deadline_s, pauses()
    while True:
        left = uid_pids(uid)
        if not left or time.monotonic() > end:
            return left
        # kill(-1) as the sandbox uid reaches exactly its own processes.
        subprocess.run(
            ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; exit 0"],
            user=uid,
            group=uid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            check=False,
        )
        time.sleep(next(waits))


def kill_group(pgid: int) -> None:
    """SIGKILL a process group (our child is its leader); ignore if gone."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def remove_uid_files(uid: int, keep: Path | None = None) -> None:
    """Remove top-level entries a sandbox uid left in the shared temp dirs (but `keep`)."""
    for base in SHARED_TMP_DIRS:
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid and Path(entry.path) != keep:
                    remove_tree(Path(entry.path))
            except OSError:
                pass


def remove_tree(path: Path) -> None:
    """Delete a file or a tree of any depth (a worker may nest dirs thousands
    deep, past Python's recursion limit and PATH_MAX): `rm -rf` copes."""
    subprocess.run(
        ["rm", "-rf", "--one-file-system", "--", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


class CappedLog:
    """Reads a pipe without blocking, keeps the first `cap` bytes, drops the rest."""

    def __init__(self, fd: int, cap: int):
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0
        self._fd = fd
        self._sel = selectors.DefaultSelector()
        self._sel.register(fd, selectors.EVENT_READ)
        self.closed = False

    def pump(self, timeout: float) -> None:
        """Read what is available within `timeout` seconds (no-op once closed)."""
        if self.closed:
            return
        for _key, _ev in self._sel.select(timeout):
            chunk = os.read(self._fd, 65536)
            if not chunk:
                self.close()
                return
            room = self.cap - len(self.data)
            self.data += chunk[: max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def drain(self, seconds: float) -> None:
        """Read until EOF or `seconds` pass (after the worker is dead)."""
        end = time.monotonic() + seconds
        while not self.closed and time.monotonic() < end:
            self.pump(0.05)

    def close(self) -> None:
        """Stop reading (the caller owns and closes the fd itself)."""
        if not self.closed:
            self._sel.close()
            self.closed = True

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def dir_usage(path: Path, max_entries: int) -> tuple[int, int]:
    """(bytes, entries) under `path`, stopping early past `max_entries`."""
    total, count, stack = 0, 0, [str(path)]
    while stack and count <= max_entries:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    count += 1
                    st = entry.stat(follow_symlinks=False)
                    total += st.st_blocks * 512 if st.st_blocks else st.st_size
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
        except OSError:
            continue
    return total, count


def rlimits(limits, uid: int, cgroup: bool) -> dict[int, tuple[int, int]]:
    """The rlimits of a run of `limits` (sandbox.Limits) as `uid`; `cgroup`: in a memory group."""
    nproc = limits.processes
    if uid != 0:
        # RLIMIT_NPROC counts every task of the uid, not the run's: for our own uid all our
        # processes; for a sandbox uid the zombies of its last run (outside a PID namespace
        # its orphans go to the host's init, which may take seconds to reap them).
        nproc += uid_task_count(uid)
    # With a memory group, use is what counts; address space only stops the absurd.
    address_space = (limits.memory_mb * (8 if cgroup else 2)) * MB
    return {
        resource.RLIMIT_AS: (address_space,) * 2,
        resource.RLIMIT_CPU: (limits.cpu_seconds, limits.cpu_seconds + 1),
        resource.RLIMIT_FSIZE: (limits.file_size_mb * MB,) * 2,
        resource.RLIMIT_NOFILE: (limits.open_files,) * 2,
        resource.RLIMIT_NPROC: (nproc,) * 2,
        resource.RLIMIT_CORE: (0, 0),  # no core dumps filling the disk
    }
