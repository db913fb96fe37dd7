"""A student's results page (/me, and the instructor's page for that student) is
rendered once and reused while nothing it shows has changed: a new submission,
a new answer, a new publication, a deadline change and an import each show up
on the very next load."""

import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, enc  # noqa: E402
from test_server_gradebook import ANN_BATCH, write_outdir  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.server.gradebook import freshness  # noqa: E402
from grader.server.store import protocol as store  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "grader.db")
    server.keys = {"prof": add_user(server.db_url, "prof", "instructor"), "ann": add_user(server.db_url, "ann")}
    server.start()
    assert (
        server.post("publish", server.keys["prof"], [enc(np.ones(3)), 2.0], assignment="hw1", problem="p").status_code
        == 200
    )
    yield server
    server.stop()


def signed_in(srv, who: str) -> requests.Session:
    s = requests.Session()
    assert s.post(srv.url + "login", data={"key": srv.keys[who]}, timeout=10).status_code == 200
    return s


def load(srv, session: requests.Session, path: str) -> str:
    """The page, waiting out the page-load pacing (its limit is tested elsewhere)."""
    while True:
        r = session.get(srv.url + path, timeout=10)
        if r.status_code != 429:
            assert r.status_code == 200, r.text
            return r.text
        time.sleep(float(r.headers["Retry-After"]))


def submissions_shown(page: str) -> int:
    return page.count('class="submission"')


def answer(srv, sid: int, index: int, value):
    r = srv.post("submit_test", srv.keys["ann"], value, submission_id=sid, test_case_index=index)
    assert r.status_code == 200, r.text


def submit(srv) -> int:
    return srv.post("submit", srv.keys["ann"], assignment="hw1", problem="p").json()["submission_id"]


def edit_reasons_behind_the_servers_back(srv, text: str):
    """A change no page depends on (reasons are written before any page shows them)."""
    engine = make_engine(srv.db_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("update case_results set reason = ?", (text,))
    finally:
        engine.dispose()


@pytest.mark.parametrize("who, path", [("ann", "me"), ("prof", "gradebook/student?name=ann")])
def test_an_unchanged_page_is_reused_and_a_new_answer_or_submission_shows_next(srv, who, path):
    sid = submit(srv)
    answer(srv, sid, 0, enc(np.ones(2)))
    session = signed_in(srv, who)
    first = load(srv, session, path)
    assert "expected shape (3,), got (2,)" in first and submissions_shown(first) == 1
    edit_reasons_behind_the_servers_back(srv, "edited outside the server")
    assert load(srv, session, path) == first  # reused: the edit is not shown

    answer(srv, sid, 1, 2.0)  # a new case result of the same submission
    page = load(srv, session, path)
    assert "1 / 2 cases" in page and "edited outside the server" in page, page  # rendered anew
    second = submit(srv)
    answer(srv, second, 0, enc(np.ones(3)))
    page = load(srv, session, path)
    assert submissions_shown(page) == 2 and "1 / 2 cases" in page


def test_a_publication_and_a_deadline_change_show_on_the_next_load(srv):
    answer(srv, submit(srv), 0, enc(np.ones(3)))
    session = signed_in(srv, "ann")
    assert "1 / 2" in load(srv, session, "me") and "2031-05-06" not in load(srv, session, "me")
    prof = srv.keys["prof"]
    assert srv.post("publish", prof, [1.0, 2.0, 3.0], assignment="hw1", problem="q").status_code == 200
    assert "hw1/q" in load(srv, session, "me")  # a new question's row
    assert (
        srv.post(
            "publish", prof, [enc(np.ones(3)), 2.0], assignment="hw1", problem="p", deadline="2031-05-06T07:08:00Z"
        ).status_code
        == 200
    )
    assert re.search(r'class="when deadline">2031-05-06 07:08 UTC', load(srv, session, "me"))


def test_an_import_and_a_regrade_show_on_the_next_load(srv, tmp_path):
    session = signed_in(srv, "ann")
    assert "batch batch1" not in load(srv, session, "me")
    out = write_outdir(tmp_path / "batch1", {"ann": ANN_BATCH})
    assert grader_main(["import-batch", str(out), "--db", srv.db_url]) == 0
    page = load(srv, session, "me")
    assert "batch batch1" in page and "Exp: values differ" in page
    write_outdir(out, {"ann": [ANN_BATCH[0], ("forward_exp", "forward", "Q1.2", 5.0, 5.0, "Exp ok"), ANN_BATCH[2]]})
    assert grader_main(["import-batch", str(out), "--db", srv.db_url]) == 0  # replaces ann's result
    page = load(srv, session, "me")
    assert "Exp: values differ" not in page and "regraded" in page


@pytest.fixture(params=DATABASES)
def db_url(request, tmp_path):
    return database_url(request.param, tmp_path)


def test_the_version_changes_with_each_write_a_page_shows(db_url, tmp_path):
    """On both databases, with the writes the server and the commands make."""
    from grader.server.web import casenotes

    add_user(db_url, "prof", "instructor")
    add_user(db_url, "ann")
    engine = make_engine(db_url)
    seen = []

    def version():
        with engine.connect() as conn:
            seen.append(freshness.student_version(conn, "ann"))
        return seen[-1]

    def import_batch(results):
        assert grader_main(["import-batch", str(write_outdir(tmp_path / "b", {"ann": results})), "--db", db_url]) == 0

    writes = [
        lambda: store.publish_job("hw1", "p", 1, [1.0, 2.0], 1e-5, 1e-5, None, None),
        lambda: store.submission_job("hw1", "p", 2),
        lambda: lambda c: store.insert_cases(c, [store.CaseWrite(1, 0, True, "x", "1.0")]),
        lambda: store.publish_job("hw1", "p", 1, [1.0, 2.0], 1e-5, 1e-5, 2.0, None),  # a weight
        lambda: lambda c: c.exec_driver_sql("update problems set deadline = '2031-01-01 00:00:00'"),
        lambda: casenotes.notes_job(2, [("a", "ndl.a(x)"), ("b", "ndl.b(x)")]),
        lambda: lambda c: import_batch(ANN_BATCH),
        lambda: lambda c: import_batch(ANN_BATCH[:1]),  # a regrade: ann's only result replaced
    ]
    try:
        version()
        for i, write in enumerate(writes):
            with engine.begin() as conn:
                write()(conn)
            assert version() != seen[-2], f"write {i} left the version unchanged"
    finally:
        engine.dispose()
    assert len(set(seen)) == len(seen)


def test_tabs_that_miss_together_share_one_rendering(tmp_path, monkeypatch):
    """Four tabs opened at once render the page once (four renderings at once stalled others)."""
    import asyncio

    from grader.server.config import ServerConfig
    from grader.server.web import app, pages

    url = f"sqlite:///{tmp_path / 'g.db'}"
    add_user(url, "ann")
    services = app.Services(ServerConfig(db_url=url))
    renders = []
    real = pages._one_student_judged

    async def counted(svc, name):
        renders.append(name)
        await asyncio.sleep(0.05)  # still rendering when the other tabs ask
        return await real(svc, name)

    monkeypatch.setattr(pages, "_one_student_judged", counted)

    class Ann:
        id, name, role, is_instructor = 1, "ann", "student", False

    async def tabs(n):
        return await asyncio.gather(
            *(pages._results_page(services, "me", Ann, "ann", title="My results") for _ in range(n))
        )

    try:
        first = asyncio.run(tabs(4))
        assert len(set(first)) == 1 and "No submissions yet." in first[0] and renders == ["ann"]
        assert asyncio.run(tabs(2)) == first[:2] and renders == ["ann"]  # then from the cache
    finally:
        services.engine.dispose()
