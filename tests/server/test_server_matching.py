"""`import-batch` matches result folders to student accounts (by mapping file, name,
e-mail, key, or a name differing only in case and separators), lists the folders that
match nobody and creates nobody unless asked; a bad mapping file is one line naming
file, line and fix."""

from pathlib import Path

import pytest
from test_server_gradebook import ANN_BATCH, write_outdir

from grader.cli import main as grader_main
from grader.server.accounts import users
from grader.server.gradebook import matching
from grader.server.gradebook import scores as gradebook
from grader.server.store.db import make_engine

ACCOUNTS = [
    matching.Account("Alice Ref", "alice@uni.edu", users.hash_key("mg_alicekey")),
    matching.Account("Bob Stone", "bob@uni.edu", users.hash_key("mg_bobkey")),
    matching.Account("Jo Li", None, "x"),
    matching.Account("jo_li", None, "y"),
    matching.Account("carol", None, "z"),
]


def match(folders, mapping=None):
    return matching.match_folders(folders, ACCOUNTS, mapping or {}, users.hash_key, Path("map.csv"))


def test_each_rule_matches_and_similar_names_need_one_fit():
    found, unmatched = match(["carol", "ALICE@uni.edu", "mg_bobkey", "jo_li", "JoLi", "zed"])
    assert [(m.folder, m.user, m.how) for m in found] == [
        ("carol", "carol", matching.BY_NAME),
        ("ALICE@uni.edu", "Alice Ref", matching.BY_EMAIL),
        ("mg_bobkey", "Bob Stone", matching.BY_KEY),
        ("jo_li", "jo_li", matching.BY_NAME),
    ]
    assert unmatched == ("JoLi", "zed")  # JoLi fits two accounts, Jo Li and jo_li: nobody guesses
    found, _ = match(["alice_ref", "bob-stone", " Carol."])
    assert [(m.user, m.how) for m in found] == [
        ("Alice Ref", matching.BY_SIMILAR_NAME),
        ("Bob Stone", matching.BY_SIMILAR_NAME),
        ("carol", matching.BY_SIMILAR_NAME),
    ]


def test_the_mapping_file_comes_first_and_must_name_an_account():
    found, unmatched = match(["carol", "gh-zed"], {"carol": ("Bob Stone", 2), "gh-zed": ("alice@UNI.edu", 3)})
    assert [(m.user, m.how) for m in found] == [("Bob Stone", matching.BY_MAPPING), ("Alice Ref", matching.BY_MAPPING)]
    with pytest.raises(matching.MappingError, match=r"^map.csv:3: user 'Zed' is no account's name or e-mail; "):
        match(["gh-zed"], {"gh-zed": ("Zed", 3)})


def test_two_folders_for_one_student_are_refused():
    with pytest.raises(matching.MappingError, match="folders 'carol' and 'CAROL' both match student 'carol'"):
        match(["carol", "CAROL"])


def test_render_matches_shows_what_to_check_and_never_a_key():
    found, unmatched = match(["carol", "alice_ref", "mg_bobkey", "zed"])
    text = matching.render_matches(found, unmatched, create=False)
    assert text.splitlines() == [
        "2 folder(s) matched a student by other than exact name:",
        "  alice_ref -> Alice Ref (by similar name)",
        "  mg_bo... -> Bob Stone (by key)",
        "1 folder(s) matching no student: zed",
    ]
    assert "new student account(s) to create: zed" in matching.render_matches(found, unmatched, create=True)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "folder,user\nalice_ref\n",
            "map.csv:2: expected 2 columns `folder,user`, got 1 ('alice_ref'); write e.g. alice_ref,Alice Ref",
        ),
        ("a,b,c\n", "map.csv:1: expected 2 columns `folder,user`, got 3"),
        ("x,Alice Ref\n\nx,Bob Stone\n", "map.csv:3: folder 'x' is mapped twice (first on line 1); keep one line"),
        (",Alice Ref\n", "map.csv:1: expected 2 columns `folder,user`, got 2"),
    ],
)
def test_a_bad_mapping_file_names_file_line_and_fix(tmp_path, text, message):
    path = tmp_path / "map.csv"
    path.write_text(text)
    with pytest.raises(matching.MappingError) as info:
        matching.read_mapping(path)
    assert str(info.value).startswith(str(path) + message[len("map.csv") :])


def test_a_mapping_file_reads_with_or_without_header(tmp_path):
    path = tmp_path / "map.csv"
    path.write_text("\ufefffolder,user\r\n gh-alice , Alice Ref \r\n")
    assert matching.read_mapping(path) == {"gh-alice": ("Alice Ref", 2)}
    path.write_bytes(b"\xff\xfe,\n")
    with pytest.raises(matching.MappingError, match="not UTF-8 text; save the mapping file as UTF-8 CSV"):
        matching.read_mapping(path)
    with pytest.raises(matching.MappingError, match="cannot read the mapping file"):
        matching.read_mapping(tmp_path / "missing.csv")


# --- the command, on a real SQLite file ---------------------------------------


@pytest.fixture
def db(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "name,role,email\nprof,instructor,\nAlice Ref,student,alice@uni.edu\n"
        "Bob Stone,student,bob@uni.edu\ncarol,student,\n"
    )
    url = f"sqlite:///{tmp_path / 'g.db'}"
    assert grader_main(["users", "import", str(roster), "--db", url, "--out", str(tmp_path / "keys.csv")]) == 0
    return url


def import_batch(db, outdir, *extra):
    return grader_main(["import-batch", str(outdir), "--db", db, *extra])


def rows(url) -> dict:
    engine = make_engine(url)
    with engine.connect() as conn:
        book = gradebook.build(conn)
    engine.dispose()
    return {r.name: r for r in book.rows}


def test_the_roster_names_match_the_folders_and_nobody_is_created(db, tmp_path, capsys):
    out = write_outdir(
        tmp_path / "out",
        {"alice_ref": ANN_BATCH, "BOB@uni.edu": ANN_BATCH[:1], "gh-carol-2": ANN_BATCH, "zed": ANN_BATCH},
    )
    capsys.readouterr()
    assert import_batch(db, out) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "grader import-batch: 2 result folder(s) match no student account: gh-carol-2, zed; map each "
        "to its student in a CSV of `folder,user` lines (--map FILE), or pass --create-missing to "
        "make accounts named after them; nothing was imported"
    )
    assert set(rows(db)) == {"Alice Ref", "Bob Stone", "carol"} and not any(r.sources for r in rows(db).values())

    mapping = tmp_path / "map.csv"
    mapping.write_text("folder,user\ngh-carol-2,carol\n")
    assert import_batch(db, out, "--map", str(mapping), "--create-missing") == 0
    printed = capsys.readouterr().out
    assert (
        "  alice_ref -> Alice Ref (by similar name)" in printed and "  gh-carol-2 -> carol (by mapping file)" in printed
    )
    assert "  BOB@uni.edu -> Bob Stone (by e-mail)" in printed and "created 1 student account(s)" in printed
    book = rows(db)
    assert set(book) == {"Alice Ref", "Bob Stone", "carol", "zed"}  # no alice_ref beside Alice Ref
    assert book["Alice Ref"].sources == ("batch out",) and book["Alice Ref"].total == book["carol"].total > 0
    assert book["zed"].user_id is not None
    assert import_batch(db, out, "--map", str(mapping)) == 0  # now everyone matches: unchanged
    assert "0 new, 0 replaced, 4 unchanged" in capsys.readouterr().out


def test_a_bad_mapping_file_stops_the_import_in_one_line(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", {"gh-carol-2": ANN_BATCH})
    mapping = tmp_path / "map.csv"
    mapping.write_text("folder,user\ngh-carol-2,Carol Smith\n")
    assert import_batch(db, out, "--map", str(mapping), "--create-missing") == 1
    err = capsys.readouterr().err
    assert err == (
        f"grader import-batch: {mapping}:2: user 'Carol Smith' is no account's name or e-mail; use the "
        "name `grader users` created (or add the account first)\n"
    )
    assert not any(r.sources for r in rows(db).values())


def test_a_dry_run_lists_who_would_be_created_and_creates_nobody(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", {"zed": ANN_BATCH})
    assert import_batch(db, out, "--create-missing", "--dry-run") == 0
    assert "1 new student account(s) to create: zed" in capsys.readouterr().out
    assert "zed" not in rows(db)


def test_users_refuse_a_bad_or_taken_email(db, tmp_path, capsys):
    assert grader_main(["users", "add", "dan", "--email", "not an address", "--db", db]) == 1
    assert "email 'not an address': give an address like ada@example.org" in capsys.readouterr().err
    assert grader_main(["users", "add", "dan", "--email", "bob@uni.edu", "--db", db]) == 1
    assert (
        "email 'bob@uni.edu' is already account 'Bob Stone' (e-mail 'bob@uni.edu'); pick another"
        in capsys.readouterr().err
    )
