"""`grader serve`, `grader users add|import`, `grader gradebook`."""
import csv
import io
import os
import sys
import tempfile
from pathlib import Path

from .config import DEFAULT_DB, ServerConfig


def add_arguments(parser, command):
    parser.add_argument("--db", default=DEFAULT_DB, help=f"SQLAlchemy database URL (default {DEFAULT_DB})")
    if command == "serve":
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--rate", type=float, default=ServerConfig.rate_per_second,
                            help="requests per second allowed per key, 0 for no limit")
        parser.add_argument("--burst", type=int, default=ServerConfig.rate_burst,
                            help="requests a key may send at once before --rate applies")
        parser.add_argument("--max-body", type=int, default=ServerConfig.max_body_bytes,
                            help="largest request body in bytes (default 8 MB)")
        parser.add_argument("--max-array", type=int, default=ServerConfig.max_array_elements,
                            help="most array elements in one submitted value")
        parser.add_argument("--access-log", action="store_true", help="log every request")
        parser.add_argument("--ssl-keyfile", help="serve HTTPS with this key (and --ssl-certfile)")
        parser.add_argument("--ssl-certfile")
    elif command == "users":
        parser.add_argument("action", choices=["add", "import"])
        parser.add_argument("target", help="the user name (add) or a roster CSV with columns name[,role] (import)")
        parser.add_argument("--role", choices=["student", "instructor"], default="student")
        parser.add_argument("--out", help="import: write name,role,key CSV here (mode 600) instead of stdout")
    elif command == "gradebook":
        parser.add_argument("--out", required=True, help="CSV file to write (replaced atomically)")


def run(args, command) -> int:
    from sqlalchemy.exc import ArgumentError, OperationalError
    try:
        return {"serve": _serve, "users": _users, "gradebook": _gradebook}[command](args)
    except ArgumentError as e:
        print(f"grader {command}: --db {args.db!r} is not a database URL ({e}); "
              "use e.g. sqlite:///grader.db", file=sys.stderr)
        return 2
    except OperationalError as e:
        print(f"grader {command}: cannot use database {args.db!r}: {e.orig}", file=sys.stderr)
        return 1


def _serve(args) -> int:
    import logging
    import uvicorn
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    from .app import create_app
    for bad, message in ((not 0 < args.port < 65536, f"--port {args.port}: use 1-65535"),
                         (args.rate < 0, f"--rate {args.rate:g}: use a number >= 0 (0 turns the limit off)"),
                         (args.burst < 1, f"--burst {args.burst}: use at least 1"),
                         (args.max_body < 1024, f"--max-body {args.max_body}: use at least 1024 bytes"),
                         (args.max_array < 1, f"--max-array {args.max_array}: use at least 1")):
        if bad:
            print(f"grader serve: {message}", file=sys.stderr)
            return 2
    if bool(args.ssl_keyfile) != bool(args.ssl_certfile):
        print("grader serve: give both --ssl-keyfile and --ssl-certfile, or neither", file=sys.stderr)
        return 2
    config = ServerConfig(db_url=args.db, rate_per_second=args.rate, rate_burst=args.burst,
                          max_body_bytes=args.max_body, max_array_elements=args.max_array)
    uvicorn.run(create_app(config), host=args.host, port=args.port, access_log=args.access_log,
                ssl_keyfile=args.ssl_keyfile, ssl_certfile=args.ssl_certfile,
                timeout_graceful_shutdown=10, log_level="info")
    return 0


def _users(args) -> int:
    from . import accounts
    from .db import make_engine
    try:
        people = [(args.target, args.role)] if args.action == "add" else accounts.read_roster(Path(args.target))
        keys = accounts.add_users(make_engine(args.db), people)
    except accounts.AccountError as e:
        print(f"grader users: {e}", file=sys.stderr)
        return 1
    if args.action == "add":
        print(f"added {args.role} {args.target}; their key (shown only once):")
        print(keys[0])
        return 0
    out = io.StringIO()
    table = csv.writer(out, lineterminator="\n")
    table.writerow(["name", "role", "key"])
    table.writerows((n, r, k) for (n, r), k in zip(people, keys))
    if args.out:
        atomic_write(Path(args.out), out.getvalue(), mode=0o600)
        print(f"added {len(people)} users; keys in {args.out}")
    else:
        print(out.getvalue(), end="")
    return 0


def _gradebook(args) -> int:
    from . import gradebook
    from .db import make_engine
    with make_engine(args.db).connect() as conn:
        book = gradebook.build(conn)
    atomic_write(Path(args.out), gradebook.to_csv(book))
    print(f"wrote {args.out}: {len(book.rows)} students, {len(book.problems)} problems")
    return 0


def atomic_write(path: Path, text: str, mode: int = 0o644):
    """Write via a temporary file in the same folder, so readers never see half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
