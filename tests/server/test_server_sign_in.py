"""Signing in cannot flood the server: a rate limit per address (before the
form is read) and per key, at most a few live sessions per key (the oldest
ends), and expired sessions swept by index, not by a table scan."""

import datetime as dt
import http.client
import math
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from sqlalchemy import select, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, db_rows  # noqa: E402

from grader.server.accounts import users  # noqa: E402
from grader.server.config import ServerConfig  # noqa: E402
from grader.server.store.db import make_engine, sessions  # noqa: E402

pytestmark = pytest.mark.server
CONFIG = ServerConfig()


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("sign-in") / "grader.db")
    server.keys = {"alice": add_user(server.db_url, "alice"), "bob": add_user(server.db_url, "bob")}
    server.start()
    yield server
    server.stop()


def sign_in(srv, key: str, source="127.0.0.1"):
    """(status, Retry-After, session cookie) of one sign-in from `source`."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10, source_address=(source, 0))
    try:
        conn.request(
            "POST",
            "/login",
            body=urlencode({"key": key}),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        r = conn.getresponse()
        r.read()
        cookie = (r.getheader("set-cookie") or "").split(";")[0]
        return r.status, r.getheader("retry-after"), cookie
    finally:
        conn.close()


def test_sign_ins_per_key_are_limited(srv):
    answers = [sign_in(srv, srv.keys["alice"]) for _ in range(CONFIG.login_per_minute + 1)]
    assert [a[0] for a in answers] == [303] * CONFIG.login_per_minute + [429]
    assert int(answers[-1][1]) >= 1
    assert sign_in(srv, srv.keys["bob"])[0] == 303  # another key is not held up
    ((count,),) = db_rows(
        srv.db_url, "select count(*) from sessions join users on users.id = sessions.user_id where users.name = 'alice'"
    )
    assert count == CONFIG.login_per_minute <= CONFIG.max_sessions_per_key


def test_sign_ins_per_address_are_limited_before_the_key_is_looked_up(srv):
    # A bucket of `limit` that regains `limit` a minute: the sign-ins before the
    # first refusal are the limit, plus what it regained while they ran (two a
    # second: on a busy machine, 121 sign-ins can take a second).
    limit = CONFIG.login_per_minute_per_address
    statuses, start = [], time.monotonic()
    while 429 not in statuses and len(statuses) <= 2 * limit:
        statuses.append(sign_in(srv, "mg_guess", source="127.0.0.3")[0])
    regained = math.ceil((time.monotonic() - start) * limit / 60)
    assert statuses[-1] == 429 and set(statuses[:-1]) == {401}, statuses
    assert limit <= len(statuses) - 1 <= limit + regained, (len(statuses) - 1, limit, regained)
    assert sign_in(srv, srv.keys["bob"], source="127.0.0.3")[0] == 429  # a right key too, from there
    assert sign_in(srv, srv.keys["bob"], source="127.0.0.4")[0] == 303  # not from elsewhere


def test_a_key_keeps_its_newest_sessions_only(tmp_path):
    url = f"sqlite:///{tmp_path / 'grader.db'}"
    add_user(url, "carol")
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            uid = conn.execute(text("select id from users where name = 'carol'")).scalar()
            tokens = [users.open_session(conn, uid, 1.0 + i, keep=3) for i in range(5)]  # later ones expire later
        with engine.connect() as conn:
            assert [users.session_user(conn, t) is not None for t in tokens] == [False, False, True, True, True]
            assert len(conn.execute(select(sessions)).all()) == 3
    finally:
        engine.dispose()


def test_expired_sessions_are_found_by_index(tmp_path):
    url = f"sqlite:///{tmp_path / 'grader.db'}"
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            for statement in (
                sessions.delete().where(sessions.c.expires_at < dt.datetime(2026, 1, 1)),
                select(sessions.c.token_hash)
                .where(sessions.c.user_id == 1)
                .order_by(sessions.c.expires_at.desc())
                .limit(3),
            ):
                sql = str(statement.compile(engine, compile_kwargs={"literal_binds": True}))
                plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
                assert "INDEX ix_sessions_" in plan, plan  # not "SCAN sessions": the whole table
    finally:
        engine.dispose()
