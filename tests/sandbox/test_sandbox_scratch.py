"""Where the grader's short-lived files go (grader/sandbox/scratch.py): a
tmpfs with room when there is one, never a small or a disk one, and
TMPDIR when the operator set it; a run's stage is made there, and a stale
stage is removed from there too."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from grader import sandbox
from grader.sandbox import disk, scratch, stage

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")]
GB = 1 << 30


def mount_tmpfs(path: Path, size: str) -> Path:
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=1777", "tmpfs", str(path)], check=True)
    return path


@pytest.fixture
def tmpfs(tmp_path):
    """(a 2 GB tmpfs, a 64 MB one, a plain folder beside them)."""
    plain = tmp_path / "plain"
    plain.mkdir()
    yield mount_tmpfs(tmp_path / "big", "2g"), mount_tmpfs(tmp_path / "small", "64m"), plain
    disk.unmount_under(tmp_path)


@pytest.fixture
def no_tmpdir(monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads the environment again


def fs_type(path) -> str:
    """What coreutils says the file system at `path` is (an oracle independent of mountinfo)."""
    return subprocess.run(
        ["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_only_a_tmpfs_with_room_counts(tmpfs):
    big, small, plain = tmpfs
    assert scratch.roomy_memory_dir(str(big))
    assert not scratch.roomy_memory_dir(str(small))  # a container's 64 MB /dev/shm
    assert not scratch.roomy_memory_dir(str(big / "missing"))
    assert scratch.roomy_memory_dir(str(plain)) == (fs_type(plain) == "tmpfs")


@pytest.mark.parametrize("path", ["/", "/tmp", "/var/tmp", "/dev/shm", "/proc", "/sys/fs/cgroup"])
def test_the_file_system_type_agrees_with_stat(path):
    if os.path.isdir(path):
        assert scratch._is_tmpfs(path) == (fs_type(path) == "tmpfs")


def test_the_memory_folder_is_used_when_roomy_else_the_temporary_folder(tmpfs, monkeypatch, no_tmpdir):
    big, small, _ = tmpfs
    monkeypatch.setattr(scratch, "MEMORY_DIR", str(big))
    assert scratch.scratch_dir() == str(big) and scratch.stage_dir() == str(big)
    monkeypatch.setattr(scratch, "MEMORY_DIR", str(small))
    assert scratch.scratch_dir() == tempfile.gettempdir() and scratch.stage_dir() == "/tmp"


def test_an_operators_tmpdir_wins(tmpfs, monkeypatch, tmp_path):
    big, _, plain = tmpfs
    monkeypatch.setattr(scratch, "MEMORY_DIR", str(big))
    monkeypatch.setenv("TMPDIR", str(plain))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert scratch.scratch_dir() == str(plain)
    assert scratch.stage_dir() == "/tmp"  # a stage is reached by other uids: never a private TMPDIR


def test_a_stage_is_made_in_the_memory_folder_and_a_stale_one_there_removed(tmpfs, monkeypatch, no_tmpdir, tmp_path):
    big, _, _ = tmpfs
    monkeypatch.setattr(scratch, "MEMORY_DIR", str(big))
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = big / f"needle-run-{dead.pid}-old"
    (stale / "runner").mkdir(parents=True)
    monkeypatch.setattr(stage, "_CLEANED", {})
    runner, student = tmp_path / "runner", tmp_path / "student"
    for folder, name in ((runner, "worker.py"), (student, "answer.py")):
        folder.mkdir()
        (folder / name).write_text("x = 1\n")
    made = stage.make_stage(os.getuid(), runner, student, sandbox.Limits(), own_cwd=False)
    try:
        assert made.path.parent == big and (made.runner / "worker.py").is_file()
        assert (made.submission / "answer.py").is_file()
        assert not stale.exists()
    finally:
        stage.remove_stage(made.path)
    assert not made.path.exists()
