"""The web pages in a real headless Chromium: log-in, the instructor's gradebook
(server submissions and imported grade-batch results in one table, sorting,
search, charts, a page per student, CSV), /me for students.

Screenshots at desktop and phone widths are kept in tests/artifacts/
(git-ignored) for a person to look at; the tests check the key elements.
The 1400 px one is also the docs' picture of the gradebook (docs/img/gradebook.png,
committed): UPDATE_DOCS_IMG=1 copies the fresh one there, and every run checks
the committed copy is a screenshot of the same width.
"""

import datetime as dt
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env, enc, record_batch  # noqa: E402

from grader.grading.report import results as report  # noqa: E402
from grader.shipped.cases import QUESTIONS  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.browser]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img" / "gradebook.png"
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
WIDE = {"width": 1400, "height": 900}  # the instructor's window the gradebook must fit
LONG = "Maximiliana Fernández-Oyelaran"  # a long name, late on two questions


def submit(server, who, problem, values):
    sid = server.post("submit", server.keys[who], assignment="hw1", problem=problem).json()["submission_id"]
    for i, v in enumerate(values):
        assert server.post("submit_test", server.keys[who], v, submission_id=sid, test_case_index=i).status_code == 200


def batch_outdir(root: Path) -> Path:
    """A grade-batch --out folder: alice (who also has an account) and zed (who has none)."""
    C = report.CaseResult
    people = {
        "alice": [
            C("forward_divide", "forward", "Q1.1", 5.0, 5.0, True, "EWiseDiv ok", False),
            C("forward_exp", "forward", "Q1.2", 0.0, 5.0, False, "Exp: max error 0.3 > 1e-05", False),
        ],
        "zed": [C("forward_exp", "forward", "Q1.1", 10.0, 10.0, True, "Exp ok", False)],
    }
    for name, cases in people.items():
        (root / name).mkdir(parents=True)
        rep = report.Report(name, tuple(cases), report.question_scores(cases, QUESTIONS), "bwrap", 1.0)
        (root / name / "results.json").write_text(report.gradescope_json(rep))
    record_batch(root)
    return root


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    server = Server(root / "grader.db")
    server.keys = {
        name: add_user(server.db_url, name, role)
        for name, role in [
            ("prof", "instructor"),
            ("alice", "student"),
            ("bob", "student"),
            ("<b>eve</b>", "student"),
            (LONG, "student"),
        ]
    }
    server.start()
    prof, soon = server.keys["prof"], (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)).isoformat()
    pid = server.post(
        "publish", prof, [enc(np.eye(2)), 2.0], assignment="hw1", problem="forward", weight="10", deadline=soon
    ).json()["publication_id"]
    assert (
        server.post(
            "publish_notes",
            prof,
            [{"name": "matmul", "description": "ndl.matmul(A, B)"}, {"name": "exp", "description": "ndl.exp(<x>)"}],
            publication_id=pid,
        ).status_code
        == 200
    )
    server.post("publish", prof, [1.0, 2.0, 3.0, 4.0], assignment="hw1", problem="backward", weight="25")
    submit(server, "alice", "forward", [enc(np.eye(2)), 2.0])  # 2/2
    submit(server, "alice", "backward", [1.0, 2.0, 0.0, 0.0])  # 2/4
    submit(server, "bob", "forward", [enc(np.zeros((2, 2))), 2.0])  # 1/2
    submit(server, "bob", "backward", [1.0, 0.0, 0.0, 0.0])  # 1/4
    # Lateness is judged from each answer's arrival against the deadline in force now: a deadline set
    # to this moment leaves the answers above on time and makes the ones below late.
    past = dt.datetime.now(dt.timezone.utc).isoformat()
    server.post("publish", prof, [1.0, 2.0, 3.0, 4.0], assignment="hw1", problem="backward", deadline=past)
    submit(server, "bob", "backward", [1.0, 2.0, 3.0, 0.0])  # 3/4, late
    submit(server, LONG, "backward", [1.0, 0.0, 0.0, 0.0])  # 1/4, late
    # topo_sort's own deadline has passed; forward's (in two hours) has not
    server.post("publish", prof, [1.0] * 7, assignment="hw1", problem="topo_sort", weight="20", deadline=past)
    submit(server, LONG, "topo_sort", [1.0] + [2.0] * 6)  # 1/7, late
    server.forward_due = dt.datetime.fromisoformat(soon).strftime("%Y-%m-%d %H:%M UTC")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "import-batch",
            str(batch_outdir(root / "out")),
            "--db",
            server.db_url,
            "--create-missing",
        ],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    # Both channels count here, as declared (the default, a sandboxed grade over the server's cases,
    # is test_server_policy's): the page shows each source's best
    r = subprocess.run(
        [sys.executable, "-m", "grader", "policy", "set", "--counts", "best of both", "--db", server.db_url],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    ARTIFACTS.mkdir(exist_ok=True)
    yield server
    server.stop()


@pytest.fixture
def page(browser, srv):
    """A page that may load nothing but the server itself (the pages must work offline),
    recording every request elsewhere and every console error (CSP violations included)."""
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    pg = context.new_page()
    pg.outside, pg.errors = [], []

    def route(r):
        if r.request.url.startswith(srv.url):
            return r.continue_()
        pg.outside.append(r.request.url)
        return r.abort()

    pg.route("**/*", route)
    # Script errors and CSP violations; an HTTP error status of a page is tested where expected.
    pg.on(
        "console",
        lambda m: pg.errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None,
    )
    yield pg
    assert pg.outside == [] and pg.errors == []
    for key in srv.keys.values():  # no page ever shows a key
        assert key not in pg.content()
    context.close()


def log_in(page, srv, who):
    page.goto(srv.url + "login")
    page.fill("#key", srv.keys[who])
    page.click("#signin")
    page.wait_for_load_state()


def shot(page, name):
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    assert path.stat().st_size > 10_000


def png_size(path: Path) -> tuple:
    """(width, height) from a PNG's header."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def table(page):
    """name -> cell texts of the visible student rows, in order."""
    rows = page.locator("#gradebook tbody tr.student:visible").all()
    return {r.locator("td").first.inner_text(): r.locator("td").all_inner_texts()[1:] for r in rows}


def test_instructor_gradebook_has_both_sources_charts_and_failures(page, srv):
    log_in(page, srv, "prof")
    assert page.url == srv.url + "gradebook"
    heads = page.locator("#gradebook thead th").all_inner_texts()
    assert [" ".join(h.split()) for h in heads] == [
        "student",
        "hw1/forward /10",
        "hw1/backward /25",
        "hw1/topo_sort /20",
        "hw1/compute_gradient /25",
        "hw1/softmax_loss_ndl /10",
        "hw1/nn_epoch_ndl /10",
        "total /100",
        "on time",
        "late",
        "last submission",
    ]
    rows = table(page)
    assert list(rows) == ["<b>eve</b>", "alice", "bob", LONG, "zed"]  # names are escaped, not rendered as HTML
    # Points: alice has forward 100% of 10 on the server (50% imported: the best counts), backward
    # 50% of 25, the rest 0 from the imported result; weights 10, 25, 20 from the server, 25, 10, 10 imported
    assert rows["alice"][:3] == ["10", "12.5", "0"] and rows["alice"][6:8] == ["22.5", "22.5"]
    alice = page.locator("#gradebook tr.student", has_text="alice").locator("td")
    assert (
        alice.nth(2).get_attribute("title") == "50% (2 of 4 cases); counted: server s2"
    )  # percent and source on hover
    assert alice.nth(7).get_attribute("title") == "22.5%"
    # bob: backward 75% came late (18.75 points), on time only 25% (6.25): his on-time total drops
    assert rows["bob"][1].split() == ["18.75", "late"] and rows["bob"][6:9] == ["23.75", "11.25", "hw1/backward"]
    bob = page.locator("#gradebook tr.student", has_text="bob").locator("td")
    assert bob.nth(2).get_attribute("title") == "75% (3 of 4 cases); on time 6.25 points (25%); counted: server s5"
    assert rows[LONG][8] == "hw1/backward, hw1/topo_sort" and rows[LONG][6:8] == ["9.11", "0"]
    assert rows["zed"][0] == "10" and rows["zed"][9] != "-"  # imported only: the time it was graded
    assert page.locator("svg.histogram").count() == 6
    assert page.locator("svg.timeline line.deadline").count() == 1
    forward = page.locator("section.question").first
    assert "3 submitted, mean 83%, median 100%" in forward.locator("p.summary").inner_text()
    # cases grouped by pass rate, failing first and open; the passing groups collapsed
    groups = forward.locator("details.group")
    assert [" ".join(g.split()) for g in groups.locator("summary").all_inner_texts()] == [
        "failed by 1 of 2 students (50%): 2 cases",
        "passed by all 2 who tried: 1 case",
        "passed by all 1 who tried: 1 case",
    ]
    assert [g.get_attribute("open") is not None for g in groups.all()] == [True, False, False]
    failing = groups.first.locator("table.failures tr").all_inner_texts()
    assert failing[1].startswith("case 0: matmul\tserver\t50% (1/2)\tndl.matmul(A, B)")
    assert failing[2].startswith("forward_exp\tbatch\t50% (1/2)")
    assert not groups.nth(1).locator("table").is_visible()
    groups.nth(1).locator("summary").click()
    assert "ndl.exp(<x>)" in groups.nth(1).inner_text()
    # six cases failed alike (as an empty submission fails them all): one group, collapsed
    topo = page.locator("section.question").nth(2)
    assert topo.locator("details.group summary").all_inner_texts() == [
        "failed by 1 of 1 students (100%): 6 cases",
        "passed by all 1 who tried: 1 case",
    ]
    assert topo.locator("details.group[open]").count() == 0
    shot(page, "gradebook-desktop")


def test_gradebook_fits_1400px_with_its_last_column_visible(page, srv):
    page.set_viewport_size(WIDE)
    log_in(page, srv, "prof")
    scroller = page.evaluate(
        "(() => { const s = document.getElementById('gradebook').parentElement;"
        " return [s.scrollWidth, s.clientWidth]; })()"
    )
    assert scroller[0] <= scroller[1], scroller  # nothing to scroll to: no column is cut off
    lasts = [page.locator("#gradebook thead th").last] + page.locator("#gradebook tr.student td:last-child").all()
    assert len(lasts) == 6
    for cell in lasts:
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDE["width"], (cell.inner_text(), box)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDE["width"]
    shot(page, "gradebook-1400")
    fresh = ARTIFACTS / "gradebook-1400.png"
    if os.environ.get("UPDATE_DOCS_IMG"):
        shutil.copyfile(fresh, DOCS_IMG)
    # The README's and the docs' screenshot: this page, at this width (UPDATE_DOCS_IMG=1 refreshes it)
    assert DOCS_IMG.exists(), f"{DOCS_IMG} is missing: run this test with UPDATE_DOCS_IMG=1 and commit it"
    assert png_size(DOCS_IMG)[0] == png_size(fresh)[0] == WIDE["width"]


def test_search_and_sort_the_student_table(page, srv):
    log_in(page, srv, "prof")
    page.fill("#search", "Al")
    assert list(table(page)) == ["alice"]
    page.fill("#search", "nobody")
    assert table(page) == {} and page.is_visible("#no-match")
    page.fill("#search", "")
    page.click("#gradebook thead th:has-text('total') button")
    totals = [float(v[6]) for v in table(page).values()]
    assert totals == sorted(totals) and len(totals) == 5
    page.click("#gradebook thead th:has-text('total') button")
    assert [float(v[6]) for v in table(page).values()] == sorted(totals, reverse=True)
    assert list(table(page))[:2] == ["bob", "alice"]  # 23.75 points (75% late on backward) before 22.5
    page.click("#gradebook thead th:has-text('student') button")
    assert [n for n in table(page) if n.isalpha()] == ["alice", "bob", "zed"]
    page.click("#gradebook thead th:has-text('student') button")
    assert [n for n in table(page) if n.isalpha()] == ["zed", "bob", "alice"]


def test_phone_width_fits_the_screen(browser, srv, page):
    page.set_viewport_size(PHONE)
    log_in(page, srv, "prof")
    assert page.is_visible("#search") and page.is_visible("#gradebook")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"] + 1, width  # wide tables scroll inside their box, not the page
    assert page.locator("svg.histogram").first.bounding_box()["width"] <= PHONE["width"]
    shot(page, "gradebook-phone")


def test_student_page_lists_every_submission_and_reason(page, srv):
    log_in(page, srv, "prof")
    page.click("#gradebook a:text-is('bob')")
    page.wait_for_load_state()
    assert page.inner_text("h1") == "Student: bob"
    subs = page.locator("details.submission")
    assert subs.count() == 3
    page.locator("details.submission summary").nth(2).click()  # the oldest, closed at first
    text = page.inner_text("body")
    assert "case 0\tmatmul\twrong\tvalue: values differ beyond tolerance" in text
    assert "late" in subs.first.locator("summary").inner_text()
    shot(page, "student-desktop")
    page.goto(srv.url + "gradebook/student?name=alice")
    imported = page.locator("details.submission").first  # newest: the imported result, its first question
    assert "hw1/forward" in imported.inner_text() and "(batch out)" in imported.inner_text()
    assert "Exp: max error 0.3 > 1e-05" in page.inner_text("body")  # the imported result's feedback
    assert page.goto(srv.url + "gradebook/student?name=nobody").status == 404


def test_csv_download_has_the_table(page, srv):
    log_in(page, srv, "prof")
    with page.expect_download() as info:
        page.click("#csv")
    lines = Path(info.value.path()).read_text().splitlines()
    assert lines[0].startswith("name,hw1/forward,hw1/backward,")
    assert lines[0].endswith(",total,on-time total,late,needs attention,last submission,sources,counted")
    zed = next(line for line in lines if line.startswith("zed,"))
    assert zed.startswith("zed,100.00,") and ",batch out,hw1/forward: batch out b" in zed
    assert any(line.startswith("bob,50.00,75.00,") and ",23.75,11.25,hw1/backward," in line for line in lines)


def test_student_sees_only_their_own_results_with_reasons(page, srv):
    log_in(page, srv, "alice")
    assert page.url == srv.url + "me"
    assert page.inner_text("#who") == "alice"
    body = page.inner_text("body")
    assert "bob" not in body and "eve" not in body and "zed" not in body
    scores = page.inner_text("#scores")
    assert "hw1/forward\t2 / 2\t100%" in scores and "hw1/backward\t2 / 4\t50%" in scores
    # each question's own deadline: forward's is ahead, backward's has passed, compute_gradient has none
    deadlines = dict(
        zip(
            page.locator("#scores td:first-child").all_inner_texts(),
            page.locator("#scores td.deadline").all_inner_texts(),
        )
    )
    assert deadlines["hw1/forward"] == srv.forward_due and deadlines["hw1/compute_gradient"] == "-"
    assert deadlines["hw1/backward"] < srv.forward_due and deadlines["hw1/backward"] == deadlines["hw1/topo_sort"]
    # two on the server, and the imported result's six questions
    assert page.locator("details.submission").count() == 8
    page.locator("details.submission", has_text="(server)").filter(has_text="hw1/backward").locator("summary").click()
    assert "case 2\t\twrong\tvalue: wrong number (tolerance" in page.inner_text("body")
    shot(page, "me-desktop")
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    shot(page, "me-phone")


def test_student_cannot_open_gradebook(page, srv):
    log_in(page, srv, "bob")
    response = page.goto(srv.url + "gradebook")
    assert response.status == 403
    assert "only instructors and TAs can read the gradebook" in page.inner_text("#error")
    assert "alice" not in page.content()
    assert page.goto(srv.url + "gradebook/student?name=alice").status == 403
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
    assert "mg_wrong" not in page.content()  # a typed key is not echoed back
    assert page.goto(srv.url + "me").url == srv.url + "login"
    assert page.goto(srv.url + "gradebook/student?name=bob").url == srv.url + "login"


def test_sign_out_ends_the_session(page, srv):
    log_in(page, srv, "alice")
    page.click("nav button")
    page.wait_for_load_state()
    assert page.goto(srv.url + "me").url == srv.url + "login"
