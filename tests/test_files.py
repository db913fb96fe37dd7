"""grader/core/files.py: the one atomic, durable write."""

import os
import stat

import pytest

from grader.core import files


def test_text_and_bytes_replace_the_file_with_the_mode(tmp_path):
    target = tmp_path / "a.csv"
    target.write_text("old")
    files.write_atomic(target, "new,\r\n", mode=0o600)
    assert target.read_bytes() == b"new,\r\n"  # no newline translation
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    files.write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01" and stat.S_IMODE(target.stat().st_mode) == 0o644
    assert os.listdir(tmp_path) == ["a.csv"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with files.atomic_open(target) as handle:
            handle.write("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["report.md"]


def test_the_file_and_its_folder_are_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.path.realpath(f"/proc/self/fd/{fd}")), real(fd)))
    files.write_atomic(tmp_path / "x.json", "{}")
    assert len(synced) == 2 and synced[1] == str(tmp_path.resolve())
    assert os.path.dirname(synced[0]) == str(tmp_path.resolve())


def test_a_missing_folder_is_an_error_not_created(tmp_path):
    with pytest.raises(FileNotFoundError):
        files.write_atomic(tmp_path / "missing" / "g.csv", "x")
    assert not (tmp_path / "missing").exists()
