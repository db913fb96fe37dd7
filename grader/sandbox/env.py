"""What a worker sees, built from regular files only, wherever the project lives.

Two kinds of folders, both outside the project and reachable by any uid:

- The environment (`environment()`): a copy of the interpreter, its standard
  library and numpy, plus the sandbox's own entry script. Built once per
  machine under /var/tmp (root) and reused; owned by us, mode 0755/0644, so a
  sandbox uid can run it but never change it. Copying, not pointing at the
  venv, is what makes a project under a 0700 folder (/root, `mktemp -d`)
  gradable in a tier without mounts.
- Shared read-only data (`shared_copy(dir)`, e.g. MNIST): cached the same
  way, keyed by the file names, sizes and times.
- The run's stage (`make_stage`): one per run, root-owned and group-owned by
  the run's uid, mode 0750, so no other run (another uid) can look in.
  stage/runner is the case code, stage/submission the library copy and the
  worker's writable working directory, stage/out the only folder whose
  files come back.

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


# ---------------------------------------------------------------- the run's stage

STAGE_PARTS = ("runner", "submission", "out")


def make_stage(uid: int, runner: Path, student_dir: Path) -> Path:
    """A fresh stage for one run as `uid`: runner/, submission/ (copies), out/."""
    base = "/tmp" if Path("/tmp").is_dir() else tempfile.gettempdir()
    if "stale" not in _BUILT:
        _BUILT["stale"] = _remove_stale_stages(Path(base))
    stage = Path(tempfile.mkdtemp(prefix=f"needle-run-{os.getpid()}-", dir=base))
    dedicated = uid != os.getuid()
    try:
        copy_regular(runner, stage / "runner")
        copy_regular(student_dir, stage / "submission")
        (stage / "out").mkdir(mode=0o700)
        if dedicated:
            # Only this run's uid (through its group) may enter; it may add
            # files to its working directory (sticky: never remove ours).
            os.chown(stage, 0, uid)
            os.chmod(stage, 0o750)
            os.chown(stage / "submission", 0, uid)
            os.chmod(stage / "submission", 0o1770)
            os.chown(stage / "out", uid, uid)
        else:
            os.chmod(stage, 0o700)
    except BaseException:
        remove_stage(stage)
        raise
    return stage


def collect_out(stage_out: Path, out_dir: Path) -> None:
    """Move the plain files the (dead) worker left at the top of its output
    folder into out_dir, ours and private; anything else stays behind."""
    me = os.getuid()
    for entry in list(os.scandir(stage_out)):
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            target = out_dir / entry.name
            shutil.move(entry.path, target)
            if os.geteuid() == 0:
                os.chown(target, me, me, follow_symlinks=False)
            os.chmod(target, 0o600, follow_symlinks=False)


def _remove_stale_stages(base: Path) -> Path:
    """Remove the stages a killed grader left behind (its pid is in their name)."""
    for stage in base.glob("needle-run-*-*"):
        pid = stage.name.split("-")[2]
        st = os.lstat(stage)
        if pid.isdigit() and not Path("/proc", pid).exists() and st.st_uid == os.geteuid() and stat.S_ISDIR(st.st_mode):
            remove_stage(stage)
    return base


def remove_stage(stage: Path) -> None:
    from grader.sandbox.procs import remove_tree

    remove_tree(stage)
