"""The one way a server command turns a database problem into one line: a
bad --db URL (exit 2), a database it cannot open or upgrade (exit 1)."""

import sys


def with_db(function, args, command) -> int:
    """function(args), a bad or unusable --db reported as one line."""
    from sqlalchemy.exc import ArgumentError, OperationalError

    from .migrate import UpgradeFailed

    try:
        return function(args)
    except UpgradeFailed as e:
        print(f"grader {command}: {e}", file=sys.stderr)
        return 1
    except ArgumentError as e:
        print(
            f"grader {command}: --db {args.db!r} is not a database URL ({e}); use e.g. sqlite:///grader.db",
            file=sys.stderr,
        )
        return 2
    except OperationalError as e:
        print(f"grader {command}: cannot use database {args.db!r}: {e.orig}", file=sys.stderr)
        return 1
