"""Malformed and oversized requests get a 4xx with a clear line, never a 500; rate limit."""

import http.client
import json
import math
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, enc  # noqa: E402

pytestmark = pytest.mark.server
MAX_BODY = 4096


@pytest.fixture(scope="module", params=DATABASES)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    server = Server(
        folder / "grader.db",
        "--max-body",
        str(MAX_BODY),
        "--max-array",
        "1000",
        "--rate",
        "2",
        "--burst",
        "1000",
        db_url=database_url(request.param, folder),
    )
    server.keys = {
        "prof": add_user(server.db_url, "prof", "instructor"),
        "alice": add_user(server.db_url, "alice"),
        "rusty": add_user(server.db_url, "rusty"),
    }
    server.start()
    assert (
        server.post(
            "publish", server.keys["prof"], [enc(__import__("numpy").ones(3))], assignment="hw1", problem="forward"
        ).status_code
        == 200
    )
    server.sid = server.post("submit", server.keys["alice"], assignment="hw1", problem="forward").json()[
        "submission_id"
    ]
    yield server
    server.stop()


@pytest.mark.parametrize(
    "body, text",
    [
        (b"", "submitted value: empty body: send the encoded value as JSON"),
        (
            b"{oops",
            "submitted value: body is not valid JSON (JSONDecodeError: Expecting property name enclosed "
            "in double quotes: line 1 column 2 (char 1))",
        ),
        (b"\xff\xfe\x00", "submitted value: body is not valid JSON"),
        (b"[" * 40 + b"]" * 40, "submitted value: body nests deeper than 32 levels"),
        (b"[" * 3000, "submitted value: body nests deeper than 32 levels"),
        (
            json.dumps({"_encoded_type": "np.ndarray", "data": [[1, 2], [3]]}).encode(),
            "submitted value: np.ndarray 'data' is ragged or not numeric: send a rectangular nested list",
        ),
        (
            json.dumps({"_encoded_type": "np.ndarray", "data": ["a", "b"]}).encode(),
            "submitted value: np.ndarray 'data' holds <U1 values; only numbers and booleans are allowed",
        ),
        (
            json.dumps({"_encoded_type": "np.ndarray", "data": {"x": 1}}).encode(),
            "submitted value: np.ndarray 'data' must be a nested list of numbers",
        ),
        (
            json.dumps({"_encoded_type": "pickle", "data": "gASV"}).encode(),
            "submitted value: unknown _encoded_type 'pickle': use np.ndarray, datetime or type",
        ),
        (
            json.dumps({"_encoded_type": "datetime", "data": 5}).encode(),
            "submitted value: _encoded_type 'datetime' needs a string 'data' field",
        ),
    ],
)
def test_malformed_values_get_400_with_reason(srv, body, text):
    r = srv.post("submit_test", srv.keys["alice"], body, submission_id=srv.sid, test_case_index=0)
    assert r.status_code == 400
    assert r.text.startswith(text)


def test_array_size_limit(srv):
    at_limit = {"_encoded_type": "np.ndarray", "data": [0] * 1000}
    over = [at_limit, {"_encoded_type": "np.ndarray", "data": [0]}]  # counted over the whole value
    sid = srv.post("submit", srv.keys["alice"], assignment="hw1", problem="forward").json()["submission_id"]
    r = srv.post("submit_test", srv.keys["alice"], at_limit, submission_id=sid, test_case_index=0)
    assert r.json() == {"correct": False, "reason": "value: expected shape (3,), got (1000,)"}  # readable
    sid = srv.post("submit", srv.keys["alice"], assignment="hw1", problem="forward").json()["submission_id"]
    r = srv.post("submit_test", srv.keys["alice"], over, submission_id=sid, test_case_index=0)
    assert (r.status_code, r.text) == (
        400,
        "submitted value: arrays in the body have more than 1000 elements "
        "in total (one of shape (1,)); submit smaller values\n",
    )


@pytest.mark.parametrize(
    "params, text",
    [
        (
            {"submission_id": "abc", "test_case_index": "0"},
            "query parameter 'submission_id' must be a non-negative integer, got 'abc'",
        ),
        (
            {"submission_id": "1", "test_case_index": "-1"},
            "query parameter 'test_case_index' must be a non-negative integer, got '-1'",
        ),
        ({"test_case_index": "0"}, "missing query parameter 'submission_id'"),
        (
            {"submission_id": "9" * 40, "test_case_index": "0"},
            "query parameter 'submission_id' must be a non-negative integer, got '" + "9" * 40 + "'",
        ),
    ],
)
def test_bad_query_parameters_get_400(srv, params, text):
    r = srv.post("submit_test", srv.keys["alice"], b"1", **params)
    assert (r.status_code, r.text) == (400, text + "\n")


@pytest.mark.parametrize(
    "params, body, text",
    [
        ({"problem": "p"}, b"[1]", "missing query parameter 'assignment'"),
        ({"assignment": "a", "problem": "p"}, b"{}", "published values: the body must be a non-empty JSON list"),
        ({"assignment": "a", "problem": "p"}, b"[]", "published values: the body must be a non-empty JSON list"),
        (
            {"assignment": "a", "problem": "p", "rtol": "-1"},
            b"[1]",
            "query parameter 'rtol' must be a non-negative number, got '-1'",
        ),
        (
            {"assignment": "a", "problem": "p", "weight": "0"},
            b"[1]",
            "query parameter 'weight' must be a positive number, got '0'",
        ),
        (
            {"assignment": "a", "problem": "p", "deadline": "friday"},
            b"[1]",
            "query parameter 'deadline' must be ISO 8601",
        ),
    ],
)
def test_bad_publish_requests_get_400(srv, params, body, text):
    r = srv.post("publish", srv.keys["prof"], body, **params)
    assert r.status_code == 400 and r.text.startswith(text)


def test_oversized_body_with_content_length_is_413(srv):
    r = srv.post("submit_test", srv.keys["alice"], b"1" * (MAX_BODY + 1), submission_id=srv.sid, test_case_index=0)
    assert (r.status_code, r.text) == (413, f"request body too large: the limit is {MAX_BODY} bytes\n")


def test_oversized_chunked_body_without_length_is_413(srv):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.putrequest("POST", f"/submit_test?user_key={srv.keys['alice']}&submission_id={srv.sid}&test_case_index=0")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    chunk = b"1" * 1024
    try:
        for _ in range(MAX_BODY // 1024 + 2):
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may answer and close before the client has sent everything
    response = conn.getresponse()
    assert response.status == 413
    conn.close()


def test_unknown_route_and_wrong_method_are_plain_4xx(srv):
    import requests

    assert requests.get(srv.url + "nope", timeout=5).status_code == 404
    r = requests.get(srv.url + "submit", timeout=5)
    assert r.status_code == 405 and r.headers["content-type"].startswith("text/plain")


def test_rate_limit_answers_429_with_retry_after(srv, tmp_path):
    limited = Server(tmp_path / "rate.db", "--rate", "1", "--burst", "3")
    key = add_user(limited.db_url, "rusty")
    limited.start()
    try:
        # A burst of 3, one more a second: the requests let in before the first
        # refusal are 3, plus what the bucket regained while they ran.
        codes, start = [], time.monotonic()
        while len(codes) < 20 and (not codes or codes[-1].status_code != 429):
            codes.append(limited.post("submit", key, assignment="a", problem="p"))
        regained = math.ceil(time.monotonic() - start)
    finally:
        limited.stop()
    *allowed, refused = codes
    assert {r.status_code for r in allowed} == {404} and 3 <= len(allowed) <= 3 + regained  # (unpublished)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert refused.text == "too many requests for this key: retry in 1 s\n"


def test_garbage_never_gets_a_500(srv):
    """A small seeded fuzz over every endpoint: bodies and parameters of random junk."""
    import random

    rng = random.Random(5)
    pieces = [
        b"[",
        b"]",
        b"{",
        b"}",
        b'"_encoded_type"',
        b":",
        b",",
        b'"np.ndarray"',
        b'"data"',
        b"1e999",
        b"NaN",
        b"-0",
        b"null",
        b"\xff",
        b"\x00",
        b'"\\ud800"',
        b"true",
        b"[1,2]",
        b"9" * 30,
    ]
    params = ["", "0", "-1", "1.5", "x", "\u0663", "9" * 30, "%00", "\ud7ff"]
    seen = set()
    for _ in range(150):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        path = rng.choice(["submit", "submit_test", "publish"])
        key = rng.choice([srv.keys["alice"], srv.keys["prof"], "", "mg_x"])
        query = {
            "submission_id": rng.choice(params + [str(srv.sid)]),
            "test_case_index": rng.choice(params),
            "assignment": rng.choice(params + ["hw1"]),
            "problem": rng.choice(params + ["forward"]),
            "rtol": rng.choice(params),
            "deadline": rng.choice(params),
        }
        r = srv.post(path, key, body, **query)
        seen.add(r.status_code)
        assert r.status_code < 500, (path, body, query, r.text)
    assert {400, 401} <= seen
