"""One build step more than pyproject.toml declares: hw1 goes into the wheel.

An installed grader has no checkout to read hw1 from, so building a wheel
(`pip install .`, `pip wheel .`, `python -m build`) copies it into the
package as grader/bundled/ (grader/core/paths.py reads it from there):

    assignment.toml   hw1's, its folders relative to grader/bundled/: `cases`
                      (grader/shipped/cases in the checkout) becomes ../shipped/cases
    reference/        the solution, without links (data/), caches, or the copies
                      `make handout` writes into it (the client, the public cases)
    handout/          the committed handout, as students receive it
    project/          the checkout's pyproject.toml, README.md and assignment.toml,
                      so `grader gradescope-bundle` lays the bundle out as a checkout

A package-dir mapping could not do it: reference/ and handout/ are not Python
packages, and the assignment.toml needs its `cases` path changed. An
editable install reads the checkout itself, so there the step does nothing.
It runs before the grader is installed: the standard library and setuptools only.
"""

import os
import posixpath
import re
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (tomli is a build requirement there)
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
BUNDLED = "grader/bundled"
FOLDERS = ("reference", "handout")  # copied; `data` never is (an installed grader fetches it, grader/core/datadir.py)
PROJECT_FILES = ("pyproject.toml", "README.md", "assignment.toml")
SKIP_NAMES = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".venv", "venv", ".grader-cache", "data"}


def _copy_tree(src: Path, dest: Path, skip: set) -> None:
    """Every regular file under src to dest (modes kept), minus links, caches and the paths in `skip`."""
    for dirpath, dirnames, filenames in os.walk(src):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_NAMES
            and not (here / d).is_symlink()
            and (here / d).relative_to(src).as_posix() not in skip
        )
        for name in filenames:
            path = here / name
            rel = path.relative_to(src)
            if path.is_symlink() or name.endswith((".pyc", ".pyo")) or rel.as_posix() in skip:
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / rel)


def _rebased_toml(text: str, raw: dict) -> str:
    """The assignment.toml with each folder inside the grader package made relative to grader/bundled/."""
    head, sep, tail = text.partition("\n[")  # the folders are top-level keys, before the first table
    for field in ("reference", "handout", "data", "cases"):
        value = raw[field]
        if value.startswith("grader/"):
            new = posixpath.relpath(value, BUNDLED)
            head, count = re.subn(rf'^({field}\s*=\s*)"{re.escape(value)}"', rf'\g<1>"{new}"', head, flags=re.M)
            if count != 1:
                raise SystemExit(f'assignment.toml: field {field!r}: write it on one line as {field} = "{value}"')
    return head + sep + tail


def bundle_hw1(build_lib: Path) -> None:
    """Write grader/bundled/ into the wheel's build tree (see the module's docstring)."""
    text = (HERE / "assignment.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    dest = build_lib / BUNDLED
    shutil.rmtree(dest, ignore_errors=True)
    for field in FOLDERS:
        if not (HERE / raw[field]).is_dir() or not any((HERE / raw[field]).iterdir()):
            raise SystemExit(
                f"assignment.toml: field {field!r}: {raw[field]}/ is missing or empty; "
                "run `make handout` before building the wheel"
            )
    name = raw["name"]
    generated = {f"tests/{name}/{name}_cases", raw.get("manifest", {}).get("client", "")} - {""}
    _copy_tree(HERE / raw["reference"], dest / raw["reference"], generated)
    _copy_tree(HERE / raw["handout"], dest / raw["handout"], set())
    (dest / "assignment.toml").write_text(_rebased_toml(text, raw), encoding="utf-8")
    (dest / "project").mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(HERE / name, dest / "project" / name)


class BuildPyWithHw1(build_py):
    """build_py, then hw1 into grader/bundled/ (not for an editable install)."""

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            bundle_hw1(Path(self.build_lib))


setup(cmdclass={"build_py": BuildPyWithHw1})
