"""The web pages in a real headless Chromium: log-in, /gradebook for instructors, /me for students."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "server"))
from server_harness import Server, add_user, enc  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.browser]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("browser") / "grader.db")
    server.keys = {name: add_user(server.db_url, name, role) for name, role in
                   [("prof", "instructor"), ("alice", "student"), ("bob", "student"), ("<b>eve</b>", "student")]}
    server.start()
    prof = server.keys["prof"]
    server.post("publish", prof, [enc(np.eye(2)), 2.0], assignment="hw1", problem="forward")
    server.post("publish", prof, [1.0, 2.0, 3.0, 4.0], assignment="hw1", problem="backward")
    answers = {"alice": ([enc(np.eye(2)), 2.0], [1.0, 2.0, 0.0, 0.0]),  # forward 2/2, backward 2/4
               "bob": ([enc(np.zeros((2, 2))), 2.0], [1.0, 0.0, 0.0, 0.0])}  # 1/2, 1/4
    for who, per_problem in answers.items():
        for problem, values in zip(("forward", "backward"), per_problem):
            sid = server.post("submit", server.keys[who], assignment="hw1", problem=problem).json()["submission_id"]
            for i, v in enumerate(values):
                assert server.post("submit_test", server.keys[who], v, submission_id=sid,
                                   test_case_index=i).status_code == 200
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    yield context.new_page()
    context.close()


def log_in(page, srv, who):
    page.goto(srv.url + "login")
    page.fill("#key", srv.keys[who])
    page.click("#signin")
    page.wait_for_load_state()


def test_instructor_sees_the_gradebook(page, srv):
    log_in(page, srv, "prof")
    assert page.url == srv.url + "gradebook"
    rows = page.locator("#gradebook tr.student").all_inner_texts()
    assert len(rows) == 3
    alice = next(r for r in rows if r.startswith("alice")).split()
    bob = next(r for r in rows if r.startswith("bob")).split()
    assert alice[1:] == ["100%", "50%", "75.0%"] and bob[1:] == ["50%", "25%", "37.5%"]
    assert "<b>eve</b>" in page.inner_text("#gradebook")  # names are escaped, not rendered as HTML
    # pass rate per case: case 1 of backward was passed by alice only (1 of 2 students who tried)
    rates = page.locator("table.passrate").nth(1).inner_text()
    assert "1\t50%" in rates and "0\t100%" in rates
    assert page.locator("table.histogram").count() == 2


def test_instructor_downloads_csv(page, srv):
    log_in(page, srv, "prof")
    with page.expect_download() as info:
        page.click("#csv")
    text = Path(info.value.path()).read_text()
    assert text.splitlines()[0] == "name,hw1/forward,hw1/backward,total,late"
    assert "alice,100.00,50.00,75.00," in text


def test_student_sees_only_their_row(page, srv):
    log_in(page, srv, "alice")
    assert page.url == srv.url + "me"
    body = page.inner_text("body")
    assert page.inner_text("#who") == "alice"
    assert "bob" not in body and "eve" not in body
    scores = page.inner_text("#scores")
    assert "hw1/forward\t2 / 2\t100%" in scores and "hw1/backward\t2 / 4\t50%" in scores
    assert page.locator("#history tr").count() == 3  # header + two submissions


def test_student_cannot_open_gradebook(page, srv):
    log_in(page, srv, "bob")
    response = page.goto(srv.url + "gradebook")
    assert response.status == 403
    assert "only instructors can read the gradebook" in page.inner_text("#error")
    assert "alice" not in page.content()
    assert page.goto(srv.url + "gradebook.csv").status == 403


def test_session_cookie_is_httponly_and_samesite(page, srv):
    log_in(page, srv, "alice")
    cookie = next(c for c in page.context.cookies() if c["name"] == "grader_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert "grader_session" not in page.evaluate("document.cookie")


def test_bad_key_and_anonymous_access(page, srv):
    page.goto(srv.url + "gradebook")
    assert page.url == srv.url + "login"  # anonymous: sent to the log-in form
    page.fill("#key", "mg_wrong")
    page.click("#signin")
    assert "Unknown key" in page.inner_text("#error")
    assert page.goto(srv.url + "me").url == srv.url + "login"


def test_sign_out_ends_the_session(page, srv):
    log_in(page, srv, "alice")
    page.click("nav button")
    page.wait_for_load_state()
    assert page.goto(srv.url + "me").url == srv.url + "login"
