"""What a worker sees, built from regular files only, wherever the project lives.

Two kinds of cached folders, both outside the project and reachable by any
uid (the run's own stage is stage.py's):

- The environment (`environment(packages)`): a copy of the interpreter and
  its whole standard library (tkinter included), the shared libraries they
  load from outside the system folders, and in its site-packages the
  packages an assignment declares (installed by pip, apart from the
  grader's own venv) or, when it declares none, the grader's own numpy;
  plus the sandbox's own entry script. Built once per machine and package
  list under /var/tmp (root) and reused; owned by us, mode 0755/0644, so a
  sandbox uid can run it but never change it. Copying, not pointing at the
  venv, is what makes a project under a 0700 folder (/root, `mktemp -d`)
  gradable in a tier without mounts.
- Shared read-only data (`shared_copy(dir)`, e.g. MNIST): cached the same
  way, keyed by the file names, sizes and times. A gzip file `d/f.gz` is
  also kept decompressed, as `d/.gunzipped/f`, so that a worker may read
  the bytes without inflating them again in every run (MNIST's training
  images: 0.14 s of CPU a run here).

How they are cached (built once, trusted only if ours, removed once
unused) is cached.py's.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from grader.sandbox.cached import COMPLETE, built, used
from grader.sandbox.files import compiled, copy_regular

ENTRY = Path(__file__).with_name("entry.py")
LAYOUT = "3"  # part of the environment's cache key: change it when what build() makes changes
DATA_LAYOUT = "2"  # part of a data copy's cache key: 2 added the decompressed gzip files
GUNZIPPED = ".gunzipped"  # the folder beside a gzip file in a data copy that holds it decompressed
# What the standard library's folder holds besides modules a program imports
# (sys.stdlib_module_names): CPython's own regression tests (120 MB) and its
# test fixture __phello__, the host's third-party packages, and config-*
# (the static library and makefiles, skipped below). Everything else is
# copied: a student's stray `from tkinter import NO` must import.
STDLIB_SKIP = {"test", "__phello__", "site-packages", "dist-packages"}
# Folders the sandbox shows read-only in every tier (launch.py's system
# mounts): a shared library there is found as on the host. One elsewhere (a
# Python built against its own Tcl/Tk or OpenSSL under /opt or a home
# folder) is copied into the environment's lib/, which is LD_LIBRARY_PATH.
SYSTEM_LIBRARY_DIRS = ("usr", "lib", "lib32", "lib64", "libx32")
# pip, run by the grader's interpreter (the copy's version and platform):
# wheels only (no package's build code runs here, and no compiler is needed),
# no .pyc (the copy skips __pycache__ anyway; compiled() makes our own).
PIP_INSTALL = (
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--no-input",
    "--no-compile",
    "--only-binary=:all:",
    "--no-warn-script-location",
)
_BUILT: dict[str, Path] = {}  # cache key -> its entry, as this process found or built it


class StageError(RuntimeError):
    """A cache or stage folder cannot be trusted or built."""


class PackageError(StageError):
    """pip could not install the environment's packages (the message is one line)."""


def environment(packages: tuple = ()) -> Path:
    """The copied interpreter: bin/python3, entry.py, lib/ (libpython and the
    libraries its extension modules load from outside the system folders),
    lib/pythonX.Y (the whole standard library) and its site-packages, holding
    `packages` ("numpy==1.26.4", ...) as pip installs them for this Python,
    or, when none are given, a copy of the grader's own numpy."""
    packages = tuple(packages)
    exe = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    key = _digest([LAYOUT, sys.version, str(exe), ENTRY.read_text(), *_stdlib_names(), *(packages or _own_numpy()[1])])

    def build(dest: Path) -> None:
        start = time.monotonic()
        what = " ".join(packages) or "the grader's numpy"
        _say(
            f"building the sandbox's Python (once per machine and package list): Python "
            f"{sys.version.split()[0]}, its standard library, {what}..."
        )
        with tempfile.TemporaryDirectory(prefix="needle-grader-pip-") as scratch:
            if packages:  # first: a package pip cannot install costs no copying
                pip_install(packages, Path(scratch))
            site = _copy_interpreter(exe, dest)
            # Regular files of our modes, whatever pip made; not its bin/ scripts.
            copy_regular(Path(scratch), site, skip={"bin"})
            if not packages:
                _copy_own_numpy(site)
            compiled(dest / "lib")
        _say(f"sandbox Python ready ({time.monotonic() - start:.0f} s)")

    return _entry(key, f"python-{key}", build)


def _stdlib_names() -> list[str]:
    """What the standard library holds now, for the cache key: a module the
    system adds later (Debian's python3-tk puts tkinter beside its python3)
    makes a new copy."""
    stdlib = Path(os.__file__).resolve().parent
    return sorted(os.listdir(stdlib)) + sorted(os.listdir(stdlib / "lib-dynload"))


def _say(line: str) -> None:
    """Progress of a slow first build, on stderr (stdout is the grader's report)."""
    print(line, file=sys.stderr, flush=True)


def _copy_interpreter(exe: Path, dest: Path) -> Path:
    """bin/python3, lib/ and the standard library into dest; returns its (empty) site-packages."""
    stdlib = Path(os.__file__).resolve().parent
    (dest / "bin").mkdir(mode=0o755)
    shutil.copyfile(exe, dest / "bin" / "python3")
    os.chmod(dest / "bin" / "python3", 0o755)
    lib = dest / "lib"
    lib.mkdir(mode=0o755, exist_ok=True)
    extensions = sorted((stdlib / "lib-dynload").glob("*.so"))
    libraries = {**foreign_libraries([exe, *extensions]), **{so.name: so for so in _libpython()}}
    for name, path in libraries.items():  # found through LD_LIBRARY_PATH (the binary's RUNPATH may be unreachable)
        shutil.copyfile(path, lib / name)
        os.chmod(lib / name, 0o755)
    config = {n for n in os.listdir(stdlib) if n.startswith("config-")}
    copy_regular(stdlib, lib / stdlib.name, skip=STDLIB_SKIP | config)
    shutil.copyfile(ENTRY, dest / "entry.py")
    os.chmod(dest / "entry.py", 0o644)
    site = site_packages(dest)
    site.mkdir(mode=0o755)
    return site


def site_packages(env: Path) -> Path:
    """Where an environment's packages are: entry.py puts this folder on the
    worker's sys.path itself (the host's site.py, which may look elsewhere,
    never runs)."""
    return env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _libpython() -> list[Path]:
    return sorted(Path(sys.base_prefix, "lib").glob("libpython*.so*")) if sys.base_prefix else []


def foreign_libraries(binaries: list[Path], visible=SYSTEM_LIBRARY_DIRS) -> dict[str, Path]:
    """soname -> file of each shared library `binaries` load (as `ldd`
    resolves them) from outside the top-level folders `visible`, which the
    sandbox would not find. Empty where there is no ldd (musl): then only
    libpython is copied."""
    ldd = shutil.which("ldd")
    if ldd is None or not binaries:
        return {}
    out = subprocess.run([ldd, *map(str, binaries)], capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout
    found = {}
    for line in out.splitlines():  # "\tlibtk8.6.so => /lib/x86_64-linux-gnu/libtk8.6.so (0x...)"
        soname, arrow, rest = line.strip().partition(" => ")
        path = Path(rest.rsplit(" (", 1)[0])
        if arrow and path.is_absolute() and path.is_file():
            hidden = {path.parts[1], path.resolve().parts[1]} - set(visible)  # the link or its target
            if hidden:
                found.setdefault(soname, path)
    return found


@functools.cache  # each sandbox run asks; the numpy this process imported does not change
def _own_numpy() -> tuple[Path, list[str]]:
    """The grader's numpy folder, and what identifies it in a cache key."""
    import numpy

    folder = Path(numpy.__file__).resolve().parent
    return folder, [numpy.__version__, installed_identity(folder, numpy.__version__)]


def installed_identity(folder: Path, version: str) -> str:
    """What identifies the package installed at `folder`: the digest of pip's
    RECORD lines (each file with its hash) for what is copied, the package
    and its `.libs`, so the same wheel in another virtualenv (each fresh
    clone has its own) shares one copy. Its scripts (their first line names
    that virtualenv's python) are left out. The folder's path where there
    is no RECORD (a system package)."""
    record = folder.parent / f"{folder.name}-{version}.dist-info" / "RECORD"
    try:
        lines = record.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return str(folder)
    copied = sorted(line for line in lines if line.startswith((f"{folder.name}/", f"{folder.name}.libs/")))
    if not copied:
        return str(folder)
    return "record:" + hashlib.sha256("\n".join(copied).encode()).hexdigest()


def _copy_own_numpy(site: Path) -> None:
    numpy_dir = _own_numpy()[0]
    copy_regular(numpy_dir, site / "numpy")
    if (numpy_dir.parent / "numpy.libs").is_dir():  # manylinux wheels: $ORIGIN/../numpy.libs
        copy_regular(numpy_dir.parent / "numpy.libs", site / "numpy.libs")


def pip_install(packages: tuple, target: Path) -> None:
    """pip-install `packages` (and what they depend on) into target, for this
    Python; PackageError (one line) when pip cannot."""
    start = time.monotonic()
    problem = _pip(packages, target)
    if problem:
        raise PackageError(
            f"pip could not install {' '.join(packages)} for Python {sys.version.split()[0]} "
            f"({problem}); check each NAME==VERSION on PyPI (a wheel for this Python) "
            "and that pip reaches its index"
        )
    _say(f"  installed {' '.join(packages)} ({time.monotonic() - start:.0f} s)")


def _pip(packages: tuple, target: Path) -> str:
    """Run pip, echoing its lines to stderr as progress; "" when it
    succeeded, else the line that says why (its last ERROR line)."""
    cmd = [sys.executable, *PIP_INSTALL, "--target", str(target), *packages]
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
    except OSError as exc:
        return f"cannot run {sys.executable} -m pip: {exc}"
    error = last = ""
    with proc.stdout:
        for line in proc.stdout:
            line = line.rstrip()
            _say(f"  pip: {line}")
            if line.startswith("ERROR:"):
                error = line
            elif line:
                last = line
    if proc.wait() == 0:
        return ""
    return error or last or f"pip exited with status {proc.returncode}"


def shared_copy(source: Path) -> Path:
    """A cached read-only copy of a data folder (regular files only)."""
    source = Path(source)
    entries = sorted(
        (str(p.relative_to(source)), p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*") if p.is_file()
    )
    key = _digest([source.name, repr(entries), DATA_LAYOUT])
    return _entry(key, f"data-{source.name}-{key}", lambda dest: _copy_data(source, dest))


def _entry(key: str, name: str, build) -> Path:
    """The cache entry `name`, built by `build(dest)` if missing, kept by
    `key` for this process's next asks (marked used, as `built` does)."""
    if key in _BUILT and (_BUILT[key] / COMPLETE).is_file():  # (a temp cleaner may have removed it)
        return used(_BUILT[key])
    _BUILT[key] = built(name, build)
    return _BUILT[key]


def _copy_data(source: Path, dest: Path) -> None:
    copy_regular(source, dest, follow=True)
    for packed in sorted(dest.rglob("*.gz")):
        if GUNZIPPED in packed.relative_to(dest).parts:  # the source's own folder of that name: as it is
            continue
        unpacked = packed.parent / GUNZIPPED / packed.stem
        unpacked.parent.mkdir(mode=0o755, exist_ok=True)
        try:
            with gzip.open(packed, "rb") as src, open(unpacked, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except (OSError, EOFError, zlib.error):  # not gzip after all: the worker reads it as it is
            unpacked.unlink(missing_ok=True)
            continue
        os.chmod(unpacked, 0o644)


def _digest(parts: list[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:16]
