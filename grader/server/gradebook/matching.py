"""Which student account each `grade-batch` result folder belongs to (`import-batch`).

A folder is named for its student by whoever collected the submissions
(a roster name, a GitHub login, an e-mail), rarely exactly as the server's
account. Each folder is matched, first rule that applies:

1. the instructor's mapping file (CSV `folder,user`; user: an account's name or e-mail);
2. the account's name, ignoring case and Unicode form (accounts/identity.py);
3. the account's e-mail, likewise;
4. the account's key (a folder named by the student's key; only its hash is compared);
5. the account's name ignoring case, spaces, '_', '-' and '.' ("alice_ref" is "Alice Ref"),
   when exactly one account fits.

A folder (or mapping cell) holding an invisible or look-alike character is
refused, naming it; a folder that two accounts fit by one rule is refused,
naming both; a folder never goes to an instructor's or TA's account (naming
one is refused: results are students'). Folders that match nothing are
listed, never silently made into new students.
Everything here is a pure function of the folder names, the accounts and the
mapping, so it is tested without a database.
"""

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from grader.server.accounts import identity

BY_MAPPING, BY_NAME, BY_EMAIL, BY_KEY, BY_SIMILAR_NAME = "mapping file", "name", "e-mail", "key", "similar name"
MAX_MAPPING_BYTES = 5 * 1024 * 1024
HEADERS = (("folder", "user"), ("name", "user"))
_IGNORED = re.compile(r"[\s_.\-]+")


class MappingError(ValueError):
    """A mapping file or a match that cannot be used; the message names file, line and fix."""


@dataclass(frozen=True)
class Account:
    name: str
    email: Optional[str]
    key_hash: str
    role: str = "student"


@dataclass(frozen=True)
class Match:
    folder: str
    user: str  # the account's name
    how: str  # one of the BY_* rules


def normal(text: str) -> str:
    """A name as compared by rule 5: case and separators ignored."""
    return _IGNORED.sub("", text).casefold()


def read_mapping(path: Path) -> dict:
    """folder -> user (name or e-mail) from a CSV of `folder,user` lines (an optional
    header line `folder,user`); MappingError names the file and line."""
    try:
        if path.stat().st_size > MAX_MAPPING_BYTES:
            raise MappingError(
                f"{path}: larger than {MAX_MAPPING_BYTES // 2**20} MB; "
                "a mapping file has one short `folder,user` line per student"
            )
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise MappingError(f"{path}: cannot read the mapping file ({e.strerror}); check --map") from None
    except UnicodeDecodeError:
        raise MappingError(f"{path}: not UTF-8 text; save the mapping file as UTF-8 CSV") from None
    mapping, first_line = {}, {}
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise MappingError(f"{path}: not a CSV file ({e}); write one `folder,user` line per student") from None
    for line, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if line == 1 and tuple(c.casefold() for c in cells) in HEADERS:
            continue
        where = f"{path}:{line}"
        if len(cells) != 2 or not all(cells):
            raise MappingError(
                f"{where}: expected 2 columns `folder,user`, got {len(cells)} "
                f"({','.join(cells)[:60]!r}); write e.g. alice_ref,Alice Ref"
            )
        folder, user = cells
        if folder in first_line:
            raise MappingError(
                f"{where}: folder {folder!r} is mapped twice (first on line "
                f"{first_line[folder]}); keep one line per folder"
            )
        first_line[folder] = line
        mapping[folder] = (user, line)
    return mapping


def match_folders(folders, accounts, mapping: dict, key_hash, path: Path = Path("mapping")) -> tuple:
    """(matches, unmatched folders). `mapping`: read_mapping's result; `key_hash`: the
    server's hash of a key; `accounts`: every account, of any role. MappingError when a
    folder or the mapping names no account, two accounts, or a staff account, or when
    two folders match one student."""
    rules = _Rules(accounts)
    matches, unmatched = [], []
    for folder in folders:
        found = _one(folder, rules, mapping, key_hash, path)
        if found is None:
            unmatched.append(folder)
        else:
            matches.append(Match(folder, *found))
    _no_student_twice(matches)
    return tuple(matches), tuple(unmatched)


class _Rules:
    """The accounts indexed by each rule's key (a list: two accounts may share one)."""

    def __init__(self, accounts):
        self.by_name, self.by_email, self.by_key, self.similar = {}, {}, {}, {}
        for a in accounts:
            self.by_name.setdefault(identity.key(a.name), []).append(a)
            if a.email:
                self.by_email.setdefault(identity.key(a.email), []).append(a)
            self.by_key.setdefault(a.key_hash, []).append(a)
            if a.role == "student":
                self.similar.setdefault(normal(identity.nfc(a.name)), []).append(a)


def _only(folder: str, fits: list, how: str, where: str = ""):
    """The one account of `fits` a folder matched by `how`, refusing ambiguity and staff."""
    if not fits:
        return None
    if len(fits) > 1:
        both = " and ".join(f"{a.name!r}" + (f" ({a.email})" if a.email else "") for a in fits[:2])
        raise MappingError(
            f"{where}folder {folder!r} fits {len(fits)} accounts by {how}: {both}; map it to "
            "one of them by name in a mapping file (--map)"
        )
    account = fits[0]
    if account.role != "student":
        shown = folder if how != BY_KEY else folder[:5] + "..."
        raise MappingError(
            f"{where}folder {shown!r} matches {account.role} account {account.name!r} by {how}; "
            "results go to students only: map the folder to its student (--map) or rename it"
        )
    return account.name, how


def _one(folder, rules: _Rules, mapping, key_hash, path):
    if folder in mapping:
        user, line = mapping[folder]
        where = f"{path}:{line}: "
        problem = identity.refused(user)
        if problem:
            raise MappingError(f"{where}user {user!r} {problem}; retype it without that character")
        fits = rules.by_name.get(identity.key(user)) or rules.by_email.get(identity.key(user))
        if not fits:
            raise MappingError(
                f"{where}user {user!r} is no account's name or e-mail; "
                "use the name `grader users` created (or add the account first)"
            )
        return _only(folder, fits, BY_MAPPING, where)
    problem = identity.refused(folder)
    if problem:
        raise MappingError(
            f"folder {folder!r} {problem}; rename the folder, or map it to its student in a mapping file (--map)"
        )
    for fits, how in (
        (rules.by_name.get(identity.key(folder)), BY_NAME),
        (rules.by_email.get(identity.key(folder)), BY_EMAIL),
        (rules.by_key.get(key_hash(folder)), BY_KEY),
    ):
        found = _only(folder, fits or [], how)
        if found:
            return found
    fits = rules.similar.get(normal(identity.nfc(folder)), [])
    if len(fits) == 1:
        return fits[0].name, BY_SIMILAR_NAME
    return None


def _no_student_twice(matches):
    seen = {}
    for m in matches:
        if m.user in seen:
            raise MappingError(
                f"folders {seen[m.user]!r} and {m.folder!r} both match student {m.user!r}; "
                "map one of them to another user in a mapping file (--map), or remove it"
            )
        seen[m.user] = m.folder


def render_matches(matches, unmatched, create: bool) -> str:
    """What import-batch prints about matching (pure): the matches that were not by exact
    name, for the instructor to check, and the folders matching nobody."""
    lines = []
    inexact = [m for m in matches if m.how != BY_NAME or m.folder != m.user]
    if inexact:
        lines.append(f"{len(inexact)} folder(s) matched a student by other than exact name:")
        # a folder named by a key: the key is not printed
        lines += [
            f"  {m.folder if m.how != BY_KEY else m.folder[:5] + '...'} -> {m.user} (by {m.how})" for m in inexact
        ]
    if unmatched:
        what = "new student account(s) to create" if create else "folder(s) matching no student"
        lines.append(f"{len(unmatched)} {what}: {', '.join(unmatched)}")
    return "\n".join(lines)
