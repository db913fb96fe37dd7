"""Gradebook arithmetic on a real SQLite file filled directly: best submission,
late flag, weighted total, histogram, mean and median, cases ranked by
failure rate with their names, CSV; grade-batch results imported beside the
server's submissions; every case's reason on a student's page."""

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import record_batch  # noqa: E402

from grader.cli import main as grader_main
from grader.grading.report import results as report  # noqa: E402
from grader.server.accounts import users as accounts
from grader.server.gradebook import case_counts, declared, details, load
from grader.server.gradebook import scores as gradebook
from grader.server.store import protocol as store
from grader.server.store.db import make_engine
from grader.server.web import casenotes
from grader.shipped.cases import CASES, QUESTION, QUESTIONS


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'g.db'}")
    accounts.add_users(
        engine, [("prof", "instructor"), ("ann", "student"), ("ben", "student"), ("cat", "student"), ("dan", "student")]
    )
    with engine.begin() as conn:
        store.publish_job("hw1", "p", 1, [1, 2, 3, 4, 5], 1e-5, 1e-5, 3.0, None)(conn)
        store.publish_job("hw1", "q", 1, [1, 2], 1e-5, 1e-5, 1.0, None)(conn)
    yield engine
    engine.dispose()


def attempt(engine, user_id, problem, correct, late=False):
    """A submission of `problem` whose cases in `correct` (indexes) were right."""
    with engine.begin() as conn:
        sub = store.submission_job("hw1", problem, user_id)(conn)
        store.insert_cases(
            conn,
            [
                store.CaseWrite(sub.id, i, i in correct, str(i), json.dumps(0 if i not in correct else i + 1))
                for i in range(sub.num_cases)
            ],
        )
        if late:  # the question's deadline is in 2098 and these answers arrived in 2099: judged late when read
            conn.exec_driver_sql(
                "update problems set deadline = '2098-01-01 00:00:00.000000' where name = ?", (problem,)
            )
            conn.exec_driver_sql(
                "update case_results set created_at = '2099-01-01 00:00:00.000000' where submission_id = ?", (sub.id,)
            )


def build(engine, student=None):
    with engine.connect() as conn:
        return gradebook.build(conn, student)


def test_best_submission_late_flag_total_histogram_mean_median(engine):
    ann, ben, cat = 2, 3, 4
    attempt(engine, ann, "p", {0, 1, 2, 3, 4})
    attempt(engine, ann, "p", {0})  # a worse later try does not lower the score
    attempt(engine, ann, "q", {0})
    attempt(engine, ben, "p", {0, 1})
    attempt(engine, ben, "p", {0, 1, 2}, late=True)  # the best only came late: flagged
    attempt(engine, cat, "q", {0, 1})
    book = build(engine)
    rows = {r.name: r for r in book.rows}
    assert [q.label for q in book.questions] == ["hw1/p", "hw1/q"]
    assert [c.score for c in rows["ann"].cells] == [1.0, 0.5]
    assert rows["ben"].cells[0] == gradebook.Cell(0.6, 3, 5, late=True)
    assert rows["dan"].cells == (gradebook.Cell(None), gradebook.Cell(None)) and rows["dan"].last is None
    assert rows["ann"].total == 87.5  # (3 * 1.0 + 1 * 0.5) / 4
    assert set(rows) == {"ann", "ben", "cat", "dan"}  # instructors are not graded
    # bins 0-19, 20-39, 40-59, 60-79, 80-99, 100, then never submitted
    assert book.stats[0].histogram == (0, 0, 0, 1, 0, 1, 2)
    assert book.stats[1].histogram == (0, 0, 1, 0, 0, 1, 2)
    assert (book.stats[0].mean, book.stats[0].median, book.stats[0].submitted) == (0.8, 0.8, 2)
    assert book.stats[1].mean == 0.75
    assert rows["ann"].sources == ("server",) and rows["ann"].last is not None
    assert book.times[0][0] == "hw1" and len(book.times[0][2]) == 6


def test_cases_are_ranked_by_failure_rate_with_their_names(engine):
    attempt(engine, 2, "p", {0, 1, 2, 3})
    attempt(engine, 3, "p", {0, 1})
    with engine.begin() as conn:
        assert casenotes.notes_job(1, [(f"op{i}", f"ndl.op{i}(x)") for i in range(5)])(conn) is None
    rates = build(engine).stats[0].cases
    # case 4: both failed; cases 2, 3: one of two; cases 0, 1: nobody failed
    assert [(r.name, r.failed, r.tried) for r in rates] == [
        ("case 4: op4", 2, 2),
        ("case 2: op2", 1, 2),
        ("case 3: op3", 1, 2),
        ("case 0: op0", 0, 2),
        ("case 1: op1", 0, 2),
    ]
    assert rates[0].description == "ndl.op4(x)" and rates[0].rate == 1.0
    # without notes a case is named by its index only
    assert [r.name for r in build(engine).stats[1].cases] == []


def test_csv_keeps_its_columns_and_the_full_export_adds_time_and_source(engine):
    attempt(engine, 2, "p", {0, 1, 2, 3, 4})
    attempt(engine, 3, "p", {0, 1, 2}, late=True)
    book = build(engine)
    # ben's only attempt started late: it scores, but his on-time total is 0
    assert gradebook.to_csv(book).splitlines() == [
        "name,hw1/p,hw1/q,total,on-time total,late,needs attention",
        "ann,100.00,,75.00,75.00,,",
        "ben,60.00,,45.00,0.00,hw1/p,",
        "cat,,,0.00,0.00,,",
        "dan,,,0.00,0.00,,",
    ]
    full = gradebook.to_csv(book, full=True).splitlines()
    assert full[0] == "name,hw1/p,hw1/q,total,on-time total,late,needs attention,last submission,sources,counted"
    assert full[1].startswith("ann,100.00,,75.00,75.00,,,20") and full[1].endswith(" UTC,server,hw1/p: server s1")
    assert full[3] == "cat,,,0.00,0.00,,,,,"


def test_one_students_page_recomputes_each_wrong_cases_reason(engine):
    with engine.begin() as conn:
        store.publish_job(
            "hw1", "r", 1, [{"_encoded_type": "np.ndarray", "data": [1.0, 2.0]}, 3.0], 1e-5, 1e-5, None, None
        )(conn)
        casenotes.notes_job(3, [("matmul", "ndl.matmul(A, B)"), ("exp", "ndl.exp(x)")])(conn)
        sub = store.submission_job("hw1", "r", 2)(conn)
        store.insert_cases(
            conn,
            [store.CaseWrite(sub.id, 0, False, "x", json.dumps({"_encoded_type": "np.ndarray", "data": [1.0, 2.5]}))],
        )
    with engine.connect() as conn:
        subs = details.submissions(conn, "ann")
        assert details.submissions(conn, "ben") == ()
    assert len(subs) == 1 and subs[0].attempt.question == "hw1/r"
    first, second = subs[0].cases
    assert (first.label, first.name, first.description, first.passed) == ("case 0", "matmul", "ndl.matmul(A, B)", False)
    assert first.reason.startswith("value: values differ beyond tolerance")
    assert (second.name, second.reason) == ("exp", "not answered")


def results_json(cases, output="needle hw1"):
    cases = tuple(report.CaseResult(n, q, num, s, m, s == m, out, False) for n, q, num, s, m, out in cases)
    return report.gradescope_json(report.Report("x", cases, report.question_scores(cases, QUESTIONS), "bwrap", 1.0))


ANN_BATCH = [
    ("forward_divide", "forward", "Q1.1", 5.0, 5.0, "EWiseDiv ok"),
    ("forward_exp", "forward", "Q1.2", 0.0, 5.0, "Exp: values differ (max error 3e-01)"),
    ("topo_sort_chain", "topo_sort", "Q3.1", 20.0, 20.0, "chain ok"),
]


def write_outdir(root, people):
    for name, cases in people.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "results.json").write_text(results_json(cases))
    (root / "gradebook.csv").write_text("ignored\n")
    if not (root / "batch.json").exists():
        record_batch(root)
    return root


def import_batch(tmp_path, outdir, *extra):
    return grader_main(["import-batch", str(outdir), "--db", f"sqlite:///{tmp_path / 'g.db'}", *extra])


def test_imported_results_join_the_server_gradebook_idempotently(engine, tmp_path, capsys):
    attempt(engine, 2, "p", {0})
    out = write_outdir(tmp_path / "batch1", {"ann": ANN_BATCH, "zed": ANN_BATCH[:1]})
    assert import_batch(tmp_path, out) == 1  # zed has no account: nothing is imported
    assert "1 result folder(s) match no student account: zed;" in capsys.readouterr().err
    assert [r.name for r in build(engine).rows] == ["ann", "ben", "cat", "dan"]
    assert import_batch(tmp_path, out, "--create-missing") == 0
    printed = capsys.readouterr().out
    assert "2 new, 0 replaced, 0 unchanged" in printed and "created 1 student account(s)" in printed
    book = build(engine)
    labels = [q.label for q in book.questions]
    assert labels == [f"hw1/{q}" for q in QUESTION] + ["hw1/p", "hw1/q"]  # the handout's order first
    rows = {r.name: r for r in book.rows}
    assert rows["ann"].sources == ("batch batch1", "server")  # one row: account and folder share the name
    topo = labels.index("hw1/topo_sort")
    assert rows["ann"].cells[0] == gradebook.Cell(0.5, 1, 2) and rows["ann"].cells[topo].score == 1.0
    assert rows["zed"].user_id is not None and rows["zed"].cells[topo] == gradebook.Cell(0.0, 0, 0)
    # weights: the imported questions' points (100 in all), then the server weights 3 and 1
    assert rows["ann"].total == round(100 * (10 * 0.5 + 20 * 1.0 + 3 * 0.2) / 104, 2)
    forward = book.stats[0].cases
    assert forward[0].name == "forward_exp" and forward[0].rate == 1.0 and forward[0].source == "batch"
    assert forward[0].description.startswith("Exp:")  # the grader's own description of the case
    before = gradebook.to_csv(book)
    assert import_batch(tmp_path, out) == 0 and "0 new, 0 replaced, 2 unchanged" in capsys.readouterr().out
    assert gradebook.to_csv(build(engine)) == before
    write_outdir(out, {"zed": ANN_BATCH})  # regraded: replaces zed's earlier import
    assert import_batch(tmp_path, out) == 0 and "0 new, 1 replaced, 1 unchanged" in capsys.readouterr().out
    assert {r.name: r for r in build(engine).rows}["zed"].cells[topo].score == 1.0
    with engine.connect() as conn:
        subs = details.submissions(conn, "ann")
    imported = [s for s in subs if s.attempt.source == "batch batch1" and s.attempt.question == "hw1/forward"]
    assert [(c.label, c.passed, c.reason) for c in imported[0].cases] == [
        ("Q1.1", True, ""),
        ("Q1.2", False, "Exp: values differ (max error 3e-01)"),
    ]


def test_the_grader_s_own_results_import_as_they_are(engine, tmp_path, capsys):
    """The golden results.json of the report writer, and of a submission the grader failed on."""
    golden = Path(__file__).parents[1] / "golden" / "report"
    for name, source in (("alice", golden / "results.json"), ("bob", golden / "error" / "results.json")):
        (tmp_path / "out" / name).mkdir(parents=True)
        shutil.copyfile(source, tmp_path / "out" / name / "results.json")
    record_batch(tmp_path / "out")
    assert import_batch(tmp_path, tmp_path / "out", "--create-missing") == 0, capsys.readouterr().err
    rows = {r.name: r for r in build(engine).rows}
    assert (
        round(sum(q.weight * (c.score or 0) for q, c in zip(build(engine).questions, rows["alice"].cells)), 2) == 18.33
    )
    assert [c.score for c in rows["bob"].cells[:6]] == [0.0] * 6
    assert import_batch(tmp_path, tmp_path / "out", "--assignment", " ") == 2


def test_the_gradebook_reads_an_assignment_s_questions_from_its_registry_else_from_its_results(engine, tmp_path):
    """hw1 (this installation's assignment.toml): the handout's order and the registry's descriptions; an
    assignment the server has no registry for: questions by name, a case described by a passing run only."""
    assert declared.of("hw1").questions == tuple(QUESTION)
    assert declared.of("hw9") == declared.Declared()
    assert sorted(["hw9/b", "hw9/a", "hw1/backward", "hw1/forward"], key=load.question_order) == [
        "hw1/forward",
        "hw1/backward",
        "hw9/a",
        "hw9/b",
    ]
    for assignment in ("hw1", "hw9"):
        out = write_outdir(tmp_path / assignment, {"ann": ANN_BATCH})
        assert import_batch(tmp_path, out, "--assignment", assignment) == 0
    with engine.connect() as conn:
        notes = case_counts.batch_case_notes(conn)
        imported = {
            s.attempt.question: s.cases for s in details.submissions(conn, "ann") if s.attempt.source != "server"
        }
    registry = {c.name: c.description for c in CASES}
    assert notes[("hw1/forward", "forward_exp")] == ("forward_exp", registry["forward_exp"])
    assert notes[("hw9/forward", "forward_exp")] == ("forward_exp", "")  # failed, and no registry describes it
    assert notes[("hw9/forward", "forward_divide")] == ("forward_divide", "EWiseDiv ok")
    assert [c.description for c in imported["hw1/forward"]] == [registry["forward_divide"], registry["forward_exp"]]
    assert [c.description for c in imported["hw9/forward"]] == ["EWiseDiv ok", ""]


def corrupt(doc, path, value):
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("score",), "12", "score: must be a finite number >= 0"),
        (("score",), 99.0, "score: 99 is not the sum of extra_data.questions scores"),
        (("tests", 1, "score"), 6.0, "tests[1].score: 6 is more than its maximum 5"),
        (("tests", 0, "status"), "ok", "tests[0].status: must be one of passed, failed"),
        (("tests", 0, "name"), "bogus_case", "tests[0].name 'bogus_case': starts with no question"),
        (("tests", 2, "output"), 7, "tests[2].output: must be a string"),
        (("tests", 0, "max_score"), float("inf"), "tests[0].max_score: must be a finite number"),
        (("extra_data",), KeyError, "extra_data.questions: missing"),
        (("extra_data", "questions", "forward", "max_score"), 0, "forward.max_score: must be more than 0"),
        (("tests",), {"a": 1}, "tests: must be a list"),
    ],
)
def test_a_bad_results_json_stops_the_import_naming_file_and_field(engine, tmp_path, capsys, path, value, message):
    out = write_outdir(tmp_path / "batch", {"ann": ANN_BATCH, "bob": ANN_BATCH})
    target = out / "bob" / "results.json"
    target.write_text(json.dumps(corrupt(json.loads(target.read_text()), path, value)))
    assert import_batch(tmp_path, out) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(target) in err and message in err, err
    assert [r.name for r in build(engine).rows] == ["ann", "ben", "cat", "dan"]  # nothing imported, not even ann


def test_import_refuses_missing_folders_files_and_databases(engine, tmp_path, capsys):
    assert import_batch(tmp_path, tmp_path / "nope") == 1
    assert "not a folder; pass the --out folder of grader grade-batch" in capsys.readouterr().err
    out = write_outdir(tmp_path / "batch", {"ann": ANN_BATCH})
    (out / "half").mkdir()
    assert import_batch(tmp_path, out) == 1
    assert "half/results.json: missing" in capsys.readouterr().err
    (out / "half" / "results.json").write_text("{not json")
    assert import_batch(tmp_path, out) == 1
    assert "half/results.json: not valid JSON" in capsys.readouterr().err
    code = grader_main(["import-batch", str(out), "--db", f"sqlite:///{tmp_path / 'other.db'}"])
    assert code == 2 and "no database at" in capsys.readouterr().err
    assert not (tmp_path / "other.db").exists()


def test_notes_must_match_the_publication(engine):
    with engine.begin() as conn:
        assert casenotes.notes_job(2, [("a", "")])(conn) == "publication 2 has 2 cases, got 1 notes"
        assert casenotes.notes_job(9, [("a", "")])(conn).startswith("no publication 9")
        assert casenotes.notes_job(2, [("a", ""), ("b", "")])(conn) is None
        assert casenotes.notes_job(2, [("a", ""), ("b", "")])(conn) is None  # a retry is fine
        assert "already has other notes" in casenotes.notes_job(2, [("a", ""), ("c", "")])(conn)
    for body in (
        b"",
        b"{}",
        b"[]",
        b'[{"name": ""}]',
        b'[{"name": "x", "description": 3}]',
        json.dumps([{"name": "x" * 101}]).encode(),
    ):
        with pytest.raises(Exception) as info:
            casenotes.parse_notes(body)
        assert info.value.status == 400
    assert casenotes.parse_notes(b'[{"name": " exp ", "description": "ndl.exp(x)"}]') == [("exp", "ndl.exp(x)")]


CALC = "=cmd|' /C calc'!A0"


def test_csv_defuses_formula_names(engine):
    accounts.add_users(engine, [("=cmd", "student"), (CALC, "student"), ("-1", "student"), ("@SUM(1)", "student")])
    attempt(engine, 7, "p", {0, 1, 2})  # user 7 is CALC (prof, ann, ben, cat, dan, =cmd, CALC, ...)
    lines = gradebook.to_csv(build(engine), full=True).splitlines()
    assert lines[1] == "'-1,,,0.00,0.00,,,,,"
    assert lines[2] == "'=cmd,,,0.00,0.00,,,,,"
    assert lines[3].startswith("'=cmd|' /C calc'!A0,60.00,,45.00,45.00,,,20")
    assert lines[3].endswith(" UTC,server,hw1/p: server s1")
    assert lines[4] == "'@SUM(1),,,0.00,0.00,,,,,"
