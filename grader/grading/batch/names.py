"""Which entries of a batch folder are submissions, and the result folder
name of each.

Names come from students (a zip's file name), so they must never collide,
on a case-insensitive filesystem either (`alice.zip` and `alice.ZIP`, a folder
`alice` and `alice.zip`), nor take a name the batch writes itself
(`gradebook.csv`, the hidden temporary files of atomic writes). A name
depends only on its own entry and the entries it collides with, so the same
folder always gives the same names (a batch resumes into the same folders).
"""

import hashlib
import os
from collections import Counter
from pathlib import Path

# The files a batch (and grader regrade) write in OUTDIR, next to the result
# folders: defined here only, so no submission can be named like one.
GRADEBOOK = "gradebook.csv"  # batch_book.py
RECORD = "batch.json"  # batch_record.py: what `grader regrade` grades again
REGRADE_CSV = "regrade.csv"  # regrade.py
AUDIT_LOG = "audit.log"  # regrade.py
STAGED = ".regrade-staged"  # regrade.py: the last dry run's results, which --apply puts in place (hidden:
# never a submission's name)
RESERVED = {GRADEBOOK, RECORD, REGRADE_CSV, AUDIT_LOG}


ARCHIVE_DEBRIS = "__MACOSX"  # what macOS's Archive Utility adds beside a zip's files (.DS_Store is hidden)


def is_candidate(path: Path) -> bool:
    """A subfolder or a .zip (any case) not hidden and not archive debris: one submission."""
    return (
        not path.name.startswith(".")
        and path.name != ARCHIVE_DEBRIS
        and (path.is_dir() or path.suffix.lower() == ".zip")
    )


def preferred_name(path: Path) -> str:
    """`alice.zip` -> `alice`; a folder keeps its name."""
    return path.name if path.is_dir() else path.name[: -len(path.suffix)]


MAX_BYTES = 200  # a file name may have 255 bytes; room for the hash and temp-file prefixes


def _clean(name: str) -> str:
    """Control characters and undecodable bytes (surrogates) as "_": such a
    name cannot go into a UTF-8 gradebook or a one-line progress report."""
    return "".join("_" if ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF else c for c in name)


def _safe(name: str) -> bool:
    return (
        bool(name)
        and not name.startswith(".")
        and name.casefold() not in RESERVED
        and _clean(name) == name
        and len(name.encode("utf-8")) <= MAX_BYTES
    )


def _tagged(name: str, source: str) -> str:
    """A printable, short prefix of the name plus a hash of the full entry
    name: unique per entry."""
    digest = hashlib.sha256(os.fsencode(source)).hexdigest()[:8]
    prefix = _clean(name).lstrip(".")[:60] or "submission"
    return f"{prefix}-{digest}"


def output_names(entries: list) -> list:
    """One result folder name per entry (Paths), in order, pairwise distinct
    even when compared case-insensitively, none of them reserved.

    Unique preferred names are kept (`alice.zip` -> `alice`); colliding ones
    take their full entry name (`alice.zip`, `alice.ZIP`); names still
    colliding or reserved get a hash of the entry name appended."""
    preferred = [preferred_name(p) for p in entries]
    counts = Counter(n.casefold() for n in preferred)
    names = [n if counts[n.casefold()] == 1 and _safe(n) else p.name for n, p in zip(preferred, entries)]
    counts = Counter(n.casefold() for n in names)
    names = [n if counts[n.casefold()] == 1 and _safe(n) else _tagged(n, p.name) for n, p in zip(names, entries)]
    taken = Counter(n.casefold() for n in names)
    if any(c > 1 for c in taken.values()):  # only if a hash collided: never seen, still refused
        raise ValueError("two submissions map to the same result folder name; rename one")
    return names


def find_submissions(folder: Path, exclude=()) -> list:
    """(result name, path) of each immediate subfolder or .zip of `folder`,
    sorted by entry name; `exclude` (e.g. the output folder) is left out."""
    exclude = {Path(p).resolve() for p in exclude}
    entries = [p for p in sorted(Path(folder).iterdir()) if is_candidate(p) and p.resolve() not in exclude]
    return list(zip(output_names(entries), entries))
