"""An acknowledged case survives SIGKILL: concurrent clients, kill -9, restart, count."""

import concurrent.futures
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, db_rows  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]
CLIENTS, CASES = 8, 2000


def hammer(srv, key, sid, stop, acked):
    """Send cases until stopped or refused; record each index the server acknowledged."""
    session = requests.Session()
    for i in range(CASES):
        if stop.is_set():
            return
        try:
            r = session.post(
                srv.url + "submit_test",
                params={"submission_id": sid, "test_case_index": i},
                data=b"1.0",
                headers={"Authorization": f"Bearer {key}"},
                timeout=10,
            )
        except requests.RequestException:
            return  # the server died mid-request: this case was not acknowledged
        if r.status_code == 200:
            acked.append((sid, i))


def load_then_stop(tmp_path, stop_server, kind="sqlite"):
    """Clients hammer the server until `stop_server(srv)` is called mid-flight; returns
    (server, acknowledged cases, cases on disk right after the stop)."""
    srv = Server(tmp_path / "grader.db", "--rate", "0", db_url=database_url(kind, tmp_path))
    prof = add_user(srv.db_url, "prof", "instructor")
    keys = [add_user(srv.db_url, f"s{n}") for n in range(CLIENTS)]
    srv.start()
    try:
        assert srv.post("publish", prof, [1.0] * CASES, assignment="hw1", problem="p").status_code == 200
        sids = [srv.post("submit", k, assignment="hw1", problem="p").json()["submission_id"] for k in keys]
        stop, acked = threading.Event(), []
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            for k, sid in zip(keys, sids):
                pool.submit(hammer, srv, k, sid, stop, acked)
            deadline = time.monotonic() + 10
            while len(acked) < 300 and time.monotonic() < deadline:
                time.sleep(0.02)
            stop_server(srv)  # mid-flight, while requests are queued at the writer
            stop.set()
        stored = set(db_rows(srv.db_url, "select submission_id, test_case_index from case_results"))
        return srv, prof, acked, stored
    except BaseException:
        srv.stop()
        raise


@pytest.mark.parametrize("kind", DATABASES)
def test_sigkill_loses_no_acknowledged_case(tmp_path, kind):
    srv, prof, acked, stored = load_then_stop(tmp_path, Server.kill, kind)
    try:
        assert len(acked) >= 300
        assert set(acked) <= stored, f"{len(set(acked) - stored)} acknowledged cases lost"
        srv.start()  # and the restarted server reports them as graded
        r = requests.get(srv.url + "gradebook.csv", headers={"Authorization": f"Bearer {prof}"}, timeout=10)
        assert r.status_code == 200 and r.text.count("\n") == CLIENTS + 1
    finally:
        srv.stop()


def test_sigterm_finishes_queued_writes_and_says_so(tmp_path):
    srv, _, acked, stored = load_then_stop(tmp_path, Server.stop)
    assert len(acked) >= 300 and set(acked) <= stored
    # uvicorn shuts down gracefully, then re-raises SIGTERM so supervisors see it
    assert srv.proc.returncode in (0, -signal.SIGTERM)
    assert "writer stopped: " in srv.log.read_text()
