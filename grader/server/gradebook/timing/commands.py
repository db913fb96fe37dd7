"""`grader course`, `grader deadline`, `grader extension`, `grader changes`: the time policy
from the command line. Every command that sets a deadline or an extension echoes the
deadlines in force after it, in the course's zone and in UTC. Input is checked before
anything is written; a bad one is one line on stderr, exit 2, nothing changed."""

import getpass
import sys

from .rules import PENALTIES, TimeError

COURSE_ACTIONS = ("show", "set-zone", "clear-zone", "set-late-days", "clear-late-days", "set-penalty", "clear-penalty")


def declare(name: str, parser) -> None:
    """The options of one of these commands (grader/cli.py calls this)."""
    from grader.server.config import DEFAULT_DB

    parser.add_argument("--db", default=DEFAULT_DB, help="SQLAlchemy database URL")
    parser.add_argument("--by", default=_me(), help="who makes the change, for the log")
    if name == "course":
        parser.add_argument(
            "action",
            choices=COURSE_ACTIONS,
            help="show what is in force, or set/clear the "
            "course's zone, late-day budget or an assignment's late penalty on this server",
        )
        parser.add_argument(
            "value",
            nargs="?",
            help="set-zone: an IANA zone (Europe/Zurich); set-late-days: "
            "days per student over the course; set-penalty: " + " | ".join(PENALTIES),
        )
        parser.add_argument("--assignment", default="hw1", help="set-penalty, clear-penalty: which assignment")
        parser.add_argument("--percent", type=float, help="set-penalty per day: percent per started day late")
        parser.add_argument("--cutoff", help="set-penalty: late answers after this long (e.g. 2d, 36h) earn nothing")
    elif name == "deadline":
        parser.add_argument("target", help="ASSIGNMENT/QUESTION (one question) or ASSIGNMENT (every question)")
        parser.add_argument("when", help="ISO 8601 time (without a zone: the course's), or none to remove it")
    elif name == "extension":
        parser.add_argument("action", choices=("grant", "clear", "list"))
        parser.add_argument("student", nargs="?", help="grant, clear: the student's user name")
        parser.add_argument("--assignment", default="hw1", help="the assignment")
        parser.add_argument("--question", default="", help="one question's key (default: every question)")
        parser.add_argument("--until", help="grant: their own deadline, ISO 8601 (without a zone: the course's)")
        parser.add_argument("--extra", help="grant: time added to the deadline in force, e.g. 1d, 36h")
    elif name == "changes":
        parser.add_argument("--student", help="only what bears on this student")
        parser.add_argument("--limit", type=int, default=100, help="newest this many")


def _me() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def course_command(args) -> int:
    return _guarded(args, "course")


def deadline_command(args) -> int:
    return _guarded(args, "deadline")


def extension_command(args) -> int:
    return _guarded(args, "extension")


def changes_command(args) -> int:
    return _guarded(args, "changes")


def _guarded(args, command) -> int:
    """Run a command, every expected failure one line: a bad value (2), a bad --db (1 or 2)."""
    from pathlib import Path

    from grader.server.accounts.users import AccountError
    from grader.server.store.command_errors import with_db

    if args.db.startswith("sqlite:///") and args.db[10:] not in ("", ":memory:"):
        path = Path(args.db[10:].split("?")[0])
        if not path.exists():  # never create an empty database to change
            print(
                f"grader {command}: no database at {path.resolve()}; pass the --db of `grader serve`", file=sys.stderr
            )
            return 1

    def handled(args):
        try:
            return HANDLERS[command](args)
        except (TimeError, AccountError) as e:
            print(f"grader {command}: {e}", file=sys.stderr)
            return 2

    return with_db(handled, args, command)


def _engine(args):
    from grader.server.store.db import make_engine

    return make_engine(args.db)


def _course(args) -> int:
    from . import clock, rules

    if args.action in ("set-zone", "set-late-days", "set-penalty") and not args.value:
        raise TimeError(f"{args.action} needs a value (see grader course --help)")
    if args.action != "set-penalty" and (args.percent is not None or args.cutoff):
        raise TimeError("--percent and --cutoff are for `grader course set-penalty`; leave them out")
    engine = _engine(args)
    try:
        with engine.begin() as conn:
            if args.action == "set-zone":
                clock.set_zone(conn, args.value, args.by)
            elif args.action == "clear-zone":
                clock.set_zone(conn, None, args.by)
            elif args.action == "set-late-days":
                if not args.value.isdigit():
                    raise TimeError(f"set-late-days {args.value[:20]!r}: give a whole number of days, 0-365")
                clock.set_late_days(conn, int(args.value), args.by)
            elif args.action in ("set-penalty", "clear-penalty"):
                rule = None
                if args.action == "set-penalty":
                    raw = {
                        "penalty": args.value,
                        **({"percent_per_day": args.percent} if args.percent is not None else {}),
                        **({"cutoff": args.cutoff} if args.cutoff else {}),
                    }
                    rule = rules.parse_rule(raw, "set-penalty")
                clock.set_rule(conn, args.assignment, rule, args.by)
            text = _course_text(conn, clock, args.assignment)
    finally:
        engine.dispose()
    print(text)
    return 0


def _course_text(conn, clock, assignment) -> str:
    from . import rules

    try:
        clock.declared()
        problem = ""
    except TimeError as e:
        problem = f"\nassignment.toml's [policy.time] is left out: {e}"
    zone, days = clock.zone(conn), clock.late_days(conn)
    lines = [
        f"course zone: {zone or 'none declared (a deadline must name its zone)'}",
        f"late days per student: {days}",
        f"late penalty of {assignment}: {clock.rule(conn, assignment).describe()}",
    ]
    for label, due in sorted(clock.read(conn).deadlines.items()):
        lines.append(f"  {label} due {rules.shown(due, zone)}")
    return "\n".join(lines) + problem


def _deadline(args) -> int:
    from . import clock, extensions, rules

    assignment, _, question = args.target.partition("/")
    engine = _engine(args)
    try:
        with engine.begin() as conn:
            zone = clock.zone(conn)
            when = None if args.when.strip().lower() == "none" else rules.parse_when(args.when, zone, "deadline")
            moved = extensions.set_deadline(conn, assignment, question, when, args.by)
    finally:
        engine.dispose()
    print("\n".join(m.line(zone) for m in moved))
    return 0


def _extension(args) -> int:
    from . import clock, extensions, rules

    if args.action != "list" and not args.student:
        raise TimeError(f"extension {args.action} needs the student's user name")
    if args.action != "grant" and (args.until or args.extra):
        raise TimeError("--until and --extra are for `grader extension grant`; leave them out")
    engine = _engine(args)
    try:
        with engine.begin() as conn:
            zone = clock.zone(conn)
            if args.action == "list":
                rows = extensions.listing(conn)
                text = (
                    "\n".join(
                        f"{who}: {scope} {what} (granted {at:%Y-%m-%d %H:%M} UTC by {by})"
                        for who, scope, what, at, by in rows
                    )
                    or "no extensions"
                )
            else:
                if args.action == "grant":
                    until = rules.parse_when(args.until, zone, "--until") if args.until else None
                    extra = rules.parse_duration(args.extra, "--extra") if args.extra else None
                    moved = extensions.grant(conn, args.student, args.assignment, args.question, until, extra, args.by)
                else:
                    moved = extensions.clear(conn, args.student, args.assignment, args.question, args.by)
                text = "\n".join(m.line(zone) for m in moved)
    finally:
        engine.dispose()
    print(text)
    return 0


def _changes(args) -> int:
    from . import changes

    if args.limit < 1:
        raise TimeError(f"--limit {args.limit}: give at least 1")
    engine = _engine(args)
    try:
        with engine.connect() as conn:
            text = changes.render(changes.listing(conn, args.student, args.limit))
    finally:
        engine.dispose()
    print(text)
    return 0


HANDLERS = {"course": _course, "deadline": _deadline, "extension": _extension, "changes": _changes}
