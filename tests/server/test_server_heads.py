"""Request heads are bounded: too many bytes or header lines get a 431 before
any parsing, a huge header is cut off early, and one address cannot hold
many connections with a head still arriving."""

import http.client
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server  # noqa: E402

from grader.server.config import ServerConfig
from grader.server.web.connections import head_too_large

pytestmark = pytest.mark.server
LIMITS = ServerConfig()
REFUSAL = head_too_large(LIMITS.max_header_bytes, LIMITS.max_headers)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("heads") / "grader.db").start()
    yield server
    server.stop()


def answer(srv, head: bytes, source="127.0.0.1") -> bytes:
    """Everything the server sends back for `head`, until it closes or 10 s pass."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10, source_address=(source, 0))
    out = b""
    try:
        s.sendall(head)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
            if b"connection: close" not in out.lower() and out.endswith(b"ok\n"):
                break  # a keep-alive answer to /healthz
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out


def request(headers: list) -> bytes:
    return b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(headers) + b"\r\n"


def test_head_within_the_limits_is_served(srv):
    filler = [f"X-{i}: {'a' * 100}\r\n".encode() for i in range(LIMITS.max_headers - 1)]  # + Host
    assert answer(srv, request(filler)).startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize(
    "headers",
    [
        [b"X-Big: " + b"a" * LIMITS.max_header_bytes + b"\r\n"],
        [f"X-{i}: a\r\n".encode() for i in range(LIMITS.max_headers)],  # one over, with Host
    ],
    ids=["bytes", "count"],
)
def test_head_over_a_limit_gets_431(srv, headers):
    assert answer(srv, request(headers)) == REFUSAL


def test_huge_header_is_cut_off_early_and_others_are_served(srv):
    """The attack: a header of tens of MB sent as fast as possible. The server answers 431
    and closes after a few of its bytes, instead of parsing them all."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    sent, piece = 0, b"a" * 16384
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Huge: ")
        while sent < 40 * 2**20:
            sent += s.send(piece)
    except (ConnectionResetError, BrokenPipeError):
        pass
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    s.close()
    assert sent < 8 * 2**20, f"the server took {sent} bytes of one header"
    assert got in (REFUSAL, b"")  # a reset may lose the answer; the close is what matters
    assert answer(srv, request([])).startswith(b"HTTP/1.1 200 ")


def test_one_address_cannot_hold_many_unfinished_heads(srv):
    held = []
    try:
        for _ in range(LIMITS.max_heads_per_client):
            held.append(socket.create_connection(("127.0.0.1", srv.port), timeout=10))
            held[-1].sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        time.sleep(0.3)  # let the server read them all
        held.append(socket.create_connection(("127.0.0.1", srv.port), timeout=10))
        held[-1].sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        t0 = time.monotonic()
        assert held[-1].recv(100) == b""  # closed at once, not after the header timeout
        assert time.monotonic() - t0 < LIMITS.header_timeout / 2
        # A whole head in one packet is still served from that address, and others too.
        assert answer(srv, request([])).startswith(b"HTTP/1.1 200 ")
        assert answer(srv, request([]), source="127.0.0.2").startswith(b"HTTP/1.1 200 ")
    finally:
        for s in held:
            s.close()


def test_keep_alive_connection_serves_several_requests(srv):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        for _ in range(3):
            conn.request("GET", "/healthz", headers={"X-Pad": "b" * 1000})
            r = conn.getresponse()
            assert (r.status, r.read()) == (200, b"ok\n")
    finally:
        conn.close()
