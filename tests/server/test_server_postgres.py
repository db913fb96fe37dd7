"""Any SQLAlchemy URL works: the protocol and gradebook on a throwaway PostgreSQL
(see fixtures/server/pg_cluster.py; the protocol, limits, auth and hardening
suites also run on both databases)."""

import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, database_url, enc  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]


@pytest.fixture
def postgres_url(tmp_path):
    return database_url("postgresql", tmp_path)


def test_protocol_and_gradebook_on_postgresql(postgres_url, tmp_path):
    srv = Server(tmp_path / "unused.db", db_url=postgres_url)
    prof, alice = add_user(postgres_url, "prof", "instructor"), add_user(postgres_url, "alice")
    srv.start()
    try:
        import numpy as np

        assert (
            srv.post(
                "publish",
                prof,
                [enc(np.eye(3)), 2.5],
                assignment="hw1",
                problem="forward",
                deadline="2020-01-01T00:00:00Z",
            ).status_code
            == 200
        )
        r = srv.post("submit", alice, assignment="hw1", problem="forward")
        assert r.json()["late"] is True
        sid = r.json()["submission_id"]
        verdicts = [
            srv.post("submit_test", alice, v, submission_id=sid, test_case_index=i).json()["correct"]
            for i, v in enumerate([enc(np.eye(3)), 2.6])
        ]
        assert verdicts == [True, False]
        again = srv.post("submit_test", alice, 3.0, submission_id=sid, test_case_index=1)
        assert again.status_code == 409
        csv_text = requests.get(srv.url + "gradebook.csv", params={"user_key": prof}, timeout=10).text
        assert csv_text == (
            "name,hw1/forward,total,on-time total,late,needs attention\nalice,50.00,50.00,0.00,hw1/forward,\n"
        )
    finally:
        srv.stop()
