"""`make serve` says which pages to open; `make publish` never shows the key."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env, free_port  # noqa: E402

pytestmark = pytest.mark.server
SECRET = "mg_make_test_secret_key_0123456789"


def make(*args, **env):
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=REPO,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_make_serve_prints_the_pages_to_open(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "serve", f"DB=sqlite:///{tmp_path / 'g.db'}", f"PORT={port}"],
        cwd=REPO,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(5)]
        base = f"http://127.0.0.1:{port}/"
        for page in ("login", "gradebook", "me"):
            assert any(line.split()[:1] == [base + page] for line in lines), lines
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # and the server really is there
            try:
                assert requests.get(base + "login", timeout=1).status_code == 200
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        else:
            pytest.fail("make serve did not start the server")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # make and the server it started, nothing else
        proc.wait(20)
        proc.stdout.close()


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("make") / "grader.db")
    add_user(server.db_url, "prof", "instructor")
    server.start()
    yield server
    server.stop()


def test_make_publish_keeps_the_key_off_the_terminal(srv):
    r = make("publish", f"KEY={SECRET}", f"SERVER={srv.url}")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "unknown key" in out, out  # the key did reach the server
    assert SECRET not in out
    assert "(key from KEY, not shown)" in out


def test_make_publish_takes_the_key_from_the_environment_too(srv):
    r = make("publish", f"SERVER={srv.url}", MUGRADE_KEY=SECRET)
    assert "unknown key" in r.stdout + r.stderr and SECRET not in r.stdout + r.stderr


def test_make_publish_without_a_key_shows_usage():
    env = {k: v for k, v in child_env().items() if k != "MUGRADE_KEY"}
    r = subprocess.run(
        ["make", "--no-print-directory", "publish"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 2 and "usage: make publish KEY=instructor-key" in r.stdout
