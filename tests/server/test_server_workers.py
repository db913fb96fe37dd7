"""Several server processes over one database: `grader serve --workers N`,
with the rate limit and the storage quota holding across processes."""

import asyncio
import os
import socket
import sys
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, enc  # noqa: E402

pytestmark = pytest.mark.server


@pytest.mark.parametrize("kind", DATABASES)
def test_rate_buckets_are_shared_by_limiters_of_different_processes(kind, tmp_path):
    """Two limiters on one database stand for two processes: together they grant the burst, no more."""
    from grader.server.store.db import make_engine
    from grader.server.web.limits import SharedRateLimiter

    engine = make_engine(database_url(kind, tmp_path))
    uid = 7
    try:
        a, b = (SharedRateLimiter(engine, rate=0.001, burst=40) for _ in range(2))
        assert a.lease == 5  # a few tokens per database write

        async def spend():
            return [await limiter.retry_after(uid) for _ in range(40) for limiter in (a, b)]

        waits = asyncio.run(spend())
    finally:
        engine.dispose()
    refused = [w for w in waits if w]
    assert waits.count(0) == 40 and len(refused) == 40
    assert all(990 <= w <= 1000 for w in refused)  # about 1 / rate seconds: the time to refill one token


def children(pid: int) -> list:
    """Command lines of the processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_two_processes_on_postgresql_share_limits_and_quota(tmp_path):
    url = database_url("postgresql", tmp_path)
    srv = Server(
        tmp_path / "grader.db",
        "--workers",
        "2",
        "--rate",
        "0.001",
        "--burst",
        "12",
        "--quota-mb",
        "0.02",
        "--header-timeout",
        "1",
        db_url=url,
    )
    prof, alice, bob = add_user(url, "prof", "instructor"), add_user(url, "alice"), add_user(url, "bob")
    srv.start()
    try:
        assert len([c for c in children(srv.proc.pid) if "spawn_main" in c]) == 2
        assert srv.post("publish", prof, [1.0] * 50, assignment="hw1", problem="p").status_code == 200
        # A new connection per request, so both processes take requests.
        codes = [srv.post("submit", alice, assignment="hw1", problem="p").status_code for _ in range(24)]
        assert codes.count(200) == 12 and codes[12:] == [429] * 12, codes
        sid = srv.post("submit", bob, assignment="hw1", problem="p").json()["submission_id"]
        value = enc(list(range(1000)))  # 4.9 KB a case: with the submission, the 20 KB quota holds 4
        answers = [
            srv.post("submit_test", bob, value, submission_id=sid, test_case_index=i).status_code for i in range(10)
        ]
        assert answers == [200] * 4 + [403] * 6, answers
        assert requests.get(srv.url + "healthz", timeout=5).text == "ok\n"
        # Each process guards its connections: headers that never finish are dropped.
        for _ in range(4):
            with socket.create_connection(("127.0.0.1", srv.port), timeout=8) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                t0 = time.monotonic()
                assert s.recv(100) == b"" and time.monotonic() - t0 < 7
    finally:
        srv.stop()


def test_a_bucket_written_later_by_another_process_does_not_lose_tokens(tmp_path):
    """A process that read the clock before another wrote the bucket must not count time backwards."""
    from grader.server.store.db import make_engine
    from grader.server.web.limits import SharedRateLimiter

    engine = make_engine(database_url("sqlite", tmp_path))
    try:
        limiter = SharedRateLimiter(engine, rate=1000.0, burst=1000)
        assert limiter._take_from_db(1, 100.0) == (32, 0)
        assert limiter._take_from_db(1, 102.0) == (32, 0)  # another process, 2 s later
        # 1 s "in the past": a refill of -1000 tokens would refuse; it gets its lease.
        assert limiter._take_from_db(1, 101.0) == (32, 0)
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", DATABASES)
def test_quota_charges_of_a_group_are_all_or_nothing_per_key(kind, tmp_path):
    from grader.server.accounts import users as accounts
    from grader.server.store import protocol as store
    from grader.server.store.db import make_engine

    engine = make_engine(database_url(kind, tmp_path))
    try:
        accounts.add_users(engine, [("ann", "student"), ("ben", "student")])
        with engine.begin() as conn:
            assert store.charge_many(conn, {1: (100, 150), 2: (200, 150)}) == {1}  # ben's 200 cannot fit
        with engine.begin() as conn:
            assert store.charge_many(conn, {1: (60, 150), 2: (150, 150)}) == {2}
            assert (store.stored_bytes(conn, 1), store.stored_bytes(conn, 2)) == (100, 150)
    finally:
        engine.dispose()
