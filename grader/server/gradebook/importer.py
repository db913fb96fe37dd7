"""`grader import-batch OUTDIR --db URL`: put `grade-batch` results into the
server's database, so that one gradebook shows them beside the server's
submissions.

Each OUTDIR/<name>/results.json (Gradescope schema, as grader/grading/report/results.py
writes it) becomes one imported result of student <name>. The files come
from our own grader but are read as untrusted input: every field is checked,
and one bad file stops the import before anything is written (one
transaction). A batch is its assignment plus what OUTDIR/batch.json records
(batch_identity.py), never the OUTDIR's name, and an import reads and
replaces only that batch's results. Importing the same files again changes
nothing; a regraded file replaces the earlier import of that student from
that batch, and the replaced scores stay in `batch_history` (the gradebook
marks the cells a regrade changed). `--dry-run` prints what the import would
change (import_plan.py), per student, and writes nothing; the import prints
the same.

Each folder is matched to a student account (matching.py: a mapping file,
name, e-mail, key, or a name that differs only in case and separators) and
imported under the account's name. A folder matching no account stops the
import, listing them all, unless `--create-missing` makes their accounts.
"""

import datetime as dt
import hashlib
import json
import math
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy.engine import Connection

from grader.grading.report.provenance import GRADED, GRADER_ERROR, REFUSED
from grader.grading.report.writing import RESULTS
from grader.server.accounts import identity, users

from . import batch_identity, import_plan, matching
from .import_plan import SLACK

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_TESTS = 5000
MAX_TEXT = 20_000
QUESTION_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,99}$")
STATUSES = ("passed", "failed")
GRADING_STATUSES = (GRADED, REFUSED, GRADER_ERROR)  # extra_data.provenance.status
MAX_REASON = 500
VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")


class BadResult(ValueError):
    """A results.json that cannot be imported; the message names file and field."""


@dataclass(frozen=True)
class ImportedCase:
    question: str
    name: str
    number: str
    score: float
    max_score: float
    passed: bool
    hidden: bool
    output: str


@dataclass(frozen=True)
class Imported:
    name: str  # the folder: the student
    digest: str
    graded_at: dt.datetime
    score: float
    output: str
    questions: tuple  # (key, score, max_score)
    cases: tuple  # ImportedCase
    status: str = GRADED  # or REFUSED / GRADER_ERROR: not graded, the gradebook says "needs attention"
    reason: str = ""  # why it was not graded (one line of the grader's output)


def _number(value, where: str, upper=None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise BadResult(f"{where}: must be a finite number >= 0, got {str(value)[:40]!r}")
    if upper is not None and value > upper + SLACK:
        raise BadResult(f"{where}: {value:g} is more than its maximum {upper:g}")
    return float(value)


def _text(value, where: str, limit: int = MAX_TEXT, required=False) -> str:
    if not isinstance(value, str) or len(value) > limit or (required and not value.strip()):
        got = type(value).__name__ if not isinstance(value, str) else f"{len(value)} characters"
        raise BadResult(
            f"{where}: must be {'a non-empty' if required else 'a'} string of at most {limit} characters, got {got}"
        )
    return value


def _questions(doc) -> tuple:
    extra = doc.get("extra_data")
    questions = extra.get("questions") if isinstance(extra, dict) else None
    if not isinstance(questions, dict) or not questions:
        raise BadResult(
            "extra_data.questions: missing; expected {question: {score, max_score}} as grader grade-batch writes it"
        )
    out = []
    for key, entry in sorted(questions.items()):
        where = f"extra_data.questions.{str(key)[:40]}"
        if not QUESTION_KEY.match(key):
            raise BadResult(f"{where}: a question key must be a name like 'forward'")
        if not isinstance(entry, dict):
            raise BadResult(f"{where}: must be an object with score and max_score")
        top = _number(entry.get("max_score"), f"{where}.max_score")
        if top == 0:
            raise BadResult(f"{where}.max_score: must be more than 0")
        out.append((key, _number(entry.get("score"), f"{where}.score", top), top))
    return tuple(out)


def _question_of(name: str, keys) -> str:
    """Case names start with their question's key (the longest that fits)."""
    fits = [k for k in keys if name == k or name.startswith(k + "_")]
    if not fits:
        raise BadResult(f"name {name[:60]!r}: starts with no question of extra_data.questions")
    return max(fits, key=len)


def _case(test, i: int, keys) -> ImportedCase:
    where = f"tests[{i}]"
    if not isinstance(test, dict):
        raise BadResult(f"{where}: must be an object")
    name = _text(test.get("name"), f"{where}.name", 200, required=True)
    top = _number(test.get("max_score"), f"{where}.max_score")
    score = _number(test.get("score"), f"{where}.score", top)
    status = test.get("status")
    if status not in STATUSES:
        raise BadResult(f"{where}.status: must be one of {', '.join(STATUSES)}, got {str(status)[:40]!r}")
    visibility = test.get("visibility", "visible")
    if visibility not in VISIBILITY:
        raise BadResult(f"{where}.visibility: must be one of {', '.join(VISIBILITY)}")
    try:
        question = _question_of(name, keys)
    except BadResult as e:
        raise BadResult(f"{where}.{e}") from None
    return ImportedCase(
        question,
        name,
        _text(test.get("number", ""), f"{where}.number", 50),
        score,
        top,
        status == "passed",
        visibility != "visible",
        _text(test.get("output", ""), f"{where}.output"),
    )


def grading_status(doc: dict, output: str) -> tuple:
    """(status, reason): whether the grader graded the submission, as its provenance records, and
    if not, the line of its output that says why (a refusal's first note, a grader error's last line)."""
    extra = doc.get("extra_data")
    found = extra.get("provenance") if isinstance(extra, dict) else None
    status = found.get("status", GRADED) if isinstance(found, dict) else GRADED
    if status not in GRADING_STATUSES:
        raise BadResult(
            f"extra_data.provenance.status: must be one of {', '.join(GRADING_STATUSES)}, got {str(status)[:40]!r}"
        )
    if status == GRADED:
        return status, ""
    lines = [line.strip() for line in output.splitlines()[1:] if line.strip() and not line.startswith("Scoring:")]
    reason = (lines[0] if status == REFUSED else lines[-1]) if lines else f"{status}; see the grader's output"
    return status, reason[:MAX_REASON]


def parse_result(raw: bytes) -> tuple:
    """(score, output, questions, cases, status, reason) of one results.json, or BadResult naming the field."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadResult(f"not valid JSON ({e.__class__.__name__}); regrade it with grade-batch --force") from None
    if not isinstance(doc, dict):
        raise BadResult("must hold a JSON object (Gradescope's results.json)")
    questions = _questions(doc)
    keys = [q[0] for q in questions]
    score = _number(doc.get("score"), "score", sum(q[2] for q in questions))
    if abs(score - sum(q[1] for q in questions)) > SLACK * max(1, len(questions)):
        raise BadResult(f"score: {score:g} is not the sum of extra_data.questions scores")
    tests = doc.get("tests", [])
    if not isinstance(tests, list) or len(tests) > MAX_TESTS:
        raise BadResult(f"tests: must be a list of at most {MAX_TESTS} objects")
    cases = tuple(_case(t, i, keys) for i, t in enumerate(tests))
    output = _text(doc.get("output", ""), "output")
    return (score, output, questions, cases, *grading_status(doc, output))


def read_outdir(outdir: Path) -> list:
    """Every OUTDIR/<name>/results.json, validated; BadResult names the first bad one."""
    if not outdir.is_dir():
        raise BadResult(f"{outdir}: not a folder; pass the --out folder of grader grade-batch")
    folders = sorted(p for p in outdir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise BadResult(f"{outdir}: no result folders in it; run grader grade-batch DIR --out {outdir} first")
    return [_read_one(folder) for folder in folders]


def _read_one(folder: Path) -> Imported:
    path = folder / RESULTS
    name = folder.name
    if len(name) > 200 or name != name.strip():
        raise BadResult(f"{folder}: a folder name must be 1-200 characters without leading/trailing spaces")
    try:
        if path.is_symlink() or not path.is_file():
            raise BadResult(f"{path}: missing (or not a regular file); grade it with grader grade-batch")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise BadResult(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MB; not a results.json of ours")
        raw, mtime = path.read_bytes(), path.stat().st_mtime
        score, output, questions, cases, status, reason = parse_result(raw)
    except OSError as e:
        raise BadResult(f"{path}: cannot read it ({e.strerror})") from None
    except BadResult as e:
        raise BadResult(str(e) if str(e).startswith(str(path)) else f"{path}: {e}") from None
    when = dt.datetime.fromtimestamp(mtime, dt.timezone.utc).replace(tzinfo=None)
    return Imported(name, hashlib.sha256(raw).hexdigest(), when, score, output, questions, cases, status, reason)


def import_batch_command(args) -> int:
    """`grader import-batch`: a grade-batch --out folder into the server's gradebook."""
    from sqlalchemy.exc import ArgumentError, OperationalError

    command = "import-batch"
    from grader.server.store.db import make_engine, now
    from grader.server.store.migrate import UpgradeFailed

    outdir = Path(args.outdir)
    label = args.source or outdir.resolve().name
    for flag, value in (("--assignment", args.assignment), ("--source", label)):
        if not value.strip() or len(value) > 200:
            print(f"grader {command}: {flag} {value[:40]!r}: give 1-200 characters", file=sys.stderr)
            return 2
    missing = _missing_sqlite_file(args.db)
    if missing:
        print(
            f"grader {command}: no database at {missing}; create it with `grader users add NAME "
            f"--role instructor --db {args.db}` (or check --db)",
            file=sys.stderr,
        )
        return 2
    try:
        results = read_outdir(outdir)
        who = batch_identity.identify(outdir, args.assignment, label)
        mapping = matching.read_mapping(Path(args.map)) if args.map else {}
        engine = make_engine(args.db)
        with engine.connect() if args.dry_run else engine.begin() as conn:  # a dry run never commits
            results, unmatched = _match(conn, results, mapping, args)
            if unmatched and not args.create_missing:
                print(
                    f"grader {command}: {len(unmatched)} result folder(s) match no student account: "
                    f"{', '.join(unmatched)}; map each to its student in a CSV of `folder,user` lines "
                    "(--map FILE), or pass --create-missing to make accounts named after them; "
                    "nothing was imported",
                    file=sys.stderr,
                )
                return 1
            if unmatched and not args.dry_run:
                print(
                    _new_accounts(
                        unmatched, users.insert_users(conn, [(identity.nfc(f), "student") for f in unmatched])
                    )
                )
            planned = import_plan.plan(conn, who, results)
            print(import_plan.render(who, planned))
            if not args.dry_run:
                import_plan.store(conn, who, planned, now())
        engine.dispose()
    except (BadResult, batch_identity.BatchUnknown, matching.MappingError, users.AccountError, UpgradeFailed) as e:
        print(f"grader {command}: {e}", file=sys.stderr)
        return 1
    except ArgumentError:
        print(
            f"grader {command}: --db {args.db!r} is not a database URL; use e.g. sqlite:///grader.db", file=sys.stderr
        )
        return 2
    except OperationalError as e:
        print(f"grader {command}: cannot use database {args.db!r}: {e.orig}", file=sys.stderr)
        return 1
    n = import_plan.counts(planned)
    if args.dry_run:
        print(
            f"dry run: nothing imported; run the same command without --dry-run to import {len(results)} "
            f"results from {outdir} as '{label}'"
        )
        return 0
    print(
        f"imported {len(results)} results from {outdir} as '{label}': {n['new']} new, "
        f"{n['replaced']} replaced, {n['unchanged']} unchanged"
    )
    return 0


def _match(conn: Connection, results: list, mapping: dict, args) -> tuple:
    """(results named for their matched students, unmatched folders); prints the matching."""
    accounts = [matching.Account(*a) for a in users.accounts(conn)]
    found, unmatched = matching.match_folders(
        [r.name for r in results], accounts, mapping, users.hash_key, Path(args.map or "mapping")
    )
    text = matching.render_matches(found, unmatched, args.create_missing)
    if text:
        print(text)
    student = {m.folder: m.user for m in found}  # a folder matching nobody names its new account, in NFC
    return [replace(r, name=student.get(r.name, identity.nfc(r.name))) for r in results], unmatched


def _new_accounts(names, keys) -> str:
    """The keys of accounts import-batch created: shown once, as `users add` shows them."""
    lines = [f"created {len(names)} student account(s); their keys (shown only once):"]
    return "\n".join(lines + [f"  {n},{k}" for n, k in zip(names, keys)])


def _missing_sqlite_file(url: str):
    """The path of a SQLite URL whose file does not exist (never create an empty database here)."""
    if not url.startswith("sqlite:///"):
        return None
    path = url[len("sqlite:///") :].split("?")[0]
    return path if path and path != ":memory:" and not Path(path).exists() else None
