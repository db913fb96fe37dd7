"""The run's stage: one folder per run, made before and removed after it.

Root-owned and group-owned by the run's uid, mode 0750, so no other run
(another uid) can look in. stage/runner is the case code, stage/submission
the copy of the submission and the worker's writable working directory,
stage/out the only folder whose files come back. The working directory
(outside bwrap, which makes its own) and the output folder are capped by
the file system itself where the grader may mount (disk.py).
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox.disk import Folder, capped, fit, unmount_under
from grader.sandbox.files import copy_regular
from grader.sandbox.procs import remove_tree
from grader.sandbox.scratch import stage_dir, stage_dirs

_CLEANED: dict[str, list] = {}  # "stale": the folders whose stale stages this process removed
PROVISIONAL = 1 << 40  # bytes and entries while we copy the submission in


@dataclass(frozen=True)
class Stage:
    path: Path
    out: Folder
    cwd: Folder | None  # None: the tier gives the worker a capped working directory of its own

    @property
    def capped(self) -> bool:
        """Every folder the worker writes is capped by the file system (not polled)."""
        return self.out.mounted and (self.cwd is None or self.cwd.mounted)

    @property
    def runner(self) -> Path:
        return self.path / "runner"

    def problem(self, limits) -> str:
        """ "" while the worker's folders are within `limits` (Limits), else which is over."""
        if self.out.over():
            return f"output directory over its limit ({limits.out_dir_mb} MB, {limits.out_dir_files} files)"
        if self.cwd is not None and self.cwd.over():
            return f"working directory over its limit ({limits.tmp_mb} MB)"
        return ""

    def out_names(self, most: int) -> frozenset:
        """The names of (at most `most` of) the entries in the output folder
        now: names only, nothing opened or followed (the worker's, untrusted)."""
        try:
            with os.scandir(self.out.path) as entries:
                return frozenset(itertools.islice((e.name for e in entries), most))
        except OSError:
            return frozenset()

    @property
    def submission(self) -> Path:
        return self.path / "submission"


def make_stage(uid: int, runner: Path, student_dir: Path, limits, own_cwd: bool) -> Stage:
    """A fresh stage for one run as `uid`: runner/, submission/ (copies),
    out/, with `limits` (Limits) on out/ and, unless the tier has its own
    (`own_cwd`), on what the worker adds to submission/."""
    if "stale" not in _CLEANED:
        _CLEANED["stale"] = [_remove_stale_stages(Path(base)) for base in stage_dirs()]
    path = Path(tempfile.mkdtemp(prefix=f"needle-run-{os.getpid()}-", dir=stage_dir()))
    try:
        copy_regular(runner, path / "runner", bytecode=True)  # the caller's trusted code
        cwd = None
        if not own_cwd:
            (path / "submission").mkdir(mode=0o700)
            cwd = capped(path / "submission", PROVISIONAL, PROVISIONAL, mount=True)  # fit after the copy
        copy_regular(student_dir, path / "submission")
        if cwd is not None:
            cwd = fit(cwd, limits.tmp_mb << 20)  # the copy does not count against tmp_mb
        (path / "out").mkdir(mode=0o700)
        out = capped(path / "out", limits.out_dir_mb << 20, limits.out_dir_files, mount=True)
        _set_owners(path, uid)
    except BaseException:
        remove_stage(path)
        raise
    return Stage(path, out, cwd)


def _set_owners(path: Path, uid: int) -> None:
    if uid == os.getuid():
        os.chmod(path, 0o700)
        return
    # Only this run's uid (through its group) may enter; it may add
    # files to its working directory (sticky: never remove ours).
    os.chown(path, 0, uid)
    os.chmod(path, 0o750)
    os.chown(path / "submission", 0, uid)
    os.chmod(path / "submission", 0o1770)
    os.chown(path / "out", uid, uid)
    os.chmod(path / "out", 0o700)


def collect_out(stage_out: Path, out_dir: Path) -> None:
    """Move the plain files the (dead) worker left at the top of its output
    folder into out_dir, ours and private; anything else stays behind."""
    me = os.getuid()
    for entry in list(os.scandir(stage_out)):
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            target = out_dir / entry.name
            try:
                os.rename(entry.path, target)  # the same file system: the file itself, the worker's
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                shutil.copyfile(entry.path, target)  # from a capped mount: a copy, ours (no times or xattrs kept)
                os.unlink(entry.path)
            else:
                if os.geteuid() == 0:
                    os.chown(target, me, me, follow_symlinks=False)
            os.chmod(target, 0o600, follow_symlinks=False)


def _remove_stale_stages(base: Path) -> Path:
    """Remove the stages a killed grader left behind (its pid is in their name)."""
    for stage in base.glob("needle-run-*-*"):
        pid = stage.name.split("-")[2]
        try:
            st = os.lstat(stage)
        except FileNotFoundError:  # another grader removed it meanwhile
            continue
        if pid.isdigit() and not Path("/proc", pid).exists() and st.st_uid == os.geteuid() and stat.S_ISDIR(st.st_mode):
            remove_stage(stage)
    return base


def remove_stage(stage: Path) -> None:
    """Unmount its capped folders, then delete it."""
    unmount_under(stage)
    remove_tree(stage)
