"""Connections nobody can abuse without a key: keys checked before a body is
read, a bounded sign-in form, header and body read timeouts, and a cap on
the connections one client address may hold."""

import http.client
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user  # noqa: E402

pytestmark = pytest.mark.server
HEADER_TIMEOUT, BODY_TIMEOUT = 1.5, 3.0


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(
        tmp_path_factory.mktemp("connections") / "grader.db",
        "--header-timeout",
        str(HEADER_TIMEOUT),
        "--body-timeout",
        str(BODY_TIMEOUT),
    )
    server.key = add_user(server.db_url, "alice")
    server.start()
    yield server
    server.stop()


def raw(srv, data: bytes, timeout=10.0) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    s.sendall(data)
    return s


def closed_within(s: socket.socket, seconds: float) -> float:
    """Seconds until the server closed `s` (reading and dropping any answer); fails after `seconds`."""
    t0 = time.monotonic()
    s.settimeout(seconds)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except socket.timeout:
        pytest.fail(f"the server still held the connection after {seconds} s")
    finally:
        s.close()
    return time.monotonic() - t0


def test_unknown_key_is_refused_before_the_body_is_read(srv):
    head = (
        b"POST /submit_test?user_key=mg_bogus&submission_id=1&test_case_index=0 HTTP/1.1\r\n"
        b"Host: x\r\nContent-Length: 4000000\r\n\r\n"
    )
    s = raw(srv, head + b"1" * 1000)  # far less than announced: the server must not wait for the rest
    s.settimeout(10)  # a server waiting for the body would drop the connection after BODY_TIMEOUT
    answer = b""
    try:
        while not answer.endswith(b"instructor gave you\n"):
            chunk = s.recv(4096)  # head and body may come in separate packets
            if not chunk:
                break
            answer += chunk
    finally:
        s.close()
    assert answer.startswith(b"HTTP/1.1 401 ")
    assert b"unknown key: check the key your instructor gave you" in answer


def test_sign_in_form_is_bounded(srv):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    form = b"a&" * 50_000  # 100 KB of fields: parsing it would block every other request
    conn.request("POST", "/login", body=iter([form]), headers={"Transfer-Encoding": "chunked"}, encode_chunked=True)
    r = conn.getresponse()
    assert (r.status, r.read()) == (413, b"request body too large: the limit is 4096 bytes\n")
    conn.close()


@pytest.mark.parametrize("data", [b"", b"POST /submit HTTP/1.1\r\nHost: x\r\nX-Slow: "])
def test_headers_that_never_finish_are_dropped(srv, data):
    assert closed_within(raw(srv, data), 5 * HEADER_TIMEOUT) >= HEADER_TIMEOUT * 0.8


def test_body_that_never_finishes_is_dropped(srv):
    head = (
        f"POST /submit_test?user_key={srv.key}&submission_id=1&test_case_index=0 HTTP/1.1\r\n"
        f"Host: x\r\nContent-Length: 100\r\n\r\n"
    ).encode()
    assert closed_within(raw(srv, head + b"[1,"), 5 * BODY_TIMEOUT) >= BODY_TIMEOUT * 0.8
    assert "Traceback" not in srv.log.read_text()  # a dropped client is not an error


def healthz_from(srv, address: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5, source_address=(address, 0))
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status
    finally:
        conn.close()


def test_one_address_cannot_hold_every_connection(tmp_path):
    srv = Server(tmp_path / "grader.db", "--max-conns-per-client", "8").start()  # header timeout stays 10 s
    held = []
    try:
        held = [socket.create_connection(("127.0.0.1", srv.port), timeout=10) for _ in range(8)]
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        closed_within(extra, 5.0)  # at once, not after the 10 s header timeout
        assert healthz_from(srv, "127.0.0.2") == 200  # another client is served meanwhile
    finally:
        for s in held:
            s.close()
        deadline, status = time.monotonic() + 10, None
        while time.monotonic() < deadline and status != 200:  # the slots free up as the server notices
            try:
                status = healthz_from(srv, "127.0.0.1")
            except (ConnectionError, http.client.RemoteDisconnected):
                time.sleep(0.1)
        srv.stop()
    assert status == 200
