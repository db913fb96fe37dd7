"""The submissions of a folder, as grade-batch reads them (each subfolder or
.zip is one, named by batch_names), reduced to their student files' text.

Only text is read: zips are extracted with the grader's safe extractor into
a temporary folder, the student files are found by `submission.locate` (no
links, size caps), and nothing is run. A submission that cannot be read
gives one note and is left out; the others are still compared.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.grading.batch.names import find_submissions
from grader.grading.run.submission import SubmissionError, extract_zip, locate

CLASS, PUBLIC = "class", "public"


@dataclass(frozen=True)
class Submission:
    name: str  # as grade-batch names its result folder
    kind: str  # CLASS or PUBLIC
    files: dict  # handout-relative path -> text


def _texts(root: Path, student_files, name: str):
    """(files, notes) of one submission folder."""
    located = locate(root, student_files)  # its notes speak of grading: ours say what is compared
    files = {}
    notes = [
        f"{name}: {rel} not found in the submission: its blocks are not compared"
        for rel in student_files
        if rel not in located.files
    ]
    for rel, path in located.files.items():
        try:
            files[rel] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            notes.append(
                f"{name}: {path.relative_to(root.resolve())}: not UTF-8 text (byte {exc.start}); "
                "left out: save it as UTF-8"
            )
    return files, notes


def read_one(path: Path, name: str, kind: str, student_files):
    """(Submission or None, notes)."""
    try:
        with tempfile.TemporaryDirectory(prefix="similarity-") as scratch:
            if path.is_dir():
                files, notes = _texts(path, student_files, name)
            else:
                files, notes = _texts(extract_zip(path, Path(scratch)), student_files, name)
    except SubmissionError as exc:
        return None, [f"{name}: {exc}; left out"]
    except OSError as exc:
        return None, [f"{name}: {path}: cannot be read ({exc.strerror}); left out"]
    return (Submission(name, kind, files) if files else None), notes


def read_folder(folder: Path, kind: str, student_files, exclude=()):
    """(submissions, notes) of every submission in `folder`, sorted by entry name."""
    submissions, notes = [], []
    for name, path in find_submissions(Path(folder), exclude=exclude):
        found, said = read_one(path, name, kind, student_files)
        notes.extend(said)
        if found is not None:
            submissions.append(found)
    return submissions, notes
