"""What one answer may cost the server: its bytes, bounded by the published
answer's size and refused from Content-Length before anything is read; its
elements, counted from the declared shape before numpy builds an array; and
its storage, charged in UTF-8 bytes, not characters."""

import json
import socket
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, db_rows, enc  # noqa: E402

from grader.server.answers import values  # noqa: E402
from grader.server.config import ServerConfig  # noqa: E402
from grader.server.store.protocol import ROW_BYTES  # noqa: E402

pytestmark = pytest.mark.server
QUOTA_MB = 0.02
LIMIT = ServerConfig().min_answer_bytes  # the published answers here are tiny, so the floor applies
TOO_LARGE = (
    f"answer to case 0 too large: the limit is {LIMIT} bytes ({ServerConfig().answer_bytes_factor:g} "
    f"times the published answer's, at least {LIMIT}); check the value's shape\n"
)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("answers") / "grader.db", "--quota-mb", str(QUOTA_MB))
    server.keys = {
        "prof": add_user(server.db_url, "prof", "instructor"),
        "alice": add_user(server.db_url, "alice"),
        "emoji": add_user(server.db_url, "emoji"),
    }
    server.start()
    for problem, answer in (("arr", enc(np.ones(3))), ("text", "x")):
        assert (
            server.post("publish", server.keys["prof"], [answer] * 5, assignment="hw1", problem=problem).status_code
            == 200
        )
    yield server
    server.stop()


def start(srv, who="alice", problem="arr") -> int:
    return srv.post("submit", srv.keys[who], assignment="hw1", problem=problem).json()["submission_id"]


def test_an_answer_over_its_limit_is_refused_from_content_length_unread(srv):
    head = (
        f"POST /submit_test?submission_id={start(srv)}&test_case_index=0 HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {srv.keys['alice']}\r\nContent-Length: 8000000\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(head + b"[" + b"1," * 1000)  # the rest never comes: the server must not wait for it
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    assert got.startswith(b"HTTP/1.1 413 ") and got.endswith(TOO_LARGE.encode())


def test_an_answer_streamed_past_its_limit_is_refused(srv):
    import requests

    body = iter([b"[" + b"1," * (LIMIT // 2), b"1]"])  # chunked: no Content-Length to go by
    r = requests.post(
        f"{srv.url}submit_test",
        params={"submission_id": start(srv), "test_case_index": 0},
        headers={"Authorization": f"Bearer {srv.keys['alice']}"},
        data=body,
        timeout=30,
    )
    assert (r.status_code, r.text) == (413, TOO_LARGE)


def test_an_answer_at_its_limit_is_graded(srv):
    value = json.dumps(enc(np.zeros(LIMIT // 6)))  # "0.0, " per element: just under the limit
    assert len(value) <= LIMIT
    # The instructor: no storage quota to fill.
    r = srv.post("submit_test", srv.keys["prof"], value, submission_id=start(srv, "prof"), test_case_index=0)
    assert r.json() == {"correct": False, "reason": f"value: expected shape (3,), got ({LIMIT // 6},)"}


def test_the_element_budget_is_checked_before_numpy_builds_the_array():
    # Ragged, so numpy would refuse it as such: the budget's own message shows it was read first.
    ragged = {"_encoded_type": "np.ndarray", "data": [[0] * 2000, [0]]}
    with pytest.raises(values.BadValue, match=r"more than 1000 elements in total \(one of shape \(2, 2000\)\)"):
        values.decode(ragged, 32, 1000)
    with pytest.raises(values.BadValue, match="ragged"):
        values.decode(ragged, 32, 10_000)


def test_the_quota_counts_utf8_bytes_not_characters(srv):
    text = "\U0001f600" * 2000  # 2,000 characters, 8,000 bytes in UTF-8
    body = json.dumps(text, ensure_ascii=False).encode("utf-8")
    sid = start(srv, "emoji", "text")
    codes = [
        srv.post("submit_test", srv.keys["emoji"], body, submission_id=sid, test_case_index=i).status_code
        for i in range(5)
    ]
    quota = int(QUOTA_MB * 2**20)
    fit = (quota - ROW_BYTES) // (ROW_BYTES + len(body))  # counted in characters, all 5 would fit
    assert codes == [200] * fit + [403] * (5 - fit)
    ((used,),) = db_rows(
        srv.db_url, "select stored_bytes from usage join users on users.id = usage.user_id where users.name = 'emoji'"
    )
    assert used == ROW_BYTES + fit * (ROW_BYTES + len(body)) <= quota


def test_a_key_sending_answer_bytes_too_fast_waits_and_others_do_not(tmp_path):
    """Answers within every size limit and the quota, sent as fast as one key
    can: past its burst of answer bytes it gets 429 with Retry-After (the
    client waits it out), while another key's answer goes through at once."""
    config = ServerConfig()
    server = Server(tmp_path / "grader.db", "--quota-mb", "1000")
    keys = {
        "prof": add_user(server.db_url, "prof", "instructor"),
        "fast": add_user(server.db_url, "fast"),
        "other": add_user(server.db_url, "other"),
    }
    server.start()
    try:
        assert server.post("publish", keys["prof"], ["x"] * 5, assignment="hw1", problem="text").status_code == 200
        answer = json.dumps("y" * (config.min_answer_bytes - 16))
        statuses, sent = [], 0
        while sent <= 2 * config.answer_bytes_burst and 429 not in statuses:
            sid = server.post("submit", keys["fast"], assignment="hw1", problem="text").json()["submission_id"]
            for index in range(5):
                r = server.post("submit_test", keys["fast"], answer, submission_id=sid, test_case_index=index)
                statuses.append(r.status_code)
                sent += len(answer)
        assert statuses[0] == 200 and statuses[-1] == 429, statuses
        assert sent >= config.answer_bytes_burst * 0.9  # not before its burst was spent
        assert int(r.headers["Retry-After"]) >= 1 and "answer bytes" in r.text
        sid = server.post("submit", keys["other"], assignment="hw1", problem="text").json()["submission_id"]
        assert (
            server.post("submit_test", keys["other"], answer, submission_id=sid, test_case_index=0).status_code == 200
        )
    finally:
        server.stop()
