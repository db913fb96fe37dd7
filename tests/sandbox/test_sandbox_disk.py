"""Capped folders (grader/sandbox/disk.py): a tmpfs refuses what is past
its limit by itself, is sized to what was copied in, and is unmounted with
its stage, a stage left by a dead grader included."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox import disk, stage

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")]
MB = 1 << 20


def mounted(path: Path) -> bool:
    return any(line.split()[4] == str(path) for line in Path("/proc/self/mountinfo").read_text().splitlines())


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "out"
    path.mkdir()
    yield path
    disk.unmount_under(tmp_path)


def fill(path: Path, megabytes: int) -> int:
    """MB written before the file system refused (ENOSPC)."""
    written = 0
    with open(path / "fill.bin", "wb") as f:
        try:
            for _ in range(megabytes):
                f.write(b"x" * MB)
                f.flush()
                written += 1
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return written


def test_a_capped_folder_refuses_what_is_past_its_limit(folder):
    capped = disk.capped(folder, 4 * MB, 10, mount=True)
    assert capped.mounted and mounted(folder)
    assert fill(folder, 8) == 4 and capped.over()
    with pytest.raises(OSError) as exc:
        for n in range(20):
            (folder / f"f{n}").touch()
    assert exc.value.errno == errno.ENOSPC and capped.usage()[1] == 11 and capped.over()  # one past: seen


def test_without_a_mount_the_folder_is_only_measured(folder):
    """Control: the same writes on the host's disk all succeed; polling has to catch them."""
    capped = disk.capped(folder, 4 * MB, 10, mount=False)
    assert not capped.mounted and fill(folder, 8) == 8 and capped.over()


def test_fit_allows_the_limit_beyond_what_was_copied(folder):
    capped = disk.capped(folder, 1 << 40, 1 << 20, mount=True)
    (folder / "copy.bin").write_bytes(b"c" * (3 * MB))
    capped = disk.fit(capped, 2 * MB)
    assert not capped.over()
    assert fill(folder, 8) == 2 and capped.over()


def test_a_dead_graders_stage_is_unmounted_and_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = tmp_path / f"needle-run-{dead.stdout.strip()}-x"
    (path / "out").mkdir(parents=True)
    disk.capped(path / "out", MB, 10, mount=True)
    try:
        assert mounted(path / "out")
        stage._remove_stale_stages(tmp_path)
        assert not path.exists() and not mounted(path / "out")
    finally:
        disk.unmount_under(tmp_path)
