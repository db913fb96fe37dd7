"""`grader serve`, `grader users add|import|list|reissue-key|revoke|remove`, `grader gradebook`,
`grader policy show|set|clear`."""

import os
import sys
import time
from pathlib import Path

from grader.core import csvsafe, settings
from grader.core.files import write_atomic

from .config import CONFIG_ENV, ServerConfig
from .store.command_errors import with_db as _with_db


def serve_command(args) -> int:
    return _with_db(_serve, args, "serve")


def users_command(args) -> int:
    return _with_db(_users, args, "users")


def gradebook_command(args) -> int:
    return _with_db(_gradebook, args, "gradebook")


def policy_command(args) -> int:
    return _with_db(_policy, args, "policy")


def _serve_problem(args):
    """What is wrong with `grader serve`'s options together, as one line, else None. Each option's
    own check is declared with it (grader/core/settings/server.py) and run by the command line."""
    problem = settings.first_problem(args, settings.SERVE_FLAGS)  # also for a caller that skipped the CLI
    if problem is None and bool(args.ssl_keyfile) != bool(args.ssl_certfile):
        problem = "give both --ssl-keyfile and --ssl-certfile, or neither"
    return problem


def _serve(args) -> int:
    import logging

    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    from .store.db import make_engine

    problem = _serve_problem(args)
    if problem:
        print(f"grader serve: {problem}", file=sys.stderr)
        return 2
    config = ServerConfig(**settings.field_values(args, settings.SERVER))  # each flag's unit converted
    busy = _port_problem(args.host, args.port)
    if busy:
        print(f"grader serve: {busy}", file=sys.stderr)
        return 1
    make_engine(config.db_url).dispose()  # migrate once, before any server process starts
    os.environ[CONFIG_ENV] = config.to_json()  # each process builds its app from this
    _raise_open_files_limit()
    uvicorn.run(
        "grader.server.web.app:app_from_environment",
        factory=True,
        workers=args.workers,
        http="grader.server.web.connections:GuardedHttp",
        host=args.host,
        port=args.port,
        access_log=args.access_log,
        ssl_keyfile=args.ssl_keyfile,
        ssl_certfile=args.ssl_certfile,
        # X-Forwarded-* only from the declared proxies (uvicorn believes 127.0.0.1 by default)
        proxy_headers=bool(config.trusted_proxies),
        forwarded_allow_ips=config.trusted_proxies or None,
        backlog=config.listen_backlog,
        timeout_graceful_shutdown=10,
        log_level="info",
    )
    return 0


def _port_problem(host: str, port: int):
    """Why the server could not listen on host:port, as one line (uvicorn's own
    error is a multi-line log), else None."""
    import socket

    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as e:
        return f"cannot listen on {host}:{port} ({e.strerror}); stop what uses it or pass --port N"
    return None


def _raise_open_files_limit():
    """Allow as many connections as the system lets this process have (the soft limit is often 1024)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _users(args) -> int:
    from .accounts import identity, lifecycle, roster, users
    from .store.db import make_engine

    if args.action != "list" and not args.target:
        print(
            f"grader users: {args.action} needs a {'roster CSV' if args.action == 'import' else 'user name'}",
            file=sys.stderr,
        )
        return 2
    if args.out and not Path(args.out).parent.is_dir():  # checked before any key is made: keys are shown once
        print(
            f"grader users: --out {args.out}: folder {Path(args.out).parent} does not exist; create it first",
            file=sys.stderr,
        )
        return 1
    engine = None
    try:
        people = roster.read(Path(args.target)) if args.action == "import" else None  # before any database
        engine = make_engine(args.db)
        if args.action == "list":
            with engine.connect() as conn:
                print(_listing(lifecycle.listing(conn)), end="")
            return 0
        if args.action == "import":
            return _import_roster(engine, args, roster, people)
        with engine.begin() as conn:
            if args.action == "add":
                keys = users.insert_users(conn, [(args.target, args.role, args.email, args.student_id)])
                done = f"added {args.role} {identity.nfc(args.target)}"
            elif args.action == "reissue-key":
                name, key = lifecycle.reissue_key(conn, args.target)
                keys, done = [key], f"new key for {name}; the old key and its sessions no longer work"
            else:
                name, keys = getattr(lifecycle, args.action)(conn, args.target), []
                done = (
                    f"revoked the key of {name}: it and its sessions no longer work (reissue-key gives a new one)"
                    if args.action == "revoke"
                    else f"removed {name}: signed out, history kept, the name stays taken"
                )
    except users.AccountError as e:
        for line in str(e).splitlines():
            print(f"grader users: {line}", file=sys.stderr)
        return 1
    finally:
        if engine is not None:
            engine.dispose()
    if args.action != "add":
        time.sleep(users.KEY_CACHE_SECONDS)  # until no server process trusts the old key
    print(done + ("; their key (shown only once):" if keys else ""))
    for key in keys:
        print(key)
    return 0


def _listing(accounts) -> str:
    """name,role,email,status,created CSV of every account (pure; never a key)."""
    return csvsafe.render(
        [
            ["name", "role", "email", "status", "created"],
            *([a.name, a.role, a.email or "", a.status, a.created_at.strftime("%Y-%m-%d %H:%M")] for a in accounts),
        ]
    )


def _import_roster(engine, args, roster, people) -> int:
    """users import: the roster's changes printed, then applied (unless --dry-run); new keys to
    --out, else to stdout (the changed and missing people then go to stderr)."""
    path = Path(args.target)
    with engine.connect() if args.dry_run else engine.begin() as conn:
        diff = roster.compare(conn, people, path)
        keys = [] if args.dry_run else roster.apply(conn, diff)
    text = roster.render(diff, path)
    if args.dry_run:
        print(text)
        print("dry run: nothing changed; run the same command without --dry-run to apply it")
        return 0
    rows = [["name", "role", "key"], *((p.name, p.role or "student", k) for p, k in zip(diff.new, keys))]
    if args.out:
        write_atomic(Path(args.out), csvsafe.render(rows), mode=0o600)
        print(text)
        print(f"added {len(keys)} users; keys in {args.out}")
    else:
        if diff.changed or diff.missing:  # what the table on stdout does not show
            print(text, file=sys.stderr)
        # A name like "=HYPERLINK(...)" is written "'=HYPERLINK(...)"; keys start with "mg_", never altered.
        print(csvsafe.render(rows), end="")
    return 0


def _missing_sqlite(url: str):
    """The file of a sqlite URL when it does not exist (never create an empty one to read)."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and url[len(prefix) :] not in ("", ":memory:"):
        path = Path(url[len(prefix) :].split("?")[0])
        if not path.exists():
            return path
    return None


def _gradebook(args) -> int:
    from .gradebook import scores
    from .store.db import make_engine

    missing = _missing_sqlite(args.db)
    if missing:
        print(
            f"grader gradebook: no database at {missing.resolve()}; run from the folder where `grader serve` "
            "ran, or pass --db URL",
            file=sys.stderr,
        )
        return 1
    folder = Path(args.out).parent
    if not folder.is_dir():
        print(f"grader gradebook: --out {args.out}: folder {folder} does not exist; create it first", file=sys.stderr)
        return 1
    from .accounts import identity, users
    from .gradebook import exports

    try:
        ids = exports.read_ids(Path(args.roster)) if args.roster else {}
        with make_engine(args.db).connect() as conn:
            book = scores.build(conn)
            emails = {name: email or "" for name, email, _, _ in users.accounts(conn)}
            ids = {**users.student_ids(conn), **{identity.nfc(n): sid for n, sid in ids.items()}}  # --roster wins
        people = {r.name: exports.Person(r.name, emails.get(r.name, ""), ids.get(r.name, "")) for r in book.rows}
        text = scores.to_csv(book) if args.format == "percent" else exports.WRITERS[args.format](book, people)
    except exports.ExportError as e:
        print(f"grader gradebook: {e}; nothing written", file=sys.stderr)
        return 1
    write_atomic(Path(args.out), text)
    print(f"wrote {args.out} ({args.format}): {len(book.rows)} students, {len(book.questions)} questions")
    return 0


def _policy(args) -> int:
    """Show the policy in force for an assignment, or set/clear the course's override of it."""
    from dataclasses import replace

    from .gradebook import policy
    from .store.db import make_engine

    rules = {"--counts": args.counts, "--pick": args.pick, "--question": args.question}
    given = [flag for flag, value in rules.items() if value is not None]
    if args.action != "set" and given:
        print(f"grader policy {args.action}: {given[0]} is for `grader policy set`; leave it out", file=sys.stderr)
        return 2
    if args.action == "set" and not (args.counts or args.pick):
        print("grader policy set: give --counts and/or --pick (see grader policy --help)", file=sys.stderr)
        return 2
    if args.question is not None and not args.question.isidentifier():
        print(
            f"grader policy set: --question {args.question[:40]!r}: give a question key such as forward",
            file=sys.stderr,
        )
        return 2
    missing = _missing_sqlite(args.db)
    if missing:
        print(f"grader policy: no database at {missing.resolve()}; pass the --db of `grader serve`", file=sys.stderr)
        return 1
    engine = make_engine(args.db)
    with engine.begin() as conn:
        now = policy.in_force(conn, [args.assignment])[args.assignment]
        if args.action == "clear":
            policy.set_policy(conn, args.assignment, None)
        elif args.action == "set":
            policy.set_policy(conn, args.assignment, _changed(now, args, replace))
        shown = policy.in_force(conn, [args.assignment])[args.assignment]
        origin = (
            "set on this server"
            if args.assignment in policy.overridden(conn)
            else "from its assignment.toml, else the default"
        )
    engine.dispose()
    print(f"grading policy of {args.assignment} ({origin}):\n{policy.describe(shown)}")
    return 0


def _changed(now, args, replace):
    """`now` with the rule --counts/--pick set, for every question or for --question only."""
    if args.question is None:
        return replace(now, counts=args.counts or now.counts, pick=args.pick or now.pick)
    counts, pick = now.of(args.question)
    kept = tuple(q for q in now.questions if q[0] != args.question)
    return replace(now, questions=tuple(sorted(kept + ((args.question, args.counts or counts, args.pick or pick),))))
