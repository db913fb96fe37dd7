"""The sandbox's cached folders (env.py's interpreter and data copies):
built once per machine, used by any uid, removed once unused.

They live in our own 0755 folder under /var/tmp (cache_base). An entry is
built by `built(name, build)` into a temporary folder and renamed into
place, under a lock file, so that concurrent graders build it once. A
folder that somebody else planted at a cache path is never used: the
caches must be our own, not writable by others, all the way down.

Entries are keyed by what they hold and never changed, so every new
interpreter, package list or data folder (each fresh clone's `make data`)
makes a new one. Each use marks its entry (the folder's mtime, at most
once per MARK_SECONDS per process), and building one removes those unused
for UNUSED_DAYS, so that a machine that grades for a term does not fill
its disk with copies (64-180 MB each).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

UNUSED_DAYS = 14  # an entry not used for this long is removed when another is built
MARK_SECONDS = 3600  # how often one process marks an entry it keeps using
COMPLETE = ".complete"  # in an entry once it is built
_FALLBACK: list[Path] = []  # this process's private base, when the shared one is not ours
_MARKED: dict[Path, float] = {}  # entry -> when this process last marked it used


def cache_base() -> Path:
    """Our own 0755 folder for the caches, under /var/tmp (or a private one)."""
    uid = os.geteuid()
    # The copied interpreter is executed from here: skip file systems mounted noexec.
    bases = [
        b
        for b in ("/var/tmp", tempfile.gettempdir(), "/tmp", "/dev/shm")
        if os.path.isdir(b) and not os.statvfs(b).f_flag & os.ST_NOEXEC
    ] or ["/var/tmp"]
    path = Path(bases[0]) / ("needle-grader-env" if uid == 0 else f"needle-grader-env-{uid}")
    try:
        path.mkdir(mode=0o755)
    except FileExistsError:
        pass
    if trusted(path):
        return path
    if not _FALLBACK:  # planted by somebody else: use a private one for this process
        private = Path(tempfile.mkdtemp(prefix="needle-grader-env-"))
        private.chmod(0o755)
        _FALLBACK.append(private)
    return _FALLBACK[0]


def trusted(path: Path) -> bool:
    """A directory of ours that nobody else may write to."""
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def built(name: str, build) -> Path:
    """cache_base()/name, built by `build(dest)` into a temp folder and
    renamed into place if missing (once, whoever else asks meanwhile);
    marked used."""
    base = cache_base()
    final = base / name
    if (final / COMPLETE).is_file() and trusted(final):
        return used(final)
    with _build_lock(lock_file(final)):
        if (final / COMPLETE).is_file() and trusted(final):  # built while we waited
            return used(final)
        made = used(_build(final, build))
    prune_unused(base, keep=made)
    return made


def used(entry: Path) -> Path:
    """Mark a cache entry used now (its folder's mtime), at most once per MARK_SECONDS per process."""
    now = time.monotonic()
    if now - _MARKED.get(entry, -MARK_SECONDS) >= MARK_SECONDS:
        try:
            os.utime(entry)
        except OSError:  # removed meanwhile: the caller's COMPLETE check builds it again next time
            pass
        _MARKED[entry] = now
    return entry


def prune_unused(base: Path, keep: Path | None = None, now: float | None = None) -> list[Path]:
    """Remove the entries of `base` (python-*, data-*) not used for
    UNUSED_DAYS, but `keep` and any being built (its lock held); returns
    what was removed. Only our own folders are touched."""
    now = time.time() if now is None else now
    removed = []
    for entry in sorted(base.iterdir()):
        if entry == keep or not entry.name.startswith(("python-", "data-")):
            continue
        if not _unused_since(entry, now):
            continue
        # (Its lock file stays: one unlinked while another grader waits on it would let two build at once.)
        with _build_lock(lock_file(entry), wait=False) as held:
            if held and _unused_since(entry, now):  # looked at again: a grader may have just used it
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    return removed


def lock_file(entry: Path) -> Path:
    """The lock its builders take, beside the entry (it outlives the entry)."""
    return entry.with_name(f".{entry.name}.lock")


def _unused_since(entry: Path, now: float) -> bool:
    """Our own entry, last used UNUSED_DAYS or more before `now`."""
    try:
        return trusted(entry) and now - entry.stat().st_mtime >= UNUSED_DAYS * 86400
    except OSError:  # removed meanwhile
        return False


@contextmanager
def _build_lock(path: Path, wait: bool = True):
    """One builder per cache entry at a time, across threads and processes:
    a pip install takes a while, and concurrent graders would each do it.
    Yields whether it is held: always with `wait`, else if it was free now."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _build(final: Path, build) -> Path:
    """Build into a temp folder beside `final`, then rename it into place."""
    base = final.parent
    if final.exists() or final.is_symlink():  # half-built or foreign: replace it
        shutil.rmtree(final, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=base))
    try:
        dest = tmp / "x"
        dest.mkdir(mode=0o755)
        build(dest)
        (dest / COMPLETE).write_text("")
        os.chmod(dest / COMPLETE, 0o644)
        try:
            os.rename(dest, final)
        except OSError:  # a concurrent grader won the race
            if not (final / COMPLETE).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final
