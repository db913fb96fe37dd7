"""X-Forwarded-For is believed only from the proxies `--trusted-proxy` declares: a
client sending a new one with every wrong key is still counted at its own address."""

import http.client
import math
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env  # noqa: E402

from grader.server.config import ServerConfig  # noqa: E402

pytestmark = pytest.mark.server
LIMIT = ServerConfig().login_per_minute_per_address


def sign_in(srv, key: str, source: str, forwarded: str = None, **more) -> int:
    """POST /login from `source`; `more`: further headers."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10, source_address=(source, 0))
    headers = {"Content-Type": "application/x-www-form-urlencoded", **more}
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    try:
        conn.request("POST", "/login", body=urlencode({"key": key}), headers=headers)
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


def refused(srv, source, forwarded_for) -> int:
    """Of LIMIT + 20 wrong keys sent from `source`, how many were refused (429): about 20 when they
    are counted against one address (fewer as the bucket refills), 0 when not."""
    statuses = [sign_in(srv, "mg_guess", source, forwarded_for(i)) for i in range(LIMIT + 20)]
    assert set(statuses) <= {401, 429}
    return statuses.count(429)


def counted_at_one_address(srv, source, forwarded_for) -> bool:
    """LIMIT + 20 wrong keys from a fresh address were counted against one address: the 20
    beyond its limit were refused, but for what the bucket regained while they ran (LIMIT a
    minute: on a busy machine the flood takes seconds)."""
    start = time.monotonic()
    count = refused(srv, source, forwarded_for)
    regained = math.ceil((time.monotonic() - start) * LIMIT / 60)
    return count >= max(1, 20 - regained)


def test_without_a_trusted_proxy_a_forwarded_address_changes_nothing(tmp_path):
    srv = Server(tmp_path / "grader.db")
    key = add_user(srv.db_url, "alice")
    srv.start()
    try:  # from 127.0.0.1, which uvicorn believes by default
        assert counted_at_one_address(srv, "127.0.0.1", lambda i: f"10.0.{i // 250}.{i % 250 + 1}")
        assert sign_in(srv, key, "127.0.0.1", "10.9.9.9") == 429  # any header: still this address
        assert sign_in(srv, key, "127.0.0.6") == 303
    finally:
        srv.stop()


def test_a_declared_proxy_s_forwarded_address_is_the_client_s(tmp_path):
    srv = Server(tmp_path / "grader.db", "--trusted-proxy", "127.0.0.5", "--trusted-proxy", "127.0.7.0/24")
    key = add_user(srv.db_url, "alice")
    srv.start()
    try:
        assert counted_at_one_address(srv, "127.0.0.5", lambda i: "10.0.0.1")
        assert sign_in(srv, key, "127.0.0.5", "10.0.0.2") == 303  # another client behind the proxy
        # the network is trusted too: 10.0.0.1's spent budget refuses nearly all of another flood
        # (a fresh address would refuse at most 20 of it), however slowly a busy machine sends it
        assert refused(srv, "127.0.7.9", lambda i: "10.0.0.1") > LIMIT // 2
        assert sign_in(srv, key, "127.0.0.1", "10.0.0.3") == 303  # not a proxy: its header is ignored...
        assert counted_at_one_address(srv, "127.0.0.8", lambda i: f"10.1.0.{i % 250 + 1}")  # ...so it is counted
        assert refused(srv, "127.0.0.5", lambda i: f"10.2.0.{i % 250 + 1}") == 0  # the proxy's clients, each
    finally:
        srv.stop()


def sign_in_as_public_host(srv, key: str, source: str) -> int:
    """A browser's sign-in through a proxy that serves the site as grader.example.edu."""
    host = {"Origin": "https://grader.example.edu", "X-Forwarded-Host": "grader.example.edu"}
    return sign_in(srv, key, source, **host)


def test_only_a_declared_proxy_names_the_public_host(tmp_path):
    """The same-origin check of /login believes X-Forwarded-Host from the declared proxy only."""
    srv = Server(tmp_path / "grader.db", "--trusted-proxy", "127.0.0.5")
    key = add_user(srv.db_url, "alice")
    srv.start()
    try:
        assert sign_in_as_public_host(srv, key, "127.0.0.5") == 303
        assert sign_in_as_public_host(srv, key, "127.0.0.6") == 403  # anyone else: a cross-site Origin
    finally:
        srv.stop()


def test_a_bad_trusted_proxy_is_one_line_and_exit_2(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "serve",
            "--db",
            f"sqlite:///{tmp_path / 'g.db'}",
            "--trusted-proxy",
            "proxy.example.org",
        ],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr == (
        "grader serve: --trusted-proxy 'proxy.example.org': not an IP address or network; give "
        "the reverse proxy's address, e.g. 127.0.0.1 or 10.0.0.0/8\n"
    )
    assert not (tmp_path / "g.db").exists()
