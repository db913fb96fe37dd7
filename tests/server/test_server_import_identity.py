"""A batch is its assignment plus what its batch.json records, never an OUTDIR's
name: importing one assignment never changes another's results, importing the
same batch again (even moved or relabelled) changes nothing, and --dry-run
prints exactly what the import then writes."""

import hashlib
import shutil
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import db_rows, record_batch  # noqa: E402
from test_server_gradebook import ANN_BATCH, write_outdir  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.server.accounts import users as accounts  # noqa: E402
from grader.server.gradebook import scores as gradebook  # noqa: E402
from grader.server.store import migrate  # noqa: E402
from grader.server.store.db import engine_for, make_engine  # noqa: E402

pytestmark = pytest.mark.server

TABLES = ("batch_results", "batch_questions", "batch_cases", "batch_history")
PEOPLE = {"ann": ANN_BATCH, "ben": ANN_BATCH[:2], "cy": ANN_BATCH[2:]}


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'g.db'}"
    engine = make_engine(url)
    accounts.add_users(engine, [("prof", "instructor"), ("ann", "student"), ("ben", "student"), ("cy", "student")])
    engine.dispose()
    return url


def import_batch(db, outdir, *extra):
    return grader_main(["import-batch", str(outdir), "--db", db, *extra])


def everything(db) -> dict:
    return {t: db_rows(db, f"select * from {t} order by id") for t in TABLES}


def columns(db) -> list:
    engine = make_engine(db)
    with engine.connect() as conn:
        labels = [q.label for q in gradebook.build(conn).questions]
    engine.dispose()
    return labels


def test_importing_one_assignment_never_changes_another_s_results(db, tmp_path, capsys):
    """The red team's case: hw1 from one `out/`, then hw2 from another `out/`."""
    hw1 = write_outdir(tmp_path / "one" / "out", PEOPLE)
    hw2 = write_outdir(tmp_path / "two" / "out", PEOPLE)
    assert import_batch(db, hw1, "--assignment", "hw1") == 0
    before = everything(db)
    assert len(before["batch_results"]) == 3 and len(before["batch_cases"]) == 6
    assert import_batch(db, hw2, "--assignment", "hw2") == 0
    assert "3 new, 0 replaced, 0 unchanged" in capsys.readouterr().out
    after = everything(db)
    for table in TABLES:  # every hw1 row as it was, hw2's beside them
        assert after[table][: len(before[table])] == before[table], table
    assert sorted(a for (a,) in db_rows(db, "select assignment from batch_results")) == ["hw1"] * 3 + ["hw2"] * 3
    assert after["batch_history"] == []
    assert {"hw1/forward", "hw1/topo_sort", "hw2/forward", "hw2/topo_sort"} <= set(columns(db))
    # The same OUTDIR imported as another assignment is another batch too: hw1 untouched again.
    assert import_batch(db, hw1, "--assignment", "hw3") == 0
    assert everything(db)["batch_results"][:6] == after["batch_results"]


def test_two_outdirs_of_one_assignment_are_two_batches(db, tmp_path, capsys):
    first = write_outdir(tmp_path / "a" / "out", {"ann": ANN_BATCH})
    late = write_outdir(tmp_path / "b" / "out", {"ann": ANN_BATCH[:1]})
    assert import_batch(db, first) == 0 and import_batch(db, late) == 0
    assert "1 new, 0 replaced, 0 unchanged" in capsys.readouterr().out.splitlines()[-1]
    assert db_rows(db, "select name, score from batch_results order by id") == [("ann", 25.0), ("ann", 5.0)]


def test_the_same_batch_again_changes_nothing_even_moved_or_relabelled(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", PEOPLE)
    assert import_batch(db, out) == 0
    before = everything(db)
    capsys.readouterr()
    assert import_batch(db, out) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "no score changes",
        f"imported 3 results from {out} as 'out': 0 new, 0 replaced, 3 unchanged",
    ]
    moved = tmp_path / "renamed"
    shutil.move(out, moved)  # batch.json still names the submissions it graded
    assert import_batch(db, moved, "--source", "another label") == 0
    assert "0 new, 0 replaced, 3 unchanged" in capsys.readouterr().out
    assert everything(db) == before  # not one row rewritten, imported_at included


def test_a_dry_run_prints_exactly_what_the_import_writes(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", PEOPLE)
    assert import_batch(db, out) == 0
    write_outdir(
        out,
        {
            "ann": [ANN_BATCH[0], ("forward_exp", "forward", "Q1.2", 5.0, 5.0, "Exp ok"), ANN_BATCH[2]],
            "ben": ANN_BATCH[:2] + [("forward_x", "forward", "Q1.3", 0.0, 0.0, "extra")],
        },
    )
    capsys.readouterr()
    before = everything(db)
    assert import_batch(db, out, "--dry-run") == 0
    dry = capsys.readouterr().out.splitlines()
    assert everything(db) == before  # a dry run writes nothing
    assert import_batch(db, out) == 0
    real = capsys.readouterr().out.splitlines()
    assert (
        dry[:-1]
        == real[:-1]
        == [
            f"assignment 'hw1', batch 'out' (graded from {out}-submissions): 0 new, 2 replaced, 1 unchanged",
            "1 student(s) with new scores (old -> new):",
            "  ann   25.00 -> 30.00   (forward 5.00 -> 10.00)",
            "1 regraded result(s) with the same scores: ben",
        ]
    )
    assert dry[-1].startswith("dry run: nothing imported")
    assert db_rows(db, "select name, score from batch_history order by id") == [("ann", 25.0), ("ben", 5.0)]


def test_an_outdir_without_batch_json_is_refused_naming_the_fix(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", PEOPLE)
    (out / "batch.json").unlink()
    assert import_batch(db, out) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"grader import-batch: {out / 'batch.json'}: missing")
    assert f"run `grader grade-batch DIR --out {out}` once" in err
    assert everything(db)["batch_results"] == []


def test_results_imported_before_batches_had_an_identity_are_taken_over_by_their_label(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    out = write_outdir(tmp_path / "out", {"ann": ANN_BATCH})
    digest = hashlib.sha256((out / "ann" / "results.json").read_bytes()).hexdigest()
    engine = engine_for(url)
    migrate.upgrade(engine, "0006")
    with engine.begin() as conn:
        conn.execute(
            text(
                "insert into users (id, name, role, key_hash, created_at) values "
                "(1, 'ann', 'student', 'h', '2026-01-01 00:00:00')"
            )
        )
        conn.execute(text("insert into usage (user_id, stored_bytes) values (1, 0)"))
        conn.execute(
            text(
                "insert into batch_results (source, name, assignment, digest, graded_at, imported_at, "
                f"score, output) values ('out', 'ann', 'hw1', '{digest}', '2026-01-01 00:00:00', "
                "'2026-01-01 00:00:00', 25.0, '')"
            )
        )
    engine.dispose()
    assert import_batch(url, out) == 0
    assert "0 new, 0 replaced, 1 unchanged" in capsys.readouterr().out
    ((batch,),) = db_rows(url, "select batch from batch_results")
    assert batch.startswith("run:")  # now its batch's: the next import finds it by batch.json
    record_batch(out, "/elsewhere")  # another batch of hw1 under the same label: its own results
    assert import_batch(url, out) == 0 and "1 new, 0 replaced, 0 unchanged" in capsys.readouterr().out
