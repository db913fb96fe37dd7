"""The one way the grader writes a file others read: a temporary file in the
same folder, flushed and fsynced, renamed over the target, then the folder
fsynced, so a reader (or a crash) sees the old file or the whole new one."""

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_open(path, mode: int = 0o644, binary: bool = False):
    """Yield a file to write; on success it replaces `path` durably. On any
    error the temporary file is removed and `path` is left as it was."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_atomic(path, data, mode: int = 0o644):
    """Write text (str) or bytes to `path` atomically and durably."""
    with atomic_open(path, mode, binary=isinstance(data, bytes)) as handle:
        handle.write(data)


def _fsync_dir(folder: Path):
    # The rename is durable only once the folder's entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # a folder we cannot open (some network file systems): the rename stands
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
