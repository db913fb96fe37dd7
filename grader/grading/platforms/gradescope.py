"""`grader gradescope-bundle OUT.zip`: a Gradescope autograder zip.

Gradescope unzips the bundle into /autograder/source and runs `setup.sh`
there once (system packages, a virtualenv with this project installed,
MNIST, the reference's expected answers), then `run_autograder` for each
submission, which grades /autograder/submission into
/autograder/results/results.json. The templates live in gradescope_files/;
`AUTOGRADER_ROOT` moves the /autograder tree (tests use a temporary one).

The bundle carries the project source (grader/, reference/, handout/,
pyproject.toml, README.md, assignment.toml) but never data/, virtualenvs, caches or links.
Entries are sorted with a fixed timestamp: the same tree gives the same zip.
"""
import os
import zipfile
from pathlib import Path

from grader import ROOT
from grader.core.files import atomic_open

TEMPLATES = Path(__file__).with_name("gradescope_files")
SCRIPTS = ("setup.sh", "run_autograder")
SOURCE_DIRS = ("grader", "reference", "handout")
SOURCE_FILES = ("pyproject.toml", "README.md", "assignment.toml")
SKIP_NAMES = {"__pycache__", ".pytest_cache", ".venv", "venv", ".grader-cache", "data", ".ipynb_checkpoints"}
FIXED_TIME = (2020, 1, 1, 0, 0, 0)


class BundleError(RuntimeError):
    """The project tree lacks something the bundle needs; the message names it."""


def source_files(root: Path = ROOT) -> list:
    """Project-relative paths of every file to ship, sorted."""
    missing = [name for name in (*SOURCE_DIRS, *SOURCE_FILES) if not (root / name).exists()]
    if missing:
        raise BundleError(f"{root}: missing {', '.join(missing)}; run `make handout` for handout/")
    files = [Path(name) for name in SOURCE_FILES]
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(root / top):
            dirnames[:] = [d for d in dirnames if d not in SKIP_NAMES and not (Path(dirpath) / d).is_symlink()]
            for name in filenames:
                path = Path(dirpath) / name
                if not path.is_symlink() and not name.endswith((".pyc", ".pyo")):
                    files.append(path.relative_to(root))
    return sorted(files, key=lambda p: p.as_posix())


def _add(archive: zipfile.ZipFile, name: str, data: bytes, mode: int):
    info = zipfile.ZipInfo(name, FIXED_TIME)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_bundle(out: Path, root: Path = ROOT) -> int:
    """Write the autograder zip atomically; returns the number of entries."""
    out = Path(out)
    files = source_files(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, binary=True) as handle, zipfile.ZipFile(handle, "w") as archive:
        for script in SCRIPTS:
            _add(archive, script, (TEMPLATES / script).read_bytes(), 0o755)
        for rel in files:
            mode = 0o755 if os.access(root / rel, os.X_OK) else 0o644
            _add(archive, rel.as_posix(), (root / rel).read_bytes(), mode)
    return len(SCRIPTS) + len(files)
