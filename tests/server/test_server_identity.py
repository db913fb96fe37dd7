"""One identity per person: names and e-mails compared after NFC and case folding,
invisible and look-alike characters refused by name, ambiguity refused listing
both accounts, no result ever lands on an instructor's account, and no input
makes `users` or `import-batch` print a traceback."""

import sys
import unicodedata
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import db_rows  # noqa: E402
from test_server_gradebook import ANN_BATCH, write_outdir  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.server.accounts import identity, users  # noqa: E402
from grader.server.gradebook import matching  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402

pytestmark = pytest.mark.server

NFD_JOSE = unicodedata.normalize("NFD", "José")
ACCOUNTS = [
    matching.Account("José", None, "h1"),
    matching.Account("Kate Li", "kate@uni.edu", "h2"),
    matching.Account("Bob One", "bob@uni.edu", "h3"),
    matching.Account("Bob Two", "BOB@uni.edu", "h4"),
    matching.Account("prof", "prof@uni.edu", users.hash_key("mg_profkey"), "instructor"),
    matching.Account("Tess", None, "h5", "ta"),
]


def match(folders, mapping=None):
    return matching.match_folders(folders, ACCOUNTS, mapping or {}, users.hash_key, Path("map.csv"))


def refusal(folders, mapping=None) -> str:
    with pytest.raises(matching.MappingError) as info:
        match(folders, mapping)
    return str(info.value)


def test_a_decomposed_name_is_the_same_person():
    assert NFD_JOSE != "José" and identity.key(NFD_JOSE) == identity.key("JOSÉ")
    found, unmatched = match([NFD_JOSE])
    assert [(m.user, m.how) for m in found] == [("José", matching.BY_NAME)] and unmatched == ()


@pytest.mark.parametrize(
    "folder, named",
    [
        ("\u212aate@uni.edu", "U+212A KELVIN SIGN, which stands for 'K'"),
        ("Kate\u200b Li", "the invisible character U+200B ZERO WIDTH SPACE"),
        ("K\u0430te Li", "U+0430 CYRILLIC SMALL LETTER A among Latin letters (it looks like another letter)"),
        ("Kate\u00a0Li", "the invisible character U+00A0 NO-BREAK SPACE"),
        ("\u202eiL etaK", "the invisible character U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\uff2bate", "U+FF2B FULLWIDTH LATIN CAPITAL LETTER K, which stands for 'K'"),
    ],
)
def test_invisible_and_look_alike_characters_are_refused_by_name(folder, named):
    assert refusal([folder]) == (
        f"folder {folder!r} holds {named}; rename the folder, or map it to its student in a mapping file (--map)"
    )
    assert match(["x"], {"x": ("Kate Li", 2)})[0][0].user == "Kate Li"  # a mapping line names the account
    assert "map.csv:2: user" in refusal(["x"], {"x": (folder, 2)})


def test_two_accounts_fitting_one_folder_are_refused_listing_both():
    assert refusal(["bob@UNI.edu"]) == (
        "folder 'bob@UNI.edu' fits 2 accounts by e-mail: 'Bob One' (bob@uni.edu) "
        "and 'Bob Two' (BOB@uni.edu); map it to one of them by name in a mapping "
        "file (--map)"
    )
    assert match(["x"], {"x": ("Bob Two", 3)})[0][0].user == "Bob Two"


@pytest.mark.parametrize(
    "folder, how",
    [("prof", "name"), ("PROF", "name"), ("prof@uni.edu", "e-mail"), ("mg_profkey", "key"), ("tess", "name")],
)
def test_a_folder_never_matches_an_instructor_or_ta(folder, how):
    message = refusal([folder])
    assert f"matches {'ta' if folder == 'tess' else 'instructor'} account" in message and f"by {how};" in message
    assert "mg_profkey" not in message  # a key is never printed
    assert "results go to students only" in refusal(["x"], {"x": ("prof", 2)})


def test_similar_names_never_reach_staff():
    found, unmatched = match(["Pro.f"])
    assert found == () and unmatched == ("Pro.f",)


# --- the commands, on a real SQLite file ----------------------------------------


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'g.db'}"
    engine = make_engine(url)
    users.add_users(
        engine, [("prof", "instructor", "prof@uni.edu"), ("José", "student"), ("Kate Li", "student", "kate@uni.edu")]
    )
    engine.dispose()
    return url


def accounts(db):
    return db_rows(db, "select name, role from users order by id")


def test_a_macos_folder_name_lands_on_the_real_account(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", {NFD_JOSE: ANN_BATCH})
    assert grader_main(["import-batch", str(out), "--db", db, "--create-missing"]) == 0
    assert "1 new" in capsys.readouterr().out
    assert accounts(db) == [("prof", "instructor"), ("José", "student"), ("Kate Li", "student")]
    assert db_rows(db, "select name from batch_results") == [("José",)]


def test_a_folder_named_like_the_instructor_is_refused_even_with_create_missing(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", {"Prof": ANN_BATCH, "zed": ANN_BATCH})
    assert grader_main(["import-batch", str(out), "--db", db, "--create-missing"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "folder 'Prof' matches instructor account 'prof' by name" in err
    assert accounts(db) == [("prof", "instructor"), ("José", "student"), ("Kate Li", "student")]
    assert db_rows(db, "select count(*) from batch_results") == [(0,)]


@pytest.mark.parametrize(
    "args, message",
    [
        (["add", NFD_JOSE], f"name {NFD_JOSE!r} is already account 'José' (ignoring case and Unicode form)"),
        (["add", "kate li"], "name 'kate li' is already account 'Kate Li'"),
        (
            ["add", "Kate", "--email", "KATE@uni.edu"],
            "email 'KATE@uni.edu' is already account 'Kate Li' (e-mail 'kate@uni.edu')",
        ),
        (
            ["add", "Bo\u200bb"],
            "name 'Bo\\u200bb' holds the invisible character U+200B ZERO WIDTH SPACE; retype it without that character",
        ),
        (["add", "Bob", "--email", "\u212aate@uni.edu"], "holds U+212A KELVIN SIGN, which stands for 'K'"),
    ],
)
def test_users_refuses_a_second_identity_and_look_alike_characters(db, capsys, args, message):
    assert grader_main(["users", *args, "--db", db]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert len(accounts(db)) == 3


NASTY = [
    NFD_JOSE,
    "José",
    "JOSÉ",
    "prof",
    "PROF@UNI.EDU",
    "\u212aate@uni.edu",
    "Kate\u200bLi",
    "Zoë",
    "a\u0301",
    "\u0301",
    "x\udcff",
    "zed\u202e",
    "ﬁona",
    "Ὀδυσσεύς",
    "李雷",
    '\'=HYPERLINK("x")',
    "kate li",
    "Kate-Li",
    "a" * 200,
    "K\u0430te",
    "zed",
    "ZED",
]


@pytest.mark.parametrize("folder", NASTY)
def test_no_folder_name_makes_a_traceback(db, tmp_path, capsys, folder):
    try:
        out = write_outdir(tmp_path / "out", {folder: ANN_BATCH})
    except (OSError, UnicodeEncodeError):
        pytest.skip("this filesystem cannot hold the name")
    for extra in ([], ["--create-missing"], ["--dry-run", "--create-missing"]):
        code = grader_main(["import-batch", str(out), "--db", db, *extra])
        err = capsys.readouterr().err
        assert code in (0, 1) and err.count("\n") == (code == 1), err
    names = [n for (n,) in db_rows(db, "select name from users")]
    assert all(n == unicodedata.normalize("NFC", n) for n in names)
    assert len({identity.key(n) for n in names}) == len(names)  # one account per identity


def test_two_new_folders_of_one_identity_create_nobody(db, tmp_path, capsys):
    out = write_outdir(tmp_path / "out", {"zed": ANN_BATCH, "ZED": ANN_BATCH})
    assert grader_main(["import-batch", str(out), "--db", db, "--create-missing"]) == 1
    assert "name 'zed' is already new account 'ZED'" in capsys.readouterr().err
    assert len(accounts(db)) == 3
