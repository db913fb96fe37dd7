"""grader.core.csvsafe: no CSV cell the project writes runs as a spreadsheet
formula; numbers the program produced stay numbers; and every CSV writer of
the package goes through it (read with `ast`, nothing is imported)."""

import ast
import csv
from pathlib import Path

import pytest

from grader.core import csvsafe
from grader.core.csvsafe import Number, cell, render

GRADER = Path(__file__).resolve().parents[1] / "grader"


@pytest.mark.parametrize(
    "text",
    [
        '=HYPERLINK("http://x","click")',
        "+1+1",
        "-1",
        "-2+3+cmd|' /C calc'!A0",
        "@SUM(1)",
        "\t=1+1",
        "\r=1+1",
        "=cmd|' /C calc'!A0",
        "=",
        "-",
    ],
)
def test_each_dangerous_leading_character_is_quoted(text):
    assert cell(text) == "'" + text


@pytest.mark.parametrize(
    "value, written",
    [
        (-1.5, -1.5),
        (0, 0),
        (42, 42),
        (2.5e-3, 2.5e-3),
        (Number("-1.50"), "-1.50"),
        (Number("+2"), "+2"),
        (Number("100"), "100"),
        (Number("72.50"), "72.50"),
    ],
)
def test_numbers_the_program_produced_are_untouched(value, written):
    assert cell(value) == written and cell(value) is value


@pytest.mark.parametrize(
    "text",
    [
        "alice",
        "bob.zip-1a2b3c4d",
        "",
        "a=b",
        "x-1",
        " =1",
        "'=quoted already",
        "not graded: KilledWorker: it killed 4 workers",
        "mg_-abc",
        "hw1/p hw1/q",
    ],
)
def test_normal_text_is_untouched(text):
    assert cell(text) == text


def test_text_that_looks_like_a_number_is_still_text():
    """A student named "-1" (a string) is quoted; only Number, int and float pass as numbers."""
    assert cell("-1") == "'-1" and cell("-1.5") == "'-1.5" and cell("+3") == "'+3"
    assert cell(True) == "True" and cell(None) == ""
    assert cell(float("-inf")) == "'-inf" and cell(float("nan")) == "nan"  # not finite: text


@pytest.mark.parametrize("text", ["=1", "-1+1", "@SUM(1)", "1+1", "abc", "", "-inf", "nan", "inf"])
def test_a_number_refuses_what_is_not_a_finite_number(text):
    with pytest.raises(ValueError):
        Number(text)


def test_render_quotes_every_cell_and_reads_back():
    rows = [
        ["name", "score", "reason"],
        ['=HYPERLINK("http://x","click")', Number("-1.50"), '@SUM(1): refused, "really"'],
        ["alice", Number("100"), ""],
        ["-1", -2.5, "\ttab"],
    ]
    text = render(rows)
    assert text.endswith("\n")
    assert list(csv.reader(text.splitlines())) == [
        ["name", "score", "reason"],
        ['\'=HYPERLINK("http://x","click")', "-1.50", '\'@SUM(1): refused, "really"'],
        ["alice", "100", ""],
        ["'-1", "-2.5", "'\ttab"],
    ]


# --- every CSV writer goes through csvsafe ------------------------------------------

WRITERS = {"writer", "DictWriter"}


def _csv_writers(tree: ast.AST) -> list:
    """Lines that reach csv.writer / csv.DictWriter (attribute or imported name)."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in WRITERS
            and isinstance(node.value, ast.Name)
            and node.value.id == "csv"
        ):
            lines.append(node.lineno)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "csv"
            and any(alias.name in WRITERS for alias in node.names)
        ):
            lines.append(node.lineno)
    return lines


def test_only_csvsafe_makes_a_csv_writer():
    found = {}
    for path in sorted(GRADER.rglob("*.py")):
        lines = _csv_writers(ast.parse(path.read_text(), str(path)))
        if lines:
            found[path.relative_to(GRADER).as_posix()] = lines
    assert set(found) == {"core/csvsafe.py"}, f"write CSV with grader.core.csvsafe.render, not csv.writer: {found}"
    assert _csv_writers(ast.parse("import csv\ncsv.writer(f)\n")) == [2]
    assert _csv_writers(ast.parse("from csv import DictWriter\n")) == [1]


def test_the_untrusted_side_writes_no_csv():
    """grader/shipped imports nothing from grader, so it could not use csvsafe: it must write no CSV."""
    for path in sorted((GRADER / "shipped").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "csv" not in names, path


def test_the_module_imports_only_the_standard_library():
    tree = ast.parse((GRADER / "core" / "csvsafe.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert imported == {"csv", "io", "math"} and csvsafe.DANGEROUS == ("=", "+", "-", "@", "\t", "\r")
