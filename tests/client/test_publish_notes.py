"""`grader publish` describes each case to the server (name and code), and the
server's reasons then name the case and its op. Against a real server, with a
small project of its own."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env, enc, sqlite_rows  # noqa: E402

pytestmark = pytest.mark.server

TESTS = """
import numpy as np
import mugrade


class ndl:  # stands in for needle: the op names come from `ndl.<op>` calls
    exp = staticmethod(np.exp)
    divide_scalar = staticmethod(lambda a, s: a / s)


def helper(x):
    return x * 2


def submit_alpha():
    x = np.ones(2)
    y = x + 1
    mugrade.submit(ndl.exp(x))
    for size in (2, 3):
        mugrade.submit(np.zeros(size))
    mugrade.submit(
        ndl.divide_scalar(np.arange(3.0),
                          2.0))
    mugrade.submit(helper(x))
    mugrade.submit(ndl.exp(y))
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    root = tmp_path_factory.mktemp("notes")
    server = Server(root / "grader.db")
    server.keys = {n: add_user(server.db_url, n, r) for n, r in [("prof", "instructor"), ("ann", "student")]}
    server.start()
    project = root / "project"
    (project / "tests" / "tiny").mkdir(parents=True)
    (project / "tests" / "tiny" / "test_alpha.py").write_text(textwrap.dedent(TESTS))
    server.publish = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "publish",
            "--server",
            server.url,
            "--dir",
            str(project),
            "--assignment",
            "tiny",
        ],
        cwd=REPO,
        env=child_env(MUGRADE_KEY=server.keys["prof"]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    yield server
    server.stop()


def test_publish_stores_a_name_and_the_code_of_each_case(srv):
    assert srv.publish.returncode == 0, srv.publish.stdout + srv.publish.stderr
    assert srv.keys["prof"] not in srv.publish.stdout + srv.publish.stderr
    notes = sqlite_rows(
        srv.db_path, "select test_case_index, name, description from case_notes order by test_case_index"
    )
    assert notes == [
        (0, "exp", "x = np.ones(2); y = x + 1; submit ndl.exp(x)"),
        (1, "alpha 1", "submit np.zeros(size) (with size=2)"),
        (2, "alpha 2", "submit np.zeros(size) (with size=3)"),
        (3, "divide_scalar", "submit ndl.divide_scalar(np.arange(3.0), 2.0)"),
        (4, "helper", "submit helper(x)"),
        (5, "exp #2", "submit ndl.exp(y)"),
    ]


def test_wrong_answers_name_the_case_and_op(srv):
    key = srv.keys["ann"]
    sid = srv.post("submit", key, assignment="tiny", problem="alpha").json()["submission_id"]
    answer = srv.post("submit_test", key, enc([1.0, 1.0]), submission_id=sid, test_case_index=3).json()
    assert answer == {"correct": False, "reason": "divide_scalar: value: expected an np.ndarray, got a list"}
    import numpy as np

    answer = srv.post("submit_test", key, enc(np.exp(np.ones(2))), submission_id=sid, test_case_index=0).json()
    assert answer == {"correct": True}


def test_notes_endpoint_refuses_students_and_bad_ids(srv):
    r = srv.post("publish_notes", srv.keys["ann"], [{"name": "x"}], publication_id=1)
    assert r.status_code == 403 and "only instructors can describe cases" in r.text
    r = srv.post("publish_notes", srv.keys["prof"], [{"name": "x"}], publication_id="abc")
    assert r.status_code == 400 and "publication_id" in r.text
    r = srv.post("publish_notes", srv.keys["prof"], [{"name": "x"}], publication_id=99)
    assert r.status_code == 404 and r.text == "no publication 99: publish the answers first\n"
    r = srv.post("publish_notes", srv.keys["prof"], [{"name": "x"}] * 6, publication_id=1)
    assert r.status_code == 409 and "already has other notes" in r.text


def test_a_server_without_notes_still_publishes(monkeypatch, capsys):
    """The course's own server answers 404 to /publish_notes: the publish goes on, with one line."""
    from grader.client import publish_notes
    from grader.shipped import mugrade

    def post(self, path, params, body=None):
        if path == "publish_notes":
            raise mugrade.RefusedByServer(404, "Not Found")
        return {"publication_id": 7, "num_cases": len(body)}

    monkeypatch.setattr(mugrade.Client, "post", post)
    publish_notes._cases["beta"] = [("exp", "submit ndl.exp(x)"), ("", "submit x")]
    client = publish_notes.NotingClient("http://127.0.0.1:9/", "k")
    assert client.post("publish", {"problem": "beta"}, [1, 2]) == {"publication_id": 7, "num_cases": 2}
    assert capsys.readouterr().out == "beta: case descriptions not stored (404: Not Found)\n"
    assert "beta" not in publish_notes._cases


def test_notes_are_sent_only_when_they_match_the_published_cases():
    from grader.client import publish_notes

    publish_notes._cases["gamma"] = [("exp", "a"), ("exp", "b"), ("", "c")]
    assert publish_notes.notes_for("gamma", 3) == [
        {"name": "exp", "description": "a"},
        {"name": "exp #2", "description": "b"},
        {"name": "gamma 2", "description": "c"},
    ]
    publish_notes._cases["gamma"] = [("exp", "a")]
    assert publish_notes.notes_for("gamma", 2) == []  # a case went unrecorded: better no notes than wrong ones
