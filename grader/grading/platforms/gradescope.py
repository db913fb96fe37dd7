"""`grader gradescope-bundle OUT.zip`: a Gradescope autograder zip.

Gradescope unzips the bundle into /autograder/source and runs `setup.sh`
there once (system packages, a virtualenv with this project installed,
MNIST, the reference's expected answers), then `run_autograder` for each
submission, which grades /autograder/submission into
/autograder/results/results.json. The templates live in gradescope_files/;
`AUTOGRADER_ROOT` moves the /autograder tree (tests use a temporary one).

The bundle carries the project source (grader/, reference/, handout/,
pyproject.toml, README.md, assignment.toml) but never data/, virtualenvs, caches or links:
from the checkout, or from an installed grader (its package, and the copy of
hw1 and of the checkout's files a wheel carries in grader/bundled/, see
grader/core/paths.py), laid out as the checkout is.
Entries are sorted with a fixed timestamp: the same tree gives the same zip.
"""

import os
import zipfile
from pathlib import Path

from grader.core import paths
from grader.core.files import atomic_open

TEMPLATES = Path(__file__).with_name("gradescope_files")
SCRIPTS = ("setup.sh", "run_autograder")
SOURCE_DIRS = ("grader", "reference", "handout")
SOURCE_FILES = ("pyproject.toml", "README.md", "assignment.toml")
SKIP_NAMES = {"__pycache__", ".pytest_cache", ".venv", "venv", ".grader-cache", "data", ".ipynb_checkpoints"}
FIXED_TIME = (2020, 1, 1, 0, 0, 0)


class BundleError(RuntimeError):
    """The project tree lacks something the bundle needs; the message names it."""


def project(root: Path | None = None) -> dict:
    """Where each top-level name of the bundle is read from: `root`'s (the
    checkout by default), or an installed grader's package and grader/bundled/."""
    if root is None and not paths.in_checkout():
        return {
            "grader": paths.PACKAGE,
            "reference": paths.BUNDLED / "reference",
            "handout": paths.BUNDLED / "handout",
            **{f: paths.BUNDLED_PROJECT / f for f in SOURCE_FILES},
        }
    root = paths.ROOT if root is None else root
    return {name: root / name for name in (*SOURCE_DIRS, *SOURCE_FILES)}


def source_files(root: Path | None = None) -> list:
    """(bundle path, file) of every file to ship, sorted by bundle path."""
    tops = project(root)
    missing = [str(path) for path in tops.values() if not path.exists()]
    if missing:
        raise BundleError(
            f"missing {', '.join(missing)}; run `make handout` for handout/ (installed: reinstall "
            "the grader from a wheel built by `pip wheel .`)"
        )
    files = [(Path(name), tops[name]) for name in SOURCE_FILES]
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(tops[top]):
            here = Path(dirpath)
            dirnames[:] = [
                d for d in dirnames if d not in SKIP_NAMES and not (here / d).is_symlink() and here / d != paths.BUNDLED
            ]  # the wheel's hw1 ships as reference/, handout/
            for name in filenames:
                path = here / name
                if not path.is_symlink() and not name.endswith((".pyc", ".pyo")):
                    files.append((top / path.relative_to(tops[top]), path))
    return sorted(files, key=lambda f: f[0].as_posix())


def _add(archive: zipfile.ZipFile, name: str, data: bytes, mode: int):
    info = zipfile.ZipInfo(name, FIXED_TIME)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_bundle(out: Path, root: Path | None = None) -> int:
    """Write the autograder zip atomically; returns the number of entries."""
    out = Path(out)
    files = source_files(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, binary=True) as handle, zipfile.ZipFile(handle, "w") as archive:
        for script in SCRIPTS:
            _add(archive, script, (TEMPLATES / script).read_bytes(), 0o755)
        for rel, path in files:
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            _add(archive, rel.as_posix(), path.read_bytes(), mode)
    return len(SCRIPTS) + len(files)
