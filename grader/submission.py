"""Find the three student-editable files in a submission.

A submission is a filled-in handout folder, a .zip of one, or a folder with
just the three files. Everything else in it is ignored: the grader builds
its own copy of the handout and overlays only these files.
"""
import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

# handout-relative path of each file a student edits
STUDENT_FILES = (
    "python/needle/autograd.py",
    "python/needle/ops/ops_mathematic.py",
    "apps/simple_ml.py",
)
MAX_FILE_BYTES = 1 << 20          # one student source file
MAX_ZIP_BYTES = 64 << 20          # uncompressed total
MAX_ZIP_FILES = 5000
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", "data", ".ipynb_checkpoints"}


class SubmissionError(ValueError):
    """The submission cannot be read; the message says why and how to fix it."""


@dataclass(frozen=True)
class Located:
    files: dict         # handout-relative path -> Path of the student's version
    notes: tuple        # what was missing or odd, for the report


def extract_zip(zip_path: Path, dest: Path) -> Path:
    """Extract safely: no absolute or parent paths, no links, size and count caps."""
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SubmissionError(f"{zip_path}: not a readable zip file ({exc}); zip the handout folder again")
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_FILES:
            raise SubmissionError(f"{zip_path}: {len(infos)} entries, more than {MAX_ZIP_FILES}; "
                                  "zip only your handout folder, without .venv or data")
        if sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
            raise SubmissionError(f"{zip_path}: over {MAX_ZIP_BYTES >> 20} MB uncompressed; "
                                  "leave out .venv and data")
        for info in infos:
            name = info.filename
            parts = Path(name).parts
            if name.startswith(("/", "\\")) or ".." in parts or ":" in name:
                raise SubmissionError(f"{zip_path}: entry {name!r} points outside the archive; refused")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SubmissionError(f"{zip_path}: entry {name!r} is a symbolic link; refused")
        for info in infos:
            target = dest / info.filename
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(target, "wb") as out:
                out.write(src.read(MAX_ZIP_BYTES + 1)[:MAX_ZIP_BYTES])
    return dest


def _candidates(root: Path, name: str):
    """Regular files called `name` under root, shallowest first, skipping venvs and links."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        if name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
    return sorted(found, key=lambda p: (len(p.relative_to(root).parts), str(p)))


def _pick(root: Path, rel: str):
    exact = root / rel
    if exact.is_file() and not exact.is_symlink():
        return exact
    # A nested handout folder (zip of the folder) or a flat folder of files:
    # prefer a path ending like the handout's, then the shallowest match.
    matches = _candidates(root, Path(rel).name)
    suffixed = [p for p in matches if p.as_posix().endswith("/" + rel)]
    return (suffixed or matches or [None])[0]


def locate(root: Path) -> Located:
    files, notes = {}, []
    for rel in STUDENT_FILES:
        path = _pick(root, rel)
        if path is None:
            notes.append(f"{rel} not found in the submission: graded with the handout's unsolved version")
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SubmissionError(f"{path}: {path.stat().st_size} bytes, over {MAX_FILE_BYTES >> 10} KB "
                                  "for one source file; submit your code, not data")
        files[rel] = path
    return Located(files, tuple(notes))
