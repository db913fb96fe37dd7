"""The grader's private cache: folders built once, then reused across
grades, batches and regrades (issue 37), and what keeps it bounded.

Everything here sits under cache_root() (GRADER_CACHE, else
<repository>/.grader-cache), mode 0700: the sandbox uid cannot read it.

- built_once(): a folder complete once it holds its marker, built in a
  temporary folder beside it and renamed into place, under a lock file, so
  that concurrent graders (a batch's pool, a batch and a `grader grade`)
  build it once: the others wait for it, then read it.
- Per-submission entries (a submission's own inputs and the reference's
  answers on them, SUBMISSION_PREFIX, about 1 MB each) are pruned, least
  recently used first, beyond GRADER_CACHE_SUBMISSIONS_MB (default
  SUBMISSIONS_MB); an entry used within the last PRUNE_GRACE_SECONDS is
  never removed (a grading may be reading it). Course-level entries (one
  per course secret and key) are few and stay. A folder's size is counted
  once and kept beside its files: pruning, at every new submission, reads
  one small file an entry (it walked every file of every entry, 1.5 s a
  grade with 160 entries).
- probed_tier(): the sandbox tier the last probe on this boot found (an
  hour at most), so that a single `grader grade` does not start a sandbox
  only to probe it.
"""

import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from grader import ROOT, sandbox
from grader.core import paths
from grader.core.files import write_atomic

SUBMISSION_PREFIX = "sub-"
SUBMISSIONS_MB = 256
PRUNE_GRACE_SECONDS = 3600
PROBE_SECONDS = 3600
LOCK_SUFFIX = ".lock"
SIZE_FILE = ".bytes"  # in a submission's folder entry: its size, counted by the first pruning that saw it


def cache_root() -> Path:
    """$GRADER_CACHE, else .grader-cache/ in a checkout, else under the installed grader's state folder."""
    if os.environ.get("GRADER_CACHE"):
        return Path(os.environ["GRADER_CACHE"])
    return ROOT / ".grader-cache" if paths.in_checkout() else paths.state() / "cache"


def private_root() -> Path:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o700)
    return root


@contextmanager
def locked(path: Path):
    """An exclusive lock on the file `path` (created if missing), held for the block."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def touch(path: Path) -> None:
    """Mark a cache entry used now (pruning removes the least recently used)."""
    try:
        os.utime(path)
    except OSError:
        pass


def built_once(final: Path, marker: str, build_into, announce: str, ready: str) -> Path:
    """`final`, a cache folder complete once it holds `marker`: built if
    missing by build_into(folder) in a temporary folder beside it, renamed
    into place, under `final`'s lock (a grader finding it being built waits
    for it rather than building it again). The first grade after a change
    waits for this: `announce` says so on stderr."""
    if (final / marker).exists():
        touch(final)
        return final
    with locked(final.parent / (final.name + LOCK_SUFFIX)):
        if (final / marker).exists():  # built while this one waited
            return final
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
        if announce:
            print(announce, file=sys.stderr, flush=True)
        start = time.monotonic()
        try:
            build_into(tmp)
            if ready:
                print(f"{ready} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)
            if final.exists():  # an incomplete folder (a build killed before this lock existed)
                shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _size(path: Path) -> int:
    """An entry's bytes. A folder's are counted once and kept in its
    SIZE_FILE: an entry is never changed once built, and pruning runs at
    every new submission, over every entry the cache holds."""
    if path.is_file():
        return path.stat().st_size
    memo = path / SIZE_FILE
    try:
        return int(memo.read_text())
    except (OSError, ValueError):
        pass
    used = path.stat()
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink() and p != memo)
    write_atomic(memo, f"{size}\n", mode=0o600)
    os.utime(path, ns=(used.st_atime_ns, used.st_mtime_ns))  # the entry's last use (its mtime) stays as it was
    return size


def _entry_id(name: str) -> str:
    """Entries of one submission share their last dash-separated part (its inputs' key id)."""
    return name[: -len(".npz")].rsplit("-", 1)[-1] if name.endswith(".npz") else name.rsplit("-", 1)[-1]


def submission_limit_bytes() -> int:
    return int(float(os.environ.get("GRADER_CACHE_SUBMISSIONS_MB", SUBMISSIONS_MB)) * (1 << 20))


def prune_submissions(root: Path | None = None, limit: int | None = None, now: float | None = None) -> list:
    """Remove the least recently used submissions' entries until those left
    take at most `limit` bytes, sparing any used within the grace period;
    returns the removed paths."""
    root = root or cache_root()
    limit = submission_limit_bytes() if limit is None else limit
    now = time.time() if now is None else now
    groups = {}
    for path in root.glob(SUBMISSION_PREFIX + "*"):
        if path.name.endswith(LOCK_SUFFIX):
            continue
        try:
            used, size = path.stat().st_mtime, _size(path)
        except OSError:  # removed meanwhile
            continue
        group = groups.setdefault(_entry_id(path.name), {"used": 0.0, "size": 0, "paths": []})
        group["used"] = max(group["used"], used)
        group["size"] += size
        group["paths"].append(path)
    total, removed = sum(g["size"] for g in groups.values()), []
    for group in sorted(groups.values(), key=lambda g: g["used"]):
        if total <= limit:
            break
        if now - group["used"] < PRUNE_GRACE_SECONDS:
            break  # the rest is newer still
        for path in group["paths"]:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
            lock = path.parent / (path.name + LOCK_SUFFIX)
            lock.unlink(missing_ok=True)
            removed.append(path)
        total -= group["size"]
    return removed


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "no-boot-id"


def _probe_file() -> Path:
    sources = sorted(Path(sandbox.__file__).parent.glob("*.py"))
    digest = hashlib.sha256(f"{_boot_id()}\0{os.getuid()}\0".encode())
    for path in sources:
        digest.update(path.read_bytes())
    return private_root() / f"tier-{digest.hexdigest()[:16]}"


def probed_tier(now: float | None = None) -> str:
    """The strongest sandbox tier that works here: the last probe's on this
    boot (and sandbox code), if at most PROBE_SECONDS old, else probed now."""
    now = time.time() if now is None else now
    path = _probe_file()
    try:
        tier = path.read_text().strip()
        if tier in sandbox.TIERS and now - path.stat().st_mtime <= PROBE_SECONDS:
            return tier
    except OSError:
        pass
    tier = sandbox.probe()
    fd, tmp = tempfile.mkstemp(prefix=".tier-", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(tier + "\n")
    os.replace(tmp, path)
    return tier
