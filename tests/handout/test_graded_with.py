"""The handout's tools/graded_with.py: which versions a student's `make
test` installs. The grader's own when pip has a wheel of each for the
student's Python; else, in one line and before any download, the newest of
the same major version; else one line saying to use another Python.

Offline cases use a folder of made-up wheels as pip's only index (its
--find-links), so that "no wheel for this Python" can be staged on any
Python; one case asks PyPI about Pythons this machine does not have."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.core.assignment import Assignment

HW1 = Assignment.hw1()
SCRIPT = HW1.handout / "tools" / "graded_with.py"
NEVER = "cp27-cp27m-manylinux1_x86_64"  # a wheel no Python 3 installs
ANY = "py3-none-any"


def wheel(folder: Path, name: str, version: str, tag: str) -> None:
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(folder / f"{name}-{version}-{tag}.whl", "w") as whl:
        whl.writestr(f"{name}/__init__.py", "")
        whl.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        whl.writestr(f"{dist}/WHEEL", f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n")
        whl.writestr(f"{dist}/RECORD", "")


def choose(tmp_path, *pins, index: Path | None = None):
    env = {**os.environ, "PIP_NO_CACHE_DIR": "1"}
    if index is not None:
        env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(index))
    return subprocess.run([sys.executable, str(SCRIPT), *pins], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


@pytest.fixture
def index(tmp_path) -> Path:
    folder = tmp_path / "index"
    folder.mkdir()
    wheel(folder, "numpy", "9.0.2", NEVER)     # the grader's pin: no wheel for this Python
    wheel(folder, "numpy", "9.3.0", ANY)       # a later numpy 9 that has one
    wheel(folder, "numpy", "10.0.0", ANY)      # the next major: never chosen instead
    wheel(folder, "oldnum", "1.26.4", NEVER)   # no wheel in its major at all
    wheel(folder, "oldnum", "2.0.0", ANY)
    wheel(folder, "tqdm", "4.67.1", ANY)
    return folder


def test_pins_with_wheels_are_installed_as_the_grader_has_them(tmp_path, index):
    run = choose(tmp_path, "numpy==9.3.0", "tqdm==4.67.1", index=index)
    assert (run.returncode, run.stdout.split(), run.stderr) == (0, ["numpy==9.3.0", "tqdm==4.67.1"], "")


def test_a_pin_without_a_wheel_here_falls_back_within_its_major_in_one_line(tmp_path, index):
    run = choose(tmp_path, "numpy==9.0.2", "tqdm==4.67.1", index=index)
    assert run.returncode == 0
    assert run.stdout.split() == ["numpy>=9.0.2,<10", "tqdm==4.67.1"]
    python = "Python %d.%d" % sys.version_info[:2]
    assert run.stderr.splitlines() == [
        f"numpy==9.0.2 (the grader's version) has no wheel for {python}: installing the newest "
        "numpy>=9.0.2,<10 instead; your points here may differ from the grader's in rare cases"]


def test_no_wheel_in_the_major_at_all_is_one_line_and_exit_1(tmp_path, index):
    run = choose(tmp_path, "oldnum==1.26.4", "tqdm==4.67.1", index=index)
    assert run.returncode == 1 and run.stdout == ""
    [line] = run.stderr.splitlines()
    assert "oldnum==1.26.4 (the grader's version) has no wheel for Python" in line
    assert "nor does any oldnum>=1.26.4,<2" in line and "PYTHON=/path/to/python" in line


def test_an_unpinned_argument_is_a_usage_error(tmp_path):
    run = choose(tmp_path, "numpy>=2")
    assert run.returncode == 2 and "'numpy>=2' is not pinned" in run.stderr


def test_the_makefile_installs_what_graded_with_chooses_wheels_only():
    makefile = (HW1.handout / "Makefile").read_text()
    recipe = makefile[makefile.index(".venv/.installed:"):]
    assert recipe.index("tools/graded_with.py $(GRADED_WITH)") < recipe.index("pip install")  # decided first
    assert "--only-binary=:all: -r .venv/requirements.txt" in recipe  # never minutes of building from source


@pytest.mark.parametrize("python, numpy", [("3.11", "numpy==2.0.2"), ("3.13", "numpy>=2.0.2,<3"),
                                           ("3.14", "numpy>=2.0.2,<3")])
def test_the_declared_numpy_on_pythons_3_11_to_3_14_as_pypi_has_it(tmp_path, python, numpy):
    """The real index, for Pythons this machine may not have (pip's --python-version)."""
    probe = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                            "-d", str(tmp_path / "probe"), "--quiet", "tqdm==4.67.1"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("PyPI is not reachable from here (pip download of a 78 kB wheel failed)")
    declared = dict(p.split("==") for p in HW1.packages)
    assert declared["numpy"] == "2.0.2", "update the expected fallbacks with assignment.toml"
    run = choose(tmp_path, "--python-version", python, *HW1.packages)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [numpy, f"tqdm=={declared['tqdm']}"]
    assert (run.stderr == "") == (numpy == "numpy==2.0.2")


PLAIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.mark.slow
def test_a_students_first_make_builds_venv_with_the_graded_versions(tmp_path):
    """`make setup` in a copy of the handout, with the machine's own python3
    (Debian's here, as on most machines), creates .venv with exactly the
    grader's versions, saying what it installs."""
    import shutil
    root = tmp_path / "hw1"
    shutil.copytree(HW1.handout, root, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    env = {"PATH": PLAIN_PATH, "HOME": os.environ.get("HOME", str(tmp_path))}
    run = subprocess.run(["make", "--no-print-directory", "setup"], cwd=root, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"installing {' '.join(HW1.packages)} pytest requests into .venv" in run.stdout
    seen = subprocess.run([str(root / ".venv/bin/python"), "-c",
                           "import numpy, tqdm, pytest, requests; print(numpy.__version__, tqdm.__version__)"],
                          capture_output=True, text=True, env=env, timeout=60)
    declared = dict(p.split("==") for p in HW1.packages)
    assert seen.stdout.split() == [declared["numpy"], declared["tqdm"]], seen.stderr
