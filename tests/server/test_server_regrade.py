"""Importing a regrade: `import-batch --dry-run` prints each student's old and
new scores and writes nothing; the import prints the same, keeps the
replaced scores in batch_history, and the gradebook marks the regraded
cells; a database at the previous revision is upgraded with its data."""

import json
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import db_rows  # noqa: E402
from test_server_gradebook import ANN_BATCH, write_outdir  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.server.gradebook import batch_identity, import_plan, importer  # noqa: E402
from grader.server.gradebook import scores as gradebook  # noqa: E402
from grader.server.store import migrate  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402
from grader.server.web import templates  # noqa: E402

REGRADED = [ANN_BATCH[0], ("forward_exp", "forward", "Q1.2", 5.0, 5.0, "Exp ok"), ANN_BATCH[2]]


def import_batch(db, outdir, *extra):
    return grader_main(["import-batch", str(outdir), "--db", db, *extra])


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'g.db'}"
    make_engine(url).dispose()
    return url


def book(url, student=None):
    engine = make_engine(url)
    with engine.connect() as conn:
        built = gradebook.build(conn, student)
    engine.dispose()
    return built


def test_a_regrade_shows_old_and_new_before_importing_and_keeps_history(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "batch1", {"ann": ANN_BATCH, "zed": ANN_BATCH})
    assert import_batch(db, out, "--create-missing") == 0
    first = capsys.readouterr().out
    assert "2 student(s) with new scores" in first and "ann       - -> 25.00   (new)" in first
    write_outdir(out, {"ann": REGRADED})  # ann's Q1.2 now passes: 25 -> 30
    assert import_batch(db, out, "--dry-run") == 0
    dry = capsys.readouterr().out.splitlines()
    assert dry == [
        f"assignment 'hw1', batch 'batch1' (graded from {out}-submissions): 0 new, 1 replaced, 1 unchanged",
        "1 student(s) with new scores (old -> new):",
        "  ann   25.00 -> 30.00   (forward 5.00 -> 10.00)",
        f"dry run: nothing imported; run the same command without --dry-run to import 2 results from {out} as 'batch1'",
    ]
    assert db_rows(db, "select score from batch_results where name = 'ann'") == [(25.0,)]  # nothing written
    assert db_rows(db, "select count(*) from batch_history") == [(0,)]

    assert import_batch(db, out) == 0
    real = capsys.readouterr().out.splitlines()
    assert real[:3] == dry[:3] and "0 new, 1 replaced, 1 unchanged" in real[3]
    assert db_rows(db, "select score from batch_results where name = 'ann'") == [(30.0,)]
    ((name, score, questions),) = db_rows(db, "select name, score, questions from batch_history")
    assert (name, score) == ("ann", 25.0)  # the old scores stay
    assert json.loads(questions)["forward"] == [5.0, 10.0] and json.loads(questions)["topo_sort"] == [20.0, 20.0]

    built = book(db)
    rows = {r.name: r for r in built.rows}
    forward = [q.label for q in built.questions].index("hw1/forward")
    assert rows["ann"].cells[forward].score == 1.0 and rows["ann"].cells[forward].previous == 0.5
    assert all(c.previous is None for c in rows["zed"].cells)
    assert all(c.previous is None for i, c in enumerate(rows["ann"].cells) if i != forward)  # unchanged cells
    page = templates.render("gradebook", book=built, timelines=[], histograms=[""] * len(built.questions))
    assert page.count('class="regraded"') == 1 and 'title="regraded: was 50%"' in page
    assert import_batch(db, out) == 0
    assert "0 new, 0 replaced, 2 unchanged\nno score changes\n" in capsys.readouterr().out


def _imported(name, score, questions, digest="d"):
    return importer.Imported(name, digest, None, score, "", tuple((k, s, 100.0) for k, s in questions), ())


def test_the_plan_renders_as_plain_text():
    who = batch_identity.BatchIdentity("hw1", "run:x", "out", "/subs")
    planned = [
        import_plan.Planned(_imported("bob", 40.0, [("square", 40.0)]), import_plan.NEW, None),
        import_plan.Planned(
            _imported("al", 40.0, [("square", 0.0)]),
            import_plan.REPLACED,
            import_plan.Stored(1, "run:x", "old", 100.0, (("square", 60.0),)),
        ),
        import_plan.Planned(
            _imported("cy", 5.0, [("square", 5.0)]),
            import_plan.REPLACED,
            import_plan.Stored(2, "run:x", "old", 5.0, (("square", 5.0),)),
        ),
        import_plan.Planned(
            _imported("di", 5.0, [("square", 5.0)]),
            import_plan.UNCHANGED,
            import_plan.Stored(3, "run:x", "d", 5.0, (("square", 5.0),)),
        ),
    ]
    assert import_plan.render(who, planned).splitlines() == [
        "assignment 'hw1', batch 'out' (graded from /subs): 1 new, 2 replaced, 1 unchanged",
        "2 student(s) with new scores (old -> new):",
        "  al   100.00 -> 40.00   (square 60.00 -> 0.00)",
        "  bob       - -> 40.00   (new)",
        "1 regraded result(s) with the same scores: cy",
    ]


def test_a_database_at_the_previous_revision_keeps_its_imports(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    migrate.upgrade(engine, "0003")
    with engine.begin() as conn:
        conn.execute(
            text(
                "insert into batch_results (source, name, assignment, digest, graded_at, imported_at, "
                "score, output) values ('b', 'ann', 'hw1', 'd', '2026-01-01 00:00:00', "
                "'2026-01-01 00:00:00', 25.0, '')"
            )
        )
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.head() and migrate.head() >= "0004"
    engine.dispose()
    assert db_rows(url, "select name, score from batch_results") == [("ann", 25.0)]
    assert db_rows(url, "select count(*) from batch_history") == [(0,)]
