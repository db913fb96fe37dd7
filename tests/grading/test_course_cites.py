"""Every scored case rests on a line the course's own hw1 has.

The record is grader/shipped/cases/cites.py (contract line -> the course's
file and the words quoted from one of its lines; a case may add its own).
The course's files are read as the project ships them: the copies in
tests/course/hw1/, taken from the public course repository at the commit
SOURCE.md names, each checked against its recorded sha256.
"""

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest

from grader.shipped.cases import BEYOND, BY_NAME, CASES, CITES, CONTRACT, RegistryError, _validate, citations
from grader.shipped.cases.cites import FILES, OPS, as_table

COURSE = Path(__file__).resolve().parents[1] / "course" / "hw1"


def course_lines(root: Path, rel: str) -> list:
    """The lines of a course file; a notebook's are its cells' source lines."""
    text = (root / rel).read_text(encoding="utf-8")
    if rel.endswith(".ipynb"):
        return [line for cell in json.loads(text)["cells"] for line in "".join(cell["source"]).splitlines()]
    return text.splitlines()


def _words(text: str) -> str:
    return " ".join(text.split())


def locate(root: Path, rel: str, quote: str):
    """The 1-based line of `rel` holding `quote` (whitespace runs alike), or None."""
    want = _words(quote)
    return next((n for n, line in enumerate(course_lines(root, rel), 1) if want in _words(line)), None)


def missing_citations(cites, root: Path = COURSE) -> list:
    """The (file, quote) pairs the course's files do not have."""
    return [(rel, quote) for rel, quote in cites if not (root / rel).is_file() or locate(root, rel, quote) is None]


def scored_cases_resting_on_missing_lines(cases, root: Path = COURSE) -> dict:
    """{case name: its citations the course does not have, or ["no citation"]}, for scored cases."""
    bad = {}
    for case in cases:
        if case.advisory:
            continue
        quotes = citations(case)
        missing = missing_citations(quotes, root) if quotes else ["no citation"]
        if missing:
            bad[case.name] = missing
    return bad


def test_the_course_copies_are_the_course_files_the_note_names():
    note = (COURSE / "SOURCE.md").read_text()
    assert "https://github.com/dlsyscourse/hw1" in note and re.search(r"\b[0-9a-f]{40}\b", note)
    recorded = dict(re.findall(r"^\| (\S+) \| ([0-9a-f]{64}) \|$", note, re.M))
    assert set(recorded) == set(FILES), "SOURCE.md lists exactly the files cites.py quotes"
    for rel, digest in recorded.items():
        assert hashlib.sha256((COURSE / rel).read_bytes()).hexdigest() == digest, f"{rel} differs from the course's"


def test_every_scored_case_rests_on_lines_the_course_has():
    assert scored_cases_resting_on_missing_lines(CASES) == {}


@pytest.mark.parametrize("line", sorted(CITES))
def test_each_citation_is_a_line_of_the_course(line):
    assert line in CONTRACT or line in BEYOND
    assert missing_citations(CITES[line]) == [], f"{line}: the course's hw1 has no such line"


def test_every_contract_line_is_cited():
    assert sorted(set(CONTRACT) - set(CITES)) == []


def test_a_made_up_citation_fails():
    made_up = (OPS, "def __init__(self, scalar: float):")  # the course types it int
    case = dataclasses.replace(BY_NAME["forward_power_scalar_int"], cites=(made_up,))
    assert scored_cases_resting_on_missing_lines([case]) == {case.name: [made_up]}
    uncited = dataclasses.replace(case, contract="not_cited", cites=())
    assert scored_cases_resting_on_missing_lines([uncited]) == {case.name: ["no citation"]}
    # a real quote in the wrong file, or words split over two lines, are not the course's line either
    assert missing_citations([("apps/simple_ml.py", "def __init__(self, scalar: int):")]) != []
    assert missing_citations([(OPS, 'class PowerScalar(TensorOp): """Op raise')]) != []
    assert missing_citations([("hw1.ipynb", "- `PowerScalar`: raise input to any (scalar) power")]) != []


def test_the_checker_reads_the_shipped_copies(tmp_path):
    """Drop a quoted line from a copy of the course's files: the cases resting on it fail."""
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((COURSE / rel).read_bytes())
    ops = tmp_path / OPS
    ops.write_text(ops.read_text().replace('"""Op raise a tensor to an (integer) power."""', '"""Op."""'))
    bad = scored_cases_resting_on_missing_lines(CASES, tmp_path)
    assert {"forward_power_scalar_int", "forward_power_scalar_0d"} <= set(bad)
    assert all(c.contract == "power_scalar" for c in CASES if c.name in bad)


def test_the_registry_refuses_a_scored_case_without_citations(monkeypatch):
    good = BY_NAME["forward_power_scalar_int"]
    monkeypatch.delitem(CITES, "power_scalar")
    with pytest.raises(RegistryError, match="cites the course's words"):
        _validate([good])
    with pytest.raises(RegistryError, match="a citation is"):
        _validate([dataclasses.replace(good, cites=(("notes.txt", "some words of no course file"),))])


def test_the_record_is_machine_readable():
    rows = json.loads(json.dumps(as_table(CASES)))
    assert [r["case"] for r in rows] == [c.name for c in CASES]
    row = next(r for r in rows if r["case"] == "forward_power_scalar_int")
    assert {"file": OPS, "quote": "def __init__(self, scalar: int):"} in row["cites"]
    assert all(r["cites"] for r in rows if not r["advisory"])


def test_a_fractional_power_is_advisory_citing_the_courses_type_hint():
    """The course types PowerScalar(scalar: int): ** 0.5 goes beyond it (reported apart, no points)."""
    fractional = [
        c
        for c in CASES
        if c.call is not None
        and c.call.op == "power_scalar"
        and any(k == "scalar" and not float(v).is_integer() for k, v in c.call.kwargs)
    ]
    assert {c.name for c in fractional} == {"forward_power_scalar_fraction", "backward_power_scalar_fraction"}
    for case in fractional:
        assert case.advisory and case.contract == "fractional_power"
        assert (OPS, "def __init__(self, scalar: int):") in citations(case)
    integer = [c for c in CASES if c.call is not None and c.call.op == "power_scalar" and not c.advisory]
    assert integer and all(float(v).is_integer() for c in integer for k, v in c.call.kwargs if k == "scalar")


def test_a_fractional_power_costs_points_only_when_advisories_are_scored():
    from grader.core.assignment import Assignment
    from grader.grading.report.scoring import max_scores

    registry = Assignment.hw1().registry()
    names = ("forward_power_scalar_fraction", "backward_power_scalar_fraction")
    assert [max_scores(registry)[n] for n in names] == [0.0, 0.0]
    assert all(max_scores(registry, strict=True)[n] > 0 for n in names)


def summation_int_axes(source: str, function: str) -> list:
    """The int `axes=` constants of the `ndl.summation(...)` calls inside `def function` of a course file."""
    import ast

    tree = ast.parse(source)
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if fn is None:
        return []
    return [
        kw.value.value
        for call in ast.walk(fn)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "summation"
        for kw in call.keywords
        if kw.arg == "axes" and isinstance(kw.value, ast.Constant) and type(kw.value.value) is int
    ]


def test_the_forward_int_axis_is_scored_because_the_courses_tests_pass_one():
    """Summation's forward over axes=1 is scored: the course's public test and its graded submission call it so."""
    from grader.shipped.cases.cites import TESTS

    case = BY_NAME["forward_summation_int_axis"]
    assert not case.advisory and dict(case.call.kwargs)["axes"] == 1
    source = (COURSE / TESTS).read_text()
    functions = [q.removeprefix("def ").removesuffix("():") for f, q in citations(case) if q.startswith("def ")]
    assert functions == ["test_summation_forward", "submit_forward"]
    for function in functions:
        assert 1 in summation_int_axes(source, function), f"the course's {function} passes no int axis"
    # the backward stays advisory: the course's backward tests pass tuples only
    assert BY_NAME["backward_summation_int_axis"].advisory
    assert summation_int_axes(source, "test_summation_backward") == []
    assert summation_int_axes(source, "submit_backward") == []


def test_the_int_axis_check_fails_on_tuple_axes():
    tuples = "def test_summation_forward():\n    ndl.summation(x, axes=(1,))\n    ndl.summation(x)\n"
    assert summation_int_axes(tuples, "test_summation_forward") == []
    assert summation_int_axes(tuples, "submit_forward") == []
    assert summation_int_axes(tuples.replace("(1,)", "1"), "test_summation_forward") == [1]
