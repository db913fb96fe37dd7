"""The unshare tier's mount plumbing, run in the child of a new mount
namespace (launch.child_setup): a tmpfs over every folder to hide and over
the temp folders, and the few paths a worker needs bound back, read-only
unless asked."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18  # fmt: skip
TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"sandbox mount plumbing: {what}: {os.strerror(err)}")


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s):
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)), f"mount {dst}")


def mount_plumbing(hide: list[Path], expose: list[tuple[Path, bool]], tmp_bytes: int) -> None:
    """In our new mount namespace: tmpfs over `hide` and temp dirs, bind `expose` back."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    covers = _outermost([(p, "0755") for p in hide] + [(Path(t), "1777") for t in TMP_DIRS if Path(t).is_dir()])
    wanted = [(p, w) for p, w in expose if any(p.is_relative_to(c) for c, _ in covers)]
    # Keep handles on what we re-expose: the covering tmpfs hides their paths.
    fds = [(os.open(p, os.O_PATH | os.O_CLOEXEC), p, w) for p, w in wanted]
    for path, mode in covers:
        mount("tmpfs", str(path), "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={tmp_bytes}")
    for fd, path, writable in sorted(fds, key=lambda f: len(f[1].parts)):
        _bind_back(fd, path, writable)
        os.close(fd)


def _outermost(covers: list[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """Drop covers inside another cover: they are hidden already."""
    covers = sorted(covers, key=lambda c: len(c[0].parts))
    kept: list[tuple[Path, str]] = []
    for path, mode in covers:
        if not any(path.is_relative_to(k) for k, _ in kept):
            kept.append((path, mode))
    return kept


def _bind_back(fd: int, path: Path, writable: bool) -> None:
    """Recreate `path` in its covering tmpfs and bind the original onto it."""
    for parent in reversed(path.parents):
        if not parent.exists():
            os.mkdir(parent, 0o755)
    if not path.exists() and os.path.isdir(f"/proc/self/fd/{fd}"):
        os.mkdir(path, 0o755)
    elif not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))  # a file mount point
    mount(f"/proc/self/fd/{fd}", str(path), None, MS_BIND | MS_REC)
    if not writable:
        # Keep the flags the original mount has (noexec, ...): dropping one is refused.
        kept = os.statvfs(path).f_flag & (MS_NOSUID | MS_NODEV | 8 | 1024 | 2048)  # + noexec, noatime, nodiratime
        mount(None, str(path), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | kept)
