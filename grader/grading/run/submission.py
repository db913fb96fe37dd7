"""Find the student-editable files in a submission (hw1: three).

A submission is a filled-in handout folder, a .zip of one, or a folder with
just those files. Everything else in it is ignored: the grader builds
its own copy of the handout and overlays only these files. Symbolic links
(outside ignored folders such as .venv and data), hard-linked student files
and special files are refused, in folders and zips alike: a link could make
the grader's own reference pass for the student's work.
"""

import os
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 1 << 20  # one student source file
MAX_ZIP_BYTES = 64 << 20  # uncompressed total
MAX_ZIP_FILES = 5000
SUPPORTED_COMPRESSION = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", "data", ".ipynb_checkpoints"}


class SubmissionError(ValueError):
    """The submission cannot be read; the message says why and how to fix it."""


@dataclass(frozen=True)
class Located:
    files: dict  # handout-relative path -> Path of the student's version
    notes: tuple  # what was missing or odd, for the report


def extract_zip(zip_path: Path, dest: Path) -> Path:
    """Extract safely: no absolute or parent paths, no links, no encrypted or
    damaged entries, size and count caps. Backslashes (zips written by
    Windows PowerShell 5) are folder separators."""
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise SubmissionError(f"{zip_path}: not a readable zip file ({exc}); zip the handout folder again")
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_FILES:
            raise SubmissionError(
                f"{zip_path}: {len(infos)} entries, more than {MAX_ZIP_FILES}; "
                "zip only your handout folder, without .venv or data"
            )
        if sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
            raise SubmissionError(f"{zip_path}: over {MAX_ZIP_BYTES >> 20} MB uncompressed; leave out .venv and data")
        entries = [(_entry_name(zip_path, info), info) for info in infos]
        for name, info in entries:
            _extract_one(archive, zip_path, name, info, dest)
    return dest


def _entry_name(zip_path: Path, info: zipfile.ZipInfo) -> str:
    """The entry's relative path with / separators, or a refusal saying why."""
    name = info.filename.replace("\\", "/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts or ":" in name or not parts:
        raise SubmissionError(f"{zip_path}: entry {info.filename!r} points outside the archive; refused")
    if any(len(p.encode()) > 255 for p in parts) or len(name.encode()) > 1024:
        raise SubmissionError(
            f"{zip_path}: entry {info.filename[:80]!r}... has a name too long; "
            "zip the handout folder again from a shorter path"
        )
    if info.flag_bits & 0x1:
        raise SubmissionError(f"{zip_path}: entry {name!r} is encrypted; zip the folder again without a password")
    if info.compress_type not in SUPPORTED_COMPRESSION:
        raise SubmissionError(
            f"{zip_path}: entry {name!r} uses compression method {info.compress_type}, "
            "which the grader cannot read; zip the folder again with standard (deflate) zip"
        )
    if stat.S_ISLNK(info.external_attr >> 16) and not _ignored(parts):
        raise SubmissionError(
            f"{zip_path}: entry {name!r} is a symbolic link; refused: zip real files "
            "(zip -r without -y, or your system's Compress)"
        )
    return "/".join(parts) + ("/" if name.endswith("/") else "")


def _ignored(parts) -> bool:
    """Inside a folder the grader never reads (.venv, data, .git, ...)."""
    return any(p in SKIP_DIRS or p.startswith(".") for p in parts[:-1]) or parts[-1] == "data"


def _extract_one(archive, zip_path: Path, name: str, info, dest: Path) -> None:
    parts = name.rstrip("/").split("/")
    if stat.S_ISLNK(info.external_attr >> 16):
        return  # a link inside an ignored folder: left out
    target = dest.joinpath(*parts)
    try:
        if name.endswith("/") or info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as src, open(target, "xb") as out:
            out.write(src.read(MAX_ZIP_BYTES + 1)[:MAX_ZIP_BYTES])
    except FileExistsError:
        raise SubmissionError(
            f"{zip_path}: {name!r} appears twice, or is both a file and a folder in the zip; "
            "zip the handout folder again"
        ) from None
    except (NotADirectoryError, IsADirectoryError):
        raise SubmissionError(
            f"{zip_path}: {name!r} is both a file and a folder in the zip; zip the handout folder again"
        ) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise SubmissionError(
            f"{zip_path}: entry {name!r} is damaged ({exc}); zip the handout folder again and check the upload"
        ) from None
    except OSError as exc:
        raise SubmissionError(
            f"{zip_path}: entry {name!r} cannot be extracted ({exc.strerror}); zip the handout folder again"
        ) from None


def _walk(root: Path, parts: set):
    """(dirpath, filenames) of the folders the grader reads (ignored folders
    and links are not entered). A link or special file named like a part of a
    student file's path (python/, apps/, autograd.py, ...) is refused: it
    could stand in for the student's work. Other links are ignored."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        for name in [*dirnames, *filenames]:
            if name not in parts:
                continue
            mode = os.lstat(os.path.join(dirpath, name)).st_mode
            if stat.S_ISLNK(mode):
                raise SubmissionError(
                    f"{rel / name}: a symbolic link in the submission; refused: submit the files themselves"
                )
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise SubmissionError(f"{rel / name}: not a regular file or folder; refused")
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        yield dirpath, filenames


def _candidates(root: Path, name: str, parts: set):
    """Regular files called `name` under root, shallowest first."""
    found = [Path(dirpath) / name for dirpath, filenames in _walk(root, parts) if name in filenames]
    found = [p for p in found if stat.S_ISREG(os.lstat(p).st_mode)]
    return sorted(found, key=lambda p: (len(p.relative_to(root).parts), str(p)))


def _pick(root: Path, rel: str, matches: list):
    exact = root / rel
    if exact in matches:
        return exact
    # A nested handout folder (zip of the folder) or a flat folder of files:
    # prefer a path ending like the handout's, then the shallowest match.
    suffixed = [p for p in matches if p.as_posix().endswith("/" + rel)]
    return (suffixed or matches or [None])[0]


def locate(root: Path, student_files) -> Located:
    """The student's files (handout-relative paths); refuses links, hard
    links and special files on the way, and a submission with none of them."""
    root = Path(root).resolve()
    files, notes = {}, []
    parts = {part for rel in student_files for part in rel.split("/")}
    for rel in student_files:
        path = _pick(root, rel, _candidates(root, Path(rel).name, parts))
        if path is None:
            notes.append(f"{rel} not found in the submission: graded with the handout's unsolved version")
            continue
        st = os.lstat(path)
        if st.st_nlink != 1:
            raise SubmissionError(
                f"{path.relative_to(root)}: a hard link ({st.st_nlink} names for one file); "
                "refused: submit a plain copy"
            )
        if st.st_size > MAX_FILE_BYTES:
            raise SubmissionError(
                f"{path}: {st.st_size} bytes, over {MAX_FILE_BYTES >> 10} KB "
                "for one source file; submit your code, not data"
            )
        files[rel] = path
    if not files:
        raise SubmissionError(
            f"{root}: none of {', '.join(student_files)} found; submit your handout folder "
            "(or a zip of it) with your solutions in these files"
        )
    return Located(files, tuple(notes))
