"""Disk a worker can fill, capped by the file system itself where we can mount.

The run's output folder (every tier) and its working directory (unshare and
rlimit tiers: bwrap makes its own size-capped tmpfs for /submission) are
size- and inode-limited tmpfs mounts that the grader makes in the run's
stage before the worker starts. The kernel refuses every byte past the cap
(ENOSPC), however many processes write at once, fallocate() included; the
pages are charged to the run's memory group. Each cap is one page and one
entry above the limit, so that a worker that tried to go past it is seen
(`Folder.over`) and reported. Measured here: sixteen processes writing or
fallocating at once into a 16 MB output folder got at most 16 MB.

Mounting on the host needs root with CAP_SYS_ADMIN. Without it (root in a
container without CAP_SYS_ADMIN, as in Docker and on Gradescope, where the
rlimit tier runs; a non-root grader) the folders stay on the host's disk:
RLIMIT_FSIZE caps each file, and the supervisor polls the folder's size
every 50 ms and kills the run past its limit, so parallel writers can
overshoot by what they write in that time. That fallback is the best a
process without CAP_SYS_ADMIN can do: disk quotas, loop devices and FUSE
all need it too.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox.limits import SandboxError
from grader.sandbox.procs import dir_usage

_libc = ctypes.CDLL(None, use_errno=True)
MS_NOSUID, MS_NODEV, MS_REMOUNT = 2, 4, 32
MNT_DETACH = 2
PAGE = os.sysconf("SC_PAGE_SIZE")
SCAN_ENTRIES = 100_000  # polling stops counting past this many entries
SPARE_INODES = 10_000  # files a working directory may add to its copy


@dataclass
class Folder:
    """A folder the worker writes, its limit, and how its use is measured:
    a capped tmpfs (`mounted`: statvfs, at once) or a plain folder (a walk)."""

    path: Path
    limit: int
    max_entries: int
    mounted: bool

    def usage(self) -> tuple[int, int]:
        """(bytes, entries) the worker has put there."""
        if not self.mounted:
            return dir_usage(self.path, min(self.max_entries, SCAN_ENTRIES))
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree - 1  # - the root folder

    def over(self) -> bool:
        """Past its limit; for a capped mount, also at it (fallocate() takes
        all or nothing: a refused request leaves the folder exactly full)."""
        size, entries = self.usage()
        return size > self.limit or (self.mounted and size >= self.limit) or entries > self.max_entries


def capped(path: Path, limit: int, max_entries: int, *, mount: bool) -> Folder:
    """The existing empty folder `path` as a Folder of `limit` bytes and
    `max_entries` entries: a tmpfs over it when `mount` and the kernel let
    us, else the folder itself (polled). Set its owner and mode after."""
    if mount and _mount_tmpfs(path, limit + PAGE, max_entries + 2):
        return Folder(path, limit, max_entries, mounted=True)
    return Folder(path, limit, max_entries, mounted=False)


def fit(folder: Folder, extra: int) -> Folder:
    """After copying into `folder`: allow `extra` bytes and SPARE_INODES
    entries more than it now holds (the copy does not count)."""
    used, entries = folder.usage()
    if not folder.mounted:
        return Folder(folder.path, used + extra, SCAN_ENTRIES, mounted=False)
    options = f"size={used + extra + PAGE},nr_inodes={entries + SPARE_INODES + 2}"
    _check(
        _libc.mount(b"tmpfs", bytes(folder.path), b"tmpfs", MS_REMOUNT | MS_NOSUID | MS_NODEV, options.encode()),
        f"resize the tmpfs at {folder.path}",
    )
    return Folder(folder.path, used + extra, entries + SPARE_INODES, mounted=True)


def _mount_tmpfs(path: Path, size: int, inodes: int) -> bool:
    """A private (0700, root) tmpfs at `path`; False where we may not mount
    (no CAP_SYS_ADMIN), SandboxError on any other failure."""
    options = f"size={size},nr_inodes={inodes},mode=700"
    if _libc.mount(b"tmpfs", bytes(path), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) == 0:
        return True
    if ctypes.get_errno() == errno.EPERM:
        return False
    _check(-1, f"mount a tmpfs at {path}")
    return False


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise SandboxError(
            f"sandbox: cannot {what}: {os.strerror(err)}; is the stage's file system (TMPDIR) on a normal disk?"
        )


def unmount_under(path: Path) -> None:
    """Detach every mount at or below `path` (deepest first), so that the
    folder can be removed; mounts made by a grader that died included."""
    prefix = str(path).rstrip("/") + "/"
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    # Field 5 is the mount point, with spaces and such octal-escaped (\\040).
    points = [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4]) for line in lines]
    for point in sorted({p for p in points if p == str(path) or p.startswith(prefix)}, key=len, reverse=True):
        _libc.umount2(point.encode(), MNT_DETACH)
