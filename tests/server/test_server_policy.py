"""One grade that counts: the policy in force says which channel's attempts
count (a sandboxed grade by default once a question has one; the server's
cases otherwise; the better of both only when declared) and whether the
best or the last counts; every cell names the source and submission that
produced it; `grader policy` sets a course's override in one line."""

import json
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, sqlite_rows  # noqa: E402
from test_server_gradebook import ANN_BATCH, write_outdir  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.core.assignment import Assignment, AssignmentError, Policy, parse_policy  # noqa: E402
from grader.server.accounts import users as accounts  # noqa: E402
from grader.server.gradebook import scores  # noqa: E402
from grader.server.store import protocol as store  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture
def course(tmp_path):
    """ann: the server's 3 forward cases all right, then a last submission with 1 right; the
    sandbox graded her forward 5/10 and topo_sort 20/20 (batch b1)."""
    url = f"sqlite:///{tmp_path / 'g.db'}"
    engine = make_engine(url)
    key = accounts.add_users(engine, [("prof", "instructor"), ("ann", "student")])[0]
    with engine.begin() as conn:
        store.publish_job("hw1", "forward", 1, [1, 2, 3], 1e-5, 1e-5, 10.0, None)(conn)
        store.publish_job("hw1", "topo_sort", 1, [1, 2], 1e-5, 1e-5, 20.0, None)(conn)
    for right in ({0, 1, 2}, {0}):
        with engine.begin() as conn:
            sub = store.submission_job("hw1", "forward", 2)(conn)
            store.insert_cases(conn, [store.CaseWrite(sub.id, i, i in right, str(i), json.dumps(i)) for i in range(3)])
    with engine.begin() as conn:
        sub = store.submission_job("hw1", "topo_sort", 2)(conn)
        store.insert_cases(conn, [store.CaseWrite(sub.id, i, True, str(i), json.dumps(i)) for i in range(2)])
    out = write_outdir(tmp_path / "batch1", {"ann": ANN_BATCH})
    assert grader_main(["import-batch", str(out), "--db", url]) == 0
    yield engine, url, key
    engine.dispose()


def ann(engine, label):
    with engine.connect() as conn:
        book = scores.build(conn)
    row = next(r for r in book.rows if r.name == "ann")
    return row.cells[[q.label for q in book.questions].index(label)], row.total, book


def test_by_default_a_weak_server_answer_never_raises_the_sandboxed_grade(course):
    engine = course[0]
    cell, total, book = ann(engine, "hw1/forward")
    assert (cell.score, cell.source, cell.submission, cell.practice) == (0.5, "batch batch1", "b1", 1.0)
    topo, _, _ = ann(engine, "hw1/topo_sort")
    assert (topo.score, topo.source) == (1.0, "batch batch1")
    # forward 10 points at 0.5, topo_sort 20 at 1.0, the rest of the sandboxed questions 0
    assert total == round(100 * (10 * 0.5 + 20 * 1.0) / book.max_points, 2)
    full = scores.to_csv(book, full=True).splitlines()
    assert full[0].endswith(",counted")
    assert "hw1/forward: batch batch1 b1" in full[1] and "server s" not in full[1]


def set_policy(url, *args):
    return grader_main(["policy", "set", "--db", url, *args])


@pytest.mark.parametrize(
    "args, score, source",
    [
        (["--counts", "best of both"], 1.0, "server"),  # declared: the better channel
        (["--counts", "server"], 1.0, "server"),  # best server submission
        (["--counts", "server", "--pick", "last"], 1 / 3, "server"),  # the last one, whatever came before
        (["--counts", "sandboxed", "--pick", "last"], 0.5, "batch batch1"),
    ],
)
def test_a_course_policy_set_on_the_server_decides_what_counts(course, capsys, args, score, source):
    engine, url, _ = course
    assert set_policy(url, *args) == 0
    assert "(set on this server)" in capsys.readouterr().out
    cell, _, _ = ann(engine, "hw1/forward")
    assert (cell.score, cell.source) == (pytest.approx(score), source)


def test_a_rule_for_one_question_leaves_the_others_to_the_assignment_rule(course, capsys):
    engine, url, _ = course
    assert set_policy(url, "--counts", "server", "--question", "forward") == 0
    assert capsys.readouterr().out.splitlines()[-1] == "  forward: counts: server, pick: best"
    assert ann(engine, "hw1/forward")[0].source == "server"
    assert ann(engine, "hw1/topo_sort")[0].source == "batch batch1"
    assert grader_main(["policy", "clear", "--db", url]) == 0
    assert "counts: auto, pick: best" in capsys.readouterr().out
    assert ann(engine, "hw1/forward")[0].source == "batch batch1"


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", "--counts", "server"], "grader policy show: --counts is for `grader policy set`; leave it out"),
        (["set"], "grader policy set: give --counts and/or --pick (see grader policy --help)"),
        (
            ["set", "--pick", "last", "--question", "for ward"],
            "grader policy set: --question 'for ward': give a question key such as forward",
        ),
    ],
)
def test_a_bad_policy_command_is_one_line_and_changes_nothing(course, capsys, args, message):
    _, url, _ = course
    assert grader_main(["policy", *args, "--db", url]) == 2
    assert capsys.readouterr().err.strip() == message
    assert sqlite_rows(Path(url[len("sqlite:///") :]), "select name from settings where name like 'policy:%'") == []


def test_assignment_toml_declares_the_policy_and_a_wrong_one_names_its_field(tmp_path):
    toml = (REPO / "assignment.toml").read_text()
    for part in ("reference", "handout", "data", "grader/shipped/cases", "reference/tools/fetch_mnist.py"):
        toml = toml.replace(f'"{part}"', f'"{REPO / part}"', 1)
    (tmp_path / "assignment.toml").write_text(
        toml + '\n[policy]\ncounts = "server"\n[policy.questions.forward]\npick = "last"\n'
    )
    loaded = Assignment.load(tmp_path).policy
    assert loaded == Policy("server", "best", (("forward", "server", "last"),))
    assert loaded.of("forward") == ("server", "last") and loaded.of("topo_sort") == ("server", "best")
    with pytest.raises(
        AssignmentError,
        match=r"^a\.toml: field 'policy\.questions\.forward\.pick': 'first' is not "
        r"one of 'best', 'last'$",
    ):
        parse_policy({"questions": {"forward": {"pick": "first"}}}, "a.toml")
    with pytest.raises(AssignmentError, match=r"^a\.toml: unknown field 'policy\.count'; the fields are "):
        parse_policy({"count": "server"}, "a.toml")


def test_the_gradebook_page_names_the_source_and_shows_practice(course, tmp_path):
    engine, url, key = course
    engine.dispose()
    server = Server(tmp_path / "g.db").start()
    try:
        auth = {"Authorization": f"Bearer {key}"}
        page = requests.get(server.url + "gradebook", headers=auth, timeout=30).text
        row = page.split('data-name="ann"')[1].split("</tr>")[0]
        assert 'data-source="batch batch1" data-submission="b1"' in row
        assert "practice 100%, not counted" in row
        me = requests.get(server.url + "gradebook/student", params={"name": "ann"}, headers=auth, timeout=30).text
        assert "(batch batch1)" in me and "practice 100%, not counted" in me
        assert set_policy(url, "--counts", "server") == 0
        row = (
            requests.get(server.url + "gradebook", headers=auth, timeout=30)
            .text.split('data-name="ann"')[1]
            .split("</tr>")[0]
        )
        assert 'data-source="server"' in row
        me = requests.get(server.url + "gradebook/student", params={"name": "ann"}, headers=auth, timeout=30).text
        assert "(server)" in me and "practice 50%, not counted" in me  # the page cache follows the policy
    finally:
        server.stop()


def test_a_server_case_the_policy_calls_advisory_earns_no_points(course, capsys):
    """The grader scores implicit broadcasting as advisory (beyond the assignment); the server's
    case that checks it is declared so, and answering it wrong no longer costs points."""
    engine, url, _ = course
    from grader.server.gradebook import policy

    with engine.begin() as conn:
        policy.set_policy(
            conn,
            "hw1",
            parse_policy(
                {"counts": "server", "pick": "last", "questions": {"forward": {"advisory_server_cases": [1, 2]}}},
                "test",
            ),
        )
    cell, _, _ = ann(engine, "hw1/forward")  # the last submission: case 0 right, cases 1 and 2 wrong
    assert (cell.score, cell.correct, cell.total) == (1.0, 1, 1)
    with pytest.raises(
        AssignmentError,
        match=r"^t: field 'policy\.questions\.forward\.advisory_server_cases': "
        r"give a list of server case indexes",
    ):
        parse_policy({"questions": {"forward": {"advisory_server_cases": [-1]}}}, "t")
    assert parse_policy(Policy(advisory=(("forward", (1, 2)),)).to_dict(), "t").advisory_cases("forward") == {1, 2}
