"""`make data`'s fetcher: verified copies only, one clear line on failure."""
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from grader import DATA, REFERENCE

SCRIPT = REFERENCE / "tools" / "fetch_mnist.py"


@pytest.fixture
def fetch(monkeypatch):
    spec = importlib.util.spec_from_file_location("fetch_mnist", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # A closed loopback port: "downloads" fail at once, with no network.
    monkeypatch.setattr(module, "MIRRORS", ["http://127.0.0.1:9/"])
    monkeypatch.delenv("MNIST_DIR", raising=False)
    return module


def test_sums_are_the_shared_ones(fetch):
    shared = DATA.parent.parent / "shared" / "data" / "mnist" / "SHA256SUMS"
    if not shared.exists():
        pytest.skip("no ../shared/data/mnist beside the project")
    listed = dict(reversed(line.split()) for line in shared.read_text().splitlines() if line.strip())
    assert listed == fetch.SHA256


def test_copies_from_mnist_dir_and_verifies(fetch, tmp_path, monkeypatch):
    monkeypatch.setenv("MNIST_DIR", str(DATA))
    fetch.fetch_all(str(tmp_path / "data"))
    for name, digest in fetch.SHA256.items():
        assert hashlib.sha256((tmp_path / "data" / name).read_bytes()).hexdigest() == digest
    assert sorted(os.listdir(tmp_path / "data")) == sorted(fetch.SHA256)  # no temporary files left
    # One time for every verified copy: another clone's data is the same to caches keyed on it.
    assert {(tmp_path / "data" / name).stat().st_mtime for name in fetch.SHA256} == {fetch.VERIFIED_MTIME}


def test_bad_source_file_is_never_installed(fetch, tmp_path, monkeypatch):
    src = tmp_path / "src"
    shutil.copytree(DATA, src)
    victim = "t10k-labels-idx1-ubyte.gz"
    (src / victim).write_bytes((src / victim).read_bytes()[:-10])  # truncated
    monkeypatch.setenv("MNIST_DIR", str(src))
    with pytest.raises(RuntimeError, match=f"could not get {victim}; tried: .*checksum mismatch.*MNIST_DIR="):
        fetch.fetch_all(str(tmp_path / "data"))
    assert victim not in os.listdir(tmp_path / "data")
    assert not [n for n in os.listdir(tmp_path / "data") if n.startswith(".")]


def test_corrupt_file_in_data_is_replaced(fetch, tmp_path, monkeypatch):
    dest = tmp_path / "data"
    shutil.copytree(DATA, dest)
    (dest / "train-labels-idx1-ubyte.gz").write_bytes(b"garbage")
    monkeypatch.setenv("MNIST_DIR", str(DATA))
    fetch.fetch_all(str(dest))
    assert hashlib.sha256((dest / "train-labels-idx1-ubyte.gz").read_bytes()).hexdigest() == \
        fetch.SHA256["train-labels-idx1-ubyte.gz"]


def test_no_source_gives_one_line_and_exit_1(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MNIST_DIR"}
    code = (f"import runpy, sys; sys.argv = ['fetch_mnist.py', {str(tmp_path / 'data')!r}, '--fallback', "
            f"{str(tmp_path / 'nowhere')!r}]; g = runpy.run_path({str(SCRIPT)!r}, run_name='not_main'); "
            "g['MIRRORS'][:] = ['http://127.0.0.1:9/']; sys.exit(g['main'](sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fetch_mnist.py: could not get ")
    assert "nowhere" in lines[0] and "127.0.0.1:9" in lines[0] and "MNIST_DIR=" in lines[0]
    assert not os.listdir(tmp_path / "data")


def test_usage_error_exit_2():
    out = subprocess.run([sys.executable, str(SCRIPT), "data", "--bogus"], capture_output=True, text=True)
    assert out.returncode == 2 and "--fallback DIR" in out.stderr
