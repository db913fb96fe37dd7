"""The student client `grader/shipped/mugrade.py` on its own: encoding, HTTP behaviour, standalone imports."""

import ast
import datetime
import http.server
import json
import ssl
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from grader.shipped import mugrade

SOURCE = Path(mugrade.__file__)
ALLOWED_IMPORTS = {"argparse", "datetime", "json", "os", "random", "sys", "time", "numpy", "pytest", "requests"}


def test_module_imports_only_stdlib_numpy_requests_pytest():
    tree = ast.parse(SOURCE.read_text())
    names = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    names |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert names <= ALLOWED_IMPORTS, names - ALLOWED_IMPORTS


class FakeTensor:
    def numpy(self):
        return np.array([1.0, 2.0], dtype=np.float32)


@pytest.mark.parametrize(
    "value, wire",
    [
        (np.arange(4).reshape(2, 2), {"_encoded_type": "np.ndarray", "data": [[0, 1], [2, 3]]}),
        (np.float32(0.5), 0.5),
        (np.int64(7), 7),
        (np.bool_(True), True),
        ((1, [2.5, None]), [1, [2.5, None]]),
        ({"a": np.zeros(1)}, {"a": {"_encoded_type": "np.ndarray", "data": [0.0]}}),
        (datetime.datetime(2026, 1, 2, 3, 4, 5), {"_encoded_type": "datetime", "data": "2026-01-02T03:04:05"}),
        (np.dtype("float32"), {"_encoded_type": "type", "data": "dtype('float32')"}),
        (FakeTensor(), {"_encoded_type": "np.ndarray", "data": [1.0, 2.0]}),
    ],
)
def test_encode(value, wire):
    encoded = mugrade.encode(value)
    assert encoded == wire
    assert type(json.loads(json.dumps(encoded))) is type(wire)


@pytest.mark.parametrize("value", [object(), np.array(["a"]), {1, 2}])
def test_encode_refuses_what_the_server_cannot_grade(value):
    with pytest.raises(TypeError, match="mugrade.submit: cannot send"):
        mugrade.encode(value)


def test_submit_outside_a_run_says_how_to_run():
    with pytest.raises(RuntimeError, match="python -m mugrade submit"):
        mugrade.submit(1.0)


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers POSTs from a script of (status, headers, body); records what it saw."""

    script, seen = [], []

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        type(self).seen.append((self.path, self.headers.get("Authorization"), self.rfile.read(length)))
        status, headers, body = type(self).script.pop(0)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    Scripted.script, Scripted.seen = [], []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setattr(mugrade, "BACKOFF", 0.01)
    monkeypatch.setattr(mugrade, "ATTEMPTS", 3)


def url(server, scheme="http"):
    return f"{scheme}://127.0.0.1:{server.server_address[1]}"


def test_retries_5xx_then_returns_the_answer_with_key_in_header(scripted, fast_retries):
    Scripted.script = [(503, {}, b"busy"), (502, {}, b"gateway"), (200, {}, b'{"correct": true}')]
    answer = mugrade.Client(url(scripted), "mg_secret").post("submit_test", {"submission_id": 1}, [1.0])
    assert answer == {"correct": True}
    assert len(Scripted.seen) == 3
    path, auth, body = Scripted.seen[-1]
    assert auth == "Bearer mg_secret" and "mg_secret" not in path and json.loads(body) == [1.0]


def test_429_waits_for_retry_after(scripted, fast_retries):
    Scripted.script = [(429, {"Retry-After": "0"}, b"slow down"), (200, {}, b'{"submission_id": 5}')]
    assert mugrade.Client(url(scripted), "k").post("submit", {}) == {"submission_id": 5}


def test_4xx_is_refused_at_once_with_the_servers_line(scripted, fast_retries):
    Scripted.script = [(404, {}, b"problem 'x' has no published answers\n")]
    with pytest.raises(mugrade.RefusedByServer) as info:
        mugrade.Client(url(scripted), "k").post("submit", {})
    assert (info.value.status, info.value.text) == (404, "problem 'x' has no published answers")
    assert len(Scripted.seen) == 1


def test_persistent_5xx_and_no_server_are_unreachable(scripted, fast_retries):
    Scripted.script = [(500, {}, b"boom")] * 3
    with pytest.raises(mugrade.Unreachable, match="server answered 500: boom"):
        mugrade.Client(url(scripted), "k").post("submit", {})
    with pytest.raises(mugrade.Unreachable, match="no answer from http://127.0.0.1:9/"):
        mugrade.Client("http://127.0.0.1:9", "k").post("submit", {})


def test_a_web_page_instead_of_a_grading_server_is_reported(scripted, fast_retries):
    Scripted.script = [(200, {"Content-Type": "text/html"}, b"<html>hello</html>")]
    with pytest.raises(mugrade.Unreachable, match="not a grading server's JSON; check the URL"):
        mugrade.Client(url(scripted), "k").post("submit", {})


def test_tls_certificates_are_verified(tmp_path, scripted, fast_retries):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    scripted.socket = context.wrap_socket(scripted.socket, server_side=True)
    Scripted.script = [(200, {}, b"{}")] * 3
    with pytest.raises(mugrade.Unreachable, match="TLS certificate check failed"):
        mugrade.Client(url(scripted, "https"), "k").post("submit", {})
    assert Scripted.seen == []  # nothing, not even the key, went over the unverified connection


@pytest.mark.parametrize(
    "sent, shown",
    [
        ("2026-02-01T23:59:00+00:00", "2026-02-01 23:59 UTC"),
        ("2026-02-02T00:59:00+01:00", "2026-02-01 23:59 UTC"),  # any zone, shown in UTC
        ("2026-02-01T23:59:00", "2026-02-01 23:59 UTC"),  # no zone: the server's times are UTC
        ("soon" * 20, "soon" * 10),  # not a time: shown as sent, cut short
        (None, "None"),
    ],
)
def test_the_late_line_shows_the_servers_deadline_in_utc(sent, shown):
    assert mugrade._utc(sent) == shown
