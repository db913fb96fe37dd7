"""The sandbox's plain values: its limits, its error, the OUT placeholder and
the output-folder helper. Their own module so the tier check can use them
without importing the package that calls it."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

MB = 1 << 20  # bytes in a megabyte, for the limits given in MB
OUT = "@out@"  # an argument standing for the output folder as the worker sees it
# A run's default time, wall clock and CPU alike. The grader sets its own per
# question (grader/grading/run/time_limits.py); this serves direct callers.
SECONDS = 60


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the worker): no tier works, a process survived, ..."""


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Measured here: importing numpy (one OpenBLAS thread)
    takes about 30 MB resident; parsing MNIST and a plain-numpy nn_epoch 470 MB."""

    memory_mb: int = 1024  # resident memory of all the run's processes (cgroup), else 2x as RLIMIT_AS
    cpu_seconds: int = SECONDS  # RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    wall_seconds: float = SECONDS  # wall clock, then the whole tree is killed
    file_size_mb: int = 64  # RLIMIT_FSIZE: any one file the worker writes
    open_files: int = 128  # RLIMIT_NOFILE
    processes: int = 32  # pids in the run's group, and RLIMIT_NPROC for its uid
    log_bytes: int = 256 * 1024  # stdout+stderr kept; the rest is read and dropped
    out_dir_mb: int = 256  # total size of out_dir, checked while running
    out_dir_files: int = 1000  # entries in out_dir
    tmp_mb: int = 64  # the writable working directory (and the private /tmp in bwrap)

    def __post_init__(self):
        for name, value in vars(self).items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"sandbox: Limits.{name} must be a positive number, not {value!r}")


def make_out_dir(parent: Path | None = None) -> Path:
    """A fresh, empty, private folder for a run's values (any path will do:
    the worker writes to its stage, and its files are moved here after)."""
    path = Path(tempfile.mkdtemp(prefix="sandbox-out-", dir=parent))
    path.chmod(0o700)
    return path
