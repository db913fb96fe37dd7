"""What an instructor decided about a pair, kept across runs:
`grader similarity ... --decisions FILE`.

FILE is a CSV with the columns of DECISIONS_HEADER (others are ignored, so
a row copied from similarity.csv, which has them all, is a valid row once
`decision` is filled in): `decision` is `confirmed` or `dismissed`, `note`
is free text, and `submission_code` / `other_code` are the sha256 of each
side's student files as compared (similarity.csv gives them). A decision
holds only for the code it was made on: when either side's code changes,
a dismissed pair is flagged again (shown as `stale`), never silently
dismissed. A blank code is pinned to this run's code and written back.

A missing FILE is created with the header (and the pins) after the run;
a FILE that cannot be read as decisions stops the command before anything
is written, naming the line, the field and the fix.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

from grader.core import csvsafe

DECISIONS_HEADER = ("submission", "other", "decision", "note", "submission_code", "other_code")
CONFIRMED, DISMISSED, STALE = "confirmed", "dismissed", "stale"
CHOICES = (CONFIRMED, DISMISSED)
HEX64 = re.compile(r"^[0-9a-f]{64}$")


class DecisionsError(ValueError):
    """A decisions file that cannot be used: `path:line: field: problem; fix`."""


@dataclass(frozen=True)
class Decision:
    submission: str
    other: str
    decision: str  # CONFIRMED or DISMISSED
    note: str
    codes: tuple  # (submission_code, other_code), "" when not pinned yet
    line: int

    def key(self) -> frozenset:
        return frozenset((self.submission, self.other))


def code_of(files: dict) -> str:
    """The sha256 of a submission's student files as compared (path and text, in path order)."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + files[rel].encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def _unquote(text: str) -> str:
    """A name as csvsafe wrote it: one `'` before a formula's first character removed."""
    return text[1:] if text[:1] == "'" and text[1:2] in csvsafe.DANGEROUS else text


def parse_decisions(text: str, path: str) -> tuple:
    """The Decisions of a file's text; DecisionsError on the first bad line."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in DECISIONS_HEADER[:3] if c not in (reader.fieldnames or ())]
    if missing:
        raise DecisionsError(
            f"{path}:1: no column {', '.join(missing)}; the header must name {','.join(DECISIONS_HEADER)}"
        )
    found, seen = [], {}
    for row in reader:
        line = reader.line_num
        get = {c: (row.get(c) or "").strip() for c in DECISIONS_HEADER}
        a, b = _unquote(get["submission"]), _unquote(get["other"])
        if not a or not b or a == b:
            raise DecisionsError(
                f"{path}:{line}: submission, other: two different names needed; copy the pair's row from similarity.csv"
            )
        if get["decision"] not in CHOICES:
            raise DecisionsError(
                f"{path}:{line}: decision: {get['decision']!r} is not one of {', '.join(CHOICES)}; write one of them"
            )
        for field in ("submission_code", "other_code"):
            if get[field] and not HEX64.match(get[field]):
                raise DecisionsError(
                    f"{path}:{line}: {field}: not a sha256; copy it from similarity.csv "
                    "or leave it blank to pin this run's code"
                )
        decision = Decision(
            a, b, get["decision"], _unquote(get["note"]), (get["submission_code"], get["other_code"]), line
        )
        if decision.key() in seen:
            raise DecisionsError(
                f"{path}:{line}: {a} and {b}: decided already on line {seen[decision.key()]}; keep one row per pair"
            )
        seen[decision.key()] = line
        found.append(decision)
    return tuple(found)


def read_decisions(path: Path) -> tuple:
    """The Decisions in FILE (none if it does not exist yet)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as exc:
        raise DecisionsError(f"{path}: cannot be read ({exc}); pass a UTF-8 CSV file") from None
    return parse_decisions(text, str(path))


def _codes_match(decision: Decision, pair, codes: dict) -> bool:
    mine = decision.codes if decision.submission == pair.a else decision.codes[::-1]
    return mine == (codes[pair.a], codes[pair.b])


def pinned(decisions, codes: dict) -> tuple:
    """Decisions with blank codes pinned to this run's (when both sides are here)."""
    out = []
    for d in decisions:
        if "" in d.codes and d.submission in codes and d.other in codes:
            d = dataclasses.replace(d, codes=tuple(c or codes[n] for c, n in zip(d.codes, (d.submission, d.other))))
        out.append(d)
    return tuple(out)


def apply(pairs, decisions, codes: dict):
    """(pairs with their decision, notes): a dismissed pair on unchanged code is
    no longer flagged; on changed code it is `stale` and flagged as scored."""
    by_key = {d.key(): d for d in decisions}
    out, used = [], set()
    for p in pairs:
        d = by_key.get(frozenset((p.a, p.b)))
        if d is None:
            out.append(p)
            continue
        used.add(d.key())
        if _codes_match(d, p, codes):
            out.append(
                dataclasses.replace(p, decision=d.decision, note=d.note, flagged=p.flagged and d.decision != DISMISSED)
            )
        else:
            out.append(dataclasses.replace(p, decision=STALE, note=f"{d.decision} on older code: {d.note}"))
    notes = [
        f"decision on line {d.line} ({d.submission} and {d.other}): no such pair in this run; kept"
        for d in decisions
        if d.key() not in used
    ]
    return tuple(out), notes


def decisions_csv(decisions) -> str:
    """The decisions file's text (pure)."""
    return csvsafe.render(
        [DECISIONS_HEADER, *((d.submission, d.other, d.decision, d.note, *d.codes) for d in decisions)]
    )
