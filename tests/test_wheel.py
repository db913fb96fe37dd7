"""`pip install .` (not editable) gives a grader that works from any folder:
the wheel is built from a copy of the project, installed into a fresh
virtualenv of this interpreter, and run from a folder outside the checkout,
where it grades a copy of the reference to 100, builds the Gradescope
bundle and checks its own copy of the handout, writing nothing inside the
installed package. The wheel holds every file of grader/ and hw1 (setup.py).

Offline: the wheel is built with this virtualenv's setuptools and wheel
(--no-build-isolation), installed with --no-deps --no-index, and the fresh
virtualenv reaches the third-party packages through a .pth file naming
this virtualenv's site-packages as plain paths (so the editable install's
own .pth files there, which point at the checkout, are never run)."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from grader import DATA, REFERENCE
from grader.core.assignment import Assignment
from grader.core.paths import ROOT
from grader.grading.platforms import gradescope

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

BUILD_INPUTS = (
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
    "assignment.toml",
    "grader",
    "reference",
    "handout",
)
CACHES = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".grader-cache", ".venv")
HW1 = Assignment.hw1()
# the reference's git-ignored copies (the client, the public cases): `make handout` writes them, no wheel ships them
GENERATED = (*(f"reference/{copy}" for copy, _ in HW1.manifest.mirrors), f"reference/{HW1.cases_dest}/")


def run(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900, **kwargs)


def tracked(folder: str) -> list:
    """The repository's files under `folder` (git's list; a tree without git: every file but caches and links)."""
    listed = run(["git", "-C", ROOT, "ls-files", "-z", folder]) if (ROOT / ".git").exists() else None
    if listed is not None and listed.returncode == 0:
        names = [n for n in listed.stdout.split("\0") if n]
    else:
        names = [
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        ]
    return [n for n in names if not (ROOT / n).is_symlink()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    for module in ("setuptools", "wheel"):
        if run([sys.executable, "-c", f"import {module}"]).returncode:
            pytest.skip(f"{module} is not in this virtualenv; `make setup` installs it (dev extra)")
    if not (ROOT / HW1.handout / "python").is_dir():
        pytest.skip("handout/ not generated yet: run `make handout`")
    src = tmp_path_factory.mktemp("project")  # a copy: no build/ or egg-info left in the checkout
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=CACHES)
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheels")
    built = run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "--no-build-isolation", "-w", out])
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return next(out.glob("needle_grader-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """(the fresh virtualenv's bin/, its installed grader package, the environment to run it in)."""
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    made = run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", venv])
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    done = run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_test_venv_packages.pth").write_text("".join(f"{p}\n" for p in sorted(ours)))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GRADER_CACHE", "GRADER_ASSIGNMENT", "PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(
        XDG_CACHE_HOME=str(tmp_path_factory.mktemp("xdg")),
        OPENBLAS_NUM_THREADS="1",
        MNIST_DIR=os.environ.get("MNIST_DIR") or str(DATA.resolve()),
    )
    where = run([python, "-c", "import grader; print(grader.__file__)"], env=env, cwd=venv)
    assert Path(where.stdout.strip()).parent == site / "grader", where.stdout + where.stderr
    return venv / "bin", site / "grader", env


def files_of(package: Path) -> set:
    return {p.relative_to(package).as_posix() for p in package.rglob("*") if "__pycache__" not in p.parts}


def test_the_wheel_holds_every_file_of_the_package_and_hw1(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in tracked("grader") if n not in names]
    assert not missing, f"files of grader/ left out of the wheel (package-data in pyproject.toml): {missing}"
    bundled = {n.removeprefix("grader/bundled/") for n in names if n.startswith("grader/bundled/")}
    for folder in ("reference", "handout"):
        for name in tracked(folder):
            assert name in bundled, f"{name}: not in the wheel's grader/bundled/"
    assert not [n for n in bundled if n.startswith(GENERATED) or "/data/" in f"/{n}"], "copies or data in the wheel"
    assert {"assignment.toml", "project/pyproject.toml", "project/README.md", "project/assignment.toml"} <= bundled
    assert 'cases = "../shipped/cases"' in zipfile.ZipFile(wheel).read("grader/bundled/assignment.toml").decode()


def test_installed_grader_grades_the_reference_100_from_outside_the_checkout(installed, tmp_path):
    bin_dir, package, env = installed
    before = files_of(package)
    shutil.copytree(REFERENCE, tmp_path / "submission", symlinks=True, ignore=CACHES)
    proc = run([bin_dir / "grader", "grade", "submission", "--out", "out"], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "submission: 100/100" in proc.stdout
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 100
    state = Path(env["XDG_CACHE_HOME"]) / "needle-grader"
    assert list((state / "cache").glob("expected-*/meta.json")) and list((state / "hw1" / "data").glob("*.gz"))
    assert files_of(package) == before, "the installed grader wrote inside its own package"


def test_installed_grader_builds_the_checkouts_gradescope_bundle(installed, tmp_path):
    bin_dir, _, env = installed
    proc = run([bin_dir / "grader", "gradescope-bundle", "x.zip"], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "x.zip") as archive:
        names = set(archive.namelist())
        assert archive.read("setup.sh") == (gradescope.TEMPLATES / "setup.sh").read_bytes()
        assert archive.read("run_autograder") == (gradescope.TEMPLATES / "run_autograder").read_bytes()
    checkout = {rel.as_posix() for rel, _ in gradescope.source_files()}
    assert names == {"setup.sh", "run_autograder"} | {n for n in checkout if not n.startswith(GENERATED)}


def test_installed_grader_checks_its_handout_and_will_not_write_it(installed, tmp_path):
    bin_dir, package, env = installed
    proc = run([bin_dir / "grader", "check-handout"], cwd=tmp_path, env=env)
    assert proc.returncode == 0 and "grader/bundled/handout: up to date" in proc.stdout, proc.stderr[-3000:]
    proc = run([bin_dir / "grader", "handout"], cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "inside the installed grader" in proc.stderr
    assert proc.stderr.count("\n") == 1
