"""Any SQLAlchemy URL works: the protocol and gradebook on a throwaway PostgreSQL.

PostgreSQL runs as the `postgres` user in a temporary folder on a free
loopback port with fsync off (DESIGN.md); about a second to start.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "server"))
from server_harness import Server, add_user, enc, free_port  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]
PG_BIN = Path("/usr/lib/postgresql/15/bin")


def as_postgres(*cmd, timeout=60):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd], capture_output=True, text=True,
                          timeout=timeout, check=True)


@pytest.fixture(scope="module")
def postgres_url():
    if not (PG_BIN / "initdb").exists() or not shutil.which("runuser"):
        pytest.skip("PostgreSQL 15 server binaries are not installed (Debian package postgresql)")
    pytest.importorskip("psycopg")
    folder = Path(tempfile.mkdtemp(prefix="grader-pg-"))
    shutil.chown(folder, "postgres", "postgres")
    port = free_port()
    as_postgres(str(PG_BIN / "initdb"), "-D", str(folder / "data"), "-U", "postgres", "--auth", "trust")
    as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(folder / "data"), "-l", str(folder / "log"), "-w", "-o",
                f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    try:
        as_postgres(str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(port), "grader")
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/grader"
    finally:
        as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)


class PgServer(Server):
    def __init__(self, url, tmp):
        super().__init__(tmp / "unused.db")
        self.db_url = url


def test_protocol_and_gradebook_on_postgresql(postgres_url, tmp_path):
    srv = PgServer(postgres_url, tmp_path)
    prof, alice = add_user(postgres_url, "prof", "instructor"), add_user(postgres_url, "alice")
    srv.start()
    try:
        import numpy as np
        assert srv.post("publish", prof, [enc(np.eye(3)), 2.5], assignment="hw1", problem="forward",
                        deadline="2020-01-01T00:00:00Z").status_code == 200
        r = srv.post("submit", alice, assignment="hw1", problem="forward")
        assert r.json()["late"] is True
        sid = r.json()["submission_id"]
        verdicts = [srv.post("submit_test", alice, v, submission_id=sid, test_case_index=i).json()["correct"]
                    for i, v in enumerate([enc(np.eye(3)), 2.6])]
        assert verdicts == [True, False]
        again = srv.post("submit_test", alice, 3.0, submission_id=sid, test_case_index=1)
        assert again.status_code == 409
        csv_text = requests.get(srv.url + "gradebook.csv", params={"user_key": prof}, timeout=10).text
        assert csv_text == "name,hw1/forward,total,late\nalice,50.00,50.00,hw1/forward\n"
    finally:
        srv.stop()
