"""Where the grader's short-lived files go: a folder in memory when the
machine has one with room, else the usual temporary folder.

Grading one submission makes and deletes some five hundred small files: a
copy of the submission and of the cases for each question's worker, and the
values each worker writes back. On a disk file system every one of them
costs a block-group search for a free inode (ext4 skips the recently
deleted ones, and there are many), about a twentieth of a batch's CPU here;
in /dev/shm they cost next to nothing. Measured on a correct submission:
`grader grade` 1.5-1.7 s with these files under /tmp on ext4, 1.3 s under
/dev/shm.

An operator who sets TMPDIR gets TMPDIR. /dev/shm is used only when it is
a tmpfs with MIN_FREE bytes free (a container's default 64 MB one is not),
and it is a shared folder like /tmp: every folder made in it is private
(mkdtemp's 0700, or the stage's 0750 for the run's uid alone), and a run's
uid leaves nothing behind in either (procs.SHARED_TMP_DIRS).
"""

from __future__ import annotations

import functools
import os
import tempfile

MEMORY_DIR = "/dev/shm"
MIN_FREE = 1 << 30  # bytes free in MEMORY_DIR to use it (a submission's files take a few MB)


def scratch_dir() -> str:
    """The folder to make the grader's own temporary folders in (see the module)."""
    return _memory_dir() or tempfile.gettempdir()


def stage_dir() -> str:
    """The folder to make the runs' stages in: one every uid may pass
    through (a stage is reached by its path in the tiers without a mount
    namespace), so /tmp rather than a TMPDIR that may be private."""
    return _memory_dir() or ("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir())


def _memory_dir() -> str | None:
    """MEMORY_DIR when it is to be used: no TMPDIR set, and roomy."""
    return MEMORY_DIR if not os.environ.get("TMPDIR") and roomy_memory_dir(MEMORY_DIR) else None


def stage_dirs() -> tuple:
    """Every folder a stage may have been made in (for removing stale ones)."""
    return tuple(dict.fromkeys(d for d in (MEMORY_DIR, "/tmp", tempfile.gettempdir()) if os.path.isdir(d)))


def roomy_memory_dir(path: str) -> bool:
    """`path` is a writable tmpfs folder with MIN_FREE bytes free."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return _is_tmpfs(path) and st.f_bavail * st.f_frsize >= MIN_FREE and os.access(path, os.W_OK | os.X_OK)


@functools.lru_cache(maxsize=8)
def _is_tmpfs(path: str) -> bool:
    """The file system at `path` is a tmpfs (from /proc/self/mountinfo; no statfs type in Python)."""
    real = os.path.realpath(path)
    best, fstype = "", ""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                if " - " not in line or len(fields) < 5:
                    continue
                point = fields[4].replace("\\040", " ")
                if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                    best, fstype = point, line.split(" - ", 1)[1].split()[0]
    except OSError:
        return False
    return fstype == "tmpfs"
