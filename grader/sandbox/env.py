"""What a worker sees, built from regular files only, wherever the project lives.

Two kinds of cached folders, both outside the project and reachable by any
uid (the run's own stage is stage.py's):

- The environment (`environment()`): a copy of the interpreter, its standard
  library and numpy, plus the sandbox's own entry script. Built once per
  machine under /var/tmp (root) and reused; owned by us, mode 0755/0644, so a
  sandbox uid can run it but never change it. Copying, not pointing at the
  venv, is what makes a project under a 0700 folder (/root, `mktemp -d`)
  gradable in a tier without mounts.
- Shared read-only data (`shared_copy(dir)`, e.g. MNIST): cached the same
  way, keyed by the file names, sizes and times.

A folder that somebody else planted at a cache path is never used: the
caches must be our own, not writable by others, all the way down.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

ENTRY = Path(__file__).with_name("entry.py")
# Parts of the standard library a worker never needs (and that are large).
STDLIB_SKIP = {"test", "site-packages", "dist-packages", "idlelib", "tkinter", "turtledemo", "ensurepip",
               "lib2to3", "__phello__"}
SKIP_NAMES = {"__pycache__"}
_BUILT: dict[str, Path] = {}


class StageError(RuntimeError):
    """A cache or stage folder cannot be trusted or built."""


def cache_base() -> Path:
    """Our own 0755 folder for the caches, under /var/tmp (or a private one)."""
    uid = os.geteuid()
    # The copied interpreter is executed from here: skip file systems mounted noexec.
    bases = [b for b in ("/var/tmp", tempfile.gettempdir(), "/tmp", "/dev/shm")
             if os.path.isdir(b) and not os.statvfs(b).f_flag & os.ST_NOEXEC] or ["/var/tmp"]
    path = Path(bases[0]) / ("needle-grader-env" if uid == 0 else f"needle-grader-env-{uid}")
    try:
        path.mkdir(mode=0o755)
    except FileExistsError:
        pass
    if _trusted(path):
        return path
    if "fallback" not in _BUILT:  # planted by somebody else: use a private one for this process
        private = Path(tempfile.mkdtemp(prefix="needle-grader-env-"))
        private.chmod(0o755)
        _BUILT["fallback"] = private
    return _BUILT["fallback"]


def _trusted(path: Path) -> bool:
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def environment() -> Path:
    """The copied interpreter: bin/python3, lib/pythonX.Y (with numpy), entry.py."""
    import numpy

    numpy_dir = Path(numpy.__file__).resolve().parent
    exe = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    key = _digest([sys.version, str(exe), numpy.__version__, str(numpy_dir), ENTRY.read_text()])
    if key in _BUILT and (_BUILT[key] / ".complete").is_file():  # (a temp cleaner may have removed it)
        return _BUILT[key]
    stdlib = Path(os.__file__).resolve().parent
    libs = [p for p in Path(sys.base_prefix, "lib").glob("libpython*.so*")] if sys.base_prefix else []

    def build(dest: Path) -> None:
        (dest / "bin").mkdir(mode=0o755)
        shutil.copyfile(exe, dest / "bin" / "python3")
        os.chmod(dest / "bin" / "python3", 0o755)
        lib = dest / "lib"
        lib.mkdir(mode=0o755, exist_ok=True)
        for so in libs:  # found through LD_LIBRARY_PATH (the binary's RUNPATH may be unreachable)
            shutil.copyfile(so, lib / so.name)
            os.chmod(lib / so.name, 0o755)
        copy_regular(stdlib, lib / stdlib.name, skip=STDLIB_SKIP | {n for n in os.listdir(stdlib)
                                                                     if n.startswith("config-")})
        # numpy beside the standard library: on sys.path even under `python -I`.
        copy_regular(numpy_dir, lib / stdlib.name / "numpy")
        if (numpy_dir.parent / "numpy.libs").is_dir():  # manylinux wheels: $ORIGIN/../numpy.libs
            copy_regular(numpy_dir.parent / "numpy.libs", lib / stdlib.name / "numpy.libs")
        shutil.copyfile(ENTRY, dest / "entry.py")
        os.chmod(dest / "entry.py", 0o644)
    _BUILT[key] = _cached(f"python-{key}", build)
    return _BUILT[key]


def shared_copy(source: Path) -> Path:
    """A cached read-only copy of a data folder (regular files only)."""
    source = Path(source)
    entries = sorted((str(p.relative_to(source)), p.stat().st_size, p.stat().st_mtime_ns)
                     for p in source.rglob("*") if p.is_file())
    key = _digest([source.name, repr(entries)])
    if key not in _BUILT or not (_BUILT[key] / ".complete").is_file():
        _BUILT[key] = _cached(f"data-{source.name}-{key}", lambda dest: copy_regular(source, dest, follow=True))
    return _BUILT[key]


def _digest(parts: list[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:16]


def _cached(name: str, build) -> Path:
    """base/name, built by `build(dest)` into a temp folder and renamed into place."""
    base = cache_base()
    final = base / name
    if (final / ".complete").is_file() and _trusted(final):
        return final
    if final.exists() or final.is_symlink():  # half-built or foreign: replace it
        shutil.rmtree(final, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=base))
    try:
        dest = tmp / "x"
        dest.mkdir(mode=0o755)
        build(dest)
        (dest / ".complete").write_text("")
        os.chmod(dest / ".complete", 0o644)
        try:
            os.rename(dest, final)
        except OSError:  # a concurrent grader won the race
            if not (final / ".complete").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def copy_regular(src: Path, dest: Path, skip=frozenset(), follow=False, file_mode=0o644) -> None:
    """Copy a tree keeping regular files and folders only: links, devices,
    FIFOs and sockets are left out (`follow`: a link to a file is copied as
    the file, for trusted trees). Folders 0755, files `file_mode` (0755 when
    executable), so whoever may enter the top may read, nobody else writes."""
    dest.mkdir(mode=0o755, exist_ok=True)
    os.chmod(dest, 0o755)
    for entry in os.scandir(src):
        if entry.name in skip or entry.name in SKIP_NAMES:
            continue
        st = entry.stat(follow_symlinks=follow)
        target = dest / entry.name
        if stat.S_ISDIR(st.st_mode) and not entry.is_symlink():
            copy_regular(Path(entry.path), target, follow=follow, file_mode=file_mode)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(entry.path, target)
            os.chmod(target, 0o755 if st.st_mode & 0o111 else file_mode)
