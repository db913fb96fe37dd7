"""The gradebook's queries on PostgreSQL (stricter than SQLite about grouping):
server submissions, case notes and an imported grade-batch result together."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_server_postgres import postgres_url  # noqa: E402,F401  (the throwaway cluster fixture)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import record_batch  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.grading.report import results as report  # noqa: E402
from grader.server.accounts import users as accounts  # noqa: E402
from grader.server.gradebook import details  # noqa: E402
from grader.server.gradebook import scores as gradebook  # noqa: E402
from grader.server.store import protocol as store  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402
from grader.server.web import casenotes  # noqa: E402
from grader.shipped.cases import QUESTIONS  # noqa: E402

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_gradebook_with_imports_on_postgresql(postgres_url, tmp_path, capsys):  # noqa: F811
    engine = make_engine(postgres_url)
    try:
        accounts.add_users(engine, [("prof", "instructor"), ("ann", "student"), ("ben", "student")])
        with engine.begin() as conn:
            pid = store.publish_job("hw1", "forward", 1, [1.0, 2.0], 1e-5, 1e-5, 10.0, None)(conn)
            assert casenotes.notes_job(pid, [("matmul", "ndl.matmul(A, B)"), ("exp", "ndl.exp(x)")])(conn) is None
            for uid, values in ((2, [1.0, 2.0]), (3, [1.0, 5.0])):
                sub = store.submission_job("hw1", "forward", uid)(conn)
                store.insert_cases(
                    conn,
                    [
                        store.CaseWrite(sub.id, i, v == [1.0, 2.0][i], str(v), json.dumps(v))
                        for i, v in enumerate(values)
                    ],
                )
        cases = (report.CaseResult("forward_exp", "forward", "Q1.1", 0.0, 10.0, False, "Exp: off", False),)
        (tmp_path / "out" / "cy").mkdir(parents=True)
        (tmp_path / "out" / "cy" / "results.json").write_text(
            report.gradescope_json(report.Report("cy", cases, report.question_scores(cases, QUESTIONS), "bwrap", 1.0))
        )
        record_batch(tmp_path / "out")
        for _ in range(2):  # the second import changes nothing
            assert grader_main(["import-batch", str(tmp_path / "out"), "--db", postgres_url, "--create-missing"]) == 0
        assert "0 new, 0 replaced, 1 unchanged" in capsys.readouterr().out
        with engine.connect() as conn:
            book = gradebook.build(conn)
            ben = details.submissions(conn, "ben")
        rows = {r.name: r for r in book.rows}
        # forward has a sandboxed grade (cy's): under the default policy it counts, the server's cases are practice
        assert set(rows) == {"ann", "ben", "cy"} and rows["ben"].cells[0].score is None
        assert rows["ben"].cells[0].practice == 0.5
        assert rows["cy"].sources == ("batch out",) and rows["cy"].cells[0].score == 0.0
        rates = {r.name: (r.failed, r.tried) for r in book.stats[0].cases}
        assert rates == {"case 0: matmul": (0, 2), "case 1: exp": (1, 2), "forward_exp": (1, 1)}
        assert [(c.name, c.reason) for c in ben[0].cases] == [
            ("matmul", ""),
            ("exp", "value: wrong number (tolerance rtol=1e-05, atol=1e-05)"),
        ]
    finally:
        engine.dispose()
