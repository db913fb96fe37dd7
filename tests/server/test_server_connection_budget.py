"""A connection budget below the process's descriptor limit: a flood of idle
connections from many addresses, each within its own cap, evicts only its own
oldest connections, and /healthz and signed-in users keep working through it."""

import resource
import socket
import sys
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user  # noqa: E402

from grader.server.web.connections import connection_budget  # noqa: E402

pytestmark = pytest.mark.server
OPEN_FILES = 700  # the server's descriptor limit in this test
FLOOD, ADDRESSES = 900, 9  # idle connections, from this many loopback addresses (100 each: within the cap)


@pytest.mark.parametrize(
    "open_files, configured, reserve, budget",
    [
        (20000, 0, 512, 19488),
        (1024, 0, 512, 512),
        (1024, 100, 512, 100),
        (1024, 5000, 512, 512),
        (700, 0, 512, 350),
        (1, 0, 512, 1),
        (resource.RLIM_INFINITY, 0, 512, 1 << 30),
        (resource.RLIM_INFINITY, 64, 512, 64),
    ],
)
def test_the_budget_stays_below_the_descriptor_limit(open_files, configured, reserve, budget):
    assert connection_budget(open_files, configured, reserve) == budget


def is_closed(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:  # reset
        return True


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "grader.db", "--header-timeout", "120")
    server.wrapper = ["prlimit", f"--nofile={OPEN_FILES}:{OPEN_FILES}"]
    server.keys = {"prof": add_user(server.db_url, "prof", "instructor"), "alice": add_user(server.db_url, "alice")}
    server.start()
    yield server
    server.stop()


def test_healthz_and_signed_in_users_work_through_a_flood_of_idle_connections(srv):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < FLOOD + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, FLOOD + 500), hard))
    assert srv.post("publish", srv.keys["prof"], [1.0], assignment="hw1", problem="p").status_code == 200
    browser = requests.Session()
    assert browser.post(srv.url + "login", data={"key": srv.keys["alice"]}, timeout=10).status_code == 200
    flood = []
    try:
        for i in range(FLOOD):  # idle: nothing sent (a partial head would meet the per-address head cap)
            flood.append(
                socket.create_connection(
                    ("127.0.0.1", srv.port), timeout=10, source_address=(f"127.0.1.{i % ADDRESSES + 1}", 0)
                )
            )
        time.sleep(0.5)
        for _ in range(5):
            t0 = time.monotonic()
            assert requests.get(srv.url + "healthz", timeout=5).status_code == 200
            assert time.monotonic() - t0 < 2.0
        me = browser.get(srv.url + "me", timeout=10)
        assert me.status_code == 200 and me.url.endswith("/me")
        assert srv.post("submit", srv.keys["alice"], assignment="hw1", problem="p").status_code == 200
        closed = [is_closed(s) for s in flood]
        budget = connection_budget(OPEN_FILES, 0, 512)
        assert sum(closed) >= FLOOD - budget  # the flood made room from its own oldest connections
        assert not any(closed[-budget // 2 :])  # and never from its newest: oldest first
    finally:
        for s in flood:
            s.close()
    log = srv.log.read_text()
    assert "Too many open files" not in log and "out of system resource" not in log
