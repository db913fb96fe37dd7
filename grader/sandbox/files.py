"""The read-only trees a worker sees, as we copy them: regular files and
folders only, our modes, and bytecode only where we made it."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

SKIP_NAMES = {"__pycache__"}


def compiled(folder: Path, by_hash: bool = False) -> None:
    """Bytecode beside every module under `folder`, made by us, once: the
    worker runs with PYTHONDONTWRITEBYTECODE in a read-only copy, so without
    it each worker compiled numpy and the standard library modules it
    imports again (0.1-0.2 s of a 0.3 s worker). The copy's interpreter is
    this one, so the bytecode is its own; a file that does not compile (the
    standard library's deliberately broken samples) is left without.
    `by_hash`: checked against the source's hash, not its time, so it still
    holds in a copy (the runner's, copied into each run's stage)."""
    import compileall
    import py_compile

    mode = py_compile.PycInvalidationMode.CHECKED_HASH if by_hash else py_compile.PycInvalidationMode.TIMESTAMP
    compileall.compile_dir(folder, quiet=2, workers=1 if by_hash else (os.cpu_count() or 1), invalidation_mode=mode)
    for top, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(top, name), 0o755)
        if os.path.basename(top) == "__pycache__":
            for name in files:
                os.chmod(os.path.join(top, name), 0o644)


def copy_regular(src: Path, dest: Path, skip=frozenset(), follow=False, file_mode=0o644, bytecode=False) -> None:
    """Copy a tree keeping regular files and folders only: links, devices,
    FIFOs and sockets are left out (`follow`: a link to a file is copied as
    the file, for trusted trees). Folders 0755, files `file_mode` (0755 when
    executable), so whoever may enter the top may read, nobody else writes.
    `__pycache__` is left out unless `bytecode` (a trusted tree whose
    bytecode we made: the runner's, compiled by hash so it holds in a copy)."""
    dest.mkdir(mode=0o755, exist_ok=True)
    os.chmod(dest, 0o755)
    for entry in os.scandir(src):
        if entry.name in skip or (entry.name in SKIP_NAMES and not bytecode):
            continue
        st = entry.stat(follow_symlinks=follow)
        target = dest / entry.name
        if stat.S_ISDIR(st.st_mode) and not entry.is_symlink():
            copy_regular(Path(entry.path), target, follow=follow, file_mode=file_mode, bytecode=bytecode)
        elif stat.S_ISREG(st.st_mode):
            shutil.copyfile(entry.path, target)
            os.chmod(target, 0o755 if st.st_mode & 0o111 else file_mode)
