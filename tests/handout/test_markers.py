"""The marker parser and stripper (grader/core/markers.py)."""
from pathlib import Path

import pytest

from grader.core import markers
from grader.core.markers import MarkerError, strip_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "handout"


def lines(*rows):
    return "".join(row + "\n" for row in rows)


# (source, line, exact reason)
ERROR_CASES = {
    "nested BEGIN": (lines(
        "def f():",
        "    # Q1",
        "    ### BEGIN YOUR SOLUTION",
        "    # Q1",
        "    ### BEGIN YOUR SOLUTION",
        "    return 1",
        "    ### END YOUR SOLUTION",
    ), 5, "nested ### BEGIN YOUR SOLUTION: the block opened at line 3 is still open"),
    "END without BEGIN": (lines(
        "def f():",
        "    return 1",
        "    ### END YOUR SOLUTION",
    ), 3, "### END YOUR SOLUTION without a matching BEGIN"),
    "unterminated BEGIN": (lines(
        "def f():",
        "    # Q2",
        "    ### BEGIN YOUR SOLUTION",
        "    return 1",
    ), 3, "### BEGIN YOUR SOLUTION is never closed"),
    "code before a marker": (lines(
        "def f():",
        "    # Q1",
        "    x = 1  ### BEGIN YOUR SOLUTION",
        "    return x",
    ), 3, "code on a marker line: put ### BEGIN YOUR SOLUTION alone on its line"),
    "code after a marker": (lines(
        "def f():",
        "    # Q1",
        "    ### BEGIN YOUR SOLUTION",
        "    return 1",
        "    ### END YOUR SOLUTION return 2",
    ), 5, "code on a marker line: put ### END YOUR SOLUTION alone on its line"),
    "END at another indentation": (lines(
        "def f():",
        "    # Q3",
        "    ### BEGIN YOUR SOLUTION",
        "    return 1",
        "### END YOUR SOLUTION",
    ), 5, "END YOUR SOLUTION is indented 0 columns but its BEGIN (line 3) is indented 4"),
    "untagged block": (lines(
        "def f():",
        "    # the answer",
        "    ### BEGIN YOUR SOLUTION",
        "    return 1",
        "    ### END YOUR SOLUTION",
    ), 3, markers.UNTAGGED),
    "untagged block on line 1": (lines(
        "### BEGIN YOUR SOLUTION",
        "x = 1",
        "### END YOUR SOLUTION",
    ), 1, markers.UNTAGGED),
    "hidden tests never closed": (lines(
        "def test_a():",
        "    pass",
        "### BEGIN HIDDEN TESTS",
        "def test_b():",
        "    pass",
    ), 3, "### BEGIN HIDDEN TESTS is never closed"),
    "hidden tests inside a solution": (lines(
        "def f():",
        "    # Q1",
        "    ### BEGIN YOUR SOLUTION",
        "    ### BEGIN HIDDEN TESTS",
        "    ### END HIDDEN TESTS",
        "    ### END YOUR SOLUTION",
    ), 4, "nested ### BEGIN HIDDEN TESTS: the block opened at line 3 is still open"),
    "END HIDDEN closing a solution": (lines(
        "def f():",
        "    # Q1",
        "    ### BEGIN YOUR SOLUTION",
        "    return 1",
        "    ### END HIDDEN TESTS",
    ), 5, "### END HIDDEN TESTS without a matching BEGIN"),
}


@pytest.mark.parametrize("kind", sorted(ERROR_CASES))
def test_marker_error_names_path_line_and_reason(kind):
    source, line, reason = ERROR_CASES[kind]
    with pytest.raises(MarkerError) as info:
        strip_source(source, "pkg/bad.py")
    assert str(info.value) == f"pkg/bad.py:{line}: {reason}"


def test_source_that_is_not_python_is_an_error():
    source = lines("def f(:", "    # Q1", "    ### BEGIN YOUR SOLUTION", "    ### END YOUR SOLUTION")
    with pytest.raises(MarkerError) as info:
        strip_source(source, "bad.py")
    assert str(info.value).startswith("bad.py:1: not valid Python: ")


def test_result_that_is_not_python_is_an_error():
    # Valid with its body, broken once the body becomes a raise statement.
    source = lines("VALUES = [", "    # Q1", "    ### BEGIN YOUR SOLUTION", "    1, 2,",
                   "    ### END YOUR SOLUTION", "]")
    strip_source(source, "bad.py", strip_questions=frozenset())  # the source itself is fine
    with pytest.raises(MarkerError) as info:
        strip_source(source, "bad.py")
    assert str(info.value).startswith("bad.py:")
    assert "not valid Python after stripping: " in str(info.value)


def test_golden_stripped_file():
    source = (FIXTURES / "golden_source.py").read_text()
    expected = (FIXTURES / "golden_stripped.py").read_text()
    assert strip_source(source, "golden_source.py").text == expected


def test_blocks_record_question_name_lines_and_body():
    result = strip_source((FIXTURES / "golden_source.py").read_text(), "golden_source.py")
    solutions = [(b.question, b.qualname, b.begin, b.end, b.body) for b in result.blocks if b.kind == "solution"]
    assert solutions == [
        ("Q1", "Square.compute", 14, 16, ("        return x * x",)),
        ("Q2", "Square.gradient", 20, 23, ("        doubled = 2 * x", "        return doubled")),
        ("Q3", "helper", 30, 32, ("\t\ttotal += math.fabs(v)",)),
    ]
    hidden = [b for b in result.blocks if b.kind == "hidden"]
    assert len(hidden) == 1 and "def test_hidden():" in hidden[0].body


def test_crlf_line_endings_are_kept():
    source = lines("def f():", "    # Q1", "    ### BEGIN YOUR SOLUTION", "    return 1",
                   "    ### END YOUR SOLUTION", "x = 'tail'").replace("\n", "\r\n")
    stripped = strip_source(source, "crlf.py").text
    assert stripped == ("def f():\r\n    # Q1\r\n    ### BEGIN YOUR SOLUTION\r\n"
                        '    raise NotImplementedError("Q1: f")\r\n    ### END YOUR SOLUTION\r\n'
                        "x = 'tail'\r\n")


def test_text_without_markers_is_returned_unchanged():
    source = "# -*- coding: utf-8 -*-\r\nx = 'é'\n\n\ny = 2  # no newline at the end"
    assert strip_source(source, "plain.py").text == source


def test_module_level_block_is_named_after_the_file():
    source = lines("# Q5", "### BEGIN YOUR SOLUTION", "X = 1", "### END YOUR SOLUTION")
    result = strip_source(source, "apps/data.py", fallback_name="data")
    assert 'raise NotImplementedError("Q5: data")' in result.text


def test_only_the_chosen_questions_are_stripped():
    source = (FIXTURES / "golden_source.py").read_text()
    text = strip_source(source, "golden_source.py", strip_questions=frozenset({"Q2"})).text
    assert "return x * x" in text and "total += math.fabs(v)" in text
    assert 'raise NotImplementedError("Q2: Square.gradient")' in text
    assert "doubled" not in text and "test_hidden" not in text  # hidden tests always go
