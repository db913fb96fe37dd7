"""Gradebook arithmetic on a database filled directly: best submission, late
flag, weighted total, histogram bins, pass rate per case, CSV."""
import pytest

from grader.server import accounts, gradebook, store
from grader.server.db import make_engine


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'g.db'}")
    accounts.add_users(engine, [("prof", "instructor"), ("ann", "student"), ("ben", "student"),
                                ("cat", "student"), ("dan", "student")])
    with engine.begin() as conn:
        store.publish_job("hw1", "p", 1, [1, 2, 3, 4, 5], 1e-5, 1e-5, 3.0, None)(conn)
        store.publish_job("hw1", "q", 1, [1, 2], 1e-5, 1e-5, 1.0, None)(conn)
    yield engine
    engine.dispose()


def attempt(engine, user_id, problem, correct, late=False):
    """A submission of `problem` whose cases in `correct` (indexes) were right."""
    with engine.begin() as conn:
        sub = store.submission_job("hw1", problem, user_id)(conn)
        if late:
            conn.exec_driver_sql("update submissions set late = 1 where id = ?", (sub.id,))
        store.insert_cases(conn, [store.CaseWrite(sub.id, i, i in correct, str(i), None)
                                  for i in range(sub.num_cases)])


def test_best_submission_late_flag_total_histogram_and_pass_rates(engine):
    ann, ben, cat = 2, 3, 4
    attempt(engine, ann, "p", {0, 1, 2, 3, 4})
    attempt(engine, ann, "p", {0})            # a worse later try does not lower the score
    attempt(engine, ann, "q", {0})
    attempt(engine, ben, "p", {0, 1})
    attempt(engine, ben, "p", {0, 1, 2}, late=True)  # the best only came late: flagged
    attempt(engine, cat, "q", {0, 1})
    with engine.connect() as conn:
        book = gradebook.build(conn)
    rows = {r.name: r for r in book.rows}
    assert [p.label for p in book.problems] == ["hw1/p", "hw1/q"]
    assert [c.score for c in rows["ann"].cells] == [1.0, 0.5]
    assert rows["ben"].cells[0] == gradebook.Cell(0.6, 3, 5, late=True)
    assert rows["dan"].cells == (gradebook.Cell(None), gradebook.Cell(None))
    assert rows["ann"].total == 87.5  # (3 * 1.0 + 1 * 0.5) / 4
    assert set(rows) == {"ann", "ben", "cat", "dan"}  # instructors are not graded
    # bins 0-19, 20-39, 40-59, 60-79, 80-99, 100, then never submitted
    assert book.histograms[0] == (0, 0, 0, 1, 0, 1, 2)
    assert book.histograms[1] == (0, 0, 1, 0, 0, 1, 2)
    # p: ann and ben tried; case 0 both passed, case 3 only ann
    assert book.pass_rates[0] == ((0, 1.0), (1, 1.0), (2, 1.0), (3, 0.5), (4, 0.5))
    assert book.pass_rates[1] == ((0, 1.0), (1, 0.5))
    assert gradebook.to_csv(book).splitlines() == [
        "name,hw1/p,hw1/q,total,late", "ann,100.00,50.00,87.50,", "ben,60.00,,45.00,hw1/p",
        "cat,,100.00,25.00,", "dan,,,0.00,"]


def test_one_students_view_has_only_their_row_and_history(engine):
    attempt(engine, 2, "p", {1})
    attempt(engine, 3, "q", {0, 1})
    with engine.connect() as conn:
        book = gradebook.build(conn, user_id=2)
        history = gradebook.history(conn, 2)
    assert [r.name for r in book.rows] == ["ann"]
    assert [(a.problem, a.correct, a.answered, a.total) for a in history] == [("hw1/p", 1, 5, 5)]
